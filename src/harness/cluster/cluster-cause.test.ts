// The cause of a failing cluster state, on real mounts: a replicated queue's known-bad variant
// recorded once, every coordinated state recovered natively and judged, the failing ones explained.
// Asynchronous replication: the confirmation printed before a backup's fsync completed, named with
// that node, proven by judging every state again with the line withheld. A missing directory fsync
// in every replica's queue: the fsync each node missed, named with the nodes, proven by recovering
// the states' counterparts in the run with those fsyncs inserted (a hypothesis on the cluster).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_STATE_CAPS } from '../../../fusefs/crash-states.js';
import { requireRoot } from '../../../fusefs/testing.js';
import type { Cause } from '../cause/cause.js';
import { replicatedQueue } from '../../targets/powercut-queue/replicated/index.js';
import { withFsyncsInserted } from '../exhaustive/fixed-run.js';
import { isExpectedCause } from '../target.js';
import { ASYNC_REPLICATION } from '../../targets/powercut-queue/replicated/replicated-queue.js';
import { markDir } from '../crash-run.js';
import { startTempDaemon, type TempDaemon } from '../daemon-process.js';
import { mergeTimeouts, runDriverProcess } from '../driver-process.js';
import type { Workload } from '../workload.js';
import { explainClusterRun, recoverClusterState, type ClusterCauseContext, type JudgedClusterState } from './cluster-cause.js';
import { clusterSpec, type ClusterInput } from './cluster-run.js';

const WORKLOAD: Workload = {
  steps: [
    { op: 'write', sizesBytes: [120], waitDurable: true },
    { op: 'write', sizesBytes: [300], waitDurable: true },
  ],
};
const SETTINGS = { checkpointAcks: 1, checkpointWrites: 1, pageCapacityBytes: 4096 };

/** Records `input` on the cluster, recovers and judges every coordinated lose-unsynced state. */
async function recordAndJudge(cluster: TempDaemon, input: ClusterInput): Promise<{ ctx: ClusterCauseContext; judged: JudgedClusterState[] }> {
  const timeouts = mergeTimeouts();
  const client = cluster.daemon.client;
  await client.reset(true);
  const run = await runDriverProcess(cluster.daemon, replicatedQueue.driver, { ...clusterSpec(cluster.daemon.mountpoints, input, 'workload', 0), mark: markDir(cluster.daemon) }, timeouts);
  const { trace, marks } = await client.traceWithMarks();
  const ctx: ClusterCauseContext = { daemon: cluster.daemon, target: replicatedQueue, input, recorded: { run, trace, marks }, timeouts };
  const states = (await client.states(['lose-unsynced'], DEFAULT_STATE_CAPS)).states.filter((s) => s.id.nodes === undefined);
  const judged: JudgedClusterState[] = [];
  for (const state of states) judged.push({ state, ...(await recoverClusterState(ctx, state.id)) });
  return { ctx, judged };
}

