// The replicated queue as a target: the built-in queue on every node of a cluster, behind the
// driver's primary/backup protocol (replicated-queue.ts). It runs only on a cluster (one mount per
// node): src/harness/cluster/ runs it; the single-disk gate and suites do not list it.
import { ownNodeCommand } from '../../../harness/dist-path.js';
import type { Target } from '../../../harness/target.js';
import { powercutQueue } from '../index.js';
import { ASYNC_REPLICATION } from './replicated-queue.js';
import { REPLICA_QUEUE_VARIANTS } from './replica-variants.js';

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
      // The bug is a confirmation before the backups made it durable, so a wait for any of a backup's
      // persistence points cures it: which one the search names is the first after which the state
      // passes, and it moves with the interleaving (its page fsync, the checkpoint's fsync on either
      // design, the fsync of / that makes the atomic-file checkpoint's rename durable; each seen).
      // Where a backup wrote the page before the primary's line but fsynced it after, an fsync right
      // after that write cures the same states from the backup's side: a missing fsync of /page.*.
      // A busy CI machine's gate once named a logic error instead (its proof held: the disk a process
      // crash leaves at the run's end failed); the artifact was not kept, so the declaration stays.
      causes: [{ kind: 'early-confirmation' }, { kind: 'missing-fsync', path: '/page.*' }, { kind: 'recovery-fails-on-legal-disk' }],
      fixInRecording: false,
    },
    // A bug inside every replica's queue, behind the correct protocol: a majority confirms a write its
    // page holds, and a coordinated cut loses that page's name on every node (replica-variants.ts).
    // Its cause is the fsync each node's program misses: of the directory after creating a page.
    'replica-no-dir-fsync-new-page': {
      summary: 'every replica\'s queue creates a new page file and fsyncs it, its directory never (no-dir-fsync-new-page on each node)',
      settings: { pageCapacityBytes: 256, checkpointDesign: 'append-log' },
      provenBy: ['exhaustive'],
      // A checkpoint names the page whose name the nodes lost: fewer than a majority of queues open;
      // cut before a checkpoint names it, the page's confirmed records are lost (seen in a gate run).
      trips: ['liveness', 'at-least-once'],
      causes: [{ kind: 'missing-dir-fsync', path: '/page.*' }],
    },
  },
};

// Every cluster variant of a replica's queue is a known-bad entry (its cause declared there).
for (const name of Object.keys(REPLICA_QUEUE_VARIANTS)) {
  if (!replicatedQueue.knownBad[name]) throw new Error(`invariant: the replica variant '${name}' (replica-variants.ts) has no knownBad entry in the replicated queue's target`);
}
