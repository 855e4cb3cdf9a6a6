// The lock file: one process per queue directory; a lock left by a dead process is taken over.
import { open, readFile, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { QueueLockedError, QueueIOError } from './errors.js';

export const LOCK_FILE = 'lock';

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

export interface QueueLock {
  release(): Promise<void>;
}

export async function acquireLock(dir: string): Promise<QueueLock> {
  const file = join(dir, LOCK_FILE);
  // Two attempts: the second follows the removal of a stale lock.
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fh = await open(file, 'wx');
      try {
        await fh.writeFile(`${process.pid}\n`);
      } finally {
        await fh.close();
      }
      return { release: () => unlink(file).catch(() => undefined) };
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code !== 'EEXIST') throw new QueueIOError(file, 'create lock file', code ?? String(err), err);
    }
    const text = await readFile(file, 'utf8').catch(() => '');
    const pid = Number.parseInt(text.trim(), 10);
    // An empty or torn lock file (its write was never synced) has no live holder either.
    if (Number.isInteger(pid) && pid > 0 && isAlive(pid)) throw new QueueLockedError(dir, pid);
    await unlink(file).catch(() => undefined);
  }
  throw new QueueIOError(file, 'take over stale lock file', 'EEXIST');
}
