// A three-node cluster on real mounts (one daemon, one mount per node), the replicated queue's
// driver and one replica server per node, each in a process group of its own, killed with SIGKILL
// at its cut. The correct queue passes a coordinated cut, one node's cut with its restart while the
// others run on, and coordinated and mixed states of a recorded run; its known-bad variant
// (asynchronous replication) is caught.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execa } from 'execa';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { startTempDaemon, type TempDaemon } from '../daemon-process.js';
import { replicatedQueue } from '../../targets/powercut-queue/replicated/index.js';
import { ASYNC_REPLICATION } from '../../targets/powercut-queue/replicated/replicated-queue.js';
import { requireRoot } from '../../../fusefs/testing.js';
import type { Workload } from '../workload.js';
import { mergeTimeouts } from '../driver-process.js';
import type { Violation } from '../oracle.js';
import { ClusterStatePool, judgeSpreadStates, recordCluster } from './cluster-pool.js';
import { drawLiveCase, liveClusterCase, runClusterCase, type ClusterCase } from './cluster-run.js';

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
/**
 * The workload, then a read that waits 2 s on the emptied queue and more writes: the restart of a
 * node cut early usually comes while the others serve. (It need not: the driver holds its run's
 * end until the restart came, and the harness fails a run that ends first.)
 */
const LONG_WORKLOAD: Workload = {
  steps: [
    ...WORKLOAD.steps,
    { op: 'read', maxEvents: 10 },
    { op: 'ack', count: 10, order: 'oldest' },
    { op: 'read', maxEvents: 1, waitMs: 2_000 },
    ...Array.from({ length: 3 }, () => ({ op: 'write' as const, sizesBytes: [200], waitDurable: true })),
  ],
};
/** Few persistence points: its coordinated states leave room for mixed ones within the cap. */
const SHORT_WORKLOAD: Workload = { steps: [{ op: 'write', sizesBytes: [120], waitDurable: true }, { op: 'read', maxEvents: 1 }, { op: 'ack', count: 1, order: 'oldest' }] };

/**
 * A producer and a consumer at once: every read meets writes in flight, so each node must order
 * them as the primary did (the replicas diverged here before: a read delivered different seqs on
 * different nodes, and a later ack of one of them failed on the node that had not delivered it).
 */
const CONCURRENT_WORKLOAD: Workload = {
  steps: [
    {
      op: 'concurrently',
      branches: [
        Array.from({ length: 12 }, () => ({ op: 'write' as const, sizesBytes: [100, 200, 50], waitDurable: false })),
        Array.from({ length: 12 }, () => [{ op: 'read' as const, maxEvents: 4 }, { op: 'ack' as const, count: 4, order: 'every-other' as const }]).flat(),
      ],
    },
    { op: 'waitDurable' },
    { op: 'read', maxEvents: 100 },
    { op: 'ack', count: 100, order: 'oldest' },
  ],
};

let cluster: TempDaemon;

/**
 * No replica server of these tests is left running, stopped or not (a server names its node's
 * directory, on this cluster's mounts; other test files run servers of their own). The harness
 * itself fails a run whose driver's group outlives its kill.
 */
