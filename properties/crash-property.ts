// The crash property, shared by the test suites (properties/*.test.ts) and the durability gate: for
// a generated workload and target settings, either cut the power at a few generated points (random
// mode) or check every distinct crash state of one recorded run (exhaustive mode), recover, and let
// the oracle judge. Violations shrink; a harness error stops the property at once (no shrinking
// against a broken tool). The report names the fast-check seed and path, the coverage and the
// artifact of the smallest failing case.
import fc from 'fast-check';
import { rm } from 'node:fs/promises';
import type { CrashPolicy, Fault } from '../fusefs/protocol.js';
import { defaultArtifactRoot, replayCommand } from '../src/harness/artifacts.js';
import { addCoverage, emptyCoverage, formatCoverage, type Coverage } from '../src/harness/coverage.js';
import { countRequests, crashPointAt, runCase } from '../src/harness/crash-run.js';
import type { CaseResult, CrashCase, CutSpec } from '../src/harness/crash-case.js';
import type { DaemonHandle } from '../src/harness/daemon-process.js';
import { runExhaustive, type ExhaustiveOptions, type ExhaustiveResult } from '../src/harness/exhaustive/exhaustive-run.js';
import { causeOfCase } from '../src/harness/cause/of-case.js';
import { groupKeyOf } from '../src/harness/cause/cause.js';
import { failureSignature } from '../src/harness/failure-signature.js';
import { mergeTimeouts } from '../src/harness/driver-process.js';
import { DriverWorkers } from '../src/harness/driver-workers.js';
import { HarnessError } from '../src/harness/harness-error.js';
import type { Step, Workload } from '../src/harness/workload.js';
import type { ExternalDriver, TargetSettings } from '../src/harness/target.js';
import { drawArtifactReport } from '../src/report/index.js';
import { resolveTarget } from '../src/targets/index.js';
import { cutChoiceArb, cutTargetArb, EXHAUSTIVE_MAX_STEPS, exhaustiveStepArb, faultArb, policiesArb, policyArb, readFaultArb, recoveryCutArb, stepArb, tornStepArb, workloadArb, type CutChoice } from './arbitraries.js';
// The suites take their seed from where they take the property.
export { DEFAULT_TEST_SEED, seedFromEnv } from './seed.js';

/** One generated property input. */
export interface CrashInput {
  target?: string;
  driver?: ExternalDriver;
  workload: Workload;
  settings: TargetSettings;
  variant?: string;
  /** Random mode: several cuts of the same workload share one request count. Empty in exhaustive mode. */
  cuts: CutChoice[];
  recoveryCut?: CutSpec;
  faults?: Fault[];
  /** Read faults armed for the recoveries after the first cut (CrashCase.recoveryFaults). */
  recoveryFaults?: Fault[];
  /** Check every crash state of one recorded run instead of `cuts`. */
  exhaustive?: boolean;
}

/**
 * What a suite generates:
 * - general: any workload and settings, cuts anywhere, all policies;
 * - torn: write-heavy workloads of multi-sector events left unsynced, cut with the torn policy;
 * - faults: fsync EIO or ENOSPC armed, one cut after the driver stops;
 * - read-faults: a general case whose recoveries read a damaged disk (a flipped bit, a read error);
 * - double-cut: a general case plus a second cut during the recovery drain;
 * - mixed: all of the above (general, torn and faults weighted 2, double-cut 1);
 * - exhaustive: any workload and settings, every distinct crash state of one recorded run.
 */
export const SUITE_KINDS = ['general', 'torn', 'faults', 'read-faults', 'double-cut', 'mixed', 'exhaustive'] as const;
export type SuiteKind = (typeof SUITE_KINDS)[number];

export interface CrashInputOptions {
  /** The target's name (default: the built-in queue), or an external driver. */
  target?: string;
  driver?: ExternalDriver;
  kind?: SuiteKind;
  /** Settings forced on every input (e.g. one design, or a variant's needs). */
  settings?: TargetSettings;
  variant?: string;
  maxCutsPerInput?: number;
  maxSteps?: number;
  /** Random cuts use only these policies (and keep-all, the baseline); default lose-unsynced and torn. */
  policies?: readonly CrashPolicy[];
}

