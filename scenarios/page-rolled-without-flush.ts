import { defineScenario } from './scenario.js';
import { write } from './workloads.js';

export const scenario = defineScenario({
  name: 'page-rolled-without-flush',
  summary: 'buffered mode starts a new page without flushing the old one',
  models:
    'Three buffered writes overflow a 256-byte page. Rolling to page.2 without first flushing and fsyncing page.1 ' +
    'leaves page.1 without its records while the new checkpoint already points past them; the cut after that ' +
    'checkpoint loses events the queue reported durable. NATS #7018 (last message block).',
  exposes: 'roll-without-flush',
  trips: 'liveness',
  case: {
    workload: { steps: [write(3, false), { op: 'waitDurable' }] },
    settings: { checkpointDesign: 'atomic-file', pageWriteDesign: 'buffered', pageCapacityBytes: 256, checkpointWrites: 1024, checkpointAcks: 1024 },
    // Just after the roll's checkpoint (fsyncdirs: page.1, checkpoint at open, page.2, this checkpoint).
    cut: { atOp: 4, kind: 'fsyncdir', timing: 'after' },
    policy: 'lose-unsynced',
    seed: 1,
  },
});
