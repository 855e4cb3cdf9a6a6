// The two checkpoint designs, loading the newest checkpoint, and the atomic-file -> append-log upgrade.
import { readFile, stat, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import type { FileHandle } from 'node:fs/promises';
import type { CheckpointDesign } from './types.js';
import { DamagedQueueError, FormatError } from './errors.js';
import { CHECKPOINT_BYTES, decodeCheckpoint, encodeCheckpoint, isError, type Checkpoint } from './format.js';
import type { DiskOps } from './ops.js';

export const CHECKPOINT_HEAD_FILE = 'checkpoint.head';
export const CHECKPOINT_LOG_FILE = 'checkpoint.log';
/** The append log is rewritten to a single record once it holds this many. */
export const LOG_COMPACT_RECORDS = 1024;

export interface CheckpointStore {
  readonly design: CheckpointDesign;
  write(ck: Checkpoint): Promise<void>;
  close(): Promise<void>;
}

/** checkpoint.head, replaced with tmp + fsync + rename + directory fsync. */
export class AtomicFileCheckpointStore implements CheckpointStore {
  readonly design = 'atomic-file';
  private readonly file: string;
  constructor(
    private readonly ops: DiskOps,
    dir: string,
  ) {
    this.file = join(dir, CHECKPOINT_HEAD_FILE);
  }
  async write(ck: Checkpoint): Promise<void> {
    await this.ops.writeCheckpointFile(this.file, encodeCheckpoint(ck));
  }
  async close(): Promise<void> {}
}

/** checkpoint.log: fixed-size CRC'd records appended and fsynced; compacted by an atomic rewrite. */
export class AppendLogCheckpointStore implements CheckpointStore {
  readonly design = 'append-log';
  private readonly file: string;
  private fh: FileHandle | null = null;
  private sizeBytes = 0;
  constructor(
    private readonly ops: DiskOps,
    dir: string,
  ) {
    this.file = join(dir, CHECKPOINT_LOG_FILE);
  }

  /** Starts a fresh log holding ck (also how the log is compacted). */
  async rewrite(ck: Checkpoint): Promise<void> {
    await this.closeHandle();
    await this.ops.replaceFileAtomically(this.file, encodeCheckpoint(ck));
    this.fh = await this.ops.openFile(this.file, 'r+', 'open checkpoint log');
    this.sizeBytes = CHECKPOINT_BYTES;
  }

  async write(ck: Checkpoint): Promise<void> {
    if (this.fh === null || this.sizeBytes >= LOG_COMPACT_RECORDS * CHECKPOINT_BYTES) {
      await this.rewrite(ck);
      return;
    }
    this.ops.writeSync(this.fh, this.file, encodeCheckpoint(ck), this.sizeBytes, 'append to checkpoint log');
    this.sizeBytes += CHECKPOINT_BYTES;
    await this.ops.fsync(this.fh, this.file, 'fsync of checkpoint log');
  }

  private async closeHandle(): Promise<void> {
    const fh = this.fh;
    this.fh = null;
    await fh?.close().catch(() => undefined);
  }
  async close(): Promise<void> {
    await this.closeHandle();
  }
}

export function createCheckpointStore(design: CheckpointDesign, ops: DiskOps, dir: string): CheckpointStore {
  return design === 'atomic-file' ? new AtomicFileCheckpointStore(ops, dir) : new AppendLogCheckpointStore(ops, dir);
}

export interface LoadedCheckpoint {
  checkpoint: Checkpoint;
  file: string;
}

async function readIfExists(file: string): Promise<Buffer | undefined> {
  try {
    return await readFile(file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}

/** The last valid record of an append log, or undefined if it holds none. */
export function lastValidLogRecord(buf: Buffer): { checkpoint: Checkpoint; offsetBytes: number } | undefined {
  for (let offset = Math.floor(buf.length / CHECKPOINT_BYTES) * CHECKPOINT_BYTES - CHECKPOINT_BYTES; offset >= 0; offset -= CHECKPOINT_BYTES) {
    const ck = decodeCheckpoint(buf.subarray(offset, offset + CHECKPOINT_BYTES));
    if (!isError(ck)) return { checkpoint: ck, offsetBytes: offset };
  }
  return undefined;
}

/**
 * Reads the newest checkpoint in dir (undefined for a new queue) and brings the directory to `design`.
 * Upgrade atomic-file -> append-log, crash-safe: (1) write checkpoint.log via tmp + fsync + rename +
 * directory fsync, holding checkpoint.head's record; (2) unlink checkpoint.head, fsync the directory.
 * A crash between (1) and (2) leaves both files with equal content; the log wins and (2) is redone.
 */
export async function loadCheckpoint(dir: string, design: CheckpointDesign, ops: DiskOps): Promise<LoadedCheckpoint | undefined> {
  const headFile = join(dir, CHECKPOINT_HEAD_FILE);
  const logFile = join(dir, CHECKPOINT_LOG_FILE);
  const log = await readIfExists(logFile);
  if (log !== undefined) {
    if (design === 'atomic-file') {
      throw new FormatError(
        `queue ${dir} uses append-log checkpoints (${logFile}); opening it with checkpointDesign 'atomic-file' would be a downgrade, which is not supported`,
      );
    }
    const found = lastValidLogRecord(log);
    if (found === undefined) throw new DamagedQueueError(logFile, 0, `no valid checkpoint record in ${log.length} bytes`);
    if ((await stat(headFile).catch(() => undefined)) !== undefined) {
      await unlink(headFile);
      await ops.fsyncDir(dir, 'fsync of directory after finishing the checkpoint upgrade');
    }
    return { checkpoint: found.checkpoint, file: logFile };
  }
  const head = await readIfExists(headFile);
  if (head === undefined) return undefined;
  const ck = decodeCheckpoint(head);
  if (isError(ck)) throw new DamagedQueueError(headFile, 0, ck.error);
  if (design === 'append-log') {
    await ops.writeUpgradedCheckpointLog(logFile, encodeCheckpoint(ck));
    await unlink(headFile);
    await ops.fsyncDir(dir, 'fsync of directory after the checkpoint upgrade');
    return { checkpoint: ck, file: logFile };
  }
  return { checkpoint: ck, file: headFile };
}
