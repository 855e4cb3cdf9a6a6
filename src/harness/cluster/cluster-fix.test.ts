// A cause's fix on a cluster's recording (pure): each inserted fsync on its node, on every node that
// lost the same kind of change, and one numbering for every node's requests and the lines' marks.
import { describe, expect, it } from 'vitest';
import type { LostUnit } from '../../../fusefs/crash-states.js';
import type { TraceEntry } from '../../../fusefs/protocol.js';
import type { Cause, FixStep } from '../cause/cause.js';
import type { Recorded } from '../exhaustive/judge-states.js';
import { clusterFixedRun } from './cluster-fix.js';

const entry = (op: number, node: number, kind: TraceEntry['kind'], path: string): TraceEntry => ({ op, node, kind, path, state: 'applied', result: 0 });
// Three nodes, one numbering: each creates /page.0, node 0 fsyncs it, node 1 writes it; nodes 0 and 1 create /page.1.
const recorded: Recorded = {
  run: { record: { role: 'workload', outcomes: [{ t: 'durable', durableSeq: 1 }, { t: 'durable', durableSeq: 2 }], exitCode: 0, killed: false, hung: false, failedRequests: [] }, stderr: '' } as unknown as Recorded['run'],
  trace: [entry(1, 0, 'create', '/page.0'), entry(2, 1, 'create', '/page.0'), entry(3, 0, 'fsync', '/page.0'), entry(4, 2, 'create', '/page.0'), entry(5, 1, 'write', '/page.0'), entry(6, 0, 'create', '/page.1'), entry(7, 1, 'create', '/page.1')],
  marks: [{ n: 1, afterOp: 5 }, { n: 2, afterOp: 7 }],
};
const causeWith = (step: FixStep, before?: string) => ({ kind: 'missing-dir-fsync', key: 'k', title: 't', fix: 'f', evidence: [], step, ...(before ? { before } : {}) } as unknown as Cause);
const lostDir = (node: number, op: number, name: string): LostUnit => ({ kind: 'dir', ino: 1, path: '/', node, changes: [{ seq: op, op, kind: 'create', entries: [{ name, target: `/${name}` }] }], syncedLater: [] });

describe('clusterFixedRun', () => {
  it('fsyncs the directory on each node that lost a page\'s name, after every create of a page there, every node renumbered', () => {
    // The state lost / on nodes 0 and 1 (node 2's create was kept): the fix is theirs.
    const fix = clusterFixedRun(recorded, causeWith({ kind: 'fsync-after', afterOp: 1, ino: 1, path: '/', dir: true }, 'line 1'), [lostDir(0, 1, 'page.0'), lostDir(1, 2, 'page.0')])!;
    expect(fix.nodes).toEqual([0, 1]);
    // Ordered by request, then node: the daemon numbers them so (ClusterStateSpace.withHypothesis).
    expect(fix.hypothesis).toEqual({ fsyncAfter: [{ afterOp: 1, path: '/', node: 0 }, { afterOp: 2, path: '/', node: 1 }, { afterOp: 6, path: '/', node: 0 }, { afterOp: 7, path: '/', node: 1 }] });
    // Inserted at 2, 4, 9, 11; every node's later request moves up by those before it.
    expect(fix.recorded.trace.map((e) => `${e.op} ${e.node} ${e.kind}`)).toEqual([
      '1 0 create', '2 0 fsyncdir', '3 1 create', '4 1 fsyncdir', '5 0 fsync', '6 2 create', '7 1 write', '8 0 create', '9 0 fsyncdir', '10 1 create', '11 1 fsyncdir',
    ]);
    // A line marked after a request comes after the fsyncs inserted right after it.
    expect(fix.recorded.marks).toEqual([{ n: 1, afterOp: 7 }, { n: 2, afterOp: 11 }]);
    expect(fix.fixedOpsOf(5)).toEqual([7]);
    expect(fix.fixedOpsOf(6)).toEqual([8, 9]);
    expect(fix.runOpOf(10)).toBe(7);
    expect(fix.isNew(9)).toBe(true);
    expect(fix.fixWords).toBe('fsync the directory / on nodes 0, 1 after every create of /page.* (on node 0: requests 1, 6 (2 requests); on node 1: requests 2, 7 (2 requests)), before line 1');
    expect(fix.words).toMatch(/^an fsync of the directory \/ on nodes 0, 1 after every create of \/page\.\*/);
  });

  it('makes one step of the same unit on several nodes (a majority\'s minimal set): each node named once, the fix said once', () => {
    const one = clusterFixedRun(recorded, causeWith({ kind: 'fsync-after', afterOp: 1, ino: 1, path: '/', dir: true }, 'line 1'), [lostDir(0, 1, 'page.0'), lostDir(1, 2, 'page.0')])!;
    const withAlso = clusterFixedRun(recorded, { ...causeWith({ kind: 'fsync-after', afterOp: 1, ino: 1, path: '/', dir: true }, 'line 1'), alsoSteps: [{ kind: 'fsync-after', afterOp: 2, ino: 1, path: '/', dir: true }] }, [lostDir(0, 1, 'page.0'), lostDir(1, 2, 'page.0')])!;
    expect(withAlso.hypothesis).toEqual(one.hypothesis);
    expect(withAlso.fixWords).toBe(one.fixWords);
  });

  it('moves a persistence point on its own node, after the next one whichever node made it', () => {
    const fix = clusterFixedRun(recorded, causeWith({ kind: 'move', op: 3, afterOp: 5 }), [])!;
    expect(fix.hypothesis).toEqual({ fsyncAfter: [{ afterOp: 5, path: '/page.0', node: 0 }], fsyncSkip: [3] });
    expect(fix.nodes).toEqual([0]);
  });

  it('leaves a withheld confirmation to the judged drains (no request inserted)', () => {
    expect(clusterFixedRun(recorded, causeWith({ kind: 'wait', line: 1, untilOp: 3 }), [])).toBeUndefined();
  });

  it('refuses a cluster trace whose request names no node', () => {
    const noNode = { ...recorded, trace: recorded.trace.map(({ node: _node, ...e }) => e) };
    expect(() => clusterFixedRun(noNode, causeWith({ kind: 'fsync-after', afterOp: 1, ino: 1, path: '/', dir: true }), [])).toThrow(/invariant: request 1 of a cluster's trace names no node/);
  });
});
