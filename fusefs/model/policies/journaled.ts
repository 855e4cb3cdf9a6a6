// journaled, a journaling filesystem in its common default (ext4 data=ordered, an approximation, an
// over-approximation where unsure: docs/fs.md, "journaled"). Directory operations persist in their
// order, and every one made before the last journal commit persisted: an fsync or fdatasync that
// finds its inode changed since the last commit commits everything before it (FsModel tracks
// which do), so unlike lose-unsynced a new file's entry survives an fsync of the file. Later ones
// persist as any prefix (periodic commits). File data persists as under torn: write-back may run at
// any moment, and a newly allocated block never shows stale bytes (zeros at most). And a file's
// size may also be one inside the range an unsynced write grew it by (midWriteSizes).
import type { GrowBuffer } from '../grow-buffer.js';
import type { Unsynced, UnsyncedFile } from '../nodes.js';
import { Prng } from '../prng.js';
import { changesOf, SECTOR_BYTES } from '../torn.js';
import type { CrashPolicyModule } from './policy.js';
import { chosenDurables, dataInWords, randomDurables, writeBackCandidates, writeBackCount } from './write-back.js';

export const journaled: CrashPolicyModule = {
  name: 'journaled',
  summary: 'as torn, but the directory operations before the last journal commit (an fsync of any changed file) always persist',
  keepsUnsynced: 'some',
  modelsJournalingFs: true,
  // No randomCutAsStates: exhaustive mode does not explain a random cut under it.
  cut(model, seed) {
    const stats = { partialWrites: 0 };
    const prng = new Prng(seed);
    const u = model.unsynced();
    const prefix = u.committedDirOps + prng.int(u.dirOps - u.committedDirOps + 1);
    const durables = randomDurables(u, prng, stats);
    const attributes = new Set(u.metaDirty.filter(() => prng.coin()));
    midWriteSizes(u, durables, prng);
    model.settle(prefix, durables, attributes);
    return stats;
  },
  states: {
    policy: 'journaled',
    capped: true,
    recoveryCutPolicy: 'journaled',
    count: (u, caps) => writeBackCount(u, caps, u.committedDirOps),
    candidates: (u, afterOp, interval, caps, n) => writeBackCandidates('journaled', u, afterOp, interval, caps, n, u.committedDirOps),
    settle(model, id) {
      const stats = { partialWrites: 0 };
      const u = model.unsynced();
      const prefix = id.dirPrefix ?? u.committedDirOps;
      if (prefix < u.committedDirOps) throw new Error(`journaled state after request ${id.afterOp}: directory prefix ${prefix} is below the ${u.committedDirOps} operations a journal commit made durable`);
      const data = id.data ?? { kind: 'none' };
      const durables = chosenDurables(u, data, stats, (s) => new Prng(s));
      // The seeded sector patterns also draw sizes inside writes (a stream of their own: torn's patterns stay as they are).
      if (data.kind === 'sectors') midWriteSizes(u, durables, new Prng(data.seed ^ 0x5eed));
      model.settle(prefix, durables, data.kind === 'all' ? 'all' : new Set());
      return stats;
    },
  },
  describe: (id) => `after request ${id.afterOp}, journaled: directory operations prefix ${id.dirPrefix ?? 0}, ${id.data ? dataInWords(id.data) : ''}`,
};

/**
 * The sizes a file can have on ext4 inside the range an unsynced write grew it by: every 512-byte
 * boundary strictly between the size before the write and after it. ext4 moves the in-memory size
 * page by page while a write is copied in, and writes a new size to the journal at once when the
 * page's block is already allocated (or at write-back, to the end of the pages written), so a cut
 * can leave a size no whole write had: real ext4 came back with a 4096-byte file after appends
 * that took it to 521, 1477 and 5575 bytes (kernel-check).
 */
export function sizesInsideWrites(f: Pick<UnsyncedFile, 'durable' | 'pending'>): number[] {
  const out: number[] = [];
  for (const c of changesOf(f.durable, f.pending)) {
    if (c.op.type !== 'write' || c.sizeAfter <= c.sizeBefore) continue;
    for (let b = (Math.floor(c.sizeBefore / SECTOR_BYTES) + 1) * SECTOR_BYTES; b < c.sizeAfter; b += SECTOR_BYTES) out.push(b);
  }
  return out;
}

/** A quarter of the files that have such sizes take one of them, drawn from `prng` (what persisted of their bytes is kept up to it, zeros past it). */
export function midWriteSizes(u: Unsynced, durables: Map<number, GrowBuffer>, prng: Prng): void {
  for (const f of u.files) {
    const sizes = sizesInsideWrites(f);
    const d = durables.get(f.ino);
    if (sizes.length === 0 || !d || prng.int(4) !== 0) continue;
    d.resize(sizes[prng.int(sizes.length)]);
  }
}
