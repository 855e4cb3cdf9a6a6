import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { FsModel, MAX_FILE_BYTES, ROOT_INO, UNCHANGED_ID } from './fs-model.js';
import { EINVAL, ENOENT, ENOTEMPTY, FsError } from './errno.js';
import { FALLOC_FL_COLLAPSE_RANGE, FALLOC_FL_INSERT_RANGE, FALLOC_FL_KEEP_SIZE, FALLOC_FL_PUNCH_HOLE, FALLOC_FL_ZERO_RANGE, fallocateKind } from './fallocate.js';
import { appliedPlain } from './plain-file.js';

import type { FsTree } from './nodes.js';
import { tornFile } from './torn.js';
import { BLOCK_BYTES, GrowBuffer } from './grow-buffer.js';
import { Prng } from './prng.js';
import type { CrashPolicy } from '../protocol.js';

const bytes = (s: string) => Buffer.from(s);

/** A flattened image: path -> file content (hex) / symlink target / 'dir', for easy comparison. */
function flatten(tree: FsTree, prefix = ''): Record<string, string> {
  const out: Record<string, string> = {};
  if (tree.type !== 'dir') throw new Error('root must be a dir');
  for (const [name, child] of tree.entries) {
    const p = `${prefix}/${name}`;
    if (child.type === 'dir') {
      out[p] = 'dir';
      Object.assign(out, flatten(child, p));
    } else if (child.type === 'file') out[p] = 'file:' + child.data.toString('hex');
    else if (child.type === 'symlink') out[p] = 'link:' + child.target;
    else out[p] = `${child.type}:${child.rdev}`;
  }
  return out;
}

function errnoOf(f: () => unknown): number {
  try {
    f();
  } catch (e) {
    if (e instanceof FsError) return e.errno;
    throw e;
  }
  return 0;
}

describe('FsModel lose-unsynced (docs/design.md, "Crash semantics")', () => {
  it('keeps a file whose data and directory were fsynced', () => {
    const m = new FsModel();
    const f = m.create('/a', 0o644);
    m.write(f, 0, bytes('hello'));
    m.fsync(f);
    m.fsync(m.resolve('/'));
    m.crash('lose-unsynced');
    expect(m.read(m.resolve('/a'), 0, 100).toString()).toBe('hello');
  });

  it('loses a fsynced file whose directory was not fsynced', () => {
    const m = new FsModel();
    const f = m.create('/a', 0o644);
    m.write(f, 0, bytes('hello'));
    m.fsync(f);
    m.crash('lose-unsynced');
    expect(errnoOf(() => m.resolve('/a'))).toBe(ENOENT);
  });

  it('gives an empty file when only the directory was fsynced', () => {
    const m = new FsModel();
    const f = m.create('/a', 0o644);
    m.write(f, 0, bytes('hello'));
    m.fsync(m.resolve('/'));
    m.crash('lose-unsynced');
    expect(m.stat(m.resolve('/a')).sizeBytes).toBe(0);
  });

  it('loses unsynced writes and truncates but keeps the fsynced bytes', () => {
    const m = new FsModel();
    const f = m.create('/a', 0o644);
    m.fsync(m.resolve('/'));
    m.write(f, 0, bytes('0123456789'));
    m.fsync(f);
    m.write(f, 2, bytes('xx'));
    m.truncate(f, 4);
    m.crash('lose-unsynced');
    expect(m.read(m.resolve('/a'), 0, 100).toString()).toBe('0123456789');
  });

  it('fsync after truncate-then-regrow persists zeros, not the old bytes', () => {
    const m = new FsModel();
    const f = m.create('/a', 0o644);
    m.fsync(m.resolve('/'));
    m.write(f, 0, bytes('abcdef'));
    m.fsync(f);
    m.truncate(f, 2);
    m.truncate(f, 6);
    m.fsync(f);
    m.crash('lose-unsynced');
    expect(m.read(m.resolve('/a'), 0, 100)).toEqual(Buffer.from('ab\0\0\0\0', 'binary'));
  });

  it('reverts a rename over an existing file without a directory fsync', () => {
    const m = new FsModel();
    const x = m.create('/x', 0o644);
    m.write(x, 0, bytes('old'));
    m.fsync(x);
    m.fsync(m.resolve('/'));
    const tmp = m.create('/x.tmp', 0o644);
    m.write(tmp, 0, bytes('new'));
    m.fsync(tmp);
    m.rename('/x.tmp', '/x');
    m.crash('lose-unsynced');
    expect(m.read(m.resolve('/x'), 0, 10).toString()).toBe('old');
    expect(errnoOf(() => m.resolve('/x.tmp'))).toBe(ENOENT);
  });

  it('makes a cross-directory rename durable per directory', () => {
    const m = new FsModel();
    m.mkdir('/s', 0o755);
    m.mkdir('/t', 0o755);
    const f = m.create('/s/f', 0o644);
    m.fsync(f);
    for (const d of ['/', '/s', '/t']) m.fsync(m.resolve(d));
    m.rename('/s/f', '/t/f');
    m.fsync(m.resolve('/t')); // new entry durable, removal not
    m.crash('lose-unsynced');
    expect(m.resolve('/s/f')).toBe(m.resolve('/t/f'));
  });

  it('brings back an unlinked file without a directory fsync', () => {
    const m = new FsModel();
    const f = m.create('/a', 0o644);
    m.write(f, 0, bytes('keep'));
    m.fsync(f);
    m.fsync(m.resolve('/'));
    m.unlink('/a');
    m.crash('lose-unsynced');
    expect(m.read(m.resolve('/a'), 0, 10).toString()).toBe('keep');
  });

  it('answers POSIX errors for impossible operations', () => {
    const m = new FsModel();
    m.mkdir('/d', 0o755);
    m.create('/d/f', 0o644);
    expect(errnoOf(() => m.rmdir('/d'))).toBe(ENOTEMPTY);
    expect(errnoOf(() => m.unlink('/nope'))).toBe(ENOENT);
  });

  it('a failed fsync drops the unsynced data from what can become durable', () => {
    const m = new FsModel();
    const f = m.create('/a', 0o644);
    m.fsync(m.resolve('/'));
    m.write(f, 0, bytes('lost'));
    m.dropUnsynced(f);
    expect(m.read(f, 0, 10).toString()).toBe('lost'); // still visible live
    m.fsync(f);
    m.crash('lose-unsynced');
    expect(m.read(m.resolve('/a'), 0, 10)).toEqual(Buffer.alloc(4));
  });
});

