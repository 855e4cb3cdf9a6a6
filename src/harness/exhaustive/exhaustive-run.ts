// Exhaustive mode: record one run of the workload (the driver marks each confirmation in the
// request trace), ask the daemon for every distinct crash state the run can produce, and recover
// each one with the real queue in its own process on the mount, judging it against every
// confirmation made before that state's power cut. States with the same image are recovered once
// and judged once per confirmation set. A failing state becomes an artifact that replays exactly.
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { DEFAULT_STATE_CAPS, describeState, type CrashStateId, type CrashStateInfo, type Mark, type StateCaps, type StatesAnswer } from '../../../fusefs/crash-states.js';
import type { TraceEntry } from '../../../fusefs/protocol.js';
import { Prng } from '../../../fusefs/model/prng.js';
import type { Target } from '../target.js';
import { defaultArtifactRoot, writeArtifact, writeHarnessErrorArtifact } from '../artifacts.js';
import { emptyCoverage, TIME_BUDGET_CAP, type Coverage } from '../coverage.js';
import { failedRequests, markDir, recoverWithCut, specFor, type CaseResult, type CrashCase, type CutRecord, type CutSpec } from '../crash-run.js';
import type { DaemonHandle } from '../daemon-process.js';
import { DriverWorker, mergeTimeouts, runDriver, type DriverRun, type DriverTimeouts } from '../driver-process.js';
import { asHarnessError, HarnessError } from '../harness-error.js';
import { judge, type RunRecord } from '../oracle.js';
import { helloOf } from '../outcome.js';

export interface ExhaustiveOptions {
  artifactRoot: string;
  policies: CrashStateId['policy'][];
  caps: StateCaps;
  /** Cut each state's recovery once more, at a request drawn from the state, and recover again. */
  recoveryCuts: boolean;
  timeouts: Partial<DriverTimeouts>;
  /** false: a failing state writes no artifact (replay's re-run). */
  writeArtifacts: boolean;
  /** Stop recovering states at this time (Date.now() ms); the rest count as left out by the time budget. */
  deadlineMs: number;
}

export const DEFAULT_EXHAUSTIVE_OPTIONS: Omit<ExhaustiveOptions, 'artifactRoot'> = {
  policies: ['lose-unsynced', 'torn'],
  caps: DEFAULT_STATE_CAPS,
  recoveryCuts: false,
  timeouts: {},
  writeArtifacts: true,
  deadlineMs: Infinity,
};

/** Where one state's time went, for the benchmark. */
export interface StateTimings {
  recordMs: number;
  enumerateMs: number;
  loadMs: number;
  recoverMs: number;
  judgeMs: number;
  /** Distinct images recovered (states with equal images share one recovery). */
  recoveries: number;
  driverStarts: number;
}

export interface ExhaustiveResult {
  coverage: Coverage;
  failure?: CaseResult;
  /** States judged before the failing one (all of them if none failed). */
  statesBeforeFailure: number;
  timings: StateTimings;
  /** Caps that were hit, in words (also in the coverage's statesCapped). */
  capsHit: string[];
}

/** A recovery cut lands at one of the first requests of a recovery (20 to 35 of them for the built-in queue). */
export const RECOVERY_CUT_MAX_OP = 30;

/** The workload's confirmations as of a power cut after request `afterOp`: every line marked by then. */
export function truncateAtCut(workload: RunRecord, marks: readonly Mark[], trace: readonly TraceEntry[], afterOp: number): RunRecord {
  const lastLine = marks.filter((m) => m.afterOp <= afterOp).reduce((n, m) => Math.max(n, m.n), 0);
  return {
    role: 'workload',
    outcomes: workload.outcomes.slice(0, lastLine),
    exitCode: null,
    killed: true,
    hung: false,
    failedRequests: failedRequests(trace.filter((e) => e.op <= afterOp)),
  };
}

/**
 * Intervals all of whose states were judged when the time ran out. Which intervals the caps cut
 * short is not known here, so each of those is assumed among them: a lower bound, never an overstatement.
 */
function intervalsFullyJudged(answer: StatesAnswer, judgedByInterval: ReadonlyMap<number, number>): number {
  const listed = new Map<number, number>();
  for (const s of answer.states) listed.set(s.interval, (listed.get(s.interval) ?? 0) + 1);
  const full = [...listed].filter(([interval, n]) => judgedByInterval.get(interval) === n).length;
  return Math.max(0, full - (answer.intervals - answer.intervalsComplete));
}

/** What exhaustive mode checks: one workload of a target, its settings and variant (a crash case without its cut). */
export type ExhaustiveInput = Pick<CrashCase, 'target' | 'driver' | 'workload' | 'settings' | 'variant'>;

