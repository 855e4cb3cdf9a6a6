// torn's rule, checked against a brute-force reference (README "What survives a power cut"): after
// the cut each 512-byte sector holds its durable bytes plus a prefix, in time order, of the unsynced
// changes that touched it; sectors are independent; the size is the durable size or the size after a
// prefix of the file's changes. A sector after a prefix of the changes touching it is exactly the
// sector as it was at one moment (changes that do not touch it leave it as it is), so the reference
// computes the file at every moment (durable, after change 1, ..., after change N; writes, truncates
// and every fallocate kind, from the changes alone, on plain buffers) and allows exactly the images
// whose size is the size at some moment and whose every sector is that sector at some moment (any
// combination). Every image the model makes, by a seeded random cut or as an exhaustive outcome, must be one of them.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { FsError } from './errno.js';
import { FALLOC_FL_COLLAPSE_RANGE, FALLOC_FL_INSERT_RANGE, FALLOC_FL_KEEP_SIZE, FALLOC_FL_PUNCH_HOLE, FALLOC_FL_ZERO_RANGE } from './fallocate.js';
import { FsModel, ROOT_INO } from './fs-model.js';
import { BLOCK_BYTES, GrowBuffer } from './grow-buffer.js';
import type { FsTree, PendingFileOp } from './nodes.js';
import { appliedPlain } from './plain-file.js';
import { Prng } from './prng.js';
import { Recording, RecordingFsModel, replay } from './recording.js';
import { hashTree, StateSpace } from './state-space.js';
import { SECTOR_BYTES, chosenFile, tornFile, type FileChoice, type TornStats } from './torn.js';
import type { DataOutcome } from '../crash-states.js';

const owner = { uid: 0, gid: 0 };
const FILES = ['a', 'b'] as const;
/** Files up to three blocks (a collapse or an insert moves whole blocks); most writes land in the first sectors, so they overlap. */
const MAX_BYTES = 3 * BLOCK_BYTES;
const CROWDED_BYTES = 3 * SECTOR_BYTES;

// ---- the reference ----

/** The file at every moment: durable, then after each change. Plain buffers, written here from the changes alone. */
function moments(durable: Buffer, pending: readonly PendingFileOp[]): Buffer[] {
  const out = [durable];
  for (const op of pending) out.push(appliedPlain(out[out.length - 1], op));
  return out;
}

/** Whether the rule allows `image` of a file whose moments are `at`: its size one of theirs, each of its sectors one moment's (zeros past that moment's size). */
function allowedImage(at: readonly Buffer[], image: Buffer): boolean {
  if (!at.some((b) => b.length === image.length)) return false;
  for (let from = 0; from < image.length; from += SECTOR_BYTES) {
    const mine = image.subarray(from, Math.min(image.length, from + SECTOR_BYTES));
    const then = Buffer.alloc(mine.length);
    const some = at.some((b) => {
      then.fill(0);
      if (b.length > from) b.copy(then, 0, from, Math.min(b.length, from + mine.length));
      return then.equals(mine);
    });
    if (!some) return false;
  }
  return true;
}

// ---- histories ----

type Step =
  | { t: 'write'; f: number; offset: number; len: number; fill: number }
  | { t: 'truncate'; f: number; size: number }
  | { t: 'fallocate'; f: number; mode: number; offset: number; len: number }
  | { t: 'fsync' | 'fdatasync' | 'fsync-eio'; f: number };

