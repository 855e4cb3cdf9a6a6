// Exhaustive mode: record one run of the workload (the driver marks each confirmation in the
// request trace), ask the daemon for every distinct crash state the run can produce, and recover
// each one with the real queue in its own process (recovery-pool.ts: natively on a copy of the
// state's image, or on the mount), judging it against every confirmation made before that state's
// power cut. States with the same image are recovered once and judged once per confirmation set.
// A failing state becomes an artifact that replays exactly.
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { describeState, keepsNoUnsynced, policyModule, stateEnumerator } from '../../../fusefs/model/policies/index.js';
import { DEFAULT_STATE_CAPS, DEFAULT_STATE_POLICIES, STATE_POLICIES, type CrashPolicy, type StatePolicy, type CrashStateInfo, type CrashStateId, type StateCaps, type StatesAnswer } from '../../../fusefs/crash-states.js';
import type { TraceEntry } from '../../../fusefs/protocol.js';
import { Prng } from '../../../fusefs/model/prng.js';
import { fairShares, spreadEvenly } from '../../../fusefs/model/spread.js';
import type { FsyncHoldSchedule } from '../../../fusefs/fsync-holds.js';
import { createHash } from 'node:crypto';
import type { Target } from '../target.js';
import { defaultArtifactRoot, writeArtifact, writeHarnessErrorArtifact } from '../artifacts.js';
import { countContract, emptyCoverage, policyCoverage, runFeatures, TIME_BUDGET_CAP, type Coverage } from '../coverage.js';
import { markDir, specFor } from '../crash-run.js';
import type { CaseResult, CrashCase, CutRecord, CutSpec } from '../crash-case.js';
import type { DaemonHandle } from '../daemon-process.js';
import { mergeTimeouts, runDriver, type DriverRun } from '../driver-process.js';
import { DriverWorkers } from '../driver-workers.js';
import { failureSignature } from '../failure-signature.js';
import { asHarnessError, HarnessError } from '../harness-error.js';
import { judge, type RunRecord, type Violation } from '../oracle.js';
import { contractOf, helloOf } from '../outcome.js';
import { RecoveryPool, type RecoverOn } from './recovery-pool.js';
import { pathMatcher } from '../../../fusefs/crash-point.js';
import type { CrashPoint } from '../../../fusefs/protocol.js';
import type { Cause } from '../cause/cause.js';
import { explainRun, type ExplainOptions } from './explain.js';
import type { RunVerdicts } from './fix-proof.js';
import { intervalHolding, recoverAndJudge, verdictsOf, type JudgeSettings, type Recorded, type StateTimings } from './judge-states.js';
import { within, type TimeShare } from '../time-share.js';
import { keepStartingState } from '../starting-state.js';


export interface ExhaustiveOptions extends JudgeSettings {
  artifactRoot: string;
  /** false: a failing state writes no artifact (replay's re-run). */
  writeArtifacts: boolean;
  /** Stop recovering states at this time (Date.now() ms); the rest count as left out by the time budget. */
  deadlineMs: number;
  /** Keep judging after a failing state: one failure (and artifact) per distinct signature. */
  allFailures: boolean;
  /** Where states without a recovery cut are recovered (recovery-pool.ts); a recovery cut needs the mount. */
  recoverOn: RecoverOn;
  /** How many states are recovered at once (natively). */
  workers: number;
  /**
   * Serving drivers kept alive across runs by the caller (a suite, the gate); without them each run
   * starts its own and stops them at its end.
   */
  driverWorkers?: DriverWorkers;
  /** Search the cause of each failure it keeps (explain.ts), while the recorded run is still in the daemon. */
  explain?: ExplainOptions;
  /**
   * Judge only the states a random cut at this crash point leaves under this policy (lose-unsynced or
   * torn; the cause search of a random cut: its run recorded again, the cut found in the recording).
   */
  onlyCut?: { point?: CrashPoint; policy: StatePolicy };
  /** Judge only this state of the recorded run (`powercut explain` of a crash state's artifact). */
  onlyState?: CrashStateId;
  /** Keep (and explain) only the first failing state whose violations this accepts (the one a cause search is after). */
  firstFailureThat?: (violations: readonly Violation[]) => boolean;
  /**
   * The recorded run's slow fsyncs (fsync-holds.ts): undefined draws a schedule from the input,
   * null records with fsyncs completing at once. A confirmation that does not wait for its fsync
   * is marked before that fsync completes, and a crash state between the two shows it.
   */
  fsyncHolds?: FsyncHoldSchedule | null;
  /** Writing a failing state's artifact is counted to this share of the caller's budget (the gate's artifacts phase). */
  artifacts?: TimeShare;
  /**
   * Judge at most this many of the states listed: a sample spread over the run, the policies in fair
   * shares (a suite whose every state is recovered twice on the mount); the rest are left out, as by a cap.
   */
  sampleStates?: number;
}