export function crashInputArb(o: CrashInputOptions = {}): fc.Arbitrary<CrashInput> {
  const kind = o.kind ?? 'general';
  if (kind === 'mixed') {
    return fc.oneof(
      { weight: 2, arbitrary: crashInputArb({ ...o, kind: 'general' }) },
      { weight: 2, arbitrary: crashInputArb({ ...o, kind: 'torn' }) },
      { weight: 2, arbitrary: crashInputArb({ ...o, kind: 'faults' }) },
      { weight: 1, arbitrary: crashInputArb({ ...o, kind: 'double-cut' }) },
    );
  }
  const target = resolveTarget(o, o.settings);
  const torn = kind === 'torn';
  const maxCuts = o.maxCutsPerInput ?? 4;
  const step = stepArbOf(kind);
  const cutsArb = kind === 'exhaustive'
    ? fc.constant<CutChoice[]>([])
    : fc.array(torn ? cutChoiceArb(fc.constant('torn' as const), fc.constant(target.cutTargets[0])) : cutChoiceArb(policiesArb(o.policies), cutTargetArb(target)), {
      minLength: kind === 'faults' ? 1 : Math.min(2, maxCuts),
      maxLength: kind === 'faults' ? 1 : maxCuts,
    });
  return fc
    .record({
      workload: workloadArb(o.maxSteps ?? maxStepsOf(kind), step),
      settings: target.settingsArb,
      cuts: cutsArb,
      recoveryCut: kind === 'double-cut' ? recoveryCutArb : fc.constant(undefined),
      faults: kind === 'faults' ? fc.array(faultArb(target), { minLength: 1, maxLength: 1 }) : fc.constant(undefined),
      recoveryFaults: kind === 'read-faults' ? fc.array(readFaultArb(target), { minLength: 1, maxLength: 1 }) : fc.constant(undefined),
    })
    .map(({ workload, settings, cuts, recoveryCut, faults, recoveryFaults }) => {
      const merged = { ...settings, ...o.settings };
      return {
        ...(o.target !== undefined ? { target: o.target } : {}),
        ...(o.driver !== undefined ? { driver: o.driver } : {}),
        workload: target.fitWorkload(workload, merged),
        settings: merged,
        ...(o.variant !== undefined ? { variant: o.variant } : {}),
        cuts,
        ...(recoveryCut ? { recoveryCut } : {}),
        ...(faults ? { faults } : {}),
        ...(recoveryFaults ? { recoveryFaults } : {}),
        ...(kind === 'exhaustive' ? { exhaustive: true } : {}),
      };
    });
}

/** The steps a suite kind generates its workloads from, and how many at most. */
function stepArbOf(kind: Exclude<SuiteKind, 'mixed'>): fc.Arbitrary<Step> {
  return kind === 'torn' ? tornStepArb : kind === 'exhaustive' ? exhaustiveStepArb : stepArb;
}
function maxStepsOf(kind: Exclude<SuiteKind, 'mixed'>): number {
  return kind === 'torn' ? 10 : kind === 'exhaustive' ? EXHAUSTIVE_MAX_STEPS : 16;
}

/** A mutant may grow this many steps beyond what its suite generates (the run, and its states, grow with it). */
const MUTANT_EXTRA_STEPS = 4;

/**
 * Small changes to an input that reached a rare feature (the gate's steering, as coverage-guided
 * fuzzers mutate their corpus): a step inserted, duplicated or dropped, and sometimes one setting
 * drawn anew from the target's space; the suite's forced settings stay, and the workload is fitted
 * to the settings again. Its cuts, faults and recovery cut are kept.
 */
