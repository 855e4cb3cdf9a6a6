// torn, a power cut during write-back: each 512-byte sector holds its durable bytes plus a prefix,
// in time order, of the unsynced changes that touched it (fusefs/model/torn.ts); the unsynced
// directory operations persist as a prefix of their order; each inode keeps or loses its unsynced
// attributes as a whole.
import { Prng } from '../prng.js';
import type { CrashPolicyModule } from './policy.js';
import { chosenDurables, dataInWords, randomDurables, writeBackCandidates, writeBackCount } from './write-back.js';

export const torn: CrashPolicyModule = {
  name: 'torn',
  summary: 'each sector keeps a prefix of its unsynced writes, the directory operations a prefix of their order',
  keepsUnsynced: 'some',
  modelsJournalingFs: false,
  randomCutAsStates: 'its-interval',
  cut(model, seed) {
    const stats = { partialWrites: 0 };
    const prng = new Prng(seed);
    const u = model.unsynced();
    // The order of the draws is fixed (prefix, files by inode, then attributes): a seed always tears alike.
    const prefix = prng.int(u.dirOps + 1);
    const durables = randomDurables(u, prng, stats);
    const attributes = new Set(u.metaDirty.filter(() => prng.coin()));
    model.settle(prefix, durables, attributes);
    return stats;
  },
  states: {
    policy: 'torn',
    capped: true,
    // A disk that tore writes at the first cut is cut plainly during the recovery.
    recoveryCutPolicy: 'lose-unsynced',
    count: (u, caps) => writeBackCount(u, caps, 0),
    candidates: (u, afterOp, interval, caps, n) => writeBackCandidates('torn', u, afterOp, interval, caps, n, 0),
    settle(model, id) {
      const stats = { partialWrites: 0 };
      const u = model.unsynced();
      const data = id.data ?? { kind: 'none' };
      // Unsynced attributes persist only when every change does.
      model.settle(id.dirPrefix ?? 0, chosenDurables(u, data, stats, (s) => new Prng(s)), data.kind === 'all' ? 'all' : new Set());
      return stats;
    },
  },
  describe: (id) => `after request ${id.afterOp}, torn: directory operations prefix ${id.dirPrefix ?? 0}, ${id.data ? dataInWords(id.data) : ''}`,
};
