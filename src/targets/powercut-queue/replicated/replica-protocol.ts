// Between the replicated queue's driver and one replica server: JSON lines over the server's stdin
// (requests) and stdout (replies, matched by id, and durability news). Pure.

/**
 * The server's first stdin line, sent once the driver printed the node's line: the server touches
 * its disk only after it, so the harness knows the node's group before its first request.
 */
export const START_LINE = 'start';

export type ReplicaRequest =
  | { id: number; op: 'write'; data: string } // base64
  | { id: number; op: 'read'; maxEvents: number }
  | { id: number; op: 'ack'; seqs: number[] }
  | { id: number; op: 'checkpoint' }
  | { id: number; op: 'close' };

export type ReplicaMessage =
  /** The queue opened (recovered) and holds this; unacked*: what its backpressure counts (the primary admits writes from it). */
  | { t: 'ready'; durableSeq: number; durableFirstUnackedSeq: number; unackedCount: number; unackedBytes: number }
  /** More became durable on this node. */
  | { t: 'durable'; durableSeq: number; durableFirstUnackedSeq: number }
  | { t: 'reply'; id: number; seq?: number; events?: { seq: number; data: string }[]; error?: string; code?: string }
  /** The queue could not open. */
  | { t: 'failed'; message: string };

function fail(what: string, line: string): never {
  throw new Error(`replica protocol: ${what}: ${line.slice(0, 200)}`);
}

export function parseReplicaRequest(line: string): ReplicaRequest {
  const r = JSON.parse(line) as ReplicaRequest;
  if (!Number.isInteger(r?.id)) fail('a request needs an integer id', line);
  if (!['write', 'read', 'ack', 'checkpoint', 'close'].includes(r.op)) fail(`unknown op ${JSON.stringify(r.op)}`, line);
  return r;
}

export function parseReplicaMessage(line: string): ReplicaMessage {
  let m: ReplicaMessage;
  try {
    m = JSON.parse(line) as ReplicaMessage;
  } catch {
    fail('not JSON', line);
  }
  if (!['ready', 'durable', 'reply', 'failed'].includes(m?.t)) fail(`unknown message ${JSON.stringify(m?.t)}`, line);
  return m;
}
