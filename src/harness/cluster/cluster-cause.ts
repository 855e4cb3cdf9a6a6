// The cause of a failing crash state of a cluster: the single-disk search (cause/search.ts) over what
// the state lost on each cut node, probed by recovering the whole cluster with some of those units
// made durable on their node. A cause is named only when its fix, applied to the recording, cures
// the failing states judged again and breaks none that passed (the rule of cause.ts's proofHolds).
// A confirmation withheld until the fsync it needed completed changes what was promised, not the
// disks: the judged drains are judged again against the fixed confirmations (nothing recovered
// again). A fix that inserts an fsync (or moves one) changes the disks: the daemon builds the
// recording's states under the hypothesis (each fsync on its node, every node renumbered), and each
// judged lose-unsynced state's counterpart (its cut and cut nodes, renumbered) is recovered and
// judged against the fixed run's lines: failing states and states that passed in turn, within the
// time left (a bound the proof states); a failing state the time left out is judged under a proven
// fix before it is searched. A torn or journaled state has no counterpart by id (its choices count
// unsynced changes, which the fix changes): it is not compared.
import { mkdtemp, rm } from 'node:fs/promises';
import path from 'node:path';
import type { CrashStateId, CrashStateInfo, Hypothesis, LostUnit, ProbeUnit } from '../../../fusefs/crash-states.js';
import { coverStates } from '../cause/attribute.js';
import { boundUntil, DEFAULT_SEARCH_BOUND, proofHolds, type Cause, type CauseProof, type SearchBound } from '../cause/cause.js';
import { searchCause, type ProbeFn } from '../cause/search.js';
import type { DaemonHandle } from '../daemon-process.js';
import type { DriverTimeouts } from '../driver-process.js';
import { fixedRun } from '../exhaustive/fixed-run.js';
import { historyOf, truncateAtCut, type Recorded } from '../exhaustive/judge-states.js';
import { scratchRoot } from '../exhaustive/recovery-pool.js';
import { judge, violatedChecks, type RunRecord, type Violation } from '../oracle.js';
import type { Target } from '../target.js';
import { clusterFixedRun, type ClusterFixedRun } from './cluster-fix.js';
import { CLUSTER_STATE_SLOTS, timeoutsForSlots } from './cluster-pool.js';
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
 * `linesAsOf` (default: its cut). With a hypothesis, `id` is a state of the run it describes (its
 * numbering), and ctx.recorded must be that run's (fixed-run.ts: marks renumbered with it).
 */
export async function recoverClusterState(ctx: ClusterCauseContext, id: CrashStateId, probe: readonly ProbeUnit[] = [], linesAsOf = id.afterOp, hypothesis?: Hypothesis): Promise<{ violations: Violation[]; runs: RunRecord[]; drain: RunRecord; drainStderr: string }> {
  const slot = await mkdtemp(path.join(scratchRoot(), 'powercut-cluster-state-'));
  try {
    await ctx.daemon.client.stateImage(id, slot, true, { ...(probe.length ? { probe: [...probe] } : {}), ...(hypothesis ? { hypothesis } : {}) });
    const r = await recoverClusterImage(ctx.target, ctx.input, slot, ctx.daemon.mountpoints.length, truncateAtCut(ctx.recorded, linesAsOf), ctx.timeouts);
    return { ...r, drain: r.runs[r.runs.length - 1] };
  } finally {
    await rm(slot, { recursive: true, force: true });
  }
}

/**
 * The search's probe: the state recovered with some units durable on their nodes (or every unit it
 * lost). The search's own hypotheses only leave fsyncs out (earlyPersistence): no request is
 * inserted, so the recording's lines keep their numbers.
 */
function clusterProbe(ctx: ClusterCauseContext): ProbeFn {
  return async (req) => {
    if (req.hypothesis && req.hypothesis.fsyncAfter.length > 0) throw new Error('invariant: a probe inserts no fsync (its lines would move): the search\'s hypotheses only leave fsyncs out');
    const persist: ProbeUnit[] | undefined = req.persistAll
      ? (await ctx.daemon.client.units(req.state, req.hypothesis)).map((u) => ({ kind: u.kind, ino: u.ino, ...(u.node !== undefined ? { node: u.node } : {}) }))
      : req.persist;
    const first = (await recoverClusterState(ctx, req.state, persist, req.linesAsOf, req.hypothesis)).violations;
    if (first.some((v) => !v.hang)) return first;
    // A pass is confirmed by a second recovery: the nodes elect anew each time, so a failing state
    // can pass by chance, and ddmin keeps whatever set passed (C2's search, unconfirmed, settled on
    // a set of units no path reached). A failure needs no second look: ddmin keeps the larger set.
    return (await recoverClusterState(ctx, req.state, persist, req.linesAsOf, req.hypothesis)).violations;
  };
}

/** A lose-unsynced state's counterpart in the fixed run: the same cut, right after the same request, before any fsync inserted there. */
export function counterpartUnder(fix: ClusterFixedRun, id: CrashStateId): CrashStateId {
  return { ...id, afterOp: fix.fixedOpsOf(id.afterOp)[0] };
}

