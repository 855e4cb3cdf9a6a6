// The cause search on hand-made failing states, with a fake probe standing for "recover this image
// and judge it": each test states which images recover, and the search must name the one cause.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { LostUnit } from '../../../fusefs/crash-states.js';
import type { TraceEntry } from '../../../fusefs/protocol.js';
import type { RunRecord, Violation } from '../oracle.js';
import { ddmin, ddminByGroup, smallestPrefix } from './ddmin.js';
import { searchCause, unitsInWords, withoutRecoveryDir, type FailingState, type ProbeRequest } from './search.js';

describe('ddmin', () => {
  it('finds a 1-minimal subset for any needed set, within n^2 calls', () => {
    fc.assert(fc.asyncProperty(fc.integer({ min: 1, max: 12 }).chain((n) => fc.tuple(fc.constant(n), fc.uniqueArray(fc.integer({ min: 0, max: n - 1 }), { minLength: 1, maxLength: n }))), async ([n, needed]) => {
      let calls = 0;
      const works = async (s: readonly number[]) => {
        calls++;
        return needed.every((x) => s.includes(x));
      };
      const got = await ddmin([...Array(n).keys()], works);
      expect([...got].sort((a, b) => a - b)).toEqual([...needed].sort((a, b) => a - b));
      expect(calls).toBeLessThanOrEqual(n * n + 2);
    }));
  });

  it('gives the same subset with tests run at once, in fewer rounds', () => {
    fc.assert(fc.asyncProperty(fc.integer({ min: 1, max: 12 }).chain((n) => fc.tuple(fc.constant(n), fc.uniqueArray(fc.integer({ min: 0, max: n - 1 }), { minLength: 1, maxLength: n }), fc.integer({ min: 2, max: 8 }))), async ([n, needed, parallel]) => {
      const works = async (s: readonly number[]) => needed.every((x) => s.includes(x));
      const items = [...Array(n).keys()];
      let inFlight = 0;
      let most = 0;
      const counted = async (s: readonly number[]) => {
        most = Math.max(most, ++inFlight);
        await new Promise((r) => setImmediate(r));
        inFlight--;
        return works(s);
      };
      expect(await ddmin(items, counted, { parallel })).toEqual(await ddmin(items, works));
      expect(most).toBeLessThanOrEqual(parallel);
    }));
  });

  it('leaving each item out first finds a monotone needed set in one round and one check', async () => {
    const needed = [1, 4, 5, 6, 8];
    let calls = 0;
    const got = await ddmin([...Array(10).keys()], async (s) => (calls++, needed.every((x) => s.includes(x))), { parallel: 10, leaveOneOutFirst: true });
    expect(got).toEqual(needed);
    expect(calls).toBe(11);
  });

  it('leaving each item out first falls back to ddmin when the items each stand in for another', async () => {
    // Either copy of a (0 or 1) and either of b (2 or 3): no item alone is needed.
    const works = async (s: readonly number[]) => (s.includes(0) || s.includes(1)) && (s.includes(2) || s.includes(3));
    const got = await ddmin([0, 1, 2, 3, 4], works, { parallel: 4, leaveOneOutFirst: true });
    expect(got).toHaveLength(2);
    expect(await works(got)).toBe(true);
  });

  it('keeps only the items of the groups needed, testing whole groups', async () => {
    const items = ['n0 a', 'n0 b', 'n1 a', 'n1 b', 'n2 a'];
    const tested: string[][] = [];
    const got = await ddminByGroup(items, (x) => x.split(' ')[0], async (s) => (tested.push([...s]), s.includes('n1 b')));
    expect(got).toEqual(['n1 a', 'n1 b']);
    expect(tested[0]).toEqual(['n0 a', 'n0 b', 'n1 a', 'n1 b']);
  });

  it('smallestPrefix finds the least k of a monotone predicate, with points tested at once too', async () => {
    for (const parallel of [1, 2, 3, 7]) for (let n = 1; n <= 12; n++) for (let k = 1; k <= n; k++) expect(await smallestPrefix(n, async (x) => x >= k, parallel)).toBe(k);
  });
});

const req = (op: number, kind: string, path: string, extra: Partial<TraceEntry> = {}): TraceEntry => ({ op, kind, path, result: 0, ...extra } as TraceEntry);
const workload = (outcomes: RunRecord['outcomes']): RunRecord => ({ role: 'workload', outcomes, exitCode: null, killed: true, hung: false, failedRequests: [] });
const liveness: Violation = { check: 'liveness', message: 'liveness: the queue did not open after the power cut' };

