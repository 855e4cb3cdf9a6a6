// `powercut explain --again` on a cluster's crash state: its artifact keeps the state's images, not
// the daemon's recording of the run, so the case is recorded again on fresh mounts. Several nodes
// interleave anew on every run, so the new recording is a sample: its states of the artifact's cut
// kind are judged, and the cause is searched on those that fail the artifact's checks, the one cut
// nearest the artifact's request first. What it names is a cause of that run, said to be one.
import type { CrashStateId, CrashStateInfo } from '../../../fusefs/crash-states.js';
import type { Cause, SearchBound } from '../cause/cause.js';
import { startTempDaemon } from '../daemon-process.js';
import { useStoredStartingState } from '../starting-state.js';
import type { DriverTimeouts } from '../driver-process.js';
import { violatedChecks, type Violation } from '../oracle.js';
import type { Target } from '../target.js';
import { explainClusterRun, type JudgedClusterState } from './cluster-cause.js';
import { CLUSTER_STATE_SLOTS, ClusterStatePool, recordCluster } from './cluster-pool.js';
import type { ClusterInput } from './cluster-run.js';

export interface ClusterStateAgain {
  input: ClusterInput;
  nodes: number;
  /** The artifact's state: its policy, cut nodes and request (of the run it was found on). */
  state: CrashStateId;
  violations: readonly Violation[];
  maxStates: number;
  /** The artifact's folder: its starting state (images/starting-state), if it kept one, is recorded from. */
  artifactDir?: string;
}

export interface ExplainedAgain {
  /** The new recording's state whose cause is given, or none that failed the same checks. */
  state?: CrashStateId;
  cause?: Cause;
  /** States of the artifact's cut kind judged on the new recording, and how many failed its checks. */
  judged: number;
  failingAlike: number;
}

const sameNodes = (a: CrashStateId, b: CrashStateId) => JSON.stringify(a.nodes ?? null) === JSON.stringify(b.nodes ?? null);

/** Records the artifact's case again on a fresh cluster and searches the cause of its states that fail alike, each search within `bound`, by `deadlineMs` (half of it for judging). */
export async function explainClusterStateAgain(target: Target, a: ClusterStateAgain, timeouts: DriverTimeouts, deadlineMs: number, bound: SearchBound): Promise<ExplainedAgain> {
  const fixture = await startTempDaemon('explain-cluster', a.nodes);
  const pool = new ClusterStatePool(target, a.nodes, target.clusterStateSlots ?? CLUSTER_STATE_SLOTS, timeouts);
  try {
    if (a.artifactDir) await useStoredStartingState(fixture.daemon, a.artifactDir);
    const rec = await recordCluster(fixture.daemon, target, a.input, a.maxStates, timeouts, [a.state.policy]);
    // The artifact's kind of cut (the same nodes, or every node), nearest its request first.
    const away = (s: CrashStateInfo) => Math.abs(s.id.afterOp - a.state.afterOp);
    const states = rec.states.filter((s) => sameNodes(s.id, a.state)).sort((x, y) => away(x) - away(y));
    const judgeUntilMs = Date.now() + (deadlineMs - Date.now()) / 2;
    const judged: JudgedClusterState[] = [];
    let next = 0;
    await pool.judge(fixture.daemon, rec, () => (Date.now() < judgeUntilMs ? states[next++] : undefined), (v) => {
      judged.push({ state: v.state, violations: v.violations, drain: v.runs[v.runs.length - 1] });
    }, deadlineMs);
    const want = violatedChecks(a.violations).join();
    const alike = judged.filter((j) => j.violations.length > 0 && violatedChecks(j.violations).join() === want).sort((x, y) => away(x.state) - away(y.state));
    if (alike.length === 0) return { judged: judged.length, failingAlike: 0 };
    // Every failing state is searched with the others (a proof judges them all); the nearest alike's cause is the answer.
    const causes = await explainClusterRun({ daemon: fixture.daemon, target, input: a.input, recorded: rec.recorded, timeouts }, judged, deadlineMs, bound);
    return { state: alike[0].state.id, cause: causes.get(alike[0]), judged: judged.length, failingAlike: alike.length };
  } finally {
    await pool.stop();
    await fixture.stop();
  }
}
