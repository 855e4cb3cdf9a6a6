// Which cuts of a fixed run are the run's own (their verdicts carry over to the proof unjudged).
import { describe, expect, it } from 'vitest';
import type { TraceEntry } from '../../../fusefs/protocol.js';
import type { Cause, FixStep } from '../cause/cause.js';
import { fixedRun, pathAfter } from './fixed-run.js';
import type { Recorded } from './judge-states.js';

const entry = (op: number, kind: TraceEntry['kind'], path: string): TraceEntry => ({ op, kind, path, state: 'applied', result: 0 });
// write /a (1), write /b (2), fsync /b (3), write /a (4), fsync /a (5); line 1 "durable" after request 2, line 2 after 5.
const recorded: Recorded = {
  run: { record: { role: 'workload', outcomes: [{ t: 'durable', durableSeq: 1 }, { t: 'durable', durableSeq: 2 }], exitCode: 0, killed: false, hung: false, failedRequests: [] }, stderr: '' } as unknown as Recorded['run'],
  trace: [entry(1, 'write', '/a'), entry(2, 'write', '/b'), entry(3, 'fsync', '/b'), entry(4, 'write', '/a'), entry(5, 'fsync', '/a')],
  marks: [{ n: 1, afterOp: 2 }, { n: 2, afterOp: 5 }],
};
const causeWith = (step: FixStep) => ({ kind: 'missing-fsync', key: 'k', title: 't', fix: 'f', evidence: [], step } as unknown as Cause);

describe('fixedRun: the cuts a fix leaves as they were', () => {
  it('an inserted fsync changes every cut from the first one inserted on', () => {
    const fix = fixedRun(recorded, causeWith({ kind: 'fsync-after', afterOp: 1, ino: 2, path: '/a', dir: false }))!;
    // After every write of /a: requests 1 and 4, so fsyncs at fixed requests 2 and 6.
    expect(fix.isNew(2)).toBe(true);
    expect([1, 2, 3].map(fix.unchanged)).toEqual([true, false, false]);
  });

  it('a withheld confirmation changes only the cuts between its line and the request it waits for', () => {
    const fix = fixedRun(recorded, causeWith({ kind: 'wait', line: 1, untilOp: 3 }))!;
    expect([1, 2, 3, 4, 5].map(fix.unchanged)).toEqual([true, false, true, true, true]);
  });

  it('a withheld confirmation holds back every later line claiming records, "waited" as well as "durable", and not "acked" (seen: a buffered queue confirming before the write)', () => {
    // write /a (1), fsync /a (2), write /a (3), fsync /a (4), write /c (5), fsync /c (6); lines after 1, 3, 3 and 5.
    const trace = [entry(1, 'write', '/a'), entry(2, 'fsync', '/a'), entry(3, 'write', '/a'), entry(4, 'fsync', '/a'), entry(5, 'write', '/c'), entry(6, 'fsync', '/c')];
    const outcomes = [{ t: 'durable', durableSeq: 1 }, { t: 'waited', seq: 2 }, { t: 'durable', durableSeq: 2 }, { t: 'acked', seqs: [1] }];
    const run: Recorded = { ...recorded, run: { ...recorded.run, record: { ...recorded.run.record, outcomes } } as Recorded['run'], trace, marks: [{ n: 1, afterOp: 1 }, { n: 2, afterOp: 3 }, { n: 3, afterOp: 3 }, { n: 4, afterOp: 5 }] };
    const fix = fixedRun(run, causeWith({ kind: 'wait', line: 1, untilOp: 2 }))!;
    expect(fix.recorded.withheld).toEqual(new Map([[1, 2], [2, 4], [3, 4]]));
    expect(fix.words).toContain('a "durable" or "waited" line after the next fsync of /a; 2 moved');
  });

  it('a moved persistence point changes the cuts from where it was left out', () => {
    const fix = fixedRun(recorded, causeWith({ kind: 'move', op: 3, afterOp: 5 }))!;
    expect([1, 2, 3, 4].map(fix.unchanged)).toEqual([true, true, false, false]);
  });

  it('fsyncs a file by the name it has where the fsync goes: a move past a rename, an fsync after a rename (seen: a checkpoint written as a temporary file)', () => {
    const rename = (op: number, from: string, to: string): TraceEntry => ({ ...entry(op, 'rename', from), path2: to });
    const trace = [entry(1, 'create', '/c.tmp'), entry(2, 'fsync', '/c.tmp'), rename(3, '/c.tmp', '/c'), entry(4, 'write', '/a'), entry(5, 'fsync', '/a')];
    const run: Recorded = { ...recorded, trace, marks: [{ n: 1, afterOp: 2 }, { n: 2, afterOp: 5 }] };
    expect(fixedRun(run, causeWith({ kind: 'move', op: 2, afterOp: 5 }))!.hypothesis).toEqual({ fsyncAfter: [{ afterOp: 5, path: '/c' }], fsyncSkip: [2] });
    expect(fixedRun(run, causeWith({ kind: 'fsync-after', afterOp: 3, ino: 2, path: '/c.tmp', dir: false }))!.hypothesis).toEqual({ fsyncAfter: [{ afterOp: 3, path: '/c' }] });
    // A directory renamed above it moves it too; a rename of another name does not.
    expect(pathAfter([rename(2, '/d', '/e'), rename(3, '/x', '/y')], '/d/f', 1, 3)).toBe('/e/f');
  });
});
