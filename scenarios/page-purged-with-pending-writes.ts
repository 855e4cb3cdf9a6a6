import { defineScenario } from './scenario.js';
import { write } from './workloads.js';

export const scenario = defineScenario({
  name: 'page-purged-with-pending-writes',
  summary: 'a fully acked page is purged while writes to the head page are still buffered',
  models:
    'Page 1 is fully acked (checkpointAcks 1) while a write to page 2 sits in the buffer. The checkpoint that allows ' +
    'deleting page.1 must not claim the buffered record; if it does, the cut right after the purge leaves a ' +
    'checkpoint promising a record page.2 does not hold. NATS #7018 class (flush before snapshot, here before delete).',
  exposes: 'checkpoint-before-flush',
  trips: 'liveness',
  case: {
    workload: {
      steps: [write(2, true), { op: 'read', maxEvents: 2 }, write(1, false), { op: 'ack', count: 2, order: 'oldest' }, write(1, false)],
    },
    settings: { checkpointDesign: 'atomic-file', pageWriteDesign: 'buffered', pageCapacityBytes: 256, checkpointWrites: 1024, checkpointAcks: 1 },
    // The purge: unlink of page.1, applied, never answered.
    cut: { atOp: 1, kind: 'unlink', path: '/page.*', timing: 'after' },
    policy: 'lose-unsynced',
    seed: 1,
  },
});
