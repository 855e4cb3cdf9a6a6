import { defineScenario } from './scenario.js';
import { durableWrites } from './workloads.js';

export const scenario = defineScenario({
  name: 'enospc-mid-write',
  summary: 'the disk fills up in the middle of a checkpoint write, then the process restarts',
  models:
    'After 330 bytes (lock, page header, first checkpoint, two records, 20 bytes of the next checkpoint) every write ' +
    'fails with ENOSPC. A checkpoint rewritten in place is left 20 bytes long and the queue cannot open again; one ' +
    'written to a tmp file leaves the old checkpoint intact. The cut is a clean restart (keep-all). Logstash #8218.',
  exposes: 'checkpoint-in-place',
  trips: 'liveness',
  case: {
    workload: { steps: [...durableWrites(2), { op: 'checkpoint' }] },
    settings: { checkpointDesign: 'atomic-file', pageWriteDesign: 'sync', pageCapacityBytes: 65_536, checkpointWrites: 1024, checkpointAcks: 1024 },
    faults: [{ type: 'enospc', afterBytes: 330 }],
    policy: 'keep-all',
    seed: 1,
  },
});
