// The journaled policy against a brute-force reference (docs/fs.md, "journaled"), as torn.test.ts
// checks torn's sector rule: on small histories of directory operations, writes and syncs in one
// directory, the reference replays the history itself, decides which fsyncs commit the journal by
// ext4's rule (an fsync of an inode changed since the last commit, an fdatasync only for a size
// change, a directory fsync of a changed directory), takes as surely committed the operations up to
// that inode's latest change (a periodic commit may have taken it already, and then the fsync commits
// nothing newer), and allows exactly the directory states after every prefix of the unsynced
// operations that contains every operation surely committed.
// Every random cut must leave one of them, and the exhaustive candidates must leave each of them.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DEFAULT_STATE_CAPS } from '../../crash-states.js';
import { FsModel, ROOT_INO } from '../fs-model.js';
import { journaled, sizesInsideWrites } from './journaled.js';

const NAMES = ['a', 'b', 'c'] as const;
type Step =
  | { t: 'create' | 'unlink' | 'write' | 'extend' | 'fsync' | 'fdatasync'; n: number }
  | { t: 'rename'; n: number; to: number }
  | { t: 'fsyncdir' };

const name = fc.integer({ min: 0, max: NAMES.length - 1 });
const stepArb: fc.Arbitrary<Step> = fc.oneof(
  { weight: 3, arbitrary: fc.record({ t: fc.constantFrom('create' as const, 'unlink' as const, 'write' as const, 'extend' as const), n: name }) },
  { weight: 1, arbitrary: fc.record({ t: fc.constant('rename' as const), n: name, to: name }) },
  { weight: 2, arbitrary: fc.record({ t: fc.constantFrom('fsync' as const, 'fdatasync' as const), n: name }) },
  { weight: 1, arbitrary: fc.constant({ t: 'fsyncdir' as const }) },
);
const historyArb = fc.array(stepArb, { minLength: 1, maxLength: 12 });

/** The reference: the directory's names after each allowed prefix, as sorted lists joined by commas. */
function allowedDirStates(steps: readonly Step[]): Set<string> {
  let nextIno = 1;
  const live = new Map<string, number>(); // name -> inode
  let durable = new Map<string, number>();
  let unsynced: ((m: Map<string, number>) => void)[] = []; // directory operations not yet durable, in order
  let committed = 0; // how many of them a commit surely made durable
  const size = new Map<number, number>();
  // Inodes (0: the directory) changed since the last commit that took them: how many unsynced
  // operations there were at their latest change (of their size).
  const changed = new Map<number, number>();
  const sizeChanged = new Map<number, number>();
  const commit = (upTo: number) => {
    committed = Math.max(committed, upTo);
    for (const m of [changed, sizeChanged]) for (const [i, at] of m) if (at <= committed) m.delete(i);
  };
  const dirOp = (apply: (m: Map<string, number>) => void, touched: number[]) => {
    apply(live);
    unsynced.push(apply);
    for (const i of [0, ...touched]) changed.set(i, unsynced.length);
  };
  for (const s of steps) {
    const key = s.t === 'fsyncdir' ? '' : NAMES[s.n];
    const ino = s.t === 'fsyncdir' ? undefined : live.get(key);
    switch (s.t) {
      case 'create':
        if (ino === undefined) {
          const fresh = nextIno++;
          size.set(fresh, 0);
          dirOp((m) => m.set(key, fresh), [fresh]);
        }
        break;
      case 'unlink':
        if (ino !== undefined) dirOp((m) => m.delete(key), [ino]);
        break;
      case 'rename': {
        const to = NAMES[s.to];
        const target = live.get(to);
        if (ino !== undefined && ino !== target) dirOp((m) => { m.delete(key); m.set(to, ino); }, [ino, ...(target !== undefined ? [target] : [])]);
        break;
      }
      case 'write': // an overwrite inside the file: its times change, not its size
      case 'extend':
        if (ino !== undefined) {
          changed.set(ino, unsynced.length);
          if (s.t === 'extend' || size.get(ino) === 0) {
            size.set(ino, size.get(ino)! + 10);
            sizeChanged.set(ino, unsynced.length);
          }
        }
        break;
      case 'fsync':
      case 'fdatasync':
        if (ino !== undefined && (s.t === 'fsync' ? changed : sizeChanged).has(ino)) commit((s.t === 'fsync' ? changed : sizeChanged).get(ino)!);
        break;
      case 'fsyncdir':
        if (changed.has(0)) commit(changed.get(0)!);
        durable = new Map(live);
        unsynced = [];
        committed = 0;
        // Changes still uncommitted came before no unsynced operation now.
        for (const m of [changed, sizeChanged]) for (const i of m.keys()) m.set(i, 0);
        break;
    }
  }
  const out = new Set<string>();
  for (let k = committed; k <= unsynced.length; k++) {
    const m = new Map(durable);
    for (const op of unsynced.slice(0, k)) op(m);
    out.add([...m.keys()].sort().join(','));
  }
  return out;
}

