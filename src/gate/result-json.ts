// The gate's result as one JSON document (pure): `powercut gate --json FILE` writes it, CI reads
// it, a shard merger joins several. Its shape is docs/gate-result.schema.json, and
// src/gate/result-json.test.ts validates a real run's file against that schema.
import type { StateCaps, StatePolicy } from '../../fusefs/crash-states.js';
import type { NodesCutChoice } from '../faults/cut-kinds.js';
import type { Contract } from '../harness/contract.js';
import { describeContract } from '../harness/contract.js';
import type { Coverage } from '../harness/coverage.js';
import type { ExternalDriver } from '../harness/target.js';
import type { DriverNetwork } from '../harness/driver-network.js';
import type { StartingState } from '../harness/starting-state.js';
import { groupedByCause, type Cause } from '../harness/cause/cause.js';
import { replayReruns, rowResult, totals, type DistinctFailure, type GateRow } from '../report/gate-results.js';
import { allowedOverrunMs, workBudgetOption, type WorkBudget } from './budget.js';
import type { FloorCheck } from './floor.js';
import type { ClusterCoverage } from './cluster-coverage.js';
import type { GateReport } from './gate-report.js';
import type { PhaseUse } from './phases.js';

/** Bumped when a field changes meaning or goes away (new fields keep it). */
export const GATE_RESULT_SCHEMA = 'powercut-gate-result/1';

export interface GateResultOptions {
  target?: string;
  driver?: ExternalDriver;
  mode: 'exhaustive' | 'random';
  variant?: string;
  settings?: Record<string, unknown>;
  caps?: Partial<StateCaps>;
  policies?: StatePolicy[];
  /** The time budget, or (`cases`) the work budget: one of the two. */
  timeBudgetMs?: number;
  cases?: WorkBudget;
  /** States recovered at once, when --slots set it. */
  slots?: number;
  stopOnFirst: boolean;
  generation: 'steered' | 'plain';
  groupBy: 'cause' | 'signature';
  /** A cluster target: the cut kinds asked (--nodes-cut) and live cuts per kind and workload (--live-cuts). */
  nodesCut?: NodesCutChoice;
  liveCuts?: number;
}

export interface GateResultJson {
  schema: typeof GATE_RESULT_SCHEMA;
  seed: number;
  options: GateResultOptions;
  verdict: GateReport['verdict'];
  exitCode: number;
  durationMs: number;
  /** How long past its time budget the gate ended (0: within it), and how long it may (budget.ts); absent under a work budget. */
  overrunMs?: number;
  allowedOverrunMs?: number;
  /** Each phase's share of the budget and the time it used (phases.ts). */
  phases?: PhaseUse[];
  /** The contracts the cases were judged against, in words and as declared, with their case counts. */
  checkedAgainst: { contract: Contract; description: string; cases: number }[];
  coverage: Coverage;
  rows: { name: string; kind: GateRow['kind']; result: string; cases: number; violations: number; errors: string[]; durationMs: number; coverage: Coverage; capsHit: string[]; floor: FloorCheck[] }[];
  floor: { met: boolean; requirements: FloorCheck[] };
  /** Each distinct failure; with an artifact, how replay reproduces it (replayMode, replayReruns, replayStoredImages). */
  failures: (Omit<DistinctFailure, 'cause'> & { cause?: Cause; replayReruns?: number })[];
  steered: GateReport['steered'];
  /** A cluster target: per cut kind the states and live cuts judged, per node its requests and cuts. */
  cluster?: ClusterCoverage;
  /** The network the driver processes got: a namespace each, or shared and why. */
  driverNetwork?: DriverNetwork;
  /** A driver's starting state (its setup run): its size; it is not tested (tested: false). Null: the driver has none. */
  startingState?: (StartingState & { tested: false }) | null;
  /**
   * What runs this run's inputs again on any machine (`option`, with --seed), each judged in full:
   * its inputs (a cluster: workloads), and how many were recorded with concurrent steps (a sample;
   * none: the verdict repeats exactly). Absent in a merge of shards.
   */
  repeat?: { cases: WorkBudget; option: string; inputs: number; interleaved: number };
}

