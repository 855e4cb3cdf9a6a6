import { defineScenario } from './scenario.js';
import { durableWrites } from './workloads.js';

export const scenario = defineScenario({
  name: 'cut-between-checkpoint-rename-and-dir-fsync',
  summary: 'power cut after the checkpoint rename, before the directory fsync, during a page roll',
  models:
    'Rolling to page.2, the queue renames checkpoint.head.tmp over checkpoint.head and the power fails before the ' +
    'directory fsync. As on ext4 (rename commits with the journal), the rename may persist (torn policy, seed 3: it does). ' +
    'The new checkpoint then points at page.2, whose header must already be on disk. Logstash #12040.',
  exposes: 'page-header-not-synced',
  trips: 'liveness',
  case: {
    workload: { steps: durableWrites(4) },
    settings: { checkpointDesign: 'atomic-file', pageWriteDesign: 'sync', pageCapacityBytes: 256, checkpointWrites: 1024, checkpointAcks: 1024 },
    // The 2nd checkpoint rename (the 1st is at open) is the roll's; applied, never answered.
    cut: { atOp: 2, kind: 'rename', timing: 'after' },
    policy: 'torn',
    seed: 3,
  },
});