function run(steps: readonly Step[]): FsModel {
  let t = 1_000;
  const m = new FsModel(() => ++t, { uid: 0, gid: 0 });
  for (const s of steps) {
    const path = s.t === 'fsyncdir' ? '/' : `/${NAMES[s.n]}`;
    const exists = () => m.readdir('/').includes(NAMES[(s as { n: number }).n]);
    switch (s.t) {
      case 'create':
        if (!exists()) m.create(path, 0o644);
        break;
      case 'unlink':
        if (exists()) m.unlink(path);
        break;
      case 'rename':
        if (exists() && s.n !== s.to) m.rename(path, `/${NAMES[s.to]}`);
        break;
      case 'write':
      case 'extend':
        if (exists()) {
          const ino = m.resolve(path);
          const at = s.t === 'extend' ? m.stat(ino).sizeBytes : 0;
          m.write(ino, at, Buffer.alloc(m.stat(ino).sizeBytes === 0 || s.t === 'extend' ? 10 : Math.min(10, m.stat(ino).sizeBytes), 7));
        }
        break;
      case 'fsync':
      case 'fdatasync':
        if (exists()) m[s.t](m.resolve(path));
        break;
      case 'fsyncdir':
        m.fsync(ROOT_INO);
        break;
    }
    m.assertInvariants();
  }
  return m;
}

const namesOf = (m: FsModel) => m.readdir('/').sort().join(',');

describe('journaled', () => {
  it('every random cut leaves a directory state the reference allows', () => {
    fc.assert(
      fc.property(historyArb, fc.integer(), (steps, seed) => {
        const allowed = allowedDirStates(steps);
        const cut = run(steps);
        journaled.cut(cut, seed);
        expect(allowed, `cut with seed ${seed}`).toContain(namesOf(cut));
      }),
      { numRuns: 500 },
    );
  });
  it('its exhaustive candidates leave exactly the directory states the reference allows, every one of them', () => {
    let bounded = 0;
    fc.assert(
      fc.property(historyArb, (steps) => {
        const allowed = allowedDirStates(steps);
        const m = run(steps);
        const u = m.unsynced();
        if (u.committedDirOps > 0) bounded++;
        const caps = { ...DEFAULT_STATE_CAPS, maxStatesPerInterval: 1_000 };
        const states = new Set<string>();
        for (const id of journaled.states!.candidates(u, 0, 0, caps, journaled.states!.count(u, caps))) {
          const cut = m.clone();
          journaled.states!.settle(cut, id);
          states.add(namesOf(cut));
        }
        expect(states).toEqual(allowed);
      }),
      { numRuns: 500 },
    );
    // The histories did reach the rule that matters: a commit that made earlier operations durable.
    expect(bounded).toBeGreaterThan(20);
  });
  it('refuses a state below what a commit made durable', () => {
    const m = new FsModel(() => 0);
    m.create('/a', 0o644);
    m.fsync(m.resolve('/a')); // a new inode: the commit makes its entry durable
    expect(m.unsynced().committedDirOps).toBe(1);
    expect(() => journaled.states!.settle(m.clone(), { afterOp: 2, policy: 'journaled', dirPrefix: 0, data: { kind: 'none' } })).toThrow(/below the 1 operations a journal commit made durable/);
    // An overwrite's fdatasync commits nothing; its fsync does (the write changed the file's times).
    const o = new FsModel(() => 0);
    const ino = o.create('/b', 0o644);
    o.write(ino, 0, Buffer.from('x'));
    o.fsync(ino);
    o.fsync(ROOT_INO);
    o.create('/c', 0o644);
    o.write(ino, 0, Buffer.from('y'));
    o.fdatasync(ino);
    expect(o.unsynced().committedDirOps).toBe(0);
    o.fsync(ino);
    expect(o.unsynced().committedDirOps).toBe(1);
  });
  it('takes an fsync to commit only up to its inode\'s latest change (a periodic commit may have taken it: real ext4 lost a later create)', () => {
    // kernel-check, src/kernel-check/regressions/: create f0, write it, 8 s pause (write-back and
    // the 5 s commit take both), create f1, fsync f0: real ext4 came back without f1.
    const m = new FsModel(() => 0);
    const f0 = m.create('/f0', 0o644);
    m.write(f0, 0, Buffer.alloc(5000, 1));
    m.create('/f1', 0o644);
    m.fsync(f0);
    expect(m.unsynced().committedDirOps).toBe(1);
    // A change of f0 after the create commits it with f0's own.
    m.write(f0, 0, Buffer.alloc(10, 2));
    m.fsync(f0);
    expect(m.unsynced().committedDirOps).toBe(2);
  });
  it('lets a cut leave a size inside the range a write grew the file by (real ext4 came back at 4096 bytes after appends to 521, 1477 and 5575)', () => {
    const m = new FsModel(() => 0);
    const f0 = m.create('/f0', 0o644);
    m.write(f0, 0, Buffer.alloc(521, 1));
    m.write(f0, 521, Buffer.alloc(956, 2));
    m.write(f0, 1477, Buffer.alloc(4098, 3));
    const prefixSizes = [0, 521, 1477, 5575];
    const inside = sizesInsideWrites(m.unsynced().files.find((f) => f.ino === f0)!);
    expect(inside).toContain(4096);
    expect(inside.every((b) => b % 512 === 0 && b > 0 && b < 5575 && !prefixSizes.includes(b))).toBe(true);
    const sizes = new Set<number>();
    for (let seed = 0; seed < 300; seed++) {
      const cut = m.clone();
      journaled.cut(cut, seed);
      sizes.add(cut.readdir('/').includes('f0') ? cut.stat(cut.resolve('/f0')).sizeBytes : -1);
    }
    expect([...sizes].filter((x) => x >= 0 && !prefixSizes.includes(x)).length).toBeGreaterThan(3);
    expect([...sizes].every((x) => x < 0 || prefixSizes.includes(x) || inside.includes(x))).toBe(true);
  });
});
