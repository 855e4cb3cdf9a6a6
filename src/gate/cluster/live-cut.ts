// A cluster gate's live cuts: after a workload's crash states, each kind's cuts at a seeded request
// and seeded nodes (half the cuts of some nodes after a pause of a node), run live while the cluster
// goes on, its cut nodes restarted, the whole cluster drained and judged. A failing cut keeps each
// cut node's disk at the cut for its artifact, and is shrunk.
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { cutsEveryNode, cutSizes, liveCutAfterOpen, type CutKind } from '../../faults/cut-kinds.js';
import { drawLiveCase, type NodePause } from '../../faults/live-draw.js';
import type { ClusterArtifactCase } from '../../harness/artifacts.js';
import { runClusterCase, type ClusterInput } from '../../harness/cluster/cluster-run.js';
import type { TempDaemon } from '../../harness/daemon-process.js';
import type { ClusterRecording } from '../cluster-cases.js';
import { describeClusterCut } from '../cluster-kinds.js';
import { roundSeed } from '../suites.js';
import { liveJudged } from './artifacts.js';
import { liveCutCostMs } from './costs.js';
import { countLiveCut } from './counting.js';
import { found } from './failures.js';
import type { ClusterRun } from './run.js';
import { shrinkLive } from './shrink.js';

/** The chance of a pause before a live cut of some nodes, and how long one lasts. */
const PAUSE_CHANCE = 0.5;
const MIN_PAUSE_MS = 100;
const MAX_GATE_PAUSE_MS = 1_000;

/** The requests of the recorded run before its open line (every node's recovery): a live run opens with as many. */
function openedAfter(rec: ClusterRecording): number {
  // The last open: a workload that reopens its cluster opens it again, and a majority cut must come after that too.
  const outcomes = rec.recorded.run.record.outcomes;
  const line = outcomes.map((o) => o.t).lastIndexOf('open') + 1;
  return rec.recorded.marks.find((m) => m.n === line)?.afterOp ?? 0;
}

/**
 * Workload `input`'s live cuts: each kind's cuts at seeded requests and nodes, each only when the
 * budget still holds one (or its kind is still owed a case): the states' slice kept their time, but
 * states owed to the floor and the causes may have spent it. A work budget cuts every one.
 */
export async function liveCuts(run: ClusterRun, rec: ClusterRecording, clusterInput: ClusterInput, input: number, recordMs: number, longestRecoveryMs: number | undefined): Promise<void> {
  const liveCostMs = liveCutCostMs(recordMs, longestRecoveryMs);
  for (let i = 0; i < run.liveCuts && !run.stopped; i++) {
    for (const kind of run.liveKinds()) {
      if (run.stopped) break;
      if (run.budget.leftMs() < liveCostMs && !run.owed(kind)) {
        run.ctx.log(`${run.row(kind).name}: no live cut of workload ${input + 1}: ${(run.budget.leftMs() / 1000).toFixed(1)} s of the budget left, and one takes about ${(liveCostMs / 1000).toFixed(1)} s`);
        continue;
      }
      await liveCut(run, clusterInput, kind, rec.recorded.trace.length, openedAfter(rec), roundSeed(run.o.seed, 1, input * 97 + i), run.daemons.current);
    }
  }
}

interface DrawnCut {
  /** The case as its artifact keeps it. */
  c: ClusterArtifactCase;
  atOp: number;
  nodesCut: readonly number[] | 'all';
  pause: NodePause | undefined;
}

