import { defineScenario } from './scenario.js';
import { write } from './workloads.js';

export const scenario = defineScenario({
  name: 'background-checkpoint-enospc',
  summary: 'the disk fills during a checkpoint the queue writes in the background',
  models:
    'Two writes start a checkpoint in the background (checkpointWrites 2); the disk is full after 340 bytes, in the ' +
    'middle of its append to checkpoint.log. Nobody awaits that checkpoint, so the program must learn of the failure ' +
    'from its next call, close() included. Found in this queue by a gate run with a fresh seed: close() resolved.',
  exposes: 'close-swallows-failure',
  trips: 'fail-loudly',
  case: {
    workload: { steps: [write(1, false), write(1, false), { op: 'read', maxEvents: 2, waitMs: 200 }] },
    settings: { checkpointDesign: 'append-log', pageWriteDesign: 'sync', pageCapacityBytes: 65_536, checkpointWrites: 2, checkpointAcks: 1024 },
    faults: [{ type: 'enospc', afterBytes: 340 }],
    policy: 'lose-unsynced',
    seed: 1,
  },
});
