// Driver processes: one driver run (spec on stdin, outcome lines on stdout, read as they come), of
// one disk or of a cluster's nodes, cut at the armed crash point or run to its end; and a
// long-lived worker that serves many drain specs in one process. What a cluster adds (node lines,
// restarts, pauses: cluster/node-control.ts) is the same run with stdin kept open for restart
// commands. A running driver's output and state are a LiveDriver (driver-live.ts), what the harness
// does to it a ClusterControl (driver-control.ts). Every wait is bounded; no driver started here
// outlives this process.
import { execa } from 'execa';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import type { DaemonHandle } from './daemon-process.js';
import type { DriverSpec } from './driver-spec.js';
import { HarnessError } from './harness-error.js';
import { inDriverNetwork, type DriverNetworkChoice } from './driver-network.js';
import { describeGroup, groupAlive, killGroup, nativeBacktrace, OWN_PROCESS_GROUP, signalGroup, trackGroup } from './process-group.js';
import { NODE_EXIT_GRACE_MS, RESTART_TIMEOUT_MS, type ClusterControl, type FreezeHandled } from './cluster/node-control.js';
import { LiveDriver, within, type DriverProc } from './driver-live.js';
import { driverControl } from './driver-control.js';
import type { RunRecord } from './oracle.js';
import { DRIVER_EXIT, parseOutcomeLine, parseOutcomes, type Outcome } from './outcome.js';

