// One cluster gate run's shared state: its options read once, its rows and their floors, the
// cluster's coverage, the seeded stream its draws come from, the causes proven so far, the pool of
// state slots, and whether the run has stopped. The stages read and update it: a workload
// (workload.ts) is recorded, its crash states judged (judge-recording.ts), their causes searched
// (causes.ts), its failures grouped and kept (failures.ts) and shrunk (shrink.ts), then it is cut
// live (live-cut.ts); cluster-source.ts hands the workloads to the gate loop.
import type fc from 'fast-check';
import type { StatePolicy } from '../../../fusefs/crash-states.js';
import { crashInputArb, type CrashInput, type CrashInputOptions } from '../../../properties/crash-property.js';
import { DEFAULT_NODES_CUT, KIND_ROW, kindsAsked, LIVE_CUT_KINDS, type CutKind, type NodesCutChoice } from '../../faults/cut-kinds.js';
import { DEFAULT_SEARCH_BOUND, type SearchBound } from '../../harness/cause/cause.js';
import { KnownCauses } from '../../harness/cause/known-causes.js';
import type { ExplainLimits } from '../../harness/cluster/cluster-cause.js';
import { CLUSTER_STATE_SLOTS, ClusterStatePool } from '../../harness/cluster/cluster-pool.js';
import type { ClusterInput } from '../../harness/cluster/cluster-run.js';
import type { DaemonHandle } from '../../harness/daemon-process.js';
import { mergeTimeouts, type DriverTimeouts } from '../../harness/driver-process.js';
import { EXPLAIN_BOUNDS } from '../../harness/exhaustive/explain.js';
import type { TargetRef, TargetSettings } from '../../harness/target.js';
import { newRow, type GateRow } from '../../report/gate-results.js';
import type { GateContext } from '../case-source.js';
import { recordCluster, type ClusterRecording } from '../cluster-cases.js';
import { emptyClusterCoverage, kindFloor, kindShareFloor, type ClusterCoverage } from '../cluster-coverage.js';
import { seededRandom } from '../cluster-kinds.js';
import { statesUnder, type FloorRequirement } from '../floor.js';
import { Steering } from '../steering.js';
import { roundSeed } from '../suites.js';

/** The crash policies of a cluster's states unless --policy says otherwise: lose-unsynced (torn and journaled multiply the states by each cut node's outcomes). */
export const DEFAULT_CLUSTER_POLICIES: readonly StatePolicy[] = ['lose-unsynced'];
/** Live cuts of each kind per workload, unless --live-cuts says otherwise. */
export const DEFAULT_LIVE_CUTS = 1;
/** The kinds cut live: every kind. */
export const LIVE_KINDS: readonly CutKind[] = LIVE_CUT_KINDS;
/**
 * Under a work budget a fix's proof judges at most this many states' counterparts (the state it was
 * found on, one that passed, then failing and passed ones in turn): each is a cluster's recovery.
 */
const MAX_PROOF_STATES = 24;
/** A recording lists at most this many crash states unless --caps says otherwise. */
const DEFAULT_MAX_STATES = 1_000;

export class ClusterRun {
  readonly o: GateContext['o'];
  readonly target: GateContext['target'];
  readonly budget: GateContext['budget'];
  readonly phases: GateContext['phases'];
  readonly daemons: GateContext['daemons'];
  /** The gate's distinct failures, whatever source found them. */
  readonly failures: GateContext['failures'];
  /** --nodes-cut, and the kinds it asks of a cluster of this many nodes (the first holds the run's own errors). */
  readonly choice: NodesCutChoice;
  readonly asked: readonly CutKind[];
  /** Live cuts of each kind per workload. */
  readonly liveCuts: number;
  readonly policies: readonly StatePolicy[];
  readonly timeouts: DriverTimeouts;
  /** The one seeded stream the states' spread order and the live cuts' draws take turns on. */
  readonly random: () => number;
  /** Causes proven so far: each later recording tries them first (one proof each, before any search). */
  readonly known: KnownCauses;
  /** How each case names its target: an external driver by its command (with its node count), a built-in one by name. */
  readonly ref: TargetRef;
  /** What each workload is drawn with (the forced settings and variant). */
  readonly inputOptions: CrashInputOptions;
  readonly arb: fc.Arbitrary<CrashInput>;
  /**
   * As on one disk: most workloads mutate one whose recording reached a feature seen least (one
   * "suite": the cut kinds share each recording).
   */
  readonly steering: Steering;
  /** A row per cut kind asked, in the summary's order. */
  readonly rows: Map<CutKind, GateRow>;
  readonly floors: Map<GateRow, readonly FloorRequirement[]>;
  readonly cov: ClusterCoverage;
  /**
   * Under a work budget a cause search is bounded by its probes, a recording's by its searches, a
   * proof by the states it judges, never by time.
   */
  readonly searchBound: SearchBound;
  readonly limits: ExplainLimits;
  readonly pool: ClusterStatePool;
  /** Nothing new starts: --stop-on-first's first failure, or the tool failing MAX_ERRORS times. */
  stopped = false;
  /** Workloads recorded. */
  recordings = 0;
  /** The longest recording of a workload so far: what the next one is expected to take before its first state. */
  longestRecordMs = 0;

