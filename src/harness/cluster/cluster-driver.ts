// One run of a cluster driver: the spec on its stdin, which stays open for restart commands; its
// lines read as they come, so the harness knows each node's process group before it cuts that
// node. A node's cut kills exactly its group; the driver's group and every node's group are killed
// when the run ends. Every wait is bounded.
import { execa } from 'execa';
import { readFileSync } from 'node:fs';
import type { DaemonHandle } from '../daemon-process.js';
import { withScratch, type DriverCommand, type DriverRun, type DriverTimeouts } from '../driver-process.js';
import type { DriverSpec, RestartCommand } from '../driver-spec.js';
import { HarnessError } from '../harness-error.js';
import { DRIVER_EXIT, parseOutcomeLine, parseOutcomes, type Outcome } from '../outcome.js';
import { describeGroup, groupAlive, killGroup, OWN_PROCESS_GROUP, signalGroup, trackGroup } from '../process-group.js';

/** What the harness may do to a cluster run once its crash point froze every node. */
export interface ClusterControl {
  /** Each node's process group, as its latest node line named it. */
  readonly groups: ReadonlyMap<number, number>;
  /** SIGKILLs the driver and every node (a coordinated cut: then call the daemon's crash); a paused node is resumed first. */
  killAll(): void;
  /** SIGKILLs these nodes' groups only (resumed first if paused); `reap` then waits (bounded) until they are gone (after the cut: a process in a held request dies only once it is answered). */
  killNodes(nodes: readonly number[]): void;
  /**
   * SIGSTOPs node k's group at once and SIGCONTs it `durationMs` later (bounded by MAX_PAUSE_MS),
   * or at the run's end or the node's kill, whichever comes first: nothing is left stopped. Resolves
   * once its leader is seen stopped (release a freeze meanwhile: a held request delays the stop).
   */
  pause(node: number, durationMs: number): Promise<void>;
  reap(nodes: readonly number[]): Promise<void>;
  /** Asks the driver to restart node k and waits (bounded) for its node line saying so, or for the run's end (the others served it to its end). */
  restart(node: number): Promise<void>;
}

/** How long a driver may take to restart a node and say so. */
export const RESTART_TIMEOUT_MS = 20_000;

/** The longest pause of a node: the workload waits for a paused node's answers, within its run's bound. */
export const MAX_PAUSE_MS = 10_000;

/** What atFreeze answers: 'again' if it armed another crash point (a pause's release arms the cut), so the run waits for that freeze too. */
export type FreezeHandled = void | 'again';

/** How long a SIGSTOPped node's leader may take to be seen stopped. */
const STOP_SEEN_MS = 2_000;

/** A process's state letter from /proc (R, S, D, T, Z, ...), or null if it is gone. */
function processState(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0];
  } catch {
    return null;
  }
}

/** Whether a SIGSTOP waits for the process to return from the kernel (pending: a process in a FUSE request stops only once it is answered). */
function stopPending(pid: number): boolean {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const SIGSTOP_BIT = 1n << 18n; // signal 19
    return ['ShdPnd', 'SigPnd'].some((field) => {
      const mask = new RegExp(`^${field}:\\s*([0-9a-f]+)$`, 'm').exec(status)?.[1];
      return mask !== undefined && (BigInt(`0x${mask}`) & SIGSTOP_BIT) !== 0n;
    });
  } catch {
    return false;
  }
}

function signalGroupWith(pgid: number | undefined, signal: 'SIGSTOP' | 'SIGCONT'): void {
  if (pgid === undefined) return;
  try {
    process.kill(-pgid, signal);
  } catch {
    // the group is gone already
  }
}

export interface ClusterDriverOptions {
  /** Sees each stdout line as it is parsed, with its line number (driver check looks at each node's group while it runs). */
  onLine?: (o: Outcome, line: number) => void;
  /** How long a restart may take (default RESTART_TIMEOUT_MS). */
  restartMs?: number;
}