/** Half the fsyncs of a recorded run are held this many ms unless told otherwise: longer than a FUSE fsync takes, short enough to cost little. */
export const DEFAULT_FSYNC_HOLD_MS = 4;

/** The schedule an input is recorded with by default: seeded by the input, so it replays. */
export function defaultFsyncHolds(input: ExhaustiveInput): FsyncHoldSchedule {
  const digest = createHash('sha1').update(JSON.stringify([input.workload, input.settings, input.variant ?? null])).digest();
  return { seed: digest.readInt32LE(0), maxHoldMs: DEFAULT_FSYNC_HOLD_MS };
}

/** Native recovery workers: two, for the two cores this runs on (the daemon and the harness mostly wait on them). */
export const DEFAULT_RECOVERY_WORKERS = 2;

export const DEFAULT_EXHAUSTIVE_OPTIONS: Omit<ExhaustiveOptions, 'artifactRoot'> = {
  policies: [...DEFAULT_STATE_POLICIES],
  caps: DEFAULT_STATE_CAPS,
  recoveryCuts: false,
  timeouts: {},
  writeArtifacts: true,
  deadlineMs: Infinity,
  allFailures: false,
  verifyOnMount: false,
  recoverOn: 'native',
  workers: DEFAULT_RECOVERY_WORKERS,
};

/** Where one state's time went, for the benchmark (summed over the recovery slots, which run at once). */
export interface ExhaustiveResult {
  coverage: Coverage;
  /** The first failing state, in state order. */
  failure?: CaseResult;
  /** With allFailures, the first failing state of each distinct signature (else just the first). */
  failures: CaseResult[];
  /** States judged before the failing one (all of them if none failed). */
  statesBeforeFailure: number;
  timings: StateTimings;
  /** Caps that were hit, in words (also in the coverage's statesCapped). */
  capsHit: string[];
}

/** A recovery cut is drawn at one of the first requests of a recovery (20 to 35 of them for the built-in queue), and again within a shorter recovery's requests. */
export const RECOVERY_CUT_MAX_OP = 30;

/** What exhaustive mode checks: one workload of a target, its settings and variant (a crash case without its cut). */
export type ExhaustiveInput = Pick<CrashCase, 'target' | 'driver' | 'workload' | 'settings' | 'variant' | 'recoverySettings'>;

/** The crash case a state is, for artifacts and replay; `on` says where its recovery ran. */
export function stateCase(input: ExhaustiveInput, state: Pick<CrashStateInfo, 'id' | 'hash'>, recoveryCuts: boolean, caps: StateCaps, on?: RecoverOn): CrashCase {
  return {
    ...(input.target !== undefined ? { target: input.target } : {}),
    ...(input.driver !== undefined ? { driver: input.driver } : {}),
    workload: input.workload,
    settings: input.settings,
    ...(input.variant !== undefined ? { variant: input.variant } : {}),
    ...(input.recoverySettings !== undefined ? { recoverySettings: input.recoverySettings } : {}),
    policy: state.id.policy,
    seed: state.id.data?.kind === 'sectors' ? state.id.data.seed : 0,
    state: state.id,
    stateCaps: caps,
    ...(recoveryCuts ? { recoveryCut: recoveryCutOf(state) } : {}),
    ...(on !== undefined ? { recoveredOn: on } : {}),
  };
}

/**
 * A second cut during the recovery of a state: seeded by the state's hash, so it replays exactly;
 * under journaled when the state is (what a filesystem loses twice is the same kind of thing), else lose-unsynced.
 */
function recoveryCutOf(state: Pick<CrashStateInfo, 'hash' | 'id'>): CutSpec {
  const prng = new Prng(parseInt(state.hash.slice(0, 8), 16) || 1);
  const policy = stateEnumerator(state.id.policy).recoveryCutPolicy;
  return { cut: { atOp: 1 + prng.int(RECOVERY_CUT_MAX_OP), timing: prng.coin() ? 'before' : 'after' }, policy, seed: 0 };
}