/** What the JSON reads of a gate's report (a merge of shards has no `repeat`). */
export type ReportForJson = Omit<GateReport, 'repeat' | 'interleaved' | 'inputs'> & Partial<Pick<GateReport, 'repeat' | 'interleaved' | 'inputs'>>;

export function gateResultJson(report: ReportForJson, seed: number, options: GateResultOptions): GateResultJson {
  const t = totals(report.rows, report.durationMs);
  return {
    schema: GATE_RESULT_SCHEMA,
    seed,
    options,
    verdict: report.verdict,
    exitCode: report.exitCode,
    durationMs: report.durationMs,
    // What the budget promised, checked: a test asserts overrunMs <= allowedOverrunMs.
    ...(options.timeBudgetMs !== undefined ? { overrunMs: Math.max(0, report.durationMs - options.timeBudgetMs), allowedOverrunMs: allowedOverrunMs(options.timeBudgetMs) } : {}),
    ...(report.phases ? { phases: report.phases.map((p) => ({ ...p, ...(p.shareMs !== undefined ? { shareMs: Math.round(p.shareMs) } : {}), usedMs: Math.round(p.usedMs) })) } : {}),
    checkedAgainst: Object.entries(t.coverage.contracts).map(([key, cases]) => {
      const contract = JSON.parse(key) as Contract;
      return { contract, description: describeContract(contract), cases };
    }),
    coverage: t.coverage,
    rows: report.rows.map((r) => ({
      name: r.name, kind: r.kind, result: rowResult(r), cases: r.cases, violations: r.violations, errors: r.errors, durationMs: r.durationMs, coverage: r.coverage, capsHit: r.capsHit,
      floor: report.floor.filter((c) => c.row === r.name && c.kind === r.kind),
    })),
    floor: { met: report.floor.every((c) => c.met), requirements: report.floor },
    failures: report.failures.map((f) => ({
      key: f.key, title: f.title, count: f.count, signatures: f.signatures, checks: f.checks, foundBy: f.foundBy, messages: f.messages,
      // The cause only when it is what groups the failure (with --group-by signature, a signature's kept case may have another).
      ...(groupedByCause(f) ? { cause: f.cause, ...(f.alsoCauses ? { alsoCauses: f.alsoCauses } : {}) } : {}),
      // How replay reproduces it: exactly from stored disks (REPRODUCED or not), by one exact re-run, or only as a sample of re-runs.
      ...(f.artifactDir ? {
        artifactDir: f.artifactDir, replay: f.replay,
        ...(f.replayMode ? { replayMode: f.replayMode, replayReruns: replayReruns(f.replayMode), replayStoredImages: f.replayStoredImages === true } : {}),
      } : {}),
      ...(f.seed !== undefined ? { seed: f.seed } : {}),
      ...(f.path !== undefined ? { path: f.path } : {}),
    })),
    steered: report.steered,
    ...(report.cluster ? { cluster: report.cluster } : {}),
    ...(report.driverNetwork ? { driverNetwork: report.driverNetwork } : {}),
    ...(report.startingState !== undefined ? { startingState: report.startingState && { ...report.startingState, tested: false as const } } : {}),
    ...(report.repeat ? { repeat: { cases: report.repeat, option: `--seed ${seed} ${workBudgetOption(report.repeat)}`, inputs: report.inputs ?? 0, interleaved: report.interleaved ?? 0 } } : {}),
  };
}

/**
 * What a seed and a work budget determine of a gate's result, on one disk where every input ran
 * sequentially (repeat.interleaved 0): the exit code and each distinct failure's key, title, count
 * and cause (its kind, key, title, fix and its proof's counts), none of the times; a test compares
 * it across machines, loads and slot counts (docs/gate.md, "Work budgets").
 */
export function repeatableVerdict(r: Pick<GateResultJson, 'exitCode' | 'failures'>): string {
  const proof = (p: Cause['proof']) => p && { step: p.step, failing: p.failing, cured: p.cured, curesOwnState: p.curesOwnState, broken: p.broken, states: p.states };
  return JSON.stringify({
    exitCode: r.exitCode,
    failures: r.failures.map((f) => ({ key: f.key, title: f.title, count: f.count, cause: f.cause && { kind: f.cause.kind, key: f.cause.key, title: f.cause.title, fix: f.cause.fix, proof: proof(f.cause.proof) } })),
  }, null, 1);
}