export interface ClusterDriverRun extends DriverRun {
  /** Nodes whose process group was still alive NODE_EXIT_GRACE_MS after the driver exited by itself: a driver must stop its servers before it exits. */
  nodesLeft: number[];
  /** The driver's own process group (its pid). */
  pgid: number;
  /** Its stdout as printed. */
  stdout: string;
}

/** How long a node's processes may outlive a driver that exited by itself (a server that sees its stdin close and exits). */
export const NODE_EXIT_GRACE_MS = 2_000;

/**
 * Runs one cluster driver. `atFreeze`, if given, runs once the daemon froze at the armed crash
 * point (after the grace period): it cuts what it cuts through `control`. Without it the run goes
 * to its end, bounded by timeouts.runMs. Returns the run, killed if atFreeze killed the driver.
 */
export function runClusterDriver(
  daemon: DaemonHandle | null,
  command: DriverCommand,
  spec: DriverSpec,
  timeouts: DriverTimeouts,
  atFreeze?: (control: ClusterControl, frozenAt: number) => Promise<FreezeHandled>,
  options: ClusterDriverOptions = {},
): Promise<ClusterDriverRun> {
  const restartMs = options.restartMs ?? RESTART_TIMEOUT_MS;
  return withScratch(spec, async (withFolder) => {
    const proc = execa(command.file, command.args, {
      killSignal: 'SIGKILL', ...OWN_PROCESS_GROUP, ...(command.cwd ? { cwd: command.cwd } : {}), ...(command.env ? { env: command.env } : {}),
      stdin: 'pipe', stdout: 'pipe', stderr: 'pipe', reject: false, buffer: false,
    });
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
          o = parseOutcomeLine(stdout.slice(unparsed, nl), ++lineCount, `cluster driver pid ${proc.pid} stdout`);
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
          throw new HarnessError(`the cluster driver did not restart node ${node} (no {"t":"node","node":${node},...,"restarted":true} line) within ${restartMs} ms; its processes: ${describeGroup(proc.pid!)}; its last lines:\n  ${said}${stderr.trim() ? `\nits stderr:\n  ${stderr.trim().slice(-2000).split('\n').join('\n  ')}` : ''}`);
        }
      },
    };
    let frozenAt: number | null = null;
    let hung = false;
    let failed: unknown;
    const nodesLeft: number[] = [];
    try {
      if (atFreeze) {
        if (!daemon) throw new Error('invariant: an armed cluster run needs the daemon that freezes it');
        const deadline = Date.now() + timeouts.runMs;
        while (!exited) {
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
      if (!killed && (await within(done, timeouts.runMs)) === 'timeout') hung = true;
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
        throw new HarnessError(`cluster driver pid ${proc.pid} did not exit within ${timeouts.killMs} ms of SIGKILL (its stdout or stderr still open, or a process in a request the daemon holds)\n  ${stuck.join('\n  ')}${first}`);
      }
      await control.reap([...groups.keys()]);
      if (!(await killGroup(proc.pid, timeouts.killMs))) throw new HarnessError(`a process of cluster driver pid ${proc.pid}'s group did not exit within ${timeouts.killMs} ms of SIGKILL`);
    }
    const result = await done;
    if (!killed && !hung && result.exitCode !== DRIVER_EXIT.ok && result.exitCode !== DRIVER_EXIT.queueError) {
      throw new HarnessError(`cluster driver pid ${proc.pid} exited with code ${result.exitCode}${result.signal ? ` (signal ${result.signal})` : ''}; its stderr:\n  ${stderr.trim().slice(-2000).split('\n').join('\n  ')}`);
    }
    const record = {
      role: spec.mode,
      outcomes: parseOutcomes(stdout, `cluster driver pid ${proc.pid} (${spec.mode}) stdout`),
      exitCode: killed || hung ? null : (result.exitCode ?? null),
      killed: killed && !hung,
      hung,
      failedRequests: [],
    };
    return { record, stderr, frozenAt, nodesLeft, pgid: proc.pid!, stdout };
  });
}
