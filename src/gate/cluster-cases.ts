// Judging one cluster crash state by itself (replay's way; the gate recovers a recording's states in
// the parallel slots of src/harness/cluster/cluster-pool.ts), with what its artifact needs: the runs
// judged, the trace, the stderr.
import type { CrashStateId, Mark } from '../../fusefs/crash-states.js';
import type { TraceEntry } from '../../fusefs/protocol.js';
import { recordCluster, type ClusterRecording } from '../harness/cluster/cluster-pool.js';
import { recoverClusterState } from '../harness/cluster/cluster-cause.js';
import type { DaemonHandle } from '../harness/daemon-process.js';
import type { DriverTimeouts } from '../harness/driver-process.js';
import type { RunRecord, Violation } from '../harness/oracle.js';
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
  const r = await recoverClusterState({ daemon, target, input: rec.input, recorded: rec.recorded, timeouts }, id);
  const { trace, marks } = rec.recorded;
  return { violations: r.violations, runs: r.runs, trace, marks, frozenAt: id.afterOp + 1 <= trace.length ? id.afterOp + 1 : null, stderr: [rec.recorded.run.stderr, r.drainStderr] };
}