const file = fc.integer({ min: 0, max: FILES.length - 1 });
const stepArb: fc.Arbitrary<Step> = fc.oneof(
  { weight: 6, arbitrary: fc.record({ t: fc.constant('write' as const), f: file, offset: fc.oneof(fc.nat(CROWDED_BYTES - 1), fc.nat(MAX_BYTES - 1)), len: fc.integer({ min: 1, max: 700 }), fill: fc.integer({ min: 1, max: 250 }) }).map((s) => ({ ...s, len: Math.min(s.len, MAX_BYTES - s.offset) })) },
  { weight: 2, arbitrary: fc.record({ t: fc.constant('truncate' as const), f: file, size: fc.oneof(fc.nat(CROWDED_BYTES), fc.nat(MAX_BYTES)) }) },
  { weight: 2, arbitrary: fc.record({ t: fc.constant('fallocate' as const), f: file, mode: fc.constantFrom(0, FALLOC_FL_KEEP_SIZE, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, FALLOC_FL_ZERO_RANGE, FALLOC_FL_ZERO_RANGE | FALLOC_FL_KEEP_SIZE), offset: fc.oneof(fc.nat(CROWDED_BYTES), fc.nat(MAX_BYTES)), len: fc.integer({ min: 1, max: 2 * BLOCK_BYTES }) }) },
  // A collapse or an insert of whole blocks (ext4 refuses others); one that does not fit the file fails and changes nothing.
  { weight: 2, arbitrary: fc.record({ t: fc.constant('fallocate' as const), f: file, mode: fc.constantFrom(FALLOC_FL_COLLAPSE_RANGE, FALLOC_FL_INSERT_RANGE), offset: fc.constantFrom(0, BLOCK_BYTES, 2 * BLOCK_BYTES), len: fc.constantFrom(BLOCK_BYTES, 2 * BLOCK_BYTES) }) },
  { weight: 1, arbitrary: fc.record({ t: fc.constantFrom('fsync' as const, 'fdatasync' as const, 'fsync-eio' as const), f: file }) },
);
/** Durable contents to start from (written and fsynced, names fsynced), then the steps. */
const historyArb = fc.record({
  initial: fc.array(fc.nat(MAX_BYTES), { minLength: FILES.length, maxLength: FILES.length }),
  steps: fc.array(stepArb, { minLength: 1, maxLength: 7 }),
});
type History = { initial: number[]; steps: Step[] };

/** Distinct bytes per write (never zero), so a byte tells which write put it where. */
const dataOf = (offset: number, len: number, fill: number): Buffer => Buffer.from(Array.from({ length: len }, (_, i) => ((fill + offset + i) % 251) + 1));

/** The run as requests: setup (creates, initial contents, fsyncs), then one request per step. */
function requests(h: History): ((m: FsModel) => void)[] {
  const ino = (m: FsModel, f: number) => m.resolve(`/${FILES[f]}`);
  const out: ((m: FsModel) => void)[] = [];
  FILES.forEach((name) => out.push((m) => void m.create(`/${name}`, 0o644, owner)));
  h.initial.forEach((len, f) => {
    out.push((m) => void m.write(ino(m, f), 0, dataOf(0, len, 200 + f)));
    out.push((m) => m.fsync(ino(m, f)));
  });
  out.push((m) => m.fsync(ROOT_INO));
  for (const s of h.steps) {
    out.push((m) => {
      const i = ino(m, s.f);
      if (s.t === 'write') m.write(i, s.offset, dataOf(s.offset, s.len, s.fill));
      else if (s.t === 'truncate') m.truncate(i, s.size);
      else if (s.t === 'fallocate') {
        try {
          m.fallocate(i, s.mode, s.offset, s.len);
        } catch (e) {
          if (!(e instanceof FsError)) throw e; // refused (a collapse past the end, ...): nothing changed
        }
      }
      else if (s.t === 'fsync') m.fsync(i);
      else if (s.t === 'fdatasync') m.fdatasync(i);
      else m.dropUnsynced(i);
    });
  }
  return out;
}

function run(h: History): FsModel {
  let t = 1_000;
  const m = new FsModel(() => ++t, owner);
  for (const r of requests(h)) r(m);
  return m;
}

/** What the rule allows of one file name: whether every image holds it, and the bytes it may hold. */
interface AllowedFile {
  mustExist: boolean;
  /** The file at every moment since its last fsync. */
  moments: Buffer[];
}

