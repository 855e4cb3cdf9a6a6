// Exhaustive mode's pure parts: a recorded run replays exactly, and every crash state it enumerates
// is what a power cut at that point would leave (checked against the model itself, run without a
// recording), with torn's extremes matching keep-all and lose-unsynced.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { FsModel, ROOT_INO } from './fs-model.js';
import { Recording, RecordingFsModel, replay, RECORDED_CALL_OVERHEAD_BYTES, RECORDED_METHODS } from './recording.js';
import { diagonalCells, hashTree, StateSpace } from './state-space.js';
import { digestStats } from './content-digest.js';
import { recordWal } from '../../bench/wal-states.js';

const owner = { uid: 0, gid: 0 };

/** One request of a generated run: a call on the model by path, as the adapter makes them. */
type Step =
  | { t: 'create'; name: string }
  | { t: 'write'; name: string; offset: number; len: number; fill: number }
  | { t: 'truncate'; name: string; size: number }
  | { t: 'rename'; name: string; to: string }
  | { t: 'unlink'; name: string }
  | { t: 'fsync'; name: string }
  | { t: 'fsyncdir' }
  | { t: 'chmod'; name: string; mode: number };

const name = fc.constantFrom('a', 'b', 'c');
const stepArb: fc.Arbitrary<Step> = fc.oneof(
  fc.record({ t: fc.constant('create' as const), name }),
  fc.record({ t: fc.constant('write' as const), name, offset: fc.nat(1500), len: fc.integer({ min: 1, max: 1200 }), fill: fc.integer({ min: 1, max: 255 }) }),
  fc.record({ t: fc.constant('truncate' as const), name, size: fc.nat(2000) }),
  fc.record({ t: fc.constant('rename' as const), name, to: name }),
  fc.record({ t: fc.constant('unlink' as const), name }),
  fc.record({ t: fc.constant('fsync' as const), name }),
  fc.constant({ t: 'fsyncdir' as const }),
  fc.record({ t: fc.constant('chmod' as const), name, mode: fc.constantFrom(0o600, 0o644, 0o755) }),
);

/** Applies one step the way the adapter would; a failing step (ENOENT...) changes nothing, like a failed request. */
function apply(m: FsModel, s: Step): void {
  const p = `/${'name' in s ? s.name : ''}`;
  try {
    switch (s.t) {
      case 'create': m.create(p, 0o644, owner); break;
      case 'write': m.write(m.resolve(p), s.offset, Buffer.alloc(s.len, s.fill)); break;
      case 'truncate': m.truncate(m.resolve(p), s.size); break;
      case 'rename': m.rename(p, `/${s.to}`); break;
      case 'unlink': m.unlink(p); break;
      case 'fsync': m.fsync(m.resolve(p)); break;
      case 'fsyncdir': m.fsync(ROOT_INO); break;
      case 'chmod': m.chmod(m.resolve(p), s.mode); break;
    }
  } catch {
    // a failed request: nothing changed
  }
}

/** The run recorded request by request, and a clock both models share so their times agree. */
function record(steps: Step[]): { recording: Recording; live: RecordingFsModel } {
  const recording = new Recording(owner, 1 << 30);
  let op = 0;
  let t = 1_000;
  const live = new RecordingFsModel(recording, () => op, () => ++t);
  for (const s of steps) {
    op++;
    apply(live, s);
  }
  return { recording, live };
}

/** The model without a recording, run up to request `afterOp`, then cut with the policy. */
function direct(steps: Step[], afterOp: number, cut: (m: FsModel) => void): string {
  let t = 1_000;
  const m = new FsModel(() => ++t, owner);
  steps.slice(0, afterOp).forEach((s) => apply(m, s));
  cut(m);
  return hashTree(m.exportTree('durable'));
}

const runArb = fc.array(stepArb, { minLength: 1, maxLength: 30 });

