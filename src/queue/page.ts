// One page file being appended to: an in-memory write buffer, serialized flushes, and group-commit fsync.
import type { FileHandle } from 'node:fs/promises';
import type { DiskOps } from './ops.js';

export class PageWriter {
  /** Bytes of the page including unflushed records. */
  appendedBytes: number;
  appendedCount: number;
  /** Bytes and records written to the file (completed writes only). */
  flushedBytes: number;
  flushedCount: number;
  /** Records covered by a completed fsync. */
  syncedCount: number;
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  private flushChain: Promise<void> = Promise.resolve();
  private syncInFlight: { promise: Promise<void>; coversCount: number } | null = null;
  private syncNext: Promise<void> | null = null;

  constructor(
    private readonly ops: DiskOps,
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
  get unflushedBytes(): number {
    return this.pendingBytes;
  }

  append(record: Buffer): void {
    this.pending.push(record);
    this.pendingBytes += record.length;
    this.appendedBytes += record.length;
    this.appendedCount += 1;
  }

  /** Sync design: the record goes to the file now (blocking write), in order after earlier flushes. */
  appendWriteThrough(record: Buffer): void {
    if (this.pending.length > 0 || this.inflightBytes > 0) throw new Error('invariant: write-through while buffered writes are outstanding');
    this.ops.writeSync(this.fh, this.file, record, this.flushedBytes, 'write records');
    this.appendedBytes += record.length;
    this.appendedCount += 1;
    this.flushedBytes += record.length;
    this.flushedCount += 1;
  }

  /** Bytes handed to a flush that has not completed yet. */
  inflightBytes = 0;

  /** Writes every record appended so far to the file; resolves when they are all written. */
  flush(): Promise<void> {
    if (this.pending.length > 0) {
      const chunks = this.pending;
      const count = chunks.length;
      const bytes = this.pendingBytes;
      this.pending = [];
      this.pendingBytes = 0;
      this.inflightBytes += bytes;
      this.flushChain = this.flushChain.then(async () => {
        const buf = chunks.length === 1 ? chunks[0] : Buffer.concat(chunks);
        await this.ops.write(this.fh, this.file, buf, this.flushedBytes, 'write records');
        this.flushedBytes += buf.length;
        this.flushedCount += count;
        this.inflightBytes -= bytes;
      });
      // The queue observes failures through the callers; this only silences the unobserved copy.
      this.flushChain.catch(() => undefined);
    }
    return this.flushChain;
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
        if (coversCount > this.syncedCount) {
          this.syncedCount = coversCount;
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

  /** Waits for in-flight writes and fsyncs (their errors are already reported elsewhere). */
  async settle(): Promise<void> {
    await this.flushChain.catch(() => undefined);
    await this.syncInFlight?.promise.catch(() => undefined);
    await this.syncNext?.catch(() => undefined);
  }
}
