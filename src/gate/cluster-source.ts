// The cases of a cluster target (target.nodeCount(settings) > 1), as a case source of the gate loop
// (case-source.ts): seeded generated workloads, each a unit, recorded once on one daemon serving a
// mount per node; per workload, its coordinated and mixed crash states of the kinds asked (spread
// over the run, the kinds in turn, recovered in the parallel slots of the ClusterStatePool, within
// the budget; under a work budget every state within the caps), then a live cut of each kind at a
// seeded request and seeded nodes, restarted while the run goes on. A work budget (--cases N) runs
// N workloads, each in full, with no time bound anywhere: the same work on any machine; what it
// finds is a sample, since each recording of several nodes interleaves anew. One row per cut kind; the floor asks each kind for a judged case. A workload's
// failing states get their causes searched once all its states are judged (cluster-cause.ts, within
// the causes' share; a cause is named only when its proof holds on them), and group by cause; the
// rest, and live cuts, by check, cut kind and nodes. Each group gets an artifact: a state's with its
// nodes' images (replay recovers them exactly), a live cut's with each cut node's disk at the cut
// (replay re-runs it, a sample).
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import type { CrashStateInfo, StatePolicy } from '../../fusefs/crash-states.js';
import { nodeCountOf } from '../targets/index.js';
import { crashInputArb, mutantInputArb } from '../../properties/crash-property.js';
import { replayOf, writeCause, writeClusterArtifact, writeRecording, type ClusterArtifactCase } from '../harness/artifacts.js';
import { DEFAULT_SEARCH_BOUND, type Cause, type SearchBound } from '../harness/cause/cause.js';
import { KnownCauses } from '../harness/cause/known-causes.js';
import { EXPLAIN_BOUNDS } from '../harness/exhaustive/explain.js';
import { explainClusterRun, type ExplainLimits, type JudgedClusterState } from '../harness/cluster/cluster-cause.js';
import { CLUSTER_STATE_SLOTS, ClusterStatePool, ClusterStateError, type ClusterStateVerdict } from '../harness/cluster/cluster-pool.js';
import { runClusterCase, type ClusterInput } from '../harness/cluster/cluster-run.js';
import { drawLiveCase, type NodePause } from '../harness/cluster/live-draw.js';
import { countContract, policyCoverage, runFeatures } from '../harness/coverage.js';
import { startTempDaemon, type TempDaemon } from '../harness/daemon-process.js';
import { keepStartingState } from '../harness/starting-state.js';
import { mergeTimeouts, type DriverRun } from '../harness/driver-process.js';
import { violatedChecks } from '../harness/oracle.js';
import { contractOf } from '../harness/outcome.js';
import { within } from '../harness/time-share.js';
import type { TargetRef, TargetSettings } from '../harness/target.js';
import { drawArtifactReport } from '../report/index.js';
import { newRow, type GateRow } from '../report/gate-results.js';
import type { CaseSource, GateContext } from './case-source.js';
import { recordCluster, type ClusterJudged, type ClusterRecording } from './cluster-cases.js';
import { StateTurns } from '../harness/cluster/state-turns.js';
import { CLUSTER_LOSE_UNSYNCED_SHARE, countCut, countRequests, emptyClusterCoverage, kindFloor, kindShareFloor, type ClusterCoverage } from './cluster-coverage.js';
import { cutSizes, DEFAULT_NODES_CUT, describeClusterCut, KIND_ROW, kindOfCut, kindsAsked, seededRandom, spreadOrder, type CutKind } from './cluster-kinds.js';
import { statesUnder, type FloorRequirement } from './floor.js';
import { shrinkLiveCase, shrinkSteps, type ShrinkBound } from './cluster-shrink.js';
import { Steering } from './steering.js';
import { MAX_SHRINK_INPUTS, MAX_SHRINK_MS, MIN_SHRINK_MS } from './phases.js';
import { spreadEvenly } from '../../fusefs/model/spread.js';
import { nextWorkload } from './scheduler.js';
import { roundSeed } from './suites.js';

/** The crash policies of a cluster's states unless --policy says otherwise: lose-unsynced (torn and journaled multiply the states by each cut node's outcomes). */
export const DEFAULT_CLUSTER_POLICIES: readonly StatePolicy[] = ['lose-unsynced'];

/** The lists' items in turn: the first of each, then the second of each... */
function interleave<T>(lists: readonly (readonly T[])[]): T[] {
  const out: T[] = [];
  for (let i = 0; i < Math.max(0, ...lists.map((l) => l.length)); i++) for (const l of lists) if (i < l.length) out.push(l[i]);
  return out;
}

/** A workload's crash states are judged for this long at most (the kinds in turn, each spread over the run), so later workloads get turns. */
export const MAX_STATES_SLICE_MS = 30_000;
/** Live cuts of each kind per workload, unless --live-cuts says otherwise. */
export const DEFAULT_LIVE_CUTS = 1;
/** Below this much budget no new state is judged (a state's recovery takes a second or so), except for a kind still owed one. */
const MIN_STATE_MS = 2_000;
/** No live cut is expected to take less (a live cut runs the workload, restarts its nodes and drains the whole cluster: a few seconds). */
const MIN_LIVE_MS = 6_000;

/**
 * What a live cut of this workload is expected to take: its run as long as the recording's, then a
 * drain as long as the longest state's recovery so far (MIN_STATE_MS before any). Seen: NATS R3's
 * live cuts took 24 to 27 s each, and three of them at 6 s each had put a 120 s gate 62 s over.
 */
function liveCutCostMs(recordMs: number, longestRecoveryMs: number | undefined): number {
  return Math.max(MIN_LIVE_MS, recordMs + (longestRecoveryMs ?? MIN_STATE_MS));
}

