// Test support for the queue's tests (no test framework imports): temp dirs and a DiskOps that fails or counts on demand.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FileHandle } from 'node:fs/promises';
import { DiskOps } from './ops.js';
import { QueueIOError } from './errors.js';

const dirs: string[] = [];
export async function tempQueueDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'powercut-queue-'));
  dirs.push(dir);
  return join(dir, 'q');
}
export async function removeTempQueueDirs(): Promise<void> {
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
}

/** Records every fsync and can make the matching ones fail with an errno, or hold them. */
export class SpyOps extends DiskOps {
  fsyncs: string[] = [];
  failFsync: { match: RegExp; errno: string } | null = null;
  failWrite: { match: RegExp; errno: string } | null = null;
  hold: Promise<void> | null = null;
  dirFsyncs = 0;
  /** Writes failed by failWrite so far. */
  failedWrites = 0;

  override async fsync(fh: FileHandle, file: string, operation: string): Promise<void> {
    this.fsyncs.push(operation);
    if (this.hold) await this.hold;
    if (this.failFsync && this.failFsync.match.test(operation)) {
      const { errno } = this.failFsync;
      await this.step(file, operation, () => Promise.reject(Object.assign(new Error(errno), { code: errno })));
    }
    await super.fsync(fh, file, operation);
  }
  override async fsyncDir(dir: string, operation?: string): Promise<void> {
    this.dirFsyncs += 1;
    await super.fsyncDir(dir, operation);
  }
  override writeSync(fh: FileHandle, file: string, buf: Buffer, position: number, operation = 'write'): void {
    if (this.failWrite && this.failWrite.match.test(operation)) {
      this.failedWrites++;
      throw new QueueIOError(file, operation, this.failWrite.errno);
    }
    super.writeSync(fh, file, buf, position, operation);
  }
}