export function mutantInputArb(base: CrashInput, o: CrashInputOptions = {}): fc.Arbitrary<CrashInput> {
  const kind = o.kind === 'mixed' || o.kind === undefined ? 'general' : o.kind;
  const target = resolveTarget(o, o.settings);
  const steps = base.workload.steps;
  const last = Math.max(0, steps.length - 1);
  const workload = fc.oneof(
    fc.tuple(fc.nat(steps.length), stepArbOf(kind)).map(([i, s]) => [...steps.slice(0, i), s, ...steps.slice(i)]),
    fc.nat(last).map((i) => [...steps.slice(0, i + 1), ...steps.slice(i)]),
    fc.nat(last).map((i) => (steps.length > 1 ? steps.filter((_, j) => j !== i) : steps)),
  );
  const settings = fc.oneof(
    { weight: 2, arbitrary: fc.constant(base.settings) },
    {
      weight: 1,
      arbitrary: fc.tuple(target.settingsArb, fc.nat()).map(([fresh, k]) => {
        const keys = Object.keys(fresh);
        return keys.length === 0 ? base.settings : { ...base.settings, [keys[k % keys.length]]: fresh[keys[k % keys.length]] };
      }),
    },
  );
  return fc.tuple(workload, settings).map(([s, chosen]) => {
    const merged = { ...chosen, ...o.settings };
    return { ...base, workload: target.fitWorkload({ steps: s.slice(0, maxStepsOf(kind) + MUTANT_EXTRA_STEPS) }, merged), settings: merged };
  });
}

/** One generated workload and settings in both modes: exhaustive mode ignores the cuts, random mode uses the cuts drawn beside it. */
export function bothModesArb(o: CrashInputOptions, cutsPerInput: { min: number; max: number } = { min: 2, max: 4 }): fc.Arbitrary<{ exhaustive: CrashInput; random: CrashInput }> {
  const cuts = fc.array(cutChoiceArb(policyArb, cutTargetArb(resolveTarget(o, o.settings))), { minLength: cutsPerInput.min, maxLength: cutsPerInput.max });
  return fc.tuple(crashInputArb({ ...o, kind: 'exhaustive' }), cuts).map(([input, c]) => ({ exhaustive: input, random: { ...input, exhaustive: false, cuts: c } }));
}

/** The random-mode crash cases of one input: a crash point per cut choice, spread over the uncut run's requests. */
export async function casesOf(daemon: DaemonHandle, input: CrashInput): Promise<CrashCase[]> {
  const base = {
    ...(input.target !== undefined ? { target: input.target } : {}),
    ...(input.driver !== undefined ? { driver: input.driver } : {}),
    workload: input.workload,
    settings: input.settings,
    ...(input.variant !== undefined ? { variant: input.variant } : {}),
  };
  const extra = { ...(input.recoveryCut ? { recoveryCut: input.recoveryCut } : {}), ...(input.recoveryFaults ? { recoveryFaults: input.recoveryFaults } : {}) };
  if (input.faults) {
    return input.cuts.map((c) => ({ ...base, ...extra, policy: c.policy, seed: c.seed, faults: input.faults }));
  }
  const target = resolveTarget(input, input.settings);
  const all = await countRequests(daemon, target, base);
  // The uncut run hung or failed by itself: one case without a cut judges that, crashed at its end
  // by the input's own policy (a keep-all input judged lose-unsynced lost every unsynced write and
  // reported that loss beside, or instead of, the failure: nats-jetstream.test.ts's process crashes).
  if (all === undefined) {
    const first = input.cuts[0];
    return [{ ...base, ...extra, policy: first?.policy ?? 'lose-unsynced', seed: first?.seed ?? 0 }];
  }
  const cases: CrashCase[] = [];
  for (const c of input.cuts) {
    // A filter the run never hits (e.g. rename in the append-log design) falls back to any request.
    const targeted = c.target ? ((await countRequests(daemon, target, base, c.target)) ?? 0) : 0;
    const cut = targeted > 0 ? crashPointAt(c.fraction, targeted, c.timing, c.target) : crashPointAt(c.fraction, all, c.timing);
    cases.push({ ...base, ...extra, cut, policy: c.policy, seed: c.seed });
  }
  return cases;
}

