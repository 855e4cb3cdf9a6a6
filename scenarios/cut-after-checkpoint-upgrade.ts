import { defineScenario } from './scenario.js';
import { durableWrites, write } from './workloads.js';

export const scenario = defineScenario({
  name: 'cut-after-checkpoint-upgrade',
  summary: 'restart with append-log checkpoints upgrades an atomic-file queue; power cut right after the upgrade',
  models:
    'The queue runs with atomic-file checkpoints, is cut, and restarts with checkpointDesign append-log: recovery ' +
    'writes checkpoint.log (tmp, rename, directory fsync), then removes checkpoint.head and fsyncs the directory; the ' +
    'second cut comes right after that second directory fsync. The log must hold its record by then: a rename made ' +
    'durable before the file it names leaves an empty log and no checkpoint.head. A bug only a recovery can have.',
  exposes: 'upgrade-log-not-synced',
  trips: 'liveness',
  case: {
    workload: { steps: [write(2, true), { op: 'read', maxEvents: 1 }, { op: 'ack', count: 1, order: 'oldest' }, { op: 'checkpoint' }, ...durableWrites(1)] },
    settings: { checkpointDesign: 'atomic-file', pageWriteDesign: 'sync', pageCapacityBytes: 256, checkpointWrites: 1024, checkpointAcks: 1024 },
    recoverySettings: { checkpointDesign: 'append-log' },
    // First cut: at the clean close (before the lock is removed).
    cut: { atOp: 1, kind: 'unlink', path: '/lock', timing: 'before' },
    policy: 'lose-unsynced',
    seed: 1,
    recoveryCut: { cut: { atOp: 2, kind: 'fsyncdir', timing: 'after' }, policy: 'lose-unsynced', seed: 1 },
  },
});
