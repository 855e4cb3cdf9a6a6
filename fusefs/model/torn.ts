// The `torn` policy: a power cut during write-back (docs/design.md, "Crash semantics"). Pure
// functions of the pre-crash state and a seeded generator, or of explicit choices (exhaustive mode).
import { GrowBuffer } from './grow-buffer.js';
import type { JournalOp, PendingFileOp } from './nodes.js';
import type { Prng } from './prng.js';

export const SECTOR_BYTES = 512;

/**
 * What survives of one file: start from its durable bytes, then each change since its last fsync
 * persists fully, partially (a random subset of its aligned sectors) or not at all. A write inside
 * one sector is atomic; an extending write may persist the new size without its data (zeros).
 */
export interface TornStats {
  /** Writes kept only in part: some of their sectors persisted and some did not. */
  partialWrites: number;
}

export function tornFile(durable: GrowBuffer, pending: readonly PendingFileOp[], prng: Prng, stats?: TornStats): GrowBuffer {
  const out = durable.clone();
  for (const op of pending) {
    if (op.type === 'truncate') {
      if (prng.coin()) out.resize(op.sizeBytes);
      continue;
    }
    const end = op.offset + op.data.length;
    const firstSector = Math.floor(op.offset / SECTOR_BYTES);
    const lastSector = Math.floor((end - 1) / SECTOR_BYTES);
    const atomic = firstSector === lastSector;
    const outcome = prng.int(3); // 0 full, 1 partial, 2 none
    if (outcome === 2 || (atomic && outcome === 1 && prng.coin())) {
      if (end > out.size && prng.coin()) out.resize(end);
      continue;
    }
    if (outcome === 0 || atomic) {
      out.write(op.offset, op.data);
      continue;
    }
    let kept = 0;
    for (let s = firstSector; s <= lastSector; s++) {
      if (!prng.coin()) continue;
      kept++;
      const from = Math.max(op.offset, s * SECTOR_BYTES);
      const to = Math.min(end, (s + 1) * SECTOR_BYTES);
      out.write(from, op.data.subarray(from - op.offset, to - op.offset));
    }
    if (stats && kept > 0 && kept <= lastSector - firstSector) stats.partialWrites++;
    // The size is metadata: it may persist even where the tail sector's data did not.
    if (end > out.size && prng.coin()) out.resize(end);
  }
  return out;
}

/** Unsynced directory operations persist as a random prefix of journal order: how many of them. */
export function tornJournalPrefix(journal: readonly JournalOp[], prng: Prng): number {
  return prng.int(journal.length + 1);
}

/** What survives of one file when each change since its last fsync persists whole or not at all, as `keep` says. */
export function chosenFile(durable: GrowBuffer, pending: readonly PendingFileOp[], keep: (op: PendingFileOp) => boolean): GrowBuffer {
  const out = durable.clone();
  for (const op of pending) {
    if (!keep(op)) continue;
    if (op.type === 'truncate') out.resize(op.sizeBytes);
    else out.write(op.offset, op.data);
  }
  return out;
}
