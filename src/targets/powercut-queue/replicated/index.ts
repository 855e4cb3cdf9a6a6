// The replicated queue as a target: the built-in queue on every node of a cluster, behind the
// driver's primary/backup protocol (replicated-queue.ts). It runs only on a cluster (one mount per
// node): src/harness/cluster/ runs it; the single-disk gate and suites do not list it.
import { ownNodeCommand } from '../../../harness/dist-path.js';
import type { Target } from '../../../harness/target.js';
import { powercutQueue } from '../index.js';
import { ASYNC_REPLICATION } from './replicated-queue.js';

export const replicatedQueue: Target = {
  ...powercutQueue,
  name: 'replicated-queue',
  summary: 'the built-in queue on every node of a cluster, a write confirmed once a majority made it durable, recovery from what a majority holds',
  get driver() {
    return ownNodeCommand('src/targets/powercut-queue/replicated/driver.js');
  },
  suites: [{ name: 'default', settings: {} }],
  nodeCount: () => 3,
  knownBad: {
    [ASYNC_REPLICATION]: {
      summary: 'the primary confirms a write once its own disk made it durable, and replicates it to the backups after (asynchronous replication)',
      settings: {},
      provenBy: ['exhaustive'],
      trips: ['at-least-once'],
      causes: [{ kind: 'early-confirmation', path: '/page.*' }],
      fixInRecording: false,
    },
  },
};
