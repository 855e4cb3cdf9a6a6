// NATS JetStream R3 on a three-node cluster of real mounts: three nats-server 2.9.10 processes over
// loopback routes, each in a process group of its own with its store on its node's mount, a
// stream and consumer with 3 replicas. A coordinated cut after a PubAck loses it (2.9.10 fsyncs
// neither its Raft log nor its stream within a run: docs/nats.md, "Clusters"), deterministically;
// one node's cut with its restart while the workload goes on: the node restarts before the run's
// end, with every node's line and requests in one trace. No server is left behind.
// (An uncut run is `powercut driver check --nodes 3`'s; every open here costs 2.9.10's elections.)
import { readFile } from 'node:fs/promises';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requireRoot } from '../../../fusefs/testing.js';
import { clusterSpec, runClusterCase, type ClusterCase, type ClusterCaseResult } from '../../harness/cluster/cluster-run.js';
import { startTempDaemon, type TempDaemon } from '../../harness/daemon-process.js';
import type { Outcome } from '../../harness/outcome.js';
import { OWN_PROCESS_GROUP, signalGroup } from '../../harness/process-group.js';
import type { Workload } from '../../harness/workload.js';
import { natsJetstream } from './index.js';
import { serverConfigText } from './server.js';

/** A run opens three servers and elects leaders (2.9.10: 4 to 9 s per election after a restart). */
const TIMEOUTS = { runMs: 90_000 };
const SETTINGS = { replicas: 3 };
/** The cluster holds the run's end until the node cut is restarted (cluster.ts stop), so no step waits for it. */
const WORKLOAD: Workload = {
  steps: [
    { op: 'write', sizesBytes: [100], waitDurable: true },
    { op: 'write', sizesBytes: [200], waitDurable: true },
    { op: 'read', maxEvents: 2 },
    { op: 'ack', count: 1, order: 'oldest' },
    { op: 'write', sizesBytes: [300], waitDurable: true },
    { op: 'read', maxEvents: 1, waitMs: 500 },
  ],
};
/**
 * The 4th write of any node to the stream's message blocks: at most three come before the first
 * PubAck (the leader's store of message 1, and at most the followers' applies of it), so the 4th
 * comes after the driver printed it durable (the next publish waits for that line).
 */
const AFTER_FIRST_PUBACK = { atOp: 4, kind: 'write', path: '**/streams/POWERCUT/msgs/*.blk', timing: 'before' } as const;

let cluster: TempDaemon;
beforeAll(async () => {
  requireRoot('a cluster of FUSE mounts');
  natsJetstream.checkEnvironment!();
  cluster = await startTempDaemon('nats-r3', 3);
});
afterAll(async () => {
  const mounts = cluster?.daemon.mountpoints ?? [];
  await cluster?.stop();
  const table = await readFile('/proc/mounts', 'utf8');
  for (const m of mounts) expect(table).not.toContain(` ${m} `);
});

const base: Omit<ClusterCase, 'nodesCut'> = { workload: WORKLOAD, settings: SETTINGS, policy: 'lose-unsynced', seed: 1 };

/** A process that is gone or a zombie (this container's PID 1 may not reap orphans). */
async function gone(pid: number): Promise<boolean> {
  try {
    const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z');
  } catch {
    return true;
  }
}

/** Every server the runs named in their node lines (a server's pid is its group's id) has exited. */
async function noServersLeft(r: ClusterCaseResult): Promise<void> {
  const pids = r.runs.flatMap((run) => run.outcomes.flatMap((o) => (o.t === 'node' ? [o.pgid] : [])));
  expect(pids.length).toBeGreaterThanOrEqual(3);
  for (const pid of pids) expect(await gone(pid), `nats-server pid ${pid} still running`).toBe(true);
}