/** The cut of a live case of `kind`, drawn from the run's seeded stream. */
function drawCut(run: ClusterRun, input: ClusterInput, kind: CutKind, requests: number, openedAfterOp: number, seed: number): DrawnCut {
  // A request within the recorded run's first nine tenths, so the live run (whose interleaving may
  // differ) reaches it; a cut of a majority after the cluster opened: a driver restarts a node only
  // once its cluster is open (docs/cluster.md), and no cluster opens without a majority. Half the
  // cuts of some nodes come after a pause of any node (SIGSTOP, then SIGCONT), as the randomised testers pause nodes.
  const lastOp = Math.max(1, Math.floor(requests * 0.9));
  const draw = drawLiveCase(Math.floor(run.random() * 2 ** 31), requests, run.nodes, {
    kinds: [kind], sizes: cutSizes(kind, run.asked, run.nodes), firstOp: liveCutAfterOpen(kind) ? Math.min(openedAfterOp + 1, lastOp) : 1, lastOp,
    pauseChance: PAUSE_CHANCE, minPauseMs: MIN_PAUSE_MS, maxPauseMs: MAX_GATE_PAUSE_MS,
  });
  const nodesCut: readonly number[] | 'all' = cutsEveryNode(kind) ? 'all' : draw.nodesCut;
  const atOp = draw.cut.atOp;
  const pause: NodePause | undefined = draw.pause;
  const c: ClusterArtifactCase = { ...run.ref, ...input, cut: { atOp, timing: 'before' }, nodesCut: nodesCut === 'all' ? 'all' : [...nodesCut], policy: 'lose-unsynced', seed, nodes: run.nodes, ...(pause ? { pause } : {}) };
  return { c, atOp, nodesCut, pause };
}

/** A live cut of `kind` of the workload `input` (its recording had `requests` requests, its cluster open after `openedAfterOp`): run, counted, and if failing grouped, kept and shrunk. */
async function liveCut(run: ClusterRun, input: ClusterInput, kind: CutKind, requests: number, openedAfterOp: number, seed: number, daemon: TempDaemon): Promise<void> {
  const row = run.row(kind);
  const { c, atOp, nodesCut, pause } = drawCut(run, input, kind, requests, openedAfterOp, seed);
  run.ctx.doing(`${row.name}: live cut at request ${atOp} of ${nodesCut === 'all' ? 'every node' : `node(s) ${nodesCut.join(', ')}`}${pause ? `, node ${pause.node} paused at request ${pause.atOp}` : ''}`);
  const started = Date.now();
  let r: Awaited<ReturnType<typeof runClusterCase>>;
  // Each cut node's disk at the cut, kept for the artifact should the case fail: the run goes on past the cut, so no state holds it later.
  const atCut = await mkdtemp(path.join(os.tmpdir(), 'powercut-cluster-live-images-'));
  try {
    try {
      r = await runClusterCase(daemon.daemon, run.target, { ...input, cut: c.cut, nodesCut, policy: 'lose-unsynced', seed, ...(pause ? { pause } : {}) }, run.timeouts, path.join(atCut, 'cut-0-after-crash'));
    } catch (err) {
      row.durationMs += Date.now() - started;
      return await run.toolFailed(row, `the live cut at request ${atOp} (${describeClusterCut('live', nodesCut)})`, err);
    }
    const runMs = Date.now() - started;
    row.durationMs += runMs;
    // A majority cut that landed while the live run's cluster was opening (its interleaving, or a
    // pause, moved an open past the drawn request): no driver restarts a node before its cluster is
    // open and none opens without a majority, so the run could only fail to open. Not a case the
    // gate judges (docs/cluster.md, "Not built yet"): counted as a cut that did not land.
    if (liveCutAfterOpen(kind) && r.frozenAt !== null && r.runs[0]?.outcomes.some((x) => x.t === 'error' && x.where === 'open')) {
      run.ctx.log(`${row.name}: the live cut at request ${atOp} landed while the cluster was opening; not judged (a majority cut is judged only once the cluster is open)`);
      countLiveCut(run, kind, nodesCut, { ...r, frozenAt: null });
      return;
    }
    countLiveCut(run, kind, nodesCut, r);
    // A cut that never landed wrote no image.
    const key = r.violations.length > 0 ? await found(run, kind, 'live', c, liveJudged(r), existsSync(path.join(atCut, 'cut-0-after-crash')) ? atCut : undefined) : undefined;
    if (key !== undefined && !run.o.stopOnFirst && r.frozenAt !== null) {
      try {
        await shrinkLive(run, key, kind, c, input, daemon, runMs);
      } catch (err) {
        run.ctx.log(`${row.name}: shrinking "${key}" failed (its first case's artifact stays): ${err instanceof Error ? err.message : String(err)}`);
      }
    }
  } finally {
    await rm(atCut, { recursive: true, force: true });
  }
}
