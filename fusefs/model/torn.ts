// The `torn` policy: a power cut during write-back (docs/design.md, "Crash semantics"). Pure
// functions of the pre-crash state and a seeded generator, or of explicit choices (exhaustive mode).
//
// The rule. A file's disk is its size (metadata) and its 512-byte sectors, and write-back copies a
// sector to the disk as it is at one moment. So after the cut:
//   - each sector holds its durable bytes plus a prefix, in time order, of the unsynced changes that
//     touched it: it is as it was at some moment since the file's last fsync. A write touches the
//     sectors it covers; a truncate that shrinks the file touches the sectors from its new size to
//     its old one, which it zeroes. A fallocate (fallocate.ts) touches the sectors whose bytes it
//     changes: a punch or a zeroing its range below the size, a collapse or an insert every sector
//     from its offset to the file's end (the bytes there move); an allocation none (it changes the
//     size and the allocated blocks only, as a truncate that grows does). Sectors are independent
//     of each other (and of other files).
//   - the size is the durable size or the size after a prefix of the file's changes (in order), on
//     its own: it may persist without the data (those bytes read as zeros) or the data without it.
//   - bytes no kept change wrote read as their durable value, or as zeros past the durable size.
// Both the random cut (`tornFile`) and the exhaustive outcomes (`chosenFile`) only pick the prefix
// of each sector and of the size; `materialize` builds the file from those picks.
import { applyFallocate, fallocateBytes, sizeAfterFallocate } from './fallocate.js';
import { CHUNK_BYTES, GrowBuffer } from './grow-buffer.js';
import type { JournalOp, PendingFileOp } from './nodes.js';
import type { Prng } from './prng.js';
import { RunSet, type Run } from './run-set.js';

export const SECTOR_BYTES = 512;

export interface TornStats {
  /** Writes kept only in part: some of their sectors persisted their bytes and some did not. */
  partialWrites: number;
}

/** One unsynced change of a file with what the rule needs: the sectors it touches and the size around it. */
export interface Change {
  op: PendingFileOp;
  /** The sectors whose bytes it may change (empty for an extending truncate or an empty write). */
  sectors: Run;
  sizeBefore: number;
  sizeAfter: number;
}

export function changesOf(durable: GrowBuffer, pending: readonly PendingFileOp[]): Change[] {
  let size = durable.size;
  return pending.map((op) => {
    const sizeBefore = size;
    let sectors: Run = [1, 0];
    const touch = (start: number, end: number) => {
      if (end > start) sectors = [Math.floor(start / SECTOR_BYTES), Math.floor((end - 1) / SECTOR_BYTES)];
    };
    if (op.type === 'write') {
      touch(op.offset, op.offset + op.data.length);
      size = Math.max(size, op.offset + op.data.length); // as GrowBuffer.write grows
    } else if (op.type === 'truncate') {
      // Bytes [sizeBytes, sizeBefore) read as zeros from now on; bytes past sizeBefore already did.
      touch(op.sizeBytes, sizeBefore);
      size = op.sizeBytes;
    } else {
      touch(...fallocateBytes(op.kind, op.offset, op.length, sizeBefore));
      size = sizeAfterFallocate(op.kind, op.offset, op.length, sizeBefore);
    }
    return { op, sectors, sizeBefore, sizeAfter: size };
  });
}

const ZEROS = Buffer.alloc(CHUNK_BYTES); // never changed: GrowBuffer may keep it by reference

/**
 * The file the picks describe: `kept[i]` are the sectors in which change i persisted (per sector, a
 * prefix of the changes touching it), `sizeAfter` how many changes the size went through (0 = durable).
 * A write or truncate writes its own bytes into its kept sectors. A fallocate kept in all its
 * sectors on a file that so far kept everything applies as it did live; otherwise each of its kept
 * sectors takes its bytes from the file as it was just after it (`moment`: durable plus every change
 * up to it), since a shifted sector's bytes come from other sectors. An allocation's blocks persist
 * with its size.
 */