describe('the cause of a failing cluster state', () => {
  let cluster: TempDaemon;
  beforeAll(async () => {
    requireRoot('a cluster of FUSE mounts');
    cluster = await startTempDaemon('cluster-cause', 3);
  }, 60_000);
  afterAll(async () => {
    await cluster?.stop();
  }, 60_000);

  it('names asynchronous replication as a confirmation before a backup\'s fsync, on that node, proven on every judged state', async () => {
    const input: ClusterInput = { workload: WORKLOAD, settings: SETTINGS, variant: ASYNC_REPLICATION };
    const { ctx, judged } = await recordAndJudge(cluster, input);
    const failing = judged.filter((j) => j.violations.length > 0);
    expect(failing.length, 'the variant fails some coordinated state').toBeGreaterThan(0);

    const causes = await explainClusterRun(ctx, judged, Date.now() + 90_000);
    expect([...causes.keys()]).toEqual(failing);
    const cause = causes.get(failing[0])!;
    // A backup's page fsync, or the checkpoint fsync after it: the variant declares both (the first persistence point that cures a state is named).
    const declared = (c: Cause) => replicatedQueue.knownBad[ASYNC_REPLICATION].causes!.some((d) => isExpectedCause(c, d));
    expect(cause.kind, `${cause.title}: ${cause.fix}`).toBe('early-confirmation');
    expect(declared(cause), cause.key).toBe(true);
    // Usually a backup's (node 1 or 2). The nodes' threads race, so in a recording where the primary's
    // own page fsync completed after the backups', waiting for it cures every state too, and that
    // proven fix may be named instead (seen once in a loaded run): the node is named either way.
    expect(cause.fix).toMatch(/on node [012] at request \d+/);
    expect(cause.proof?.curesOwnState).toBe(true);
    expect(cause.proof?.broken).toBe(0);
    // Every state is given a cause its proof cures, or left unexplained: never another named cause.
    for (const c of causes.values()) expect(c.kind === 'not-isolated' || declared(c), c.title).toBe(true);
  }, 180_000);

  it('names the directory fsync every replica\'s queue misses after creating a page, on the nodes that lost it, proven under the fsyncs inserted on those nodes', async () => {
    const variant = 'replica-no-dir-fsync-new-page';
    const started = Date.now();
    // Records of 100 bytes in pages of 256: the second write starts a new page on every node.
    const input: ClusterInput = { workload: { steps: [100, 100, 100].map((b) => ({ op: 'write' as const, sizesBytes: [b], waitDurable: true })) }, settings: { ...replicatedQueue.knownBad[variant].settings }, variant };
    const { ctx, judged } = await recordAndJudge(cluster, input);
    const failing = judged.filter((j) => j.violations.length > 0);
    expect(failing.length, 'the variant fails some coordinated state').toBeGreaterThan(0);
    // What its bug does to the queue: confirmed writes lost (the checks its knownBad entry says it trips).
    const trips: readonly string[] = replicatedQueue.knownBad[variant].trips ?? [];
    const checks = [...new Set(failing.flatMap((j) => j.violations.map((v) => v.check)))];
    expect(checks.some((c) => trips.includes(c)), checks.join(', ')).toBe(true);
    const judgedMs = Date.now() - started;

    const causes = await explainClusterRun(ctx, judged, Date.now() + 120_000);
    expect([...causes.keys()]).toEqual(failing);
    const declared = replicatedQueue.knownBad[variant].causes;
    const named = [...causes.values()].filter((c) => c.kind !== 'not-isolated');
    expect(named.length, [...causes.values()].map((c) => `${c.title}: ${c.fix}`).join('\n')).toBeGreaterThan(0);
    for (const c of named) {
      // Only the declared cause, each proven: it cures its own state and breaks no state that passed.
      expect(declared.some((d) => isExpectedCause(c, d)), `${c.title}: ${c.fix}`).toBe(true);
      expect(c.proof?.curesOwnState, c.fix).toBe(true);
      expect(c.proof?.broken, c.fix).toBe(0);
      // Every node lost the new page's name at a coordinated cut: the fix is each node's (a majority must keep it).
      expect(c.fix, c.fix).toMatch(/^fsync the directory \/ on nodes (\d+, ){1,2}\d+ after every create of \/page\.\* \(on node \d+: request/);
      expect(c.proof?.step).toMatch(/^an fsync of the directory \/ on nodes /);
    }
    console.log(`replica-no-dir-fsync-new-page: ${judged.length} states judged (${failing.length} failing) in ${judgedMs} ms; causes in ${Date.now() - started - judgedMs} ms: ${named[0]?.fix} | ${named[0]?.proof ? JSON.stringify({ ...named[0].proof, step: undefined }) : ''}`);
  }, 300_000);

  it('names no cause on the correct replicated queue; the daemon lists and builds its states under a hypothesis with each fsync on its node, and they still pass', async () => {
    const started = Date.now();
    // The bad variant's settings and workload, without the bug: the same pages created on every node.
    const input: ClusterInput = { workload: { steps: [100, 100, 100].map((b) => ({ op: 'write' as const, sizesBytes: [b], waitDurable: true })) }, settings: { ...replicatedQueue.knownBad['replica-no-dir-fsync-new-page'].settings } };
    const { ctx, judged } = await recordAndJudge(cluster, input);
    expect(judged.filter((j) => j.violations.length > 0).map((j) => j.violations[0].message)).toEqual([]);
    expect((await explainClusterRun(ctx, judged, Date.now() + 30_000)).size).toBe(0);

    // A directory fsync inserted on its own node after each page create (redundant here: the queue makes them).
    const creates = ctx.recorded.trace.filter((e) => e.kind === 'create' && /^\/page\.\d+$/.test(e.path) && e.result === 0);
    expect(new Set(creates.map((e) => e.node)), 'every node creates pages').toEqual(new Set([0, 1, 2]));
    const fix = withFsyncsInserted(ctx.recorded, creates.map((e) => ({ after: e.op, path: '/', dir: true, node: e.node! })), [], 'directory fsyncs after page creates');
    const client = cluster.daemon.client;
    const runEnd = Math.max(...judged.map((j) => j.state.id.afterOp));
    const under = (await client.states(['lose-unsynced'], DEFAULT_STATE_CAPS, fix.hypothesis)).states.filter((s) => s.id.nodes === undefined);
    // Every node's later requests moved up by one per inserted fsync: the run now ends that much later.
    expect(Math.max(...under.map((s) => s.id.afterOp))).toBe(runEnd + creates.length);
    // The last coordinated state, and the one right after the first inserted fsync, recover and pass against the fixed run's lines.
    const firstInserted = fix.fixedOpsOf(creates[0].op)[1];
    for (const afterOp of [runEnd + creates.length, firstInserted]) {
      const r = await recoverClusterState({ ...ctx, recorded: fix.recorded }, { afterOp, policy: 'lose-unsynced' }, [], afterOp, fix.hypothesis);
      expect(r.violations, `state after request ${afterOp} of the fixed run`).toEqual([]);
    }
    // Cut right after the last page create, before the fsync inserted after it: that node lost the
    // create, named by its request in the fixed run's numbering; every lost change is its own node's request there.
    const last = creates[creates.length - 1];
    const cutAt = fix.fixedOpsOf(last.op)[0];
    const fixedTrace = new Map(fix.recorded.trace.map((e) => [e.op, e]));
    const lost = await client.units({ afterOp: cutAt, policy: 'lose-unsynced' }, fix.hypothesis);
    expect(lost.some((u) => u.kind === 'dir' && u.node === last.node && u.changes.some((c) => c.op === cutAt && c.kind === 'create'))).toBe(true);
    for (const u of lost) {
      for (const c of u.changes) expect(fixedTrace.get(c.op)?.node, `${u.path} on node ${u.node}: ${c.kind} at request ${c.op} of the fixed run`).toBe(u.node);
    }
    // A cluster's inserted fsync must name its node: the daemon says which field.
    await expect(client.states(['lose-unsynced'], DEFAULT_STATE_CAPS, { fsyncAfter: [{ afterOp: 1, path: '/' }] })).rejects.toThrow(/hypothesis\.fsyncAfter\[0\]\.node is missing/);
    await expect(client.units({ afterOp: 1, policy: 'lose-unsynced' }, { fsyncAfter: [{ afterOp: 1, path: '/', node: 3 }] })).rejects.toThrow(/hypothesis\.fsyncAfter\[0\]\.node is 3, but the cluster has nodes 0\.\.2/);
    console.log(`correct replicated queue: ${judged.length} states judged and the hypothesis checked in ${Date.now() - started} ms`);
  }, 240_000);
});