describe('recorded runs', () => {
  it('record every changing method of the model', () => {
    const methods = Object.entries(Object.getOwnPropertyDescriptors(FsModel.prototype)).filter(([k, d]) => k !== 'constructor' && typeof d.value === 'function').map(([k]) => k);
    // A power cut (crash, crashInto, and settle, which the policies call) ends a recording; it is never part of one.
    // probe only marks what the next settle persists: a probe image is built off a copy, never recorded.
    // loadTree fills an empty model with a starting state, which is no part of the run (the recording keeps it as its base).
    const readOnly = ['resolve', 'node', 'file', 'stat', 'readdir', 'readlink', 'read', 'matchesDurable', 'exportTree', 'imageHash', 'unsyncedCounts', 'unsynced', 'pathOf', 'assertInvariants', 'clone', 'setClock', 'crash', 'crashInto', 'settle', 'probe', 'loadTree'];
    const internal = (k: string) => ['fillFrom', 'sortedInos', 'persistJournalPrefix', 'goBackToDurable', 'newDir', 'newMeta', 'syncContent', 'dirAt', 'parent', 'parentForNew', 'entry', 'isAncestor', 'setEntries', 'collect', 'createFile', 'syncNode', 'changedInode', 'uncommittedChange', 'commitIfNeeded', 'persistProbe'].includes(k);
    expect(methods.filter((k) => !readOnly.includes(k) && !internal(k)).sort()).toEqual([...RECORDED_METHODS].sort());
  });

  it('replay into a fresh model gives the live state of the run, times included', () => {
    fc.assert(
      fc.property(runArb, (steps) => {
        const { recording, live } = record(steps);
        const { model } = replay(recording, steps.length);
        expect(hashTree(model.exportTree('live'))).toBe(hashTree(live.exportTree('live')));
        expect(model.stat(ROOT_INO)).toEqual(live.stat(ROOT_INO));
      }),
      { numRuns: 100 },
    );
  });

  it('records only the outermost call: mknod of a regular file (as os.mknod makes it) replays to the same tree', () => {
    const recording = new Recording(owner, 1 << 30);
    let op = 0;
    let t = 1_000;
    const live = new RecordingFsModel(recording, () => op, () => ++t);
    op++;
    const ino = live.mknod('/f', 'file', 0o644, 0, owner);
    op++;
    live.write(ino, 0, Buffer.from('data'));
    op++;
    live.fsync(ROOT_INO);
    expect(recording.calls.map((c) => c.method)).toEqual(['mknod', 'write', 'fsync']);
    const { model } = replay(recording, op);
    expect(hashTree(model.exportTree('live'))).toBe(hashTree(live.exportTree('live')));
    const space = new StateSpace(recording, op);
    const { states } = space.enumerate(['lose-unsynced']);
    expect(states.length).toBeGreaterThan(0);
    for (const s of states) expect(hashTree(space.build(s.id).exportTree('durable'))).toBe(s.hash);
  });

  it('a power cut of the recording model records none of the fsyncs it makes internally', () => {
    const recording = new Recording(owner, 1 << 30);
    const live = new RecordingFsModel(recording, () => 1);
    live.write(live.create('/a', 0o644, owner), 0, Buffer.from('x'));
    const before = recording.calls.length;
    live.crash('keep-all');
    expect(recording.calls.length).toBe(before);
  });

  it('refuses to keep a run that took more memory than its bound, and says which bound', () => {
    const recording = new Recording(owner, 100);
    let op = 0;
    const m = new RecordingFsModel(recording, () => ++op);
    m.write(m.create('/a', 0o644, owner), 0, Buffer.alloc(101));
    expect(recording.overflow).toMatch(/took more than 100 bytes .*--max-recording-bytes/);
    expect(() => new StateSpace(recording, op)).toThrow(/more than 100 bytes/);
  });

  it('counts every recorded call against its bound, not only write data', () => {
    const recording = new Recording(owner, 100 * RECORDED_CALL_OVERHEAD_BYTES);
    let op = 0;
    const m = new RecordingFsModel(recording, () => ++op);
    const ino = m.create('/a', 0o644, owner);
    for (let i = 0; i < 200 && !recording.overflow; i++) m.chmod(ino, 0o600 + (i % 2));
    expect(recording.overflow).toMatch(/took more than/);
  });

  it('keeps no call made after the recording was closed', () => {
    const recording = new Recording(owner, 1 << 30);
    let op = 0;
    const m = new RecordingFsModel(recording, () => ++op);
    const ino = m.create('/a', 0o644, owner);
    recording.close();
    m.write(ino, 0, Buffer.alloc(10));
    m.chmod(ino, 0o600);
    expect(recording.calls.map((c) => c.method)).toEqual(['create']);
    expect(recording.overflow).toBeNull();
  });
});