async function noServersLeft(): Promise<void> {
  const r = await execa('pgrep', ['-af', 'powercut-queue/replicated/replica-server\\.js'], { reject: false });
  const ours = r.stdout.split('\n').filter((l) => cluster.daemon.mountpoints.some((m) => l.includes(m)));
  expect(ours, 'replica servers still running (or stopped)').toEqual([]);
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

/** A folder for the images a live cut keeps (runClusterCase's imagesDir), removed after `f`. */
async function withImages(f: (atCut: string) => Promise<void>): Promise<void> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'powercut-cluster-run-images-'));
  try {
    await f(path.join(dir, 'cut-0-after-crash'));
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

const base: Omit<ClusterCase, 'nodesCut'> = { workload: WORKLOAD, settings: SETTINGS, policy: 'lose-unsynced', seed: 1 };

describe('a replicated queue on a three-node cluster', () => {
  it('passes an uncut run, every node\'s requests in one trace', async () => {
    const r = await runClusterCase(cluster.daemon, replicatedQueue, { ...base, nodesCut: 'all' });
    expect(r.violations).toEqual([]);
    expect(new Set(r.trace.map((e) => e.node))).toEqual(new Set([0, 1, 2]));
    expect(r.runs[0].outcomes.filter((o) => o.t === 'node').map((o) => o.t === 'node' && o.node)).toEqual([0, 1, 2]);
    await noServersLeft();
  });

  it('ends a run whose cut never comes (past its last request) when the driver says done, not at the run\'s bound', async () => {
    // A live run interleaves anew and can make fewer requests than the recording the cut was drawn
    // from; the cluster driver's stdin stays open, so it does not exit by itself after `done`.
    const started = Date.now();
    const r = await runClusterCase(cluster.daemon, replicatedQueue, { ...base, nodesCut: [1], cut: { atOp: 1_000_000, timing: 'before' } }, { runMs: 60_000 });
    expect(r.frozenAt).toBeNull();
    expect(r.violations).toEqual([]);
    expect(Date.now() - started, 'a run waiting for its bound').toBeLessThan(30_000);
    await noServersLeft();
  });

  it('passes a workload whose reads and acks run while writes are in flight: every node applies them in the primary\'s order', async () => {
    const r = await runClusterCase(cluster.daemon, replicatedQueue, { ...base, settings: {}, workload: CONCURRENT_WORKLOAD, nodesCut: 'all' });
    expect(r.runs[0].exitCode, `${JSON.stringify(r.runs[0].outcomes.slice(-2))}\n${r.stderr[0]}`).toBe(0);
    expect(r.violations).toEqual([]);
    expect(r.runs[0].outcomes.filter((o) => o.t === 'delivered').length, 'every write delivered').toBe(36);
    await noServersLeft();
  });

  it('holds a write for space at the primary until an ack frees it (maxEvents 3): the serial replicas never wait', async () => {
    const workload: Workload = {
      steps: [{
        op: 'concurrently',
        branches: [
          [{ op: 'write', sizesBytes: [100, 100, 100, 100], waitDurable: true }],
          [{ op: 'read', maxEvents: 3, waitMs: 1_000 }, { op: 'ack', count: 3, order: 'oldest' }, { op: 'read', maxEvents: 3, waitMs: 2_000 }, { op: 'ack', count: 3, order: 'oldest' }],
        ],
      }],
    };
    // maxEvents 3: the drain's three liveness writes fit once the workload acked everything.
    const r = await runClusterCase(cluster.daemon, replicatedQueue, { ...base, settings: { maxEvents: 3 }, workload, nodesCut: 'all' });
    const lines = r.runs[0].outcomes;
    expect(r.runs[0].exitCode, `${JSON.stringify(lines.slice(-2))}\n${r.stderr[0]}`).toBe(0);
    expect(r.violations).toEqual([]);
    const written = lines.flatMap((o, i) => (o.t === 'written' ? [i] : []));
    expect(written, 'four writes').toHaveLength(4);
    expect(written[3], 'the fourth write went in only after the first ack').toBeGreaterThan(lines.findIndex((o) => o.t === 'acked'));
    await noServersLeft();
  });

  it('passes a coordinated cut: every node loses its unsynced data, and recovery restarts them all; every node\'s disk at the cut is kept', async () => {
    await withImages(async (atCut) => {
      const r = await runClusterCase(cluster.daemon, replicatedQueue, { ...base, nodesCut: 'all', cut: { atOp: 40, timing: 'before' } }, undefined, atCut);
      expect(r.frozenAt).toBe(40);
      expect(r.runs[0].killed).toBe(true);
      expect(r.violations).toEqual([]);
      expect((await readdir(atCut)).sort()).toEqual(['node0', 'node1', 'node2']);
    });
    await noServersLeft();
  });

  it('passes one node\'s cut while the others run on: the node restarts on its crashed disk and catches up; that node\'s disk at the cut is kept', async () => {
    await withImages(async (atCut) => {
      const r = await runClusterCase(cluster.daemon, replicatedQueue, { ...base, workload: LONG_WORKLOAD, nodesCut: [1], cut: { atOp: 6, kind: 'write', node: 1, timing: 'before' } }, undefined, atCut);
      expect(r.frozenAt).not.toBeNull();
      expect(r.runs[0].exitCode, `${JSON.stringify(r.runs[0].outcomes.slice(-2))}\n${r.stderr[0]}`).toBe(0);
      expect(r.runs[0].outcomes.some((o) => o.t === 'node' && o.node === 1 && o.restarted === true), `frozen at ${r.frozenAt} of ${r.trace.length}: ${r.trace.filter((e) => e.op >= r.frozenAt! - 2 && e.op <= r.frozenAt! + 2).map((e) => `${e.op} n${e.node} ${e.kind} ${e.path}`).join('; ')}\n${r.runs[0].outcomes.map((o) => JSON.stringify(o)).join('\n')}`).toBe(true);
      expect(r.violations).toEqual([]);
      expect(await readdir(atCut)).toEqual(['node1']);
    });
    await noServersLeft();
  });

  it('passes a live cut of a majority (nodes 0 and 1, then 1 and 2) while the last node runs on: both restart and the run goes on, nothing left', async () => {
    // Request 90 of this run is late in it: a cut node's killed servers close their files while the
    // other cut node is remounted (the daemon once held that flush and never thawed the spared node).
    for (const [nodesCut, atOp] of [[[0, 1], 90], [[1, 2], 60]] as const) {
      const r = await runClusterCase(cluster.daemon, replicatedQueue, { ...base, nodesCut, cut: { atOp, timing: 'before' } });
      expect(r.frozenAt).toBe(atOp);
      expect(r.runs[0].exitCode, `${JSON.stringify(r.runs[0].outcomes.slice(-2))}\n${r.stderr[0]}`).toBe(0);
      for (const k of nodesCut) expect(r.runs[0].outcomes.some((o) => o.t === 'node' && o.node === k && o.restarted === true), `node ${k} restarted`).toBe(true);
      expect(r.violations).toEqual([]);
      await noServersLeft();
    }
  });

  it('passes one node\'s cut at its first request, while the cluster opens: the restart waits for the open and the run goes on', async () => {
    const r = await runClusterCase(cluster.daemon, replicatedQueue, { ...base, nodesCut: [1], cut: { atOp: 1, node: 1, timing: 'before' } });
    const opened = r.runs[0].outcomes.findIndex((o) => o.t === 'open');
    const restarted = r.runs[0].outcomes.findIndex((o) => o.t === 'node' && o.node === 1 && o.restarted === true);
    expect(r.frozenAt).not.toBeNull();
    expect(restarted, 'node 1 restarted after the open').toBeGreaterThan(opened);
    expect(r.runs[0].exitCode).toBe(0);
    expect(r.violations).toEqual([]);
    await noServersLeft();
  });

  it('passes a pause of a backup (node 2) while the others serve, then node 1\'s cut: nothing is left stopped or running', async () => {
    const r = await runClusterCase(cluster.daemon, replicatedQueue, { ...base, nodesCut: [1], pause: { node: 2, atOp: 30, durationMs: 300 }, cut: { atOp: 60, timing: 'before' } });
    expect(r.pausedAt).toBe(30);
    expect(r.frozenAt).toBe(60);
    expect(r.runs[0].outcomes.some((o) => o.t === 'node' && o.node === 1 && o.restarted === true)).toBe(true);
    expect(r.violations).toEqual([]);
    await noServersLeft();
  });

  it('passes a pause of the primary (node 0): the backups wait for it, and it serves on once resumed', async () => {
    const r = await runClusterCase(cluster.daemon, replicatedQueue, { ...base, nodesCut: [1], pause: { node: 0, atOp: 30, durationMs: 300 } });
    expect(r.pausedAt).toBe(30);
    expect(r.runs[0].exitCode).toBe(0);
    expect(r.violations).toEqual([]);
    await noServersLeft();
  });

  it('passes a pause of node 1 cut at the next request: the stopped node is resumed, killed and restarted', async () => {
    const r = await runClusterCase(cluster.daemon, replicatedQueue, { ...base, nodesCut: [1], pause: { node: 1, atOp: 30, durationMs: 1_000 }, cut: { atOp: 31, timing: 'before' } });
    expect([r.pausedAt, r.frozenAt]).toEqual([30, 31]);
    expect(r.runs[0].outcomes.some((o) => o.t === 'node' && o.node === 1 && o.restarted === true)).toBe(true);
    expect(r.violations).toEqual([]);
    await noServersLeft();
  });

  it('passes a seeded live case drawn for it (a cut of one node, a pause before it), which the draw repeats', async () => {
    const seed = Array.from({ length: 50 }, (_, s) => s).find((s) => drawLiveCase(s, 120, 3).pause !== undefined)!;
    const c = liveClusterCase({ workload: WORKLOAD, settings: SETTINGS }, drawLiveCase(seed, 120, 3, { maxPauseMs: 300 }), seed);
    expect(liveClusterCase({ workload: WORKLOAD, settings: SETTINGS }, drawLiveCase(seed, 120, 3, { maxPauseMs: 300 }), seed)).toEqual(c);
    const r = await runClusterCase(cluster.daemon, replicatedQueue, c);
    expect(r.pausedAt).toBe(c.pause!.atOp);
    expect(r.frozenAt).toBe(c.cut!.atOp);
    expect(r.violations).toEqual([]);
    await noServersLeft();
  });

  it('passes coordinated and mixed states of a recorded run, recovered in parallel slots', async () => {
    const pool = new ClusterStatePool(replicatedQueue, 3, 3, mergeTimeouts());
    try {
      const rec = await recordCluster(cluster.daemon, replicatedQueue, { workload: SHORT_WORKLOAD, settings: {} }, 1_000, mergeTimeouts());
      expect(rec.capped).toBe(0);
      const r = await judgeSpreadStates(cluster.daemon, pool, rec, 4);
      expect(r.judged).toEqual({ coordinated: 4, mixed: 4 });
      expect(r.failures).toEqual([]);
      // The drains are offline (copies off the mount, never cut): the driver runs the nodes in its own process, starting no server.
      let nodeLines = -1;
      await pool.judge(cluster.daemon, rec, (() => {
        let given = false;
        return () => (given ? undefined : ((given = true), rec.states[0]));
      })(), (v) => void (nodeLines = v.runs[1].outcomes.filter((o) => o.t === 'node').length));
      expect(nodeLines, 'node lines of an offline drain').toBe(0);
    } finally {
      await pool.stop();
    }
    await noServersLeft();
  });

  it('leaves the states still draining at the budget\'s end unjudged, killing their slots\' drivers, and judges on after', async () => {
    const pool = new ClusterStatePool(replicatedQueue, 3, 2, mergeTimeouts());
    try {
      const rec = await recordCluster(cluster.daemon, replicatedQueue, { workload: SHORT_WORKLOAD, settings: {} }, 1_000, mergeTimeouts());
      const states = rec.states.slice(0, 2);
      const judged: unknown[] = [];
      let given = 0;
      const r = await pool.judge(cluster.daemon, rec, () => states[given++], (v) => void judged.push(v), Date.now() - 1);
      expect(judged).toEqual([]);
      expect(new Set(r.abandoned)).toEqual(new Set(states));
      // The killed slots start new drivers for the next states.
      given = 0;
      const again = await pool.judge(cluster.daemon, rec, () => states[given++], (v) => void judged.push(v));
      expect(again.abandoned).toEqual([]);
      expect(judged).toHaveLength(2);
    } finally {
      await pool.stop();
    }
    await noServersLeft();
  });

  it('catches asynchronous replication: a coordinated cut loses a write the primary alone made durable', async () => {
    const pool = new ClusterStatePool(replicatedQueue, 3, 3, mergeTimeouts());
    try {
      const rec = await recordCluster(cluster.daemon, replicatedQueue, { workload: WORKLOAD, settings: SETTINGS, variant: ASYNC_REPLICATION }, 1_000, mergeTimeouts());
      // The coordinated states in listed order, until one fails (the slots' order of verdicts varies, not which states fail).
      const coordinated = rec.states.filter((s) => s.id.nodes === undefined);
      const failures: Violation[][] = [];
      let next = 0;
      await pool.judge(cluster.daemon, rec, () => (failures.length > 0 ? undefined : coordinated[next++]), (v) => {
        if (v.violations.length > 0) failures.push(v.violations);
      });
      expect(failures.length, 'a coordinated state catches it').toBeGreaterThan(0);
      expect(failures.flat().map((v) => v.check)).toContain('at-least-once');
    } finally {
      await pool.stop();
    }
    await noServersLeft();
  });
});
