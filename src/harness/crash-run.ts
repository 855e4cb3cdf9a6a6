// Crash orchestration: one case = reset, arm, run the workload driver until the crash point
// freezes the filesystem, SIGKILL it, cut the power, (optionally cut again during recovery),
// drain in a new driver, and judge with the oracle. Every wait is bounded; a driver this module
// started never outlives the call.
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { execa, type ResultPromise } from 'execa';
import { pathMatcher } from '../../fusefs/crash-point.js';
import type { CrashPoint, CrashPolicy, Fault, TraceEntry } from '../../fusefs/protocol.js';
import { DEFAULT_SETTINGS } from '../queue/index.js';
import type { QueueSettings } from '../queue/types.js';
import { writeArtifact } from './artifacts.js';
import type { DaemonHandle } from './daemon-process.js';
import { distPath } from './dist-path.js';
import type { DriverSpec } from './driver-spec.js';
import { judge, type RunRecord, type Violation } from './oracle.js';
import { DRIVER_EXIT, parseOutcomes } from './outcome.js';
import { workloadKey, type Workload } from './workload.js';

export interface CutSpec {
  cut: CrashPoint;
  policy: CrashPolicy;
  seed: number;
}

/** Everything that determines one crash run; stored as case.json in an artifact. */
export interface CrashCase {
  workload: Workload;
  settings: Partial<QueueSettings>;
  /** A known-bad variant of properties/variants, by name; absent = the real queue. */
  variant?: string;
  /** Where the power is cut. Absent: the cut comes after the workload driver exits (fault runs). */
  cut?: CrashPoint;
  policy: CrashPolicy;
  seed: number;
  /** Armed before the workload, cleared before the cut. */
  faults?: Fault[];
  /** A second power cut during the recovery drain (request numbers restart at 1 after a cut). */
  recoveryCut?: CutSpec;
  /** Settings merged over `settings` for every run after the first cut (e.g. a format migration on restart). */
  recoverySettings?: Partial<QueueSettings>;
}

export interface CrashRunTimeouts {
  /** A driver run: until it freezes at the crash point or exits. */
  runMs: number;
  /** A driver to die after SIGKILL. */
  killMs: number;
  /** Polling interval of wait-frozen while the driver runs. */
  pollMs: number;
}
export const DEFAULT_TIMEOUTS: CrashRunTimeouts = { runMs: 20_000, killMs: 5_000, pollMs: 20 };

export interface RunCaseOptions {
  /** Write an artifact folder here on a violation (default: $POWERCUT_ARTIFACTS or <tmp>/powercut-artifacts). */
  artifactRoot?: string;
  /** false: never write an artifact (e.g. while shrinking, or replaying). Default true. */
  writeArtifacts?: boolean;
  /** Save durable and live images at each cut, for the artifact. Default true. */
  captureImages?: boolean;
  timeouts?: Partial<CrashRunTimeouts>;
}

export interface CutRecord {
  /** Op number the filesystem froze at, or null when the driver exited first (cut after the run). */
  frozenAt: number | null;
  /** The mutating requests of the run, as the daemon answered them, up to the cut. */
  trace: TraceEntry[];
}

export interface CaseResult {
  case: CrashCase;
  runs: RunRecord[];
  cuts: CutRecord[];
  violations: Violation[];
  verdict: 'pass' | 'fail';
  /** Set when a violation was found and an artifact written. */
  artifactDir?: string;
  durationMs: number;
  /** stderr of each driver run (diagnostics; empty normally). */
  stderr: string[];
}

const ID_BASE_PER_RUN = 1_000_000;

export function defaultArtifactRoot(): string {
  return process.env.POWERCUT_ARTIFACTS ?? path.join(os.tmpdir(), 'powercut-artifacts');
}

interface DriverRun {
  record: RunRecord;
  stderr: string;
  frozenAt: number | null;
}

/** Drivers running now: killed if this process exits mid-case (e.g. on SIGINT), so none outlives it. */
const liveDrivers = new Set<number>();
process.on('exit', () => {
  for (const pid of liveDrivers) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch { /* already gone */ }
  }
});

function startDriver(spec: DriverSpec): ResultPromise<{ input: string; stripFinalNewline: false; reject: false; stdout: 'pipe'; stderr: 'pipe' }> {
  return execa(process.execPath, [distPath('src/harness/driver.js')], {
    input: JSON.stringify(spec),
    stripFinalNewline: false, // a line without its newline was cut mid-print: parseOutcomes needs to tell
    reject: false,
    stdout: 'pipe',
    stderr: 'pipe',
  });
}

/**
 * Runs one driver. With `armed`, waits until the filesystem freezes at the crash point or the
 * driver exits, then SIGKILLs it; without, waits for it to exit. Bounded by timeouts.runMs.
 * `atCut` runs after the SIGKILL and before waiting for the exit: a process killed while the
 * daemon holds one of its requests cannot exit until the power cut unmounts (the kernel waits for
 * an answer to a request already in userspace), so the cut itself belongs there.
 */
