// The results of a gate run, as the text summary (src/gate) and the HTML report both show them: one
// row per scenario or suite, with what it checked and found, the totals and the verdicts.
import { DEFAULT_REPLAY_RERUNS, type ReplayFacts, type ReplayMode } from '../harness/artifacts.js';
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
    /** Whether replay recovers its stored disks, exactly as the failure saw them (artifacts.ts, storesDisksAfterCut). */
    replayStoredImages?: boolean;
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
  /** Other proven causes counted under its key (cause.ts groupKeyOf: an early confirmation named at another fsync), by title. */
  alsoCauses?: string[];
  /** Later failing runs whose states its cause's fix, carried over, was proven to cure (one proof each, no search). */
  provenAgain?: number;
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
  /** Whether replay recovers its stored disks, exactly as the failure saw them (artifacts.ts, storesDisksAfterCut). */
  replayStoredImages?: boolean;
  seed?: number;
  path?: string;
}

/** Names `title` among a group's other causes (alsoCauses), unless it is the group's own or listed already. */
export function addAlsoCause(f: DistinctFailure, title: string): void {
  if (title !== f.cause?.title && !f.alsoCauses?.includes(title)) (f.alsoCauses ??= []).push(title);
}

/** A failure's artifact and how it replays: what the gate drops when the folder is gone, or takes from the kept one. */
export type ArtifactLink = { artifactDir?: string; replay?: string } & Partial<ReplayFacts>;

/** `f`'s artifact fields alone (for another failure that links the same folder). */
export function artifactLinkOf(f: ArtifactLink): ArtifactLink {
  return { artifactDir: f.artifactDir, replay: f.replay, replayMode: f.replayMode, replayStoredImages: f.replayStoredImages };
}

/** Removes `f`'s artifact fields (its folder is gone). */
export function dropArtifactLink(f: ArtifactLink): void {
  delete f.artifactDir;
  delete f.replay;
  delete f.replayMode;
  delete f.replayStoredImages;
}

/** Re-runs of the whole case `powercut replay` makes by default: one when exact, a sample's K. */
export function replayReruns(mode: ReplayMode): number {
  return mode === 'exact' ? 1 : DEFAULT_REPLAY_RERUNS;
}

/**
 * Whether a failure replays exactly or as a sample, in words, as `powercut replay` does it ('' when
 * not known): stored disks are recovered exactly (REPRODUCED or not); the whole case re-runs once
 * when one process issues its requests in one order, else K times, reported as k of K.
 */
export function replayModeNote(f: Partial<ReplayFacts>): string {
  if (f.replayMode === 'exact') return '(replays exactly: one re-run repeats the recorded run)';
  if (f.replayMode !== 'sample') return '';
  if (f.replayStoredImages) return `(replays exactly from its stored images, REPRODUCED or not; its ${DEFAULT_REPLAY_RERUNS} re-runs of the whole case are a sample)`;
  return `(replays as a sample (${DEFAULT_REPLAY_RERUNS} re-runs): concurrent requests interleave anew, so it says in how many it reproduced)`;
}

/** The replay command of a failure, with whether it replays exactly or as a sample (the summary and JUnit print it). */
export function replayWithMode(f: { replay?: string } & Partial<ReplayFacts>): string | undefined {
  if (!f.replay) return undefined;
  const note = replayModeNote(f);
  return note ? `${f.replay}   ${note}` : f.replay;
}

/** Whether a failure replays exactly: its one re-run, or its stored disks (undefined: no artifact to replay). */
export function replaysExactly(f: { replay?: string } & Partial<ReplayFacts>): boolean | undefined {
  if (!f.replay || f.replayMode === undefined) return undefined;
  return f.replayMode === 'exact' || f.replayStoredImages === true;
}

/** "artifacts: 2 replay exactly (...); 1 only as a sample (...)": how the failures' artifacts replay ('' when none has one). */
export function replaySummary(failures: readonly ({ replay?: string } & Partial<ReplayFacts>)[]): string {
  const exact = failures.filter((f) => replaysExactly(f) === true).length;
  const sample = failures.filter((f) => replaysExactly(f) === false).length;
  const parts = [
    ...(exact ? [`${exact} replay${exact === 1 ? 's' : ''} exactly (from stored disks, or one re-run of one process)`] : []),
    ...(sample ? [`${sample} only as a sample (${DEFAULT_REPLAY_RERUNS} re-runs each, reproduced in k of ${DEFAULT_REPLAY_RERUNS})`] : []),
  ];
  return parts.length ? `artifacts: ${parts.join('; ')}` : '';
}

/** What a summary counts as its cases: a single disk's crash states (exhaustive mode) or power cuts (random), a cluster's crash states and landed live cuts. */
export type SummaryMode = 'exhaustive' | 'random' | 'cluster';

/** The words of each mode: the cases column's, the unit of its rate, the cuts made during runs. */
export const CASE_WORDS: Readonly<Record<SummaryMode, { column: string; unit: string; cuts: string }>> = {
  exhaustive: { column: 'states', unit: 'crash states', cuts: 'random cuts' },
  random: { column: 'cuts', unit: 'power cuts', cuts: 'random cuts' },
  cluster: { column: 'states, live cuts', unit: 'crash states and live cuts', cuts: 'live cuts' },
};

/** One cut kind of a cluster gate (coordinated, one, minority, majority): what it listed and judged. */
export interface ClusterKindCoverage {
  /** Its lose-unsynced crash states listed in the recordings (its row's; the policy every cluster gate judges). */
  listed: number;
  /** Offline crash states of this kind recovered and judged (every policy). */
  states: number;
  /** Live cuts of this kind asked for, and those that froze at their request (the others ran uncut). */
  liveCuts: number;
  liveLanded: number;
  /** Live cuts that a pause of a node (SIGSTOP, SIGCONT) came before. */
  livePaused: number;
  /** Failing states and cases of this kind. */
  failing: number;
}

export interface ClusterNodeCoverage {
  node: number;
  /** Its requests in the recorded runs and the live runs. */
  requests: number;
  /** Judged crash states in which its power went, and landed live cuts that took it. */
  cutInStates: number;
  cutLive: number;
}

/** A cluster gate's coverage as the reports show it (src/gate/cluster-coverage.ts counts it, with its kinds typed). */
export interface ClusterCoverageShown {
  nodes: number;
  nodesCut: string;
  /** The kinds asked for, each counted on its own row. */
  kinds: readonly string[];
  /** Workloads recorded, their persistence intervals, their states listed and those the caps left out. */
  recordings: number;
  intervals: number;
  statesListed: number;
  statesCapped: number;
  /**
   * Of the judged states, those whose images on every node were a recovered state's (same
   * CrashStateInfo.hash): counted as judged, with that one drain judged against their own
   * confirmations, not recovered again.
   */
  statesShared: number;
  perKind: Partial<Record<string, ClusterKindCoverage>>;
  perNode: ClusterNodeCoverage[];
  /** How distinct failures are grouped, and that a cluster's causes are not searched (yet). */
  grouping: string;
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
