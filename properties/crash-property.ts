// The crash property, shared by the suites (properties/*.test.ts) and the durability gate:
// for a generated workload and settings, count an uncut run's requests, cut the power at
// generated points (or run with faults), recover, and let the oracle judge. Failures shrink;
// the report names the fast-check seed and path and the artifact folder of the smallest case.
import fc from 'fast-check';
import { rm } from 'node:fs/promises';
import type { Fault } from '../fusefs/protocol.js';
import type { QueueSettings } from '../src/queue/types.js';
import { replayCommand } from '../src/harness/artifacts.js';
import { countRequests, crashPointAt, defaultArtifactRoot, runCase, type CaseResult, type CrashCase, type CutSpec } from '../src/harness/crash-run.js';
import type { DaemonHandle } from '../src/harness/daemon-process.js';
import type { Workload } from '../src/harness/workload.js';
import { PAGE_WRITE_TARGET, cutChoiceArb, faultArb, fitWorkload, recoveryCutArb, settingsArb, tornStepArb, workloadArb, type CutChoice } from './arbitraries.js';

/** One generated property input: several cuts of the same workload share one request count. */
export interface CrashInput {
  workload: Workload;
  settings: Partial<QueueSettings>;
  variant?: string;
  cuts: CutChoice[];
  recoveryCut?: CutSpec;
  faults?: Fault[];
}

/**
 * What a suite generates:
 * - general: any workload and settings, cuts anywhere, all policies;
 * - torn: write-heavy workloads of multi-sector events left unsynced, cut with the torn policy;
 * - faults: fsync EIO or ENOSPC armed, one cut after the driver stops;
 * - double-cut: a general case plus a second cut during the recovery drain;
 * - mixed: all of the above (general, torn and faults weighted 2, double-cut 1), for the variants and the gate.
 */
export const SUITE_KINDS = ['general', 'torn', 'faults', 'double-cut', 'mixed'] as const;
export type SuiteKind = (typeof SUITE_KINDS)[number];

export interface CrashInputOptions {
  kind?: SuiteKind;
  /** Settings forced on every input (e.g. one checkpoint and page design, or a variant's needs). */
  settings?: Partial<QueueSettings>;
  variant?: string;
  maxCutsPerInput?: number;
  maxSteps?: number;
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
  const torn = kind === 'torn';
  const maxCuts = o.maxCutsPerInput ?? 4;
  return fc
    .record({
      workload: torn ? workloadArb(o.maxSteps ?? 10, tornStepArb) : workloadArb(o.maxSteps),
      settings: settingsArb,
      // Several cuts per input share its uncut count; a fault run cuts once, after the driver stopped.
      cuts: fc.array(torn ? cutChoiceArb(fc.constant('torn' as const), fc.constant(PAGE_WRITE_TARGET)) : cutChoiceArb(), {
        minLength: kind === 'faults' ? 1 : Math.min(2, maxCuts),
        maxLength: kind === 'faults' ? 1 : maxCuts,
      }),
      recoveryCut: kind === 'double-cut' ? recoveryCutArb : fc.constant(undefined),
      faults: kind === 'faults' ? fc.array(faultArb, { minLength: 1, maxLength: 1 }) : fc.constant(undefined),
    })
    .map(({ workload, settings, cuts, recoveryCut, faults }) => {
      const merged = { ...settings, ...o.settings };
      return {
        workload: fitWorkload(workload, merged),
        settings: merged,
        ...(o.variant !== undefined ? { variant: o.variant } : {}),
        cuts,
        ...(recoveryCut ? { recoveryCut } : {}),
        ...(faults ? { faults } : {}),
      };
    });
}

/** The crash cases of one input: a crash point per cut choice, spread over the uncut run's requests. */
export async function casesOf(daemon: DaemonHandle, input: CrashInput): Promise<CrashCase[]> {
  const base = { workload: input.workload, settings: input.settings, ...(input.variant !== undefined ? { variant: input.variant } : {}) };
  const extra = { ...(input.recoveryCut ? { recoveryCut: input.recoveryCut } : {}) };
  if (input.faults) {
    return input.cuts.map((c) => ({ ...base, ...extra, policy: c.policy, seed: c.seed, faults: input.faults }));
  }
  const cases: CrashCase[] = [];
  for (const c of input.cuts) {
    // A target the run never hits (e.g. rename in the append-log design) falls back to any request.
    const targeted = c.target ? await countRequests(daemon, base, c.target) : 0;
    const cut = targeted > 0 ? crashPointAt(c.fraction, targeted, c.timing, c.target) : crashPointAt(c.fraction, await countRequests(daemon, base), c.timing);
    cases.push({ ...base, ...extra, cut, policy: c.policy, seed: c.seed });
  }
  return cases;
}

export interface SuiteOptions {
  numRuns: number;
  seed?: number;
  path?: string;
  /** Stop at the first failure without shrinking (to measure time-to-catch). */
  endOnFailure?: boolean;
  artifactRoot?: string;
  /** Stop generating new inputs after this long (ms); shrinking still completes. */
  timeLimitMs?: number;
}

