// Random-cut crash cases: one case = reset, arm, run the workload driver until the crash point
// freezes the filesystem, SIGKILL it, cut the power, (optionally cut again during recovery),
// drain in a new driver, and judge with the oracle. Every wait is bounded; a driver this module
// started never outlives the call. A failure of the tool itself is a HarnessError (with an artifact).
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { pathMatcher } from '../../fusefs/crash-point.js';
import type { Mark } from '../../fusefs/crash-states.js';
import { MARK_DIR_NAME, type CrashPoint, type CrashPolicy, type TraceEntry } from '../../fusefs/protocol.js';
import type { CutTarget, Target } from './target.js';
import { defaultArtifactRoot, writeArtifact, writeHarnessErrorArtifact } from './artifacts.js';
import type { CaseResult, CrashCase, CutRecord, CutSpec } from './crash-case.js';
import { countContract, emptyCoverage, policyCoverage, runFeatures, type Coverage } from './coverage.js';
import { contractOf } from './outcome.js';
import type { DaemonHandle } from './daemon-process.js';
import { mergeTimeouts, runDriver, type DriverTimeouts } from './driver-process.js';
import type { DriverSpec } from './driver-spec.js';
import { assertDaemonAlive, asHarnessError } from './harness-error.js';
import { judge, type History, type RunRecord, type Violation } from './oracle.js';
import { workloadKey } from './workload.js';
import { keepStartingState } from './starting-state.js';

export interface RunCaseOptions {
  /** Write an artifact folder here on a violation or a harness error (default: defaultArtifactRoot()). */
  artifactRoot?: string;
  /** false: never write an artifact (e.g. while shrinking, or replaying). Default true. */
  writeArtifacts?: boolean;
  /** Save durable and live images at each cut, for the artifact. Default true. */
  captureImages?: boolean;
  timeouts?: Partial<DriverTimeouts>;
}

/** Event ids of run K start above K * ID_BASE_PER_RUN: unique across the runs of a case. */
export const ID_BASE_PER_RUN = 1_000_000;

/** Where drivers stat their confirmation markers (fusefs/protocol.ts says why it is safe). */
export function markDir(daemon: DaemonHandle): string {
  return path.join(daemon.mountpoint, MARK_DIR_NAME);
}

export function failedRequests(trace: readonly TraceEntry[]): RunRecord['failedRequests'] {
  return trace
    .filter((e) => e.result !== undefined && e.result < 0)
    .map((e) => ({ op: e.op, kind: e.kind, path: e.path, result: e.result as number }));
}

/** The spec of run `runIndex` of case `c` in `dir` (on the mount: its root, which unlike a subdirectory always exists durably). */
export function specFor(dir: string, c: Pick<CrashCase, 'settings' | 'variant' | 'workload' | 'recoverySettings'>, mode: DriverSpec['mode'], runIndex: number): DriverSpec {
  return {
    mode,
    dir,
    settings: mode === 'drain' && c.recoverySettings ? { ...c.settings, ...c.recoverySettings } : c.settings,
    ...(c.variant !== undefined ? { variant: c.variant } : {}),
    ...(mode === 'workload' ? { workload: c.workload } : {}),
    idBase: runIndex * ID_BASE_PER_RUN,
  };
}

/** The history the oracle judges for a case: its runs, with what faults were armed. */
function historyOf(target: Target, c: CrashCase, runs: RunRecord[]): History {
  return { target: target.name, faultsInjected: (c.faults?.length ?? 0) > 0, damagedDisk: (c.recoveryFaults?.length ?? 0) > 0, runs };
}

/** What a judged random-cut case exercised. */
function caseCoverage(target: Target, c: CrashCase, cuts: CutRecord[], runs: RunRecord[], readFaultsHit: number): Coverage {
  const cov = emptyCoverage();
  cov.cases = 1;
  if (c.cut) {
    cov.cutsRequested = 1;
    cov.cutsLanded = cuts[0].frozenAt !== null ? 1 : 0;
  }
  if (c.recoveryCut) {
    cov.recoveryCutsRequested = 1;
    cov.recoveryCutsLanded = cuts[1]?.frozenAt !== null ? 1 : 0;
  }
  if (c.faults?.length) {
    cov.faultCases = 1;
    cov.faultsFired = runs.some((r) => r.failedRequests.length > 0) ? 1 : 0;
  }
  if (c.recoveryFaults?.length) {
    cov.faultCases = 1;
    cov.faultsFired = readFaultsHit > 0 ? 1 : 0;
  }
  const policies = [c.policy, ...(c.recoveryCut ? [c.recoveryCut.policy] : [])];
  cuts.forEach((cut, k) => {
    const p = policyCoverage(cov, policies[k]);
    p.cuts++;
    if (cut.frozenAt !== null) p.landed++;
    cov.tornPartialWrites += cut.tornPartialWrites ?? 0;
  });
  countContract(cov, contractOf(runs[0]?.outcomes ?? []));
  cov.events = target.workloadEvents(cuts[0]?.trace ?? []);
  cov.features = runFeatures(cuts[0]?.trace ?? [], cov.events);
  return cov;
}

