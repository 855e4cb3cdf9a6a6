import { defineScenario } from './scenario.js';
import { write } from './workloads.js';

export const scenario = defineScenario({
  name: 'buffered-checkpoint-before-flush',
  summary: 'buffered writes are checkpointed while still in memory',
  models:
    'In buffered mode two writes sit in the write buffer when the write count triggers a checkpoint. A checkpoint ' +
    'written before the buffer is flushed and fsynced claims records that are not on disk; after the cut recovery ' +
    'finds fewer records than the checkpoint promises. NATS #7018 (flush before snapshot).',
  exposes: 'checkpoint-before-flush',
  trips: 'liveness',
  case: {
    workload: { steps: [write(2, false), { op: 'read', maxEvents: 2 }] },
    settings: { checkpointDesign: 'atomic-file', pageWriteDesign: 'buffered', pageCapacityBytes: 65_536, checkpointWrites: 2, checkpointAcks: 1024 },
    // Just after the triggered checkpoint's directory fsync (the 3rd: page created, checkpoint at open, this one).
    cut: { atOp: 3, kind: 'fsyncdir', timing: 'after' },
    policy: 'lose-unsynced',
    seed: 1,
  },
});
