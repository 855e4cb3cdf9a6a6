// The queue's disk operations and crash-ordering steps, as one injectable object.
// Production uses DiskOps as is; the known-bad variants (properties/variants) subclass it and
// override exactly one step each, so the queue itself carries no switches for them.
import { renameSync, writeSync } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { QueueIOError } from './errors.js';
import { encodePageHeader, PAGE_HEADER_BYTES, pageFileName, recordCrcValid } from './format.js';
import type { PageWriter } from './page.js';

function asIOError(file: string, operation: string, err: unknown): QueueIOError {
  if (err instanceof QueueIOError) return err;
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  return new QueueIOError(file, operation, typeof code === 'string' ? code : String(err), err);
}

/** A place in the queue's pages: a record's page, its offset there, and its seq. */
export interface ReadPosition {
  pageNum: number;
  offsetBytes: number;
  seq: number;
}

export class DiskOps {
  /** Wraps one I/O step so that any failure names the file, the operation and the errno. */
  async step<T>(file: string, operation: string, fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (err) {
      throw asIOError(file, operation, err);
    }
  }

  /** step, for a blocking call. */
  stepSync<T>(file: string, operation: string, fn: () => T): T {
    try {
      return fn();
    } catch (err) {
      throw asIOError(file, operation, err);
    }
  }

  async openFile(file: string, flags: string, operation = 'open'): Promise<FileHandle> {
    return this.step(file, operation, () => open(file, flags));
  }

  async closeFile(fh: FileHandle, file: string): Promise<void> {
    await this.step(file, 'close', () => fh.close());
  }

  /**
   * Blocking positional write (a short write is continued): page headers, page records (both page
   * write designs) and checkpoint records. Short syscalls run on the caller's thread: handing each to
   * the thread pool costs more than the call (the woken worker preempts the writer on a busy machine). Only fsyncs, which wait for the disk,
   * run in the background.
   */
  writeSync(fh: FileHandle, file: string, buf: Buffer, position: number, operation = 'write'): void {
    this.stepSync(file, operation, () => {
      let done = 0;
      while (done < buf.length) {
        const bytesWritten = writeSync(fh.fd, buf, done, buf.length - done, position + done);
        if (bytesWritten <= 0) throw Object.assign(new Error('short write'), { code: 'EIO' });
        done += bytesWritten;
      }
    });
  }

  async truncate(fh: FileHandle, file: string, lengthBytes: number): Promise<void> {
    await this.step(file, 'truncate', () => fh.truncate(lengthBytes));
  }

  /** fsync of a file. An error is final: the caller's data is not durable and the queue stops. */
  async fsync(fh: FileHandle, file: string, operation: string): Promise<void> {
    await this.step(file, operation, () => fh.sync());
  }

  async fsyncDir(dir: string, operation = 'fsync of directory'): Promise<void> {
    const fh = await this.openFile(dir, 'r', `open directory for ${operation}`);
    try {
      await this.fsync(fh, dir, operation);
    } finally {
      await fh.close().catch(() => undefined);
    }
  }

  /** Crash-safe new page: create, write header, fsync the page, fsync the directory. */
  async createPage(dir: string, pageNum: number, firstSeq: number): Promise<FileHandle> {
    const file = join(dir, pageFileName(pageNum));
    const fh = await this.openFile(file, 'wx+', 'create page');
    this.writeSync(fh, file, encodePageHeader({ pageNum, firstSeq }), 0, 'write page header');
    await this.syncNewPageHeader(fh, file);
    await this.syncDirAfterCreate(dir);
    return fh;
  }

  protected async syncNewPageHeader(fh: FileHandle, file: string): Promise<void> {
    await this.fsync(fh, file, 'fsync of new page header');
  }

  protected async syncDirAfterCreate(dir: string): Promise<void> {
    await this.fsyncDir(dir, 'fsync of directory after creating a page');
  }

  /** Truncates or creates `file`, writes `bytes` and fsyncs it; `what` names the file in errors. */
  async writeFileSynced(file: string, bytes: Buffer, what: string): Promise<void> {
    const fh = await this.openFile(file, 'w', `open ${what}`);
    try {
      this.writeSync(fh, file, bytes, 0);
      await this.fsync(fh, file, `fsync of ${what}`);
    } finally {
      await fh.close().catch(() => undefined);
    }
  }

  /** tmp file, fsync, rename over, fsync the directory: the file is either old or new after a crash. */
  async replaceFileAtomically(file: string, bytes: Buffer): Promise<void> {
    const tmp = `${file}.tmp`;
    await this.writeFileSynced(tmp, bytes, 'temporary file');
    this.stepSync(file, 'rename temporary file over', () => renameSync(tmp, file));
    await this.fsyncDir(join(file, '..'), 'fsync of directory after rename');
  }

  /** The checkpoint upgrade's first step (atomic-file to append-log, at recovery): the new log, made durable in place. */
  async writeUpgradedCheckpointLog(file: string, bytes: Buffer): Promise<void> {
    await this.replaceFileAtomically(file, bytes);
  }

  /** How the atomic-file design writes checkpoint.head. */
  async writeCheckpointFile(file: string, bytes: Buffer): Promise<void> {
    await this.replaceFileAtomically(file, bytes);
  }

  /** Where recovery starts reading a page's records: right after its header, at the seq the header names. */
  pageRecordsStart(_page: Buffer, firstSeq: number): { offsetBytes: number; seq: number } {
    return { offsetBytes: PAGE_HEADER_BYTES, seq: firstSeq };
  }

  /** Where reading resumes after recovery: at the first unacked record, not at the start of its page (`_pageStart`). */
  resumeReadingAt(firstUnacked: ReadPosition, _pageStart: ReadPosition): ReadPosition {
    return firstUnacked;
  }

  /** CRC check of one framed record, used by recovery and by reads. */
  recordChecksumValid(record: Buffer): boolean {
    return recordCrcValid(record);
  }

  /**
   * Makes the head page's data durable before a checkpoint; returns how many of its records the
   * checkpoint may claim (only records flushed and fsynced before the checkpoint is written).
   */
  async prepareCheckpoint(head: PageWriter): Promise<number> {
    await head.flush();
    await head.sync();
    return head.syncedCount;
  }

  /**
   * A checkpoint that moves past fully acked pages, then their purge: the pages may go only once the
   * checkpoint that stops referencing them is durable. `purge` returns how many pages it deleted.
   */
  async checkpointThenPurge(writeCheckpoint: () => Promise<void>, purge: () => Promise<number>, _dir: string): Promise<void> {
    await writeCheckpoint();
    await purge();
  }

  /**
   * How many records of a page an fsync covers, given the count flushed when it was issued (it
   * covers exactly those: records written while it is in flight may reach the disk after it).
   */
  recordsCoveredBySync(flushedAtIssue: number, _page: PageWriter): number {
    return flushedAtIssue;
  }

  /** Before rolling to a new page the old one is flushed and fsynced: a tail page is always complete. */
  async sealPageBeforeRoll(page: PageWriter): Promise<void> {
    await page.flush();
    await page.sync();
  }
}
