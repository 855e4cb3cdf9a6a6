// The lock file: one process per queue directory; a lock left by a dead process is taken over.
import { link, readFile, rename, unlink, writeFile } from 'node:fs/promises';
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

let lockFilesMade = 0;

/**
 * Creates the lock file already holding our pid (written to a private file, then linked into place;
 * link fails if a lock exists). A racer therefore never sees our lock empty or half written and
 * mistakes it for a torn one. False if a lock exists.
 */
async function createComplete(file: string): Promise<boolean> {
  const mine = `${file}.new.${process.pid}.${++lockFilesMade}`;
  try {
    try {
      await writeFile(mine, `${process.pid}\n`, { flag: 'wx' });
    } catch (err) {
      throw new QueueIOError(mine, 'write lock file', (err as NodeJS.ErrnoException).code ?? String(err), err);
    }
    try {
      await link(mine, file);
      return true;
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'EEXIST') return false;
      throw new QueueIOError(file, 'create lock file', code ?? String(err), err);
    }
  } finally {
    await unlink(mine).catch(() => undefined);
  }
}

export async function acquireLock(dir: string): Promise<QueueLock> {
  const file = join(dir, LOCK_FILE);
  // Bounded: each retry follows the removal of a stale lock, or a racer's lock put back.
  for (let attempt = 0; attempt < 4; attempt++) {
    if (await createComplete(file)) {
      let released = false;
      // Idempotent: a second unlink could delete the lock of whoever opened the queue after us.
      return {
        release: async () => {
          if (released) return;
          released = true;
          await unlink(file).catch(() => undefined);
        },
      };
    }
    let staleText: string;
    try {
      staleText = await readFile(file, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') continue; // released or moved meanwhile
      throw new QueueIOError(file, 'read lock file', (err as NodeJS.ErrnoException).code ?? String(err), err);
    }
    const holder = lockHolder(staleText);
    if (holder !== undefined && isAlive(holder)) throw new QueueLockedError(dir, holder);
    await takeOverStale(file, staleText);
  }
  throw new QueueIOError(file, 'take over stale lock file', 'EEXIST');
}

/**
 * Removes the stale lock that read as staleText. A rename moves it aside atomically, so of several
 * racers only one moves it; unlinking instead could delete a lock a faster racer had just created.
 * If what moved is not the stale lock (a racer's new one), it is put back.
 */
async function takeOverStale(file: string, staleText: string): Promise<void> {
  const aside = `${file}.stale.${process.pid}.${++lockFilesMade}`;
  try {
    await rename(file, aside);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return; // another racer moved it
    throw new QueueIOError(file, 'move stale lock file aside', (err as NodeJS.ErrnoException).code ?? String(err), err);
  }
  const movedText = await readFile(aside, 'utf8').catch(() => '');
  // link, not rename: it never replaces a lock created since.
  if (movedText !== staleText) await link(aside, file).catch(() => undefined);
  await unlink(aside).catch(() => undefined);
}