/** Runs one crash case of `target` on a running daemon (which it resets first) and judges it. A HarnessError means the tool failed. */
export async function runCase(daemon: DaemonHandle, target: Target, c: CrashCase, options: RunCaseOptions = {}): Promise<CaseResult> {
  const started = Date.now();
  const timeouts = mergeTimeouts(options.timeouts);
  const writeArtifacts = options.writeArtifacts ?? true;
  const artifactRoot = options.artifactRoot ?? defaultArtifactRoot();
  const client = daemon.client;
  const imagesDir = (options.captureImages ?? true) ? await mkdtemp(path.join(os.tmpdir(), 'powercut-images-')) : undefined;
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
      let marks: Mark[] = [];
      let tornPartialWrites = 0;
      const spec = { ...specFor(daemon.mountpoint, c, cr.mode, k), mark: markDir(daemon) };
      const run = await runDriver(daemon, target.driver, spec, cr.cut !== undefined, timeouts, async () => {
        ({ trace, marks } = await client.traceWithMarks());
        if (imagesDir) {
          await client.image(path.join(imagesDir, `cut-${k}-durable`), 'durable');
          await client.image(path.join(imagesDir, `cut-${k}-live`), 'live');
        }
        if (k === 0 && c.faults?.length) await client.clearFaults();
        tornPartialWrites = (await client.crash(cr.policy, cr.seed)).tornPartialWrites ?? 0;
        if (imagesDir) await client.image(path.join(imagesDir, `cut-${k}-after-crash`), 'durable');
        if (k === 0) for (const f of c.recoveryFaults ?? []) await client.fault(f);
      });
      run.record.failedRequests = failedRequests(trace);
      runs.push(run.record);
      stderr.push(run.stderr);
      cuts.push({ frozenAt: run.frozenAt, trace, marks, tornPartialWrites });
    }
    const final = await runDriver(daemon, target.driver, specFor(daemon.mountpoint, c, 'drain', cutRuns.length), false, timeouts);
    await assertDaemonAlive(daemon, 'the recovery drain');
    runs.push(final.record);
    stderr.push(final.stderr);
    const readFaultsHit = c.recoveryFaults?.length ? (await client.status()).readFaultsHit : 0;

    const violations = judge(historyOf(target, c, runs));
    const result: CaseResult = {
      case: c, runs, cuts, violations, verdict: violations.length ? 'fail' : 'pass', coverage: caseCoverage(target, c, cuts, runs, readFaultsHit), durationMs: 0, stderr,
    };
    if (violations.length && writeArtifacts) {
      if (imagesDir) await keepStartingState(daemon, imagesDir);
      result.artifactDir = await writeArtifact(artifactRoot, target.name, result, imagesDir);
    }
    result.durationMs = Date.now() - started;
    return result;
  } catch (err) {
    const harnessError = await asHarnessError(err, daemon);
    if (writeArtifacts) harnessError.artifactDir = await writeHarnessErrorArtifact(artifactRoot, target.name, c, harnessError).catch(() => undefined);
    throw harnessError;
  } finally {
    if (imagesDir) await rm(imagesDir, { recursive: true, force: true });
  }
}

/** Uncut traces by workload, settings, target and variant; the oldest is dropped beyond this many. */
export const UNCUT_TRACE_CACHE_ENTRIES = 64;
const uncutTraces = new Map<string, TraceEntry[]>();

/**
 * Mutating requests of one uncut run of the workload (matching `filter`, if given), so crash
 * points can be spread over the whole run. The uncut trace is cached (bounded). Resets the daemon.
 * Undefined when the uncut run hung or failed: that is the queue's to answer for, with no cut
 * (a case without one judges it), not the tool's.
 */
export async function countRequests(
  daemon: DaemonHandle,
  target: Target,
  c: Pick<CrashCase, 'workload' | 'settings' | 'variant' | 'target' | 'driver'>,
  filter: CutTarget = {},
  timeouts?: Partial<DriverTimeouts>,
): Promise<number | undefined> {
  const key = JSON.stringify([workloadKey(c.workload), c.settings, c.variant ?? null, c.target ?? null, c.driver ?? null]);
  let trace = uncutTraces.get(key);
  if (trace === undefined) {
    await daemon.client.reset();
    const spec = specFor(daemon.mountpoint, c, 'workload', 0);
    const run = await runDriver(daemon, target.driver, spec, false, mergeTimeouts(timeouts));
    if (run.record.hung || run.record.exitCode !== 0) return undefined;
    trace = await daemon.client.trace();
    if (uncutTraces.size >= UNCUT_TRACE_CACHE_ENTRIES) uncutTraces.delete(uncutTraces.keys().next().value!);
    uncutTraces.set(key, trace);
  }
  const matches = filter.path === undefined ? () => true : pathMatcher(filter.path);
  return trace.filter((e) => (filter.kind === undefined || e.kind === filter.kind) && matches(e.path)).length;
}

