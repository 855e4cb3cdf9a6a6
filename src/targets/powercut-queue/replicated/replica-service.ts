// What one node of the replicated queue does: its queue opened (recovered) on its directory, and a
// request applied to it. Shared by the node's own server process (replica-server.ts), which a live
// run can cut, and the in-process node of an offline drain (in-process-replica.ts), so both are
// the same node.
import { Queue } from '../../../queue/index.js';
import type { QueueSettings } from '../../../queue/types.js';
import { variantOps } from '../variants.js';
import type { ReplicaMessage, ReplicaRequest } from './replica-protocol.js';
import { REPLICA_QUEUE_VARIANT_KEY } from './replica-variants.js';

export type ReplicaReply = Extract<ReplicaMessage, { t: 'reply' }>;

/** The settings that turn backpressure off: admission is the primary's (replicated-queue.ts). */
const NO_BACKPRESSURE: Partial<QueueSettings> = { maxBytes: Number.MAX_SAFE_INTEGER, maxEvents: 0, writeTimeoutMs: 0 };

/**
 * Opens (recovers) a node's queue. A write never waits for space here: one waiting in line would
 * hold the ack that frees it. A cluster variant's single-disk queue variant comes in the settings (replica-variants.ts).
 */
export function openReplicaQueue(dir: string, settings: Record<string, unknown>): Promise<Queue> {
  const { [REPLICA_QUEUE_VARIANT_KEY]: queueVariant, ...rest } = settings;
  const merged = { ...(rest as Partial<QueueSettings>), ...NO_BACKPRESSURE };
  if (queueVariant === undefined) return Queue.open(dir, merged);
  if (typeof queueVariant !== 'string') throw new Error(`${REPLICA_QUEUE_VARIANT_KEY} must name a queue variant, got ${JSON.stringify(queueVariant)}`);
  // A replica serves the queue itself (its backlog too): only a variant that is a disk step of the queue fits.
  const ops = variantOps(queueVariant);
  if (!ops) throw new Error(`${REPLICA_QUEUE_VARIANT_KEY}: queue variant '${queueVariant}' is not a disk step of the queue (a wrapper), which a replica cannot run`);
  return Queue.open(dir, merged, ops);
}

/** Applies one request to the node's queue; a failure is a reply carrying its message and errno code. `warn` hears what fails after the reply. */
export async function serveReplicaRequest(queue: Queue, req: ReplicaRequest, warn: (message: string) => void): Promise<ReplicaReply> {
  try {
    switch (req.op) {
      case 'write': {
        const seq = await queue.write(Buffer.from(req.data, 'base64'));
        // Each node makes what it is given durable at once, and says so ('durable'); a sync that
        // fails leaves its durable seq behind, which the primary counts against a majority.
        queue.waitDurable(seq).catch((err: unknown) => warn(`waitDurable(${seq}): ${err instanceof Error ? err.message : String(err)}`));
        return { t: 'reply', id: req.id, seq };
      }
      case 'read': {
        const events = await queue.readBatch(req.maxEvents, 0);
        return { t: 'reply', id: req.id, events: events.map((e) => ({ seq: e.seq, data: e.data.toString('base64') })) };
      }
      case 'ack':
        await queue.ack(req.seqs);
        return { t: 'reply', id: req.id };
      case 'checkpoint':
        await queue.checkpoint();
        return { t: 'reply', id: req.id };
      case 'close':
        await queue.close();
        return { t: 'reply', id: req.id };
    }
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    return { t: 'reply', id: req.id, error: e?.message ?? String(err), ...(e?.code ? { code: String(e.code) } : {}) };
  }
}

/** A reply's result, or an Error carrying the node's message and errno code. */
export function replyOrError(node: number, r: ReplicaReply): ReplicaReply | Error {
  return r.error === undefined ? r : Object.assign(new Error(`node ${node}: ${r.error}`), r.code ? { code: r.code } : {});
}
