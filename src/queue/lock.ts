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

/** The pid in a complete lock file; an empty or torn one (no newline: its write never finished or was never synced) has no holder. */
function lockHolder(text: string): number | undefined {
  const match = /^([1-9][0-9]*)\n$/.exec(text);
  return match ? Number(match[1]) : undefined;
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
      } catch (err) {
        // A partial pid (e.g. "4" of "4711" at ENOSPC) could name a live stranger and lock the queue forever.
        await fh.close().catch(() => undefined);
        await unlink(file).catch(() => undefined);
        throw new QueueIOError(file, 'write lock file', (err as NodeJS.ErrnoException).code ?? String(err), err);
      }
      await fh.close();
      let released = false;
      // Idempotent: a second unlink could delete the lock of whoever opened the queue after us.
      return {
        release: async () => {
          if (released) return;
          released = true;
          await unlink(file).catch(() => undefined);
        },
      };
    } catch (err) {
      if (err instanceof QueueIOError) throw err;
      const code = (err as NodeJS.ErrnoException).code;
      if (code !== 'EEXIST') throw new QueueIOError(file, 'create lock file', code ?? String(err), err);
    }
    const holder = lockHolder(await readFile(file, 'utf8').catch(() => ''));
    if (holder !== undefined && isAlive(holder)) throw new QueueLockedError(dir, holder);
    await unlink(file).catch(() => undefined);
  }
  throw new QueueIOError(file, 'take over stale lock file', 'EEXIST');
}
