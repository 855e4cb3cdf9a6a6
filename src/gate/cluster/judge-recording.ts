// A recording's crash states judged in the pool's slots (the kinds in turn; under a time budget for
// its slice, under a work budget all of them), then counted, their causes searched and their
// failures kept, in the order they were handed out (never the order the slots finished in), then
// its new failures shrunk.
import type { CrashStateInfo } from '../../../fusefs/crash-states.js';
import { keepsNoUnsynced } from '../../../fusefs/model/policies/index.js';
import { kindOfCut, type CutKind } from '../../faults/cut-kinds.js';
import type { JudgedClusterState } from '../../harness/cluster/cluster-cause.js';
import { ClusterStateError, type ClusterStateVerdict } from '../../harness/cluster/cluster-pool.js';
import type { ClusterInput } from '../../harness/cluster/cluster-run.js';
import { policyCoverage } from '../../harness/coverage.js';
import type { TempDaemon } from '../../harness/daemon-process.js';
import type { ClusterRecording } from '../cluster-cases.js';
import { describeClusterCut, spreadOrder } from '../cluster-kinds.js';
import { causesOf } from './causes.js';
import { statesSliceMs } from './costs.js';
import { countState } from './counting.js';
import { stateFailed } from './failures.js';
import type { ClusterRun } from './run.js';
import { shrinkState } from './shrink.js';
import { StateHandout } from './state-handout.js';

/** A state judged here, as the cause search takes it, with its verdict and cut kind. */
type JudgedHere = JudgedClusterState & { verdict: ClusterStateVerdict; kind: CutKind };

/** The lists' items in turn: the first of each, then the second of each... */
function interleave<T>(lists: readonly (readonly T[])[]): T[] {
  const out: T[] = [];
  for (let i = 0; i < Math.max(0, ...lists.map((l) => l.length)); i++) for (const l of lists) if (i < l.length) out.push(l[i]);
  return out;
}

/** Each kind's states of a recording: its policies in turn, each policy's states in spread order (drawn from the run's stream). */
function statesByKind(run: ClusterRun, rec: ClusterRecording): CrashStateInfo[][] {
  return run.asked.map((k) => interleave(run.policies.map((p) => spreadOrder(rec.states.filter((s) => s.id.policy === p && kindOfCut(run.asked, s.id.nodes, run.nodes) === k), run.random))));
}

/**
 * Judges workload `input`'s recording (recorded in `recordMs`), counts its states and keeps and
 * shrinks its failures; a failure of the tool is counted as one. What the live cuts' cost is
 * estimated from: the longest recovery of a state of its own.
 */