describe('crash states of a recorded run', () => {
  it('one lose-unsynced state per persistence interval, each what a power cut in it leaves', () => {
    fc.assert(
      fc.property(runArb, (steps) => {
        const { recording } = record(steps);
        const space = new StateSpace(recording, steps.length);
        const answer = space.enumerate(['lose-unsynced']);
        expect(answer.intervals).toBe(space.persistenceOps.length + 1);
        expect(answer.states.map((s) => s.id.afterOp)).toEqual(space.intervalEnds());
        for (const s of answer.states) {
          // Any request inside the interval leaves the same image as its end: durability moves only at fsyncs.
          const expected = direct(steps, s.id.afterOp, (m) => m.crash('lose-unsynced'));
          expect(s.hash).toBe(expected);
          expect(hashTree(space.build(s.id).exportTree('durable'))).toBe(expected);
        }
      }),
      { numRuns: 100 },
    );
  });

  it('torn: all kept with the whole journal is keep-all; none kept with no journal is lose-unsynced; every state builds to its hash', () => {
    fc.assert(
      fc.property(runArb, (steps) => {
        const { recording } = record(steps);
        const space = new StateSpace(recording, steps.length);
        const { states } = space.enumerate(['torn'], { maxStates: 10_000, maxStatesPerInterval: 10_000, sectorPatterns: 1 });
        for (const s of states) expect(hashTree(space.build(s.id).exportTree('durable'))).toBe(s.hash);
        for (const afterOp of space.intervalEnds()) {
          const hashes = new Set(states.filter((s) => s.id.afterOp === afterOp).map((s) => s.hash));
          expect(hashes.has(direct(steps, afterOp, (m) => m.crash('keep-all')))).toBe(true);
          expect(hashes.has(direct(steps, afterOp, (m) => m.crash('lose-unsynced')))).toBe(true);
        }
      }),
      { numRuns: 60 },
    );
  });

  it('a torn state keeps exactly the directory-operation prefix and the writes it names', () => {
    // create a, fsync a (data durable, name not), create b, write b, rename b -> c: 3 unsynced directory operations.
    const steps: Step[] = [
      { t: 'create', name: 'a' }, { t: 'write', name: 'a', offset: 0, len: 10, fill: 1 }, { t: 'fsync', name: 'a' },
      { t: 'create', name: 'b' }, { t: 'write', name: 'b', offset: 0, len: 600, fill: 2 }, { t: 'write', name: 'b', offset: 600, len: 10, fill: 3 },
      { t: 'rename', name: 'b', to: 'c' },
    ];
    const { recording } = record(steps);
    const space = new StateSpace(recording, steps.length);
    const names = (dirPrefix: number, write: number) => {
      const m = space.build({ afterOp: 7, policy: 'torn', dirPrefix, data: { kind: 'only', write } });
      return [...m.exportTree('durable').type === 'dir' ? (m.exportTree('durable') as { entries: Map<string, { type: string; data?: Buffer }> }).entries : []]
        .map(([n, t]) => `${n}:${t.data?.length ?? 0}`).join(',');
    };
    expect(names(0, 1)).toBe('');
    expect(names(1, 1)).toBe('a:10');
    expect(names(2, 1)).toBe('a:10,b:600'); // only b's first write persisted
    expect(names(2, 2)).toBe('a:10,b:610'); // the second, with the first's bytes in its sector (512..600): sector 0 reads as zeros
    expect(names(3, 2)).toBe('a:10,c:610');
    expect(() => space.build({ afterOp: 7, policy: 'torn', dirPrefix: 4, data: { kind: 'all' } })).toThrow(/dirPrefix 4 is not in 0..3/);
    expect(() => space.build({ afterOp: 8, policy: 'lose-unsynced' })).toThrow(/afterOp 8 is not in 0..7/);
  });

  it('reports the caps it hit and what they left out, and which intervals are complete', () => {
    const steps: Step[] = [{ t: 'create', name: 'a' }, { t: 'write', name: 'a', offset: 0, len: 900, fill: 1 }, { t: 'create', name: 'b' }, { t: 'fsync', name: 'a' }, { t: 'write', name: 'a', offset: 0, len: 10, fill: 2 }];
    const { recording } = record(steps);
    const space = new StateSpace(recording, steps.length);
    const all = space.enumerate(['lose-unsynced', 'torn'], { maxStates: 1_000, maxStatesPerInterval: 1_000, sectorPatterns: 2 });
    expect(all.capped).toEqual({ states: 0, caps: [] });
    expect(all.intervalsComplete).toBe(all.intervals);
    const few = space.enumerate(['lose-unsynced', 'torn'], { maxStates: 3, maxStatesPerInterval: 4, sectorPatterns: 2 });
    expect(few.states.length).toBeLessThanOrEqual(3);
    expect(few.capped.caps.sort()).toEqual(['maxStates 3', 'maxStatesPerInterval 4']);
    expect(few.capped.states).toBeGreaterThan(0);
    expect(few.intervalsComplete).toBeLessThan(few.intervals);
  });

  it('lists states breadth first, so a cap or a time budget leaves out the deepest states, never the last intervals', () => {
    // Three intervals (two fsyncs), each with unsynced writes: several torn states in each.
    const steps: Step[] = [
      { t: 'create', name: 'a' }, { t: 'write', name: 'a', offset: 0, len: 900, fill: 1 }, { t: 'fsync', name: 'a' },
      { t: 'write', name: 'a', offset: 100, len: 900, fill: 2 }, { t: 'fsync', name: 'a' },
      { t: 'write', name: 'a', offset: 200, len: 900, fill: 3 },
    ];
    const { recording } = record(steps);
    const space = new StateSpace(recording, steps.length);
    const all = space.enumerate(['lose-unsynced', 'torn'], { maxStates: 1_000, maxStatesPerInterval: 1_000, sectorPatterns: 2 });
    const order = all.states.map((x) => `${x.id.policy === 'torn' ? 'T' : 'L'}${x.interval}`);
    // One state of each policy first (a budget of two states checks both), then every interval's
    // lose-unsynced state, then torn states a round at a time over the intervals.
    expect(order.slice(0, 4)).toEqual(['L0', 'T0', 'L1', 'L2']);
    expect(order.slice(4, 6).sort()).toEqual(['T1', 'T2']);
    const two = space.enumerate(['lose-unsynced', 'torn'], { maxStates: 2, maxStatesPerInterval: 1_000, sectorPatterns: 2 });
    expect(two.states.map((x) => `${x.id.policy === 'torn' ? 'T' : 'L'}${x.interval}`)).toEqual(['L0', 'T0', 'L1', 'L2']);
    const capped = space.enumerate(['lose-unsynced', 'torn'], { maxStates: 6, maxStatesPerInterval: 1_000, sectorPatterns: 2 });
    expect(capped.states.filter((x) => x.id.policy === 'lose-unsynced').map((x) => x.interval)).toEqual([0, 1, 2]);
    expect(new Set(capped.states.filter((x) => x.id.policy === 'torn').map((x) => x.interval))).toEqual(new Set([0, 1, 2]));
    expect(capped.incomplete?.['lose-unsynced']).toEqual([]);
    expect(capped.incomplete?.torn).toEqual([0, 1, 2]);
  });

  it('takes torn candidates diagonally, so a cap keeps data outcomes however many directory operations are unsynced', () => {
    expect(diagonalCells(3, 2, 10)).toEqual([[0, 0], [0, 1], [1, 0], [1, 1], [2, 0], [2, 1]]);
    expect(diagonalCells(1, 4, 3)).toEqual([[0, 0], [0, 1], [0, 2]]);
    expect(diagonalCells(40, 40, 4)).toEqual([[0, 0], [0, 1], [1, 0], [0, 2]]);
    expect(diagonalCells(0, 5, 3)).toEqual([]);
  });

  it('counts the torn states a cap leaves out without making them (300 creates, 3000 unsynced one-byte writes)', () => {
    const recording = new Recording(owner, 1 << 30);
    let op = 0;
    const m = new RecordingFsModel(recording, () => op);
    const inos: number[] = [];
    for (let i = 0; i < 300; i++) {
      op++;
      inos.push(m.create(`/f${i}`, 0o644, owner));
    }
    for (let i = 0; i < 3_000; i++) {
      op++;
      m.write(inos[i % 300], Math.floor(i / 300), Buffer.from([i % 251]));
    }
    const space = new StateSpace(recording, op);
    const t0 = performance.now();
    const answer = space.enumerate(['torn'], { maxStates: 400, maxStatesPerInterval: 10, sectorPatterns: 2 });
    const total = (2 + 2 * 3_000 + 2) * (300 + 1);
    expect(answer.capped).toEqual({ states: total - 10, caps: ['maxStatesPerInterval 10'] });
    // The first ten, diagonally: data outcomes (all, none, only, except...) against directory prefixes, longest first.
    expect(answer.states.map((s) => [s.id.dirPrefix, s.id.data?.kind])).toEqual([
      [300, 'all'], [299, 'all'], [300, 'none'], [298, 'all'], [299, 'none'], [300, 'only'], [297, 'all'], [298, 'none'], [299, 'only'], [300, 'except'],
    ]);
    expect(performance.now() - t0).toBeLessThan(5_000);
  });

  describe('the cause search\'s probes and hypotheses', () => {
    // create /p (1), write it (2), fsync it (3), create /q (4): the directory is never fsynced.
    const steps: Step[] = [{ t: 'create', name: 'a' }, { t: 'write', name: 'a', offset: 0, len: 10, fill: 7 }, { t: 'fsync', name: 'a' }, { t: 'create', name: 'b' }];
    const space = () => new StateSpace(record(steps).recording, steps.length);
    const names = (m: FsModel) => m.readdir('/').sort();
    it('name what a state lost, unit by unit, with the request of each change', () => {
      const units = space().lostUnits({ afterOp: 4, policy: 'lose-unsynced' });
      expect(units).toEqual([
        { kind: 'dir', ino: ROOT_INO, path: '/', changes: [
          { seq: 1, op: 1, kind: 'create', entries: [{ name: 'a', target: '/a' }] },
          { seq: 3, op: 4, kind: 'create', entries: [{ name: 'b', target: '/b' }] },
        ], syncedLater: [] },
        // The root's new times, never fsynced.
        { kind: 'meta', ino: ROOT_INO, path: '/', changes: [], syncedLater: [] },
      ]);
      // Torn with the first directory operation kept: only /b's entry is lost.
      expect(space().lostUnits({ afterOp: 4, policy: 'torn', dirPrefix: 1, data: { kind: 'all' } }).map((u) => u.changes.map((c) => c.op))).toEqual([[4]]);
    });
    it('build a probe image with lost units made durable: all of a directory\'s entries, or one operation\'s', () => {
      const id = { afterOp: 4, policy: 'lose-unsynced' as const };
      expect(names(space().build(id))).toEqual([]);
      const all = space().buildProbe(id, [{ kind: 'dir', ino: ROOT_INO }]);
      expect(names(all)).toEqual(['a', 'b']);
      expect(all.read(all.resolve('/a'), 0, 10)).toEqual(Buffer.alloc(10, 7)); // fsynced: its bytes came with the name
      expect(names(space().buildProbe(id, [{ kind: 'dir', ino: ROOT_INO, seqs: [1] }]))).toEqual(['a']);
    });
    it('insert an fsync after a request as a request of its own, and enumerate the run so changed', () => {
      const fixed = space().withHypothesis({ fsyncAfter: [{ afterOp: 1, ino: ROOT_INO }] });
      expect(fixed.opCount).toBe(5);
      expect(fixed.persistenceOps).toEqual([2, 4]); // the inserted directory fsync, then /a's fsync (request 3 became 4)
      const last = fixed.enumerate(['lose-unsynced']).states.at(-1)!;
      expect(last.id.afterOp).toBe(5);
      expect(names(fixed.build(last.id))).toEqual(['a']);
    });
  });
});

describe('the cost of listing states', () => {
  it('grows with the writes, not the bytes held: a log preallocated to 64 MiB hashes no more chunks than the same log grown by its appends', () => {
    const shape = { segments: 2, recordsPerSegment: 6, recordBytes: 4096 };
    const hashedListing = (preallocateBytes: number) => {
      const space = recordWal({ ...shape, preallocateBytes });
      const before = digestStats.chunksHashed;
      const answer = space.enumerate(['lose-unsynced', 'torn']);
      return { chunks: digestStats.chunksHashed - before, states: answer.states.length };
    };
    const plain = hashedListing(0);
    const preallocated = hashedListing(64 << 20);
    expect(preallocated.states).toBeGreaterThan(shape.segments * shape.recordsPerSegment);
    // 64 MiB is 1,024 chunks per segment: hashing them whole at any state would show here.
    expect(preallocated.chunks).toBeLessThanOrEqual(plain.chunks);
  });
});