  constructor(readonly ctx: GateContext, readonly nodes: number) {
    const { o, target } = ctx;
    this.o = o;
    this.target = target;
    this.budget = ctx.budget;
    this.phases = ctx.phases;
    this.daemons = ctx.daemons;
    this.failures = ctx.failures;
    this.choice = o.nodesCut ?? DEFAULT_NODES_CUT;
    this.asked = kindsAsked(this.choice, nodes);
    if (this.asked.length === 0) throw new Error(`a cluster of ${nodes} nodes has no cut of kind ${this.choice}`);
    this.liveCuts = o.liveCuts ?? DEFAULT_LIVE_CUTS;
    this.policies = o.policies ?? DEFAULT_CLUSTER_POLICIES;
    const variantSettings: TargetSettings = o.variant !== undefined ? target.knownBad[o.variant].settings : {};
    const forced = { ...variantSettings, ...o.settings };
    this.timeouts = mergeTimeouts();
    this.random = seededRandom(roundSeed(o.seed, -2, 0));
    this.known = new KnownCauses();
    this.ref = o.driver ? { driver: o.driver } : { target: target.name };
    this.inputOptions = { ...this.ref, kind: 'exhaustive' as const, settings: forced, ...(o.variant !== undefined ? { variant: o.variant } : {}) };
    this.arb = crashInputArb(this.inputOptions);
    this.steering = o.steering ?? new Steering(roundSeed(o.seed, -1, -1));
    this.rows = new Map(this.asked.map((k) => [k, newRow(KIND_ROW[k], 'suite')]));
    // Each kind judges a case and a share of the lose-unsynced states it listed; with several policies,
    // a state under each (a state of the first is judged before any of the next).
    this.floors = new Map(this.asked.map((k) => [this.row(k), [
      kindFloor(k, this.liveCuts > 0 && LIVE_KINDS.includes(k)), kindShareFloor(), ...(this.policies.length > 1 ? this.policies.map(statesUnder) : []),
    ]]));
    this.cov = emptyClusterCoverage(nodes, this.choice, this.asked);
    this.searchBound = this.budget.untimed ? { maxProbes: DEFAULT_SEARCH_BOUND.maxProbes } : DEFAULT_SEARCH_BOUND;
    this.limits = this.budget.untimed ? { maxSearches: EXPLAIN_BOUNDS.maxSearches, maxProofStates: MAX_PROOF_STATES } : {};
    this.pool = new ClusterStatePool(target, nodes, o.slots ?? target.clusterStateSlots ?? CLUSTER_STATE_SLOTS, this.timeouts);
  }

  /** The row of a cut kind asked. */
  row(kind: CutKind): GateRow {
    const row = this.rows.get(kind);
    if (!row) throw new Error(`invariant: a cluster gate has a row per cut kind asked, and none for ${kind}`);
    return row;
  }

  /** The asked kinds cut live. */
  liveKinds(): CutKind[] {
    return this.asked.filter((k) => LIVE_KINDS.includes(k));
  }

  /** A kind with no judged case yet: the floor still asks one. */
  owed(kind: CutKind): boolean {
    return this.row(kind).cases === 0;
  }

  /** With several policies the floor also asks a state under each: owed too, so a slow machine cannot fall below it. */
  owedUnder(kind: CutKind, p: StatePolicy): boolean {
    return this.policies.length > 1 && (this.row(kind).coverage.policies[p]?.states ?? 0) === 0;
  }

  owesAny(kind: CutKind): boolean {
    return this.owed(kind) || this.policies.some((p) => this.owedUnder(kind, p));
  }

  /** A workload recorded on `daemon` with its crash states listed under the run's policies and caps. */
  record(daemon: DaemonHandle, input: ClusterInput): Promise<ClusterRecording> {
    return recordCluster(daemon, this.target, input, this.o.caps?.maxStates ?? DEFAULT_MAX_STATES, this.timeouts, this.policies);
  }

  /** A failure of the tool: the row says so, and a fresh daemon serves what follows (none, or the MAX_ERRORS-th failure: the run ends). */
  async toolFailed(row: GateRow, what: string, err: unknown): Promise<void> {
    row.errors.push(`${what} failed (the tool, not the queue): ${err instanceof Error ? err.message : String(err)}`);
    this.ctx.log(`${row.name}: ERROR ${row.errors[row.errors.length - 1].split('\n')[0]}`);
    if (!(await this.daemons.restart(row))) this.stopped = true;
  }
}
