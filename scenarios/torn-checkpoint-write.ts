import { defineScenario } from './scenario.js';
import { durableWrites } from './workloads.js';

export const scenario = defineScenario({
  name: 'torn-checkpoint-write',
  summary: 'power cut while the checkpoint file is being written',
  models:
    'The cut comes during write-back of a checkpoint (torn policy, seed 7: the truncate persists, the new bytes do not). ' +
    'A checkpoint rewritten in place is left empty and the queue cannot open; the tmp + rename design keeps the old one. ' +
    'Logstash #8218 (0-byte checkpoint.head).',
  exposes: 'checkpoint-in-place',
  trips: 'liveness',
  case: {
    workload: { steps: [...durableWrites(2), { op: 'checkpoint' }, ...durableWrites(1)] },
    settings: { checkpointDesign: 'atomic-file', pageWriteDesign: 'sync', pageCapacityBytes: 65_536, checkpointWrites: 1024, checkpointAcks: 1024 },
    // The 2nd checkpoint write (the 1st is at open), applied but never answered.
    cut: { atOp: 2, kind: 'write', path: '/checkpoint.head*', timing: 'after' },
    policy: 'torn',
    seed: 7,
  },
});
