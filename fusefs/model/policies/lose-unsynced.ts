// lose-unsynced, the strictest behaviour POSIX allows: a cut keeps exactly what fsync and directory
// fsync made durable, so one state per persistence interval covers every cut.
import type { CrashPolicyModule } from './policy.js';

const NOTHING = new Map();

export const loseUnsynced: CrashPolicyModule = {
  name: 'lose-unsynced',
  summary: 'every change not made durable by an fsync (of the file, or of the directory for its entries) is lost',
  keepsUnsynced: 'none',
  modelsJournalingFs: false,
  randomCutAsStates: 'its-cut',
  cut(model) {
    model.settle(0, NOTHING, new Set());
    return { partialWrites: 0 };
  },
  states: {
    policy: 'lose-unsynced',
    capped: false,
    recoveryCutPolicy: 'lose-unsynced',
    count: () => 1,
    candidates: (_u, afterOp) => [{ afterOp, policy: 'lose-unsynced' }],
    settle(model) {
      model.settle(0, NOTHING, new Set());
      return { partialWrites: 0 };
    },
  },
  describe: (id) => `after request ${id.afterOp}, lose-unsynced`,
};