/**
 * Per file name the run created, what the rule allows of it, from a model before the cut: its durable
 * bytes and unsynced changes, and the root's entries. The histories never unlink or rename, so a
 * name the durable root holds is in every image; a name only the live root holds (created, the root
 * not fsynced since) is in an image or not, with the prefix of the directory operations kept.
 */
function allowedPerFile(m: FsModel): Map<string, AllowedFile> {
  const out = new Map<string, AllowedFile>();
  const root = m.node(ROOT_INO);
  if (root.kind !== 'dir') throw new Error('the root must be a directory');
  for (const name of FILES) {
    const ino = root.live.get(name) ?? root.durable.get(name);
    if (ino === undefined) continue; // not created yet
    const f = m.file(ino);
    const at = moments(f.durable.toBuffer(), f.pending);
    // The reference applies the changes itself: after all of them it must see what programs see.
    if (!f.dropped) expect(at[at.length - 1].equals(f.live.toBuffer())).toBe(true);
    out.set(name, { mustExist: root.durable.has(name), moments: at });
  }
  return out;
}

/** The files of an image, by name (absent: not in it). */
function filesOf(tree: FsTree): Map<string, Buffer> {
  const out = new Map<string, Buffer>();
  if (tree.type !== 'dir') throw new Error('the root must be a directory');
  for (const [name, t] of tree.entries) if (t.type === 'file') out.set(name, t.data);
  return out;
}

function expectAllowed(allowed: Map<string, AllowedFile>, image: FsTree, what: string): void {
  const files = filesOf(image);
  for (const [name, a] of allowed) {
    const data = files.get(name);
    if (data === undefined) {
      if (a.mustExist) throw new Error(`${what}: /${name} is missing from the image, though its name was durable`);
      continue;
    }
    if (!allowedImage(a.moments, data)) throw new Error(`${what}: /${name} = ${data.toString('hex')} is no image the sector-prefix rule allows`);
  }
  for (const name of files.keys()) if (!allowed.has(name)) throw new Error(`${what}: /${name} is in the image, though the run never created it`);
}

function recorded(h: History): { recording: Recording; ops: number } {
  const recording = new Recording(owner, 1 << 30);
  let op = 0;
  let t = 1_000;
  const m = new RecordingFsModel(recording, () => op, () => ++t);
  for (const r of requests(h)) {
    op++;
    r(m);
  }
  return { recording, ops: op };
}

const BIG_CAPS = { maxStates: 100_000, maxStatesPerInterval: 100_000, sectorPatterns: 4 };

// ---- the properties ----