/** Records the workload once on a fresh recording filesystem; the driver marks every line it prints. */
async function record(daemon: DaemonHandle, target: Target, input: ExhaustiveInput, holds: FsyncHoldSchedule | null, drivers: DriverWorkers): Promise<Recorded> {
  await daemon.client.reset(true, holds ?? undefined);
  const spec = { ...specFor(daemon.mountpoint, input, 'workload', 0), mark: markDir(daemon) };
  // A process of its own, started ahead of time and gone before any state is recovered: a power cut
  // leaves no process of the run alive (a queue's lock file names its pid, and recovery rightly
  // refuses a lock whose holder lives). Its exit also means every marker is in the trace.
  const worker = drivers.spare(target.driver);
  let run: DriverRun;
  try {
    run = await worker.run(spec, true);
  } finally {
    await worker.stop();
  }
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
  let pool: RecoveryPool | undefined;
  const drivers = o.driverWorkers ?? new DriverWorkers(timeouts);
  const startsBefore = drivers.starts;
  let current: CrashStateInfo | undefined;
  const holds = o.fsyncHolds === undefined ? defaultFsyncHolds(input) : o.fsyncHolds;
  const caseOf = (state: Pick<CrashStateInfo, 'id' | 'hash'>, on?: RecoverOn): CrashCase => {
    const c = { ...stateCase(input, state, o.recoveryCuts, o.caps, on), ...(holds ? { fsyncHolds: holds } : {}) };
    const redrawn = pool?.redrawnCut(state.hash);
    return redrawn ? { ...c, recoveryCut: redrawn } : c;
  };
  try {
    let t = performance.now();
    const recorded = await record(daemon, target, input, holds, drivers);
    timings.recordMs = performance.now() - t;
    coverage.events = target.workloadEvents(recorded.trace);
    coverage.features = runFeatures(recorded.trace, coverage.events);
    // A driver that serves specs one after another (its hello says so) recovers every state in one process per slot.
    const serves = helloOf(recorded.run.record.outcomes)?.serves === true;
    const contract = contractOf(recorded.run.record.outcomes);
    pool = new RecoveryPool(daemon, target, serves, o.recoveryCuts ? 'mount' : o.recoverOn, o.workers, timeouts, drivers);
    // Enumerated first: it ends the recording, so a drain below does not become part of the recorded run.
    t = performance.now();
    const enumerated = await daemon.client.states(o.policies, o.caps);
    const answer = statesToJudge(enumerated, recorded.trace, o);
    timings.enumerateMs = performance.now() - t;
    const uncut = await uncutFailure(daemon, target, input, o, recorded, caseOf);
    if (uncut) return { coverage, failure: uncut, failures: [uncut], statesBeforeFailure: 0, timings, capsHit: [] };

    coverage.intervals = answer.intervals;
    coverage.statesCapped = answer.capped.states;
    for (const state of answer.states) policyCoverage(coverage, state.id.policy).listed++;

    const ctx = { daemon, target, o, pool, timings, coverage, caseOf, onHarnessError: (state: CrashStateInfo) => { current ??= state; } };
    const { groups, results, outOfTime, firstFailing } = await recoverAndJudge(ctx, answer, recorded, { allFailures: o.allFailures, deadlineMs: o.deadlineMs });
    // What the run's own judgement said: a cause's proof is compared with it (judged in full first when only one state was).
    const verdicts: RunVerdicts = {
      answer: enumerated,
      ...(o.onlyCut || o.onlyState ? {} : { judged: verdictsOf({ results }) }),
      signatureOf: (state, violations) => failureSignature(failureResult(caseOf(state), recorded, [], [], violations)),
    };

    assertEveryStateAccounted(groups, results, outOfTime, o.allFailures, firstFailing);
    // In group order, so the first failure and the counts do not depend on which slot finished first.
    const failures: CaseResult[] = [];
    /** Every failing state (explained together below), with what its case needs. */
    const failing: { state: CrashStateInfo; violations: Violation[]; runs: RunRecord[]; on: RecoverOn; stderr: string[] }[] = [];
    const signatures = new Set<string>();
    const judgedOf = new Map<string, number>(); // `${policy} ${interval}` -> states judged
    let judged = 0;
    let statesBeforeFailure: number | undefined;
    const enough = () => (!o.allFailures || o.firstFailureThat !== undefined) && (failures.length > 0 || failing.length > 0);
    for (const r of results) {
      if (r === undefined || enough()) break;
      for (const { state, runs, violations } of r.verdicts) {
        if (enough()) break;
        countJudged(coverage, state, contract, o.recoveryCuts, r.recovery.landed);
        const key = `${state.id.policy} ${state.interval}`;
        judgedOf.set(key, (judgedOf.get(key) ?? 0) + 1);
        if (violations.length === 0 || (o.firstFailureThat && !o.firstFailureThat(violations))) {
          judged++;
          continue;
        }
        statesBeforeFailure ??= judged;
        const stderr = [recorded.run.stderr, ...r.recovery.stderr];
        if (o.explain) {
          failing.push({ state, violations, runs, on: r.recovery.on, stderr });
          continue;
        }
        const failure = failureResult(caseOf(state, r.recovery.on), recorded, runs, stderr, violations);
        const signature = failureSignature(failure);
        if (signatures.has(signature)) continue;
        signatures.add(signature);
        current = state;
        failures.push(await saveFailure(daemon, target.name, o, failure));
      }
    }
    if (o.explain && failing.length > 0) {
      // Every failing state given the fewest proven causes; one kept case (and artifact) per cause, and per signature of the unexplained.
      const attribution = await explainRun(ctx, recorded, failing, o.explain, verdicts);
      const groups = [...attribution.causes, ...attribution.unexplained].sort((a, b) => a.states[0] - b.states[0]);
      for (const { cause, states } of groups) {
        const f = failing[states[0]];
        current = f.state;
        const failure = failureResult(caseOf(f.state, f.on), recorded, f.runs, f.stderr, f.violations);
        failure.cause = cause;
        failures.push(await saveFailure(daemon, target.name, o, failure));
      }
    }
    const capsHit = closeCoverage(coverage, answer, judgedOf, outOfTime, o.policies);
    timings.driverStarts = drivers.starts - startsBefore;
    return { coverage, ...(failures.length ? { failure: failures[0] } : {}), failures, statesBeforeFailure: statesBeforeFailure ?? judged, timings, capsHit };
  } catch (err) {
    const harnessError = await asHarnessError(err, daemon);
    const c = caseOf(current ?? { id: { afterOp: 0, policy: 'lose-unsynced' }, hash: '0' });
    if (o.writeArtifacts) harnessError.artifactDir = await writeHarnessErrorArtifact(o.artifactRoot, target.name, c, harnessError).catch(() => undefined);
    throw harnessError;
  } finally {
    await pool?.stop();
    if (!o.driverWorkers) await drivers.stop();
  }
}

