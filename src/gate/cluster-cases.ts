// Judging one cluster crash state by itself (replay's way; the gate recovers a recording's states in
// the parallel slots of src/harness/cluster/cluster-pool.ts), and recovering a stored cluster image.
// A failure comes back with what its artifact needs: the runs judged, the trace, the stderr.
import { mkdtemp, rm } from 'node:fs/promises';
import path from 'node:path';
import type { CrashStateId, Mark } from '../../fusefs/crash-states.js';
import { nodeImageDir, type TraceEntry } from '../../fusefs/protocol.js';
import { recordCluster, type ClusterRecording } from '../harness/cluster/cluster-pool.js';
import { clusterSpec, type ClusterInput } from '../harness/cluster/cluster-run.js';
import type { DaemonHandle } from '../harness/daemon-process.js';
import { runDriverProcess, type DriverTimeouts } from '../harness/driver-process.js';
import { truncateAtCut } from '../harness/exhaustive/judge-states.js';
import { scratchRoot } from '../harness/exhaustive/recovery-pool.js';
import { judge, type RunRecord, type Violation } from '../harness/oracle.js';
import type { Target } from '../harness/target.js';

// Recording lives with the pool its states go to (src/harness/cluster/cluster-pool.ts); re-exported for replay.
export { recordCluster, type ClusterRecording };

/** A judged crash state or live case: its verdict, and what an artifact of it holds. */
export interface ClusterJudged {
  violations: Violation[];
  /** The runs the oracle judged: the workload (as of the cut) and the drain. */
  runs: RunRecord[];
  /** Every node's requests of the workload run, in their one order, and where the cut froze (null: it did not land). */
  trace: TraceEntry[];
  frozenAt: number | null;
  marks?: Mark[];
  stderr: string[];
}

/**
 * Judges crash state `id` of the recording: its nodes' images written off the mount (cut nodes
 * their durable image, the others their live one), a drain run natively on them, the oracle on the
 * workload's confirmations as of the cut plus that drain. The daemon must still hold the recording.
 */
export async function judgeClusterState(daemon: DaemonHandle, target: Target, rec: ClusterRecording, id: CrashStateId, timeouts: DriverTimeouts): Promise<ClusterJudged> {
  const slot = await mkdtemp(path.join(scratchRoot(), 'powercut-cluster-state-'));
  try {
    await daemon.client.stateImage(id, slot, true);
    const r = await recoverClusterImage(target, rec.input, slot, daemon.mountpoints.length, truncateAtCut(rec.recorded, id.afterOp), timeouts);
    const { trace, marks } = rec.recorded;
    return { ...r, trace, marks, frozenAt: id.afterOp + 1 <= trace.length ? id.afterOp + 1 : null, stderr: [rec.recorded.run.stderr, r.drainStderr] };
  } finally {
    await rm(slot, { recursive: true, force: true });
  }
}

/**
 * Recovers the cluster image in `imageDir` (node0, node1, ...) natively: a drain run on it, judged
 * with the workload run `workload` (its confirmations as of the cut). What replay also runs on an
 * artifact's stored image.
 */
export async function recoverClusterImage(target: Target, input: ClusterInput, imageDir: string, nodes: number, workload: RunRecord, timeouts: DriverTimeouts): Promise<{ violations: Violation[]; runs: RunRecord[]; drainStderr: string }> {
  const dirs = Array.from({ length: nodes }, (_, k) => path.join(imageDir, nodeImageDir(k)));
  const drain = await runDriverProcess(null, target.driver, clusterSpec(dirs, input, 'drain', 1), timeouts);
  const runs = [workload, drain.record];
  return { violations: judge({ target: target.name, faultsInjected: false, runs }), runs, drainStderr: drain.stderr };
}