describe('torn: each sector a prefix of its changes, the size a prefix of its file\'s (brute-force reference)', () => {
  it('every seeded random cut is an image the rule allows', () => {
    fc.assert(
      fc.property(historyArb, fc.integer(), (h, seed0) => {
        const m = run(h);
        const allowed = allowedPerFile(m);
        for (let seed = seed0; seed < seed0 + 20; seed++) {
          const cut = m.clone();
          cut.crash('torn', seed);
          expectAllowed(allowed, cut.exportTree('durable'), `crash('torn', ${seed})`);
        }
      }),
      { numRuns: 300 },
    );
  });

  it('every exhaustive outcome (all, none, only and except each change, sector patterns) is an image the rule allows', () => {
    fc.assert(
      fc.property(historyArb, (h) => {
        const m = run(h);
        const allowed = allowedPerFile(m);
        const { fileChanges } = m.unsyncedCounts();
        const outcomes: DataOutcome[] = [{ kind: 'all' }, { kind: 'none' }];
        for (let k = 1; k <= fileChanges; k++) outcomes.push({ kind: 'only', write: k }, { kind: 'except', write: k });
        for (let seed = 1; seed <= 8; seed++) outcomes.push({ kind: 'sectors', seed });
        for (const data of outcomes) {
          const cut = m.clone();
          cut.crashInto({ afterOp: 0, policy: 'torn', dirPrefix: 0, data });
          expectAllowed(allowed, cut.exportTree('durable'), `torn state ${JSON.stringify(data)}`);
        }
      }),
      { numRuns: 300 },
    );
  });

  it('every state StateSpace.enumerate lists, in every interval, is an image the rule allows, and builds to its hash', () => {
    fc.assert(
      fc.property(historyArb, (h) => {
        const { recording, ops } = recorded(h);
        const space = new StateSpace(recording, ops);
        const { states, capped } = space.enumerate(['torn'], BIG_CAPS);
        expect(capped.states).toBe(0);
        for (const afterOp of space.intervalEnds()) {
          const before = replay(recording, afterOp).model;
          const allowed = allowedPerFile(before);
          for (const s of states.filter((x) => x.id.afterOp === afterOp)) {
            const image = space.build(s.id).exportTree('durable');
            expect(hashTree(image)).toBe(s.hash);
            expectAllowed(allowed, image, JSON.stringify(s.id));
          }
        }
      }),
      { numRuns: 100 },
    );
  });

  it('the enumeration holds the extremes: all kept, none kept, and every sector of every write as just after it and (size permitting) just before it', () => {
    fc.assert(
      fc.property(historyArb, (h) => {
        const { recording, ops } = recorded(h);
        const space = new StateSpace(recording, ops);
        const { states } = space.enumerate(['torn'], BIG_CAPS);
        const setupOps = requests({ initial: h.initial, steps: [] }).length;
        for (const afterOp of space.intervalEnds().filter((a) => a >= setupOps)) {
          const images = states.filter((s) => s.id.afterOp === afterOp).map((s) => filesOf(space.build(s.id).exportTree('durable')));
          const before = replay(recording, afterOp).model;
          for (const name of FILES) {
            const f = before.file(before.resolve(`/${name}`));
            const at = moments(f.durable.toBuffer(), f.pending);
            const shown = images.map((i, k) => {
              const d = i.get(name);
              if (!d) throw new Error(`/${name} is missing from state ${k} after request ${afterOp}, though its name was durable`);
              return d;
            });
            // All kept and none kept: every sector at its longest and at its shortest prefix.
            expect(shown.some((d) => d.equals(at[at.length - 1]))).toBe(true);
            expect(shown.some((d) => d.equals(at[0]))).toBe(true);
            // Sector s of image d shows moment m: its bytes below d's size are those of the file then.
            const showsMoment = (d: Buffer, s: number, m: number): boolean => {
              const from = s * SECTOR_BYTES;
              const to = Math.min(d.length, from + SECTOR_BYTES);
              if (to <= from) return false;
              const then = Buffer.alloc(to - from);
              if (at[m].length > from) at[m].copy(then, 0, from, Math.min(at[m].length, to));
              return d.subarray(from, to).equals(then);
            };
            f.pending.forEach((op, k) => {
              if (op.type !== 'write') return;
              const first = Math.floor(op.offset / SECTOR_BYTES);
              const last = Math.floor((op.offset + op.data.length - 1) / SECTOR_BYTES);
              const resizes = at[k].length !== at[k + 1].length;
              for (let s = first; s <= last; s++) {
                if (!shown.some((d) => showsMoment(d, s, k + 1))) throw new Error(`/${name}: no state shows sector ${s} as just after its unsynced change ${k + 1}`);
                // Dropping a write that did not change the size leaves the final size: the sector shows if it lies below it.
                if (!resizes && s * SECTOR_BYTES < at[at.length - 1].length && !shown.some((d) => showsMoment(d, s, k))) {
                  throw new Error(`/${name}: no state shows sector ${s} as just before its unsynced change ${k + 1}`);
                }
              }
            });
          }
        }
      }),
      { numRuns: 60 },
    );
  });
});

