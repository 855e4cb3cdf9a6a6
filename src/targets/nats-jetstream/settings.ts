// The nats-jetstream target's settings: what the driver claims durable, and the stream and consumer
// configuration it asks nats-server 2.9.10 for (docs/nats.md, "Settings space").
import { LIVENESS_SIZES_BYTES } from '../../harness/driver-spec.js';
import { MAX_EVENT_BYTES } from '../../harness/workload.js';
import type { Contract } from '../../harness/contract.js';

export const RETENTIONS = ['limits', 'interest', 'workqueue'] as const;
export type Retention = (typeof RETENTIONS)[number];

export interface NatsSettings {
  /**
   * A PubAck is a durability confirmation (NATS's documentation: the message "has been successfully
   * persisted"): each one prints a `durable` line. Off: a PubAck confirms nothing, and waitDurable
   * and checkpoint make the store durable the only way 2.9.10 allows, from outside: the driver
   * fsyncs every file and directory of the store itself, then claims what was PubAcked before.
   */
  pubAckDurable: boolean;
  /**
   * The stream gets max_bytes SMALL_BLOCKS_MAX_BYTES (discard new), which makes 2.9.10 pick its
   * smallest message block, 32000 bytes (stream.go autoTuneFileStorageBlockSize): a new `.blk` every
   * ~32 KB. Off: no limits, blocks of 8 MiB (limits retention) or 4 MiB (interest, workqueue).
   */
  smallBlocks: boolean;
  /** The stream's max_msg_size in bytes (-1: none; the server's max_payload, 1 MiB, still applies). */
  maxMsgSize: number;
  /** The stream's retention: limits keeps acked messages; interest and workqueue remove them once acked. */
  retention: Retention;
  /** Durable pull consumers on the stream besides the one the protocol reads from (0 with workqueue retention). */
  extraConsumers: number;
  /** On each ack call the driver also fetches the same seqs on every extra consumer and acks them there. */
  extraConsumersAck: boolean;
  /** Publish each event with a Nats-Msg-Id header (its event id): the stream's duplicate tracking is in play. */
  msgId: boolean;
  /** The stream's duplicate_window in ms (0: the server's default, 2 minutes); with replicas 3 at least the span of a publish's retries (queue.ts). */
  duplicateWindowMs: number;
  /** Lines appended verbatim to the server's configuration file (e.g. to try an option). */
  serverConfig: string;
  /**
   * 1: one server (its store on spec.dir). 3: three servers clustered over loopback routes, one per
   * node of a cluster case (spec.nodes), the stream and its consumers with num_replicas 3.
   */
  replicas: number;
}

export const DEFAULT_NATS_SETTINGS: Readonly<NatsSettings> = Object.freeze({
  pubAckDurable: true,
  smallBlocks: false,
  maxMsgSize: -1,
  retention: 'limits',
  extraConsumers: 0,
  extraConsumersAck: false,
  msgId: false,
  duplicateWindowMs: 0,
  serverConfig: '',
  replicas: 1,
});

/** The replica counts the target runs: one server, or a three-node cluster. */
export const REPLICAS = [1, 3] as const;

/** max_bytes of a smallBlocks stream: at most 127999 gives 32000-byte blocks in 2.9.10 (128000 already gives 4 MiB). */
export const SMALL_BLOCKS_MAX_BYTES = 127_000;
/** The server's default max_payload (2.9.10): headers and payload of one message together. */
export const NATS_MAX_PAYLOAD = 1 << 20;
/** Room for the headers the driver sends: Nats-Msg-Id ("NATS/1.0\r\nNats-Msg-Id: 4294967295\r\n\r\n" is 37 bytes), with room to spare. */
export const HEADER_ALLOWANCE_BYTES = 128;
/**
 * What one message takes of max_bytes besides its payload: 2.9.10 accounts a record's full size
 * (filestore.go fileStoreMsgSize: 22 + subject + headers + payload + 8), with room to spare.
 */
export const PER_MESSAGE_OVERHEAD_BYTES = 128;
/** Bytes of max_bytes fitWorkload leaves for the liveness writes of up to three drains. */
export const DRAIN_RESERVE_BYTES = 3 * LIVENESS_SIZES_BYTES.reduce((sum, n) => sum + n + PER_MESSAGE_OVERHEAD_BYTES, 0);