/**
 * The proof of a fix that inserts (or moves) fsyncs, kept open so later failing states can be
 * judged under the same fix (extend) instead of searched again: the recording's states under the
 * hypothesis, each judged lose-unsynced state's counterpart (the same cut: right after the same
 * request of the run, before any fsync inserted there; the same cut nodes) recovered and judged
 * against the fixed run's lines.
 */
class InsertedProof {
  readonly proof: CauseProof;
  readonly cured: JudgedClusterState[] = [];
  private readonly stillFailing = new Set<string>();
  private readonly fixedCtx: ClusterCauseContext;
  private readonly started = Date.now();

  constructor(ctx: ClusterCauseContext, private readonly fix: ClusterFixedRun, private readonly own: JudgedClusterState) {
    this.fixedCtx = { ...ctx, recorded: fix.recorded };
    this.proof = { step: fix.words, failing: 0, cured: 0, curesOwnState: false, broken: 0, exposed: [], states: 0, capped: false, stillFailing: [], ms: 0 };
  }

  /** Each judged state's counterpart verdict (true: passes): a state is counted once. */
  private readonly passes = new Map<JudgedClusterState, boolean>();

  /** Judges `j`'s counterpart under the fix and counts it; returns whether it passes. */
  async judge(j: JudgedClusterState): Promise<boolean> {
    const known = this.passes.get(j);
    if (known !== undefined) return known;
    if (j.state.id.policy !== 'lose-unsynced') throw new Error(`invariant: only a lose-unsynced state has a counterpart under an inserted fsync (got ${j.state.id.policy})`);
    const counterpart = counterpartUnder(this.fix, j.state.id);
    const after = (await recoverClusterState(this.fixedCtx, counterpart, [], counterpart.afterOp, this.fix.hypothesis)).violations;
    this.proof.states++;
    if (j.violations.length > 0) {
      this.proof.failing++;
      if (after.length === 0) this.cured.push(j);
      else this.stillFailing.add(violatedChecks(after).join(', '));
    } else if (after.length > 0) this.proof.broken++;
    this.proof.cured = this.cured.length;
    this.proof.curesOwnState = this.cured.includes(this.own);
    this.proof.stillFailing = [...this.stillFailing];
    this.proof.ms = Date.now() - this.started;
    this.passes.set(j, after.length === 0);
    return after.length === 0;
  }
}

/**
 * Proves a fix that inserts (or moves) fsyncs on the judged states: the state it was found on and
 * the first state that passed whatever the time (no proof without one of each, where there is
 * one), then failing and passed states in turn until `deadlineMs`, so a proof the time cuts short
 * has sampled both what it cures and what it could break (it says how many it judged: capped).
 */
export async function proveInserted(ctx: ClusterCauseContext, cause: Cause, lost: readonly LostUnit[], own: JudgedClusterState, judged: readonly JudgedClusterState[], deadlineMs: number, maxStates = Infinity): Promise<{ proof: InsertedProof; fixWords: string } | undefined> {
  const fix = clusterFixedRun(ctx.recorded, cause, lost);
  if (!fix?.hypothesis) return undefined;
  const p = new InsertedProof(ctx, fix, own);
  const comparable = (j: JudgedClusterState) => j.state.id.policy === 'lose-unsynced';
  const failing = judged.filter((j) => j.violations.length > 0 && j !== own && comparable(j));
  const passed = judged.filter((j) => j.violations.length === 0 && comparable(j));
  const order: JudgedClusterState[] = [own, ...passed.slice(0, 1)];
  for (let i = 0; i < Math.max(failing.length, passed.length); i++) order.push(...failing.slice(i, i + 1), ...passed.slice(i + 1, i + 2));
  for (const [k, j] of order.entries()) {
    if (k >= 1 + Math.min(1, passed.length) && (Date.now() >= deadlineMs || k >= maxStates)) {
      p.proof.capped = true;
      break;
    }
    await p.judge(j);
  }
  return { proof: p, fixWords: fix.fixWords };
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
      else stillFailing.add(violatedChecks(after).join(', '));
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
  /** A proof under an inserted fsync: judges one more failing state's counterpart under the same fix (true: cured). */
  extend?: (j: JudgedClusterState) => Promise<boolean>;
}

