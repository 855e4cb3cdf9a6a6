// A target: a queue put under the power cut. The harness, oracle, suites, gate, scenarios and replay
// work on this interface only; what is specific to one queue lives with its target.
import type fc from 'fast-check';
import type { TraceEntry } from '../../fusefs/protocol.js';
import type { Cause, CauseKind } from './cause/cause.js';
import type { Contract } from './contract.js';
import type { CheckName } from './oracle.js';
import type { DriverCommand } from './driver-process.js';
import { hasConcurrentSteps, writesAtOnce, type Workload } from './workload.js';

export type TargetSettings = Record<string, unknown>;

/** How a case names an external driver: the command as typed, and the folder it runs in. */
export interface ExternalDriver {
  command: string;
  cwd: string;
  /** How many nodes the driver runs (gate --nodes): 2 or more makes it a cluster, one mount per node; absent: one disk. */
  nodes?: number;
  /** 'host': its processes use the machine's network (--network host); absent: each its own namespace where the machine allows one (driver-network.ts). */
  network?: 'host';
}

/**
 * How a case names its target, as data (case.json): a registered name (absent: the default
 * target), or an external driver's command. The CLI and the gate resolve it to a Target; the
 * harness is handed the Target and never looks one up.
 */
export interface TargetRef {
  target?: string;
  driver?: ExternalDriver;
}

/** Filters a crash point may carry: the Nth request of a kind and/or touching a path glob. */
export interface CutTarget {
  kind?: TraceEntry['kind'];
  path?: string;
}

/** How a known-bad variant's catch is proven: by which suites (properties/variant-proofs.ts runs each). */
export type VariantProof =
  /** Exhaustive mode finds it within a fixed budget of generated workloads. */
  | 'exhaustive'
  /** Random cuts find it within a fixed budget (drawn as its `needs` says). */
  | 'random'
  /** A scenario exposes it (the scenario names it in `exposes`). */
  | 'scenario';

export interface KnownBadVariant {
  /** One line: the bug it has. */
  summary: string;
  /** Settings under which its bug is reachable (merged under a test's own settings). */
  settings: TargetSettings;
  /**
   * What its bug needs to show, beside a cut: an injected fault (fsync EIO, ENOSPC), or a torn
   * write-back; random suites then draw only such inputs, and exhaustive mode (which injects no
   * fault) cannot show a fault's.
   */
  needs?: 'fault' | 'torn';
  /** The suites that prove it is caught: at least one (a test checks every variant of every target). */
  provenBy: readonly VariantProof[];
  /** The checks its catch may fail (at least one of them must): what its bug does to the queue. */
  trips?: readonly CheckName[];
  /**
   * Why it fails, as the gate may say (cause/cause.ts): the first is the cause its bug is; the
   * others are the same mistake seen from other crash states (a second place it sits, the
   * process-crash state it also breaks) or an alternative fix that cures the same states. Its catch
   * names at least one of them, each on a proof that holds, and no other cause
   * (properties/exhaustive-variants.test.ts); failing states no proven cause explains stay unexplained.
   */
  causes: readonly [ExpectedCause, ...ExpectedCause[]];
  /**
   * false when no step added to the recording removes its failures (its bug is the order of the
   * program's steps, or a design: records confirmed before they are written, a file rewritten in
   * place): its catch may then leave every failing state unexplained. By default a declared cause
   * must be named.
   */
  fixInRecording?: false;
}

/**
 * A cause as a variant declares it: its kind, and a path pattern its key names ('/page.*'); without
 * one, any cause of the kind (a logic error judged on the events delivered names no file).
 */
export interface ExpectedCause {
  kind: CauseKind;
  path?: string;
}

/** Whether a cause found is the one declared: the same kind, and its key names the pattern. */
export function isExpectedCause(c: Pick<Cause, 'kind' | 'key'>, e: ExpectedCause): boolean {
  return c.kind === e.kind && (e.path === undefined || c.key.split(/[ ,]+/).includes(e.path));
}

/** A named slice of the settings space the gate runs as its own suite (e.g. one checkpoint design). */
export interface TargetSuite {
  name: string;
  settings: TargetSettings;
}

export interface Target {
  name: string;
  summary: string;
  /** How to start its driver (docs/driver-protocol.md); the spec goes to stdin. */
  driver: DriverCommand;
  /**
   * What the queue promises with these settings (contract.ts): the contract its driver declares in
   * every hello line, for showing before a run. An external driver's is known only from its hello lines.
   */
  contract?(settings: TargetSettings): Contract;
  /** Throws, naming the setting, when `settings` (a partial set, e.g. --settings) is not valid for this target. */
  checkSettings(settings: TargetSettings): void;
  /**
   * Throws, naming what is missing and the command that installs it, when this machine cannot run
   * the target (a server binary, say). The CLI and the gate call it before mounting anything.
   */
  checkEnvironment?(): void;
  /** The settings space the suites draw from; shrinks towards small, default-ish settings. */
  settingsArb: fc.Arbitrary<TargetSettings>;
  /** Gate suites over parts of the settings space; at least one. */
  suites: TargetSuite[];
  /** A generated workload made valid for the settings (e.g. events no larger than a page). */
  fitWorkload(workload: Workload, settings: TargetSettings): Workload;
  /** Random cuts also aim at these requests (where damage happens), besides anywhere. */
  cutTargets: CutTarget[];
  /** The target's data files, for fsync-EIO faults and read faults (globs). */
  faultPaths: string[];
  /**
   * The target claims to detect damaged data on disk (a flipped bit, a read error) rather than
   * drop or deliver it silently: the gate then runs its read-faults suite by default.
   */
  detectsDamage?: boolean;
  knownBad: Record<string, KnownBadVariant>;
  /**
   * How many nodes (disks, servers) the target runs with these settings: 1 (absent) is a single
   * disk; 2 or more is a cluster, run by src/harness/cluster/ on one mount per node.
   */
  nodeCount?(settings: TargetSettings): number;
  /**
   * A cluster target: its offline crash states recovered at once (absent: CLUSTER_STATE_SLOTS).
   * More pays for a target whose recovery waits on timers (elections) rather than on the CPU.
   */
  clusterStateSlots?: number;
  /**
   * Its driver may have a setup (starting-state.ts: a spec of mode setup, sent once before any
   * workload; a driver with none exits 2). An external driver's may; built-in targets have none.
   */
  asksSetup?: boolean;
  /** Counts of what a workload did, read off its request trace (rolls, purges...), for coverage. */
  workloadEvents(trace: readonly TraceEntry[]): Record<string, number>;
  /**
   * Whether a recording of this workload may interleave its requests differently each time (the
   * program's concurrent steps, its threads, a server's own): its crash states are then a sample of
   * its interleavings, and a gate says so. Absent: when it has a `concurrently` step, or a write of
   * several events at once (a driver may issue those from threads: docs/driver-protocol.md).
   */
  interleaves?(workload: Workload): boolean;
}

/** Whether a recording of `workload` by `target` may interleave anew (Target.interleaves, or its default). */
export function interleaves(target: Pick<Target, 'interleaves'>, workload: Workload): boolean {
  return target.interleaves ? target.interleaves(workload) : hasConcurrentSteps(workload) || writesAtOnce(workload);
}
