import { defineScenario } from './scenario.js';
import { write } from './workloads.js';

export const scenario = defineScenario({
  name: 'cut-between-page-write-and-checkpoint',
  summary: 'power cut after a checkpoint is durable, before the page data it covers was fsynced',
  models:
    'Three events are written (not yet fsynced) and the write count triggers a checkpoint. A checkpoint that claims ' +
    'records before their page is fsynced becomes durable first; the cut loses the records, and recovery finds a ' +
    'checkpoint promising more than the page holds (ordering class: checkpoint before data).',
  exposes: 'checkpoint-before-page-sync',
  trips: 'liveness',
  case: {
    workload: { steps: [write(3, false), { op: 'read', maxEvents: 3 }] },
    settings: { checkpointDesign: 'atomic-file', pageWriteDesign: 'sync', pageCapacityBytes: 65_536, checkpointWrites: 3, checkpointAcks: 1024 },
    // Just after the checkpoint's directory fsync (1: page.1 created, 2: checkpoint at open, 3: this one).
    cut: { atOp: 3, kind: 'fsyncdir', timing: 'after' },
    policy: 'lose-unsynced',
    seed: 1,
  },
});