/** The crash case a state is, for artifacts and replay. */
export function stateCase(input: ExhaustiveInput, state: Pick<CrashStateInfo, 'id' | 'hash'>, recoveryCuts: boolean, caps: StateCaps): CrashCase {
  return {
    ...(input.target !== undefined ? { target: input.target } : {}),
    ...(input.driver !== undefined ? { driver: input.driver } : {}),
    workload: input.workload,
    settings: input.settings,
    ...(input.variant !== undefined ? { variant: input.variant } : {}),
    policy: state.id.policy,
    seed: state.id.data?.kind === 'sectors' ? state.id.data.seed : 0,
    state: state.id,
    stateCaps: caps,
    ...(recoveryCuts ? { recoveryCut: recoveryCutOf(state) } : {}),
  };
}

/** A second cut during the recovery of a state: seeded by the state's hash, so it replays exactly. */
function recoveryCutOf(state: Pick<CrashStateInfo, 'hash'>): CutSpec {
  const prng = new Prng(parseInt(state.hash.slice(0, 8), 16) || 1);
  return { cut: { atOp: 1 + prng.int(RECOVERY_CUT_MAX_OP), timing: prng.coin() ? 'before' : 'after' }, policy: 'lose-unsynced', seed: 0 };
}

/** Records the workload once on a fresh recording filesystem; the driver marks every line it prints. */
async function record(daemon: DaemonHandle, target: Target, input: ExhaustiveInput, timeouts: DriverTimeouts): Promise<{ run: DriverRun; trace: TraceEntry[]; marks: Mark[] }> {
  await daemon.client.reset(true);
  const spec = { ...specFor(daemon, input, 'workload', 0), mark: markDir(daemon) };
  const run = await runDriver(daemon, target.driver, spec, false, timeouts);
  const { trace, marks } = await daemon.client.traceWithMarks();
  const lines = run.record.outcomes.length;
  // A hung driver was killed, possibly between a line and its marker; the hang is judged anyway.
  if (!run.record.hung && marks.length !== lines) {
    throw new HarnessError(`the driver printed ${lines} lines but left ${marks.length} markers in the request trace; a marking driver stats <mark>/<N> right after printing its Nth line (docs/driver-protocol.md)`);
  }
  return { run, trace, marks };
}

