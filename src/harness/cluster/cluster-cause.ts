// The cause of a failing crash state of a cluster: the single-disk search (cause/search.ts) over what
// the state lost on each cut node, probed by recovering the whole cluster with some of those units
// made durable on their node. A cause is named only when its fix, applied to the recording, cures
// the failing states judged again and breaks none that passed (the rule of cause.ts's proofHolds).
// Today that proof exists for a confirmation withheld until the fsync it needed completed (the
// judged drains are judged again against the fixed confirmations: nothing is recovered again). A
// fix that inserts an fsync needs the cluster's states listed under a hypothesis, which the daemon
// does not do for a cluster yet: such a candidate is reported unexplained, with what it proposed.
import { mkdtemp, rm } from 'node:fs/promises';
import path from 'node:path';
import type { CrashStateId, CrashStateInfo, ProbeUnit } from '../../../fusefs/crash-states.js';
import { coverStates } from '../cause/attribute.js';
import { DEFAULT_SEARCH_BOUND, proofHolds, type Cause, type CauseProof, type SearchBound } from '../cause/cause.js';
import { searchCause, type ProbeFn } from '../cause/search.js';
import type { DaemonHandle } from '../daemon-process.js';
import type { DriverTimeouts } from '../driver-process.js';
import { fixedRun } from '../exhaustive/fixed-run.js';
import { historyOf, truncateAtCut, type Recorded } from '../exhaustive/judge-states.js';
import { scratchRoot } from '../exhaustive/recovery-pool.js';
import { judge, type RunRecord, type Violation } from '../oracle.js';
import type { Target } from '../target.js';
import { recoverClusterImage, type ClusterInput } from './cluster-run.js';

/** A judged crash state of the recording: its verdict and the drain that recovered it (what a proof judges again). */
export interface JudgedClusterState {
  state: CrashStateInfo;
  violations: Violation[];
  drain: RunRecord;
}

/** The recording the states belong to, on the daemon that still holds it. */
export interface ClusterCauseContext {
  daemon: DaemonHandle;
  target: Target;
  input: ClusterInput;
  recorded: Recorded;
  timeouts: DriverTimeouts;
}

/**
 * Recovers crash state `id` of the recording natively (every node's image written off the mount,
 * with `probe`'s units durable on their nodes) and judges it against the lines marked as of
 * `linesAsOf` (default: its cut).
 */
export async function recoverClusterState(ctx: ClusterCauseContext, id: CrashStateId, probe: readonly ProbeUnit[] = [], linesAsOf = id.afterOp): Promise<{ violations: Violation[]; runs: RunRecord[]; drain: RunRecord; drainStderr: string }> {
  const slot = await mkdtemp(path.join(scratchRoot(), 'powercut-cluster-state-'));
  try {
    await ctx.daemon.client.stateImage(id, slot, true, probe.length ? { probe: [...probe] } : {});
    const r = await recoverClusterImage(ctx.target, ctx.input, slot, ctx.daemon.mountpoints.length, truncateAtCut(ctx.recorded, linesAsOf), ctx.timeouts);
    return { ...r, drain: r.runs[r.runs.length - 1] };
  } finally {
    await rm(slot, { recursive: true, force: true });
  }
}

/** The search's probe: the state recovered with some units durable on their nodes (or every unit it lost). */
function clusterProbe(ctx: ClusterCauseContext): ProbeFn {
  return async (req) => {
    if (req.hypothesis) throw new Error('invariant: a probe of a cluster\'s state under a hypothesis about the run (the daemon lists a cluster\'s states under none yet)');
    const persist: ProbeUnit[] | undefined = req.persistAll
      ? (await ctx.daemon.client.units(req.state)).map((u) => ({ kind: u.kind, ino: u.ino, ...(u.node !== undefined ? { node: u.node } : {}) }))
      : req.persist;
    return (await recoverClusterState(ctx, req.state, persist, req.linesAsOf)).violations;
  };
}

/**
 * The proof of a withheld confirmation: every judged state's drain judged again against the
 * recording with the fix (its lines withheld until the fsync completed). Pure: a confirmation moved
 * later changes what was promised at a cut, not the disk the cut left.
 */