export interface SuiteReport {
  failed: boolean;
  seed: number;
  path?: string;
  /** Inputs tried (fast-check runs, shrinks included) and power cuts judged. */
  numRuns: number;
  cuts: number;
  durationMs: number;
  firstFailureMs?: number;
  failure?: CaseResult;
  /** The smallest failing input fast-check found, and how many shrink steps it took. */
  counterexample?: CrashInput;
  numShrinks: number;
  /** Thrown by the harness itself (not a violation): a bug or an environment problem. */
  error?: string;
  /** One paragraph for the test log: seed, path, artifact and replay command, violations. */
  summary: string;
}

/** Runs the crash property over `arb` on one daemon and reports; never throws for a violation. */
export async function runCrashSuite(daemon: DaemonHandle, arb: fc.Arbitrary<CrashInput>, o: SuiteOptions): Promise<SuiteReport> {
  const started = Date.now();
  let cuts = 0;
  let last: CaseResult | undefined;
  let firstFailureMs: number | undefined;
  const artifactRoot = o.artifactRoot ?? defaultArtifactRoot();
  const property = fc.asyncProperty(arb, async (input) => {
    // Past the time limit, new inputs pass untried, but shrinking a failure found in time goes on.
    // (fast-check's interruptAfterTimeLimit would abandon a running case that keeps using the
    // daemon in the background and may delete the artifact the report names.)
    if (o.timeLimitMs !== undefined && last === undefined && Date.now() - started > o.timeLimitMs) return;
    for (const c of await casesOf(daemon, input)) {
      const result = await runCase(daemon, c, { artifactRoot });
      cuts++;
      if (result.verdict === 'fail') {
        firstFailureMs ??= Date.now() - started;
        // Keep only the artifact of the smallest failing case (the last one shrinking found).
        if (last?.artifactDir) await rm(last.artifactDir, { recursive: true, force: true });
        last = result;
        throw new Error(result.violations.map((v) => v.message).join('\n'));
      }
    }
  });
  const details = await fc.check(property, {
    numRuns: o.numRuns,
    ...(o.seed !== undefined ? { seed: o.seed } : {}),
    ...(o.path !== undefined ? { path: o.path } : {}),
    endOnFailure: o.endOnFailure ?? false,
  });
  const durationMs = Date.now() - started;
  const report: SuiteReport = {
    failed: details.failed,
    seed: details.seed,
    ...(details.counterexamplePath ? { path: details.counterexamplePath } : {}),
    numRuns: details.numRuns + details.numShrinks,
    cuts,
    durationMs,
    ...(firstFailureMs !== undefined ? { firstFailureMs } : {}),
    ...(details.failed && last ? { failure: last } : {}),
    ...(details.counterexample ? { counterexample: details.counterexample[0] as CrashInput } : {}),
    numShrinks: details.numShrinks,
    summary: '',
  };
  if (details.failed && !last) report.error = String(details.errorInstance ?? 'unknown error');
  report.summary = summarize(report, details.counterexample?.[0] as CrashInput | undefined);
  return report;
}

function summarize(r: SuiteReport, input: CrashInput | undefined): string {
  const rate = r.durationMs > 0 ? ((r.cuts * 60_000) / r.durationMs).toFixed(0) : '?';
  const head = `${r.cuts} power cuts in ${(r.durationMs / 1000).toFixed(1)} s (${rate}/min)`;
  if (!r.failed) return `passed: ${head}, fast-check seed ${r.seed}`;
  const lines = [
    `FAILED after ${head}`,
    `fast-check seed ${r.seed}, path "${r.path ?? ''}" (re-run the property with POWERCUT_SEED=${r.seed} POWERCUT_PATH="${r.path ?? ''}")`,
  ];
  if (r.error) lines.push(`harness error (not a violation): ${r.error}`);
  if (r.failure) {
    lines.push(...r.failure.violations.map((v) => `  ${v.message}`));
    if (r.failure.artifactDir) lines.push(`artifact: ${r.failure.artifactDir}`, `replay:   ${replayCommand(r.failure.artifactDir)}`);
  }
  if (input) lines.push(`smallest input: ${JSON.stringify(input)}`);
  return lines.join('\n');
}

/** Scales a suite's run count by $POWERCUT_RUNS (a multiplier, default 1), e.g. for the gate. */
export function scaledRuns(base: number): number {
  const scale = Number(process.env.POWERCUT_RUNS ?? '1');
  if (!Number.isFinite(scale) || scale <= 0) throw new Error(`POWERCUT_RUNS must be a positive number (a multiplier of each suite's runs), got ${process.env.POWERCUT_RUNS}`);
  return Math.max(1, Math.round(base * scale));
}

/** Seed and path from $POWERCUT_SEED / $POWERCUT_PATH, to re-run a reported failure. */
export function seedFromEnv(): { seed?: number; path?: string } {
  const seed = process.env.POWERCUT_SEED;
  if (seed !== undefined && !/^-?\d+$/.test(seed)) throw new Error(`POWERCUT_SEED must be an integer, got ${seed}`);
  return { ...(seed !== undefined ? { seed: Number(seed) } : {}), ...(process.env.POWERCUT_PATH ? { path: process.env.POWERCUT_PATH } : {}) };
}