export async function runExhaustive(daemon: DaemonHandle, target: Target, input: ExhaustiveInput, partial: Partial<ExhaustiveOptions>): Promise<ExhaustiveResult> {
  const o: ExhaustiveOptions = { ...DEFAULT_EXHAUSTIVE_OPTIONS, artifactRoot: defaultArtifactRoot(), ...partial, caps: { ...DEFAULT_STATE_CAPS, ...partial.caps } };
  const timeouts = mergeTimeouts(o.timeouts);
  const timings: StateTimings = { recordMs: 0, enumerateMs: 0, loadMs: 0, recoverMs: 0, judgeMs: 0, recoveries: 0, driverStarts: 0 };
  const coverage = emptyCoverage();
  const worker = new DriverWorker(target.driver, timeouts);
  let current: CrashStateInfo | undefined;
  try {
    let t = performance.now();
    const recorded = await record(daemon, target, input, timeouts);
    timings.recordMs = performance.now() - t;
    timings.driverStarts++;
    coverage.events = target.workloadEvents(recorded.trace);
    // A driver that serves specs one after another (its hello says so) recovers every state in one process.
    const serves = helloOf(recorded.run.record.outcomes)?.serves === true;
    const recoverOnce = async (): Promise<RunRecord> =>
      (serves ? await worker.run(specFor(daemon, input, 'drain', 1)) : await runDriver(daemon, target.driver, specFor(daemon, input, 'drain', 1), false, timeouts)).record;
    if (recorded.run.record.hung || recorded.run.record.exitCode !== 0) {
      // The uncut workload hung or failed by itself: no power cut needed to judge that.
      const drained = await recoverOnce();
      const violations = judge({ target: target.name, faultsInjected: false, runs: [{ ...recorded.run.record, killed: true }, drained] });
      if (violations.length > 0) {
        const failure = await failureOf(daemon, target.name, stateCase(input, { id: { afterOp: recorded.trace.length, policy: 'lose-unsynced' }, hash: '0' }, false, o.caps), o, recorded, [recorded.run.record, drained], violations);
        return { coverage, failure, statesBeforeFailure: 0, timings, capsHit: [] };
      }
    }

    t = performance.now();
    const answer = await daemon.client.states(o.policies, o.caps);
    timings.enumerateMs = performance.now() - t;
    coverage.intervals = answer.intervals;
    coverage.intervalsChecked = answer.intervalsComplete;
    coverage.statesCapped = answer.capped.states;

    // One recovery per distinct image; every state with that image is judged with its own confirmations.
    const byHash = new Map<string, CrashStateInfo[]>();
    for (const s of answer.states) byHash.set(s.hash, [...(byHash.get(s.hash) ?? []), s]);
    let judged = 0;
    const judgedByInterval = new Map<number, number>();
    const capsHit = [...answer.capped.caps];
    for (const group of byHash.values()) {
      if (Date.now() > o.deadlineMs) {
        // The gate's time budget is spent: what is left is not checked, and says so.
        coverage.statesCapped += answer.states.length - judged;
        coverage.intervalsChecked = intervalsFullyJudged(answer, judgedByInterval);
        capsHit.push(TIME_BUDGET_CAP);
        break;
      }
      current = group[0];
      t = performance.now();
      await daemon.client.loadState(current.id);
      timings.loadMs += performance.now() - t;
      t = performance.now();
      const recovery = o.recoveryCuts ? await recoverWithCut(daemon, target, stateCase(input, current, true, o.caps), timeouts) : { runs: [await recoverOnce()], landed: false };
      timings.recoverMs += performance.now() - t;
      timings.recoveries++;
      t = performance.now();
      for (const state of group) {
        const runs = [truncateAtCut(recorded.run.record, recorded.marks, recorded.trace, state.id.afterOp), ...recovery.runs];
        const violations = judge({ target: target.name, faultsInjected: false, runs });
        coverage.cases++;
        coverage.states++;
        if (state.id.policy === 'torn') coverage.tornCuts++;
        coverage.tornPartialWrites += state.partialWrites ?? 0;
        if (o.recoveryCuts) {
          coverage.recoveryCutsRequested++;
          if (recovery.landed) coverage.recoveryCutsLanded++;
        }
        if (violations.length > 0) {
          timings.judgeMs += performance.now() - t;
          const failure = await failureOf(daemon, target.name, stateCase(input, state, o.recoveryCuts, o.caps), o, recorded, runs, violations);
          return { coverage, failure, statesBeforeFailure: judged, timings, capsHit };
        }
        judged++;
        judgedByInterval.set(state.interval, (judgedByInterval.get(state.interval) ?? 0) + 1);
      }
      timings.judgeMs += performance.now() - t;
    }
    timings.driverStarts += worker.starts;
    return { coverage, statesBeforeFailure: judged, timings, capsHit };
  } catch (err) {
    const harnessError = await asHarnessError(err, daemon);
    const c = stateCase(input, current ?? { id: { afterOp: 0, policy: 'lose-unsynced' }, hash: '0' }, o.recoveryCuts, o.caps);
    if (o.writeArtifacts) harnessError.artifactDir = await writeHarnessErrorArtifact(o.artifactRoot, target.name, c, harnessError).catch(() => undefined);
    throw harnessError;
  } finally {
    await worker.stop();
  }
}

/** The artifact of a failing state: the state's image (loaded again), the truncated workload, the recovery, the whole recorded trace. */
async function failureOf(
  daemon: DaemonHandle,
  targetName: string,
  c: CrashCase,
  o: ExhaustiveOptions,
  recorded: { run: DriverRun; trace: TraceEntry[]; marks: Mark[] },
  runs: RunRecord[],
  violations: CaseResult['violations'],
): Promise<CaseResult> {
  const id = c.state!;
  const afterOp = id.afterOp;
  const cuts: CutRecord[] = [{ frozenAt: afterOp + 1 <= recorded.trace.length ? afterOp + 1 : null, trace: recorded.trace, marks: recorded.marks }];
  const described = violations.map((v) => ({ ...v, message: `${v.message} (crash state: ${describeState(id)})` }));
  const result: CaseResult = {
    case: c, runs, cuts, violations: described, verdict: 'fail', coverage: emptyCoverage(), durationMs: 0, stderr: runs.map(() => ''),
  };
  if (!o.writeArtifacts) return result;
  const imagesDir = await mkdtemp(path.join(os.tmpdir(), 'powercut-state-images-'));
  try {
    // The recovery changed the mounted image: rebuild the state to store what recovery started from.
    await daemon.client.loadState(id);
    await daemon.client.image(path.join(imagesDir, 'cut-0-after-crash'), 'durable');
    result.artifactDir = await writeArtifact(o.artifactRoot, targetName, result, imagesDir);
  } finally {
    await rm(imagesDir, { recursive: true, force: true });
  }
  return result;
}
