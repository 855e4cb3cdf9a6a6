// Stress: many power cuts and resets with requests held. Each cycle a child process writes, fsyncs,
// creates and renames on the mount from several concurrent callers, the daemon freezes at a crash
// point (requests pile up held), the child is SIGKILLed (before or after the cut), and `crash` (each
// policy) or `reset` (frozen: a remount) disposes of the held requests. Throughout: the daemon never
// dies, every child exits, the mount keeps working. Last, the daemon itself is SIGKILLed while
// frozen with a child stuck in a held request: the child must be released, and the next daemon on
// the same mountpoint must clean the stale mount. No mount is left behind, and nothing written
// through a remount lands in the directory underneath (the move beneath, which needs root, the patched
// binding and Linux 6.5: without one the test fails naming it). Bounded in time.
import { afterAll, describe, expect, it } from 'vitest';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startDaemon, type DaemonHandle } from '../src/harness/daemon-process.js';
import type { CrashPoint, MutatingKind } from './protocol.js';
import { requirePatchedBinding, requireRoot } from './testing.js';

/** Cycles stop starting after this long; the test's own bound is below. */
const BUDGET_MS = 8_000;
const FREEZE_TIMEOUT_MS = 15_000;
const CHILD_EXIT_TIMEOUT_MS = 10_000;

const work = mkdtempSync(join(tmpdir(), 'powercut-stress-'));
const mnt = join(work, 'mnt');
const sock = join(work, 'ctl.sock');
const daemons: DaemonHandle[] = [];
const children = new Set<ChildProcess>();

afterAll(async () => {
  for (const c of children) c.kill('SIGKILL');
  await Promise.all(daemons.map((d) => d.stop()));
  rmSync(work, { recursive: true, force: true });
});

// Four concurrent callers (libuv's four threads): appends with fsyncs, fdatasyncs, and a
// write-temp-then-rename loop that also creates, stats and unlinks. Errors (EIO from a detached
// mount) are ignored: the child runs until it is killed.
const CHILD = `
const fs = require('fs').promises;
const dir = process.argv[2];
const tag = process.argv[3];
const quiet = (p) => p.catch(() => {});
async function appender(k) {
  let fh = null;
  for (let n = 0; ; n++) {
    try {
      fh ??= await fs.open(dir + '/log-' + tag + '-' + k, 'a');
      await fh.write(Buffer.alloc(100 + (n * 37) % 900, 65 + k));
      if (n % 3 === 0) await fh.sync();
      if (n % 5 === 0) await fh.datasync();
    } catch { fh = null; await new Promise((r) => setTimeout(r, 5)); }
  }
}
async function replacer() {
  for (let n = 0; ; n++) {
    const tmp = dir + '/state-' + tag + '.tmp';
    try {
      await fs.writeFile(tmp, 'state ' + n);
      await fs.rename(tmp, dir + '/state-' + tag);
      await quiet(fs.stat(dir + '/state-' + tag));
      if (n % 4 === 0) await quiet(fs.unlink(dir + '/state-' + tag));
      if (n % 6 === 0) await quiet(fs.readdir(dir));
    } catch { await new Promise((r) => setTimeout(r, 5)); }
  }
}
appender(0); appender(1); appender(2); replacer();
`;

function startChild(script: string, tag: string): { proc: ChildProcess; stderr: () => string } {
  const proc = spawn(process.execPath, [script, mnt, tag], { stdio: ['ignore', 'ignore', 'pipe'] });
  children.add(proc);
  let err = '';
  proc.stderr!.on('data', (b: Buffer) => { err = (err + b.toString()).slice(-4000); });
  return { proc, stderr: () => err };
}

/** Resolves true once the process has exited (within `ms`). */
function exitedWithin(proc: ChildProcess, ms: number): Promise<boolean> {
  if (proc.exitCode !== null || proc.signalCode !== null) return Promise.resolve(true);
  return new Promise((res) => {
    const t = setTimeout(() => res(false), ms);
    proc.once('exit', () => {
      clearTimeout(t);
      res(true);
    });
  });
}

/** What a stuck process waits in (for the failure message). */
function whereStuck(pid: number | undefined): string {
  try {
    return `state ${readFileSync(`/proc/${pid}/stat`, 'utf8').split(' ')[2]}, wchan ${readFileSync(`/proc/${pid}/wchan`, 'utf8')}`;
  } catch {
    return 'gone';
  }
}

async function mountsUnder(dir: string): Promise<string[]> {
  return (await readFile('/proc/mounts', 'utf8')).split('\n').filter((l) => l.split(' ')[1]?.startsWith(dir));
}

async function assertAlive(d: DaemonHandle, when: string): Promise<void> {
  const death = d.exitInfo() ? await d.describeDeath(0) : null;
  expect(death, `the daemon died ${when}`).toBeNull();
}

const KINDS: (MutatingKind | undefined)[] = [undefined, 'write', 'fsync', 'create', 'rename', 'write', 'fsync'];
type Disposal = 'crash lose-unsynced' | 'crash torn' | 'reset' | 'crash keep-all';
const DISPOSALS: Disposal[] = ['crash lose-unsynced', 'crash torn', 'reset', 'crash keep-all'];

