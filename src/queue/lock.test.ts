// The lock's stale takeover under every interleaving fast-check's scheduler draws: racers share an
// in-memory filesystem (inode numbers reused like ext4's) whose every call is a scheduled step.
// Exactly one racer may win, whatever the order. The takeover the queue used before (move the lock
// aside, put it back if it was not the stale one) is kept here to show that the test catches it:
// it once let two openers win in a loaded test run.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { acquireLock, lockFileContent, type LockFs } from './lock.js';
import { QueueLockedError } from './errors.js';
import { seedFromEnv } from '../../properties/seed.js';

const DEAD_PID = 999_999;

interface Entry {
  text: string;
  ino: number;
  ctimeNs: bigint;
}

/** An in-memory directory of files whose every operation is a step the scheduler orders. */
function memoryFs(s: fc.Scheduler): { fs: LockFs; files: Map<string, Entry> } {
  const files = new Map<string, Entry>();
  let clock = 0n;
  const freeIno = () => {
    // The lowest free inode number: a fresh file often gets the number of one just removed.
    const used = new Set([...files.values()].map((e) => e.ino));
    let ino = 1;
    while (used.has(ino)) ino++;
    return ino;
  };
  const err = (code: string) => Object.assign(new Error(code), { code });
  const step = <A extends unknown[], T>(f: (...a: A) => T) => s.scheduleFunction(async (...a: A) => f(...a));
  const fs: LockFs = {
    writeNew: step((file: string, text: string) => {
      if (files.has(file)) throw err('EEXIST');
      files.set(file, { text, ino: freeIno(), ctimeNs: ++clock });
    }),
    link: step((from: string, to: string) => {
      const e = files.get(from);
      if (!e) throw err('ENOENT');
      if (files.has(to)) throw err('EEXIST');
      e.ctimeNs = ++clock;
      files.set(to, e);
    }),
    unlink: step((file: string) => {
      if (!files.delete(file)) throw err('ENOENT');
    }),
    rename: step((from: string, to: string) => {
      const e = files.get(from);
      if (!e) throw err('ENOENT');
      files.delete(from);
      e.ctimeNs = ++clock;
      files.set(to, e);
    }),
    read: step((file: string) => {
      const e = files.get(file);
      return e ? { ...e } : null;
    }),
    isAlive: (pid) => pid !== DEAD_PID,
  };
  return { fs, files };
}

/** The takeover the queue used before: rename the lock aside, put it back if it was not the stale one. */
async function oldAcquire(fs: LockFs, dir: string): Promise<'won'> {
  const file = `${dir}/lock`;
  for (let attempt = 0; attempt < 4; attempt++) {
    const mine = `${file}.new.${attempt}.${Math.random()}`;
    await fs.writeNew(mine, lockFileContent(process.pid));
    const won = await fs.link(mine, file).then(() => true, () => false);
    await fs.unlink(mine).catch(() => undefined);
    if (won) return 'won';
    const stale = await fs.read(file);
    if (!stale) continue;
    if (fs.isAlive(Number(stale.text))) throw new QueueLockedError(dir, Number(stale.text));
    const aside = `${file}.stale.${Math.random()}`;
    if (!(await fs.rename(file, aside).then(() => true, () => false))) continue;
    const moved = await fs.read(aside);
    if (moved?.text !== stale.text) await fs.link(aside, file).catch(() => undefined);
    await fs.unlink(aside).catch(() => undefined);
  }
  throw new Error('gave up');
}

/** Racers against a stale lock under the scheduler; how many won, and whether the losers were told it is locked. */
async function race(s: fc.Scheduler, racers: number, acquire: (fs: LockFs) => Promise<unknown>): Promise<{ winners: number; badLosers: unknown[] }> {
  const { fs, files } = memoryFs(s);
  files.set('/q/lock', { text: lockFileContent(DEAD_PID), ino: 1, ctimeNs: 0n });
  const all = Promise.allSettled(Array.from({ length: racers }, () => acquire(fs)));
  await s.waitFor(all);
  const results = await all;
  return {
    winners: results.filter((r) => r.status === 'fulfilled').length,
    badLosers: results.flatMap((r) => (r.status === 'rejected' && !(r.reason instanceof QueueLockedError) ? [r.reason] : [])),
  };
}

describe('stale lock takeover', () => {
  it('exactly one of several racing openers wins, whatever the interleaving', async () => {
    await fc.assert(
      fc.asyncProperty(fc.scheduler(), fc.integer({ min: 2, max: 4 }), async (s, racers) => {
        const r = await race(s, racers, (fs) => acquireLock('/q', fs));
        expect(r.badLosers).toEqual([]);
        expect(r.winners).toBe(1);
      }),
      { numRuns: 300 },
    );
  });

  it('the old move-aside-and-put-back takeover lets two openers win in some interleaving', async () => {
    const out = await fc.check(
      fc.asyncProperty(fc.scheduler(), async (s) => {
        const r = await race(s, 3, (fs) => oldAcquire(fs, '/q'));
        return r.winners < 2;
      }),
      // Seed 42 finds the double win within the budget; POWERCUT_SEED tries another.
      { numRuns: 2_000, seed: seedFromEnv(42).seed },
    );
    expect(out.failed).toBe(true);
  });
});