async function runDriver(
  daemon: DaemonHandle,
  spec: DriverSpec,
  armed: boolean,
  timeouts: CrashRunTimeouts,
  atCut: () => Promise<void> = async () => {},
): Promise<DriverRun> {
  const proc = startDriver(spec);
  if (proc.pid !== undefined) liveDrivers.add(proc.pid);
  let exited = false;
  const done = proc.then((r) => {
    exited = true;
    if (proc.pid !== undefined) liveDrivers.delete(proc.pid);
    return r;
  });
  const exitWithin = async (ms: number) => {
    const timer = new Promise<'timeout'>((resolve) => setTimeout(resolve, ms, 'timeout').unref());
    return (await Promise.race([done, timer])) !== 'timeout';
  };
  let frozenAt: number | null = null;
  let hung = false;
  let killed = false;
  try {
    if (armed) {
      const deadline = Date.now() + timeouts.runMs;
      while (!exited) {
        const r = await daemon.client.waitFrozen(timeouts.pollMs);
        if (r.frozen) {
          frozenAt = r.frozenAt ?? null;
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
    if (!exited) killed = proc.kill('SIGKILL');
    await atCut();
  } finally {
    if (!exited) {
      proc.kill('SIGKILL');
      if (!(await exitWithin(timeouts.killMs))) {
        throw new Error(`driver pid ${proc.pid} did not exit within ${timeouts.killMs} ms of SIGKILL and the power cut (stuck in the kernel?)`);
      }
    }
  }
  const result = await done;
  const stdout = typeof result.stdout === 'string' ? result.stdout : '';
  const where = `driver pid ${proc.pid} (${spec.mode}) stdout`;
  const record: RunRecord = {
    role: spec.mode,
    outcomes: parseOutcomes(stdout, where),
    exitCode: killed ? null : (result.exitCode ?? null),
    killed: killed && !hung,
    hung,
    failedRequests: [],
  };
  if (!killed && result.exitCode !== DRIVER_EXIT.ok && result.exitCode !== DRIVER_EXIT.queueError) {
    throw new Error(`${where}: driver exited with code ${result.exitCode}${result.signal ? ` (signal ${result.signal})` : ''}: ${String(result.stderr).slice(0, 2000)}`);
  }
  return { record, stderr: typeof result.stderr === 'string' ? result.stderr : '', frozenAt };
}

function failedRequests(trace: TraceEntry[]): RunRecord['failedRequests'] {
  return trace
    .filter((e) => e.result !== undefined && e.result < 0)
    .map((e) => ({ op: e.op, kind: e.kind, path: e.path, result: e.result as number }));
}

function mergeTimeouts(t?: Partial<CrashRunTimeouts>): CrashRunTimeouts {
  return { ...DEFAULT_TIMEOUTS, ...t };
}

function specFor(daemon: DaemonHandle, c: CrashCase, mode: DriverSpec['mode'], runIndex: number): DriverSpec {
  return {
    mode,
    dir: daemon.mountpoint, // the mount root: unlike a subdirectory, it always exists durably
    settings: mode === 'drain' && c.recoverySettings ? { ...c.settings, ...c.recoverySettings } : c.settings,
    ...(c.variant !== undefined ? { variant: c.variant } : {}),
    ...(mode === 'workload' ? { workload: c.workload } : {}),
    idBase: runIndex * ID_BASE_PER_RUN,
  };
}

/** Runs one crash case on a running daemon (which it resets first) and judges it. */
export async function runCase(daemon: DaemonHandle, c: CrashCase, options: RunCaseOptions = {}): Promise<CaseResult> {
  const started = Date.now();
  const timeouts = mergeTimeouts(options.timeouts);
  const captureImages = options.captureImages ?? true;
  const client = daemon.client;
  const imagesDir = captureImages ? await mkdtemp(path.join(os.tmpdir(), 'powercut-images-')) : undefined;
  try {
    await client.reset();
    for (const f of c.faults ?? []) await client.fault(f);

    const runs: RunRecord[] = [];
    const cuts: CutRecord[] = [];
    const stderr: string[] = [];
    // Cut runs: the workload, then optionally the first recovery drain.
    const cutRuns: { mode: DriverSpec['mode']; cut?: CrashPoint; policy: CrashPolicy; seed: number }[] = [
      { mode: 'workload', cut: c.cut, policy: c.policy, seed: c.seed },
      ...(c.recoveryCut ? [{ mode: 'drain' as const, ...c.recoveryCut }] : []),
    ];
    for (const [k, cr] of cutRuns.entries()) {
      if (cr.cut) await client.arm(cr.cut);
      let trace: TraceEntry[] = [];
      const run = await runDriver(daemon, specFor(daemon, c, cr.mode, k), cr.cut !== undefined, timeouts, async () => {
        trace = await client.trace();
        if (imagesDir) {
          await client.image(path.join(imagesDir, `cut-${k}-durable`), 'durable');
          await client.image(path.join(imagesDir, `cut-${k}-live`), 'live');
        }
        if (k === 0 && c.faults?.length) await client.clearFaults();
        await client.crash(cr.policy, cr.seed);
        if (imagesDir) await client.image(path.join(imagesDir, `cut-${k}-after-crash`), 'durable');
      });
      run.record.failedRequests = failedRequests(trace);
      runs.push(run.record);
      stderr.push(run.stderr);
      cuts.push({ frozenAt: run.frozenAt, trace });
    }
    const final = await runDriver(daemon, specFor(daemon, c, 'drain', cutRuns.length), false, timeouts);
    runs.push(final.record);
    stderr.push(final.stderr);

    const violations = judge({ checkpointAcks: effectiveCheckpointAcks(c.settings), faultsInjected: (c.faults?.length ?? 0) > 0, runs });
    const result: CaseResult = { case: c, runs, cuts, violations, verdict: violations.length ? 'fail' : 'pass', durationMs: 0, stderr };
    if (violations.length && (options.writeArtifacts ?? true)) {
      result.artifactDir = await writeArtifact(options.artifactRoot ?? defaultArtifactRoot(), result, imagesDir);
    }
    result.durationMs = Date.now() - started;
    return result;
  } finally {
    if (imagesDir) await rm(imagesDir, { recursive: true, force: true });
  }
}

/** checkpointAcks as the queue will use it: the case's setting or the queue's default. */
export function effectiveCheckpointAcks(settings: Partial<QueueSettings>): number {
  return settings.checkpointAcks ?? DEFAULT_SETTINGS.checkpointAcks;
}

const uncutTraces = new Map<string, TraceEntry[]>();

/** Filters a crash point may carry: the Nth request of a kind and/or touching a path glob. */
export type CutTarget = Pick<CrashPoint, 'kind' | 'path'>;

/**
 * Mutating requests of one uncut run of the workload (matching `target`, if given), so crash
 * points can be spread over the whole run. The uncut trace is cached per workload, settings and
 * variant. Resets the daemon.
 */
export async function countRequests(daemon: DaemonHandle, c: Pick<CrashCase, 'workload' | 'settings' | 'variant'>, target: CutTarget = {}, timeouts?: Partial<CrashRunTimeouts>): Promise<number> {
  const key = JSON.stringify([workloadKey(c.workload), c.settings, c.variant ?? null]);
  let trace = uncutTraces.get(key);
  if (trace === undefined) {
    await daemon.client.reset();
    const run = await runDriver(daemon, specFor(daemon, { ...c, policy: 'keep-all', seed: 0 }, 'workload', 0), false, mergeTimeouts(timeouts));
    if (run.record.hung || run.record.exitCode !== 0) {
      const error = run.record.outcomes.find((o) => o.t === 'error');
      throw new Error(`countRequests: the uncut run did not finish cleanly (exit ${run.record.exitCode}${run.record.hung ? ', hung' : ''}${error && error.t === 'error' ? `: ${error.message}` : ''})`);
    }
    trace = await daemon.client.trace();
    uncutTraces.set(key, trace);
  }
  const matches = target.path === undefined ? () => true : pathMatcher(target.path);
  return trace.filter((e) => (target.kind === undefined || e.kind === target.kind) && matches(e.path)).length;
}

/** A crash point at `fraction` (0..1) of an uncut run's `requestCount` requests (those matching `target`). */
export function crashPointAt(fraction: number, requestCount: number, timing: CrashPoint['timing'], target: CutTarget = {}): CrashPoint {
  if (!(fraction >= 0 && fraction <= 1)) throw new Error(`crashPointAt: fraction must be in 0..1, got ${fraction}`);
  if (!Number.isInteger(requestCount) || requestCount < 1) throw new Error(`crashPointAt: requestCount must be an integer >= 1, got ${requestCount}`);
  return { atOp: Math.min(requestCount, 1 + Math.floor(fraction * requestCount)), timing, ...target };
}

/**
 * Re-runs only the recovery of a stored case: the daemon must have been started on the stored
 * post-crash image (`--image`), and `priorRuns` are the stored runs before the final drain. The
 * disk state is exactly the recorded one, so a deterministic recovery bug reproduces exactly.
 */
export async function replayRecovery(daemon: DaemonHandle, c: CrashCase, priorRuns: RunRecord[], timeouts?: Partial<CrashRunTimeouts>): Promise<{ final: RunRecord; violations: Violation[] }> {
  const final = await runDriver(daemon, specFor(daemon, c, 'drain', priorRuns.length), false, mergeTimeouts(timeouts));
  const violations = judge({ checkpointAcks: effectiveCheckpointAcks(c.settings), faultsInjected: (c.faults?.length ?? 0) > 0, runs: [...priorRuns, final.record] });
  return { final: final.record, violations };
}
