// A three-node cluster on real mounts (one daemon, one mount per node), the replicated queue's
// driver and one replica server per node, each in a process group of its own, killed with SIGKILL
// at its cut. The correct queue passes a coordinated cut and coordinated and mixed states of a
// recorded run; its known-bad variant (asynchronous replication) is caught. (One node's live cut
// with its restart is left out: under a full test run its restart did not always come before the
// run's end, a timing dependence not yet removed; fusefs/cluster.test.ts checks the cut itself.)
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execa } from 'execa';
import { readFile } from 'node:fs/promises';
import { startTempDaemon, type TempDaemon } from '../daemon-process.js';
import { replicatedQueue } from '../../targets/powercut-queue/replicated/index.js';
import { ASYNC_REPLICATION } from '../../targets/powercut-queue/replicated/replicated-queue.js';
import { requireRoot } from '../../../fusefs/testing.js';
import type { Workload } from '../workload.js';
import { runClusterCase, runClusterStates, type ClusterCase } from './cluster-run.js';

const WORKLOAD: Workload = {
  steps: [
    { op: 'write', sizesBytes: [120, 900], waitDurable: true },
    { op: 'read', maxEvents: 2 },
    { op: 'ack', count: 1, order: 'oldest' },
    { op: 'write', sizesBytes: [300], waitDurable: true },
    { op: 'read', maxEvents: 2 },
    { op: 'ack', count: 2, order: 'oldest' },
    { op: 'write', sizesBytes: [64], waitDurable: true },
  ],
};
const SETTINGS = { checkpointAcks: 1, checkpointWrites: 1, pageCapacityBytes: 4096 };
/** Few persistence points: its coordinated states leave room for mixed ones within the cap. */
const SHORT_WORKLOAD: Workload = { steps: [{ op: 'write', sizesBytes: [120], waitDurable: true }, { op: 'read', maxEvents: 1 }, { op: 'ack', count: 1, order: 'oldest' }] };

let cluster: TempDaemon;

/** No replica server or driver of these tests is left running. */
async function noServersLeft(): Promise<void> {
  const r = await execa('pgrep', ['-f', 'powercut-queue/replicated/(replica-server|driver)\\.js'], { reject: false });
  expect(r.stdout.trim(), 'replica servers or drivers still running').toBe('');
}

beforeAll(async () => {
  requireRoot('a cluster of FUSE mounts');
  cluster = await startTempDaemon('replicated', 3);
});
afterAll(async () => {
  const mounts = cluster?.daemon.mountpoints ?? [];
  await cluster?.stop();
  const table = await readFile('/proc/mounts', 'utf8');
  for (const m of mounts) expect(table).not.toContain(` ${m} `);
});

const base: Omit<ClusterCase, 'nodesCut'> = { workload: WORKLOAD, settings: SETTINGS, policy: 'lose-unsynced', seed: 1 };

describe('a replicated queue on a three-node cluster', () => {
  it('passes an uncut run, every node\'s requests in one trace', async () => {
    const r = await runClusterCase(cluster.daemon, replicatedQueue, { ...base, nodesCut: 'all' });
    expect(r.violations).toEqual([]);
    expect(new Set(r.trace.map((e) => e.node))).toEqual(new Set([0, 1, 2]));
    expect(r.runs[0].outcomes.filter((o) => o.t === 'node').map((o) => o.t === 'node' && o.node)).toEqual([0, 1, 2]);
    await noServersLeft();
  });

  it('passes a coordinated cut: every node loses its unsynced data, and recovery restarts them all', async () => {
    const r = await runClusterCase(cluster.daemon, replicatedQueue, { ...base, nodesCut: 'all', cut: { atOp: 40, timing: 'before' } });
    expect(r.frozenAt).toBe(40);
    expect(r.runs[0].killed).toBe(true);
    expect(r.violations).toEqual([]);
    await noServersLeft();
  });

  it('passes every coordinated and mixed state of a recorded run', async () => {
    const r = await runClusterStates(cluster.daemon, replicatedQueue, { workload: SHORT_WORKLOAD, settings: {} }, { maxStates: 1_000, maxStatesPerKind: 4 });
    expect(r.capped).toBe(0);
    expect(r.judged).toEqual({ coordinated: 4, mixed: 4 });
    expect(r.failures).toEqual([]);
    await noServersLeft();
  });

  it('catches asynchronous replication: a coordinated cut loses a write the primary alone made durable', async () => {
    const r = await runClusterStates(cluster.daemon, replicatedQueue, { workload: WORKLOAD, settings: SETTINGS, variant: ASYNC_REPLICATION }, { maxStates: 1_000, stopAtFirstFailure: true });
    expect(r.failures).toHaveLength(1);
    expect(r.failures[0].state.nodes, 'a coordinated state (the first listed) catches it').toBeUndefined();
    expect(r.failures[0].violations.map((v) => v.check)).toContain('at-least-once');
    await noServersLeft();
  });
});
