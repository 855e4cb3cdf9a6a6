// The causes of a recording's failing crash states (cluster-cause.ts), searched once every state of
// the recording judged here is in (a proof judges them all), within the causes' share of the budget
// (phases.ts, as on one disk).
import type { Cause } from '../../harness/cause/cause.js';
import { explainClusterRun, type JudgedClusterState } from '../../harness/cluster/cluster-cause.js';
import type { ClusterInput } from '../../harness/cluster/cluster-run.js';
import type { DaemonHandle } from '../../harness/daemon-process.js';
import { within } from '../../harness/time-share.js';
import type { GateRow } from '../../report/gate-results.js';
import type { ClusterRecording } from '../cluster-cases.js';
import type { ClusterRun } from './run.js';

/**
 * The causes of `judged` (the states of a recording of `input`, still held by `daemon`), searched
 * until `deadlineMs` with the run's bounds and the causes it proved before (each tried first).
 */
export function explainStates(run: ClusterRun, daemon: DaemonHandle, input: ClusterInput, recorded: ClusterRecording['recorded'], judged: readonly JudgedClusterState[], deadlineMs: number): Promise<Map<JudgedClusterState, Cause>> {
  return explainClusterRun({ daemon, target: run.target, input, recorded, timeouts: run.timeouts }, judged, deadlineMs, run.searchBound, { ...run.limits, known: run.known });
}

/**
 * The causes of a recording's failing states within the causes' share; none when the run groups by
 * signature. A failure of the search leaves the states without a cause (the row says why).
 */
export async function causesOf(run: ClusterRun, rec: ClusterRecording, judged: readonly JudgedClusterState[], daemon: DaemonHandle, row: GateRow): Promise<Map<JudgedClusterState, Cause>> {
  if (run.o.groupBy === 'signature' || !judged.some((j) => j.violations.length > 0)) return new Map();
  try {
    run.ctx.doing(`searching the causes of ${judged.filter((j) => j.violations.length > 0).length} failing crash states`);
    return await within(run.phases.share('causes'), () => explainStates(run, daemon, rec.input, rec.recorded, judged, run.phases.deadlineMs('causes')));
  } catch (err) {
    row.errors.push(`searching the causes of a workload's failing states failed (the failures stand, without their causes): ${err instanceof Error ? err.message : String(err)}`);
    return new Map();
  }
}
