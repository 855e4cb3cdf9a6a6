// What a gate run is asked and what it answers, whatever ran it (one disk or a cluster): its
// options, its report, its verdict and exit code. The gate loop (whatever its case source) and merge share these.
import type { StateCaps, StatePolicy } from '../../fusefs/crash-states.js';
import type { NodesCutChoice } from '../faults/cut-kinds.js';
import type { TempDaemon } from '../harness/daemon-process.js';
import type { ExternalDriver } from '../harness/target.js';
import type { DriverNetwork } from '../harness/driver-network.js';
import type { StartingState } from '../harness/starting-state.js';
import type { DistinctFailure, GateRow } from '../report/gate-results.js';
import type { ClusterCoverage } from './cluster-coverage.js';
import type { FloorCheck } from './floor.js';
import type { WorkBudget } from './budget.js';
import type { PhaseUse } from './phases.js';
import type { ProgressOutput } from './progress.js';
import type { Steering } from './steering.js';
import type { GateMode } from './suites.js';

export interface GateOptions {
  /** The time budget; without one, `cases` is the gate's budget (one of the two is given). */
  timeBudgetMs?: number;
  /** A work budget instead of a time budget (budget.ts): the same work, and on one disk the same verdict, on any machine. */
  cases?: WorkBudget;
  seed: number;
  /** States recovered at once (one disk: native recovery slots; a cluster: cluster state slots); default the target's. */
  slots?: number;
  /** Target name (default: the built-in queue). */
  target?: string;
  /** An external driver instead of a registered target. */
  driver?: ExternalDriver;
  mode?: GateMode;
  variant?: string;
  /** Settings forced on every suite input (--settings). */
  settings?: Record<string, unknown>;
  /** Exhaustive mode's caps (defaults: DEFAULT_STATE_CAPS). */
  caps?: Partial<StateCaps>;
  /** The crash policies the suites use (default both lose-unsynced and torn). */
  policies?: StatePolicy[];
  /** Each suite stops at its first failure, unshrunk (a quick local loop); by default the gate explores the whole budget and lists every distinct failure. */
  stopOnFirst?: boolean;
  /** 'steered' (default): most inputs mutate one that reached a rare feature (steering.ts); 'plain': every input fresh. */
  generation?: 'steered' | 'plain';
  /** 'cause' (default): distinct failures are causes (cause search in exhaustive mode); 'signature': check, policy and request at the cut. */
  groupBy?: GroupBy;
  /** The steering to use (the bench reads its figures); default one seeded from `seed`. */
  steering?: Steering;
  /** Failure artifacts go under this folder. */
  artifactRoot: string;
  junitFile?: string;
  out: ProgressOutput;
  /** Starts the filesystem daemon (tests make one that dies); default a fresh temporary mount (one per node for a cluster). */
  startDaemon?: () => Promise<TempDaemon>;
  /** A cluster target: which kinds of cut to check (cluster-kinds.ts; default all-kinds). */
  nodesCut?: NodesCutChoice;
  /** A cluster target: live cuts of each kind per workload (default 1; 0 = offline crash states only). */
  liveCuts?: number;
}

/** Exit codes of the gate: distinct, so CI can tell a finding from a broken tool and from a run that checked too little. */
export const GATE_EXIT = { passed: 0, violation: 1, usage: 2, toolFailed: 3, belowFloor: 4 } as const;
export type GateVerdict = 'passed' | 'violation' | 'tool-failed' | 'below-floor';

export interface GateReport {
  rows: GateRow[];
  /** Inputs that were mutations of a steering corpus entry, of all suite inputs. */
  steered: { inputs: number; of: number };
  /** Every distinct failure, in the order found (empty with stopOnFirst: the rows say it). */
  failures: DistinctFailure[];
  durationMs: number;
  /** Nothing violated, the tool never failed, and the floor was met. */
  passed: boolean;
  violations: number;
  harnessErrors: number;
  /** Each floor requirement of each row, judged (floor.ts). */
  floor: FloorCheck[];
  /** In order of precedence: a violation, then a failure of the tool, then a floor not met. */
  verdict: GateVerdict;
  exitCode: number;
  /** The summary table and failure details, as printed. */
  text: string;
  /** A cluster target's coverage per cut kind and per node (cluster-source.ts). */
  cluster?: ClusterCoverage;
  /** Each phase's share of the budget and the time it used (phases.ts). */
  phases?: PhaseUse[];
  /** The network the driver processes got: a namespace each, or shared and why (driver-network.ts). */
  driverNetwork?: DriverNetwork;
  /** A driver's starting state (its setup run), not tested: its size; null when the driver has none; absent for a built-in target. */
  startingState?: StartingState | null;
  /**
   * The work budget that runs this run's inputs again, each judged in full, on any machine: under a
   * work budget, the one asked; under a time budget, each suite's inputs (a cluster: its workloads).
   */
  repeat: WorkBudget;
  /** Inputs recorded with concurrent steps (their interleaving is a sample: docs/gate.md, "Work budgets"); a cluster: every workload. */
  interleaved: number;
  /** Suite inputs (a cluster: workloads) run. */
  inputs: number;
}

/** The time budget of these options, Infinity under a work budget (budget.ts Budget); an invariant names a run given both or neither. */
export function timeBudgetOf(o: Pick<GateOptions, 'timeBudgetMs' | 'cases'>): number {
  if ((o.timeBudgetMs === undefined) === (o.cases === undefined)) throw new Error(`invariant: a gate has a time budget or a work budget, not ${o.cases ? 'both' : 'neither'}`);
  return o.timeBudgetMs ?? Infinity;
}

export type GroupBy = 'cause' | 'signature';
export const GROUP_BYS: readonly GroupBy[] = ['cause', 'signature'];

/** The verdict of a run: a violation, then a failure of the tool, then a floor not met, in that order of precedence. */
export function verdictOf(totals: { violations: number; errors: number }, floor: readonly FloorCheck[]): GateVerdict {
  return totals.violations > 0 ? 'violation' : totals.errors > 0 ? 'tool-failed' : floor.some((c) => !c.met) ? 'below-floor' : 'passed';
}

export function exitCodeOf(verdict: GateVerdict): number {
  return { passed: GATE_EXIT.passed, violation: GATE_EXIT.violation, 'tool-failed': GATE_EXIT.toolFailed, 'below-floor': GATE_EXIT.belowFloor }[verdict];
}