// ---- properties ----

const NAMES = ['/a', '/b', '/d/a', '/d/b'] as const;
const DIRS = ['/', '/d'] as const;
type Op =
  | { t: 'create'; p: string }
  | { t: 'write'; p: string; off: number; len: number }
  | { t: 'truncate'; p: string; size: number }
  | { t: 'fallocate'; p: string; mode: number; off: number; len: number }
  | { t: 'fsync'; p: string }
  | { t: 'fsyncdir'; p: string }
  | { t: 'rename'; p: string; q: string }
  | { t: 'unlink'; p: string }
  | { t: 'link'; p: string; q: string }
  | { t: 'mkdir' };

const path = fc.constantFrom(...NAMES);
const opArb: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ t: fc.constant('create' as const), p: path }),
  { arbitrary: fc.record({ t: fc.constant('write' as const), p: path, off: fc.nat(3000), len: fc.integer({ min: 1, max: 1500 }) }), weight: 3 },
  fc.record({ t: fc.constant('truncate' as const), p: path, size: fc.nat(4000) }),
  fc.record({ t: fc.constant('fallocate' as const), p: path, mode: fc.constantFrom(0, FALLOC_FL_KEEP_SIZE, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, FALLOC_FL_ZERO_RANGE, FALLOC_FL_ZERO_RANGE | FALLOC_FL_KEEP_SIZE), off: fc.nat(9000), len: fc.integer({ min: 1, max: 9000 }) }),
  fc.record({ t: fc.constant('fallocate' as const), p: path, mode: fc.constantFrom(FALLOC_FL_COLLAPSE_RANGE, FALLOC_FL_INSERT_RANGE), off: fc.constantFrom(0, BLOCK_BYTES), len: fc.constantFrom(BLOCK_BYTES, 2 * BLOCK_BYTES) }),
  { arbitrary: fc.record({ t: fc.constant('fsync' as const), p: path }), weight: 2 },
  { arbitrary: fc.record({ t: fc.constant('fsyncdir' as const), p: fc.constantFrom(...DIRS) }), weight: 2 },
  fc.record({ t: fc.constant('rename' as const), p: path, q: path }),
  fc.record({ t: fc.constant('unlink' as const), p: path }),
  fc.record({ t: fc.constant('link' as const), p: path, q: path }),
  fc.record({ t: fc.constant('mkdir' as const) }),
);

