// The cause of a failing cluster state, on real mounts: the replicated queue's known-bad variant
// (asynchronous replication) recorded once, every coordinated state recovered natively and judged,
// the first failing one explained. Its cause is the confirmation printed before a backup's fsync
// completed, named with that node, and proven by judging every state again with the line withheld.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_STATE_CAPS } from '../../../fusefs/crash-states.js';
import { requireRoot } from '../../../fusefs/testing.js';
import { replicatedQueue } from '../../targets/powercut-queue/replicated/index.js';
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
    const timeouts = mergeTimeouts();
    const client = cluster.daemon.client;
    await client.reset(true);
    const run = await runDriverProcess(cluster.daemon, replicatedQueue.driver, { ...clusterSpec(cluster.daemon.mountpoints, input, 'workload', 0), mark: markDir(cluster.daemon) }, timeouts);
    const { trace, marks } = await client.traceWithMarks();
    const ctx: ClusterCauseContext = { daemon: cluster.daemon, target: replicatedQueue, input, recorded: { run, trace, marks }, timeouts };
    const states = (await client.states(['lose-unsynced'], DEFAULT_STATE_CAPS)).states.filter((s) => s.id.nodes === undefined);
    const judged: JudgedClusterState[] = [];
    for (const state of states) judged.push({ state, ...(await recoverClusterState(ctx, state.id)) });
    const failing = judged.filter((j) => j.violations.length > 0);
    expect(failing.length, 'the variant fails some coordinated state').toBeGreaterThan(0);

    const causes = await explainClusterRun(ctx, judged, Date.now() + 90_000);
    expect([...causes.keys()]).toEqual(failing);
    const cause = causes.get(failing[0])!;
    expect(cause.kind, `${cause.title}: ${cause.fix}`).toBe('early-confirmation');
    expect(cause.key).toMatch(/^early-confirmation \/page\.\*/);
    expect(cause.fix).toMatch(/on node [12] at request \d+/);
    expect(cause.proof?.curesOwnState).toBe(true);
    expect(cause.proof?.broken).toBe(0);
    // Every state is given a cause its proof cures, or left unexplained: never another named cause.
    for (const c of causes.values()) expect(c.kind === 'not-isolated' || c.key.startsWith('early-confirmation /page.*'), c.title).toBe(true);
  }, 180_000);
});
