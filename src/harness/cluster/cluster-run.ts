// Crash cases of a cluster: one daemon, one mount per node, one driver that runs a server per node.
// Live cuts: the power goes on every node at the crash point (coordinated), or on some nodes while
// the others run on; the cut nodes are restarted on their crashed disks and the workload goes on.
// Offline states: every coordinated and mixed crash state of one recorded run, each recovered
// natively from its images. The oracle judges the cluster as one queue. Every wait is bounded.
import { mkdtemp, rm } from 'node:fs/promises';
import path from 'node:path';
import { DEFAULT_STATE_CAPS, type CrashStateId } from '../../../fusefs/crash-states.js';
import { nodeImageDir, type CrashPoint, type CrashPolicy, type TraceEntry } from '../../../fusefs/protocol.js';
import { markDir, specFor, type CrashCase } from '../crash-run.js';
import type { DaemonHandle } from '../daemon-process.js';
import { mergeTimeouts, type DriverTimeouts } from '../driver-process.js';
import type { DriverSpec } from '../driver-spec.js';
import { truncateAtCut, type Recorded } from '../exhaustive/judge-states.js';
import { scratchRoot } from '../exhaustive/recovery-pool.js';
import { judge, type RunRecord, type Violation } from '../oracle.js';
import type { Target } from '../target.js';
import { runClusterDriver } from './cluster-driver.js';

/** Whose power a live cut takes: every node's (a rack losing power), or these nodes' while the others run on. */
export type NodesCut = 'all' | readonly number[];

export type ClusterInput = Pick<CrashCase, 'workload' | 'settings' | 'variant'>;

export interface ClusterCase extends ClusterInput {
  /** Where the power goes, in the one order of every node's requests; absent: no cut (an uncut run and a drain). */
  cut?: CrashPoint;
  nodesCut: NodesCut;
  policy: CrashPolicy;
  seed: number;
}

export interface ClusterCaseResult {
  case: ClusterCase;
  runs: RunRecord[];
  violations: Violation[];
  verdict: 'pass' | 'fail';
  /** The request the cut froze at, or null if the run ended first. */
  frozenAt: number | null;
  /** Every node's requests of the workload run, in their one order. */
  trace: TraceEntry[];
  stderr: string[];
}

/** The spec of run `runIndex` for a cluster whose nodes keep their data in `dirs` (node 0 first). */
export function clusterSpec(dirs: readonly string[], c: ClusterInput, mode: DriverSpec['mode'], runIndex: number): DriverSpec {
  return { ...specFor(dirs[0], c, mode, runIndex), nodes: dirs.map((dir, node) => ({ node, dir })) };
}

/** One live cluster case on a running cluster daemon (reset first), judged as one queue. */
export async function runClusterCase(daemon: DaemonHandle, target: Target, c: ClusterCase, partial?: Partial<DriverTimeouts>): Promise<ClusterCaseResult> {
  const timeouts = mergeTimeouts(partial);
  const client = daemon.client;
  const dirs = daemon.mountpoints;
  if (dirs.length < 2) throw new Error(`a cluster case needs a daemon serving two nodes or more, got ${dirs.length}`);
  if (c.nodesCut !== 'all') for (const k of c.nodesCut) if (k >= dirs.length) throw new Error(`nodesCut names node ${k}, but the cluster has nodes 0..${dirs.length - 1}`);
  await client.reset();
  if (c.cut) await client.arm(c.cut);
  let trace: TraceEntry[] = [];
  const work = await runClusterDriver(daemon, target.driver, clusterSpec(dirs, c, 'workload', 0), timeouts, c.cut ? async (control) => {
    if (c.nodesCut === 'all') {
      trace = await client.trace();
      control.killAll();
      await client.crash(c.policy, c.seed);
      return;
    }
    const cut = [...c.nodesCut];
    control.killNodes(cut);
    await client.crash(c.policy, c.seed, cut);
    await control.reap(cut);
    for (const k of cut) await control.restart(k);
  } : undefined);
  if (c.nodesCut !== 'all' || !c.cut || work.frozenAt === null) trace = await client.trace();
  const drain = await runClusterDriver(daemon, target.driver, clusterSpec(dirs, c, 'drain', 1), timeouts);
  const runs = [work.record, drain.record];
  const violations = judge({ target: target.name, faultsInjected: false, runs });
  return { case: c, runs, violations, verdict: violations.length > 0 ? 'fail' : 'pass', frozenAt: work.frozenAt, trace, stderr: [work.stderr, drain.stderr] };
}

