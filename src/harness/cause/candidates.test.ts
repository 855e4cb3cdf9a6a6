// Candidates read off a recording and causes carried over to another: the shapes each finds, the
// cuts each bites at, and that a carried fix keeps its group's key.
import { describe, expect, it } from 'vitest';
import type { Mark } from '../../../fusefs/crash-states.js';
import type { TraceEntry } from '../../../fusefs/protocol.js';
import type { Outcome } from '../outcome.js';
import { candidatesOf, rankCandidates, type RecordingView } from './candidates.js';
import { carryOver, KnownCauses } from './known-causes.js';

let op = 0;
const e = (kind: TraceEntry['kind'], path: string, more: Partial<TraceEntry> = {}): TraceEntry => ({ op: ++op, kind, path, state: 'applied', result: 0, ...more });
const view = (trace: TraceEntry[], lines: [Outcome, number][]): RecordingView => ({
  trace, outcomes: lines.map(([o]) => o), marks: lines.map(([, afterOp], i): Mark => ({ n: i + 1, afterOp })),
});

/** A queue that creates a page, writes and fsyncs it and confirms, never fsyncing the directory: twice. */
function newPageNoDirFsync(): RecordingView {
  op = 0;
  const trace = [e('create', '/page.1'), e('write', '/page.1'), e('fsync', '/page.1'), e('create', '/page.2'), e('write', '/page.2'), e('fsync', '/page.2')];
  return view(trace, [[{ t: 'durable', durableSeq: 1, durableFirstUnackedSeq: 1 }, 3], [{ t: 'durable', durableSeq: 2, durableFirstUnackedSeq: 1 }, 6]]);
}

describe('candidatesOf: the shapes a recording shows', () => {
  it('a created name whose directory is never fsynced before a confirmation: one candidate for every create of /page.*, biting from the create on', () => {
    const c = candidatesOf(newPageNoDirFsync()).find((x) => x.cause.kind === 'missing-dir-fsync')!;
    expect(c.cause.key).toBe('missing-dir-fsync / create /page.*');
    expect(c.cause.step).toEqual({ kind: 'fsync-after', afterOp: 1, ino: 0, path: '/', dir: true });
    expect(c.windows.map((w) => [w.fromOp, w.toOp])).toEqual([[1, 7], [4, 7]]);
    // The writes are fsynced before anything relies on them: no missing fsync of a file.
    expect(candidatesOf(newPageNoDirFsync()).some((x) => x.cause.kind === 'missing-fsync')).toBe(false);
  });

  it('a write confirmed before its fsync: a missing fsync, and a confirmation that should wait for the fsync', () => {
    op = 0;
    const trace = [e('create', '/log'), e('fsyncdir', '/'), e('write', '/log'), e('write', '/log'), e('fsync', '/log')];
    const cands = candidatesOf(view(trace, [[{ t: 'durable', durableSeq: 1, durableFirstUnackedSeq: 1 }, 3]]));
    expect(cands.map((c) => c.cause.key).sort()).toEqual(['early-confirmation /log durable', 'missing-fsync /log write /log']);
    const wait = cands.find((c) => c.cause.kind === 'early-confirmation')!;
    expect(wait.cause.step).toEqual({ kind: 'wait', line: 1, untilOp: 5 });
    expect(wait.windows).toEqual([{ fromOp: 3, toOp: 5 }]);
  });

  it('a removal made durable before the next persistence point: that directory fsync moved after it', () => {
    op = 0;
    const trace = [e('unlink', '/page.1'), e('fsyncdir', '/'), e('write', '/checkpoint'), e('fsync', '/checkpoint')];
    const c = candidatesOf(view(trace, [])).find((x) => x.cause.kind === 'early-persistence')!;
    expect(c.cause.key).toBe('early-persistence unlink /page.*');
    expect(c.cause.step).toEqual({ kind: 'move', op: 2, afterOp: 4 });
  });

  it('a file fsynced under the name a rename gave it is synced: no candidate for its write', () => {
    op = 0;
    const trace = [e('create', '/c.tmp'), e('write', '/c.tmp'), e('rename', '/c.tmp', { path2: '/c' }), e('fsync', '/c'), e('fsyncdir', '/')];
    const cands = candidatesOf(view(trace, [[{ t: 'acked', seqs: [1] }, 5]]));
    expect(cands.filter((c) => c.cause.kind === 'missing-fsync')).toEqual([]);
  });

  it('a cluster: each node\'s requests are its own (a node\'s fsync syncs nothing of another)', () => {
    op = 0;
    const trace = [e('create', '/p', { node: 0 }), e('create', '/p', { node: 1 }), e('fsyncdir', '/', { node: 0 }), e('write', '/q', { node: 1 }), e('fsync', '/q', { node: 1 })];
    const c = candidatesOf(view(trace, [])).find((x) => x.cause.kind === 'missing-dir-fsync')!;
    // Node 0 fsynced its directory before relying on the entry; node 1 relied on it (its fsync of /q) first.
    expect(c.windows).toEqual([{ fromOp: 2, toOp: 6, node: 1 }]);
    expect(c.nodes).toEqual([1]);
  });
});

