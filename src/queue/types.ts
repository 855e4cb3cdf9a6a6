// Public contract of the queue under test. See docs/queue.md and the README's
// "Durability contract". Seqs are positive integers starting at 1, never reused.

export type CheckpointDesign = 'atomic-file' | 'append-log';
export type PageWriteDesign = 'sync' | 'buffered';

export interface QueueSettings {
  pageCapacityBytes: number; // default 64 MiB
  maxBytes: number; // default 1 GiB: total bytes of page files before writers wait
  maxEvents: number; // default 0 = unlimited unacked events
  checkpointWrites: number; // default 1024; 0 = never checkpoint on write count
  checkpointAcks: number; // default 1024
  checkpointDesign: CheckpointDesign; // default 'atomic-file'
  pageWriteDesign: PageWriteDesign; // default 'sync'
  writeTimeoutMs: number; // default 0 = wait forever under backpressure; else reject after this long
}

export interface QueueEvent {
  seq: number;
  data: Buffer;
}

export interface DurabilityState {
  /** Highest seq that survives a power cut (0 = none). */
  durableSeq: number;
  /** First unacked seq whose acks survive a power cut: every seq below it is durably acked. */
  durableFirstUnackedSeq: number;
}

export interface PersistentQueue {
  readonly settings: Readonly<QueueSettings>;
  /** Appends one event; resolves with its seq once written (not yet durable). Waits under backpressure. */
  write(data: Buffer): Promise<number>;
  /** Resolves once `seq` is durable. Concurrent waiters share one fsync (group commit). */
  waitDurable(seq: number): Promise<void>;
  /** Up to maxEvents unread events in seq order; waits up to timeoutMs for at least one. */
  readBatch(maxEvents: number, timeoutMs: number): Promise<QueueEvent[]>;
  /** Acks delivered events, in any order. */
  ack(seqs: readonly number[]): Promise<void>;
  /** Makes all writes and acks so far durable (flush, fsync, checkpoint). */
  checkpoint(): Promise<void>;
  durability(): DurabilityState;
  /** Called whenever durableSeq or durableFirstUnackedSeq advances. Returns an unsubscribe function. */
  onDurable(listener: (state: DurabilityState) => void): () => void;
  close(): Promise<void>;
}
