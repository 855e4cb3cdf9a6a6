// The persistent queue: write path, group commit, checkpoints, roll and purge, reads, acks, backpressure.
import { mkdir, unlink, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import type { DurabilityState, PersistentQueue, QueueEvent, QueueSettings } from './types.js';
import { BackpressureTimeoutError, DamagedQueueError, EventTooLargeError, QueueUsageError } from './errors.js';
import { maxEventBytes, PAGE_HEADER_BYTES, pageFileName, recordBytes, scanRecords, type Checkpoint } from './format.js';
import { validateSettings } from './settings.js';
import { DiskOps } from './ops.js';
import { PageWriter } from './page.js';
import { AckTracker } from './acks.js';
import { acquireLock, type QueueLock } from './lock.js';
import { createCheckpointStore, type CheckpointStore } from './checkpoints.js';
import { describeStop, recoverQueue, type PageInfo } from './recovery.js';

/**
 * A writer that never waits for I/O (a tight loop of buffered or write-through writes) would starve
 * fsync completions and checkpoints; every this many writes it yields to the event loop once.
 */
const YIELD_EVERY_WRITES = 64;
/** Reads fetch at most this much of a page per file read. */
const READ_CHUNK_BYTES = 1024 * 1024;
/** The longest delay setTimeout honours. */
const MAX_TIMER_MS = 2 ** 31 - 1;

interface SpaceWaiter {
  recordBytes: number;
  resolve: () => void;
  reject: (err: Error) => void;
  timer?: NodeJS.Timeout;
}
interface DurableWaiter {
  seq: number;
  resolve: () => void;
  reject: (err: Error) => void;
}

export class Queue implements PersistentQueue {
  private failure: Error | null = null;
  private closed = false;
  private closing: Promise<void> | null = null;
  private durableSeq: number;
  private durableFirstUnacked: number;
  private lastSeq: number;
  /** Writes since the last checkpoint completed. */
  private writesSinceCheckpoint = 0;
  /** The checkpoint the write count asked for, until it completes. */
  private writeCountCheckpoint: Promise<void> | null = null;
  private metaLane: Promise<void> = Promise.resolve();
  private checkpointQueued: Promise<void> | null = null;
  private rolling: Promise<void> | null = null;
  private readLane: Promise<unknown> = Promise.resolve();
  private readerFh: { pageNum: number; fh: FileHandle } | null = null;
  /** Delivered, not yet acked: seq -> record bytes. */
  private readonly delivered = new Map<number, number>();
  private readonly spaceWaiters: SpaceWaiter[] = [];
  private durableWaiters: DurableWaiter[] = [];
  private readonly readWakers = new Set<() => void>();
  private readonly listeners = new Set<(state: DurabilityState) => void>();

  private constructor(
    readonly dir: string,
    readonly settings: Readonly<QueueSettings>,
    private readonly ops: DiskOps,
    private readonly lock: QueueLock,
    private readonly store: CheckpointStore,
    /** Tail pages (complete, synced) then the head page's info, in page order. */
    private readonly pages: PageInfo[],
    private head: PageWriter,
    private readonly acks: AckTracker,
    private reader: { pageNum: number; offsetBytes: number; nextSeq: number },
    private unackedBytes: number,
    private unackedCount: number,
    lastSeq: number,
  ) {
    this.lastSeq = lastSeq;
    this.durableSeq = lastSeq;
    this.durableFirstUnacked = acks.firstUnacked;
  }

  /** Opens (creating or recovering) the queue in dir. `ops` is the disk strategy (variants inject theirs). */
  static async open(dir: string, partial: Partial<QueueSettings> = {}, ops: DiskOps = new DiskOps()): Promise<Queue> {
    const settings = Object.freeze(validateSettings(partial));
    await mkdir(dir, { recursive: true });
    const lock = await acquireLock(dir);
    try {
      const state = await recoverQueue(dir, settings.checkpointDesign, ops);
      const headInfo = state.pages[state.pages.length - 1];
      const store = createCheckpointStore(settings.checkpointDesign, ops, dir);
      let queue: Queue | undefined;
      const head = new PageWriter(ops, headInfo.file, headInfo.pageNum, headInfo.firstSeq, state.headFh, headInfo.sizeBytes, headInfo.count, (p) =>
        queue?.pageSynced(p),
      );
      queue = new Queue(
        dir,
        settings,
        ops,
        lock,
        store,
        state.pages,
        head,
        new AckTracker(state.firstUnackedSeq),
        { pageNum: state.reader.pageNum, offsetBytes: state.reader.offsetBytes, nextSeq: state.reader.seq },
        state.unackedBytes,
        state.unackedCount,
        state.lastSeq,
      );
      // A fresh durable checkpoint: it covers what recovery found and synced, and compacts the append log.
      try {
        await queue.checkpoint();
      } catch (err) {
        await queue.close().catch(() => undefined);
        throw err;
      }
      return queue;
    } catch (err) {
      await lock.release();
      throw err;
    }
  }

  // ---- write path ----

  /** Not async: the common case appends synchronously and returns a settled promise (no per-write await chain). */
  write(data: Buffer): Promise<number> {
    try {
      this.assertUsable('write');
      if (!Buffer.isBuffer(data)) throw new QueueUsageError(`write: data must be a Buffer, got ${typeof data}`);
      const bytes = recordBytes(data.length);
      const maxBytes = maxEventBytes(this.settings.pageCapacityBytes);
      if (data.length > maxBytes) {
        throw new EventTooLargeError(
          `event of ${data.length} bytes does not fit in a page: pageCapacityBytes ${this.settings.pageCapacityBytes} holds events of up to ${maxBytes} bytes`,
        );
      }
      if (this.spaceWaiters.length === 0 && this.fits(bytes) && !this.rolling && this.head.appendedBytes + bytes <= this.settings.pageCapacityBytes) {
        this.reserve(bytes);
        return this.append(data);
      }
      return this.writeAfterWaiting(data, bytes);
    } catch (err) {
      return Promise.reject(err);
    }
  }

  /** The slow path: backpressure, or a roll to a new page first. */
  private async writeAfterWaiting(data: Buffer, bytes: number): Promise<number> {
    await this.admit(bytes);
    for (;;) {
      this.assertUsable('write');
      if (this.rolling) await this.rolling;
      else if (this.head.appendedBytes + bytes > this.settings.pageCapacityBytes) await this.roll();
      else break;
    }
    return this.append(data);
  }

  /** Appends at the head (space reserved, page has room); checkpoints and flushes run behind it. */
  private append(data: Buffer): Promise<number> {
    const seq = ++this.lastSeq;
    try {
      if (this.settings.pageWriteDesign === 'sync') this.head.appendWriteThrough(seq, data);
      else this.head.append(seq, data);
    } catch (err) {
      this.fail(err);
      throw err;
    }
    if (this.readWakers.size > 0) for (const wake of this.readWakers) wake();
    this.writesSinceCheckpoint += 1;
    if (this.settings.checkpointWrites > 0 && this.writesSinceCheckpoint >= this.settings.checkpointWrites && !this.writeCountCheckpoint) {
      // As in Logstash, checkpointWrites writes lie between the end of one checkpoint and the start of
      // the next (there the writer waits for the checkpoint; here it does not). Starting the next one
      // as soon as the last ends would keep the disk busy with checkpoints and slow the writer down.
      const done = this.requestCheckpoint();
      this.writeCountCheckpoint = done;
      this.background(
        done.finally(() => {
          this.writeCountCheckpoint = null;
        }),
      );
    }
    if (seq % YIELD_EVERY_WRITES === 0) return new Promise<number>((resolve) => setImmediate(resolve, seq));
    return Promise.resolve(seq);
  }

  async waitDurable(seq: number): Promise<void> {
    this.assertUsable('waitDurable');
    if (!Number.isInteger(seq) || seq < 1 || seq > this.lastSeq) {
      throw new QueueUsageError(`waitDurable: seq ${seq} was never written (written seqs are 1..${this.lastSeq})`);
    }
    if (seq <= this.durableSeq) return;
    const promise = new Promise<void>((resolve, reject) => this.durableWaiters.push({ seq, resolve, reject }));
    // A seq below the head page is in a page being sealed by a roll, which makes it durable.
    if (seq >= this.head.firstSeq) {
      const head = this.head;
      this.background(head.flush().then(() => head.sync()));
    }
    return promise;
  }

  private pageSynced(page: PageWriter): void {
    this.advanceDurable(page.lastSyncedSeq);
  }

  private advanceDurable(seq: number): void {
    if (seq <= this.durableSeq) return;
    this.durableSeq = seq;
    const ready = this.durableWaiters.filter((w) => w.seq <= seq);
    this.durableWaiters = this.durableWaiters.filter((w) => w.seq > seq);
    for (const w of ready) w.resolve();
    this.emit();
  }

  /** Backpressure: waits (FIFO) until the unacked events leave room, bounded by writeTimeoutMs. */
  private admit(bytes: number): Promise<void> {
    if (this.spaceWaiters.length === 0 && this.fits(bytes)) {
      this.reserve(bytes);
      return Promise.resolve();
    }
    return new Promise<void>((resolve, reject) => {
      const waiter: SpaceWaiter = { recordBytes: bytes, resolve, reject };
      if (this.settings.writeTimeoutMs > 0) {
        waiter.timer = setTimeout(() => {
          this.spaceWaiters.splice(this.spaceWaiters.indexOf(waiter), 1);
          reject(
            new BackpressureTimeoutError(
              `write waited ${this.settings.writeTimeoutMs} ms (writeTimeoutMs) for space: the queue holds ${this.unackedCount} unacked events ` +
                `(maxEvents ${this.settings.maxEvents || 'unlimited'}) and ${this.unackedBytes} bytes (maxBytes ${this.settings.maxBytes}); ack events to make room`,
            ),
          );
          this.wakeWriters();
        }, this.settings.writeTimeoutMs);
      }
      this.spaceWaiters.push(waiter);
    });
  }

  private fits(bytes: number): boolean {
    const { maxBytes, maxEvents } = this.settings;
    return this.unackedBytes + bytes <= maxBytes && (maxEvents === 0 || this.unackedCount < maxEvents);
  }
  private reserve(bytes: number): void {
    this.unackedBytes += bytes;
    this.unackedCount += 1;
  }
  private wakeWriters(): void {
    while (this.spaceWaiters.length > 0 && this.fits(this.spaceWaiters[0].recordBytes)) {
      const w = this.spaceWaiters.shift()!;
      clearTimeout(w.timer);
      this.reserve(w.recordBytes);
      w.resolve();
    }
  }

  /** Seals the head page and starts the next; writers wait for it. */
  private roll(): Promise<void> {
    if (this.rolling) return this.rolling;
    this.rolling = this.onMetaLane(async () => {
      const old = this.head;
      await this.ops.sealPageBeforeRoll(old);
      // The seal's contract: the whole old page is durable (a tail page is always complete).
      this.advanceDurable(old.lastAppendedSeq);
      const pageNum = old.pageNum + 1;
      const firstSeq = this.lastSeq + 1;
      const fh = await this.ops.createPage(this.dir, pageNum, firstSeq);
      const file = join(this.dir, pageFileName(pageNum));
      this.pages[this.pages.length - 1].sizeBytes = old.appendedBytes;
      this.pages[this.pages.length - 1].count = old.appendedCount;
      this.pages.push({ pageNum, firstSeq, file, sizeBytes: PAGE_HEADER_BYTES, count: 0 });
      this.head = new PageWriter(this.ops, file, pageNum, firstSeq, fh, PAGE_HEADER_BYTES, 0, (p) => this.pageSynced(p));
      // Before any record goes into the new page, a durable checkpoint points at it.
      await this.writeCheckpoint();
      // A no-op after a correct seal; it is where RollWithoutFlush's unsealed buffer reaches the file (late, never fsynced).
      await old.flush();
      await old.settle();
      await this.ops.closeFile(old.fh, old.file);
    }).finally(() => {
      this.rolling = null;
    });
    return this.rolling;
  }

  // ---- checkpoints ----

  async checkpoint(): Promise<void> {
    this.assertUsable('checkpoint');
    await this.guard(this.requestCheckpoint());
  }

  /** Coalesces: a request joins a checkpoint that has not started yet, else queues the next one. */
  private requestCheckpoint(): Promise<void> {
    if (this.checkpointQueued) return this.checkpointQueued;
    const queued = this.onMetaLane(() => {
      this.checkpointQueued = null;
      return this.writeCheckpoint();
    });
    this.checkpointQueued = queued;
    return queued;
  }

  /** Runs on the meta lane. Acks are snapshotted first: every acked event was flushed before delivery. */
  private async writeCheckpoint(): Promise<void> {
    const firstUnackedSeq = this.acks.firstUnacked;
    const head = this.head;
    const elementCount = await this.ops.prepareCheckpoint(head);
    const ck: Checkpoint = {
      headPageNum: head.pageNum,
      firstUnackedPageNum: this.pageOf(firstUnackedSeq).pageNum,
      firstUnackedSeq,
      minSeq: head.firstSeq,
      elementCount,
    };
    const purge = async (): Promise<number> => {
      let deleted = 0;
      for (; this.pages[0].pageNum < ck.firstUnackedPageNum; deleted++) {
        const page = this.pages.shift()!;
        await this.ops.step(page.file, 'delete acked page', () => unlink(page.file));
      }
      return deleted;
    };
    const checkpointDurable = async (): Promise<void> => {
      await this.store.write(ck);
      this.writesSinceCheckpoint = 0;
      if (firstUnackedSeq > this.durableFirstUnacked) {
        this.durableFirstUnacked = firstUnackedSeq;
        this.emit();
      }
    };
    await this.ops.checkpointThenPurge(checkpointDurable, purge, this.dir);
  }

  private pageOf(seq: number): PageInfo {
    for (let i = this.pages.length - 1; i >= 0; i--) if (this.pages[i].firstSeq <= seq) return this.pages[i];
    throw new Error(`invariant: seq ${seq} is below the first live page`);
  }

  // ---- reads and acks ----

  async readBatch(maxEvents: number, timeoutMs: number): Promise<QueueEvent[]> {
    this.assertUsable('readBatch');
    if (!Number.isInteger(maxEvents) || maxEvents < 1) throw new QueueUsageError(`readBatch: maxEvents must be an integer >= 1, got ${maxEvents}`);
    // setTimeout clamps a longer delay to 1 ms: the wait would become a polling loop.
    if (!(timeoutMs >= 0 && timeoutMs <= MAX_TIMER_MS)) throw new QueueUsageError(`readBatch: timeoutMs must be a number from 0 to ${MAX_TIMER_MS}, got ${timeoutMs}`);
    // One reader at a time: the read cursor is shared.
    const result = this.readLane.then(() => this.readWhenAvailable(maxEvents, timeoutMs));
    this.readLane = result.catch(() => undefined);
    return result;
  }

  private async readWhenAvailable(maxEvents: number, timeoutMs: number): Promise<QueueEvent[]> {
    const deadline = Date.now() + timeoutMs;
    const events: QueueEvent[] = [];
    for (;;) {
      this.assertUsable('readBatch');
      // Fill the batch across page boundaries with what is already written.
      while (events.length < maxEvents && this.reader.nextSeq <= this.lastSeq) {
        events.push(...(await this.guard(this.readAvailable(maxEvents - events.length))));
      }
      const leftMs = deadline - Date.now();
      if (events.length > 0 || leftMs <= 0) return events;
      await new Promise<void>((resolve) => {
        const wake = () => {
          clearTimeout(timer);
          this.readWakers.delete(wake);
          resolve();
        };
        const timer = setTimeout(wake, leftMs);
        this.readWakers.add(wake);
      });
    }
  }

  /** Reads up to maxEvents records from the reader's page (none only when it steps over a repaired gap). */
  private async readAvailable(maxEvents: number): Promise<QueueEvent[]> {
    const page = this.pageOf(this.reader.nextSeq);
    const next = this.pages[this.pages.indexOf(page) + 1];
    if (next !== undefined && this.reader.nextSeq > page.firstSeq + page.count - 1) {
      // A gap that repair dropped: its seqs are gone, so they count as acked.
      this.acks.add(this.reader.nextSeq, next.firstSeq - 1);
      this.reader = { pageNum: next.pageNum, offsetBytes: PAGE_HEADER_BYTES, nextSeq: next.firstSeq };
      return [];
    }
    if (page.pageNum !== this.reader.pageNum) this.reader = { pageNum: page.pageNum, offsetBytes: PAGE_HEADER_BYTES, nextSeq: this.reader.nextSeq };
    const isHead = page.pageNum === this.head.pageNum;
    if (isHead && this.reader.offsetBytes >= this.head.flushedBytes) await this.head.flush();
    const endBytes = isHead ? this.head.flushedBytes : page.sizeBytes;
    if (this.readerFh?.pageNum !== page.pageNum) {
      await this.readerFh?.fh.close().catch(() => undefined);
      this.readerFh = null;
      this.readerFh = { pageNum: page.pageNum, fh: await this.ops.openFile(page.file, 'r', 'open page for reading') };
    }
    let lengthBytes = Math.min(endBytes - this.reader.offsetBytes, READ_CHUNK_BYTES);
    let buf = await this.readAt(page.file, this.readerFh.fh, this.reader.offsetBytes, lengthBytes);
    if (buf.length >= 12 && recordBytes(buf.readUInt32LE(8)) > buf.length && recordBytes(buf.readUInt32LE(8)) <= endBytes - this.reader.offsetBytes) {
      lengthBytes = recordBytes(buf.readUInt32LE(8)); // one record larger than a chunk
      buf = await this.readAt(page.file, this.readerFh.fh, this.reader.offsetBytes, lengthBytes);
    }
    const events: QueueEvent[] = [];
    const scan = scanRecords(buf, 0, this.reader.nextSeq, {
      verifyCrc: (r) => this.ops.recordChecksumValid(r),
      maxCount: maxEvents,
      onRecord: (seq, data) => events.push({ seq, data: Buffer.from(data) }),
    });
    if (scan.count === 0) {
      throw new DamagedQueueError(page.file, this.reader.offsetBytes, `cannot read seq ${this.reader.nextSeq}: ${describeStop(scan.stop)}`);
    }
    for (const e of events) this.delivered.set(e.seq, recordBytes(e.data.length));
    this.reader = { pageNum: page.pageNum, offsetBytes: this.reader.offsetBytes + scan.endOffset, nextSeq: scan.lastSeq + 1 };
    return events;
  }

  private async readAt(file: string, fh: FileHandle, positionBytes: number, lengthBytes: number): Promise<Buffer> {
    const buf = Buffer.allocUnsafe(lengthBytes);
    const { bytesRead } = await this.ops.step(file, 'read page', () => fh.read(buf, 0, lengthBytes, positionBytes));
    return buf.subarray(0, bytesRead);
  }

  async ack(seqs: readonly number[]): Promise<void> {
    this.assertUsable('ack');
    const unique = new Set(seqs);
    if (unique.size !== seqs.length) throw new QueueUsageError('ack: the same seq appears twice in one call');
    for (const seq of seqs) {
      if (!this.delivered.has(seq)) {
        throw new QueueUsageError(`ack: seq ${seq} is not a delivered, unacked event (delivered and unacked: ${this.delivered.size} events)`);
      }
    }
    for (const seq of seqs) {
      this.unackedBytes -= this.delivered.get(seq)!;
      this.unackedCount -= 1;
      this.delivered.delete(seq);
      this.acks.add(seq);
    }
    this.wakeWriters();
    if (this.acks.firstUnacked - this.durableFirstUnacked >= this.settings.checkpointAcks) {
      await this.guard(this.requestCheckpoint());
    }
  }

  // ---- state, failure, close ----

  durability(): DurabilityState {
    return { durableSeq: this.durableSeq, durableFirstUnackedSeq: this.durableFirstUnacked };
  }

  /** What backpressure counts now (unacked events and their record bytes): a replicated queue's primary admits writes from it. */
  backlog(): { unackedCount: number; unackedBytes: number } {
    return { unackedCount: this.unackedCount, unackedBytes: this.unackedBytes };
  }

  onDurable(listener: (state: DurabilityState) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /**
   * What the durability the queue reports must satisfy, checked whenever it changes: nothing unwritten
   * is durable, no ack is durable before the ack itself was made, and no ack is durable for an event
   * that is not (records are synced before a checkpoint covering their acks).
   */
  private assertDurability(): void {
    const broken = (what: string) => {
      throw new Error(`queue invariant broken in ${this.dir}: ${what}`);
    };
    if (this.durableSeq > this.lastSeq) broken(`durableSeq ${this.durableSeq} > lastSeq ${this.lastSeq}`);
    if (this.durableFirstUnacked > this.acks.firstUnacked) broken(`durableFirstUnackedSeq ${this.durableFirstUnacked} > first unacked seq ${this.acks.firstUnacked}`);
    if (this.durableFirstUnacked > this.durableSeq + 1) broken(`durableFirstUnackedSeq ${this.durableFirstUnacked} > durableSeq ${this.durableSeq} + 1`);
  }

  private emit(): void {
    this.assertDurability();
    const state = this.durability();
    for (const listener of this.listeners) {
      try {
        listener(state);
      } catch (err) {
        process.emitWarning(`powercut queue: an onDurable listener threw: ${err instanceof Error ? err.message : String(err)}`);
      }
    }
  }

  private onMetaLane(step: () => Promise<void>): Promise<void> {
    const run = this.metaLane.then(step);
    this.metaLane = run;
    run.catch((err: unknown) => this.fail(err));
    return run;
  }

  /** Runs a promise the caller does not wait for; its failure stops the queue. */
  private background(promise: Promise<unknown>): void {
    promise.catch((err: unknown) => this.fail(err));
  }

  /** Awaits an internal step; a failure stops the queue and is rethrown to this caller. */
  private async guard<T>(promise: Promise<T>): Promise<T> {
    try {
      return await promise;
    } catch (err) {
      this.fail(err);
      throw this.failure ?? err;
    }
  }

  private fail(err: unknown): void {
    if (this.failure) return;
    this.failure = err instanceof Error ? err : new Error(String(err));
    for (const w of this.durableWaiters) w.reject(this.failure);
    this.durableWaiters = [];
    for (const w of this.spaceWaiters.splice(0)) {
      clearTimeout(w.timer);
      w.reject(this.failure);
    }
    for (const wake of this.readWakers) wake();
  }

  private assertUsable(operation: string): void {
    if (this.failure) throw this.failure;
    // From the moment close() starts: a write after its final checkpoint would get a seq and never reach the disk.
    if (this.closing) throw new QueueUsageError(`${operation}: the queue in ${this.dir} is closed`);
  }

  /**
   * Flushes, fsyncs and checkpoints (unless the queue failed), then releases files and the lock.
   * Rejects with the queue's failure if it failed at any time, also in the background.
   */
  async close(): Promise<void> {
    this.closing ??= this.doClose();
    return this.closing;
  }

  private async doClose(): Promise<void> {
    let error: unknown;
    if (!this.failure && !this.closed) {
      try {
        await this.guard(this.requestCheckpoint());
      } catch (err) {
        error = err;
      }
    }
    this.closed = true;
    const closedError = new QueueUsageError(`the queue in ${this.dir} was closed`);
    for (const w of this.spaceWaiters.splice(0)) {
      clearTimeout(w.timer);
      w.reject(closedError);
    }
    for (const w of this.durableWaiters) w.reject(this.failure ?? closedError);
    this.durableWaiters = [];
    for (const wake of this.readWakers) wake();
    await this.metaLane.catch(() => undefined);
    await this.rolling?.catch(() => undefined);
    await this.head.settle();
    await this.head.fh.close().catch(() => undefined);
    await this.readerFh?.fh.close().catch(() => undefined);
    await this.store.close();
    await this.lock.release();
    // A failure the caller may never have seen (a background checkpoint or fsync) must reach close() too.
    if (error !== undefined) throw error;
    if (this.failure) throw this.failure;
  }
}

/** Opens (creating or recovering) a persistent queue in dir. */
export async function openQueue(dir: string, settings?: Partial<QueueSettings>): Promise<PersistentQueue> {
  return Queue.open(dir, settings);
}