function materialize(durable: GrowBuffer, changes: readonly Change[], kept: readonly Run[][], sizeAfter: number, stats?: TornStats): GrowBuffer {
  const out = durable.clone(); // bytes past out.size read as zeros
  // The file just after the change being applied (durable plus every change up to it): only where a fallocate may need it.
  const moment = changes.some((c) => c.op.type === 'fallocate') ? durable.clone() : null;
  let exact = true; // out holds every change so far in every sector
  changes.forEach((c, i) => {
    const runs = kept[i];
    const count = runs.reduce((n, [a, b]) => n + b - a + 1, 0);
    const whole = count === (isEmpty(c.sectors) ? 0 : c.sectors[1] - c.sectors[0] + 1);
    if (stats && c.op.type === 'write' && count > 0 && !whole) stats.partialWrites++;
    const op = c.op;
    if (moment) applyChange(moment, op);
    if (op.type === 'fallocate') {
      const allocation = op.kind === 'allocate' || op.kind === 'allocate-keep-size';
      if (allocation) {
        if (i < sizeAfter) applyFallocate(out, op.kind, op.offset, op.length);
      } else if (exact && whole) applyFallocate(out, op.kind, op.offset, op.length);
      else {
        const [start, end] = fallocateBytes(op.kind, op.offset, op.length, c.sizeBefore);
        for (const [a, b] of runs) takeMoment(out, moment!, Math.max(start, a * SECTOR_BYTES), Math.min(end, (b + 1) * SECTOR_BYTES));
      }
      exact &&= whole;
      return;
    }
    exact &&= whole;
    for (const [a, b] of runs) {
      if (op.type === 'write') {
        const start = op.offset;
        const from = Math.max(start, a * SECTOR_BYTES);
        const to = Math.min(start + op.data.length, (b + 1) * SECTOR_BYTES);
        out.write(from, op.data.subarray(from - start, to - start));
        continue;
      }
      const from = Math.max(op.sizeBytes, a * SECTOR_BYTES);
      const to = Math.min(c.sizeBefore, (b + 1) * SECTOR_BYTES, out.size);
      if (from >= to) continue;
      if (to === out.size) out.resize(from); // nothing of the file lies past: cut it there
      else for (let p = from; p < to; p += CHUNK_BYTES) out.write(p, ZEROS.subarray(0, Math.min(CHUNK_BYTES, to - p)));
    }
  });
  out.resize(sizeAfter === 0 ? durable.size : changes[sizeAfter - 1].sizeAfter);
  return out;
}

/** Applies one change to `file` as it happened live. */
export function applyChange(file: GrowBuffer, op: PendingFileOp): void {
  if (op.type === 'write') file.write(op.offset, op.data);
  else if (op.type === 'truncate') file.resize(op.sizeBytes);
  else applyFallocate(file, op.kind, op.offset, op.length);
}

/** Bytes [from, to) of `out` := those of `moment` (zeros past its size). */
function takeMoment(out: GrowBuffer, moment: GrowBuffer, from: number, to: number): void {
  if (from >= to) return;
  out.copyRangeFrom(moment, from, to);
  // copyRangeFrom stops at moment's size: past it the moment reads zeros, and so must out (below its own size).
  const zeroTo = Math.min(to, out.size);
  for (let p = Math.max(from, moment.size); p < zeroTo; p += CHUNK_BYTES) out.write(p, ZEROS.subarray(0, Math.min(CHUNK_BYTES, zeroTo - p)));
}

function isEmpty(r: Run): boolean {
  return r[0] > r[1];
}

/**
 * A random torn cut of one file. Changes are drawn in order: a write persists fully, partly (a random
 * subset of its sectors) or not at all, a truncate fully or not at all; a write inside one sector is
 * all or nothing. A sector that missed a change misses every later one (it stops at that moment), so
 * a "fully" drawn write can still persist in part. The size follows the changes in order while each
 * one's size persists: a truncate's with its data, an extending write's with all of its sectors or,
 * by a coin, without them (zeros); the first whose size does not persist fixes the size.
 */