async function explainOne(ctx: ClusterCauseContext, failing: JudgedClusterState, judged: readonly JudgedClusterState[], bound: SearchBound, deadlineMs: number, limits: ExplainLimits): Promise<Explained> {
  const units = await ctx.daemon.client.units(failing.state.id);
  const { recorded } = ctx;
  // Probes recover as many clusters at once as the target's pool does (each mostly waits on elections).
  const slots = ctx.target.clusterStateSlots ?? CLUSTER_STATE_SLOTS;
  const candidate = await searchCause(
    { state: failing.state, violations: failing.violations, units, trace: recorded.trace, marks: recorded.marks, workload: recorded.run.record },
    clusterProbe({ ...ctx, timeouts: timeoutsForSlots(ctx.timeouts, slots) }), bound, slots,
  );
  // Proven by the search itself (the disk is legal and recovery fails on it; only the torn part fails), or unexplained.
  if (candidate.kind === 'not-isolated' || candidate.kind === 'recovery-fails-on-legal-disk' || candidate.kind === 'torn-write') return { cause: candidate, cures: [failing] };
  const unnamed = (why: string): Explained => ({
    cause: {
      ...candidate, kind: 'not-isolated', key: `unexplained ${candidate.key}`, title: `unexplained (candidate: ${candidate.title})`,
      fix: `not named: ${why}. The search proposed: ${candidate.fix}`,
    },
    cures: [failing],
  });
  if (!candidate.step) return unnamed('its fix is not a step added to the recording, and a cluster proves only such fixes');
  if (candidate.step.kind === 'wait') {
    const proven = proveOnJudged(recorded, candidate, failing, judged, ctx.target.name);
    if (!proven) return unnamed('its fix could not be applied to the recording');
    if (!proofHolds(proven.proof) || !proven.proof.curesOwnState) return unnamed(`its fix does not cure this state or breaks one that passed (${proven.proof.cured} of ${proven.proof.failing} failing states cured, ${proven.proof.broken} broken)`);
    return { cause: { ...candidate, proof: proven.proof }, cures: proven.cured };
  }
  if (failing.state.id.policy !== 'lose-unsynced') return unnamed(`its fix inserts an fsync, and a ${failing.state.id.policy} state of a cluster has no counterpart in the fixed run to judge (its outcomes count the unsynced changes the fix changes)`);
  const proven = await proveInserted(ctx, candidate, units, failing, judged, deadlineMs, limits.maxProofStates);
  if (!proven) return unnamed('its fix could not be applied to the recording');
  const { proof } = proven.proof;
  if (!proofHolds(proof) || !proof.curesOwnState) return unnamed(`its fix does not cure this state or breaks one that passed (with ${proof.step}: ${proof.cured} of ${proof.failing} failing states cured, ${proof.broken} broken${proof.stillFailing.length ? `; still failing: ${proof.stillFailing.join('; ')}` : ''})`);
  // The cause shares the proof's record: a state judged later under the same fix (extend) counts in it.
  return { cause: { ...candidate, fix: proven.fixWords, proof }, cures: [...proven.proof.cured], extend: (j) => proven.proof.judge(j) };
}

/**
 * The causes of a recording's failing states: each state no proven cause explains yet is searched
 * (until `deadlineMs`), then the fewest proven causes that explain the most states are chosen
 * (attribute.ts). Returns each failing state's cause; a state left out by the deadline, or whose
 * search named nothing, gets an unexplained cause saying so.
 */
/** Count bounds of a recording's explaining (a gate's work budget, which has no time bound): searches, and states a proof judges. */
export interface ExplainLimits {
  maxSearches?: number;
  maxProofStates?: number;
}

export async function explainClusterRun(ctx: ClusterCauseContext, judged: readonly JudgedClusterState[], deadlineMs: number, bound: SearchBound = DEFAULT_SEARCH_BOUND, limits: ExplainLimits = {}): Promise<Map<JudgedClusterState, Cause>> {
  const maxSearches = limits.maxSearches ?? Infinity;
  const failing = judged.filter((j) => j.violations.length > 0);
  const found: Explained[] = [];
  next: for (const f of failing) {
    if (found.some((e) => e.cause.kind !== 'not-isolated' && e.cures.includes(f))) continue;
    if (Date.now() >= deadlineMs) break;
    // A proven fix the proof's time left this state out of: judged under it (one recovery), before a search of its own (many).
    for (const e of found) {
      if (!e.extend || f.state.id.policy !== 'lose-unsynced' || Date.now() >= deadlineMs) continue;
      if (await e.extend(f)) {
        e.cures.push(f);
        continue next;
      }
    }
    if (Date.now() >= deadlineMs || found.length >= maxSearches) break;
    found.push(await explainOne(ctx, f, judged, boundUntil(bound, deadlineMs, 1), deadlineMs, limits));
  }
  const candidates = found.filter((e) => e.cause.kind !== 'not-isolated').map((e) => ({ ...e, kind: e.cause.kind, cures: new Set(e.cures.map((j) => failing.indexOf(j))) }));
  const cover = coverStates(failing.length, candidates);
  const given = new Map<number, Cause>();
  for (const { candidate, states } of cover.chosen) for (const i of states) given.set(i, candidate.cause);
  const notSearched: Cause = { kind: 'not-isolated', key: 'unexplained not-searched', title: 'unexplained: not searched', fix: `not searched: ${found.length >= maxSearches ? `the recording's bound of ${maxSearches} searches was reached` : 'the time for causes ran out'} before this state's turn`, evidence: [], search: { probes: 0, ms: 0, bound, boundReached: true } };
  // In the order of the failing states: a named cause, else what the state's own search said, else not searched.
  return new Map(failing.map((f, i) => [f, given.get(i) ?? found.find((e) => e.cures.includes(f))?.cause ?? notSearched]));
}