describe('stress: power cuts and resets with requests held', () => {
  it('the daemon survives every cycle, every child exits, no mount is left, nothing lands beneath the mount', async () => {
    requireRoot('a remount that never shows the directory underneath (a move beneath the old mount)');
    requirePatchedBinding('a remount that never shows the directory underneath (a move beneath the old mount)');
    const script = join(work, 'child.cjs');
    writeFileSync(script, CHILD);
    const d = await startDaemon({ mountpoint: mnt, socketPath: sock });
    daemons.push(d);
    const t0 = Date.now();
    const counts = { cycles: 0, heldMutating: 0, maxHeld: 0, killedAfterCut: 0, crashes: 0, resets: 0 };
    for (let i = 0; Date.now() - t0 < BUDGET_MS; i++) {
      const kind = KINDS[i % KINDS.length];
      const point: CrashPoint = { atOp: 3 + ((i * 7) % 30), timing: i % 2 === 0 ? 'before' : 'after', ...(kind ? { kind } : {}) };
      const disposal = DISPOSALS[i % DISPOSALS.length];
      const killAfterCut = i % 5 === 4;
      await d.client.arm(point);
      const child = startChild(script, `c${i}`);
      const frozen = await d.client.waitFrozen(FREEZE_TIMEOUT_MS);
      expect(frozen.frozen, `cycle ${i}: not frozen at ${JSON.stringify(point)}; child stderr: ${child.stderr()}`).toBe(true);
      // Let the other callers pile up behind the crash point.
      await new Promise((r) => setTimeout(r, 10 + (i % 4) * 10));
      const held = (await d.client.trace()).filter((e) => e.state === 'held').length;
      counts.heldMutating += held;
      counts.maxHeld = Math.max(counts.maxHeld, held);
      if (!killAfterCut) child.proc.kill('SIGKILL');
      if (disposal === 'reset') {
        await d.client.reset();
        counts.resets++;
      } else {
        await d.client.crash(disposal === 'crash torn' ? 'torn' : disposal === 'crash keep-all' ? 'keep-all' : 'lose-unsynced', i);
        counts.crashes++;
      }
      if (killAfterCut) {
        // The child ran on through the cut: its descriptors are on the detached mount (EIO), its new paths on the new one.
        await new Promise((r) => setTimeout(r, 30));
        child.proc.kill('SIGKILL');
        counts.killedAfterCut++;
      }
      const gone = await exitedWithin(child.proc, CHILD_EXIT_TIMEOUT_MS);
      expect(gone, `cycle ${i}: the child is stuck after ${disposal} (${whereStuck(child.proc.pid)})`).toBe(true);
      children.delete(child.proc);
      // A child killed after the cut made requests on the new mount: start the numbering afresh (a reset that is not frozen: no remount).
      if (killAfterCut) await d.client.reset();
      await assertAlive(d, `in cycle ${i} (${disposal}, crash point ${JSON.stringify(point)})`);
      const s = await d.client.status();
      expect(s.frozen).toBe(false);
      // The new mount works (nothing holds it now).
      await writeFile(join(mnt, 'probe'), `cycle ${i}`);
      expect(await readFile(join(mnt, 'probe'), 'utf8')).toBe(`cycle ${i}`);
      counts.cycles++;
    }
    expect(counts.cycles).toBeGreaterThanOrEqual(4);
    expect(counts.heldMutating).toBeGreaterThan(0);

    // The daemon itself dies while frozen, with a child stuck in a held request: the kernel must
    // release the child, and the next daemon on the mountpoint must clean the stale mount.
    await d.client.reset();
    await d.client.arm({ atOp: 5, kind: 'write', timing: 'before' });
    const child = startChild(script, 'last');
    expect((await d.client.waitFrozen(FREEZE_TIMEOUT_MS)).frozen).toBe(true);
    d.kill();
    const released = await exitedWithin(child.proc, CHILD_EXIT_TIMEOUT_MS);
    child.proc.kill('SIGKILL');
    expect(released || (await exitedWithin(child.proc, CHILD_EXIT_TIMEOUT_MS)), `the child stuck after the daemon died (${whereStuck(child.proc.pid)})`).toBe(true);
    children.delete(child.proc);
    const d2 = await startDaemon({ mountpoint: mnt, socketPath: sock });
    daemons.push(d2);
    await writeFile(join(mnt, 'after'), 'works');
    expect(await readFile(join(mnt, 'after'), 'utf8')).toBe('works');
    await d2.stop();
    expect(await mountsUnder(work)).toEqual([]);
    // Children killed after the cut kept using the path through every remount. A remount by a move
    // beneath the old mount never shows the directory underneath, so nothing of theirs can have
    // landed there; a daemon that fell back to unmount-then-mount says so on stderr.
    const stderr = `${d.exitInfo()?.stderrTail ?? ''}${d2.exitInfo()?.stderrTail ?? ''}`;
    expect(stderr, 'a daemon remounted by unmount-then-mount: the kernel refused move_mount(MOVE_MOUNT_BENEATH) (Linux 6.5 or later, and a parent mount that is not shared, are needed) or the binding is the stock one').not.toMatch(/stock binding|cannot move a mount beneath/);
    expect(readdirSync(mnt), 'files that landed in the directory under the mount').toEqual([]);
    console.log(`stress: ${counts.cycles} cycles (${counts.crashes} crashes, ${counts.resets} frozen resets; ${counts.killedAfterCut} children killed after the cut), `
      + `${counts.heldMutating} changing requests held in all (up to ${counts.maxHeld} at once, plus lookups and reads), ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  }, 50_000);
});
