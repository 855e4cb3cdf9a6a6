// Driver processes: one driver run (spec on stdin, outcome lines on stdout, read as they come), of
// one disk or of a cluster's nodes, cut at the armed crash point or run to its end; and a
// long-lived worker that serves many drain specs in one process. What a cluster adds (node lines,
// restarts, pauses: cluster/node-control.ts) is the same run with stdin kept open for restart
// commands. Every wait is bounded; no driver started here outlives this process.
import { execa, type ResultPromise } from 'execa';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import type { DaemonHandle } from './daemon-process.js';
import type { DriverSpec, RestartCommand } from './driver-spec.js';
import { HarnessError } from './harness-error.js';
import { inDriverNetwork, type DriverNetworkChoice } from './driver-network.js';
import { describeGroup, groupAlive, killGroup, nativeBacktrace, OWN_PROCESS_GROUP, signalGroup, trackGroup } from './process-group.js';
import { MAX_PAUSE_MS, NODE_EXIT_GRACE_MS, processState, RESTART_TIMEOUT_MS, signalGroupWith, STOP_SEEN_MS, stopPending, type ClusterControl, type FreezeHandled } from './cluster/node-control.js';
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
    let proc;
    try {
      const started = inDriverNetwork(command);
      proc = execa(started.file, started.args, {
        ...DRIVER_PROCESS_OPTIONS, ...(command.cwd ? { cwd: command.cwd } : {}), ...(command.env ? { env: command.env } : {}),
        stdin: 'pipe', stdout: 'pipe', stderr: 'pipe', reject: false, buffer: false,
      });
    } catch (err) {
      throw new HarnessError(`cannot start driver '${describeCommand(command)}': ${(err as Error).message}`);
    }
    trackGroup(proc.pid);
    let stdout = '';
    let stderr = '';
    const groups = new Map<number, number>();
    let lineWaiters: { test: (o: Outcome) => boolean; resolve: () => void }[] = [];
    // Lines are parsed as they complete, each once; a bad one stops this (the parse of the whole
    // stdout at the end reports it, naming its line).
    let unparsed = 0;
    let lineCount = 0;
    let readable = true;
    let ended = false;
    let doneSeen = false;
    proc.stdout!.on('data', (d: Buffer) => {
      stdout += d.toString();
      for (let nl = stdout.indexOf('\n', unparsed); readable && nl >= 0; nl = stdout.indexOf('\n', unparsed)) {
        let o: Outcome;
        try {
          o = parseOutcomeLine(stdout.slice(unparsed, nl), ++lineCount, `driver pid ${proc.pid} stdout`);
        } catch {
          readable = false;
          break;
        }
        unparsed = nl + 1;
        if (o.t === 'node') {
          groups.set(o.node, o.pgid);
          trackGroup(o.pgid);
        }
        if (o.t === 'done' || o.t === 'error') ended = true;
        if (o.t === 'done') doneSeen = true;
        options.onLine?.(o, lineCount);
        lineWaiters = lineWaiters.filter((w) => !(w.test(o) && (w.resolve(), true)));
      }
    });
    proc.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
    proc.stdin!.write(JSON.stringify(withFolder) + '\n');
    // One disk: nothing more comes on stdin (a driver may read it to its end first). A cluster's
    // stays open for restart commands until the run ends.
    if (withFolder.nodes === undefined) proc.stdin!.end();
    let exited = false;
    const done = proc.then((r) => {
      exited = true;
      return r;
    });
    const within = async <T>(p: Promise<T>, ms: number): Promise<T | 'timeout'> => Promise.race([p, new Promise<'timeout'>((r) => setTimeout(r, ms, 'timeout').unref())]);
    let killed = false;
    /** Paused nodes: the group stopped and the timer that resumes it. */
    const paused = new Map<number, { pgid: number; timer: NodeJS.Timeout }>();
    const resume = (node: number) => {
      const p = paused.get(node);
      if (!p) return;
      paused.delete(node);
      clearTimeout(p.timer);
      signalGroupWith(p.pgid, 'SIGCONT');
    };
    const control: ClusterControl = {
      groups,
      killAll: () => {
        killed ||= !exited;
        for (const k of [...paused.keys()]) resume(k);
        signalGroup(proc.pid);
        for (const g of groups.values()) signalGroup(g);
      },
      killNodes: (nodes) => {
        for (const k of nodes) {
          resume(k);
          signalGroup(groups.get(k));
        }
      },
      pause: async (node, durationMs) => {
        const pgid = groups.get(node);
        if (pgid === undefined) throw new HarnessError(`cannot pause node ${node}: the cluster driver printed no node line for it`);
        if (!(durationMs > 0 && durationMs <= MAX_PAUSE_MS)) throw new Error(`a pause lasts 1..${MAX_PAUSE_MS} ms, got ${durationMs}`);
        resume(node);
        signalGroupWith(pgid, 'SIGSTOP');
        paused.set(node, { pgid, timer: setTimeout(() => resume(node), durationMs) });
        // The node's leader (its pgid) must be seen stopped: a pause that did not bite would pass unnoticed.
        const deadline = Date.now() + STOP_SEEN_MS;
        for (let state = processState(pgid); state !== 'T' && state !== 't'; state = processState(pgid)) {
          if (state === null || state === 'Z') return; // it died meanwhile: nothing left to pause
          // In a request the daemon has not answered yet (state D): the stop is pending and bites when it returns.
          if (state === 'D' && stopPending(pgid)) return;
          if (Date.now() > deadline) throw new HarnessError(`node ${node}'s server (pid ${pgid}) was not stopped within ${STOP_SEEN_MS} ms of SIGSTOP (state ${state})`);
          await new Promise((r) => setTimeout(r, 5));
        }
      },
      reap: async (nodes) => {
        for (const k of nodes) {
          if (!(await killGroup(groups.get(k), timeouts.killMs))) throw new HarnessError(`node ${k}'s processes (group ${groups.get(k)}) did not exit within ${timeouts.killMs} ms of SIGKILL and the cut`);
        }
      },
      restart: async (node) => {
        let doneFirst = doneSeen;
        const restarted = new Promise<void>((resolve) => {
          lineWaiters.push({ test: (o) => (o.t === 'node' && o.node === node && o.restarted === true) || o.t === 'done' || o.t === 'error', resolve: () => resolve() });
          lineWaiters.push({ test: (o) => o.t === 'done', resolve: () => (doneFirst = true) });
          if (exited || ended) resolve();
        });
        const cmd: RestartCommand = { cmd: 'restart', node };
        proc.stdin!.write(JSON.stringify(cmd) + '\n');
        const waited = await within(restarted, restartMs);
        // A run that ends (done) while one of its nodes is cut leaves that node down for good: a
        // cluster driver waits for the restart before its run ends (docs/driver-protocol.md, "Clusters").
        if (doneFirst) throw new HarnessError(`the cluster driver ended its run (its "done" line) while node ${node} was cut and not yet restarted: a cluster driver must wait (bounded) for the harness's {"cmd":"restart","node":${node}} before it ends a run in which a node's server was killed (docs/driver-protocol.md, "Clusters")`);
        if (waited === 'timeout') {
          const said = stdout.trim().split('\n').slice(-3).join('\n  ');
          // Where the driver waits: a main thread blocked in the kernel or on a lock reads no stdin.
          // The driver's own native stacks too (NATS R3: its main thread waited on a futex, once in 5 to 25 runs under load).
          throw new HarnessError(`the cluster driver did not restart node ${node} (no {"t":"node","node":${node},...,"restarted":true} line) within ${restartMs} ms; its processes: ${describeGroup(proc.pid!)}; its last lines:\n  ${said}${stderr.trim() ? `\nits stderr:\n  ${stderr.trim().slice(-2000).split('\n').join('\n  ')}` : ''}\nthe driver's native stacks (gdb):\n  ${nativeBacktrace(proc.pid!).split('\n').join('\n  ')}`);
        }
      },
    };
    let frozenAt: number | null = null;
    let hung = false;
    let failed: unknown;
    const nodesLeft: number[] = [];
    try {
      if (atFreeze) {
        if (!daemon) throw new Error('invariant: an armed driver run needs the daemon that freezes it');
        const deadline = Date.now() + timeouts.runMs;
        // Until the driver exits, or ends its run: a serving driver (a cluster's, whose stdin stays
        // open for restarts) waits for its next spec after `done`, so a cut that never came must not
        // wait for its exit (seen: NATS R3 cut at request 451 of a 440-request run, judged a hang at 120 s).
        while (!exited && !ended) {
          const r = await daemon.client.waitFrozen(timeouts.pollMs);
          if (r.frozen) {
            frozenAt = r.frozenAt ?? null;
            await within(done, timeouts.graceMs);
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
      proc.stdin!.end();
      if (!killed && !hung && (await within(done, timeouts.runMs)) === 'timeout') hung = true;
      // What the hung driver waits on, in its stderr (an artifact keeps it), before the kill ends it.
      if (hung && !exited) stderr += `\npowercut harness: the run passed its bound of ${timeouts.runMs} ms; its processes: ${describeGroup(proc.pid!)}\nthe driver's native stacks (gdb):\n${nativeBacktrace(proc.pid!)}\n`;
    } catch (err) {
      failed = err;
      throw err;
    } finally {
      // A driver that ended by itself must have stopped its nodes (a grace for servers that exit when their stdin closes).
      if (exited && !killed) {
        const deadline = Date.now() + NODE_EXIT_GRACE_MS;
        for (const [k, g] of groups) {
          while (groupAlive(g) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
          if (groupAlive(g)) nodesLeft.push(k);
        }
      }
      control.killAll();
      if ((await within(done, timeouts.killMs)) === 'timeout') {
        // Name what is stuck, and what went wrong first if something did: this error replaces it.
        const stuck = [`the driver's group ${proc.pid}: ${describeGroup(proc.pid!)}`, ...[...groups].map(([k, g]) => `node ${k}'s group ${g}: ${describeGroup(g)}`)];
        const first = failed === undefined ? '' : `\nafter this error of the run: ${failed instanceof Error ? failed.message : String(failed)}`;
        throw new HarnessError(`driver pid ${proc.pid} did not exit within ${timeouts.killMs} ms of SIGKILL (its stdout or stderr still open, or a process in a request the daemon holds)\n  ${stuck.join('\n  ')}${first}`);
      }
      await control.reap([...groups.keys()]);
      await reapGroup(proc.pid, timeouts);
    }
    const result = await done;
    if (result.failed && result.exitCode === undefined && result.signal === undefined && !killed) {
      throw new HarnessError(`cannot start driver '${describeCommand(command)}': ${result.message}`);
    }
    const expected = [DRIVER_EXIT.ok, DRIVER_EXIT.queueError, ...(options.exitCodes ?? [])] as readonly (number | undefined)[];
    if (!killed && !hung && !expected.includes(result.exitCode)) throw unexpectedExit(command, proc.pid, result.exitCode, result.signal, stderr);
    const record = {
      role: spec.mode,
      outcomes: parseOutcomes(stdout, `driver pid ${proc.pid} (${spec.mode}) stdout`),
      exitCode: killed || hung ? null : (result.exitCode ?? null),
      killed: killed && !hung,
      hung,
      failedRequests: [],
    };
    return { record, stderr, frozenAt, nodesLeft, pgid: proc.pid!, stdout };
  });
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
    const started = inDriverNetwork(this.command);
    const proc: WorkerProc = execa(started.file, started.args, {
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