describe('torn: examples of the rule', () => {
  const w = (offset: number, data: Buffer, seq: number): PendingFileOp => ({ type: 'write', offset, data, seq });

  it('never keeps a later write of a sector without the earlier ones (an 86-byte write at 0, then one at 86)', () => {
    const pending = [w(0, Buffer.alloc(86, 1), 1), w(86, Buffer.alloc(100, 2), 2)];
    const seen = new Set<string>();
    for (let seed = 0; seed < 300; seed++) {
      const out = tornFile(new GrowBuffer(), pending, new Prng(seed)).toBuffer();
      if (out[86] === 2) expect(out[0]).toBe(1);
      seen.add(`${out.length}:${out[0] ?? '-'}:${out[86] ?? '-'}`);
    }
    // Empty, a size alone (zeros), the first write alone, both; never the second alone.
    expect([...seen].sort()).toEqual(['0:-:-', '86:0:-', '86:1:-', '186:0:0', '186:1:0', '186:1:2'].sort());
    const only2 = chosenFile(new GrowBuffer(), pending, { kind: 'only', seq: 2 }).toBuffer();
    expect([only2[0], only2[86], only2.length]).toEqual([1, 2, 186]);
    const except1 = chosenFile(new GrowBuffer(), pending, { kind: 'except', seq: 1 }).toBuffer();
    expect([except1[0], except1[86], except1.length]).toEqual([0, 0, 186]);
  });

  it('keeps a truncate in order with the writes of its sectors: never the new bytes over the old ones it cut', () => {
    // 1024 durable bytes of 7, truncate to 0, 10 bytes of 9 at 0, then a byte at 600 that lets the
    // size pass the 9s: below the size, sector 0 is 7s, zeros, or 9s then zeros, never 9s then 7s.
    const durable = new GrowBuffer(Buffer.alloc(1024, 7));
    const pending: PendingFileOp[] = [{ type: 'truncate', sizeBytes: 0, seq: 1 }, w(0, Buffer.alloc(10, 9), 2), w(600, Buffer.alloc(1, 5), 3)];
    const choices: FileChoice[] = [{ kind: 'all' }, { kind: 'none' }, ...[1, 2, 3].flatMap((seq) => [{ kind: 'only', seq } as const, { kind: 'except', seq } as const])];
    const cuts = {
      random: Array.from({ length: 300 }, (_, seed) => tornFile(durable, pending, new Prng(seed)).toBuffer()),
      exhaustive: choices.map((c) => chosenFile(durable, pending, c).toBuffer()),
    };
    for (const [mode, outs] of Object.entries(cuts)) {
      const nines = outs.filter((out) => out.length > 10 && out[0] === 9);
      expect(nines.length, `${mode} cuts that kept the 9s in a file longer than them`).toBeGreaterThan(0);
      for (const out of nines) expect(out.subarray(10, 512).every((b) => b === 0), `${mode}: sector 0 after the 9s`).toBe(true);
    }
  });

  it('except k drops k and, in the sectors it touches, every later write: a later write across them is kept in part', () => {
    // Write 1 in sector 0; write 2 over sectors 0-2: except 1 keeps write 2 in sectors 1 and 2 only.
    const pending = [w(0, Buffer.alloc(100, 1), 1), w(50, Buffer.alloc(1400, 2), 2)];
    const stats: TornStats = { partialWrites: 0 };
    const out = chosenFile(new GrowBuffer(), pending, { kind: 'except', seq: 1 }, stats).toBuffer();
    expect(out.length).toBe(1450);
    expect(out.subarray(0, 512).every((b) => b === 0)).toBe(true);
    expect(out.subarray(512).every((b) => b === 2)).toBe(true);
    expect(stats.partialWrites).toBe(1);
  });

  it('the size follows the changes in order, on its own: an append may leave its size with zeros, never a later size without an earlier one', () => {
    // Two appends in separate sectors: sizes 0, 600 and 1200 only; 1200 may show the first append's bytes or zeros.
    const pending = [w(0, Buffer.alloc(600, 1), 1), w(600, Buffer.alloc(600, 2), 2)];
    const sizes = new Set<number>();
    for (let seed = 0; seed < 300; seed++) sizes.add(tornFile(new GrowBuffer(), pending, new Prng(seed)).size);
    expect([...sizes].sort((a, b) => a - b)).toEqual([0, 600, 1200]);
  });
});
