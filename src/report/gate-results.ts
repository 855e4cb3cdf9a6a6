// The results of a gate run, as the text summary (src/gate) and the HTML report both show them: one
// row per scenario or suite, with what it checked and found, the totals and the verdicts.
import { DEFAULT_REPLAY_RERUNS, type ReplayMode } from '../harness/artifacts.js';
import type { Cause } from '../harness/cause/cause.js';
import { addCoverage, emptyCoverage, TIME_BUDGET_CAP, type Coverage } from '../harness/coverage.js';

export interface GateRow {
  name: string;
  kind: 'scenario' | 'suite';
  /** Crash cases judged: power cuts (random mode, scenarios) or crash states (exhaustive mode). */
  cases: number;
  coverage: Coverage;
  /** Failing cases found (0 = passed): a gate that explores past its first failure counts each. */
  violations: number;
  durationMs: number;
  /** The first violation found, in words, with where to look. */
  failure?: {
    /** Its distinct failure's key (the gate links the kept artifact of that cause or signature). */
    key?: string;
    messages: string[];
    artifactDir?: string;
    replay?: string;
    /** Whether replaying its artifact repeats the run exactly or samples it (artifacts.ts, replayModeOf). */
    replayMode?: ReplayMode;
    /** Suites: fast-check seed and path of the failing run. */
    seed?: number;
    path?: string;
  };
  /** The tool itself failed (environment or bug), each time it did: not a verdict on the queue. */
  errors: string[];
  /** Exhaustive mode: the caps that left crash states out. */
  capsHit: string[];
}

/**
 * One distinct failure of a gate run: by default one cause (its key, cause/cause.ts), else one
 * signature (failure-signature.ts); how often it was found, where, and its smallest artifact.
 */
export interface DistinctFailure {
  /** What groups its cases: the cause's key, or the signature (--group-by signature). */
  key: string;
  /** Its heading: the cause's title ("missing fsync of directory / after create of /page.*"), or the signature. */
  title: string;
  /** Failing cases it stands for. */
  count: number;
  /** Failing crash states it stands for (a case of exhaustive mode stands for every failing state of its run its cause explains). */
  states?: number;
  /** The signatures (check, policy, request at the cut) its cases showed, with how many each. */
  signatures: { signature: string; count: number }[];
  /** Why it failed: the cause of its kept (smallest) case, with its fix, proof and reach. */
  cause?: Cause;
  /** The scenarios and suites that found it. */
  foundBy: string[];
  /** The checks its smallest case violated. */
  checks: string[];
  /** The smallest failing case's violations, artifact and replay command. */
  messages: string[];
  artifactDir?: string;
  replay?: string;
  /** Whether replaying its artifact repeats the run exactly or samples it (artifacts.ts, replayModeOf). */
  replayMode?: ReplayMode;
  seed?: number;
  path?: string;
}

/** Whether a failure's replay is exact or a sample, in words ('' when not known). */
export function replayModeNote(mode: ReplayMode | undefined): string {
  if (mode === 'exact') return '(exact: repeats the recorded run)';
  if (mode === 'sample') return `(a sample: concurrent requests interleave anew, so it re-runs the case ${DEFAULT_REPLAY_RERUNS} times and counts the reproductions)`;
  return '';
}

/** The replay command of a failure, with whether it replays exactly or as a sample (the summary and JUnit print it). */
export function replayWithMode(f: { replay?: string; replayMode?: ReplayMode }): string | undefined {
  if (!f.replay) return undefined;
  const note = replayModeNote(f.replayMode);
  return note ? `${f.replay}   ${note}` : f.replay;
}

export function newRow(name: string, kind: GateRow['kind']): GateRow {
  return { name, kind, cases: 0, coverage: emptyCoverage(), violations: 0, durationMs: 0, errors: [], capsHit: [] };
}

export function rowFailed(r: GateRow): boolean {
  return r.violations > 0 || r.errors.length > 0;
}

export interface GateTotals {
  cases: number;
  coverage: Coverage;
  violations: number;
  /** Harness errors (the tool failed, the daemon was restarted). */
  errors: number;
  durationMs: number;
}

export function totals(rows: readonly GateRow[], durationMs: number): GateTotals {
  const coverage = emptyCoverage();
  for (const r of rows) addCoverage(coverage, r.coverage);
  return {
    cases: rows.reduce((n, r) => n + r.cases, 0),
    coverage,
    violations: rows.reduce((n, r) => n + r.violations, 0),
    errors: rows.reduce((n, r) => n + r.errors.length, 0),
    durationMs,
  };
}

/** A row's or a run's result: FAIL when a check was violated, else ERROR when the tool failed, else pass. */
export type GateResult = 'FAIL' | 'ERROR' | 'pass';

export function resultOf(violations: number, errors: number): GateResult {
  if (violations > 0) return 'FAIL';
  return errors > 0 ? 'ERROR' : 'pass';
}

export function rowResult(r: GateRow): GateResult {
  return resultOf(r.violations, r.errors.length);
}

/** Cases judged per minute of `durationMs` (0 for no time). */
export function perMinute(cases: number, durationMs: number): number {
  return durationMs > 0 ? Math.round(cases / (durationMs / 60_000)) : 0;
}

/** The note printed when caps left crash states out of any row; undefined when none did. */
export function capsNote(rows: readonly GateRow[]): string | undefined {
  const hit = rows.flatMap((r) => r.capsHit);
  const notes = [
    ...(hit.some((c) => c !== TIME_BUDGET_CAP) ? ['caps left crash states out (raise them with --max-states, --max-states-per-interval, --sector-patterns)'] : []),
    ...(hit.includes(TIME_BUDGET_CAP) ? ['the time budget left crash states out (raise it with --time-budget)'] : []),
  ];
  return notes.length > 0 ? notes.join('; ') : undefined;
}