/** The states of the recorded run to judge: those of one cut or one state, a sample, or all of them. */
function statesToJudge(enumerated: StatesAnswer, trace: readonly TraceEntry[], o: ExhaustiveOptions): StatesAnswer {
  return o.onlyCut ? stateAtCut(enumerated, trace, o.onlyCut.point, o.onlyCut.policy) : o.onlyState ? onlyStateOf(enumerated, o.onlyState)
    : o.sampleStates !== undefined ? sampleOf(enumerated, o.sampleStates) : enumerated;
}

/**
 * The uncut workload hung or failed by itself: no power cut is needed to judge that, so what the
 * mount holds is recovered and judged. Its failure, if it is one; undefined for a run that went well.
 */
async function uncutFailure(daemon: DaemonHandle, target: Target, input: ExhaustiveInput, o: ExhaustiveOptions, recorded: Recorded, caseOf: (state: Pick<CrashStateInfo, 'id' | 'hash'>) => CrashCase): Promise<CaseResult | undefined> {
  if (!recorded.run.record.hung && recorded.run.record.exitCode === 0) return undefined;
  const drained = await runDriver(daemon, target.driver, specFor(daemon.mountpoint, input, 'drain', 1), false, mergeTimeouts(o.timeouts));
  const runs = [{ ...recorded.run.record, killed: true }, drained.record];
  const violations = judge({ target: target.name, faultsInjected: false, runs });
  if (violations.length === 0) return undefined;
  const state = { id: { afterOp: recorded.trace.length, policy: 'lose-unsynced' as const }, hash: '0' };
  return failureOf(daemon, target.name, caseOf(state), o, recorded, runs, [recorded.run.stderr, drained.stderr], violations);
}

