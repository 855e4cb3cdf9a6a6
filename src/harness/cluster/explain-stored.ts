// A cluster's crash state on the recorded run its artifact keeps (recording/): a fresh daemon
// loads that run, so the state, what it lost, every probe's image and a fix's images are the
// artifact's own, exactly, with its request numbers (`explain` searches there, `replay` checks a
// stored cause there). Only each recovery is a sample: the nodes elect and interleave anew every
// time, so explain recovers the state once first and searches only if it fails alike again.
import path from 'node:path';
import { DEFAULT_STATE_CAPS, type CrashStateId, type CrashStateInfo, type Mark, type StateCaps } from '../../../fusefs/crash-states.js';
import { keepsNoUnsynced } from '../../../fusefs/model/policies/index.js';
import type { TraceEntry } from '../../../fusefs/protocol.js';
import { isClusterCase, type StoredArtifact, type StoredRecording } from '../artifacts.js';
import type { Cause, CauseProof, SearchBound } from '../cause/cause.js';
import { startTempDaemon } from '../daemon-process.js';
import type { DriverTimeouts } from '../driver-process.js';
import { HarnessError } from '../harness-error.js';
import { violatedChecks, type RunRecord, type Violation } from '../oracle.js';
import type { Target } from '../target.js';
import { counterpartUnder, explainClusterRun, proveInserted, proveOnJudged, recoverClusterState, type ClusterCauseContext, type JudgedClusterState } from './cluster-cause.js';
import { clusterFixedRun } from './cluster-fix.js';
import type { ClusterInput } from './cluster-run.js';

export interface StoredClusterState {
  input: ClusterInput;
  nodes: number;
  state: CrashStateId;
  /** The caps its states were listed under (case.json's stateCaps). */
  caps: StateCaps;
  violations: readonly Violation[];
  /** The drain the gate judged (a withheld confirmation's proof judges it again). */
  drain: RunRecord;
  recording: StoredRecording;
  /** The run's whole trace and its marks (trace-cut-0.json). */
  trace: TraceEntry[];
  marks: Mark[];
}

/** The artifact's crash state with the run it keeps; undefined for a live cut, one disk, or an artifact without recording/. */
export function storedClusterState(a: StoredArtifact): StoredClusterState | undefined {
  const c = a.case;
  if (!isClusterCase(c) || !c.state || !a.recording) return undefined;
  const cut = a.cuts[0];
  return {
    input: c, nodes: c.nodes, state: c.state, caps: c.stateCaps ?? DEFAULT_STATE_CAPS, violations: a.violations, drain: a.runs[a.runs.length - 1],
    recording: a.recording, trace: cut?.trace ?? [], marks: cut?.marks ?? [],
  };
}

export interface ExplainedStored {
  /** What the state's recovery here failed (a sample: the drain elects anew). */
  recovered: Violation[];
  /** Searched when it failed the artifact's checks again; absent otherwise. */
  cause?: Cause;
}

/**
 * Runs `use` on a fresh daemon of the artifact's node count holding its recorded run: the cause
 * context of that run, and the artifact's state as the run lists it. The daemon is stopped after.
 */
async function onStoredRun<T>(target: Target, s: StoredClusterState, timeouts: DriverTimeouts, use: (ctx: ClusterCauseContext, state: CrashStateInfo) => Promise<T>): Promise<T> {
  const fixture = await startTempDaemon('stored-run', s.nodes);
  try {
    const { daemon } = fixture;
    await daemon.client.loadRecording(s.recording.callsFile);
    const listed = await daemon.client.states([s.state.policy], s.caps);
    const want = JSON.stringify(s.state);
    const state = listed.states.find((x) => JSON.stringify(x.id) === want);
    if (!state) throw new HarnessError(`the stored recording ${s.recording.callsFile} lists no state ${want} (under the caps ${JSON.stringify(s.caps)}): the artifact's recording/ is not the run of its case.json`);
    return await use({ daemon, target, input: s.input, recorded: { run: s.recording.run, trace: s.trace, marks: s.marks }, timeouts }, state);
  } finally {
    await fixture.stop();
  }
}

/**
 * The artifact's cause proven again on its stored run: the state recovered under the cause's fix (an
 * inserted fsync), or its drain judged with the confirmation withheld. Undefined when the fix is of
 * neither kind, or inserts an fsync into a torn or journaled state (no counterpart to judge).
 */
export async function reproveStoredCause(target: Target, s: StoredClusterState, cause: Cause, timeouts: DriverTimeouts, deadlineMs: number): Promise<CauseProof | undefined> {
  return onStoredRun(target, s, timeouts, async (ctx, state) => {
    const own: JudgedClusterState = { state, violations: [...s.violations], drain: s.drain };
    if (cause.step?.kind === 'wait') return proveOnJudged(ctx.recorded, cause, own, [own], target.name)?.proof;
    if (!keepsNoUnsynced(state.id.policy)) return undefined;
    return (await proveInserted(ctx, cause, await ctx.daemon.client.units(state.id), own, [own], deadlineMs))?.proof.proof;
  });
}

/**
 * Writes the images of the artifact's state, and of its counterpart in the run with the cause's
 * fix inserted, under out/state and out/fixed (one folder per node each): what the fix changes on
 * the disks, exactly, before any recovery (which is a sample). False when the fix inserts no fsync.
 */
export async function writeStoredFixImages(target: Target, s: StoredClusterState, cause: Cause, out: string, timeouts: DriverTimeouts): Promise<boolean> {
  return onStoredRun(target, s, timeouts, async (ctx, state) => {
    const fix = clusterFixedRun(ctx.recorded, cause, await ctx.daemon.client.units(state.id));
    if (!fix?.hypothesis) return false;
    await ctx.daemon.client.stateImage(state.id, path.join(out, 'state'), true);
    await ctx.daemon.client.stateImage(counterpartUnder(fix, state.id), path.join(out, 'fixed'), true, { hypothesis: fix.hypothesis });
    return true;
  });
}

/** Loads the artifact's recorded run, recovers its state, and searches its cause if it fails alike (within `bound`, by `deadlineMs`). */
export async function explainStoredClusterState(target: Target, s: StoredClusterState, timeouts: DriverTimeouts, deadlineMs: number, bound: SearchBound): Promise<ExplainedStored> {
  return onStoredRun(target, s, timeouts, async (ctx, state) => {
    const recovered = await recoverClusterState(ctx, state.id);
    if (violatedChecks(recovered.violations).join() !== violatedChecks(s.violations).join()) return { recovered: recovered.violations };
    const judged: JudgedClusterState = { state, violations: recovered.violations, drain: recovered.drain };
    const cause = (await explainClusterRun(ctx, [judged], deadlineMs, bound)).get(judged);
    return { recovered: recovered.violations, ...(cause ? { cause } : {}) };
  });
}