/** Applies ops to the model; each write uses a distinct non-zero byte (its index) so bytes are traceable. Returns ops that succeeded. */
function applyAll(m: FsModel, ops: Op[]): { op: Op; fill: number }[] {
  const done: { op: Op; fill: number }[] = [];
  ops.forEach((op, i) => {
    const fill = (i % 255) + 1;
    const ok = errnoOf(() => {
      switch (op.t) {
        case 'create': return m.create(op.p, 0o644);
        case 'write': return m.write(m.resolve(op.p), op.off, Buffer.alloc(op.len, fill));
        case 'truncate': return m.truncate(m.resolve(op.p), op.size);
        case 'fallocate': return m.fallocate(m.resolve(op.p), op.mode, op.off, op.len);
        case 'fsync': case 'fsyncdir': return m.fsync(m.resolve(op.p));
        case 'rename': return m.rename(op.p, op.q);
        case 'unlink': return m.unlink(op.p);
        case 'link': return m.link(op.p, op.q);
        case 'mkdir': return m.mkdir('/d', 0o755);
      }
    }) === 0;
    if (ok) done.push({ op, fill });
    // The model's own invariants hold after every step (FsModel.assertInvariants throws naming one).
    m.assertInvariants();
  });
  return done;
}

/**
 * Independent reference reading of the lose-unsynced rules (docs/design.md): whole-content copies,
 * no pending-change lists, no journal. Only successful ops are fed to it.
 */
class Reference {
  private inodes = new Map<number, { live: Buffer; durable: Buffer } | { liveDir: Map<string, number>; durableDir: Map<string, number> }>();
  private next = 2;
  constructor() {
    this.inodes.set(1, { liveDir: new Map(), durableDir: new Map() });
  }
  private dir(ino: number) {
    const d = this.inodes.get(ino)!;
    if (!('liveDir' in d)) throw new Error('not a dir');
    return d;
  }
  private file(ino: number) {
    const f = this.inodes.get(ino)!;
    if (!('live' in f)) throw new Error('not a file');
    return f;
  }
  private split(p: string): [number, string] {
    const parts = p.split('/').filter(Boolean);
    const name = parts.pop()!;
    let ino = 1;
    for (const q of parts) ino = this.dir(ino).liveDir.get(q)!;
    return [ino, name];
  }
  lookup(p: string): number {
    if (p === '/') return 1;
    const [d, n] = this.split(p);
    return this.dir(d).liveDir.get(n)!;
  }
  apply({ op, fill }: { op: Op; fill: number }): void {
    switch (op.t) {
      case 'create': case 'mkdir': {
        const [d, n] = this.split(op.t === 'mkdir' ? '/d' : op.p);
        const ino = this.next++;
        this.inodes.set(ino, op.t === 'mkdir' ? { liveDir: new Map(), durableDir: new Map() } : { live: Buffer.alloc(0), durable: Buffer.alloc(0) });
        this.dir(d).liveDir.set(n, ino);
        return;
      }
      case 'write': {
        const f = this.file(this.lookup(op.p));
        const end = op.off + op.len;
        const next = Buffer.alloc(Math.max(end, f.live.length));
        f.live.copy(next);
        next.fill(fill, op.off, end);
        f.live = next;
        return;
      }
      case 'truncate': {
        const f = this.file(this.lookup(op.p));
        const next = Buffer.alloc(op.size);
        f.live.copy(next, 0, 0, Math.min(op.size, f.live.length));
        f.live = next;
        return;
      }
      case 'fallocate': {
        const f = this.file(this.lookup(op.p));
        f.live = appliedPlain(f.live, { type: 'fallocate', kind: fallocateKind(op.mode, op.off, op.len, f.live.length, MAX_FILE_BYTES), offset: op.off, length: op.len });
        return;
      }
      case 'fsync': case 'fsyncdir': {
        const n = this.inodes.get(this.lookup(op.p))!;
        if ('live' in n) n.durable = Buffer.from(n.live);
        else n.durableDir = new Map(n.liveDir);
        return;
      }
      case 'rename': {
        const [sd, sn] = this.split(op.p);
        const [td, tn] = this.split(op.q);
        const ino = this.dir(sd).liveDir.get(sn)!;
        if (this.dir(td).liveDir.get(tn) === ino) return;
        this.dir(sd).liveDir.delete(sn);
        this.dir(td).liveDir.set(tn, ino);
        return;
      }
      case 'unlink': {
        const [d, n] = this.split(op.p);
        this.dir(d).liveDir.delete(n);
        return;
      }
      case 'link': {
        const ino = this.lookup(op.p);
        const [d, n] = this.split(op.q);
        this.dir(d).liveDir.set(n, ino);
        return;
      }
    }
  }
  /** After a power cut: follow durable maps from the root; files show durable bytes. */
  durableImage(): Record<string, string> {
    const out: Record<string, string> = {};
    const walk = (ino: number, prefix: string) => {
      for (const [name, child] of [...this.dir(ino).durableDir].sort(([a], [b]) => (a < b ? -1 : 1))) {
        const n = this.inodes.get(child)!;
        const p = `${prefix}/${name}`;
        if ('live' in n) out[p] = 'file:' + n.durable.toString('hex');
        else {
          out[p] = 'dir';
          walk(child, p);
        }
      }
    };
    walk(1, '');
    return out;
  }
}

