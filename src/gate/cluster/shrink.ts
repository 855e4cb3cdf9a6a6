// Shrinking a cluster gate's new distinct failure within the shrink phase's share (or, under a work
// budget, MAX_SHRINK_INPUTS candidates): a crash state's workload by its steps, each candidate
// recorded and its states of the cut kind judged; a live cut's by its pause, then its steps, each
// candidate run live again. The smallest that fails the same way replaces the group's artifact.
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { kindOfCut, type CutKind } from '../../faults/cut-kinds.js';
import type { NodePause } from '../../faults/live-draw.js';
import type { ClusterArtifactCase } from '../../harness/artifacts.js';
import { groupKeyOf, type Cause } from '../../harness/cause/cause.js';
import type { JudgedClusterState } from '../../harness/cluster/cluster-cause.js';
import type { ClusterStateVerdict } from '../../harness/cluster/cluster-pool.js';
import { runClusterCase, type ClusterInput } from '../../harness/cluster/cluster-run.js';
import type { TempDaemon } from '../../harness/daemon-process.js';
import { violatedChecks } from '../../harness/oracle.js';
import { within } from '../../harness/time-share.js';
import { spreadEvenly } from '../../../fusefs/model/spread.js';
import type { ClusterJudged, ClusterRecording } from '../cluster-cases.js';
import { shrinkLiveCase, shrinkSteps, type ShrinkBound } from '../cluster-shrink.js';
import { MAX_SHRINK_INPUTS, MAX_SHRINK_MS, MIN_SHRINK_MS } from '../phases.js';
import { liveJudged, recordingOf, replaceArtifact, stateArtifact } from './artifacts.js';
import { explainStates } from './causes.js';
import type { ClusterRun } from './run.js';

/** A workload's top-level step: what shrinking leaves out. */
type Step = ClusterInput['workload']['steps'][number];
/** A shrink candidate fails the same way when one of at most this many of its states of the cut kind (spread over its run) does. */
const SHRINK_STATES = 24;

/**
 * A new failure's shrink bound: within the shrink phase's share (at most MAX_SHRINK_MS, a
 * candidate as long as `candidateMs` must fit), or under a work budget MAX_SHRINK_INPUTS candidates;
 * undefined when the share left holds none.
 */
function shrinkBound(run: ClusterRun, candidateMs: number): ShrinkBound | undefined {
  if (run.budget.untimed) return { endsAtMs: Infinity, maxCandidates: MAX_SHRINK_INPUTS };
  const shrinkMs = Math.min(MAX_SHRINK_MS, run.phases.leftMs('shrink'));
  return shrinkMs < Math.max(MIN_SHRINK_MS, candidateMs) ? undefined : { endsAtMs: Date.now() + shrinkMs - candidateMs };
}

/** The case with only `steps` of its workload (fitted to its settings, as every workload is): a shrink candidate. */
function withSteps(run: ClusterRun, input: ClusterInput, steps: readonly Step[]): ClusterInput {
  return { ...input, workload: run.target.fitWorkload({ ...input.workload, steps: [...steps] }, input.settings) };
}

/** How a shrink ended, for the gate's line: its candidates, and what cut it short. */
function shrinkWords(run: ClusterRun, small: { tried: number; cutShort: boolean }): string {
  return `${small.tried} candidates${small.cutShort ? `, cut short by the shrink's ${run.budget.untimed ? 'bound of candidates' : 'time'}` : ''}`;
}

/**
 * The states of `kind` of a recording, spread over the run (at most SHRINK_STATES), judged in the
 * pool until one fails `checks` exactly: what a shrink candidate must show to fail the same way.
 */
async function sameFailuresIn(run: ClusterRun, rec: ClusterRecording, daemon: TempDaemon, kind: CutKind, checks: readonly string[], all = false): Promise<ClusterStateVerdict[]> {
  const queue = spreadEvenly(rec.states.filter((x) => kindOfCut(run.asked, x.id.nodes, run.nodes) === kind), SHRINK_STATES);
  const same: ClusterStateVerdict[] = [];
  await run.pool.judge(daemon.daemon, rec, () => (same.length > 0 && !all ? undefined : queue.shift()), (v) => {
    if ((all || same.length === 0) && v.violations.length > 0 && violatedChecks(v.violations).join() === checks.join()) same.push(v);
  }, run.phases.deadlineMs('shrink'));
  return same;
}

/**
 * Shrinks the workload of a new distinct failure found at a crash state (its group `key`) within
 * the shrink phase's share, keeping its cut kind and checks; the smallest is recorded again (the
 * daemon must hold the recording its artifact's images come from), judged, and for a named cause
 * searched again: only when it fails the same way, with the same cause, does its artifact replace
 * the group's, and the gate says so.
 */
