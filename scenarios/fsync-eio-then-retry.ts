import { defineScenario } from './scenario.js';
import { durableWrites } from './workloads.js';

export const scenario = defineScenario({
  name: 'fsync-eio-then-retry',
  summary: 'the first fsync of a page fails with EIO; a retry succeeds without saving anything',
  models:
    'As on ext4, a failed fsync drops the dirty data from what can reach the disk while it stays readable, and the ' +
    'next fsync returns success. A queue that retries and carries on reports data durable that is not: after the ' +
    'power cut its page is unreadable. PostgreSQL "fsyncgate" (2018).',
  exposes: 'fsync-error-ignored',
  trips: 'fail-loudly',
  case: {
    workload: { steps: durableWrites(2) },
    settings: { checkpointDesign: 'atomic-file', pageWriteDesign: 'sync', pageCapacityBytes: 65_536, checkpointWrites: 1024, checkpointAcks: 1024 },
    // The first page fsync is the new page header's, at open. The cut comes after the driver stops.
    faults: [{ type: 'fsync-eio', path: '/page.*', count: 1 }],
    policy: 'lose-unsynced',
    seed: 1,
  },
});