describe('rankCandidates: the failing cuts each bites at, most first', () => {
  it('counts a cut in a window, and on a cluster only a cut that took the window\'s node', () => {
    const cands = candidatesOf(newPageNoDirFsync());
    const ranked = rankCandidates(cands, [{ afterOp: 2 }, { afterOp: 5 }, { afterOp: 0 }], 3);
    expect(ranked[0].candidate.cause.kind).toBe('missing-dir-fsync');
    expect(ranked[0].cuts).toEqual([0, 1]);
    op = 0;
    const cluster = candidatesOf(view([e('create', '/p', { node: 1 }), e('write', '/q', { node: 1 }), e('fsync', '/q', { node: 1 })], []));
    expect(rankCandidates(cluster, [{ afterOp: 2, nodes: [0] }], 3)).toEqual([]);
    expect(rankCandidates(cluster, [{ afterOp: 2, nodes: [1] }], 3)).toHaveLength(1);
  });
});

describe('carryOver: a cause proven on one recording, as the same step of another', () => {
  it('an fsync after the first request like the one it followed, keeping the key', () => {
    const first = newPageNoDirFsync();
    const [proven] = candidatesOf(first).filter((c) => c.cause.kind === 'missing-dir-fsync');
    const known = new KnownCauses();
    known.add(proven.cause, first.trace);
    op = 0;
    const trace = [e('mkdir', '/d'), e('fsyncdir', '/'), e('create', '/page.7'), e('write', '/page.7'), e('fsync', '/page.7')];
    const carried = carryOver(known.list()[0], view(trace, [[{ t: 'durable', durableSeq: 1, durableFirstUnackedSeq: 1 }, 5]]), [])!;
    expect(carried.key).toBe(proven.cause.key);
    expect(carried.route).toBe('known');
    expect(carried.step).toEqual({ kind: 'fsync-after', afterOp: 3, ino: 0, path: '/', dir: true });
    // A recording with no such request has nothing to carry it to.
    op = 0;
    expect(carryOver(known.list()[0], view([e('write', '/x'), e('fsync', '/x')], []), [])).toBeUndefined();
  });

  it('a withheld confirmation waits for the fsync of the same kind of file, or where the recording has none, for its likeliest candidate of the same confirmation kind', () => {
    op = 0;
    const a = [e('write', '/checkpoint.log'), e('fsync', '/checkpoint.log')];
    const first = view(a, [[{ t: 'acked', seqs: [1] }, 1]]);
    const [wait] = candidatesOf(first).filter((c) => c.cause.kind === 'early-confirmation');
    const known = new KnownCauses();
    known.add(wait.cause, first.trace);
    op = 0;
    const other = view([e('write', '/checkpoint.head.tmp'), e('fsync', '/checkpoint.head.tmp')], [[{ t: 'acked', seqs: [1] }, 1]]);
    const carried = carryOver(known.list()[0], other, [{ afterOp: 1 }])!;
    expect(carried.key).toBe('early-confirmation /checkpoint.log acked');
    expect(carried.step).toEqual({ kind: 'wait', line: 1, untilOp: 2 });
    expect(carried.fix).toContain('/checkpoint.head.tmp');
  });

  it('keeps one cause per key, the first proven, and refuses an unexplained one', () => {
    const known = new KnownCauses();
    const [c] = candidatesOf(newPageNoDirFsync());
    known.add(c.cause, []);
    known.add({ ...c.cause, title: 'again' }, []);
    expect(known.list().map((k) => k.cause.title)).toEqual([c.cause.title]);
    expect(() => known.add({ ...c.cause, kind: 'not-isolated' }, [])).toThrow(/only a proven cause/);
  });
});