export interface ClusterStatesResult {
  /** Persistence intervals of the merged order. */
  intervals: number;
  /** States listed (coordinated first, then mixed), and how many the cap left out. */
  states: number;
  capped: number;
  /** States recovered and judged, by kind. */
  judged: { coordinated: number; mixed: number };
  failures: { state: CrashStateId; violations: Violation[] }[];
  /** Every node's requests of the recorded run, in their one order. */
  trace: TraceEntry[];
}

export interface ClusterStatesOptions {
  /** States enumerated (coordinated first, then mixed, one subset of nodes after another). */
  maxStates: number;
  /** Of those, at most this many coordinated and this many mixed states are recovered, spread evenly over the run. */
  maxStatesPerKind?: number;
  /** Stop at the first failing state (a known-bad variant's proof). */
  stopAtFirstFailure?: boolean;
  timeouts?: Partial<DriverTimeouts>;
}

/** At most `n` of `items`, spread evenly from the first to the last. */
function spread<T>(items: readonly T[], n: number): T[] {
  if (items.length <= n) return [...items];
  return Array.from({ length: n }, (_, i) => items[Math.round((i * (items.length - 1)) / Math.max(1, n - 1))]);
}

/**
 * The coordinated and mixed crash states of one recorded run of `input` (lose-unsynced), each
 * recovered natively: its nodes' images written off the mount, the drain run on them, the oracle on
 * the workload's confirmations as of the cut plus that drain.
 */
export async function runClusterStates(daemon: DaemonHandle, target: Target, input: ClusterInput, options: ClusterStatesOptions): Promise<ClusterStatesResult> {
  const timeouts = mergeTimeouts(options.timeouts);
  const client = daemon.client;
  await client.reset(true);
  const run = await runClusterDriver(daemon, target.driver, { ...clusterSpec(daemon.mountpoints, input, 'workload', 0), mark: markDir(daemon) }, timeouts);
  const { trace, marks } = await client.traceWithMarks();
  const recorded: Recorded = { run, trace, marks };
  const answer = await client.states(['lose-unsynced'], { ...DEFAULT_STATE_CAPS, maxStates: options.maxStates });
  const result: ClusterStatesResult = { intervals: answer.intervals, states: answer.states.length, capped: answer.capped.states, judged: { coordinated: 0, mixed: 0 }, failures: [], trace };
  const slot = await mkdtemp(path.join(scratchRoot(), 'powercut-cluster-state-'));
  const perKind = options.maxStatesPerKind ?? Infinity;
  const chosen = [
    ...spread(answer.states.filter((s) => s.id.nodes === undefined), perKind),
    ...spread(answer.states.filter((s) => s.id.nodes !== undefined), perKind),
  ];
  try {
    for (const s of chosen) {
      await client.stateImage(s.id, slot, true);
      const dirs = daemon.mountpoints.map((_, k) => path.join(slot, nodeImageDir(k)));
      const drain = await runClusterDriver(null, target.driver, clusterSpec(dirs, input, 'drain', 1), timeouts);
      const violations = judge({ target: target.name, faultsInjected: false, runs: [truncateAtCut(recorded, s.id.afterOp), drain.record] });
      result.judged[s.id.nodes === undefined ? 'coordinated' : 'mixed']++;
      if (violations.length > 0) {
        result.failures.push({ state: s.id, violations });
        if (options.stopAtFirstFailure) break;
      }
    }
  } finally {
    await rm(slot, { recursive: true, force: true });
  }
  return result;
}