/**
 * The settings of a spec, defaults filled in; the error names the setting that is wrong. `strict`
 * (checkSettings: what a user forces with --settings) refuses extra consumers on a work queue
 * stream; otherwise (a spec, a workload being fitted) they are dropped: the gate's steering draws
 * one setting anew at a time, so retention 'workqueue' can meet extraConsumers > 0 from a suite or
 * an earlier input, and such an input runs as the work queue stream it asks for, with no extras.
 */
export function natsSettings(raw: Record<string, unknown>, { strict = false }: { strict?: boolean } = {}): NatsSettings {
  const unknown = Object.keys(raw).filter((k) => !(k in DEFAULT_NATS_SETTINGS));
  if (unknown.length > 0) {
    throw new Error(`nats-jetstream settings: unknown setting ${unknown.map((k) => `'${k}'`).join(', ')}; known settings: ${Object.keys(DEFAULT_NATS_SETTINGS).join(', ')}`);
  }
  const s = { ...DEFAULT_NATS_SETTINGS, ...raw } as NatsSettings;
  const fail = (k: keyof NatsSettings, what: string): never => {
    throw new Error(`nats-jetstream settings: ${k} must be ${what}, got ${JSON.stringify(s[k])}`);
  };
  const bool = (k: keyof NatsSettings) => {
    if (typeof s[k] !== 'boolean') fail(k, 'true or false');
  };
  bool('pubAckDurable');
  bool('smallBlocks');
  bool('extraConsumersAck');
  bool('msgId');
  if (!Number.isInteger(s.maxMsgSize) || (s.maxMsgSize !== -1 && (s.maxMsgSize < 512 || s.maxMsgSize > NATS_MAX_PAYLOAD))) {
    fail('maxMsgSize', `-1 (no limit) or an integer in 512..${NATS_MAX_PAYLOAD}`);
  }
  if (!RETENTIONS.includes(s.retention)) fail('retention', `one of ${RETENTIONS.join(', ')}`);
  if (!Number.isInteger(s.extraConsumers) || s.extraConsumers < 0 || s.extraConsumers > 8) fail('extraConsumers', 'an integer in 0..8');
  if (s.retention === 'workqueue' && s.extraConsumers > 0) {
    if (strict) fail('extraConsumers', "0 with retention 'workqueue' (NATS allows one unfiltered consumer on a work queue stream)");
    s.extraConsumers = 0;
  }
  if (!Number.isInteger(s.duplicateWindowMs) || s.duplicateWindowMs < 0) fail('duplicateWindowMs', 'an integer >= 0 (0: the server default)');
  if (typeof s.serverConfig !== 'string') fail('serverConfig', 'a string');
  if (!(REPLICAS as readonly unknown[]).includes(s.replicas)) fail('replicas', `one of ${REPLICAS.join(', ')} (one server, or a three-node cluster)`);
  return s;
}

/** The largest event the stream takes with these settings (liveness writes and fitWorkload cut events to it). */
export function natsMaxEventBytes(raw: Record<string, unknown>): number {
  const s = natsSettings(raw);
  const limit = s.maxMsgSize === -1 ? NATS_MAX_PAYLOAD : s.maxMsgSize;
  return Math.min(MAX_EVENT_BYTES, limit - HEADER_ALLOWANCE_BYTES);
}

/**
 * The contract (docs/nats.md, "Durability claims"). Acks are never durable in 2.9.10: the consumer's
 * state file o.dat is rewritten by a flusher up to 100 ms after the ack (after its +ACK reply went
 * out) and never fsynced, so every acked event may be delivered again after a cut, in or out of order; a stream is a log (a suffix is lost)
 * whose seqs are the stream's own, for its life.
 */
export function natsContract(): Contract {
  return { replayBound: { ackBatchSize: 1, outOfOrderAcksDurable: false }, acksConfirmed: false, unconfirmedWrites: 'suffix', seqScope: 'forever', deliveryOrder: 'seq' };
}