describe('FsModel properties', () => {
  it('lose-unsynced gives exactly the reference durable image, and live equals it after the crash', () => {
    fc.assert(
      fc.property(fc.array(opArb, { maxLength: 40 }), (ops) => {
        const m = new FsModel(() => 0);
        const done = applyAll(m, ops);
        const ref = new Reference();
        for (const d of done) ref.apply(d);
        const expected = ref.durableImage();
        expect(flatten(m.exportTree('durable'))).toEqual(expected);
        m.crash('lose-unsynced');
        expect(flatten(m.exportTree('live'))).toEqual(expected);
      }),
      { numRuns: 300 },
    );
  });

  it('keep-all loses nothing: the image after the crash is the live state before it', () => {
    fc.assert(
      fc.property(fc.array(opArb, { maxLength: 40 }), (ops) => {
        const m = new FsModel(() => 0);
        applyAll(m, ops);
        const before = flatten(m.exportTree('live'));
        m.crash('keep-all');
        expect(flatten(m.exportTree('live'))).toEqual(before);
        expect(flatten(m.exportTree('durable'))).toEqual(before);
      }),
      { numRuns: 200 },
    );
  });

  it('keeps its invariants (links, named bytes, live = durable + pending, change order) through every change and power cut', () => {
    fc.assert(
      fc.property(fc.array(opArb, { maxLength: 40 }), fc.constantFrom('lose-unsynced', 'torn', 'keep-all') as fc.Arbitrary<CrashPolicy>, fc.integer(), (ops, policy, seed) => {
        const m = new FsModel(() => 0);
        applyAll(m, ops); // asserts them after every step
        m.crash(policy, seed);
        m.assertInvariants();
        m.clone().assertInvariants();
      }),
      { numRuns: 200 },
    );
  });

  it('assertInvariants names the invariant a broken model breaks', () => {
    const m = new FsModel(() => 0);
    const ino = m.create('/f', 0o644);
    m.write(ino, 0, Buffer.from('durable'));
    m.fsync(ino);
    m.write(ino, 0, Buffer.from('pending'));
    m.assertInvariants();
    // Reach into the model as a bug would: a pending change forgotten, a count off by one.
    const inner = m as unknown as { nodes: Map<number, { pending: unknown[]; nlink: number }>; namedBytes: number };
    const forgotten = m.clone() as unknown as typeof inner;
    forgotten.nodes.get(ino)!.pending = [];
    expect(() => (forgotten as unknown as FsModel).assertInvariants()).toThrow("FsModel invariant broken: file 2's live bytes (7) are not its durable bytes (7) plus its 0 pending changes");
    inner.namedBytes++;
    expect(() => m.assertInvariants()).toThrow('FsModel invariant broken: named bytes are 8 but the named files hold 7');
    inner.namedBytes--;
    inner.nodes.get(ino)!.nlink = 2;
    expect(() => m.assertInvariants()).toThrow('FsModel invariant broken: inode 2 has nlink 2 but 1 live entries name it');
  });

  it('torn is deterministic by seed', () => {
    fc.assert(
      fc.property(fc.array(opArb, { maxLength: 40 }), fc.integer(), (ops, seed) => {
        const images = [0, 1].map(() => {
          const m = new FsModel(() => 0);
          applyAll(m, ops);
          m.crash('torn', seed);
          return flatten(m.exportTree('live'));
        });
        expect(images[0]).toEqual(images[1]);
      }),
      { numRuns: 150 },
    );
  });

  it('torn never invents bytes: every byte is zero or one some write put at that offset', () => {
    fc.assert(
      fc.property(fc.array(opArb, { maxLength: 40 }), fc.integer(), (ops, seed) => {
        const m = new FsModel(() => 0);
        const done = applyAll(m, ops);
        const written = new Map<number, Set<number>>(); // offset -> fills written there (any file)
        for (const { op, fill } of done) {
          if (op.t !== 'write') continue;
          for (let i = op.off; i < op.off + op.len; i++) {
            if (!written.has(i)) written.set(i, new Set());
            written.get(i)!.add(fill);
          }
        }
        m.crash('torn', seed);
        for (const [p, v] of Object.entries(flatten(m.exportTree('live')))) {
          if (!v.startsWith('file:')) continue;
          const data = Buffer.from(v.slice(5), 'hex');
          data.forEach((b, i) => {
            if (b !== 0 && !written.get(i)?.has(b)) throw new Error(`${p}[${i}] = ${b} was never written there`);
          });
        }
      }),
      { numRuns: 200 },
    );
  });

  it('torn keeps fsynced data: a fsynced file in a fsynced directory keeps its bytes under later appends', () => {
    fc.assert(
      fc.property(
        fc.uint8Array({ minLength: 1, maxLength: 5000 }),
        fc.array(fc.uint8Array({ minLength: 1, maxLength: 2000 }), { maxLength: 6 }),
        fc.integer(),
        (synced, appends, seed) => {
          const m = new FsModel(() => 0);
          const f = m.create('/a', 0o644);
          m.write(f, 0, synced);
          m.fsync(f);
          m.fsync(m.resolve('/'));
          let size = synced.length;
          for (const a of appends) {
            m.write(f, size, a);
            size += a.length;
            m.create(`/x${size}`, 0o644); // unrelated unsynced directory operations
          }
          m.crash('torn', seed);
          const after = m.read(m.resolve('/a'), 0, 1 << 20);
          expect(after.subarray(0, synced.length)).toEqual(Buffer.from(synced));
        },
      ),
      { numRuns: 200 },
    );
  });
});

