// What the one gate loop (gate.ts) asks of the cases it runs: a case source is the suites of one
// disk (single-disk-source.ts) or the cut kinds of a cluster (cluster-source.ts). The loop owns the
// budget and its phases, the daemon, the distinct failures, and the report (floor, verdict, JUnit,
// summary); a source owns its rows, decides its next unit of work (a scenario, a suite's input, a
// cluster workload) from its budget (the time left, or the work left) and what its
// floor still owes, and says its figures for the report.
import type { TempDaemon } from '../harness/daemon-process.js';
import type { Target } from '../harness/target.js';
import type { GateRow } from '../report/gate-results.js';
import type { Budget, WorkBudget } from './budget.js';
import type { ClusterCoverage } from './cluster-coverage.js';
import type { DaemonFixture } from './daemon-fixture.js';
import type { FailureRegistry } from './failure-registry.js';
import type { FloorRequirement } from './floor.js';
import type { GateOptions } from './gate-report.js';
import type { Phases } from './phases.js';
import type { GateMode } from './suites.js';

/** What the loop hands a source: the run's options and the parts it owns. */
export interface GateContext {
  readonly o: GateOptions;
  readonly target: Target;
  readonly budget: Budget;
  readonly phases: Phases;
  /** The daemon in use; a source's units run on `daemons.current` and restart it after a failure of the tool. */
  readonly daemons: DaemonFixture;
  /** The run's distinct failures, whatever source found them. */
  readonly failures: FailureRegistry;
  /** A line of the progress output. */
  log(line: string): void;
  /** What the progress line says the gate is doing now. */
  doing(words: string): void;
}

/** One unit of work: it runs to its end (its own steps bounded by the budget) before the loop asks for the next. */
export type GateUnit = () => Promise<void>;

export interface CaseSource {
  /** What the progress line counts its cases as: "crash states", "power cuts", "cluster cuts". */
  readonly unit: string;
  /** The summary's words for its rows (a cluster's coverage, when given, replaces them). */
  readonly mode: GateMode;
  /** Starts the daemon its cases run on, when the options give no other. */
  startDaemon(): Promise<TempDaemon>;
  /** Called before a daemon is replaced or stopped (what runs on its mounts stops first). */
  beforeDaemonStop(): Promise<void>;
  /** The failure of the tool that ends the run instead of a restart (Infinity: none does; a source may give up a row sooner). */
  readonly maxToolFailures: number;
  /** Its rows so far, in the summary's order. */
  rows(): readonly GateRow[];
  /** What a row must reach for a pass (floor.ts). */
  floorOf(row: GateRow): readonly FloorRequirement[];
  /**
   * Its next unit of work, or undefined when it has none for the budget left: under a time budget,
   * past judging's share it still gives what its floor owes (a suite, or a cut kind, with no case
   * yet), then no more; under a work budget, the inputs it asks, then no more.
   */
  next(): GateUnit | undefined;
  /** Stops what it started besides the daemon (every path out of the run, before the daemon stops). */
  stop(): Promise<void>;
  /** Inputs that were mutations of a steering corpus entry, of all inputs (a cluster: none, of its recordings). */
  steered(): { inputs: number; of: number };
  /** A cluster's coverage per cut kind and per node, for the summary and the report. */
  clusterCoverage(): ClusterCoverage | undefined;
  /**
   * Its work so far: inputs (a cluster: workloads) started; how many of them were recorded with
   * concurrent steps (their interleaving is a sample); the work budget that runs the same inputs
   * again on any machine; and, under a work budget, how many inputs it asks (for the progress line).
   */
  work(): { inputs: number; interleaved: number; repeat: WorkBudget; of?: number };
  /** One disk: each suite's inputs and the judging time they used (its share, for the summary). */
  judgingShares?(): { name: string; inputs: number; usedMs: number }[];
}