export interface SuiteOptions {
  numRuns: number;
  seed?: number;
  path?: string;
  /** Stop at the first failure without shrinking (to measure time-to-catch; the gate). */
  endOnFailure?: boolean;
  artifactRoot?: string;
  /** Stop generating new inputs after this long (ms); a case already running, and shrinking, still complete. */
  timeLimitMs?: number;
  /** Exhaustive mode's caps and options. */
  exhaustive?: Partial<ExhaustiveOptions>;
  /** Keep judging an input after its first failing case: one failure (and artifact) per distinct signature (failure-signature.ts). */
  allFailures?: boolean;
  /** Only a failure with this signature counts (the others pass): shrinks one distinct failure without drifting to another. */
  signature?: string;
  /** Only a failure of this cause (its key) counts: shrinks one cause without drifting to another. */
  causeKey?: string;
  /** Stop shrinking this long after the first failure (inputs then pass untried); the smallest failure so far is kept. */
  shrinkTimeLimitMs?: number;
  /** Stop shrinking at this time (Date.now() ms; inputs then pass untried); the smallest failure so far is kept. */
  shrinkEndsMs?: number;
  /** Stop shrinking after this many inputs tried past the first failure (inputs then pass untried): a work budget's bound, the same on any machine. */
  maxShrinkInputs?: number;
}

export interface SuiteReport {
  failed: boolean;
  seed: number;
  path?: string;
  /** Inputs tried (fast-check runs, shrinks included). */
  numRuns: number;
  /** Crash cases judged: power cuts in random mode, crash states in exhaustive mode. */
  cases: number;
  coverage: Coverage;
  durationMs: number;
  firstFailureMs?: number;
  /** Crash cases judged before the first failure (time-to-catch in cases). */
  casesToFirstFailure?: number;
  failure?: CaseResult;
  /** With allFailures: the first failing input's failures of other signatures (not shrunk), each with its artifact. */
  otherFailures: CaseResult[];
  /** Each input tried before any shrinking, with the features its runs reached (the gate's steering reads them). */
  tried: { input: CrashInput; features: Record<string, number> }[];
  /** The smallest failing input fast-check found. */
  counterexample?: CrashInput;
  numShrinks: number;
  /** Exhaustive mode: the caps that left states out (e.g. "maxStatesPerInterval 24"). */
  capsHit: string[];
  /** The tool itself failed (not a violation): a bug or an environment problem, with the daemon's death if it died. */
  error?: string;
  errorArtifactDir?: string;
  /** One paragraph for the test log: seed, path, coverage, artifact and replay command, violations. */
  summary: string;
}

/** The suite caught a bug: a violation other than a hang (a hang is never proof), and the tool never failed. */
export function caughtBug(report: SuiteReport): boolean {
  return report.error === undefined && report.failure !== undefined && report.failure.violations.some((v) => !v.hang);
}

interface InputVerdict {
  coverage: Coverage;
  capsHit?: string[];
  /** The input's failing cases: the first, or with allFailures the first of each signature. */
  failures: CaseResult[];
  /** Cases judged before the first failure (all of them if none failed). */
  casesBeforeFailure: number;
}

async function checkRandom(daemon: DaemonHandle, input: CrashInput, artifactRoot: string, allFailures: boolean): Promise<InputVerdict> {
  const coverage = emptyCoverage();
  let judged = 0;
  let casesBeforeFailure: number | undefined;
  const failures: CaseResult[] = [];
  const target = resolveTarget(input, input.settings);
  for (const c of await casesOf(daemon, input)) {
    const result = await runCase(daemon, target, c, { artifactRoot });
    addCoverage(coverage, result.coverage);
    if (result.verdict === 'fail') {
      casesBeforeFailure ??= judged;
      if (failures.some((f) => failureSignature(f) === failureSignature(result))) await removeArtifact(result);
      else failures.push(result);
      if (!allFailures) break;
    }
    judged++;
  }
  return { coverage, failures, casesBeforeFailure: casesBeforeFailure ?? judged };
}

async function checkExhaustive(daemon: DaemonHandle, input: CrashInput, artifactRoot: string, options: Partial<ExhaustiveOptions>, allFailures: boolean): Promise<InputVerdict> {
  const r: ExhaustiveResult = await runExhaustive(daemon, resolveTarget(input, input.settings), input, { ...options, artifactRoot, allFailures });
  return { coverage: r.coverage, capsHit: r.capsHit, failures: r.failures, casesBeforeFailure: r.statesBeforeFailure };
}

