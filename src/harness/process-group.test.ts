// A driver's children die with it: the harness kills the driver's whole process group when a run
// ends, at a cut and after a normal exit, so a server a driver started can never outlive it.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { DriverWorker, mergeTimeouts, runDriver } from './driver-process.js';
import { nativeBacktrace } from './process-group.js';

const dirs: string[] = [];
afterAll(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

/** Running, not a zombie waiting to be reaped (dead all the same). */
function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return !['Z', 'X'].includes(stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3));
  } catch {
    return false;
  }
}

/** A driver (sh) that starts a long-lived child, writes its pid to a file, then says hello and `done` unless told to hang. */
async function driverWithChild(hang: boolean): Promise<{ file: string; args: string[]; pidFile: string }> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'powercut-pgroup-'));
  dirs.push(dir);
  const pidFile = path.join(dir, 'child.pid');
  const hello = '{"t":"hello","protocol":1,"target":"t","replayBound":{"ackBatchSize":1,"outOfOrderAcksDurable":true},"serves":true}';
  const script = `sleep 1000 >/dev/null 2>&1 & echo $! > ${pidFile}; cat >/dev/null & echo '${hello}'; ${hang ? 'sleep 1000' : `echo '{"t":"done"}'`}`;
  return { file: '/bin/sh', args: ['-c', script], pidFile };
}

const spec = { mode: 'drain' as const, dir: '/tmp', settings: {}, idBase: 0 };

describe('driver process groups', () => {
  it('a hung driver and the child it started are both gone when runDriver returns', async () => {
    const d = await driverWithChild(true);
    const run = await runDriver(null, d, spec, false, mergeTimeouts({ runMs: 300 }));
    expect(run.record.hung).toBe(true);
    const child = Number(readFileSync(d.pidFile, 'utf8'));
    expect(alive(child)).toBe(false);
  });

  it('a child left running by a driver that exited normally is killed too', async () => {
    const d = await driverWithChild(false);
    const run = await runDriver(null, d, spec, false, mergeTimeouts({ runMs: 5_000 }));
    expect(run.record.exitCode).toBe(0);
    expect(alive(Number(readFileSync(d.pidFile, 'utf8')))).toBe(false);
  });

  it('a serving worker\'s children die when the worker stops', async () => {
    const d = await driverWithChild(false);
    const worker = new DriverWorker(d, mergeTimeouts({ runMs: 5_000 }));
    const run = await worker.run(spec);
    expect(run.record.outcomes.map((o) => o.t)).toEqual(['hello', 'done']);
    await worker.stop();
    expect(alive(Number(readFileSync(d.pidFile, 'utf8')))).toBe(false);
  });

  it('prints a live process\'s native stacks with gdb and leaves it running (or says gdb is missing)', async () => {
    const child = spawn('sleep', ['30'], { stdio: 'ignore' });
    try {
      await new Promise((r) => child.once('spawn', r));
      const stacks = nativeBacktrace(child.pid!);
      expect(stacks).toMatch(/^Thread 1 .*"sleep"\)?:?\n#0 |^no native backtrace: gdb is not installed/);
      expect(alive(child.pid!)).toBe(true);
    } finally {
      child.kill('SIGKILL');
    }
  });

  it('prints a threaded process\'s main thread first (gdb prints it last, past the length kept)', async () => {
    const child = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 30_000)'], { stdio: 'ignore' });
    try {
      // Node's worker threads started (bounded): gdb then sees them all.
      for (const deadline = Date.now() + 10_000; Date.now() < deadline; await new Promise((r) => setTimeout(r, 20))) {
        if (existsSync(`/proc/${child.pid}/task`) && readdirSync(`/proc/${child.pid}/task`).length >= 5) break;
      }
      const stacks = nativeBacktrace(child.pid!);
      if (stacks.startsWith('no native backtrace: gdb is not installed')) return;
      expect(stacks).toMatch(/^Thread 1 /);
      expect(stacks).toMatch(/\nThread 2 /);
    } finally {
      child.kill('SIGKILL');
    }
  });
});