/** A workload's top-level step: what shrinking leaves out. */
type Step = ClusterInput['workload']['steps'][number];
/** What an artifact keeps of a live run. */
const liveJudged = (r: Awaited<ReturnType<typeof runClusterCase>>): ClusterJudged => ({ violations: r.violations, runs: r.runs, trace: r.trace, frozenAt: r.frozenAt, stderr: r.stderr });

/** The kinds cut live: every kind. */
export const LIVE_KINDS: readonly CutKind[] = ['coordinated', 'one', 'minority', 'majority'];
/** The chance of a pause before a live cut of some nodes, and how long one lasts. */
const PAUSE_CHANCE = 0.5;
const MIN_PAUSE_MS = 100;
const MAX_GATE_PAUSE_MS = 1_000;
/** A shrink candidate fails the same way when one of at most this many of its states of the cut kind (spread over its run) does. */
const SHRINK_STATES = 24;
/**
 * Under a work budget a fix's proof judges at most this many states' counterparts (the state it was
 * found on, one that passed, then failing and passed ones in turn): each is a cluster's recovery.
 */
const MAX_PROOF_STATES = 24;
/** The tool failing this often ends the run: it is broken, not the queue. */
const MAX_ERRORS = 3;

type How = 'state' | 'live';

/** A crash state's recorded run, for its artifact: the daemon writes its calls, the run as recorded. */
interface RecordingKept {
  saveCalls: (file: string) => Promise<void>;
  run: DriverRun;
}

/** The requests of the recorded run before its open line (every node's recovery): a live run opens with as many. */
function openedAfter(rec: ClusterRecording): number {
  // The last open: a workload that reopens its cluster opens it again, and a majority cut must come after that too.
  const outcomes = rec.recorded.run.record.outcomes;
  const line = outcomes.map((o) => o.t).lastIndexOf('open') + 1;
  return rec.recorded.marks.find((m) => m.n === line)?.afterOp ?? 0;
}

