import { defineScenario } from './scenario.js';
import { durableWrites } from './workloads.js';

export const scenario = defineScenario({
  name: 'new-page-dir-not-fsynced',
  summary: 'a new page file is created and fsynced, its directory never is',
  models:
    'The queue rolls to page.2, fsyncs the file and reports events in it durable, but never fsyncs the directory: ' +
    'after a power cut the name page.2 is gone while the checkpoint log points at it. Logstash #7162 discussion; ' +
    'the append-log checkpoint design does no directory fsync of its own that would hide the bug.',
  exposes: 'no-dir-fsync-new-page',
  trips: 'liveness',
  case: {
    workload: { steps: durableWrites(4) },
    settings: { checkpointDesign: 'append-log', pageWriteDesign: 'sync', pageCapacityBytes: 256, checkpointWrites: 1024, checkpointAcks: 1024 },
    // After the first record in page.2 is fsynced (the 1st fsync of page.2 is its header).
    cut: { atOp: 2, kind: 'fsync', path: '/page.2', timing: 'after' },
    policy: 'lose-unsynced',
    seed: 1,
  },
});
