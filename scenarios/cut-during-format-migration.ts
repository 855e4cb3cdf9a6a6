import { defineScenario } from './scenario.js';
import { durableWrites, write } from './workloads.js';

export const scenario = defineScenario({
  name: 'cut-during-format-migration',
  summary: 'restart with append-log checkpoints upgrades an atomic-file queue; power cut in the first new page',
  models:
    'The queue runs with atomic-file checkpoints, is cut, and restarts with checkpointDesign append-log: recovery ' +
    'migrates checkpoint.head to checkpoint.log, drains, and rolls to page.3; the second cut comes right after the ' +
    'first record in page.3 is fsynced. atomic-file fsyncs the directory at every checkpoint, which hides a missing ' +
    'directory fsync after creating a page; after the migration nothing hides it (without the migration this variant passes). ' +
    'Format upgrades that change which fsyncs happen (Logstash #7162 discussion).',
  exposes: 'no-dir-fsync-new-page',
  trips: 'liveness',
  case: {
    workload: {
      steps: [write(2, true), { op: 'read', maxEvents: 1 }, { op: 'ack', count: 1, order: 'oldest' }, { op: 'checkpoint' }, ...durableWrites(1)],
    },
    settings: { checkpointDesign: 'atomic-file', pageWriteDesign: 'sync', pageCapacityBytes: 256, checkpointWrites: 1024, checkpointAcks: 1024 },
    recoverySettings: { checkpointDesign: 'append-log' },
    // First cut: at the clean close (before the lock is removed).
    cut: { atOp: 1, kind: 'unlink', path: '/lock', timing: 'before' },
    policy: 'lose-unsynced',
    seed: 1,
    recoveryCut: { cut: { atOp: 2, kind: 'fsync', path: '/page.3', timing: 'after' }, policy: 'lose-unsynced', seed: 1 },
  },
});
