// `powercut replay DIR` of a cluster artifact: the recovery alone from the stored images (a crash
// state's, or a coordinated live cut's: exact, whatever the interleaving was), then the whole case
// re-run on a fresh daemon serving a mount per node, several times: the nodes run concurrently, so
// each re-run interleaves their requests anew and is one sample (a crash state's workload recorded
// again and the same state judged, else the nearest states cutting the same nodes, to the first
// that fails; a live cut run again). The caller weighs the exact verdict and the sample.
import { existsSync } from 'node:fs';
import { readdir, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { CrashStateId } from '../../fusefs/crash-states.js';
import { copyStoredImage, storesDisksAfterCut, type ClusterArtifactCase, type StoredArtifact } from '../harness/artifacts.js';
import { runClusterCase, type ClusterInput } from '../harness/cluster/cluster-run.js';
import { startTempDaemon, type TempDaemon } from '../harness/daemon-process.js';
import { useStoredStartingState } from '../harness/starting-state.js';
import { mergeTimeouts } from '../harness/driver-process.js';
import type { Violation } from '../harness/oracle.js';
import type { Target } from '../harness/target.js';
import { formatTrace } from '../harness/trace-format.js';
import { describeRerun } from './replay-verdict.js';
import { judgeClusterState, recordCluster } from '../gate/cluster-cases.js';
import { recoverClusterImage } from '../harness/cluster/cluster-run.js';
import { describeClusterCut } from '../gate/cluster-kinds.js';
import { targetName } from '../targets/index.js';
import { runFolder } from '../harness/run-folder.js';

/** A crash state's re-run judges at most this many states cutting the same nodes (the same state first, then the nearest): each state's recovery takes about a second. */
export const MAX_STATES_PER_RERUN = 12;

const sameNodes = (a: readonly number[] | undefined, b: readonly number[] | undefined) => (a ?? []).join(',') === (b ?? []).join(',');
const indent = (vs: readonly Violation[]) => vs.map((v) => `  ${v.message}`).join('\n');

/** The case in words: target, nodes, workload, and which cut. */
export function describeClusterArtifact(c: ClusterArtifactCase): string {
  const cut = c.state
    ? `${describeClusterCut('state', c.state.nodes, c.state.policy)} after request ${c.state.afterOp} of the recorded run (offline, recovered natively)${c.state.outcomes ? `; each cut node's outcome: ${JSON.stringify(c.state.outcomes)}` : ''}`
    : `${describeClusterCut('live', c.nodesCut)} at request ${c.cut?.atOp} (${c.cut?.timing}), policy ${c.policy}, seed ${c.seed}` +
      (c.pause ? `; before it, node ${c.pause.node} paused at request ${c.pause.atOp} for ${c.pause.durationMs} ms` : '');
  return [
    `target:   ${c.driver ? `the driver '${c.driver.command}' (in ${c.driver.cwd})` : `${targetName(c)}, ${c.variant ? `known-bad variant '${c.variant}'` : 'the correct queue'}`}, settings ${JSON.stringify(c.settings)}`,
    `cluster:  ${c.nodes} nodes, one mount each`,
    `workload: ${c.workload.steps.length} steps`,
    `cut:      ${cut}`,
  ].join('\n');
}

function traceExcerpt(a: StoredArtifact, maxBefore: number): string {
  const cut = a.cuts[0];
  if (!cut) return '  (no trace stored)';
  const lines = formatTrace(cut.trace, cut.frozenAt, 'before').split('\n');
  if (maxBefore === 0 || lines.length <= maxBefore + 5) return lines.join('\n');
  const at = lines.findIndex((l) => l.startsWith('----- POWER CUT'));
  const from = Math.max(0, (at < 0 ? lines.length : at) - maxBefore);
  return [`  ... ${from} earlier requests (full trace: ${path.join(a.dir, 'trace-cut-0.txt')})`, ...lines.slice(from, (at < 0 ? lines.length : at) + 5)].join('\n');
}

/** The whole case once more on the running cluster (reset first): the violations this re-run found (none: it passed). */
async function rerun(cluster: TempDaemon, target: Target, c: ClusterArtifactCase, log: (s: string) => void): Promise<Violation[]> {
  const timeouts = mergeTimeouts();
  const input: ClusterInput = { workload: c.workload, settings: c.settings, ...(c.variant !== undefined ? { variant: c.variant } : {}) };
  if (!c.state) {
    if (c.nodesCut === undefined || !c.cut) throw new Error('invariant: a live cluster case names its cut and nodes (readArtifact checks it)');
    const r = await runClusterCase(cluster.daemon, target, { ...input, cut: c.cut, nodesCut: c.nodesCut, policy: c.policy, seed: c.seed, ...(c.pause ? { pause: c.pause } : {}) }, timeouts);
    if (c.pause) log(r.pausedAt === null ? '  the pause did not happen: the run ended before its request' : `  node ${c.pause.node} paused at request ${r.pausedAt} for ${c.pause.durationMs} ms`);
    log(r.frozenAt === null ? '  the cut did not land: the run ended before its request (judged as an uncut run)' : `  the cut froze at request ${r.frozenAt}`);
    return r.violations;
  }
  const want: CrashStateId = c.state;
  const rec = await recordCluster(cluster.daemon, target, input, c.stateCaps?.maxStates ?? 1_000, timeouts, [want.policy]);
  // The same state first; the interleaving of the nodes' requests may differ, so then the states cutting the same nodes.
  const same = rec.states.filter((s) => s.id.policy === want.policy && sameNodes(s.id.nodes, want.nodes));
  const key = (id: CrashStateId) => JSON.stringify([id.afterOp, id.dirPrefix, id.data, id.outcomes]);
  const exact = same.find((s) => key(s.id) === key(want));
  // The others nearest the recorded cut first (the same damage most likely), and only so many: a re-run is one draw of K, so it stays short.
  const distance = (id: CrashStateId) => Math.abs(id.afterOp - want.afterOp);
  const nearest = same.filter((s) => s !== exact).sort((x, y) => distance(x.id) - distance(y.id));
  const order = [...(exact ? [exact] : []), ...nearest].slice(0, MAX_STATES_PER_RERUN);
  log(`  recorded again: ${rec.recorded.trace.length} requests, ${rec.states.length} crash states, ${same.length} cutting the same nodes${exact ? '' : ` (none after request ${want.afterOp} now)`}; judging ${order.length === same.length ? 'them' : `the ${order.length} nearest request ${want.afterOp}`}`);
  for (const [i, s] of order.entries()) {
    const j = await judgeClusterState(cluster.daemon, target, rec, s.id, timeouts);
    if (j.violations.length > 0) {
      log(`  ${i === 0 && exact ? 'the same state fails' : `first failing state now: ${describeClusterCut('state', s.id.nodes, s.id.policy)} after request ${s.id.afterOp}`} (${i + 1} judged)`);
      return j.violations;
    }
  }
  log(`  ${order.length} state${order.length === 1 ? '' : 's'} cutting the same nodes judged, none failed`);
  return [];
}

/** What a cluster replay found: the stored images' violations when it had images of every node (exact), and each re-run's (a sample). */
export interface ClusterReplay {
  images?: Violation[];
  reruns: Violation[][];
}

/** Replays a cluster artifact (printing as it goes): its stored images recovered once, then `reruns` re-runs of the whole case. */
export async function replayCluster(a: StoredArtifact & { case: ClusterArtifactCase }, target: Target, traceLines: number, reruns: number): Promise<ClusterReplay> {
  const c = a.case;
  console.log(`artifact ${a.dir}\n${describeClusterArtifact(c)}\n`);
  console.log(a.harnessError ? `recorded: ${a.harnessError.trim()}` : `recorded violation:\n${indent(a.violations)}`);
  console.log(`\ntrace up to the cut (every node's requests in their one order):\n${traceExcerpt(a, traceLines)}`);
  const out: ClusterReplay = { reruns: [] };

  // 1. Every node's stored disk after the cut, recovered by the current code: exact, whatever the interleaving was.
  const stored = path.join(a.dir, 'images', 'cut-0-after-crash');
  if (storesDisksAfterCut(a.dir, c)) {
    const scratch = await runFolder(path.join(os.tmpdir(), 'powercut-replay-cluster-image-'));
    try {
      await copyStoredImage(a.dir, 'cut-0-after-crash', scratch);
      console.log(`\nrecovery alone, natively from the stored images ${stored} (node0..node${c.nodes - 1}):`);
      try {
        const r = await recoverClusterImage(target, c, scratch, c.nodes, a.runs[0], mergeTimeouts());
        out.images = r.violations;
        console.log(r.violations.length ? `  recovery of the stored disks still fails:\n${indent(r.violations)}` : '  recovery of the stored disks passes now');
      } catch (err) {
        console.log(`  could not replay the recovery (the tool failed): ${(err as Error).message}`);
      }
    } finally {
      await rm(scratch, { recursive: true, force: true });
    }
  } else if (existsSync(stored)) {
    // A live cut of some nodes: their disks at the cut are kept to look at; the others ran on, so only a re-run judges it.
    const kept = (await readdir(stored)).sort();
    console.log(`\nstored at the cut: ${kept.map((n) => path.join(stored, n)).join(', ')} (each cut node's durable disk when its power went; the other nodes ran on, so no stored image holds the whole cluster: only the re-runs judge it)`);
  }

  // 2. The whole case with the current code, on a fresh cluster, `reruns` times: each a sample of the nodes' interleaving.
  console.log(`\nre-running the whole case ${reruns} time${reruns === 1 ? '' : 's'} on a fresh ${c.nodes}-node cluster${c.state ? ' (recording the workload again each time)' : ''}...`);
  const cluster = await startTempDaemon('replay-cluster', c.nodes);
  try {
    await useStoredStartingState(cluster.daemon, a.dir);
    for (let i = 0; i < reruns; i++) {
      console.log(`re-run ${i + 1} of ${reruns}:`);
      out.reruns.push(await rerun(cluster, target, c, (s) => console.log(s)));
      console.log(`  ${describeRerun(a.violations, out.reruns[i])}`);
    }
  } finally {
    await cluster.stop();
  }
  return out;
}