export async function shrinkState(run: ClusterRun, key: string, kind: CutKind, input: ClusterInput): Promise<void> {
  const group = run.failures.get(key);
  const bound = shrinkBound(run, 0);
  if (!group || !bound || input.workload.steps.length < 2) return;
  const row = run.row(kind);
  const daemon = run.daemons.current;
  const candidate = (steps: readonly Step[]) => withSteps(run, input, steps);
  run.ctx.doing(`shrinking ${group.title}`);
  await within(run.phases.share('shrink'), async () => {
    const small = await shrinkSteps(input.workload.steps, async (steps) => (await sameFailuresIn(run, await run.record(daemon.daemon, candidate(steps)), daemon, kind, group.checks)).length > 0, bound);
    if (small.steps.length === input.workload.steps.length) return;
    const smaller = candidate(small.steps);
    const rec = await run.record(daemon.daemon, smaller);
    // A sample: the smallest candidate's new recording need not fail again.
    const failing = await sameFailuresIn(run, rec, daemon, kind, group.checks, true);
    let v = failing[0];
    if (!v) return;
    let cause: Cause | undefined;
    if (group.cause && group.cause.kind !== 'not-isolated' && run.o.groupBy !== 'signature') {
      // Every state failing the same way is explained, and the first whose cause is the group's kept:
      // a line may claim what several fsyncs make true, each state needing the one its cut came before.
      const judged = failing.map((f): JudgedClusterState => ({ state: f.state, violations: f.violations, drain: f.runs[f.runs.length - 1] }));
      const causes = await explainStates(run, daemon.daemon, smaller, rec.recorded, judged, run.phases.deadlineMs('shrink'));
      const at = judged.findIndex((j) => { const c = causes.get(j); return c !== undefined && groupKeyOf(c) === key; });
      if (at < 0) return;
      v = failing[at];
      cause = causes.get(judged[at]);
    }
    const { c, judged } = stateArtifact(run, rec, v);
    // An unnamed group's search ran on the first case, not on this one: its artifact says no cause.
    if (await replaceArtifact(run, key, row, c, judged, (dir) => daemon.daemon.client.stateImage(v.state.id, dir), cause, recordingOf(rec, daemon))) {
      run.ctx.log(`${row.name}: shrank "${group.title}" from ${input.workload.steps.length} steps to ${small.steps.length} (${shrinkWords(run, small)})`);
    }
  });
}

/**
 * Shrinks a live cut's new distinct failure (its group `key`) within the shrink phase's share:
 * first without its pause, then ddmin over its steps, each candidate run live with the same cut
 * request, nodes and seed. A candidate fails the same way when its cut landed and it failed the
 * same checks. Each run interleaves anew, a sample: the smallest seen failing replaces the
 * artifact, with each cut node's disk at its own cut.
 */
export async function shrinkLive(run: ClusterRun, key: string, kind: CutKind, c: ClusterArtifactCase, input: ClusterInput, daemon: TempDaemon, runMs: number): Promise<void> {
  const group = run.failures.get(key);
  // A candidate starts only when a run as long as the first one still ends within the share.
  const bound = shrinkBound(run, runMs);
  if (!group || !bound || (input.workload.steps.length < 2 && !c.pause)) return;
  const row = run.row(kind);
  let best: { c: ClusterArtifactCase; judged: ClusterJudged; atCut: string } | undefined;
  const fails = async (steps: readonly Step[], pause: NodePause | undefined): Promise<boolean> => {
    const smaller = withSteps(run, input, steps);
    const atCut = await mkdtemp(path.join(os.tmpdir(), 'powercut-cluster-live-images-'));
    let r: Awaited<ReturnType<typeof runClusterCase>>;
    try {
      r = await runClusterCase(daemon.daemon, run.target, { ...smaller, cut: c.cut!, nodesCut: c.nodesCut!, policy: 'lose-unsynced', seed: c.seed, ...(pause ? { pause } : {}) }, run.timeouts, path.join(atCut, 'cut-0-after-crash'));
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
  run.ctx.doing(`shrinking ${group.title}`);
  try {
    await within(run.phases.share('shrink'), async () => {
      const small = await shrinkLiveCase(input.workload.steps, c.pause, fails, bound);
      const fewerSteps = small.steps.length < input.workload.steps.length;
      if (!best || (!fewerSteps && !small.pauseDropped)) return;
      const how = [...(small.pauseDropped ? ['without its pause'] : []), ...(fewerSteps ? [`from ${input.workload.steps.length} steps to ${small.steps.length}`] : [])].join(', then ');
      const images = existsSync(path.join(best.atCut, 'cut-0-after-crash')) ? best.atCut : undefined;
      if (await replaceArtifact(run, key, row, best.c, best.judged, images, undefined)) run.ctx.log(`${row.name}: shrank "${group.title}" ${how} (${shrinkWords(run, small)}; each a live run, a sample)`);
    });
  } finally {
    if (best) await rm(best.atCut, { recursive: true, force: true });
  }
}
