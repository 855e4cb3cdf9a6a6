// Known-bad variants of the replicated queue whose bug is in each replica's own queue: every node
// runs one of the built-in queue's single-disk variants (known-bad.ts, variants.ts) behind the
// correct primary/backup protocol. The variant reaches each replica's queue (a server process or an
// in-process node alike, through openReplicaQueue) as one extra key in the settings it is given.

/** The settings key that names a replica's single-disk queue variant: read and removed by openReplicaQueue, never a queue setting. */
export const REPLICA_QUEUE_VARIANT_KEY = 'replicaQueueVariant';

/** Each cluster variant and the single-disk variant every replica's queue runs with. */
export const REPLICA_QUEUE_VARIANTS: Readonly<Record<string, string>> = Object.freeze({
  // Every node creates a new page file and fsyncs it, its directory never: a coordinated cut loses
  // the new page's name on every node, so a majority loses writes it confirmed.
  'replica-no-dir-fsync-new-page': 'no-dir-fsync-new-page',
});

/** The settings a replica's queue opens with under cluster variant `variant` (its single-disk variant named in them, if it has one). */
export function replicaSettings(settings: Record<string, unknown>, variant: string | undefined): Record<string, unknown> {
  if (REPLICA_QUEUE_VARIANT_KEY in settings) throw new Error(`'${REPLICA_QUEUE_VARIANT_KEY}' is not a queue setting: a cluster variant (${Object.keys(REPLICA_QUEUE_VARIANTS).join(', ')}) chooses it`);
  const queueVariant = variant === undefined ? undefined : REPLICA_QUEUE_VARIANTS[variant];
  return queueVariant === undefined ? settings : { ...settings, [REPLICA_QUEUE_VARIANT_KEY]: queueVariant };
}
