// The `torn` policy: a power cut during write-back (DESIGN.md section 3). Pure functions of the
// pre-crash state and a seeded generator.
import { GrowBuffer } from './grow-buffer.js';
import type { DirChange, JournalOp, PendingFileOp } from './nodes.js';
import type { Prng } from './prng.js';

export const SECTOR_BYTES = 512;

/**
 * What survives of one file: start from its durable bytes, then each change since its last fsync
 * persists fully, partially (a random subset of its aligned sectors) or not at all. A write inside
 * one sector is atomic; an extending write may persist the new size without its data (zeros).
 */
export function tornFile(durable: GrowBuffer, pending: readonly PendingFileOp[], prng: Prng): GrowBuffer {
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
    for (let s = firstSector; s <= lastSector; s++) {
      if (!prng.coin()) continue;
      const from = Math.max(op.offset, s * SECTOR_BYTES);
      const to = Math.min(end, (s + 1) * SECTOR_BYTES);
      out.write(from, op.data.subarray(from - op.offset, to - op.offset));
    }
    // The size is metadata: it may persist even where the tail sector's data did not.
    if (end > out.size && prng.coin()) out.resize(end);
  }
  return out;
}

/** Unsynced directory operations persist as a random prefix of journal order. */
export function tornJournalPrefix(journal: readonly JournalOp[], prng: Prng): DirChange[] {
  const keep = prng.int(journal.length + 1);
  return journal.slice(0, keep).flatMap((op) => op.changes);
}
