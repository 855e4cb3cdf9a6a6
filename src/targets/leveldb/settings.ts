// The leveldb target's settings: how the queue uses LevelDB (batching, which batches are synced)
// and LevelDB's own options that make it roll its log and compact in short runs.
import type { Contract } from '../../harness/contract.js';

export interface LevelQueueSettings {
  /** Records per write batch: write() buffers records and writes them as one LevelDB batch of this many. */
  writeBatchRecords: number;
  /** Record batches are written with `sync: true` (durable when written). Off: durable only once a memtable flush covers them. */
  syncWrites: boolean;
  /** Ack batches are written with `sync: true`. Off: acks become durable in a synced batch once `ackSyncEvery` are pending. */
  syncAcks: boolean;
  /** With syncAcks off: the ack call that brings the pending (unsynced) acks to this many is synced, carrying all of them. */
  ackSyncEvery: number;
  /** LevelDB's memtable size in bytes (LevelDB raises anything below 64 KiB to 64 KiB): a full memtable rolls the log and is flushed to a table file. */
  writeBufferSize: number;
  /** LevelDB's target table file size in bytes: smaller means more table files per compaction. */
  maxFileSize: number;
  /**
   * Every this many acked events (0: never), compact the acked prefix of the key range (compactRange),
   * as a queue on LevelDB does so that deleted records' tombstones do not pile up in front of the head:
   * LevelDB merges table files and deletes the inputs.
   */
  compactAckedEvery: number;
  /** Snappy-compress table blocks. */
  compression: boolean;
  /** A workload knob, not the queue's: fitWorkload raises every event to at least this many bytes, so runs fill memtables. */
  minEventBytes: number;
}

/** LevelDB clips write_buffer_size to at least this (db_impl.cc, SanitizeOptions). */
export const LEVELDB_MIN_WRITE_BUFFER_BYTES = 64 << 10;

export const DEFAULT_LEVEL_SETTINGS: Readonly<LevelQueueSettings> = Object.freeze({
  writeBatchRecords: 1,
  syncWrites: true,
  syncAcks: true,
  ackSyncEvery: 1,
  writeBufferSize: LEVELDB_MIN_WRITE_BUFFER_BYTES,
  maxFileSize: 2 << 20,
  compactAckedEvery: 0,
  compression: true,
  minEventBytes: 0,
});

/** The settings of a spec, defaults filled in; the error names the field that is wrong. */
export function levelSettings(raw: Record<string, unknown>): LevelQueueSettings {
  const unknown = Object.keys(raw).filter((k) => !(k in DEFAULT_LEVEL_SETTINGS));
  if (unknown.length > 0) throw new Error(`leveldb settings: unknown setting ${unknown.map((k) => `'${k}'`).join(', ')}; known settings: ${Object.keys(DEFAULT_LEVEL_SETTINGS).join(', ')}`);
  const s = { ...DEFAULT_LEVEL_SETTINGS, ...raw } as LevelQueueSettings;
  const int = (k: keyof LevelQueueSettings, min: number) => {
    if (!Number.isInteger(s[k]) || (s[k] as number) < min) throw new Error(`leveldb settings: ${k} must be an integer >= ${min}, got ${JSON.stringify(s[k])}`);
  };
  const bool = (k: keyof LevelQueueSettings) => {
    if (typeof s[k] !== 'boolean') throw new Error(`leveldb settings: ${k} must be true or false, got ${JSON.stringify(s[k])}`);
  };
  int('writeBatchRecords', 1);
  int('ackSyncEvery', 1);
  int('writeBufferSize', 1);
  int('maxFileSize', 1);
  int('minEventBytes', 0);
  int('compactAckedEvery', 0);
  bool('syncWrites');
  bool('syncAcks');
  bool('compression');
  return s;
}

/**
 * The replay bound the queue keeps (docs/driver-protocol.md): every ack deletes its keys itself, so
 * an ack above a gap is as durable as any (outOfOrderAcksDurable). With synced ack batches every ack
 * call is durable when it returns (ackBatchSize 1); without, fewer than ackSyncEvery acks are ever
 * pending when a call starts, and the call that reaches it is synced with all of them.
 */
export function levelContract(raw: Record<string, unknown>): Contract {
  const s = levelSettings(raw);
  // LevelDB's log is replayed in order up to its first bad record: what a cut loses is a suffix.
  return { replayBound: { ackBatchSize: s.syncAcks ? 1 : s.ackSyncEvery, outOfOrderAcksDurable: true }, acksConfirmed: true, unconfirmedWrites: 'suffix', seqScope: 'forever', deliveryOrder: 'seq' };
}
