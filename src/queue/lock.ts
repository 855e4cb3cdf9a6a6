// The lock file: one process per queue directory; a lock left by a dead process is taken over.
//
// Creating a lock is atomic (link of a complete private file: exactly one creator wins). Removing
// a stale one is the hard part: a racer must never remove a lock another racer has just created.
// So a stale lock is removed only by the holder of a second, short-lived lock (`lock.takeover`),
// and only if it is still the same file (inode, change time, holder) that was found stale: while the takeover lock is
// held nobody else can remove the lock, and nobody can create one while it exists, so the check
// and the unlink cannot be separated by a change. After the removal every racer competes to
// create the lock again, and one wins.
//
// One case is not closed: a taker killed while it holds the takeover lock (a few requests) leaves
// it behind, and racers that then find it dead remove it by rename. Two of them arriving together
// can both get through: the second rename moves away the takeover lock the first just created.
// Closing that needs a lock the kernel drops when its holder dies (flock), which this filesystem
// interface does not have; a queue directory is normally reopened by one process after a crash.
import { readFileSync } from 'node:fs';
import { link, open, rename, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { QueueLockedError, QueueIOError } from './errors.js';

/** The file operations the lock uses (tests put an in-memory filesystem under a scheduler here). Errors carry `code`. */
export interface LockFs {
  /** Creates `file` holding `content`; EEXIST if it exists. */
  writeNew(file: string, content: string): Promise<void>;
  /** EEXIST if `to` exists. */
  link(from: string, to: string): Promise<void>;
  unlink(file: string): Promise<void>;
  rename(from: string, to: string): Promise<void>;
  /** Content and identity in one consistent reading; null if the file is gone. */
  read(file: string): Promise<{ text: string; ino: number; ctimeNs: bigint } | null>;
  /** Whether a process with this pid exists. */
  isAlive(pid: number): boolean;
}

export const nodeLockFs: LockFs = {
  writeNew: (file, content) => writeFile(file, content, { flag: 'wx' }),
  link,
  unlink,
  rename,
  async read(file) {
    let fh;
    try {
      fh = await open(file, 'r');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw err;
    }
    try {
      const [{ ino, ctimeNs }, text] = await Promise.all([fh.stat({ bigint: true }), fh.readFile('utf8')]);
      return { text, ino: Number(ino), ctimeNs };
    } finally {
      await fh.close();
    }
  },
  isAlive(pid) {
    try {
      process.kill(pid, 0);
    } catch (err) {
      return (err as NodeJS.ErrnoException).code === 'EPERM';
    }
    // A zombie is dead, only not reaped: a holder SIGKILLed after its parent died stays one where
    // init does not reap orphans (some containers), and must not hold the queue forever.
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
    } catch {
      return true; // no /proc: kill(0) is all there is
    }
  },
};

export const LOCK_FILE = 'lock';
const TAKEOVER_FILE = 'lock.takeover';
/** A live process holds the takeover lock for a few requests; racers wait for it this long at most. */
const TAKEOVER_WAIT_MS = 2_000;
const TAKEOVER_POLL_MS = 2;

/**
 * Lock file content: the holder's pid, zero-padded to a fixed width. The width never depends on
 * the pid, so the bytes a queue writes (and where a full disk or a crash point lands) replay
 * exactly whatever pid the machine hands out.
 */
export const LOCK_PID_DIGITS = 10;
export function lockFileContent(pid: number): string {
  return `${String(pid).padStart(LOCK_PID_DIGITS, '0')}\n`;
}

/** The pid in a complete lock file; an empty or torn one (no newline: its write never finished or was never synced) has no holder. */
function lockHolder(text: string): number | undefined {
  const match = /^0*([1-9][0-9]*)\n$/.exec(text);
  return match ? Number(match[1]) : undefined;
}

export interface QueueLock {
  release(): Promise<void>;
}

let lockFilesMade = 0;

