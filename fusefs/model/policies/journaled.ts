// journaled, a journaling filesystem in its common default (ext4 data=ordered, an approximation, an
// over-approximation where unsure: docs/fs.md, "journaled"). Directory operations persist in their
// order, and every one made before the last journal commit persisted: an fsync or fdatasync that
// finds its inode changed since the last commit commits everything before it (FsModel tracks
// which do), so unlike lose-unsynced a new file's entry survives an fsync of the file. Later ones
// persist as any prefix (periodic commits). File data persists as under torn: write-back may run at
// any moment, and a newly allocated block never shows stale bytes (zeros at most).
import { Prng } from '../prng.js';
import type { CrashPolicyModule } from './policy.js';
import { chosenDurables, dataInWords, randomDurables, writeBackCandidates, writeBackCount } from './write-back.js';

export const journaled: CrashPolicyModule = {
  name: 'journaled',
  summary: 'as torn, but the directory operations before the last journal commit (an fsync of any changed file) always persist',
  cut(model, seed) {
    const stats = { partialWrites: 0 };
    const prng = new Prng(seed);
    const u = model.unsynced();
    const prefix = u.committedDirOps + prng.int(u.dirOps - u.committedDirOps + 1);
    const durables = randomDurables(u, prng, stats);
    const attributes = new Set(u.metaDirty.filter(() => prng.coin()));
    model.settle(prefix, durables, attributes);
    return stats;
  },
  states: {
    policy: 'journaled',
    capped: true,
    count: (u, caps) => writeBackCount(u, caps, u.committedDirOps),
    candidates: (u, afterOp, interval, caps, n) => writeBackCandidates('journaled', u, afterOp, interval, caps, n, u.committedDirOps),
    settle(model, id) {
      const stats = { partialWrites: 0 };
      const u = model.unsynced();
      const prefix = id.dirPrefix ?? u.committedDirOps;
      if (prefix < u.committedDirOps) throw new Error(`journaled state after request ${id.afterOp}: directory prefix ${prefix} is below the ${u.committedDirOps} operations a journal commit made durable`);
      const data = id.data ?? { kind: 'none' };
      model.settle(prefix, chosenDurables(u, data, stats, (s) => new Prng(s)), data.kind === 'all' ? 'all' : new Set());
      return stats;
    },
  },
  describe: (id) => `after request ${id.afterOp}, journaled: directory operations prefix ${id.dirPrefix ?? 0}, ${id.data ? dataInWords(id.data) : ''}`,
};