/** A crash point at `fraction` (0..1) of an uncut run's `requestCount` requests (those matching `filter`). */
export function crashPointAt(fraction: number, requestCount: number, timing: CrashPoint['timing'], filter: CutTarget = {}): CrashPoint {
  if (!(fraction >= 0 && fraction <= 1)) throw new Error(`crashPointAt: fraction must be in 0..1, got ${fraction}`);
  if (!Number.isInteger(requestCount) || requestCount < 1) throw new Error(`crashPointAt: requestCount must be an integer >= 1, got ${requestCount}`);
  return { atOp: Math.min(requestCount, 1 + Math.floor(fraction * requestCount)), timing, ...filter };
}

/**
 * Recovery with a second power cut: the case's recovery cut in a drain, the cut, then the final drain.
 * With `reload` (which puts the state back in place), a cut drawn past the end of a recovery that
 * made n >= 1 requests is drawn again within them (request 1 + (atOp - 1) mod n) and the recovery
 * re-run: a queue whose recovery writes little is still cut during it. `cut` is the one that ran last.
 */
export async function recoverWithCut(
  daemon: DaemonHandle,
  target: Target,
  c: CrashCase,
  timeouts: DriverTimeouts,
  reload?: () => Promise<void>,
): Promise<{ runs: RunRecord[]; stderr: string[]; landed: boolean; cut: CutSpec }> {
  const once = async (rc: CutSpec) => {
    await daemon.client.arm(rc.cut);
    let trace: TraceEntry[] = [];
    const cut = await runDriver(daemon, target.driver, specFor(daemon.mountpoint, c, 'drain', 1), true, timeouts, async () => {
      trace = await daemon.client.trace();
      await daemon.client.crash(rc.policy, rc.seed);
    });
    // Not frozen: the drain ran to its end, and the trace read at the cut (runDriver cuts after the
    // driver exits too) holds every request it made. Read again here, after the crash, it would be
    // empty (a crash restarts the numbering), and the cut would never be drawn again.
    cut.record.failedRequests = failedRequests(trace);
    return { cut, requests: trace.length };
  };
  let rc = c.recoveryCut!;
  let { cut, requests } = await once(rc);
  if (cut.frozenAt === null && reload && requests > 0 && rc.cut.atOp > requests) {
    rc = { ...rc, cut: { ...rc.cut, atOp: 1 + ((rc.cut.atOp - 1) % requests) } };
    await reload();
    ({ cut } = await once(rc));
  }
  const final = await runDriver(daemon, target.driver, specFor(daemon.mountpoint, c, 'drain', 2), false, timeouts);
  await assertDaemonAlive(daemon, 'the drain after a recovery cut');
  // A cut that never landed came after the drain ran to its end: that drain changed the disk all the same.
  return { runs: [cut.record, final.record], stderr: [cut.stderr, final.stderr], landed: cut.frozenAt !== null, cut: rc };
}

/**
 * Re-runs only the recovery of a stored case: the daemon must hold the stored post-crash image,
 * and `priorRuns` are the stored runs before the final drain. The disk state is exactly the
 * recorded one, so a deterministic recovery bug reproduces exactly.
 */
export async function replayRecovery(daemon: DaemonHandle, target: Target, c: CrashCase, priorRuns: RunRecord[], timeouts?: Partial<DriverTimeouts>): Promise<{ final: RunRecord; violations: Violation[] }> {
  if (c.state && c.recoveryCut) {
    // An exhaustive state with a cut during its recovery: the stored image is the state itself, so its recovery cut runs again.
    const recovery = await recoverWithCut(daemon, target, c, mergeTimeouts(timeouts));
    const violations = judge({ target: target.name, faultsInjected: false, runs: [priorRuns[0], ...recovery.runs] });
    return { final: recovery.runs[recovery.runs.length - 1], violations };
  }
  for (const f of c.recoveryFaults ?? []) await daemon.client.fault(f);
  const final = await runDriver(daemon, target.driver, specFor(daemon.mountpoint, c, 'drain', priorRuns.length), false, mergeTimeouts(timeouts));
  await assertDaemonAlive(daemon, 'the replayed recovery');
  const violations = judge(historyOf(target, c, [...priorRuns, final.record]));
  return { final: final.record, violations };
}