describe('tornFile', () => {
  it('persists a write within one sector all or nothing', () => {
    for (let seed = 0; seed < 200; seed++) {
      const out = tornFile(new GrowBuffer(Buffer.alloc(1024)), [{ type: 'write', offset: 10, data: Buffer.alloc(100, 7), seq: 1 }], new Prng(seed));
      const slice = out.read(10, 100);
      expect(slice.every((b) => b === 7) || slice.every((b) => b === 0)).toBe(true);
    }
  });

  it('can persist a multi-sector write partially, sector by sector', () => {
    const outcomes = new Set<string>();
    for (let seed = 0; seed < 200; seed++) {
      const out = tornFile(new GrowBuffer(Buffer.alloc(2048)), [{ type: 'write', offset: 0, data: Buffer.alloc(2048, 9), seq: 1 }], new Prng(seed));
      const sectors = [0, 1, 2, 3].map((s) => out.read(s * 512, 512));
      for (const s of sectors) expect(s.every((b) => b === 9) || s.every((b) => b === 0)).toBe(true);
      outcomes.add(sectors.map((s) => (s[0] === 9 ? '1' : '0')).join(''));
    }
    expect(outcomes.size).toBeGreaterThan(3); // full, none and several partial patterns
  });

  it('counts the writes it kept in part (some sectors, not all)', () => {
    let partial = 0;
    for (let seed = 0; seed < 200; seed++) {
      const stats = { partialWrites: 0 };
      const out = tornFile(new GrowBuffer(Buffer.alloc(2048)), [{ type: 'write', offset: 0, data: Buffer.alloc(2048, 9), seq: 1 }], new Prng(seed), stats);
      const kept = [0, 1, 2, 3].filter((s) => out.read(s * 512, 1)[0] === 9).length;
      expect(stats.partialWrites).toBe(kept > 0 && kept < 4 ? 1 : 0);
      partial += stats.partialWrites;
    }
    expect(partial).toBeGreaterThan(0);
  });
});

