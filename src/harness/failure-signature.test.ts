// Failure signatures: the check, the policy and the request at the cut, with numbers generalised.
import { describe, expect, it } from 'vitest';
import type { TraceEntry } from '../../fusefs/protocol.js';
import type { CaseResult } from './crash-case.js';
import { failureSignature } from './failure-signature.js';
import { pathPattern } from './path-pattern.js';
import type { Violation } from './oracle.js';

const trace: TraceEntry[] = [
  { op: 1, kind: 'create', path: '/000005.log', state: 'applied', result: 0 },
  { op: 2, kind: 'write', path: '/000005.log', offset: 0, length: 10, state: 'applied', result: 0 },
  { op: 3, kind: 'fsync', path: '/000005.log', state: 'applied', result: 0 },
];
const liveness: Violation = { check: 'liveness', message: 'liveness: ...' };
const hang: Violation = { check: 'liveness', message: 'liveness: hang', hang: true };

function result(over: Partial<CaseResult['case']>, frozenAt: number | null, violations: Violation[] = [liveness]): CaseResult {
  return {
    case: { workload: { steps: [] }, settings: {}, policy: 'torn', seed: 1, ...over },
    runs: [], cuts: [{ frozenAt, trace }], violations, verdict: 'fail', coverage: {} as CaseResult['coverage'], durationMs: 0, stderr: [],
  };
}

describe('failure signatures', () => {
  it('generalise numbers in paths', () => {
    expect(pathPattern('/000005.log')).toBe('/*.log');
    expect(pathPattern('/jetstream/$G/streams/S/msgs/12.blk')).toBe('/jetstream/$G/streams/S/msgs/*.blk');
  });
  it('name a random cut by its timing and request', () => {
    expect(failureSignature(result({ cut: { atOp: 2, timing: 'after' } }, 2))).toBe('liveness, torn, after write of /*.log');
    expect(failureSignature(result({ cut: { atOp: 3, timing: 'before' }, policy: 'lose-unsynced' }, 3))).toBe('liveness, lose-unsynced, before fsync of /*.log');
    expect(failureSignature(result({}, null))).toBe('liveness, torn, after the run');
  });
  it('name a crash state by the request its power cut came before', () => {
    expect(failureSignature(result({ state: { afterOp: 2, policy: 'lose-unsynced' } }, 3))).toBe('liveness, lose-unsynced, before fsync of /*.log');
    expect(failureSignature(result({ state: { afterOp: 3, policy: 'torn', dirPrefix: 0, data: { kind: 'all' } } }, null))).toBe('liveness, torn, at the end of the run');
  });
  it('name the faults that fired, so a loss under keep-all reads as the fault\'s', () => {
    const r = result({ policy: 'keep-all', faults: [{ type: 'fsync-eio', path: '/**' }] }, null);
    r.runs = [{ role: 'workload', outcomes: [], exitCode: 0, killed: false, hung: false, failedRequests: [{ op: 3, kind: 'fsync', path: '/000005.log', result: -5 }] }];
    expect(failureSignature(r)).toBe('liveness, keep-all after injected fsync EIO, after the run');
  });
  it('prefer a real finding to a hang, and say when only a hang failed', () => {
    expect(failureSignature(result({}, null, [hang, { check: 'order', message: 'order: ...' }]))).toBe('order, torn, after the run');
    expect(failureSignature(result({}, null, [hang]))).toBe('liveness (hang), torn, after the run');
  });
});