/** The cut kinds of a cluster of `nodes` nodes. */
export function clusterSource(ctx: GateContext, nodes: number): CaseSource {
  const { o, target, budget, phases, daemons, failures: distinct } = ctx;
  const choice = o.nodesCut ?? DEFAULT_NODES_CUT;
  const asked = kindsAsked(choice, nodes);
  if (asked.length === 0) throw new Error(`a cluster of ${nodes} nodes has no cut of kind ${choice}`);
  const liveCuts = o.liveCuts ?? DEFAULT_LIVE_CUTS;
  const policies: readonly StatePolicy[] = o.policies ?? DEFAULT_CLUSTER_POLICIES;
  const variantSettings: TargetSettings = o.variant !== undefined ? target.knownBad[o.variant].settings : {};
  const forced = { ...variantSettings, ...o.settings };
  const timeouts = mergeTimeouts();
  const random = seededRandom(roundSeed(o.seed, -2, 0));
  /** Causes proven so far: each later recording tries them first (one proof each, before any search). */
  const known = new KnownCauses();
  // How each case names its target: an external driver by its command (with its node count), a built-in one by name.
  const ref: TargetRef = o.driver ? { driver: o.driver } : { target: target.name };
  const inputOptions = { ...ref, kind: 'exhaustive' as const, settings: forced, ...(o.variant !== undefined ? { variant: o.variant } : {}) };
  const arb = crashInputArb(inputOptions);
  // As on one disk: most workloads mutate one whose recording reached a feature seen least (one
  // "suite": the cut kinds share each recording).
  const steering = o.steering ?? new Steering(roundSeed(o.seed, -1, -1));

  const rows = new Map<CutKind, GateRow>(asked.map((k) => [k, newRow(KIND_ROW[k], 'suite')]));
  // Each kind judges a case and a share of the lose-unsynced states it listed; with several policies,
  // a state under each (a state of the first is judged before any of the next).
  const floors = new Map<GateRow, readonly FloorRequirement[]>(asked.map((k) => [rows.get(k)!, [
    kindFloor(k, liveCuts > 0 && LIVE_KINDS.includes(k)), kindShareFloor(), ...(policies.length > 1 ? policies.map(statesUnder) : []),
  ]]));
  const cov: ClusterCoverage = emptyClusterCoverage(nodes, choice, asked);
  const owed = (k: CutKind) => rows.get(k)!.cases === 0;
  // With several policies the floor also asks a state under each: owed too, so a slow machine cannot fall below it.
  const owedUnder = (k: CutKind, p: StatePolicy) => policies.length > 1 && (rows.get(k)!.coverage.policies[p]?.states ?? 0) === 0;
  const owesAny = (k: CutKind) => owed(k) || policies.some((p) => owedUnder(k, p));
  let stopped = false;
  // Under a work budget a cause search is bounded by its probes, a recording's by its searches, a
  // proof by the states it judges, never by time.
  const searchBound: SearchBound = budget.untimed ? { maxProbes: DEFAULT_SEARCH_BOUND.maxProbes } : DEFAULT_SEARCH_BOUND;
  const limits: ExplainLimits = budget.untimed ? { maxSearches: EXPLAIN_BOUNDS.maxSearches, maxProofStates: MAX_PROOF_STATES } : {};

  /** A failure of the tool: the row says so, and a fresh daemon serves what follows (none, or the MAX_ERRORS-th failure: the run ends). */
  const toolFailed = async (row: GateRow, what: string, err: unknown): Promise<void> => {
    row.errors.push(`${what} failed (the tool, not the queue): ${err instanceof Error ? err.message : String(err)}`);
    ctx.log(`${row.name}: ERROR ${row.errors[row.errors.length - 1].split('\n')[0]}`);
    if (!(await daemons.restart(row))) stopped = true;
  };

  /**
   * Writes a failing case's artifact (with its cause and report.html) within the artifacts' share;
   * undefined when that failed (the row says why; the failure stands). `images`: as found() takes them.
   */
  const keepArtifact = async (row: GateRow, key: string, c: ClusterArtifactCase, judged: ClusterJudged, images: ((dir: string) => Promise<void>) | string | undefined, cause: Cause | undefined, recording?: RecordingKept): Promise<string | undefined> => {
    let artifactDir: string | undefined;
    let imagesDir: string | undefined;
    try {
      await within(phases.share('artifacts'), async () => {
        if (typeof images === 'function') {
          imagesDir = await mkdtemp(path.join(os.tmpdir(), 'powercut-cluster-images-'));
          await images(path.join(imagesDir, 'cut-0-after-crash'));
        }
        const kept = typeof images === 'string' ? images : imagesDir;
        if (kept) await keepStartingState(daemons.current.daemon, kept);
        artifactDir = await writeClusterArtifact(o.artifactRoot, target.name, { ...judged, case: c }, typeof images === 'string' ? images : imagesDir);
        if (cause) await writeCause(artifactDir, cause);
        if (recording) await writeRecording(artifactDir, recording.saveCalls, recording.run);
        await drawArtifactReport(artifactDir);
      });
    } catch (err) {
      row.errors.push(`writing the artifact of "${key}" failed (the failure stands): ${err instanceof Error ? err.message : String(err)}`);
    } finally {
      if (imagesDir) await rm(imagesDir, { recursive: true, force: true });
    }
    return artifactDir;
  };

  /** Counts a failing state or case under its group; a new group keeps an artifact (with report.html), and its key is returned. */
  /** `images`: writes a state's images into the folder it is given, or the folder of a live cut's images, already written. */
  /** `cause`: a state's, when its search named one (proven) or said why none is; a live cut has none. */
  const found = async (kind: CutKind, how: How, c: ClusterArtifactCase, judged: ClusterJudged, images?: ((dir: string) => Promise<void>) | string, cause?: Cause, recording?: RecordingKept): Promise<string | undefined> => {
    const row = rows.get(kind)!;
    row.violations++;
    cov.perKind[kind]!.failing++;
    const checks = violatedChecks(judged.violations);
    const cutNodes = how === 'state' ? c.state?.nodes : c.nodesCut;
    const signature = `${checks.join(', ')} after ${describeClusterCut(how, cutNodes, c.state?.policy)}${c.pause ? ' after a pause' : ''}`;
    // A named cause groups its states whatever their cut; an unexplained state groups by what it failed and where.
    const named = cause !== undefined && cause.kind !== 'not-isolated';
    const key = named ? cause.key : signature;
    // An unexplained state's cause says why (not searched, not isolated, not provable): its group is its signature's.
    const kept = cause && !named ? { ...cause, key } : cause;
    if (distinct.countKnown(key, row, signature)) return undefined;
    const artifactDir = await keepArtifact(row, key, c, judged, images, kept, recording);
    const messages = judged.violations.map((v) => v.message);
    distinct.add({
      key, title: named ? cause.title : signature, count: 1, signatures: [{ signature, count: 1 }], foundBy: [row.name], checks, messages,
      ...(kept ? { cause: kept } : {}),
      ...(artifactDir ? replayOf(artifactDir, c) : {}),
    }, named ? `${cause.title} (${signature})` : signature);
    row.failure ??= { key, messages, ...(artifactDir ? replayOf(artifactDir, c) : {}) };
    if (o.stopOnFirst) stopped = true;
    return key;
  };

  /** Counts a judged state in its row and the cluster's coverage. */
  const stateJudged = (v: ClusterStateVerdict, kind: CutKind): void => {
    const row = rows.get(kind)!;
    const s = v.state;
    // The slot's time over the slots at once: the rows add up to the wall time the states took.
    row.durationMs += v.recoverMs / pool.size;
    row.cases++;
    row.coverage.cases++;
    row.coverage.states++;
    policyCoverage(row.coverage, s.id.policy).states++;
    countContract(row.coverage, contractOf(v.runs[0]?.outcomes ?? []));
    cov.perKind[kind]!.states++;
    if (v.shared) cov.statesShared++;
    countCut(cov, s.id.nodes, 'state');
  };

  /** A judged state of a recording as its artifact keeps it: its case and what was judged. */
  const stateArtifact = (rec: ClusterRecording, v: ClusterStateVerdict): { c: ClusterArtifactCase; judged: ClusterJudged } => {
    const { id } = v.state;
    const { trace, marks } = rec.recorded;
    return {
      c: { ...ref, ...rec.input, policy: id.policy, seed: 0, nodes, state: id, stateCaps: rec.caps, recoveredOn: 'native' },
      judged: { violations: v.violations, runs: v.runs, trace, marks, frozenAt: id.afterOp + 1 <= trace.length ? id.afterOp + 1 : null, stderr: [rec.recorded.run.stderr, v.drainStderr] },
    };
  };

  /** A state's recorded run, kept with its artifact (the daemon still holds it when the artifact is written). */
  const recordingOf = (rec: ClusterRecording, daemon: TempDaemon): RecordingKept => ({ saveCalls: (file) => daemon.daemon.client.saveRecording(file), run: rec.recorded.run });

  /** A failing state of the recording (its cause searched or not), grouped and, if new, kept as an artifact; the key of a new group. */
  const stateFailed = async (rec: ClusterRecording, v: ClusterStateVerdict, kind: CutKind, daemon: TempDaemon, cause: Cause | undefined): Promise<string | undefined> => {
    const { c, judged } = stateArtifact(rec, v);
    // The slot's folder is its next state's by now: the artifact's images are written again, from the state.
    return found(kind, 'state', c, judged, (dir) => daemon.daemon.client.stateImage(v.state.id, dir), cause, recordingOf(rec, daemon));
  };

  /**
   * The states of `kind` of a recording, spread over the run (at most SHRINK_STATES), judged in the
   * pool until one fails `checks` exactly: what a shrink candidate must show to fail the same way.
   */
  const sameFailureIn = async (rec: ClusterRecording, daemon: TempDaemon, kind: CutKind, checks: readonly string[]): Promise<ClusterStateVerdict | undefined> => {
    const queue = spreadEvenly(rec.states.filter((x) => kindOfCut(asked, x.id.nodes, nodes) === kind), SHRINK_STATES);
    let same: ClusterStateVerdict | undefined;
    await pool.judge(daemon.daemon, rec, () => (same ? undefined : queue.shift()), (v) => {
      if (!same && v.violations.length > 0 && violatedChecks(v.violations).join() === checks.join()) same = v;
    }, phases.deadlineMs('shrink'));
    return same;
  };

  /**
   * Shrinks the workload of a new distinct failure found at a crash state (its group `key`) within
   * the shrink phase's share, keeping its cut kind and checks; the smallest is recorded again (the
   * daemon must hold the recording its artifact's images come from), judged, and for a named cause
   * searched again: only when it fails the same way, with the same cause, does its artifact replace
   * the group's, and the gate says so.
   */
  const shrinkState = async (key: string, kind: CutKind, input: ClusterInput): Promise<void> => {
    const group = distinct.get(key);
    const bound = shrinkBound(0);
    if (!group || !bound || input.workload.steps.length < 2) return;
    const row = rows.get(kind)!;
    const daemon = daemons.current;
    const candidate = (steps: readonly Step[]) => withSteps(input, steps);
    const record = (c: ClusterInput) => recordCluster(daemon.daemon, target, c, o.caps?.maxStates ?? 1_000, timeouts, policies);
    ctx.doing(`shrinking ${group.title}`);
    await within(phases.share('shrink'), async () => {
      const small = await shrinkSteps(input.workload.steps, async (steps) => (await sameFailureIn(await record(candidate(steps)), daemon, kind, group.checks)) !== undefined, bound);
      if (small.steps.length === input.workload.steps.length) return;
      const smaller = candidate(small.steps);
      const rec = await record(smaller);
      const v = await sameFailureIn(rec, daemon, kind, group.checks);
      // A sample: the smallest candidate's new recording need not fail again.
      if (!v) return;
      let cause: Cause | undefined;
      if (group.cause && group.cause.kind !== 'not-isolated' && o.groupBy !== 'signature') {
        const judged: JudgedClusterState = { state: v.state, violations: v.violations, drain: v.runs[v.runs.length - 1] };
        cause = (await explainClusterRun({ daemon: daemon.daemon, target, input: smaller, recorded: rec.recorded, timeouts }, [judged], phases.deadlineMs('shrink'), searchBound, { ...limits, known })).get(judged);
        if (cause?.key !== key) return;
      }
      const { c, judged } = stateArtifact(rec, v);
      // An unnamed group's search ran on the first case, not on this one: its artifact says no cause.
      if (await replaceArtifact(key, row, c, judged, (dir) => daemon.daemon.client.stateImage(v.state.id, dir), cause, recordingOf(rec, daemon))) {
        ctx.log(`${row.name}: shrank "${group.title}" from ${input.workload.steps.length} steps to ${small.steps.length} (${small.tried} candidates${small.cutShort ? `, cut short by the shrink's ${budget.untimed ? 'bound of candidates' : 'time'}` : ''})`);
      }
    });
  };

  /**
   * A new failure's shrink bound: within the shrink phase's share (at most MAX_SHRINK_MS, a
   * candidate as long as `candidateMs` must fit), or under a work budget MAX_SHRINK_INPUTS candidates;
   * undefined when the share left holds none.
   */
  const shrinkBound = (candidateMs: number): ShrinkBound | undefined => {
    if (budget.untimed) return { endsAtMs: Infinity, maxCandidates: MAX_SHRINK_INPUTS };
    const shrinkMs = Math.min(MAX_SHRINK_MS, phases.leftMs('shrink'));
    return shrinkMs < Math.max(MIN_SHRINK_MS, candidateMs) ? undefined : { endsAtMs: Date.now() + shrinkMs - candidateMs };
  };

  /** The case with only `steps` of its workload (fitted to its settings, as every workload is): a shrink candidate. */
  const withSteps = (input: ClusterInput, steps: readonly Step[]): ClusterInput => ({ ...input, workload: target.fitWorkload({ ...input.workload, steps: [...steps] }, input.settings) });

  /** The group's artifact replaced by a smaller case's (the first case's removed); false when it could not be written. */
  const replaceArtifact = async (key: string, row: GateRow, c: ClusterArtifactCase, judged: ClusterJudged, images: ((dir: string) => Promise<void>) | string | undefined, cause: Cause | undefined, recording?: RecordingKept): Promise<boolean> => {
    const group = distinct.get(key)!;
    const artifactDir = await keepArtifact(row, key, c, judged, images, cause, recording);
    if (!artifactDir) return false;
    if (group.artifactDir) await rm(group.artifactDir, { recursive: true, force: true });
    const link = replayOf(artifactDir, c);
    const messages = judged.violations.map((x) => x.message);
    if (row.failure?.key === key) row.failure = { ...row.failure, messages, ...link };
    Object.assign(group, { messages, ...link, ...(cause ? { cause } : {}) });
    return true;
  };

  /**
   * Shrinks a live cut's new distinct failure (its group `key`) within the shrink phase's share:
   * first without its pause, then ddmin over its steps, each candidate run live with the same cut
   * request, nodes and seed. A candidate fails the same way when its cut landed and it failed the
   * same checks. Each run interleaves anew, a sample: the smallest seen failing replaces the
   * artifact, with each cut node's disk at its own cut.
   */
  const shrinkLive = async (key: string, kind: CutKind, c: ClusterArtifactCase, input: ClusterInput, daemon: TempDaemon, runMs: number): Promise<void> => {
    const group = distinct.get(key);
    // A candidate starts only when a run as long as the first one still ends within the share.
    const bound = shrinkBound(runMs);
    if (!group || !bound || (input.workload.steps.length < 2 && !c.pause)) return;
    const row = rows.get(kind)!;
    let best: { c: ClusterArtifactCase; judged: ClusterJudged; atCut: string } | undefined;
    const fails = async (steps: readonly Step[], pause: NodePause | undefined): Promise<boolean> => {
      const smaller = withSteps(input, steps);
      const atCut = await mkdtemp(path.join(os.tmpdir(), 'powercut-cluster-live-images-'));
      let r: Awaited<ReturnType<typeof runClusterCase>>;
      try {
        r = await runClusterCase(daemon.daemon, target, { ...smaller, cut: c.cut!, nodesCut: c.nodesCut!, policy: 'lose-unsynced', seed: c.seed, ...(pause ? { pause } : {}) }, timeouts, path.join(atCut, 'cut-0-after-crash'));
      } catch (err) {
        await rm(atCut, { recursive: true, force: true });
        throw err;
      }
      const same = r.frozenAt !== null && r.violations.length > 0 && violatedChecks(r.violations).join() === group.checks.join();
      if (same) {
        if (best) await rm(best.atCut, { recursive: true, force: true });
        const { pause: _, ...withoutPause } = c;
        best = { c: { ...withoutPause, ...smaller, ...(pause ? { pause } : {}) }, judged: liveJudged(r), atCut };
      } else await rm(atCut, { recursive: true, force: true });
      return same;
    };
    ctx.doing(`shrinking ${group.title}`);
    try {
      await within(phases.share('shrink'), async () => {
        const small = await shrinkLiveCase(input.workload.steps, c.pause, fails, bound);
        const fewerSteps = small.steps.length < input.workload.steps.length;
        if (!best || (!fewerSteps && !small.pauseDropped)) return;
        const how = [...(small.pauseDropped ? ['without its pause'] : []), ...(fewerSteps ? [`from ${input.workload.steps.length} steps to ${small.steps.length}`] : [])].join(', then ');
        const images = existsSync(path.join(best.atCut, 'cut-0-after-crash')) ? best.atCut : undefined;
        if (await replaceArtifact(key, row, best.c, best.judged, images, undefined)) ctx.log(`${row.name}: shrank "${group.title}" ${how} (${small.tried} candidates${small.cutShort ? `, cut short by the shrink's ${budget.untimed ? 'bound of candidates' : 'time'}` : ''}; each a live run, a sample)`);
      });
    } finally {
      if (best) await rm(best.atCut, { recursive: true, force: true });
    }
  };

  /**
   * The causes of a recording's failing states (cluster-cause.ts), within the causes' share of the
   * budget (phases.ts, as on one disk); a failure of the search leaves the states without a cause (the row says why).
   */
  const causesOf = async (rec: ClusterRecording, judged: readonly JudgedClusterState[], daemon: TempDaemon, row: GateRow): Promise<Map<JudgedClusterState, Cause>> => {
    if (o.groupBy === 'signature' || !judged.some((j) => j.violations.length > 0)) return new Map();
    try {
      ctx.doing(`searching the causes of ${judged.filter((j) => j.violations.length > 0).length} failing crash states`);
      return await within(phases.share('causes'), () => explainClusterRun({ daemon: daemon.daemon, target, input: rec.input, recorded: rec.recorded, timeouts }, judged, phases.deadlineMs('causes'), searchBound, { ...limits, known }));
    } catch (err) {
      row.errors.push(`searching the causes of a workload's failing states failed (the failures stand, without their causes): ${err instanceof Error ? err.message : String(err)}`);
      return new Map();
    }
  };

  const liveCut = async (input: ClusterInput, kind: CutKind, requests: number, openedAfterOp: number, seed: number, daemon: TempDaemon): Promise<void> => {
    const row = rows.get(kind)!;
    // A request within the recorded run's first nine tenths, so the live run (whose interleaving may
    // differ) reaches it; a cut of a majority after the cluster opened: a driver restarts a node only
    // once its cluster is open (docs/cluster.md), and no cluster opens without a majority. Half the
    // cuts of some nodes come after a pause of any node (SIGSTOP, then SIGCONT), as the randomised testers pause nodes.
    const lastOp = Math.max(1, Math.floor(requests * 0.9));
    const draw = drawLiveCase(Math.floor(random() * 2 ** 31), requests, nodes, {
      kinds: [kind], sizes: cutSizes(kind, asked, nodes), firstOp: kind === 'majority' ? Math.min(openedAfterOp + 1, lastOp) : 1, lastOp,
      pauseChance: PAUSE_CHANCE, minPauseMs: MIN_PAUSE_MS, maxPauseMs: MAX_GATE_PAUSE_MS,
    });
    const nodesCut: readonly number[] | 'all' = kind === 'coordinated' ? 'all' : draw.nodesCut;
    const atOp = draw.cut.atOp;
    const pause: NodePause | undefined = draw.pause;
    const c: ClusterArtifactCase = { ...ref, ...input, cut: { atOp, timing: 'before' }, nodesCut: nodesCut === 'all' ? 'all' : [...nodesCut], policy: 'lose-unsynced', seed, nodes, ...(pause ? { pause } : {}) };
    ctx.doing(`${row.name}: live cut at request ${atOp} of ${nodesCut === 'all' ? 'every node' : `node(s) ${nodesCut.join(', ')}`}${pause ? `, node ${pause.node} paused at request ${pause.atOp}` : ''}`);
    const started = Date.now();
    let r: Awaited<ReturnType<typeof runClusterCase>>;
    // Each cut node's disk at the cut, kept for the artifact should the case fail: the run goes on past the cut, so no state holds it later.
    const atCut = await mkdtemp(path.join(os.tmpdir(), 'powercut-cluster-live-images-'));
    try {
      try {
        r = await runClusterCase(daemon.daemon, target, { ...input, cut: c.cut, nodesCut, policy: 'lose-unsynced', seed, ...(pause ? { pause } : {}) }, timeouts, path.join(atCut, 'cut-0-after-crash'));
      } catch (err) {
        row.durationMs += Date.now() - started;
        return await toolFailed(row, `the live cut at request ${atOp} (${describeClusterCut('live', nodesCut)})`, err);
      }
      const runMs = Date.now() - started;
      row.durationMs += runMs;
      // A majority cut that landed while the live run's cluster was opening (its interleaving, or a
      // pause, moved an open past the drawn request): no driver restarts a node before its cluster is
      // open and none opens without a majority, so the run could only fail to open. Not a case the
      // gate judges (docs/cluster.md, "Not built yet"): counted as a cut that did not land.
      if (kind === 'majority' && r.frozenAt !== null && r.runs[0]?.outcomes.some((x) => x.t === 'error' && x.where === 'open')) {
        ctx.log(`${row.name}: the live cut at request ${atOp} landed while the cluster was opening; not judged (a majority cut is judged only once the cluster is open)`);
        countLiveCut(kind, nodesCut, { ...r, frozenAt: null });
        return;
      }
      countLiveCut(kind, nodesCut, r);
      // A cut that never landed wrote no image.
      const key = r.violations.length > 0 ? await found(kind, 'live', c, liveJudged(r), existsSync(path.join(atCut, 'cut-0-after-crash')) ? atCut : undefined) : undefined;
      if (key !== undefined && !o.stopOnFirst && r.frozenAt !== null) {
        try {
          await shrinkLive(key, kind, c, input, daemon, runMs);
        } catch (err) {
          ctx.log(`${row.name}: shrinking "${key}" failed (its first case's artifact stays): ${err instanceof Error ? err.message : String(err)}`);
        }
      }
    } finally {
      await rm(atCut, { recursive: true, force: true });
    }
  };

  /** Counts a live cut in its row and the cluster's coverage: requested, landed, paused, its contract. */
  const countLiveCut = (kind: CutKind, nodesCut: readonly number[] | 'all', r: Awaited<ReturnType<typeof runClusterCase>>): void => {
    const row = rows.get(kind)!;
    countRequests(cov, r.trace);
    const landed = r.frozenAt !== null;
    row.coverage.cutsRequested++;
    const pc = policyCoverage(row.coverage, 'lose-unsynced');
    pc.cuts++;
    cov.perKind[kind]!.liveCuts++;
    if (r.pausedAt !== null) cov.perKind[kind]!.livePaused++;
    if (landed) {
      row.cases++;
      row.coverage.cases++;
      row.coverage.cutsLanded++;
      pc.landed++;
      cov.perKind[kind]!.liveLanded++;
      countCut(cov, nodesCut, 'live');
    }
    countContract(row.coverage, contractOf(r.runs[0]?.outcomes ?? []));
  };

  let recordings = 0;
  /** The longest recording of a workload so far: what the next one is expected to take before its first state. */
  let longestRecordMs = 0;
  const pool = new ClusterStatePool(target, nodes, o.slots ?? target.clusterStateSlots ?? CLUSTER_STATE_SLOTS, timeouts);

  /** Workload `input`: recorded, its crash states judged for its slice of the budget, their causes searched, then its live cuts. */
  const workload = async (input: number): Promise<void> => {
    const base = o.generation === 'plain' ? undefined : steering.pick(0);
    const drawn = fc.sample(base ? mutantInputArb(base, inputOptions) : arb, { seed: roundSeed(o.seed, 0, input), numRuns: 1 })[0];
    const drawnNodes = nodeCountOf(target, drawn.settings);
    if (drawnNodes !== nodes) throw new Error(`invariant: every workload of a cluster gate runs on its ${nodes} nodes, but settings ${JSON.stringify(drawn.settings)} give ${drawnNodes} (force the node count with --settings)`);
    const clusterInput: ClusterInput = { workload: drawn.workload, settings: drawn.settings, ...(drawn.variant !== undefined ? { variant: drawn.variant } : {}) };
    const first = rows.get(asked[0])!;
    ctx.doing(`recording workload ${input + 1}`);
    let rec: ClusterRecording;
    const started = Date.now();
    try {
      rec = await recordCluster(daemons.current.daemon, target, clusterInput, o.caps?.maxStates ?? 1_000, timeouts, policies);
    } catch (err) {
      await toolFailed(first, `recording workload ${input + 1}`, err);
      return;
    }
    const recordMs = Date.now() - started;
    longestRecordMs = Math.max(longestRecordMs, recordMs);
    steering.observe(0, drawn, runFeatures(rec.recorded.trace, target.workloadEvents(rec.recorded.trace)));
    first.durationMs += recordMs;
    recordings++;
    cov.recordings++;
    cov.intervals += rec.intervals;
    cov.statesListed += rec.states.length;
    cov.statesCapped += rec.capped;
    countRequests(cov, rec.recorded.trace);
    if (rec.capped > 0) for (const r of rows.values()) if (!r.capsHit.includes('max-states')) r.capsHit.push('max-states');
    const { longestRecoveryMs } = await judgeRecording(rec, clusterInput, input, recordMs);
    // Live: each kind's cuts at seeded requests and nodes, each only when the budget still holds one
    // (or its kind is still owed a case): the states' slice kept their time, but states owed to the
    // floor and the causes may have spent it. A work budget cuts every one.
    const liveCostMs = liveCutCostMs(recordMs, longestRecoveryMs);
    for (let i = 0; i < liveCuts && !stopped; i++) {
      for (const kind of asked.filter((k) => LIVE_KINDS.includes(k))) {
        if (stopped) break;
        if (budget.leftMs() < liveCostMs && !owed(kind)) {
          ctx.log(`${rows.get(kind)!.name}: no live cut of workload ${input + 1}: ${(budget.leftMs() / 1000).toFixed(1)} s of the budget left, and one takes about ${(liveCostMs / 1000).toFixed(1)} s`);
          continue;
        }
        await liveCut(clusterInput, kind, rec.recorded.trace.length, openedAfter(rec), roundSeed(o.seed, 1, input * 97 + i), daemons.current);
      }
    }
  };

  /**
   * A recording's crash states judged in the pool's slots (the kinds in turn; under a time budget for
   * its slice, under a work budget all of them), then counted, their causes searched and their
   * failures kept, in the order they were handed out (never the order the slots finished in), then
   * its new failures shrunk.
   */
  const judgeRecording = async (rec: ClusterRecording, clusterInput: ClusterInput, input: number, recordMs: number): Promise<{ longestRecoveryMs: number | undefined }> => {
    // Offline: the kinds in turn, each kind's states in spread order, for this workload's slice of
    // the budget (leaving room for its live cuts), so each kind gets its first state early.
    const liveKinds = liveCuts > 0 ? asked.filter((k) => LIVE_KINDS.includes(k)).length : 0;
    const slice = Math.min(MAX_STATES_SLICE_MS, budget.leftMs() - liveKinds * liveCuts * liveCutCostMs(recordMs, undefined) - 500);
    // A work budget judges every state within the caps: no slice.
    const sliceEndsMs = budget.untimed ? Infinity : Date.now() + Math.max(0, slice);
    // Each kind's states: its policies in turn, each policy's states in spread order.
    const byKind = asked.map((k) => interleave(policies.map((p) => spreadOrder(rec.states.filter((s) => s.id.policy === p && kindOfCut(asked, s.id.nodes, nodes) === k), random))));
    // What each kind listed under lose-unsynced, for the summary's judged / listed per kind.
    asked.forEach((k, j) => { policyCoverage(rows.get(k)!.coverage, 'lose-unsynced').listed += byKind[j].filter((x) => x.id.policy === 'lose-unsynced').length; });
    // The recording lives in the daemon that made it: after a failure of the tool (a fresh daemon) its states are gone.
    const recordedOn: TempDaemon = daemons.current;
    // The states go to the pool's slots in the kinds' turn (StateTurns); a kind with a state in a
    // slot is not owed another past the slice (the floor asks one judged case, not one per slot).
    const turns = new StateTurns(byKind);
    // States in slots, per kind and per kind and policy: what the floor will have once they are judged.
    const inFlight = asked.map(() => 0);
    const inFlightUnder = asked.map(() => new Map<StatePolicy, number>());
    const kindOfState = new Map<CrashStateInfo, number>();
    /** Each state handed out, by its place in the turns: the order its verdict is counted and kept in. */
    const handedOut = new Map<CrashStateInfo, number>();
    let longestRecoveryMs: number | undefined;
    const verdicts: ClusterStateVerdict[] = [];
    const judgedHere: (JudgedClusterState & { verdict: ClusterStateVerdict; kind: CutKind })[] = [];
    const pastSlice = () => Date.now() >= sliceEndsMs || budget.leftMs() < MIN_STATE_MS;
    // Owed and nothing in a slot that pays it: a kind's case, or its state under policy p (any policy when p is not given).
    const owedUnderNow = (j: number, p: StatePolicy) => owedUnder(asked[j], p) && (inFlightUnder[j].get(p) ?? 0) === 0;
    // The share of its lose-unsynced states a kind must judge (the floor), less those judged and in slots.
    const shareOwedNow = (j: number) => {
      const c = rows.get(asked[j])!.coverage.policies['lose-unsynced'];
      return Math.ceil(CLUSTER_LOSE_UNSYNCED_SHARE * (c?.listed ?? 0)) - (c?.states ?? 0) - (inFlightUnder[j].get('lose-unsynced') ?? 0) > 0;
    };
    const owedNow = (j: number, p?: StatePolicy) => (owed(asked[j]) && inFlight[j] === 0) || ((p === undefined || p === 'lose-unsynced') && shareOwedNow(j)) ||
      (p === undefined ? policies.some((q) => owedUnderNow(j, q)) : owedUnderNow(j, p));
    const next = (): CrashStateInfo | undefined => {
      if (stopped || daemons.running !== recordedOn) return undefined;
      // Past the slice only a kind still owed a case, or a state under a policy, goes on (the floor).
      const t = turns.next((j, st) => !pastSlice() || owedNow(j, st.id.policy), () => Date.now() >= sliceEndsMs && !asked.some((_, j) => owedNow(j)));
      if (!t) return undefined;
      inFlight[t.kind]++;
      inFlightUnder[t.kind].set(t.state.id.policy, (inFlightUnder[t.kind].get(t.state.id.policy) ?? 0) + 1);
      kindOfState.set(t.state, t.kind);
      handedOut.set(t.state, handedOut.size);
      ctx.doing(`${KIND_ROW[asked[t.kind]]}: crash state after request ${t.state.id.afterOp} of workload ${input + 1} (${pool.size} slots)`);
      return t.state;
    };
    // A state still draining when judging's time ends (what the causes and artifacts keep back) is
    // abandoned unjudged: a drain that waits on elections may otherwise hold its slot for its whole
    // bound, stretched for the slots, past the budget (seen: NATS R3, 16-19 s over a 60 s budget).
    const abandonAtMs = phases.deadlineMs('record+judge');
    try {
      // A verdict stays "in flight" for the floor until it is counted below, in the order handed out.
      await pool.judge(recordedOn.daemon, rec, next, async (v) => {
        if (kindOfState.get(v.state) === undefined) throw new Error(`invariant: a judged state was handed out by the turns (state after request ${v.state.id.afterOp})`);
        // --stop-on-first: no state is handed out after a failure; those in slots are judged, and
        // only the first failure in the order handed out is counted below.
        if (o.stopOnFirst && v.violations.length > 0) stopped = true;
        if (!v.shared) longestRecoveryMs = Math.max(longestRecoveryMs ?? 0, v.recoverMs);
        verdicts.push(v);
      }, abandonAtMs);
      verdicts.sort((a, b) => handedOut.get(a.state)! - handedOut.get(b.state)!);
      const firstFailing = verdicts.findIndex((v) => v.violations.length > 0);
      for (const v of o.stopOnFirst && firstFailing >= 0 ? verdicts.slice(0, firstFailing + 1) : verdicts) {
        const j = kindOfState.get(v.state)!;
        inFlight[j]--;
        inFlightUnder[j].set(v.state.id.policy, inFlightUnder[j].get(v.state.id.policy)! - 1);
        stateJudged(v, asked[j]);
        judgedHere.push({ state: v.state, violations: v.violations, drain: v.runs[v.runs.length - 1], verdict: v, kind: asked[j] });
      }
      // The failing states with their causes, once every state of the recording judged here is in (a proof judges them all).
      const causes = await causesOf(rec, judgedHere, recordedOn, rows.get(asked[0])!);
      const newGroups: { key: string; kind: CutKind }[] = [];
      for (const x of judgedHere) {
        if (x.violations.length === 0) continue;
        const key = await stateFailed(rec, x.verdict, x.kind, recordedOn, causes.get(x));
        if (key !== undefined) newGroups.push({ key, kind: x.kind });
      }
      // Once every artifact of this recording is written: shrinking records other workloads on the daemon.
      for (const g of o.stopOnFirst ? [] : newGroups) {
        if (daemons.running !== recordedOn) break;
        try {
          await shrinkState(g.key, g.kind, clusterInput);
        } catch (err) {
          // The first case's artifact stands; a daemon that broke fails the next recording, as the tool's failure.
          ctx.log(`${rows.get(g.kind)!.name}: shrinking "${g.key}" failed (its first case's artifact stays): ${err instanceof Error ? err.message : String(err)}`);
        }
      }
    } catch (err) {
      const j = err instanceof ClusterStateError ? kindOfState.get(err.state) : undefined;
      const row = rows.get(asked[j ?? 0])!;
      const what = err instanceof ClusterStateError ? `recovering ${describeClusterCut('state', err.state.id.nodes)} after request ${err.state.id.afterOp}` : `judging workload ${input + 1}'s crash states`;
      await toolFailed(row, what, err instanceof ClusterStateError ? err.reason : err);
    }
    return { longestRecoveryMs };
  };

  let inputs = 0;
  let overtime = false;
  return {
    unit: 'cluster cuts',
    mode: 'exhaustive',
    startDaemon: () => startTempDaemon('gate-cluster', nodes),
    beforeDaemonStop: async () => {},
    maxToolFailures: MAX_ERRORS,
    rows: () => [...rows.values()],
    floorOf: (row) => floors.get(row) ?? [],
    next() {
      if (stopped) return undefined;
      if (o.cases) {
        // A work budget: its workloads, each in full, whatever the time.
        if (!('total' in o.cases)) throw new Error('invariant: a cluster gate\'s work budget is a number of workloads');
        if (inputs >= o.cases.total) return undefined;
        const input = inputs++;
        return () => workload(input);
      }
      // Past the budget, one more workload runs only for kinds still owed a case (the floor); never a second.
      // A workload fits while judging's time (the budget less what the causes of its failures and
      // the artifacts keep back) holds its recording (the longest so far) and a state; its states and
      // live cuts then keep to what is left. (A fixed 6 s of the whole budget stopped a 20 s gate of
      // the replicated queue, whose recordings take 0.3 s, at 14 s.)
      const starts = nextWorkload(phases.leftMs('record+judge'), longestRecordMs + MIN_STATE_MS, overtime, asked.some(owesAny));
      if (starts === 'none') return undefined;
      if (starts === 'overtime') overtime = true;
      const input = inputs++;
      return () => workload(input);
    },
    stop: () => pool.stop(),
    steered: () => ({ inputs: steering.steered, of: recordings }),
    // Every recording of several nodes interleaves anew: all of them are a sample.
    work: () => ({ inputs, interleaved: inputs, repeat: o.cases ?? { total: inputs }, ...(o.cases && 'total' in o.cases ? { of: o.cases.total } : {}) }),
    clusterCoverage() {
      // Each kind's listed states are counted on its row: the coverage (summary, --json, index.html) says them per kind too.
      for (const [kind, row] of rows) cov.perKind[kind]!.listed = row.coverage.policies['lose-unsynced']?.listed ?? 0;
      return cov;
    },
  };
}