/** A state is left out only by the time budget or, when one failure is enough, after the first failing one. */
function assertEveryStateAccounted(groups: readonly (readonly CrashStateInfo[])[], results: readonly unknown[], outOfTime: boolean, allFailures: boolean, firstFailing: number): void {
  groups.forEach((group, g) => {
    if (results[g] === undefined && !outOfTime && !(!allFailures && g > firstFailing)) {
      throw new Error(`invariant broken: crash state ${describeState(group[0].id)} was neither judged nor left out by the time budget or a first failure`);
    }
  });
}

/** Counts one judged state in the coverage. */
function countJudged(coverage: Coverage, state: CrashStateInfo, contract: ReturnType<typeof contractOf>, recoveryCuts: boolean, recoveryCutLanded: boolean): void {
  coverage.cases++;
  coverage.states++;
  policyCoverage(coverage, state.id.policy).states++;
  countContract(coverage, contract);
  coverage.tornPartialWrites += state.partialWrites ?? 0;
  if (recoveryCuts) {
    coverage.recoveryCutsRequested++;
    if (recoveryCutLanded) coverage.recoveryCutsLanded++;
  }
}

/** The coverage's counts once every state is judged or left out: the intervals checked and reached per policy. Returns the caps hit, in words. */
function closeCoverage(coverage: Coverage, answer: StatesAnswer, judgedOf: ReadonlyMap<string, number>, outOfTime: boolean, policies: readonly StatePolicy[]): string[] {
  const capsHit = [...answer.capped.caps];
  if (outOfTime) {
    // The gate's time budget is spent: what is left is not checked, and says so.
    coverage.statesCapped += answer.states.length - coverage.states;
    capsHit.push(TIME_BUDGET_CAP);
  }
  const checked = intervalsChecked(answer, judgedOf);
  coverage.intervalsChecked = checked.all;
  for (const policy of policies) {
    policyCoverage(coverage, policy).intervalsChecked = checked[policy];
    policyCoverage(coverage, policy).intervalsReached = [...judgedOf.keys()].filter((k) => k.startsWith(`${policy} `)).length;
  }
  return capsHit;
}

/**
 * The states of `answer`'s run a random cut at `point` (none: after the last request) leaves: under lose-unsynced the one state of
 * that cut; under torn the torn states of its persistence interval (a cut mid-interval keeps fewer
 * writes than the interval's end, so this may show more than the cut could: the search names what one of them lost).
 */
function stateAtCut(answer: StatesAnswer, trace: readonly TraceEntry[], point: CrashPoint | undefined, policy: StatePolicy): StatesAnswer {
  let afterOp = trace.length;
  if (point) {
    const matches = point.path === undefined ? () => true : pathMatcher(point.path);
    const hits = trace.filter((e) => (point.kind === undefined || e.kind === point.kind) && matches(e.path));
    const at = hits[point.atOp - 1];
    if (!at) return { ...answer, states: [], capped: { states: 0, caps: [] } };
    afterOp = point.timing === 'before' ? at.op - 1 : at.op;
  }
  const interval = intervalHolding(answer, afterOp) ?? 0;
  const states = policyModule(policy).randomCutAsStates === 'its-interval' ? answer.states.filter((s) => s.id.policy === policy && s.interval === interval)
    : [{ id: { afterOp, policy: 'lose-unsynced' as const }, interval, hash: `cut-${afterOp}` }];
  return { ...answer, states, capped: { states: 0, caps: [] } };
}

/**
 * What explains a random cut under `policy` (one with randomCutAsStates): the states of its cut under
 * that policy, listed with the durable-only ones (lose-unsynced), whose states mark the intervals.
 */
function randomCutListing(policy: CrashPolicy): { policy: StatePolicy; policies: StatePolicy[] } {
  const statePolicy = STATE_POLICIES.find((p) => p === policy);
  if (statePolicy === undefined || policyModule(policy).randomCutAsStates === undefined) throw new Error(`invariant: a random cut under ${policy} is not explained by crash states`);
  return { policy: statePolicy, policies: STATE_POLICIES.filter((p) => keepsNoUnsynced(p) || p === statePolicy) };
}

/**
 * The state of the recorded run with this id: as enumerated; else a lose-unsynced state as asked
 * (any cut is one); else, a torn or journaled id the recording does not have, that policy's states
 * of the interval it falls in (its counts of unsynced changes may differ in this recording).
 */