describe('FsModel.fromTree', () => {
  it('loads nested directories, files and symlinks as durable, and exports them unchanged', () => {
    const tree: FsTree = {
      type: 'dir',
      entries: new Map<string, FsTree>([
        ['a', { type: 'dir', entries: new Map<string, FsTree>([
          ['b', { type: 'dir', entries: new Map<string, FsTree>([['f', { type: 'file', data: bytes('deep') }]]) }],
          ['l', { type: 'symlink', target: 'b/f' }],
        ]) }],
        ['top', { type: 'file', data: bytes('top') }],
      ]),
    };
    const m = FsModel.fromTree(tree);
    const want = { '/a': 'dir', '/a/b': 'dir', '/a/b/f': 'file:' + bytes('deep').toString('hex'), '/a/l': 'link:b/f', '/top': 'file:' + bytes('top').toString('hex') };
    expect(flatten(m.exportTree('durable'))).toEqual(want);
    m.crash('lose-unsynced');
    expect(flatten(m.exportTree('live'))).toEqual(want);
  });
});

describe('FsModel attributes: mode, owner, times', () => {
  const root = { uid: 0, gid: 0 };
  const user = { uid: 1000, gid: 100 };
  /** A model with a clock the test moves, and /f (owned by `user`) whose data and name are durable. */
  function setup() {
    const clock = { t: 1_000 };
    const m = new FsModel(() => clock.t, root);
    const f = m.create('/f', 0o644, user);
    m.write(f, 0, bytes('data'));
    m.fsync(f);
    m.fsync(m.resolve('/'));
    clock.t = 2_000;
    return { m, f, clock };
  }

  it('loses a chmod, chown and utimens that were not fsynced (lose-unsynced)', () => {
    const { m, f } = setup();
    const before = m.stat(f);
    m.chmod(f, 0o600);
    m.chown(f, 5, 6);
    m.utimens(f, 10, 20);
    m.crash('lose-unsynced');
    expect(m.stat(m.resolve('/f'))).toEqual(before);
  });

  it('keeps them once the file is fsynced: mode, owner and times are durable', () => {
    const { m, f } = setup();
    m.chmod(f, 0o600);
    m.chown(f, 5, 6);
    m.utimens(f, 10, 20);
    const after = m.stat(f);
    m.fsync(f);
    m.crash('lose-unsynced');
    expect(m.stat(m.resolve('/f'))).toEqual(after);
    expect(after).toMatchObject({ mode: 0o600, uid: 5, gid: 6, atimeMs: 10, mtimeMs: 20, ctimeMs: 2_000 });
  });

  it('fdatasync saves the bytes and size but not mode, owner or times', () => {
    const { m, f, clock } = setup();
    const before = m.stat(f);
    m.chmod(f, 0o600);
    clock.t = 3_000;
    m.write(f, 4, bytes('more'));
    m.fdatasync(f);
    m.crash('lose-unsynced');
    const g = m.resolve('/f');
    expect(m.read(g, 0, 100).toString()).toBe('datamore');
    expect(m.stat(g)).toMatchObject({ mode: before.mode, mtimeMs: before.mtimeMs, ctimeMs: before.ctimeMs });
  });

  it('a directory fsync saves its entries and its own attributes, and those of the symlinks and nodes it names, not of its files', () => {
    const { m, f } = setup();
    const d = m.mkdir('/d', 0o755, user);
    m.fsync(m.resolve('/'));
    const fifo = m.mknod('/d/p', 'fifo', 0o644, 0, user);
    const link = m.symlink('p', '/d/l', user);
    const file = m.create('/d/file', 0o644, user);
    m.fsync(d);
    m.chmod(d, 0o700);
    m.chown(fifo, 7, 7);
    m.chown(link, 8, 8);
    m.chown(file, 9, 9);
    m.chmod(f, 0o600);
    m.fsync(d);
    m.crash('lose-unsynced');
    expect(m.stat(m.resolve('/d')).mode).toBe(0o700);
    expect(m.stat(m.resolve('/d/p')).uid).toBe(7);
    expect(m.stat(m.resolve('/d/l')).uid).toBe(8);
    expect(m.stat(m.resolve('/d/file')).uid).toBe(user.uid); // a file's attributes need its own fsync
    expect(m.stat(m.resolve('/f')).mode).toBe(0o644);
  });

  it('keep-all keeps every attribute change', () => {
    const { m, f } = setup();
    m.chmod(f, 0o4711);
    m.chown(f, UNCHANGED_ID, 42);
    m.utimens(f, 'now', 'omit');
    const live = m.stat(f);
    m.crash('keep-all');
    expect(m.stat(m.resolve('/f'))).toEqual(live);
  });

  it('torn keeps or drops each inode\'s unsynced attributes, the same way for the same seed, and never mixes them', () => {
    const outcomes = new Set<string>();
    for (let seed = 0; seed < 40; seed++) {
      const runs = [0, 1].map(() => {
        const { m, f } = setup();
        m.chmod(f, 0o600);
        m.chown(f, 5, 6);
        m.crash('torn', seed);
        const s = m.stat(m.resolve('/f'));
        return `${s.mode.toString(8)}/${s.uid}/${s.gid}`;
      });
      expect(runs[0]).toBe(runs[1]);
      expect(['644/1000/100', '600/5/6']).toContain(runs[0]);
      outcomes.add(runs[0]);
    }
    expect(outcomes.size).toBe(2);
  });

  it('owner of new nodes is the caller; in a setgid directory the group is the directory\'s and subdirectories inherit the bit', () => {
    const m = new FsModel(() => 0, root);
    expect(m.stat(ROOT_INO)).toMatchObject({ uid: 0, gid: 0, mode: 0o755, nlink: 2 });
    const sg = m.mkdir('/sg', 0o2775, { uid: 0, gid: 50 });
    const sub = m.mkdir('/sg/sub', 0o755, user);
    const file = m.create('/sg/f', 0o644, user);
    const plain = m.create('/f', 0o644, user);
    expect(m.stat(sg)).toMatchObject({ mode: 0o2775, gid: 50 });
    expect(m.stat(sub)).toMatchObject({ mode: 0o2755, uid: 1000, gid: 50 });
    expect(m.stat(file)).toMatchObject({ mode: 0o644, uid: 1000, gid: 50 });
    expect(m.stat(plain)).toMatchObject({ uid: 1000, gid: 100 });
  });

  it('chown: -1 keeps an id; it clears setuid, and setgid when group-executable, on non-directories only', () => {
    const m = new FsModel(() => 0, root);
    const f = m.create('/f', 0o6755, user);
    const g = m.create('/g', 0o2644, user); // setgid without group exec: mandatory locking, kept
    const d = m.mkdir('/d', 0o6755, user);
    m.chown(f, UNCHANGED_ID, 7);
    m.chown(g, 3, UNCHANGED_ID);
    m.chown(d, 3, 3);
    expect(m.stat(f)).toMatchObject({ uid: 1000, gid: 7, mode: 0o755 });
    expect(m.stat(g)).toMatchObject({ uid: 3, gid: 100, mode: 0o2644 });
    expect(m.stat(d)).toMatchObject({ uid: 3, gid: 3, mode: 0o6755 });
    expect(errnoOf(() => m.chown(f, -2, 0))).toBe(EINVAL);
  });

  it('updates times as POSIX says', () => {
    const clock = { t: 1 };
    const m = new FsModel(() => clock.t, root);
    const at = (t: number) => (clock.t = t);
    const times = (ino: number) => { const s = m.stat(ino); return [s.atimeMs, s.mtimeMs, s.ctimeMs]; };
    const f = m.create('/f', 0o644);
    expect(times(f)).toEqual([1, 1, 1]);
    expect(times(ROOT_INO)).toEqual([1, 1, 1]);
    at(2); m.write(f, 0, bytes('x'));
    expect(times(f)).toEqual([1, 2, 2]);
    at(3); m.truncate(f, 0);
    expect(times(f)).toEqual([1, 3, 3]);
    at(4); m.chmod(f, 0o600);
    expect(times(f)).toEqual([1, 3, 4]);
    at(5); m.link('/f', '/g');
    expect(times(f)).toEqual([1, 3, 5]);
    expect(times(ROOT_INO)).toEqual([1, 5, 5]);
    at(6); m.rename('/g', '/h');
    expect(times(f)).toEqual([1, 3, 6]);
    at(7); m.unlink('/h');
    expect(times(f)).toEqual([1, 3, 7]);
    expect(times(ROOT_INO)).toEqual([1, 7, 7]);
    at(8); m.utimens(f, 100, 'omit');
    expect(times(f)).toEqual([100, 3, 8]);
    at(9); m.utimens(f, 'omit', 'now');
    expect(times(f)).toEqual([100, 9, 9]);
    at(10); m.utimens(f, 'omit', 'omit'); // changes nothing, not even ctime
    expect(times(f)).toEqual([100, 9, 9]);
    at(11); m.mknod('/p', 'fifo', 0o644, 0);
    expect(times(ROOT_INO)).toEqual([1, 11, 11]);
    at(12); m.read(f, 0, 10); // noatime: reads never touch atime
    expect(times(f)[0]).toBe(100);
  });

  it('counts links: names of a file, 2 + subdirectories of a directory, also after a crash', () => {
    const m = new FsModel(() => 0, root);
    const f = m.create('/f', 0o644);
    m.link('/f', '/g');
    const d = m.mkdir('/d', 0o755);
    m.mkdir('/d/e', 0o755);
    m.mkdir('/d/e2', 0o755);
    expect(m.stat(f).nlink).toBe(2);
    expect(m.stat(m.resolve('/g')).ino).toBe(f);
    expect(m.stat(d).nlink).toBe(4);
    expect(m.stat(ROOT_INO).nlink).toBe(3);
    m.rename('/d/e2', '/e2');
    expect([m.stat(d).nlink, m.stat(ROOT_INO).nlink]).toEqual([3, 4]);
    m.rmdir('/e2');
    m.unlink('/g');
    expect([m.stat(f).nlink, m.stat(ROOT_INO).nlink]).toEqual([1, 3]);
    m.fsync(ROOT_INO);
    m.fsync(d);
    m.crash('lose-unsynced');
    expect(m.stat(m.resolve('/d')).nlink).toBe(3);
    expect(m.stat(ROOT_INO).nlink).toBe(3);
    expect(m.stat(m.resolve('/f')).nlink).toBe(1);
  });

  it('fifos, sockets and devices are durable like other entries: their name needs a directory fsync', () => {
    const m = new FsModel(() => 0, root);
    m.mknod('/p', 'fifo', 0o644, 0, user);
    m.mknod('/s', 'socket', 0o755, 0, user);
    m.mknod('/c', 'chardev', 0o600, 0x103, user);
    m.mknod('/b', 'blockdev', 0o600, 0x801, user);
    m.fsync(ROOT_INO);
    m.mknod('/lost', 'fifo', 0o644, 0, user);
    m.crash('lose-unsynced');
    expect(flatten(m.exportTree('live'))).toEqual({ '/b': 'blockdev:2049', '/c': 'chardev:259', '/p': 'fifo:0', '/s': 'socket:0' });
    expect(m.stat(m.resolve('/c'))).toMatchObject({ kind: 'chardev', rdev: 0x103, uid: 1000, mode: 0o600 });
    expect(errnoOf(() => m.file(m.resolve('/p')))).toBe(EINVAL);
    m.link('/p', '/p2');
    expect(m.stat(m.resolve('/p2')).nlink).toBe(2);
  });

  it('fromTree and exportTree keep modes, owners and special nodes', () => {
    const tree: FsTree = {
      type: 'dir', mode: 0o1777, uid: 0, gid: 0,
      entries: new Map<string, FsTree>([
        ['f', { type: 'file', data: bytes('x'), mode: 0o4750, uid: 3, gid: 4 }],
        ['p', { type: 'fifo', rdev: 0, mode: 0o600, uid: 5, gid: 6 }],
        ['d', { type: 'dir', entries: new Map(), mode: 0o2700, uid: 7, gid: 8 }],
      ]),
    };
    const m = FsModel.fromTree(tree, () => 0, root);
    expect(m.exportTree('durable')).toEqual(tree);
    m.crash('lose-unsynced');
    expect(m.exportTree('live')).toEqual(tree);
  });
});
