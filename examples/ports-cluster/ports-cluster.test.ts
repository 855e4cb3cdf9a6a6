// The example store whose nodes keep their ports in their data folders (examples/ports-cluster,
// written from docs/driver-protocol.md alone) under every cut kind, bounded by work: one recorded
// run, its coordinated and one-node crash states (a few of each, spread over the run) recovered in
// four slots at once from copies of the same disks, and a live cut of each kind (coordinated, one
// node, a majority). Every driver process has a loopback of its own, so no recovery finds its
// ports taken: no `address already in use`, and every verdict passes. (With --network host the
// same recoveries collide: docs/driver-protocol.md, "Ports and the network".)
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import path from 'node:path';
import { REPO_ROOT } from '../../src/harness/dist-path.js';
import { startTempDaemon, type TempDaemon } from '../../src/harness/daemon-process.js';
import { externalTarget } from '../../src/targets/external.js';
import { mergeTimeouts } from '../../src/harness/driver-process.js';
import { describeDriverNetwork, driverNetwork } from '../../src/harness/driver-network.js';
import { ClusterStatePool, recordCluster, type ClusterStateVerdict } from '../../src/harness/cluster/cluster-pool.js';
import { runClusterCase, type ClusterInput } from '../../src/harness/cluster/cluster-run.js';
import { spreadEvenly } from '../../fusefs/model/spread.js';
import { requireRoot } from '../../fusefs/testing.js';

const target = externalTarget({ command: `python3 ${path.join(REPO_ROOT, 'examples/ports-cluster/driver.py')}`, cwd: REPO_ROOT, nodes: 3 });
const INPUT: ClusterInput = {
  workload: {
    steps: [
      { op: 'write', sizesBytes: [120, 900], waitDurable: true },
      { op: 'read', maxEvents: 2 },
      { op: 'ack', count: 1, order: 'oldest' },
      { op: 'write', sizesBytes: [300], waitDurable: true },
      { op: 'read', maxEvents: 2 },
      { op: 'ack', count: 2, order: 'oldest' },
      { op: 'write', sizesBytes: [64], waitDurable: true },
    ],
  },
  settings: {},
};
/** Crash states judged of each kind (coordinated, one node), spread over the run: more than the slots, so slots recover states of one run at once. */
const STATES_PER_KIND = 4;
const SLOTS = 4;
const IN_USE = /address already in use/i;

let cluster: TempDaemon;
beforeAll(async () => {
  requireRoot('a cluster of FUSE mounts');
  cluster = await startTempDaemon('ports-cluster', 3);
});
afterAll(async () => {
  await cluster?.stop();
});

describe('examples/ports-cluster: nodes that keep their ports in their data folders', () => {
  it('recovers crash states of one run in four slots at once, and live cuts of every kind, without a port taken', async () => {
    const network = driverNetwork();
    expect(network.isolation, describeDriverNetwork(network)).not.toBe('shared');
    const timeouts = mergeTimeouts();
    const rec = await recordCluster(cluster.daemon, target, INPUT, 1_000, timeouts);
    expect(rec.recorded.run.record.exitCode, rec.recorded.run.stderr).toBe(0);
    const coordinated = spreadEvenly(rec.states.filter((s) => s.id.nodes === undefined), STATES_PER_KIND);
    const oneNode = spreadEvenly(rec.states.filter((s) => s.id.nodes?.length === 1), STATES_PER_KIND);
    expect([coordinated.length, oneNode.length]).toEqual([STATES_PER_KIND, STATES_PER_KIND]);
    const queue = [...coordinated, ...oneNode];
    const pool = new ClusterStatePool(target, 3, SLOTS, timeouts);
    const verdicts: ClusterStateVerdict[] = [];
    try {
      await pool.judge(cluster.daemon, rec, () => queue.shift(), (v) => { verdicts.push(v); });
    } finally {
      await pool.stop();
    }
    expect(verdicts).toHaveLength(2 * STATES_PER_KIND);
    const said = (v: ClusterStateVerdict) => `state after request ${v.state.id.afterOp}${v.state.id.nodes ? ` cutting node ${v.state.id.nodes}` : ''}: ${v.violations.map((x) => x.message).join('; ')}\n${v.drainStderr}`;
    for (const v of verdicts) {
      expect(v.drainStderr, said(v)).not.toMatch(IN_USE);
      expect(v.violations, said(v)).toEqual([]);
    }

    // Live: the power of every node, of the leader alone, and of a majority (the leader and node 2), half way through the run.
    const atOp = Math.ceil(rec.recorded.trace.length / 2);
    for (const nodesCut of ['all', [0], [0, 2]] as const) {
      const r = await runClusterCase(cluster.daemon, target, { ...INPUT, nodesCut, cut: { atOp, timing: 'before' }, policy: 'lose-unsynced', seed: 1 }, timeouts);
      const what = `live cut of ${nodesCut === 'all' ? 'every node' : `nodes ${nodesCut.join(', ')}`} at request ${atOp}: ${r.violations.map((x) => x.message).join('; ')}\n${r.stderr.join('\n')}`;
      expect(r.frozenAt, what).toBe(atOp);
      expect(r.stderr.join('\n'), what).not.toMatch(IN_USE);
      expect(r.violations, what).toEqual([]);
    }
  }, 120_000);
});
