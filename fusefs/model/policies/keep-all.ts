// keep-all, a clean shutdown: every change is kept (the baseline of random cuts); what an injected
// fault failed is still lost, since a failed fsync can no longer persist its data.
import { chosenFile } from '../torn.js';
import type { CrashPolicyModule } from './policy.js';

export const keepAll: CrashPolicyModule = {
  name: 'keep-all',
  summary: 'nothing is lost but what an injected fault failed (a clean shutdown)',
  keepsUnsynced: 'all',
  modelsJournalingFs: false,
  cut(model) {
    const u = model.unsynced();
    model.settle(u.dirOps, new Map(u.files.map((f) => [f.ino, chosenFile(f.durable, f.pending, { kind: 'all' })])), 'all');
    return { partialWrites: 0 };
  },
  describe: (id) => `after request ${id.afterOp}, keep-all`,
};
