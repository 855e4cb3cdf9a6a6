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
import { rm } from 'node:fs/promises';
import path from 'node:path';
import type { CrashStateId, CrashStateInfo, Hypothesis, LostUnit, ProbeUnit } from '../../../fusefs/crash-states.js';
import { keepsNoUnsynced } from '../../../fusefs/model/policies/index.js';
import { coverStates } from '../cause/attribute.js';
import { boundUntil, changedPath, DEFAULT_SEARCH_BOUND, proofHolds, type Cause, type CauseProof, type FixStep, type SearchBound } from '../cause/cause.js';
import { searchCause, type ProbeFn } from '../cause/search.js';
import { bitesAt, candidatesOf, rankCandidates, type CandidateFix, type FailingCut, type RecordingView } from '../cause/candidates.js';
import { BudgetSpent, ddmin, ddminByGroup, type DdminOptions } from '../cause/ddmin.js';
import { parentOf, pathPattern } from '../path-pattern.js';
import { carryOver, type KnownCauses } from '../cause/known-causes.js';
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
import { runFolder } from '../run-folder.js';

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
  const slot = await runFolder(path.join(scratchRoot(), 'powercut-cluster-state-'));
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
    if (!keepsNoUnsynced(j.state.id.policy)) throw new Error(`invariant: only a lose-unsynced state has a counterpart under an inserted fsync (got ${j.state.id.policy})`);
    const counterpart = counterpartUnder(this.fix, j.state.id);
    // A cut before the first fsync the fix inserts is the run's own state: its verdict carries over, no recovery.
    const after = this.fix.unchanged(counterpart.afterOp) ? j.violations : (await recoverClusterState(this.fixedCtx, counterpart, [], counterpart.afterOp, this.fix.hypothesis)).violations;
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
 * Proves a fix that inserts (or moves) fsyncs on the judged states, up to `slots` recoveries at once:
 * the first round holds the state it was found on and the first state that passed whatever the time
 * (no proof without one of each, where there is one; a fix that does not cure its own state stops
 * there), then the other failing states and then the passed ones until `deadlineMs`, so a proof the
 * time cuts short has sampled both what it cures and what it could break (it says how many it
 * judged: capped).
 * `everyNode`: the fix is made on every node that makes such requests (clusterFixedRun).
 */
