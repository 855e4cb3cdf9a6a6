// Crash cases of a cluster: one daemon, one mount per node, one driver that runs a server per node.
// Live cuts: the power goes on every node at the crash point (coordinated), or on some nodes while
// the others run on; the cut nodes are restarted on their crashed disks and the workload goes on.
// Offline states: every coordinated and mixed crash state of one recorded run, each recovered
// natively from its images. The oracle judges the cluster as one queue. Every wait is bounded.
import path from 'node:path';
import { nodeImageDir, type CrashPoint, type CrashPolicy, type TraceEntry } from '../../../fusefs/protocol.js';
import type { LiveDraw, NodePause } from '../../faults/live-draw.js';
import { specFor } from '../crash-run.js';
import type { CrashCase } from '../crash-case.js';
import type { DaemonHandle } from '../daemon-process.js';
import { mergeTimeouts, runDriverProcess, type DriverTimeouts } from '../driver-process.js';
import type { DriverSpec } from '../driver-spec.js';
import { judge, type RunRecord, type Violation } from '../oracle.js';
import { assertDaemonAlive } from '../harness-error.js';
import type { Target } from '../target.js';
import { MAX_PAUSE_MS } from './node-control.js';

export { drawLiveCase, type LiveDraw, type LiveDrawOptions, type NodePause } from '../../faults/live-draw.js';

/** Whose power a live cut takes: every node's (a rack losing power), or these nodes' while the others run on. */
export type NodesCut = 'all' | readonly number[];

export type ClusterInput = Pick<CrashCase, 'workload' | 'settings' | 'variant'>;

export interface ClusterCase extends ClusterInput {
  /** Where the power goes, in the one order of every node's requests; absent: no cut (an uncut run and a drain). */
  cut?: CrashPoint;
  nodesCut: NodesCut;
  policy: CrashPolicy;
  seed: number;
  /**
   * A node's process group stopped (SIGSTOP) just before request `atOp` of the merged order while
   * the others run on, and resumed (SIGCONT) `durationMs` later; before the cut (whose point must
   * come later), which may take the paused node too.
   */
  pause?: NodePause;
}

export interface ClusterCaseResult {
  case: ClusterCase;
  runs: RunRecord[];
  violations: Violation[];
  verdict: 'pass' | 'fail';
  /** The request the cut froze at, or null if the run ended first. */
  frozenAt: number | null;
  /** The request the pause stopped its node at, or null if there was none or the run ended first. */
  pausedAt: number | null;
  /** Every node's requests of the workload run, in their one order. */
  trace: TraceEntry[];
  stderr: string[];
}

/** The spec of run `runIndex` for a cluster whose nodes keep their data in `dirs` (node 0 first). */
export function clusterSpec(dirs: readonly string[], c: ClusterInput, mode: DriverSpec['mode'], runIndex: number): DriverSpec {
  return { ...specFor(dirs[0], c, mode, runIndex), nodes: dirs.map((dir, node) => ({ node, dir })) };
}

/** The spec of a drain on copies of the nodes' disks off the mount (`dirs`): offline, so no node of it is cut. */
export function offlineDrainSpec(dirs: readonly string[], c: ClusterInput): DriverSpec {
  return { ...clusterSpec(dirs, c, 'drain', 1), offline: true };
}

/** The live case a draw describes (drawLiveCase), on `input`, lose-unsynced, with the draw's seed. */
export function liveClusterCase(input: ClusterInput, draw: LiveDraw, seed: number): ClusterCase {
  return { ...input, nodesCut: [...draw.nodesCut], cut: draw.cut, ...(draw.pause ? { pause: draw.pause } : {}), policy: 'lose-unsynced', seed };
}

/** A pause names a node of the cluster, lasts 1..MAX_PAUSE_MS, and comes before the cut (a cut point counting every request must be later). */
function checkPause(p: NodePause, cut: CrashPoint | undefined, nodes: number): void {
  if (!Number.isInteger(p.node) || p.node < 0 || p.node >= nodes) throw new Error(`pause.node is ${p.node}, but the cluster has nodes 0..${nodes - 1}`);
  if (!Number.isInteger(p.atOp) || p.atOp < 1) throw new Error(`pause.atOp must be a request number >= 1, got ${p.atOp}`);
  if (!(p.durationMs > 0 && p.durationMs <= MAX_PAUSE_MS)) throw new Error(`pause.durationMs must be 1..${MAX_PAUSE_MS} ms, got ${p.durationMs}`);
  const countsEveryRequest = cut && cut.kind === undefined && cut.path === undefined && cut.node === undefined;
  if (countsEveryRequest && cut.atOp <= p.atOp) throw new Error(`the pause (at request ${p.atOp}) must come before the cut (at request ${cut.atOp})`);
}