function onlyStateOf(answer: StatesAnswer, id: CrashStateId): StatesAnswer {
  const same = (s: { id: CrashStateId }) => JSON.stringify(stateIdKey(s.id)) === JSON.stringify(stateIdKey(id));
  const listed = answer.states.filter(same);
  const interval = intervalHolding(answer, id.afterOp) ?? Math.max(0, answer.intervals - 1);
  const states = listed.length ? listed
    : keepsNoUnsynced(id.policy) ? [{ id, interval, hash: `asked-${id.afterOp}` }]
      : answer.states.filter((s) => s.id.policy === id.policy && s.interval === interval);
  return { ...answer, states, capped: { states: 0, caps: [] } };
}

/**
 * At most `n` of a listing's states: each policy a fair share (fairShares), spread evenly over its
 * states in listing order; the rest counted as left out by a cap ("sample N"), their intervals incomplete.
 */
export function sampleOf(answer: StatesAnswer, n: number): StatesAnswer {
  if (answer.states.length <= n) return answer;
  const policies = [...new Set(answer.states.map((s) => s.id.policy))];
  const byPolicy = policies.map((p) => answer.states.filter((s) => s.id.policy === p));
  const shares = fairShares(byPolicy.map((l) => l.length), n);
  const kept = new Set(byPolicy.flatMap((l, i) => spreadEvenly(l, shares[i])));
  const left = answer.states.filter((s) => !kept.has(s));
  const incomplete: Partial<Record<StatePolicy, number[]>> = { ...answer.incomplete };
  for (const s of left) incomplete[s.id.policy] = [...new Set([...(incomplete[s.id.policy] ?? []), s.interval])].sort((a, b) => a - b);
  return { ...answer, states: answer.states.filter((s) => kept.has(s)), capped: { states: answer.capped.states + left.length, caps: [...answer.capped.caps, `sample ${n}`] }, incomplete };
}

const stateIdKey = (id: CrashStateId) => [id.afterOp, id.policy, id.dirPrefix ?? null, id.data ?? null];

/**
 * The cause of a failing case found without one (the gate's scenarios and random cuts, `powercut
 * explain`): its workload recorded again and the state it names judged and, when that state fails the
 * same checks, explained. A random cut's state (or a fault run's, the power going after the workload)
 * is the one its cut leaves under lose-unsynced, or the torn states of its interval (recorded without
 * slow fsyncs); a crash state's is the same state of the new recording (with the case's fsync holds
 * and caps), else the first state of the new recording that fails the same way. Undefined when the
 * case cannot be (a fault that fired, damage at recovery, a random cut's second cut during recovery)
 * or when no state of the new recording fails the same checks.
 */
export async function explainCase(daemon: DaemonHandle, target: Target, failedCase: Pick<CaseResult, 'case' | 'violations' | 'runs'>, explain: ExplainOptions, driverWorkers?: DriverWorkers): Promise<Cause | undefined> {
  const { case: c, violations: failed } = failedCase;
  // A fault that never fired left the run as it is without it: explained without it.
  const faulted = (c.faults?.length ?? 0) > 0 && failedCase.runs.some((r) => r.failedRequests.length > 0);
  if (faulted || c.recoveryFaults?.length || (c.recoveryCut && !c.state) || (!c.state && policyModule(c.policy).randomCutAsStates === undefined)) return undefined;
  const input: ExhaustiveInput = {
    ...(c.target !== undefined ? { target: c.target } : {}), ...(c.driver ? { driver: c.driver } : {}), workload: c.workload, settings: c.settings,
    ...(c.variant !== undefined ? { variant: c.variant } : {}), ...(c.recoverySettings !== undefined ? { recoverySettings: c.recoverySettings } : {}),
  };
  const checks = new Set(failed.filter((v) => !v.hang).map((v) => v.check));
  const same = (vs: readonly Violation[]) => vs.some((v) => !v.hang && checks.has(v.check));
  // Judged within the explainer's budget too: a recording judged past it would be explained by nothing.
  const deadlineMs = explain.share?.deadlineMs() ?? Infinity;
  const common: Partial<ExhaustiveOptions> = { explain, writeArtifacts: false, allFailures: true, firstFailureThat: same, deadlineMs, ...(driverWorkers ? { driverWorkers } : {}) };
  if (!c.state) {
    // A random cut, or a fault run's power going after the workload.
    const cutAs = randomCutListing(c.policy);
    const r = await runExhaustive(daemon, target, input, { ...common, onlyCut: { ...(c.cut ? { point: c.cut } : {}), policy: cutAs.policy }, fsyncHolds: null, policies: cutAs.policies });
    return r.failure?.cause;
  }
  const state: Partial<ExhaustiveOptions> = { fsyncHolds: c.fsyncHolds ?? null, policies: [c.state!.policy], recoveryCuts: c.recoveryCut !== undefined, ...(c.stateCaps ? { caps: c.stateCaps } : {}) };
  const exact = await runExhaustive(daemon, target, input, { ...common, ...state, onlyState: c.state! });
  if (exact.failure) return exact.failure.cause;
  if (Date.now() >= deadlineMs) return undefined;
  // A concurrent run may record another interleaving, where that state is gone or passes: the first
  // state of the new recording, under the same policy, that fails the same checks stands for it.
  const any = await runExhaustive(daemon, target, input, { ...common, ...state });
  const stand = any.failure;
  if (!stand?.cause) return undefined;
  return { ...stand.cause, evidence: [`recorded again, ${describeState(c.state!)} no longer failed the same checks; explained on ${describeState(stand.case.state!)}, the first state of the new recording that does`, ...stand.cause.evidence] };
}