describe('nats-jetstream with replicas 3 on a three-node cluster', () => {
  it('replicas is 1 or 3, and sets the node count; a cluster server\'s config names it and routes over loopback', () => {
    expect(natsJetstream.nodeCount!({})).toBe(1);
    expect(natsJetstream.nodeCount!({ replicas: 3 })).toBe(3);
    expect(() => natsJetstream.checkSettings({ replicas: 2 })).toThrow(/replicas must be one of 1, 3/);
    const text = serverConfigText('/m/n1', 4222, '', { clusterName: 'powercut', serverName: 'n1', routePort: 6001, routePorts: [6000, 6001, 6002] });
    expect(text).toContain('server_name: "n1"');
    expect(text).toContain('listen: 127.0.0.1:6001');
    expect(text).toContain('"nats-route://127.0.0.1:6000", "nats-route://127.0.0.1:6001", "nats-route://127.0.0.1:6002"');
  });

  it('a coordinated cut after a PubAck loses it: nothing of a run reaches the disk of any node', async () => {
    const r = await runClusterCase(cluster.daemon, natsJetstream, { ...base, nodesCut: 'all', cut: AFTER_FIRST_PUBACK }, TIMEOUTS);
    expect(r.frozenAt).not.toBeNull();
    expect(r.runs[0].killed).toBe(true);
    expect(r.runs[0].outcomes.some((o) => o.t === 'durable' && o.durableSeq >= 1), 'a PubAck before the cut').toBe(true);
    const lost = r.violations.filter((v) => v.check === 'at-least-once');
    expect(lost.length, JSON.stringify(r.violations)).toBeGreaterThan(0);
    expect(lost[0].message).toMatch(/seqs? 1\b/);
    await noServersLeft(r);
  }, 120_000);

  it('one node\'s cut with its restart while the workload goes on: restarted before the run\'s end, every node\'s requests in one trace; its verdict a sample', async () => {
    const r = await runClusterCase(cluster.daemon, natsJetstream, { ...base, nodesCut: [1], cut: AFTER_FIRST_PUBACK }, TIMEOUTS);
    expect(r.frozenAt).not.toBeNull();
    expect(r.runs[0].killed).toBe(false);
    const nodeLines = r.runs[0].outcomes.flatMap((o) => (o.t === 'node' ? [o] : []));
    expect(nodeLines.filter((o) => !o.restarted).map((o) => o.node).sort()).toEqual([0, 1, 2]);
    expect(nodeLines.filter((o) => o.restarted).map((o) => o.node), 'node 1 restarted during the run').toEqual([1]);
    const at = (test: (o: (typeof r.runs)[0]['outcomes'][number]) => boolean) => r.runs[0].outcomes.findIndex(test);
    expect(at((o) => o.t === 'node' && o.restarted === true), 'the restart before the run\'s end').toBeLessThan(at((o) => o.t === 'done'));
    expect(new Set(r.trace.map((e) => e.node))).toEqual(new Set([0, 1, 2]));
    // Not asserted: the verdict. Three servers and their elections interleave anew each run, and
    // 2.9.10 can lose PubAcks at one node's cut (finding C3: the restarted node, empty and without its
    // vote, elects a follower that lacks them). Seen once in CI under load: seq 1 handed out twice, to
    // event ids 1 and 3 (the servers' logs were not kept, so C3 is the likely mechanism, not a proven one).
    const known = ['at-least-once', 'monotonic-seqs', 'liveness'];
    expect(r.violations.filter((v) => !known.includes(v.check)), 'only the checks C3 and its drain fail').toEqual([]);
    await noServersLeft(r);
  }, 120_000);

  it('a restart asked for once the run\'s end waits for it is read and done (the wait spun in microtasks and never read stdin: the restart missing under load)', async () => {
    await cluster.daemon.client.reset(false);
    const { file, args, env } = natsJetstream.driver;
    const spec = clusterSpec(cluster.daemon.mountpoints, { ...base, workload: { steps: [{ op: 'write', sizesBytes: [100], waitDurable: true }] } }, 'workload', 0);
    const driver = execa(file, args, { env, ...OWN_PROCESS_GROUP, stdin: 'pipe', reject: false, timeout: 100_000, killSignal: 'SIGKILL' });
    const lines: Outcome[] = [];
    let stderr = '';
    const waiters: { test: () => boolean; resolve: () => void }[] = [];
    const changed = () => waiters.splice(0).forEach((w) => (w.test() ? w.resolve() : waiters.push(w)));
    let partial = '';
    driver.stdout!.on('data', (d: Buffer) => {
      const text = partial + d.toString();
      const parts = text.split('\n');
      partial = parts.pop()!;
      lines.push(...parts.filter(Boolean).map((l) => JSON.parse(l) as Outcome));
      changed();
    });
    driver.stderr!.on('data', (d: Buffer) => {
      stderr += d.toString();
      changed();
    });
    /** Resolves once `test()` holds; fails the test naming `what` after `ms`. */
    const until = (what: string, test: () => boolean, ms: number) => new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`${what}: not within ${ms} ms; stdout ${JSON.stringify(lines).slice(-600)}; stderr ${stderr.slice(-600)}`)), ms);
      waiters.push({ test, resolve: () => (clearTimeout(timer), resolve()) });
      changed();
    });
    try {
      driver.stdin!.write(JSON.stringify(spec) + '\n');
      const nodeLine = (restarted: boolean) => lines.find((o): o is Extract<Outcome, { t: 'node' }> => o.t === 'node' && o.node === 1 && (o.restarted === true) === restarted);
      await until('the cluster opened', () => lines.some((o) => o.t === 'open'), 60_000);
      // Node 1's server killed, as at its cut; the run goes on with two of three and ends, waiting for the restart.
      signalGroup(nodeLine(false)!.pgid);
      await until('the run\'s end waiting for node 1', () => stderr.includes('the run\'s end waits for the restart of node 1'), 60_000);
      driver.stdin!.write(JSON.stringify({ cmd: 'restart', node: 1 }) + '\n');
      // The harness's bound for a restart. The spinning wait read the command only after its own 20 s, then ignored it: never restarted.
      await until('node 1 restarted', () => nodeLine(true) !== undefined, 20_000);
      await until('the run\'s end', () => lines.some((o) => o.t === 'done'), 30_000);
      expect(stderr).not.toContain('asked for after the cluster stopped');
      driver.stdin!.end();
      expect((await driver).exitCode).toBe(0);
    } finally {
      signalGroup(driver.pid);
      await driver;
    }
  }, 150_000);
});