// A queue that creates /page.2 (1), writes it (2), fsyncs it (3), then writes and fsyncs its checkpoint (4, 5): no fsync of /.
const pageTrace = [req(1, 'create', '/page.2'), req(2, 'write', '/page.2', { offset: 0, length: 100 }), req(3, 'fsync', '/page.2'), req(4, 'write', '/checkpoint'), req(5, 'fsync', '/checkpoint')];
const rootUnit: LostUnit = { kind: 'dir', ino: 1, path: '/', changes: [{ seq: 1, op: 1, kind: 'create', entries: [{ name: 'page.2', target: 'file' }] }], syncedLater: [] };

function failing(over: Partial<FailingState> = {}): FailingState {
  return {
    state: { id: { afterOp: 5, policy: 'lose-unsynced' }, interval: 1, hash: 'x' },
    violations: [liveness],
    units: [rootUnit],
    trace: pageTrace,
    marks: [],
    workload: workload([]),
    ...over,
  };
}

/** A probe from a rule: the recovery passes iff `recovers` says so of the request. */
const probeBy = (recovers: (r: ProbeRequest) => boolean) => {
  const seen: ProbeRequest[] = [];
  return { seen, probe: async (r: ProbeRequest) => (seen.push(r), recovers(r) ? [] : [liveness]) };
};