export async function proveInserted(ctx: ClusterCauseContext, cause: Cause, lost: readonly LostUnit[], own: JudgedClusterState, judged: readonly JudgedClusterState[], deadlineMs: number, o: { slots?: number; everyNode?: boolean; maxStates?: number } = {}): Promise<{ proof: InsertedProof; fixWords: string } | undefined> {
  const { slots = 1, everyNode = false, maxStates = Infinity } = o;
  const fix = clusterFixedRun(ctx.recorded, cause, lost, everyNode);
  if (!fix?.hypothesis) return undefined;
  const p = new InsertedProof(ctx, fix, own);
  const comparable = (j: JudgedClusterState) => keepsNoUnsynced(j.state.id.policy);
  const failing = judged.filter((j) => j.violations.length > 0 && j !== own && comparable(j));
  const passed = judged.filter((j) => j.violations.length === 0 && comparable(j));
  const must = passed.length > 0 ? 2 : 1;
  // The failing states next (each one cured joins the cause's group), then the others that passed.
  const order: JudgedClusterState[] = [own, ...passed.slice(0, 1), ...failing, ...passed.slice(1)];
  // Under a deadline rounds grow fourfold up to `slots` (a real server's recoveries slow each other
  // down on a few cores: 48 NATS R3 recoveries at once took 57 s), and one starts only if twice the
  // last one's time is left.
  let from = 0;
  let size = must;
  let lastMs = 0;
  while (from < order.length && (from === 0 || p.proof.curesOwnState)) {
    if (from > 0 && (p.proof.states >= maxStates || Date.now() + 2 * lastMs > deadlineMs)) {
      p.proof.capped = true;
      break;
    }
    const round = order.slice(from, from + (from === 0 ? must : Math.min(size, maxStates - p.proof.states)));
    const started = Date.now();
    await Promise.all(round.map((j) => p.judge(j)));
    lastMs = Date.now() - started;
    from += round.length;
    // A full round when even one as slow per state as this one fits eight times over (a fast server).
    size = Date.now() + 8 * lastMs * (slots / round.length) < deadlineMs ? slots : Math.min(slots, 4 * size);
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
  if (!keepsNoUnsynced(failing.state.id.policy)) return unnamed(`its fix inserts an fsync, and a ${failing.state.id.policy} state of a cluster has no counterpart in the fixed run to judge (its outcomes count the unsynced changes the fix changes)`);
  const proven = await proveInserted(ctx, candidate, units, failing, judged, deadlineMs, { slots, maxStates: limits.maxProofStates });
  if (!proven) return unnamed('its fix could not be applied to the recording');
  const { proof } = proven.proof;
  if (!proofHolds(proof) || !proof.curesOwnState) return unnamed(`its fix does not cure this state or breaks one that passed (with ${proof.step}: ${proof.cured} of ${proof.failing} failing states cured, ${proof.broken} broken${proof.stillFailing.length ? `; still failing: ${proof.stillFailing.join('; ')}` : ''})`);
  // The cause shares the proof's record: a state judged later under the same fix (extend) counts in it.
  return { cause: { ...candidate, fix: proven.fixWords, proof }, cures: [...proven.proof.cured], extend: (j) => proven.proof.judge(j) };
}

/**
 * A cause with a step whose fix is made on every node that makes such requests (a candidate read off
 * the recording, or a cause carried over from an earlier run), proven on the judged states from
 * failing state `own`; undefined when its proof does not hold for `own`.
 */
async function proveEveryNode(ctx: ClusterCauseContext, cause: Cause, own: JudgedClusterState, judged: readonly JudgedClusterState[], deadlineMs: number, maxStates = Infinity): Promise<Explained | undefined> {
  const slots = ctx.target.clusterStateSlots ?? CLUSTER_STATE_SLOTS;
  if (cause.step?.kind === 'wait') {
    const proven = proveOnJudged(ctx.recorded, cause, own, judged, ctx.target.name);
    return proven && proofHolds(proven.proof) && proven.proof.curesOwnState ? { cause: { ...cause, proof: proven.proof }, cures: proven.cured } : undefined;
  }
  if (!keepsNoUnsynced(own.state.id.policy)) return undefined;
  const proven = await proveInserted({ ...ctx, timeouts: timeoutsForSlots(ctx.timeouts, slots) }, cause, [], own, judged, deadlineMs, { slots, everyNode: true, maxStates });
  if (!proven || !proofHolds(proven.proof.proof) || !proven.proof.proof.curesOwnState) return undefined;
  return { cause: { ...cause, fix: proven.fixWords, proof: proven.proof.proof }, cures: [...proven.proof.cured], extend: (j) => proven.proof.judge(j) };
}

/** The candidates' fsyncs as one cause: the first's step, the others' as its alsoSteps (a missing fsync of a file's data heads it, then a directory's). */
function together(set: readonly CandidateFix[], evidence: string[]): Cause {
  const sorted = [...set].sort((a, b) => (a.cause.kind === 'missing-fsync' ? 0 : 1) - (b.cause.kind === 'missing-fsync' ? 0 : 1));
  const [head, ...rest] = sorted;
  return { ...head.cause, route: 'candidate', alsoSteps: rest.map((c) => c.cause.step!), evidence };
}

/** The directory a candidate's fsync is of (a directory's own path, or a file's folder). */
const folderOf = (c: CandidateFix): string => {
  const step = c.cause.step as Extract<FixStep, { kind: 'fsync-after' }>;
  return step.dir ? step.path : parentOf(step.path);
};
const within = (dir: string, folder: string) => dir === folder || folder === '/' || dir.startsWith(`${folder}/`);
/** Whether a directory candidate's entry names the next folder (or the file) on the way to `file`. */
function onPathTo(d: CandidateFix, file: string): boolean {
  const dir = folderOf(d);
  if (!d.cause.unit || !d.cause.change || !within(parentOf(file), dir)) return false;
  const next = file.slice(dir === '/' ? 1 : dir.length + 1).split('/')[0];
  return pathPattern(changedPath(d.cause.unit, d.cause.change)) === pathPattern(`${dir === '/' ? '' : dir}/${next}`);
}

/**
 * The fsyncs the recording shows missing before something relied on them (candidates.ts), as one fix
 * on every node, on failing state `own`: all of them at once first; then the files' data reduced with
 * every directory fsync kept (a file whose name is lost is not there at all: narrowed by folder
 * first, then file by file, each left out of the others in a round of recoveries at once); then the
 * directories', of the folders holding or above the files kept first. One recovery a probe (a pass
 * by chance is caught by the proof, which recovers the state again); bounded by `bound` and
 * `deadlineMs`: when they end the reduction, or the time left is too short for one, the whole set is
 * proven (said so). Why not, when all of them together do not cure `own` (the search over what it
 * lost goes on) or the proof does not hold.
 */
async function candidateFsyncs(ctx: ClusterCauseContext, own: JudgedClusterState, fsyncs: readonly CandidateFix[], judged: readonly JudgedClusterState[], deadlineMs: number, bound: SearchBound, maxStates = Infinity): Promise<Explained | { why: string }> {
  if (fsyncs.length === 0) return { why: 'the recording shows no fsync missing before something relied on it at this cut' };
  const slots = ctx.target.clusterStateSlots ?? CLUSTER_STATE_SLOTS;
  const slotCtx = { ...ctx, timeouts: timeoutsForSlots(ctx.timeouts, slots) };
  const started = Date.now();
  let probes = 0;
  const cures = async (set: readonly CandidateFix[]): Promise<boolean> => {
    if (probes >= bound.maxProbes || Date.now() >= Math.min(deadlineMs, started + (bound.maxMs ?? Infinity))) throw new BudgetSpent(`${probes} recoveries`);
    probes++;
    const fix = clusterFixedRun(ctx.recorded, together(set, []), [], true);
    if (!fix?.hypothesis) return false;
    const id = counterpartUnder(fix, own.state.id);
    return !(await recoverClusterState({ ...slotCtx, recorded: fix.recorded }, id, [], id.afterOp, fix.hypothesis)).violations.some((v) => !v.hang);
  };
  const reduce: DdminOptions = { parallel: slots, leaveOneOutFirst: true };
  const isDir = (c: CandidateFix) => c.cause.kind === 'missing-dir-fsync';
  let minimal: CandidateFix[];
  let unreduced: string | undefined;
  try {
    if (!(await cures(fsyncs))) return { why: `the ${fsyncs.length} fsyncs the recording shows missing before something relied on them, all inserted together, do not cure it` };
    // A reduction takes rounds of recoveries, as long as that one each, and its proof one more: when
    // the time left holds fewer, the whole set is proven as it is (a fix, if not the smallest).
    const roundMs = Date.now() - started;
    if (Date.now() + (REDUCTION_ROUNDS + 1) * roundMs > Math.min(deadlineMs, started + (bound.maxMs ?? Infinity))) throw new BudgetSpent(`the time left, under ${REDUCTION_ROUNDS + 1} rounds of ${(roundMs / 1000).toFixed(1)} s`);
    const dirs = fsyncs.filter(isDir);
    const withDirs = (data: readonly CandidateFix[]) => cures([...data, ...dirs]);
    const files = fsyncs.filter((c) => !isDir(c));
    // ddmin keeps one item at least: the directories alone are tried first (a new file's name lost, its data synced).
    const data = files.length === 0 || (dirs.length > 0 && (await withDirs([]))) ? [] : await ddmin(await ddminByGroup(files, folderOf, withDirs, reduce), withDirs, reduce);
    // The entries that make the data kept reachable, one per folder on its path: 1-minimal by
    // construction when they suffice; else the directories holding, or above, the data, reduced.
    const path = dirs.filter((d) => data.some((x) => onPathTo(d, (x.cause.step as Extract<FixStep, { kind: 'fsync-after' }>).path)));
    const near = dirs.filter((d) => data.length === 0 || data.some((x) => within(folderOf(x), folderOf(d))));
    if (path.length > 0 && (await cures([...data, ...path]))) minimal = [...data, ...path];
    else {
      const dirsFrom = near.length < dirs.length && (await cures([...data, ...near])) ? near : dirs;
      minimal = [...data, ...(dirsFrom.length ? await ddmin(dirsFrom, (ds) => cures([...data, ...ds]), reduce) : [])];
    }
  } catch (err) {
    if (!(err instanceof BudgetSpent)) throw err;
    minimal = [...fsyncs];
    unreduced = `not reduced (${err.what}, after ${probes} recoveries): all ${fsyncs.length} kept, each needed or not`;
  }
  const evidence = [
    `read off the recording: ${fsyncs.length} fsyncs missing before something relied on them at this cut; all of them together cure it`,
    unreduced ?? `reduced to ${minimal.length} (${probes} recoveries, ${((Date.now() - started) / 1000).toFixed(1)} s): ${minimal.map((c) => c.cause.title).join('; ')}`,
  ];
  const cause = { ...together(minimal, evidence), search: { probes, ms: Date.now() - started, bound, boundReached: false } };
  const proven = await proveInserted(slotCtx, cause, [], own, judged, deadlineMs, { slots, everyNode: true, maxStates });
  if (!proven) return { why: `candidate "${cause.title}": its fix could not be applied to the recording` };
  const p = proven.proof.proof;
  if (!proofHolds(p) || !p.curesOwnState) return { why: `candidate "${cause.title}" (${minimal.length} fsyncs) failed its proof: ${p.cured} of ${p.failing} failing states cured${p.curesOwnState ? '' : ', not its own'}, ${p.broken} that passed broken` };
  return { cause: { ...cause, fix: proven.fixWords, proof: p }, cures: [...proven.proof.cured], extend: (j) => proven.proof.judge(j) };
}

/** A reduction of the missing fsyncs is tried only when the time left holds this many rounds of recoveries (and one for its proof). */
const REDUCTION_ROUNDS = 4;

/** Withheld confirmations read off a cluster's recording proven per recording at most, the likeliest first. */
const MAX_CLUSTER_CANDIDATES = 3;

/**
 * The causes of a recording's failing states: first each cause proven earlier in the gate run
 * (`known`: its fix carried over and proven here), then the candidates read off the recording (each
 * on every node that makes such requests), then each state no proven cause explains yet is searched
 * (until `deadlineMs`); the fewest proven causes that explain the most states are chosen
 * (attribute.ts) and added to `known`. Returns each failing state's cause; a state left out by the
 * deadline or the bound of `maxSearches` searches, or whose search named nothing, gets an unexplained
 * cause saying so.
 */
/** Count bounds of a recording's explaining (a gate's work budget, which has no time bound): searches, and states a proof judges. */
export interface ExplainLimits {
  maxSearches?: number;
  maxProofStates?: number;
}

export async function explainClusterRun(ctx: ClusterCauseContext, judged: readonly JudgedClusterState[], deadlineMs: number, bound: SearchBound = DEFAULT_SEARCH_BOUND, limits: ExplainLimits & { known?: KnownCauses } = {}): Promise<Map<JudgedClusterState, Cause>> {
  const { known, maxSearches = Infinity } = limits;
  const failing = judged.filter((j) => j.violations.length > 0);
  const found: Explained[] = [];
  const explained = (f: JudgedClusterState) => found.some((e) => e.cause.kind !== 'not-isolated' && e.cures.includes(f));
  const open = () => failing.filter((f) => !explained(f));
  const cutOf = (j: JudgedClusterState): FailingCut => ({ afterOp: j.state.id.afterOp, ...(j.state.id.nodes ? { nodes: j.state.id.nodes } : {}) });
  const view: RecordingView = { trace: ctx.recorded.trace, marks: ctx.recorded.marks, outcomes: ctx.recorded.run.record.outcomes };
  const tried = new Set<string>();
  /** Why each candidate and known cause tried named nothing: said by every state left unexplained. */
  const failedCandidates: string[] = [];
  /** Proves a candidate or carried cause from the first open state it should cure (a lose-unsynced one when there is). */
  const prove = async (cause: Cause, at: readonly JudgedClusterState[]): Promise<void> => {
    const own = at.find((j) => keepsNoUnsynced(j.state.id.policy)) ?? at[0];
    if (!own || tried.has(cause.key) || Date.now() >= deadlineMs) return;
    tried.add(cause.key);
    const e = await proveEveryNode(ctx, cause, own, judged, deadlineMs, limits.maxProofStates);
    if (e) found.push(e);
    else failedCandidates.push(`${cause.route === 'known' ? 'known cause' : 'candidate'} "${cause.title}" failed its proof on this run`);
  };
  for (const k of known?.list() ?? []) {
    const left = open();
    if (left.length === 0) break;
    const carried = carryOver(k, view, left.map(cutOf));
    if (carried) await prove(carried, left);
  }
  // Candidates read off the recording: a withheld confirmation is proven on the drains already judged
  // (no recovery); fsyncs are tried together on the first open state, then reduced (fsyncs.ts).
  const left = open();
  const readOff = left.length ? candidatesOf(view) : [];
  for (const { candidate, cuts } of rankCandidates(readOff.filter((c) => c.cause.step?.kind === 'wait'), left.map(cutOf), MAX_CLUSTER_CANDIDATES)) {
    await prove({ ...candidate.cause, evidence: [`read off the recording: it bites at ${cuts.length} of the ${left.length} failing states no proven cause explained`] }, cuts.map((i) => left[i]).filter((j) => !explained(j)));
  }
  const first = open().find((j) => keepsNoUnsynced(j.state.id.policy));
  if (first && Date.now() < deadlineMs) {
    const e = await candidateFsyncs(ctx, first, readOff.filter((c) => c.cause.step?.kind === 'fsync-after' && bitesAt(c, cutOf(first))), judged, deadlineMs, bound, limits.maxProofStates);
    if ('why' in e) failedCandidates.push(e.why);
    else found.push(e);
  }
  next: for (const f of failing) {
    if (explained(f)) continue;
    if (Date.now() >= deadlineMs) break;
    // A proven fix the proof's time left this state out of: judged under it (one recovery), before a search of its own (many).
    for (const e of found) {
      if (!e.extend || !keepsNoUnsynced(f.state.id.policy) || Date.now() >= deadlineMs) continue;
      if (await e.extend(f)) {
        e.cures.push(f);
        continue next;
      }
    }
    if (Date.now() >= deadlineMs || found.length >= maxSearches) break;
    const e = await explainOne(ctx, f, judged, boundUntil(bound, deadlineMs, 1), deadlineMs, limits);
    found.push({ ...e, cause: { ...e.cause, ...(e.cause.kind !== 'not-isolated' ? { route: 'reduction' as const } : {}) } });
  }
  const candidates = found.filter((e) => e.cause.kind !== 'not-isolated').map((e) => ({ ...e, kind: e.cause.kind, cures: new Set(e.cures.map((j) => failing.indexOf(j))) }));
  const cover = coverStates(failing.length, candidates);
  const given = new Map<number, Cause>();
  for (const { candidate, states } of cover.chosen) {
    for (const i of states) given.set(i, candidate.cause);
    known?.add(candidate.cause, ctx.recorded.trace);
  }
  const searchesBound = found.length >= maxSearches;
  const notSearched: Cause = {
    kind: 'not-isolated', key: 'unexplained not-searched', title: 'unexplained: not searched', evidence: [], search: { probes: 0, ms: 0, bound, boundReached: searchesBound },
    fix: `not searched: ${searchesBound ? `the recording's bound of ${maxSearches} searches was reached` : 'the causes\' share of the budget ran out'} before this state's turn`,
  };
  // In the order of the failing states: a named cause, else what the state's own search said, else not searched; an unexplained one says which candidates failed.
  const saying = (c: Cause): Cause => (c.kind === 'not-isolated' && failedCandidates.length ? { ...c, tried: failedCandidates } : c);
  return new Map(failing.map((f, i) => [f, given.get(i) ?? saying(found.find((e) => e.cures.includes(f))?.cause ?? notSearched)]));
}