export async function judgeRecording(run: ClusterRun, rec: ClusterRecording, clusterInput: ClusterInput, input: number, recordMs: number): Promise<{ longestRecoveryMs: number | undefined }> {
  // Offline: the kinds in turn, each kind's states in spread order, for this workload's slice of
  // the budget (leaving room for its live cuts), so each kind gets its first state early.
  const slice = statesSliceMs(run, recordMs);
  // A work budget judges every state within the caps: no slice.
  const sliceEndsMs = run.budget.untimed ? Infinity : Date.now() + Math.max(0, slice);
  const byKind = statesByKind(run, rec);
  // What each kind listed under lose-unsynced, for the summary's judged / listed per kind.
  run.asked.forEach((k, j) => { policyCoverage(run.row(k).coverage, 'lose-unsynced').listed += byKind[j].filter((x) => keepsNoUnsynced(x.id.policy)).length; });
  // The recording lives in the daemon that made it: after a failure of the tool (a fresh daemon) its states are gone.
  const recordedOn: TempDaemon = run.daemons.current;
  const handout = new StateHandout(run, byKind, recordedOn, sliceEndsMs, input);
  let longestRecoveryMs: number | undefined;
  const verdicts: ClusterStateVerdict[] = [];
  // A state still draining when judging's time ends (what the causes and artifacts keep back) is
  // abandoned unjudged: a drain that waits on elections may otherwise hold its slot for its whole
  // bound, stretched for the slots, past the budget (seen: NATS R3, 16-19 s over a 60 s budget).
  const abandonAtMs = run.phases.deadlineMs('record+judge');
  try {
    // A verdict stays "in flight" for the floor until it is counted below, in the order handed out.
    await run.pool.judge(recordedOn.daemon, rec, () => handout.next(), async (v) => {
      if (handout.kindIndexOf(v.state) === undefined) throw new Error(`invariant: a judged state was handed out by the turns (state after request ${v.state.id.afterOp})`);
      // --stop-on-first: no state is handed out after a failure; those in slots are judged, and
      // only the first failure in the order handed out is counted below.
      if (run.o.stopOnFirst && v.violations.length > 0) run.stopped = true;
      if (!v.shared) longestRecoveryMs = Math.max(longestRecoveryMs ?? 0, v.recoverMs);
      verdicts.push(v);
    }, abandonAtMs);
    const judgedHere = countInOrder(run, handout, verdicts);
    const newGroups = await keepFailures(run, rec, judgedHere, recordedOn);
    await shrinkNewGroups(run, newGroups, clusterInput, recordedOn);
  } catch (err) {
    const j = err instanceof ClusterStateError ? handout.kindIndexOf(err.state) : undefined;
    const row = run.row(run.asked[j ?? 0]);
    const what = err instanceof ClusterStateError ? `recovering ${describeClusterCut('state', err.state.id.nodes)} after request ${err.state.id.afterOp}` : `judging workload ${input + 1}'s crash states`;
    await run.toolFailed(row, what, err instanceof ClusterStateError ? err.reason : err);
  }
  return { longestRecoveryMs };
}

/** The verdicts counted on their rows in the order handed out (under --stop-on-first, up to the first failure): the states judged here. */
function countInOrder(run: ClusterRun, handout: StateHandout, verdicts: ClusterStateVerdict[]): JudgedHere[] {
  handout.sortHandedOut(verdicts);
  const firstFailing = verdicts.findIndex((v) => v.violations.length > 0);
  const judgedHere: JudgedHere[] = [];
  for (const v of run.o.stopOnFirst && firstFailing >= 0 ? verdicts.slice(0, firstFailing + 1) : verdicts) {
    const kind = handout.counted(v.state);
    countState(run, v, kind);
    judgedHere.push({ state: v.state, violations: v.violations, drain: v.runs[v.runs.length - 1], verdict: v, kind });
  }
  return judgedHere;
}

/** The failing states with their causes (searched once every state of the recording judged here is in: a proof judges them all), grouped and kept; the new groups. */
async function keepFailures(run: ClusterRun, rec: ClusterRecording, judgedHere: readonly JudgedHere[], recordedOn: TempDaemon): Promise<{ key: string; kind: CutKind }[]> {
  const causes = await causesOf(run, rec, judgedHere, recordedOn.daemon, run.row(run.asked[0]));
  const newGroups: { key: string; kind: CutKind }[] = [];
  for (const x of judgedHere) {
    if (x.violations.length === 0) continue;
    const key = await stateFailed(run, rec, x.verdict, x.kind, recordedOn, causes.get(x));
    if (key !== undefined) newGroups.push({ key, kind: x.kind });
  }
  return newGroups;
}

/** The new groups shrunk, once every artifact of this recording is written: shrinking records other workloads on the daemon. */
async function shrinkNewGroups(run: ClusterRun, newGroups: readonly { key: string; kind: CutKind }[], clusterInput: ClusterInput, recordedOn: TempDaemon): Promise<void> {
  for (const g of run.o.stopOnFirst ? [] : newGroups) {
    if (run.daemons.running !== recordedOn) break;
    try {
      await shrinkState(run, g.key, g.kind, clusterInput);
    } catch (err) {
      // The first case's artifact stands; a daemon that broke fails the next recording, as the tool's failure.
      run.ctx.log(`${run.row(g.kind).name}: shrinking "${g.key}" failed (its first case's artifact stays): ${err instanceof Error ? err.message : String(err)}`);
    }
  }
}
