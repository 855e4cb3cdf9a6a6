// Driver processes: one driver run (spec on stdin, outcome lines on stdout), cut at the armed crash
// point or run to its end, and a long-lived worker that serves many drain specs in one process.
// Every wait is bounded; no driver started here outlives this process.
import { execa, type ResultPromise } from 'execa';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import type { DaemonHandle } from './daemon-process.js';
import type { DriverSpec } from './driver-spec.js';
import { HarnessError } from './harness-error.js';
import { killGroup, OWN_PROCESS_GROUP, signalGroup, trackGroup } from './process-group.js';
import type { RunRecord } from './oracle.js';
import { DRIVER_EXIT, parseOutcomeLine, parseOutcomes, type Outcome } from './outcome.js';

/** How to start a target's driver: an executable and its arguments (the spec goes to stdin). */
export interface DriverCommand {
  file: string;
  args: string[];
  cwd?: string;
  /** Changes to the inherited environment (undefined: left out). */
  env?: Readonly<Record<string, string | undefined>>;
}

export interface DriverTimeouts {
  /** A driver run: until it freezes at the crash point or exits. */
  runMs: number;
  /** A driver to die after SIGKILL. */
  killMs: number;
  /** Polling interval of wait-frozen while the driver runs. */
  pollMs: number;
  /**
   * After the cut froze its request, the program runs on this long before it is killed: its other
   * threads may still print confirmations that do not depend on the frozen request (and one that
   * does, a lie, is then caught).
   */
  graceMs: number;
}
export const DEFAULT_TIMEOUTS: DriverTimeouts = { runMs: 20_000, killMs: 5_000, pollMs: 20, graceMs: 10 };

export function mergeTimeouts(t?: Partial<DriverTimeouts>): DriverTimeouts {
  return { ...DEFAULT_TIMEOUTS, ...t };
}

export interface DriverRun {
  record: RunRecord;
  stderr: string;
  /** Op number the filesystem froze at, or null when the driver exited first. */
  frozenAt: number | null;
}

/**
 * Every driver is started with these: in a process group of its own (process-group.ts kills the
 * group at a cut, after the run, and when this process exits), and SIGKILL is what a power cut does
 * to a program anyway.
 */
const DRIVER_PROCESS_OPTIONS = { killSignal: 'SIGKILL', ...OWN_PROCESS_GROUP } as const;

/** After a driver ended: no process it started may outlive it (bounded). */
async function reapGroup(pgid: number | undefined, timeouts: DriverTimeouts): Promise<void> {
  if (!(await killGroup(pgid, timeouts.killMs))) {
    throw new HarnessError(`a process started by driver pid ${pgid} (in its process group) did not exit within ${timeouts.killMs} ms of SIGKILL (stuck in the kernel?)`);
  }
}

function describeCommand(command: DriverCommand): string {
  return [command.file, ...command.args].map((a) => (/\s/.test(a) ? JSON.stringify(a) : a)).join(' ');
}

/** What a driver that exited with an unexpected code said, for a HarnessError. */
function unexpectedExit(command: DriverCommand, pid: number | undefined, exitCode: number | undefined, signal: string | undefined, stderr: string): HarnessError {
  return new HarnessError(
    `driver '${describeCommand(command)}' (pid ${pid}) exited with code ${exitCode}${signal ? ` (signal ${signal})` : ''}, ` +
      `expected ${DRIVER_EXIT.ok} (done) or ${DRIVER_EXIT.queueError} (error line)${stderr.trim() ? `; its stderr:\n  ${stderr.trim().slice(-2000).split('\n').join('\n  ')}` : ''}`,
  );
}