export function proveOnJudged(recorded: Recorded, cause: Cause, own: JudgedClusterState, judged: readonly JudgedClusterState[], targetName: string): { proof: CauseProof; cured: JudgedClusterState[] } | undefined {
  const started = Date.now();
  const fixed = cause.step?.kind === 'wait' ? fixedRun(recorded, cause) : undefined;
  if (!fixed) return undefined;
  const cured: JudgedClusterState[] = [];
  let failing = 0;
  let broken = 0;
  const stillFailing = new Set<string>();
  for (const j of judged) {
    const after = judge({ target: targetName, faultsInjected: false, runs: historyOf(fixed.recorded, j.state.id.afterOp, [j.drain]) });
    if (j.violations.length > 0) {
      failing++;
      if (after.length === 0) cured.push(j);
      else stillFailing.add([...new Set(after.map((v) => v.check))].sort().join(', '));
    } else if (after.length > 0) broken++;
  }
  const proof: CauseProof = {
    step: fixed.words, failing, cured: cured.length, curesOwnState: cured.includes(own), broken, exposed: [], states: judged.length, capped: false, stillFailing: [...stillFailing], ms: Date.now() - started,
  };
  return { proof, cured };
}

/** A cause and the judged states it explains (its proof cures them; a cause proven otherwise, or unexplained, its own state). */
interface Explained {
  cause: Cause;
  cures: JudgedClusterState[];
}

async function explainOne(ctx: ClusterCauseContext, failing: JudgedClusterState, judged: readonly JudgedClusterState[], bound: SearchBound): Promise<Explained> {
  const units = await ctx.daemon.client.units(failing.state.id);
  const { recorded } = ctx;
  const candidate = await searchCause(
    { state: failing.state, violations: failing.violations, units, trace: recorded.trace, marks: recorded.marks, workload: recorded.run.record },
    clusterProbe(ctx), bound,
  );
  // Proven by the search itself (the disk is legal and recovery fails on it; only the torn part fails), or unexplained.
  if (candidate.kind === 'not-isolated' || candidate.kind === 'recovery-fails-on-legal-disk' || candidate.kind === 'torn-write') return { cause: candidate, cures: [failing] };
  const proven = proveOnJudged(recorded, candidate, failing, judged, ctx.target.name);
  const unnamed = (why: string): Explained => ({
    cause: {
      ...candidate, kind: 'not-isolated', key: `unexplained ${candidate.key}`, title: `unexplained (candidate: ${candidate.title})`,
      fix: `not named: ${why}. The search proposed: ${candidate.fix}`,
    },
    cures: [failing],
  });
  if (!proven) return unnamed('its fix adds a request to the run, and a cluster\'s run cannot be listed with a request added yet, so the fix is not proven');
  if (!proofHolds(proven.proof) || !proven.proof.curesOwnState) return unnamed(`its fix does not cure this state or breaks one that passed (${proven.proof.cured} of ${proven.proof.failing} failing states cured, ${proven.proof.broken} broken)`);
  return { cause: { ...candidate, proof: proven.proof }, cures: proven.cured };
}

/**
 * The causes of a recording's failing states: each state no proven cause explains yet is searched
 * (until `deadlineMs`), then the fewest proven causes that explain the most states are chosen
 * (attribute.ts). Returns each failing state's cause; a state left out by the deadline, or whose
 * search named nothing, gets an unexplained cause saying so.
 */
export async function explainClusterRun(ctx: ClusterCauseContext, judged: readonly JudgedClusterState[], deadlineMs: number, bound: SearchBound = DEFAULT_SEARCH_BOUND): Promise<Map<JudgedClusterState, Cause>> {
  const failing = judged.filter((j) => j.violations.length > 0);
  const found: Explained[] = [];
  for (const f of failing) {
    if (found.some((e) => e.cause.kind !== 'not-isolated' && e.cures.includes(f))) continue;
    if (Date.now() >= deadlineMs) break;
    found.push(await explainOne(ctx, f, judged, { ...bound, maxMs: Math.min(bound.maxMs, Math.max(1, deadlineMs - Date.now())) }));
  }
  const candidates = found.filter((e) => e.cause.kind !== 'not-isolated').map((e) => ({ ...e, kind: e.cause.kind, cures: new Set(e.cures.map((j) => failing.indexOf(j))) }));
  const cover = coverStates(failing.length, candidates);
  const given = new Map<number, Cause>();
  for (const { candidate, states } of cover.chosen) for (const i of states) given.set(i, candidate.cause);
  const notSearched: Cause = { kind: 'not-isolated', key: 'unexplained not-searched', title: 'unexplained: not searched', fix: 'not searched: the time for causes ran out before this state\'s turn', evidence: [], search: { probes: 0, ms: 0, bound, boundReached: true } };
  // In the order of the failing states: a named cause, else what the state's own search said, else not searched.
  return new Map(failing.map((f, i) => [f, given.get(i) ?? found.find((e) => e.cures.includes(f))?.cause ?? notSearched]));
}