describe('searchCause', () => {
  it('names a missing directory fsync after the create, before what relied on it, with the fix as a step to prove', async () => {
    const { probe } = probeBy((r) => r.persist?.some((u) => u.kind === 'dir' && u.ino === 1) ?? false);
    const c = await searchCause(failing(), probe);
    expect(c.kind).toBe('missing-dir-fsync');
    expect(c.key).toBe('missing-dir-fsync / create /page.*');
    expect(c.title).toBe('missing fsync of directory / after create of /page.*');
    expect(c.fix).toBe('fsync the directory / after create /page.2 (request 1), before the write of /checkpoint at request 4');
    expect(c.step).toEqual({ kind: 'fsync-after', afterOp: 1, ino: 1, path: '/', dir: true });
    expect(c.search.boundReached).toBe(false);
  });

  it('finds the one unit of several that matters, and the one change inside it', async () => {
    const lockDir: LostUnit = { ...rootUnit, changes: [
      { seq: 1, op: 1, kind: 'create', entries: [{ name: 'lock.new', target: 'file' }] },
      { seq: 2, op: 2, kind: 'create', entries: [{ name: 'page.2', target: 'file' }] },
      { seq: 3, op: 3, kind: 'unlink', entries: [{ name: 'lock.new', target: null }] },
    ] };
    const other: LostUnit = { kind: 'file', ino: 7, path: '/log', changes: [{ seq: 4, op: 4, kind: 'write', offset: 0, length: 10 }], syncedLater: [] };
    const { probe } = probeBy((r) => r.persist?.some((u) => u.kind === 'dir' && (u.seqs === undefined || u.seqs.includes(2))) ?? false);
    const trace = [req(1, 'create', '/lock.new'), req(2, 'create', '/page.2'), req(3, 'unlink', '/lock.new'), req(4, 'write', '/log'), req(5, 'fsync', '/page.2'), req(6, 'fsync', '/log')];
    const c = await searchCause(failing({ units: [other, lockDir], trace, state: { id: { afterOp: 6, policy: 'lose-unsynced' }, interval: 1, hash: 'x' } }), probe);
    expect(c.key).toBe('missing-dir-fsync / create /page.*');
    expect(c.change?.op).toBe(2);
  });

  it('names a confirmation that did not wait for the fsync the program made', async () => {
    // The fsync of /page.2 (request 3) covers the write, but line 2 ("waited" seq 1) was printed after request 2.
    const unit: LostUnit = { kind: 'file', ino: 5, path: '/page.2', changes: [{ seq: 1, op: 2, kind: 'write', offset: 0, length: 100 }], syncedLater: [{ op: 3, covers: 1 }] };
    const v: Violation = { check: 'at-least-once', message: 'at-least-once: seq 1 lost', seqs: [1], promise: { run: 0, line: 2 } };
    const { probe } = probeBy((r) => r.persist?.some((u) => u.ino === 5) ?? false);
    const c = await searchCause(failing({ units: [unit], violations: [v], marks: [{ n: 1, afterOp: 1 }, { n: 2, afterOp: 2 }], workload: workload([{ t: 'open', durableSeq: 0, durableFirstUnackedSeq: 1 }, { t: 'waited', seq: 1 }]), state: { id: { afterOp: 2, policy: 'lose-unsynced' }, interval: 0, hash: 'x' } }), probe);
    expect(c.kind).toBe('early-confirmation');
    expect(c.fix).toBe('wait for the fsync of /page.2 at request 3 to complete before line 2 of run 0 ("waited" seq 1): it makes its write at request 2 (bytes 0-99) durable, and the line was printed before it did');
    expect(c.step).toEqual({ kind: 'wait', line: 2, untilOp: 3 });
  });

  it('names a torn write recovery accepts when keeping the file whole and not at all both recover', async () => {
    const unit: LostUnit = { kind: 'file', ino: 5, path: '/page.1', changes: [{ seq: 1, op: 2, kind: 'write', offset: 100, length: 50 }], syncedLater: [] };
    const integrity: Violation = { check: 'integrity', message: 'integrity: seq 3 differs' };
    const { probe } = probeBy((r) => r.persist !== undefined);
    const c = await searchCause(failing({ units: [unit], violations: [integrity], state: { id: { afterOp: 3, policy: 'torn', data: { kind: 'only', write: 0 } }, interval: 1, hash: 'x' } }), probe);
    expect(c.kind).toBe('torn-write');
    expect(c.key).toBe('torn-write /page.* accepted');
    expect(c.fix).toMatch(/^make recovery reject the partially persisted write of \/page\.1 \(bytes 100-149, request 2\)/);
  });

  it('says the recovery fails on a legal disk when even every change kept fails, naming the file recovery choked on', async () => {
    const { probe } = probeBy(() => false);
    const damaged: Violation = { check: 'liveness', message: 'liveness: the queue did not open after the power cut: queue damaged where synced: /dev/shm/slot-0/page.2 at offset 24' };
    const c = await searchCause(failing({ violations: [damaged], state: { id: { afterOp: 5, policy: 'lose-unsynced' }, interval: 2, hash: 'x' } }), probe);
    expect(c.kind).toBe('recovery-fails-on-legal-disk');
    expect(c.key).toBe('recovery-fails-on-legal-disk liveness /page.*');
    // The recovery's folder (a slot's copy, other on each run) is left out of the quoted message.
    expect(c.fix).toBe('recover the disk a process crash leaves after request 5: liveness: the queue did not open after the power cut: queue damaged where synced: /page.2 at offset 24');
  });

  it('names a removal too early when recovery fails at a file the program had just removed, even after a process crash', async () => {
    const { probe } = probeBy(() => false);
    const gone: Violation = { check: 'liveness', message: 'liveness: queue damaged where synced: /dev/shm/slot-0/page.1 at offset 0: page is missing but checkpoint references it' };
    const trace = [...pageTrace, req(6, 'unlink', '/page.1')];
    const c = await searchCause(failing({ violations: [gone], trace, state: { id: { afterOp: 6, policy: 'lose-unsynced' }, interval: 2, hash: 'x' } }), probe);
    expect(c.kind).toBe('early-persistence');
    expect(c.key).toBe('early-persistence unlink /page.*');
    expect(c.fix).toMatch(/^unlink \/page\.1 \(request 6\) comes before what stops depending on it: a process crash right after it already leaves a disk recovery cannot open/);
  });

  it('names a persistence point too early when nothing after the lost change relied on it', async () => {
    // The unlink of /page.1 was made durable (fsyncdir, request 3) before the checkpoint that stops naming it was written (4).
    const trace = [req(1, 'write', '/checkpoint'), req(2, 'unlink', '/page.1'), req(3, 'fsyncdir', '/'), req(4, 'write', '/checkpoint', { offset: 48 })];
    const unit: LostUnit = { kind: 'file', ino: 9, path: '/checkpoint', changes: [{ seq: 1, op: 4, kind: 'write', offset: 48, length: 48 }], syncedLater: [] };
    const { probe } = probeBy((r) => (r.persist?.length ?? 0) > 0 || (r.hypothesis?.fsyncSkip?.includes(3) ?? false));
    const c = await searchCause(failing({ units: [unit], trace, state: { id: { afterOp: 4, policy: 'lose-unsynced' }, interval: 1, hash: 'x' } }), probe);
    expect(c.kind).toBe('early-persistence');
    expect(c.key).toBe('early-persistence unlink /page.*');
    expect(c.fix).toMatch(/^the directory fsync of \/ at request 3 made unlink \/page\.1 \(request 2\) durable too early/);
  });

  it('on a cluster, narrows by node, directory and path with probes at once, and names the unit on its node', async () => {
    // Three nodes lost the same pages, their directory's entries and a checkpoint in another directory; the recovery
    // needs /page.2 and its entry on a majority (nodes 0 and 1 here).
    const units: LostUnit[] = [0, 1, 2].flatMap((node) => [
      { ...rootUnit, node },
      { kind: 'file' as const, node, ino: 7, path: '/page.2', changes: [{ seq: 2, op: 2, kind: 'write' as const, offset: 0, length: 100 }], syncedLater: [] },
      { kind: 'meta' as const, node, ino: 7, path: '/page.2', changes: [], syncedLater: [] },
      { kind: 'file' as const, node, ino: 6, path: '/page.1', changes: [{ seq: 4, op: 5, kind: 'write' as const, offset: 0, length: 10 }], syncedLater: [] },
      { kind: 'file' as const, node, ino: 8, path: '/state/checkpoint', changes: [{ seq: 3, op: 4, kind: 'write' as const, offset: 0, length: 8 }], syncedLater: [] },
    ]);
    const kept = (r: ProbeRequest, node: number, ino: number, kind: string) => r.persist?.some((u) => u.node === node && u.ino === ino && u.kind === kind) ?? false;
    let inFlight = 0;
    let most = 0;
    const probe = async (r: ProbeRequest) => {
      most = Math.max(most, ++inFlight);
      await new Promise((done) => setImmediate(done));
      inFlight--;
      return [0, 1].every((n) => kept(r, n, 1, 'dir') && kept(r, n, 7, 'file')) ? [] : [liveness];
    };
    const trace = pageTrace.map((e) => ({ ...e, node: 0 }));
    const c = await searchCause(failing({ units, trace }), probe, { maxProbes: 200, maxMs: 10_000 }, 4);
    expect(most).toBeGreaterThan(1);
    expect(most).toBeLessThanOrEqual(4);
    expect(c.evidence.filter((e) => e.startsWith('narrowed by')).map((e) => e.split(' to ')[0])).toEqual(['narrowed by node', 'narrowed by directory', 'narrowed by path']);
    expect(c.evidence.find((e) => e.startsWith('a 1-minimal set'))).toBe('a 1-minimal set of lost units whose persistence makes it pass: the data of /page.2 on node 0; the data of /page.2 on node 1; the entries of directory / on node 0; the entries of directory / on node 1');
    expect(c).toMatchObject({ kind: 'missing-fsync', unit: { path: '/page.2' } });
  });

  it('stops at its bound and says so, never guessing', async () => {
    const many: LostUnit[] = Array.from({ length: 30 }, (_, i) => ({ kind: 'file', ino: 10 + i, path: `/f${i}`, changes: [{ seq: i + 1, op: i + 1, kind: 'write', offset: 0, length: 1 }], syncedLater: [] }));
    const { probe, seen } = probeBy((r) => [11, 29].every((ino) => r.persist?.some((u) => u.ino === ino)));
    const c = await searchCause(failing({ units: many }), probe, { maxProbes: 4, maxMs: 10_000 });
    expect(c.kind).toBe('not-isolated');
    expect(c.search).toMatchObject({ probes: 4, boundReached: true });
    expect(seen).toHaveLength(4);
    expect(c.evidence.at(-1)).toBe("the search's bound was reached: 4 probes");
  });
});