/** Runs `f` with the spec's scratch folder made (off the mount), and removes it once `f` is done, whatever the driver left in it. */
export async function withScratch<T>(spec: DriverSpec, f: (spec: DriverSpec) => Promise<T>): Promise<T> {
  const scratch = await mkdtemp(path.join(os.tmpdir(), 'powercut-scratch-'));
  try {
    return await f({ ...spec, scratch });
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}

/**
 * Runs one driver. With `armed`, waits until the filesystem freezes at the crash point or the
 * driver exits, then SIGKILLs it; without, waits for it to exit. Bounded by timeouts.runMs.
 * `atCut` runs after the SIGKILL and before waiting for the exit: a process killed while the
 * daemon holds one of its requests cannot exit until the power cut unmounts (the kernel waits for
 * an answer to a request already in userspace), so the cut itself belongs there. The spec gets a
 * scratch folder of its own, removed once the run and every process of its group have ended.
 */
export function runDriver(
  daemon: DaemonHandle | null,
  command: DriverCommand,
  spec: DriverSpec,
  armed: boolean,
  timeouts: DriverTimeouts,
  atCut: () => Promise<void> = async () => {},
): Promise<DriverRun> {
  return withScratch(spec, (withFolder) => runDriverIn(daemon, command, withFolder, armed, timeouts, atCut));
}

async function runDriverIn(
  /** The daemon whose freeze an armed run waits for; null for a run off the mount (never armed). */
  daemon: DaemonHandle | null,
  command: DriverCommand,
  spec: DriverSpec,
  armed: boolean,
  timeouts: DriverTimeouts,
  atCut: () => Promise<void> = async () => {},
): Promise<DriverRun> {
  let proc;
  try {
    proc = execa(command.file, command.args, {
      ...DRIVER_PROCESS_OPTIONS,
      ...(command.cwd ? { cwd: command.cwd } : {}),
      ...(command.env ? { env: command.env } : {}),
      input: JSON.stringify(spec) + '\n',
      stripFinalNewline: false, // a line without its newline was cut mid-print: parseOutcomes needs to tell
      reject: false,
      stdout: 'pipe',
      stderr: 'pipe',
    });
  } catch (err) {
    throw new HarnessError(`cannot start driver '${describeCommand(command)}': ${(err as Error).message}`);
  }
  trackGroup(proc.pid);
  let exited = false;
  const done = proc.then((r) => {
    exited = true;
    return r;
  });
  const exitWithin = async (ms: number) => {
    const timer = new Promise<'timeout'>((resolve) => setTimeout(resolve, ms, 'timeout').unref());
    return (await Promise.race([done, timer])) !== 'timeout';
  };
  let frozenAt: number | null = null;
  let hung = false;
  let killed = false;
  let failure: unknown;
  try {
    if (armed) {
      if (!daemon) throw new Error('invariant: an armed driver run needs the daemon that freezes it');
      const deadline = Date.now() + timeouts.runMs;
      while (!exited) {
        const r = await daemon.client.waitFrozen(timeouts.pollMs);
        if (r.frozen) {
          frozenAt = r.frozenAt ?? null;
          await exitWithin(timeouts.graceMs);
          break;
        }
        if (Date.now() > deadline) {
          hung = true;
          break;
        }
      }
    } else {
      hung = !(await exitWithin(timeouts.runMs));
    }
    // The power goes for the whole group: what the driver started (a server) too, even if the driver itself exited.
    const leaderAlive = !exited;
    const signalled = signalGroup(proc.pid);
    if (leaderAlive) killed = signalled;
    await atCut();
  } catch (err) {
    failure = err;
  }
  if (!exited) {
    signalGroup(proc.pid);
    if (!(await exitWithin(timeouts.killMs))) {
      const before = failure === undefined ? '' : `; before that: ${failure instanceof Error ? failure.message : String(failure)}`;
      throw new HarnessError(`driver pid ${proc.pid} did not exit within ${timeouts.killMs} ms of SIGKILL and the power cut (stuck in the kernel?)${before}`);
    }
  }
  if (failure !== undefined) {
    await reapGroup(proc.pid, timeouts).catch(() => undefined); // the failure says more than a stuck child
    throw failure;
  }
  const result = await done;
  await reapGroup(proc.pid, timeouts);
  const stdout = typeof result.stdout === 'string' ? result.stdout : '';
  const stderr = typeof result.stderr === 'string' ? result.stderr : '';
  if (result.failed && result.exitCode === undefined && !killed && result.signal === undefined) {
    throw new HarnessError(`cannot start driver '${describeCommand(command)}': ${result.message}`);
  }
  if (!killed && result.exitCode !== DRIVER_EXIT.ok && result.exitCode !== DRIVER_EXIT.queueError) {
    throw unexpectedExit(command, proc.pid, result.exitCode, result.signal, stderr);
  }
  const record: RunRecord = {
    role: spec.mode,
    outcomes: parseOutcomes(stdout, `driver pid ${proc.pid} (${spec.mode}) stdout`),
    exitCode: killed ? null : (result.exitCode ?? null),
    killed: killed && !hung,
    hung,
    failedRequests: [],
  };
  return { record, stderr, frozenAt };
}

/**
 * A driver that serves many specs, one JSON line each on stdin, in one process: after each it prints
 * its outcome lines ending with `done` or `error`. Saves a process start per crash state. A driver
 * that exits (an error line, or a crash) is replaced by a new process for the next spec.
 */
type WorkerProc = ResultPromise<{ stdin: 'pipe'; stdout: 'pipe'; stderr: 'pipe'; reject: false; buffer: false; killSignal: 'SIGKILL'; detached: true }>;

/** One worker process and what it said: a replacement process gets its own, so an old one's lines and exit never mix in. */
interface WorkerProcess {
  proc: WorkerProc;
  lines: string[];
  exited: boolean;
  /** What it printed on stderr since the current spec was sent (bounded). */
  stderr: string;
  wake: (() => void) | null;
}

export class DriverWorker {
  private current: WorkerProcess | null = null;
  /** Processes started so far (for the benchmark's breakdown). */
  starts = 0;

  constructor(private readonly command: DriverCommand, private readonly timeouts: DriverTimeouts) {}

  private start(): WorkerProcess {
    this.starts++;
    const proc: WorkerProc = execa(this.command.file, this.command.args, {
      ...DRIVER_PROCESS_OPTIONS,
      ...(this.command.cwd ? { cwd: this.command.cwd } : {}),
      ...(this.command.env ? { env: this.command.env } : {}),
      stdin: 'pipe', stdout: 'pipe', stderr: 'pipe', reject: false, buffer: false,
    });
    trackGroup(proc.pid);
    const w: WorkerProcess = { proc, lines: [], exited: false, stderr: '', wake: null };
    proc.stderr.on('data', (d: Buffer) => {
      w.stderr = (w.stderr + d.toString()).slice(-20_000);
    });
    createInterface({ input: proc.stdout }).on('line', (line) => {
      w.lines.push(line);
      w.wake?.();
    });
    void proc.then(() => {
      w.exited = true;
      w.wake?.();
    });
    return w;
  }

  /** Starts the process now, so that a later run() does not wait for its start-up. */
  warm(): void {
    if (!this.current || this.current.exited) this.current = this.start();
  }

  /**
   * Runs one spec (not cut) and returns its run record, like runDriver without a crash point, with
   * a scratch folder of its own. `last`: stdin is closed after the spec, as runDriver does (a driver
   * that reads to the end first works too).
   */
  run(spec: DriverSpec, last = false): Promise<DriverRun> {
    return withScratch(spec, (withFolder) => this.runIn(withFolder, last));
  }

  private async runIn(spec: DriverSpec, last: boolean): Promise<DriverRun> {
    this.warm();
    const w = this.current!;
    const outcomes: Outcome[] = [];
    const where = `driver worker pid ${w.proc.pid} (${spec.mode}) stdout`;
    w.stderr = '';
    w.proc.stdin.write(JSON.stringify(spec) + '\n');
    if (last) w.proc.stdin.end();
    const deadline = Date.now() + this.timeouts.runMs;
    for (;;) {
      while (w.lines.length > 0) {
        const outcome = parseOutcomeLine(w.lines.shift()!, outcomes.length + 1, where);
        outcomes.push(outcome);
        if (outcome.t === 'done' || outcome.t === 'error') {
          // After an error line the driver exits (docs/driver-protocol.md): the next spec gets a new process.
          if (outcome.t === 'error') await this.stop();
          return { record: { role: spec.mode, outcomes, exitCode: outcome.t === 'done' ? DRIVER_EXIT.ok : DRIVER_EXIT.queueError, killed: false, hung: false, failedRequests: [] }, stderr: w.stderr, frozenAt: null };
        }
      }
      if (w.exited) {
        const r = await w.proc;
        await reapGroup(w.proc.pid, this.timeouts);
        if (r.exitCode === DRIVER_EXIT.ok || r.exitCode === DRIVER_EXIT.queueError) {
          throw new HarnessError(`${where}: the worker exited with code ${r.exitCode} before its done or error line`);
        }
        throw unexpectedExit(this.command, w.proc.pid, r.exitCode, r.signal, w.stderr);
      }
      const leftMs = deadline - Date.now();
      if (leftMs <= 0) {
        await this.stop();
        return { record: { role: spec.mode, outcomes, exitCode: null, killed: false, hung: true, failedRequests: [] }, stderr: w.stderr, frozenAt: null };
      }
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, leftMs);
        w.wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      w.wake = null;
    }
  }

  /** Ends the worker: closes its stdin, then SIGKILL if it does not exit in time; then its whole group. Idempotent. */
  async stop(): Promise<void> {
    const w = this.current;
    this.current = null;
    if (!w) return;
    if (!w.exited) {
      w.proc.stdin.end();
      const exitedInTime = await Promise.race([w.proc.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), this.timeouts.killMs).unref())]);
      if (!exitedInTime) {
        signalGroup(w.proc.pid);
        await Promise.race([w.proc, new Promise((r) => setTimeout(r, this.timeouts.killMs).unref())]);
      }
    }
    await reapGroup(w.proc.pid, this.timeouts);
  }
}
