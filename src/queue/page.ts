// One page file being appended to: records encoded straight into one write buffer, written out with
// blocking writes (as the sync design does per record), and group-commit fsyncs that run in the
// background while writing goes on.
import type { FileHandle } from 'node:fs/promises';
import { RECORD_OVERHEAD_BYTES, encodeRecordInto } from './format.js';

/**
 * Buffered mode writes the buffer out once it holds this much (bounded memory; not a durability
 * point). A blocking write of this size costs less than handing it to the thread pool and waking the
 * writer again, and it keeps memory bounded without any waiting.
 */
export const WRITE_BUFFER_BYTES = 256 * 1024;

/** The disk operations a page uses (DiskOps has them; a page does not need the rest). */
export interface PageDiskOps {
  writeSync(fh: FileHandle, file: string, buf: Buffer, position: number, operation?: string): void;
  fsync(fh: FileHandle, file: string, operation: string): Promise<void>;
  /** How many of the page's records an fsync covers, given the count flushed when it was issued. */
  recordsCoveredBySync(flushedAtIssue: number, page: PageWriter): number;
}

export class PageWriter {
  /** Bytes of the page including unflushed records. */
  appendedBytes: number;
  appendedCount: number;
  /** Bytes and records written to the file. */
  flushedBytes: number;
  flushedCount: number;
  /** Records covered by a completed fsync. */
  syncedCount: number;
  /** Records are encoded here; [0, bufferFillBytes) is appended but not written to the file yet. */
  private buffer = Buffer.allocUnsafe(WRITE_BUFFER_BYTES);
  private bufferFillBytes = 0;
  /** A failed write leaves the file's tail unknown: every later write and flush fails with it. */
  private writeError: Error | null = null;
  private syncInFlight: { promise: Promise<void>; coversCount: number } | null = null;
  private syncNext: Promise<void> | null = null;

  constructor(
    private readonly ops: PageDiskOps,
    readonly file: string,
    readonly pageNum: number,
    readonly firstSeq: number,
    readonly fh: FileHandle,
    sizeBytes: number,
    durableCount: number,
    /** Called after each fsync that advanced syncedCount. */
    private readonly onSynced: (page: PageWriter) => void,
  ) {
    this.appendedBytes = this.flushedBytes = sizeBytes;
    this.appendedCount = this.flushedCount = this.syncedCount = durableCount;
  }

  get lastAppendedSeq(): number {
    return this.firstSeq + this.appendedCount - 1;
  }
  get lastSyncedSeq(): number {
    return this.firstSeq + this.syncedCount - 1;
  }

  /** Buffered design: encodes the record into the write buffer, writing the buffer out first if it is full. Throws QueueIOError. */
  append(seq: number, data: Buffer): void {
    const lengthBytes = RECORD_OVERHEAD_BYTES + data.length;
    if (this.bufferFillBytes + lengthBytes > this.buffer.length) {
      this.writeOut();
      if (lengthBytes > this.buffer.length) this.buffer = Buffer.allocUnsafe(lengthBytes); // one event bigger than the buffer
    }
    this.encode(seq, data);
  }

  /** Sync design: the record goes to the file now (blocking write). Throws QueueIOError. */
  appendWriteThrough(seq: number, data: Buffer): void {
    this.append(seq, data);
    this.writeOut();
  }

  private encode(seq: number, data: Buffer): void {
    if (seq !== this.firstSeq + this.appendedCount) {
      throw new Error(`invariant: page ${this.pageNum} appends seq ${seq}, expected ${this.firstSeq + this.appendedCount}`);
    }
    const lengthBytes = encodeRecordInto(this.buffer, this.bufferFillBytes, seq, data);
    this.bufferFillBytes += lengthBytes;
    this.appendedBytes += lengthBytes;
    this.appendedCount += 1;
  }

  /** Writes the buffer to the file at the flushed end. */
  private writeOut(): void {
    if (this.writeError) throw this.writeError;
    if (this.bufferFillBytes === 0) return;
    try {
      this.ops.writeSync(this.fh, this.file, this.buffer.subarray(0, this.bufferFillBytes), this.flushedBytes, 'write records');
    } catch (err) {
      this.writeError = err instanceof Error ? err : new Error(String(err));
      throw err;
    }
    this.flushedBytes += this.bufferFillBytes;
    this.flushedCount = this.appendedCount;
    this.bufferFillBytes = 0;
    if (this.flushedBytes !== this.appendedBytes) throw new Error(`invariant: page ${this.pageNum} flushed ${this.flushedBytes} of ${this.appendedBytes} bytes`);
  }

  /** Writes every record appended so far to the file; settles at once (rejects with a write error). */
  flush(): Promise<void> {
    try {
      this.writeOut();
      return Promise.resolve();
    } catch (err) {
      return Promise.reject(err);
    }
  }

  /** fsyncs everything flushed before the call. Concurrent callers share one fsync (group commit). */
  sync(): Promise<void> {
    const target = this.flushedCount;
    if (this.syncedCount >= target) return Promise.resolve();
    if (this.syncInFlight === null) return this.startSync();
    if (this.syncInFlight.coversCount >= target) return this.syncInFlight.promise;
    if (this.syncNext === null) {
      this.syncNext = this.syncInFlight.promise.then(() => {
        this.syncNext = null;
        return this.startSync();
      });
      this.syncNext.catch(() => undefined);
    }
    return this.syncNext;
  }

  private startSync(): Promise<void> {
    const coversCount = this.flushedCount;
    const promise = this.ops.fsync(this.fh, this.file, 'fsync of page').then(
      () => {
        this.syncInFlight = null;
        const covered = this.ops.recordsCoveredBySync(coversCount, this);
        if (covered > this.syncedCount) {
          this.syncedCount = covered;
          this.onSynced(this);
        }
      },
      (err: unknown) => {
        this.syncInFlight = null;
        throw err;
      },
    );
    promise.catch(() => undefined);
    this.syncInFlight = { promise, coversCount };
    return promise;
  }

  /** Waits for in-flight fsyncs (their errors are already reported elsewhere). */
  async settle(): Promise<void> {
    await this.syncInFlight?.promise.catch(() => undefined);
    await this.syncNext?.catch(() => undefined);
  }
}