async function removeArtifact(result: CaseResult | undefined): Promise<void> {
  if (result?.artifactDir) await rm(result.artifactDir, { recursive: true, force: true });
}

/** Runs the crash property over `arb` on one daemon and reports; never throws for a violation or a harness error. */
export async function runCrashSuite(daemon: DaemonHandle, arb: fc.Arbitrary<CrashInput>, o: SuiteOptions): Promise<SuiteReport> {
  const started = Date.now();
  const coverage = emptyCoverage();
  const capsHit = new Set<string>();
  let last: CaseResult | undefined;
  let otherFailures: CaseResult[] = [];
  const tried: SuiteReport['tried'] = [];
  let firstFailureMs: number | undefined;
  let casesToFirstFailure: number | undefined;
  let harnessError: HarnessError | undefined;
  /** Inputs tried past the first failure (shrink candidates). */
  let shrinkInputs = 0;
  const artifactRoot = o.artifactRoot ?? defaultArtifactRoot();
  // Serving drivers live as long as the suite (or the caller's, when it passes its own).
  const drivers = o.exhaustive?.driverWorkers ?? new DriverWorkers(mergeTimeouts(o.exhaustive?.timeouts));
  const exhaustiveOptions = { ...o.exhaustive, driverWorkers: drivers };
  const property = fc.asyncProperty(arb, async (input) => {
    // After a harness error every input passes untried: shrinking against a broken tool means nothing.
    if (harnessError) return;
    // Past the time limit, new inputs pass untried, but shrinking a failure found in time goes on.
    // (fast-check's interruptAfterTimeLimit would abandon a running case that keeps using the
    // daemon in the background and may delete the artifact the report names.)
    if (o.timeLimitMs !== undefined && last === undefined && Date.now() - started > o.timeLimitMs) return;
    if (o.shrinkTimeLimitMs !== undefined && firstFailureMs !== undefined && Date.now() - started - firstFailureMs > o.shrinkTimeLimitMs) return;
    if (o.shrinkEndsMs !== undefined && firstFailureMs !== undefined && Date.now() >= o.shrinkEndsMs) return;
    if (o.maxShrinkInputs !== undefined && firstFailureMs !== undefined && shrinkInputs++ >= o.maxShrinkInputs) return;
    let verdict: InputVerdict;
    try {
      const allFailures = (o.allFailures ?? false) || o.signature !== undefined || o.causeKey !== undefined;
      verdict = input.exhaustive ? await checkExhaustive(daemon, input, artifactRoot, exhaustiveOptions, allFailures) : await checkRandom(daemon, input, artifactRoot, allFailures);
    } catch (err) {
      harnessError = err instanceof HarnessError ? err : new HarnessError(err instanceof Error ? (err.stack ?? err.message) : String(err));
      return;
    }
    addCoverage(coverage, verdict.coverage);
    for (const cap of verdict.capsHit ?? []) capsHit.add(cap);
    if (firstFailureMs === undefined) tried.push({ input, features: verdict.coverage.features });
    const failure = o.causeKey !== undefined ? verdict.failures.find((f) => groupKeyOf(causeOfCase(f)) === o.causeKey)
      : o.signature !== undefined ? verdict.failures.find((f) => failureSignature(f) === o.signature) : verdict.failures[0];
    const others = verdict.failures.filter((f) => f !== failure);
    if (!failure) {
      for (const f of others) await removeArtifact(f);
      return;
    }
    if (firstFailureMs === undefined) {
      firstFailureMs = Date.now() - started;
      casesToFirstFailure = coverage.cases - verdict.coverage.cases + verdict.casesBeforeFailure + 1;
      otherFailures = others;
    } else {
      for (const f of others) await removeArtifact(f);
    }
    // Keep only the artifact of the smallest failing case (the last one shrinking found).
    await removeArtifact(last);
    last = failure;
    throw new Error(failure.violations.map((v) => v.message).join('\n'));
  });
  let details: fc.RunDetails<[CrashInput]>;
  try {
    details = await fc.check(property, {
      numRuns: o.numRuns,
      ...(o.seed !== undefined ? { seed: o.seed } : {}),
      ...(o.path !== undefined ? { path: o.path } : {}),
      endOnFailure: o.endOnFailure ?? false,
    });
  } finally {
    if (!o.exhaustive?.driverWorkers) await drivers.stop();
  }
  const failedByViolation = details.failed && last !== undefined;
  const report: SuiteReport = {
    failed: failedByViolation || harnessError !== undefined,
    seed: details.seed,
    ...(details.counterexamplePath ? { path: details.counterexamplePath } : {}),
    numRuns: details.numRuns + details.numShrinks,
    cases: coverage.cases,
    coverage,
    durationMs: Date.now() - started,
    ...(firstFailureMs !== undefined ? { firstFailureMs, casesToFirstFailure } : {}),
    ...(failedByViolation ? { failure: last } : {}),
    otherFailures: failedByViolation ? otherFailures : [],
    tried,
    ...(details.counterexample ? { counterexample: details.counterexample[0] as CrashInput } : {}),
    numShrinks: details.numShrinks,
    capsHit: [...capsHit].sort(),
    summary: '',
  };
  // Only the artifact kept (the smallest failing case, or the tool's failure) gets its report page.
  await drawArtifactReport(failedByViolation ? last?.artifactDir : harnessError?.artifactDir);
  for (const f of report.otherFailures) await drawArtifactReport(f.artifactDir);
  if (harnessError) {
    report.error = harnessError.message;
    if (harnessError.artifactDir) report.errorArtifactDir = harnessError.artifactDir;
  } else if (details.failed && !last) {
    // fast-check failed outside the property body (e.g. an arbitrary threw): also the tool's failure.
    report.failed = true;
    report.error = String(details.errorInstance ?? 'unknown error');
  }
  report.summary = summarize(report);
  return report;
}

