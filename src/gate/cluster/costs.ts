// What a cluster gate expects its work to take under a time budget: a crash state's recovery, a live
// cut, and the slice of the budget a workload's crash states are judged for (leaving room for its
// live cuts), so that later workloads and every cut kind get their turns.
import type { ClusterRun } from './run.js';

/** A workload's crash states are judged for this long at most (the kinds in turn, each spread over the run), so later workloads get turns. */
export const MAX_STATES_SLICE_MS = 30_000;
/** Below this much budget no new state is judged (a state's recovery takes a second or so), except for a kind still owed one. */
export const MIN_STATE_MS = 2_000;
/** No live cut is expected to take less (a live cut runs the workload, restarts its nodes and drains the whole cluster: a few seconds). */
const MIN_LIVE_MS = 6_000;
/** Kept back from a states' slice besides its live cuts. */
const SLICE_MARGIN_MS = 500;

/**
 * What a live cut of this workload is expected to take: its run as long as the recording's, then a
 * drain as long as the longest state's recovery so far (MIN_STATE_MS before any). Seen: NATS R3's
 * live cuts took 24 to 27 s each, and three of them at 6 s each had put a 120 s gate 62 s over.
 */
export function liveCutCostMs(recordMs: number, longestRecoveryMs: number | undefined): number {
  return Math.max(MIN_LIVE_MS, recordMs + (longestRecoveryMs ?? MIN_STATE_MS));
}

/**
 * The time a workload recorded in `recordMs` has for its crash states (at most MAX_STATES_SLICE_MS):
 * the budget left less its live cuts; negative when they do not fit.
 */
export function statesSliceMs(run: ClusterRun, recordMs: number): number {
  const liveKinds = run.liveCuts > 0 ? run.liveKinds().length : 0;
  return Math.min(MAX_STATES_SLICE_MS, run.budget.leftMs() - liveKinds * run.liveCuts * liveCutCostMs(recordMs, undefined) - SLICE_MARGIN_MS);
}