describe('unitsInWords', () => {
  const unit = (kind: LostUnit['kind'], ino: number): LostUnit => ({ kind, ino, path: `/f${ino}`, changes: [], syncedLater: [] } as unknown as LostUnit);
  it('lists a handful, and past that the first six and the rest counted by kind (seen: 375 units of a NATS cluster in one line)', () => {
    expect(unitsInWords([unit('file', 1), unit('dir', 2)])).toBe('the data of /f1; the entries of directory /f2');
    const many = [...Array.from({ length: 8 }, (_, i) => unit('file', i)), unit('dir', 8), unit('dir', 9), unit('meta', 10)];
    expect(unitsInWords(many)).toBe('the data of /f0; the data of /f1; the data of /f2; the data of /f3; the data of /f4; the data of /f5; and 5 more: 2 files\' data, 2 directories\' entries, 1 attributes');
  });
});

describe('withoutRecoveryDir', () => {
  it('leaves the recovery folder out of every path of the message, so the same cause reads the same from any slot', () => {
    const m = "liveness: queue damaged where synced: /dev/shm/powercut-recover-52Oh64/slot-1/1/page.1 at offset 0: page is missing but checkpoint /dev/shm/powercut-recover-52Oh64/slot-1/1/checkpoint.log references it (run 'powercut queue repair /dev/shm/powercut-recover-52Oh64/slot-1/1')";
    expect(withoutRecoveryDir(m, '/page.1')).toBe("liveness: queue damaged where synced: /page.1 at offset 0: page is missing but checkpoint /checkpoint.log references it (run 'powercut queue repair DIR')");
    expect(withoutRecoveryDir('no path here', '/page.1')).toBe('no path here');
  });
});