/**
 * One live cluster case on a running cluster daemon (reset first), judged as one queue. With
 * `imagesDir`, each cut node's durable disk at the cut is written to imagesDir/node<k> (after the
 * crash, before its restart): what an artifact of a live cut keeps, since the run goes on past it.
 */
export async function runClusterCase(daemon: DaemonHandle, target: Target, c: ClusterCase, partial?: Partial<DriverTimeouts>, imagesDir?: string): Promise<ClusterCaseResult> {
  const timeouts = mergeTimeouts(partial);
  const client = daemon.client;
  const dirs = daemon.mountpoints;
  if (dirs.length < 2) throw new Error(`a cluster case needs a daemon serving two nodes or more, got ${dirs.length}`);
  if (c.nodesCut !== 'all') for (const k of c.nodesCut) if (k >= dirs.length) throw new Error(`nodesCut names node ${k}, but the cluster has nodes 0..${dirs.length - 1}`);
  if (c.pause) checkPause(c.pause, c.cut, dirs.length);
  await client.reset();
  const first = c.pause ? { atOp: c.pause.atOp, timing: 'before' as const } : c.cut;
  if (first) await client.arm(first);
  let trace: TraceEntry[] = [];
  let pausedAt: number | null = null;
  let cutAt: number | null = null;
  const work = await runDriverProcess(daemon, target.driver, clusterSpec(dirs, c, 'workload', 0), timeouts, first ? async (control, frozenAt) => {
    if (c.pause && pausedAt === null) {
      // The pause: its node stops at this request, every node's held requests run on (its own are
      // answered while it is stopped), and the cut, if any, is armed in the same step.
      pausedAt = frozenAt;
      // SIGSTOP goes first (pause's synchronous part); the node is seen stopped only after the
      // release, since a process in a held request stops only once it is answered.
      await Promise.all([control.pause(c.pause.node, c.pause.durationMs), client.release(c.cut)]);
      return c.cut ? 'again' : undefined;
    }
    cutAt = frozenAt;
    if (c.nodesCut === 'all') {
      trace = await client.trace();
      control.killAll();
      await client.crash(c.policy, c.seed);
      if (imagesDir) await client.image(imagesDir, 'durable');
      return;
    }
    const cut = [...c.nodesCut];
    control.killNodes(cut);
    await client.crash(c.policy, c.seed, cut);
    await control.reap(cut);
    if (imagesDir) for (const k of cut) await client.image(path.join(imagesDir, nodeImageDir(k)), 'durable', k);
    for (const k of cut) await control.restart(k);
  } : undefined);
  if (c.nodesCut !== 'all' || !c.cut || cutAt === null) trace = await client.trace();
  // A point the run never reached stays armed: the drain must not freeze at it.
  if (first && cutAt === null) await client.disarm();
  const drain = await runDriverProcess(daemon, target.driver, clusterSpec(dirs, c, 'drain', 1), timeouts);
  await assertDaemonAlive(daemon, 'the live case\'s drain');
  const runs = [work.record, drain.record];
  const violations = judge({ target: target.name, faultsInjected: false, runs });
  return { case: c, runs, violations, verdict: violations.length > 0 ? 'fail' : 'pass', frozenAt: cutAt, pausedAt, trace, stderr: [work.stderr, drain.stderr] };
}

/**
 * Recovers the cluster image in `imageDir` (node0, node1, ...) natively: a drain run on it, judged
 * with the workload run `workload` (its confirmations as of the cut). What replay also runs on an
 * artifact's stored image.
 */
export async function recoverClusterImage(target: Target, input: ClusterInput, imageDir: string, nodes: number, workload: RunRecord, timeouts: DriverTimeouts): Promise<{ violations: Violation[]; runs: RunRecord[]; drainStderr: string }> {
  const dirs = Array.from({ length: nodes }, (_, k) => path.join(imageDir, nodeImageDir(k)));
  const drain = await runDriverProcess(null, target.driver, offlineDrainSpec(dirs, input), timeouts);
  const runs = [workload, drain.record];
  return { violations: judge({ target: target.name, faultsInjected: false, runs }), runs, drainStderr: drain.stderr };
}