/** How to start a target's driver: an executable and its arguments (the spec goes to stdin). */
export interface DriverCommand {
  file: string;
  args: string[];
  cwd?: string;
  /** Changes to the inherited environment (undefined: left out). */
  env?: Readonly<Record<string, string | undefined>>;
  /** Its network (driver-network.ts): absent or 'isolated', a namespace of its own where the machine allows one; 'host', the machine's. */
  network?: DriverNetworkChoice;
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

/** Starts a driver (in its network, its own process group, tracked so that it dies with this process); its spec is for the caller to send. */
function spawnDriver(command: DriverCommand): DriverProc {
  const started = inDriverNetwork(command);
  const proc: DriverProc = execa(started.file, started.args, {
    ...DRIVER_PROCESS_OPTIONS,
    ...(command.cwd ? { cwd: command.cwd } : {}),
    ...(command.env ? { env: command.env } : {}),
    stdin: 'pipe', stdout: 'pipe', stderr: 'pipe', reject: false, buffer: false,
  });
  trackGroup(proc.pid);
  return proc;
}

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

export interface DriverProcessOptions {
  /** Sees each stdout line as it is parsed, with its line number (driver check looks at each node's group while it runs). */
  onLine?: (o: Outcome, line: number) => void;
  /** How long a restart may take (default RESTART_TIMEOUT_MS). */
  restartMs?: number;
  /** Exit codes besides 0 and 3 that end the run as the driver meant (a setup spec: 2, a driver with no setup). */
  exitCodes?: readonly number[];
}

export interface DriverProcessRun extends DriverRun {
  /** Nodes whose process group was still alive NODE_EXIT_GRACE_MS after the driver exited by itself: a driver must stop its servers before it exits. */
  nodesLeft: number[];
  /** The driver's own process group (its pid). */
  pgid: number;
  /** Its stdout as printed. */
  stdout: string;
}

/**
 * Runs one driver, of one node or many. `atFreeze`, if given, runs once the daemon froze at the
 * armed crash point (after the grace period): it cuts what it cuts through `control` (one disk:
 * killAll, then the daemon's crash). Without it, or if the driver exits first, the run goes to its
 * end, bounded by timeouts.runMs. Returns the run, killed if atFreeze killed the driver. The spec
 * gets a scratch folder of its own, removed once the run and every process of its group ended.
 */
export function runDriverProcess(
  daemon: DaemonHandle | null,
  command: DriverCommand,
  spec: DriverSpec,
  timeouts: DriverTimeouts,
  atFreeze?: (control: ClusterControl, frozenAt: number) => Promise<FreezeHandled>,
  options: DriverProcessOptions = {},
): Promise<DriverProcessRun> {
  const restartMs = options.restartMs ?? RESTART_TIMEOUT_MS;
  return withScratch(spec, async (withFolder) => {
    let proc: DriverProc;
    try {
      proc = spawnDriver(command);
    } catch (err) {
      throw new HarnessError(`cannot start driver '${describeCommand(command)}': ${(err as Error).message}`);
    }
    const live = new LiveDriver(proc, withFolder, options.onLine);
    const control = driverControl(live, timeouts.killMs, restartMs);
    let ran: RunEnd;
    let failed: unknown;
    let nodesLeft: number[];
    try {
      ran = await runToEnd(live, control, daemon, timeouts, atFreeze);
    } catch (err) {
      failed = err;
      throw err;
    } finally {
      nodesLeft = await endDriver(live, control, timeouts, failed);
    }
    return driverResult(live, command, spec, ran, nodesLeft, options.exitCodes);
  });
}

/** How a driver run ended: frozen at this op number (null: the driver exited first), or past its bound. */
interface RunEnd {
  frozenAt: number | null;
  hung: boolean;
}

/**
 * Waits (bounded by timeouts.runMs) for the armed crash point, if atFreeze is given, and lets
 * atFreeze cut there; then for the run's end.
 */
async function runToEnd(
  live: LiveDriver,
  control: ClusterControl,
  daemon: DaemonHandle | null,
  timeouts: DriverTimeouts,
  atFreeze?: (control: ClusterControl, frozenAt: number) => Promise<FreezeHandled>,
): Promise<RunEnd> {
  let frozenAt: number | null = null;
  let hung = false;
  if (atFreeze) {
    if (!daemon) throw new Error('invariant: an armed driver run needs the daemon that freezes it');
    const deadline = Date.now() + timeouts.runMs;
    // Until the driver exits, or ends its run: a serving driver (a cluster's, whose stdin stays
    // open for restarts) waits for its next spec after `done`, so a cut that never came must not
    // wait for its exit (seen: NATS R3 cut at request 451 of a 440-request run, judged a hang at 120 s).
    while (!live.exited && !live.ended) {
      const r = await daemon.client.waitFrozen(timeouts.pollMs);
      if (r.frozen) {
        frozenAt = r.frozenAt ?? null;
        await within(live.done, timeouts.graceMs);
        if ((await atFreeze(control, r.frozenAt!)) !== 'again') break;
        frozenAt = null;
        continue;
      }
      if (Date.now() > deadline) {
        hung = true;
        break;
      }
    }
  }
  // The run goes on to its end (a cut of some nodes leaves it running); stdin closes, so it exits after its spec.
  live.proc.stdin.end();
  if (!live.killed && !hung && (await within(live.done, timeouts.runMs)) === 'timeout') hung = true;
  // What the hung driver waits on, in its stderr (an artifact keeps it), before the kill ends it.
  if (hung && !live.exited) live.stderr += `\npowercut harness: the run passed its bound of ${timeouts.runMs} ms; its processes: ${describeGroup(live.proc.pid!)}\nthe driver's native stacks (gdb):\n${nativeBacktrace(live.proc.pid!)}\n`;
  return { frozenAt, hung };
}

/**
 * After the run, however it went: names the nodes a driver that ended by itself left running, then
 * kills and reaps every process of the run (bounded). Returns those nodes. A driver that does not
 * exit is an error that names what is stuck, and `failed` (what went wrong first, if something did).
 */
async function endDriver(live: LiveDriver, control: ClusterControl, timeouts: DriverTimeouts, failed: unknown): Promise<number[]> {
  const { proc, groups } = live;
  const nodesLeft: number[] = [];
  // A driver that ended by itself must have stopped its nodes (a grace for servers that exit when their stdin closes).
  if (live.exited && !live.killed) {
    const deadline = Date.now() + NODE_EXIT_GRACE_MS;
    for (const [k, g] of groups) {
      while (groupAlive(g) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
      if (groupAlive(g)) nodesLeft.push(k);
    }
  }
  control.killAll();
  if ((await within(live.done, timeouts.killMs)) === 'timeout') {
    // Name what is stuck, and what went wrong first if something did: this error replaces it.
    const stuck = [`the driver's group ${proc.pid}: ${describeGroup(proc.pid!)}`, ...[...groups].map(([k, g]) => `node ${k}'s group ${g}: ${describeGroup(g)}`)];
    const first = failed === undefined ? '' : `\nafter this error of the run: ${failed instanceof Error ? failed.message : String(failed)}`;
    throw new HarnessError(`driver pid ${proc.pid} did not exit within ${timeouts.killMs} ms of SIGKILL (its stdout or stderr still open, or a process in a request the daemon holds)\n  ${stuck.join('\n  ')}${first}`);
  }
  await control.reap([...groups.keys()]);
  await reapGroup(proc.pid, timeouts);
  return nodesLeft;
}

/** The run's record from its exit and stdout; an exit code the driver may not use is an error. */
async function driverResult(live: LiveDriver, command: DriverCommand, spec: DriverSpec, ran: RunEnd, nodesLeft: number[], exitCodes: readonly number[] = []): Promise<DriverProcessRun> {
  const result = await live.done;
  const { proc, killed, stdout } = live;
  const { frozenAt, hung } = ran;
  if (result.failed && result.exitCode === undefined && result.signal === undefined && !killed) {
    throw new HarnessError(`cannot start driver '${describeCommand(command)}': ${result.message}`);
  }
  const expected = [DRIVER_EXIT.ok, DRIVER_EXIT.queueError, ...exitCodes] as readonly (number | undefined)[];
  if (!killed && !hung && !expected.includes(result.exitCode)) throw unexpectedExit(command, proc.pid, result.exitCode, result.signal, live.stderr);
  const record = {
    role: spec.mode,
    outcomes: parseOutcomes(stdout, `driver pid ${proc.pid} (${spec.mode}) stdout`),
    exitCode: killed || hung ? null : (result.exitCode ?? null),
    killed: killed && !hung,
    hung,
    failedRequests: [],
  };
  return { record, stderr: live.stderr, frozenAt, nodesLeft, pgid: proc.pid!, stdout };
}

/**
 * Runs one driver of one disk. With `armed`, waits until the filesystem freezes at the crash point
 * or the driver exits, then SIGKILLs its group; without, waits for it to exit. Bounded by
 * timeouts.runMs. `atCut` runs after the SIGKILL and before waiting for the exit: a process killed
 * while the daemon holds one of its requests cannot exit until the power cut unmounts (the kernel
 * waits for an answer to a request already in userspace), so the cut itself belongs there. A run
 * that ended first (or was not armed) is cut after its end.
 */
export async function runDriver(
  daemon: DaemonHandle | null,
  command: DriverCommand,
  spec: DriverSpec,
  armed: boolean,
  timeouts: DriverTimeouts,
  atCut: () => Promise<void> = async () => {},
): Promise<DriverRun> {
  let cut = false;
  const run = await runDriverProcess(daemon, command, spec, timeouts, armed ? async (control) => {
    control.killAll();
    cut = true;
    await atCut();
  } : undefined);
  if (!cut) await atCut();
  return { record: run.record, stderr: run.stderr, frozenAt: run.frozenAt };
}

/** One worker process and what it said: a replacement process gets its own, so an old one's lines and exit never mix in. */
interface WorkerProcess {
  proc: DriverProc;
  lines: string[];
  exited: boolean;
  /** What it printed on stderr since the current spec was sent (bounded). */
  stderr: string;
  wake: (() => void) | null;
}

/**
 * A driver that serves many specs, one JSON line each on stdin, in one process: after each it prints
 * its outcome lines ending with `done` or `error`. Saves a process start per crash state. A driver
 * that exits (an error line, or a crash) is replaced by a new process for the next spec.
 */
export class DriverWorker {
  private current: WorkerProcess | null = null;
  /** Processes started so far (for the benchmark's breakdown). */
  starts = 0;

  constructor(private readonly command: DriverCommand, private readonly timeouts: DriverTimeouts) {}

  private start(): WorkerProcess {
    this.starts++;
    const proc = spawnDriver(this.command);
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
  stop(): Promise<void> {
    return this.end(false);
  }

  /** Ends the worker at once (SIGKILL to its group), whatever it runs: a run in flight fails. Idempotent. */
  kill(): Promise<void> {
    return this.end(true);
  }

  private async end(now: boolean): Promise<void> {
    const w = this.current;
    this.current = null;
    if (!w) return;
    if (now && !w.exited) signalGroup(w.proc.pid);
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