/**
 * Intervals checked, per policy and in all: an interval counts for a policy when the caps listed all
 * its states under that policy and every one of them was judged (for all: under every policy asked).
 */
function intervalsChecked(answer: StatesAnswer, judgedOf: ReadonlyMap<string, number>): { all: number } & Record<StatePolicy, number> {
  const listed = new Map<string, number>();
  for (const s of answer.states) listed.set(`${s.id.policy} ${s.interval}`, (listed.get(`${s.id.policy} ${s.interval}`) ?? 0) + 1);
  const complete = (policy: StatePolicy, interval: number) => {
    const key = `${policy} ${interval}`;
    return !(answer.incomplete?.[policy] ?? []).includes(interval) && (listed.get(key) ?? 0) > 0 && judgedOf.get(key) === listed.get(key);
  };
  const policies = [...new Set(answer.states.map((s) => s.id.policy))];
  const out = { all: 0, ...Object.fromEntries(STATE_POLICIES.map((p) => [p, 0])) } as { all: number } & Record<StatePolicy, number>;
  for (let i = 0; i < answer.intervals; i++) {
    for (const p of policies) if (complete(p, i)) out[p]++;
    if (policies.length > 0 && policies.every((p) => complete(p, i))) out.all++;
  }
  return out;
}

/** A failing state as a judged case: the truncated workload, the recovery, the whole recorded trace. */
function failureResult(c: CrashCase, recorded: Recorded, runs: RunRecord[], stderr: string[], violations: Violation[]): CaseResult {
  const id = c.state!;
  const cuts: CutRecord[] = [{ frozenAt: id.afterOp + 1 <= recorded.trace.length ? id.afterOp + 1 : null, trace: recorded.trace, marks: recorded.marks }];
  const described = violations.map((v) => ({ ...v, message: `${v.message} (crash state: ${describeState(id)})` }));
  return { case: c, runs, cuts, violations: described, verdict: 'fail', coverage: emptyCoverage(), durationMs: 0, stderr };
}

/** The artifact of a failing state, with the image the state leaves (what recovery started from). */
async function saveFailure(daemon: DaemonHandle, targetName: string, o: ExhaustiveOptions, result: CaseResult): Promise<CaseResult> {
  if (!o.writeArtifacts) return result;
  return within(o.artifacts, () => writeFailure(daemon, targetName, o, result));
}

async function writeFailure(daemon: DaemonHandle, targetName: string, o: ExhaustiveOptions, result: CaseResult): Promise<CaseResult> {
  const imagesDir = await mkdtemp(path.join(os.tmpdir(), 'powercut-state-images-'));
  try {
    await daemon.client.stateImage(result.case.state!, path.join(imagesDir, 'cut-0-after-crash'));
    await keepStartingState(daemon, imagesDir);
    return { ...result, artifactDir: await writeArtifact(o.artifactRoot, targetName, result, imagesDir) };
  } finally {
    await rm(imagesDir, { recursive: true, force: true });
  }
}

async function failureOf(daemon: DaemonHandle, targetName: string, c: CrashCase, o: ExhaustiveOptions, recorded: Recorded, runs: RunRecord[], stderr: string[], violations: Violation[]): Promise<CaseResult> {
  return saveFailure(daemon, targetName, o, failureResult(c, recorded, runs, stderr, violations));
}