export function tornFile(durable: GrowBuffer, pending: readonly PendingFileOp[], prng: Prng, stats?: TornStats): GrowBuffer {
  const changes = changesOf(durable, pending);
  const stopped = new RunSet(); // sectors that missed a change
  const kept: Run[][] = [];
  let sizeAfter = 0;
  let sizeMoving = true;
  changes.forEach((c, i) => {
    const [first, last] = c.sectors;
    const open = isEmpty(c.sectors) ? [] : stopped.outside(first, last);
    let runs: Run[] = [];
    let sizePersists: boolean;
    // A truncate, an allocation, a collapse or an insert persists in all its open sectors or in none;
    // a punch or a zeroing, like a write, sector by sector.
    const allOrNothing = c.op.type === 'truncate' || (c.op.type === 'fallocate' && !['punch', 'zero', 'zero-keep-size'].includes(c.op.kind));
    if (allOrNothing) {
      sizePersists = prng.coin();
      if (sizePersists) runs = open;
      else stopped.add(first, last);
    } else {
      const atomic = first === last;
      const outcome = prng.int(3); // 0 full, 1 partial, 2 none
      if (isEmpty(c.sectors)) {
        // An empty write changes no byte.
      } else if (outcome === 2 || (atomic && outcome === 1 && prng.coin())) stopped.add(first, last);
      else if (outcome === 0 || atomic) runs = open;
      else {
        for (const [a, b] of open) {
          for (let s = a; s <= b; s++) {
            if (prng.coin()) {
              const top = runs[runs.length - 1];
              if (top && top[1] === s - 1) top[1] = s;
              else runs.push([s, s]);
            } else stopped.add(s, s);
          }
        }
      }
      const whole = runs.reduce((n, [a, b]) => n + b - a + 1, 0) === Math.max(0, last - first + 1);
      sizePersists = whole || (sizeMoving && c.sizeAfter !== c.sizeBefore && prng.coin());
    }
    kept.push(runs);
    if (sizeMoving && c.sizeAfter !== c.sizeBefore) {
      if (sizePersists) sizeAfter = i + 1;
      else sizeMoving = false;
    }
  });
  return materialize(durable, changes, kept, sizeMoving ? changes.length : sizeAfter, stats);
}

/** Unsynced directory operations persist as a random prefix of journal order: how many of them. */
export function tornJournalPrefix(journal: readonly JournalOp[], prng: Prng): number {
  return prng.int(journal.length + 1);
}

/**
 * The exhaustive outcomes of one file, named by the change they are about (its `seq`; a change of
 * another file leaves this one durable for `only`, whole for `except`):
 *   - all: every change persists, and the size is the live size;
 *   - none: the durable file;
 *   - only k: in each sector change k touches, the changes up to k (the sector as just after k);
 *     every other sector durable; the size as just after k;
 *   - except k: in each sector change k touches, the changes before k (the sector as just before
 *     k); every other sector with all its changes; the live size, or the size just before k if k
 *     was the file's last change of size.
 */
export type FileChoice = { kind: 'all' } | { kind: 'none' } | { kind: 'only' | 'except'; seq: number };

export function chosenFile(durable: GrowBuffer, pending: readonly PendingFileOp[], choice: FileChoice, stats?: TornStats): GrowBuffer {
  const changes = changesOf(durable, pending);
  const all = (c: Change): Run[] => (isEmpty(c.sectors) ? [] : [c.sectors]);
  const k = choice.kind === 'only' || choice.kind === 'except' ? pending.findIndex((op) => op.seq === choice.seq) : -1;
  if (choice.kind === 'none' || (choice.kind === 'only' && k < 0)) return durable.clone();
  if (choice.kind === 'all' || k < 0) return materialize(durable, changes, changes.map(all), changes.length, stats);
  const [ka, kb] = changes[k].sectors;
  if (choice.kind === 'only') {
    const kept = changes.map((c, i): Run[] => {
      if (i > k || isEmpty(c.sectors)) return [];
      const r: Run = [Math.max(c.sectors[0], ka), Math.min(c.sectors[1], kb)];
      return isEmpty(r) ? [] : [r];
    });
    return materialize(durable, changes, kept, k + 1, stats);
  }
  const without = new RunSet();
  without.add(ka, kb);
  const kept = changes.map((c, i): Run[] => (i < k ? all(c) : isEmpty(c.sectors) ? [] : without.outside(c.sectors[0], c.sectors[1])));
  const sizeChanges = changes.map((c, i) => (c.sizeAfter !== c.sizeBefore ? i : -1)).filter((i) => i >= 0);
  const lastSizeChange = sizeChanges.length > 0 ? sizeChanges[sizeChanges.length - 1] : -1;
  return materialize(durable, changes, kept, lastSizeChange === k ? k : changes.length, stats);
}