function summarize(r: SuiteReport): string {
  const minutes = r.durationMs / 60_000;
  const unit = r.coverage.states > 0 ? 'crash states' : 'power cuts';
  const rate = minutes > 0 ? Math.round(r.cases / minutes) : r.cases;
  const head = `${r.cases} ${unit} in ${(r.durationMs / 1000).toFixed(1)} s (${rate}/min)`;
  const coverage = `coverage: ${formatCoverage(r.coverage)}${r.capsHit.length ? `; caps hit: ${r.capsHit.join(', ')}` : ''}`;
  if (!r.failed) return `passed: ${head}, fast-check seed ${r.seed}\n${coverage}`;
  const lines = [`FAILED after ${head}`, coverage];
  if (r.error) {
    lines.push(`harness error (not a verdict on the queue; stopped at once, nothing shrunk): ${r.error}`);
    if (r.errorArtifactDir) lines.push(`artifact: ${r.errorArtifactDir}`);
    lines.push(`fast-check seed ${r.seed}`);
    return lines.join('\n');
  }
  lines.push(`fast-check seed ${r.seed}, path "${r.path ?? ''}" (re-run the property with POWERCUT_SEED=${r.seed} POWERCUT_PATH="${r.path ?? ''}")`);
  if (r.failure) {
    lines.push(...r.failure.violations.map((v) => `  ${v.message}`));
    if (r.failure.artifactDir) lines.push(`artifact: ${r.failure.artifactDir}`, `replay:   ${replayCommand(r.failure.artifactDir)}`);
  }
  if (r.counterexample) lines.push(`smallest input: ${JSON.stringify(r.counterexample)}`);
  return lines.join('\n');
}

/** Scales a suite's run count by $POWERCUT_RUNS (a multiplier, default 1). */
export function scaledRuns(base: number): number {
  const scale = Number(process.env.POWERCUT_RUNS ?? '1');
  if (!Number.isFinite(scale) || scale <= 0) throw new Error(`POWERCUT_RUNS must be a positive number (a multiplier of each suite's runs), got ${process.env.POWERCUT_RUNS}`);
  return Math.max(1, Math.round(base * scale));
}