const ioError = (file: string, operation: string, err: unknown) =>
  new QueueIOError(file, operation, (err as NodeJS.ErrnoException).code ?? String(err), err);

/**
 * Creates `file` already holding our pid (written to a private file, then linked into place; link
 * fails if `file` exists). A racer therefore never sees it empty or half written and mistakes it
 * for a torn one. False if `file` exists.
 */
async function createComplete(fs: LockFs, file: string): Promise<boolean> {
  const mine = `${file}.new.${process.pid}.${++lockFilesMade}`;
  try {
    try {
      await fs.writeNew(mine, lockFileContent(process.pid));
    } catch (err) {
      throw ioError(mine, 'write lock file', err);
    }
    try {
      await fs.link(mine, file);
      return true;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
      throw ioError(file, 'create lock file', err);
    }
  } finally {
    await fs.unlink(mine).catch(() => undefined);
  }
}

/** Which file a lock is: inodes are reused quickly, so also its change time and holder. */
interface LockIdentity {
  holder: number | undefined;
  ino: number;
  ctimeNs: bigint;
}
const sameLock = (a: LockIdentity, b: LockIdentity) => a.ino === b.ino && a.ctimeNs === b.ctimeNs && a.holder === b.holder;

/** The file's holder and identity as one consistent reading; null if it is gone. */
async function readLock(fs: LockFs, file: string): Promise<LockIdentity | null> {
  let found;
  try {
    found = await fs.read(file);
  } catch (err) {
    throw ioError(file, 'read lock file', err);
  }
  return found && { holder: lockHolder(found.text), ino: found.ino, ctimeNs: found.ctimeNs };
}

/** Runs `fn` holding the takeover lock; waits (bounded) while a live process holds it, removes it if its holder died. */
async function withTakeoverLock(fs: LockFs, dir: string, fn: () => Promise<void>): Promise<void> {
  const file = join(dir, TAKEOVER_FILE);
  const deadline = Date.now() + TAKEOVER_WAIT_MS;
  while (!(await createComplete(fs, file))) {
    const found = await readLock(fs, file);
    if (found && (found.holder === undefined || !fs.isAlive(found.holder))) {
      // A taker died in the middle. Racers meeting here can both get through (see the header).
      const aside = `${file}.dead.${process.pid}.${++lockFilesMade}`;
      await fs.rename(file, aside).then(() => fs.unlink(aside), () => undefined);
      continue;
    }
    if (Date.now() > deadline) throw new QueueIOError(file, 'take over stale lock file', `EBUSY: held by live pid ${found?.holder} for more than ${TAKEOVER_WAIT_MS} ms`);
    await new Promise((r) => setTimeout(r, TAKEOVER_POLL_MS));
  }
  try {
    await fn();
  } finally {
    await fs.unlink(file).catch(() => undefined);
  }
}

export async function acquireLock(dir: string, fs: LockFs = nodeLockFs): Promise<QueueLock> {
  const file = join(dir, LOCK_FILE);
  // Bounded: each retry follows the removal of a stale lock.
  for (let attempt = 0; attempt < 8; attempt++) {
    if (await createComplete(fs, file)) {
      let released = false;
      // Idempotent: a second unlink could delete the lock of whoever opened the queue after us.
      return {
        release: async () => {
          if (released) return;
          released = true;
          await fs.unlink(file).catch(() => undefined);
        },
      };
    }
    const stale = await readLock(fs, file);
    if (stale === null) continue; // released meanwhile
    if (stale.holder !== undefined && fs.isAlive(stale.holder)) throw new QueueLockedError(dir, stale.holder);
    await withTakeoverLock(fs, dir, async () => {
      const now = await readLock(fs, file);
      if (now !== null && sameLock(now, stale)) {
        await fs.unlink(file).catch((err: NodeJS.ErrnoException) => {
          if (err.code !== 'ENOENT') throw ioError(file, 'remove stale lock file', err);
        });
      }
    });
  }
  throw new QueueIOError(file, 'take over stale lock file', 'EEXIST');
}
