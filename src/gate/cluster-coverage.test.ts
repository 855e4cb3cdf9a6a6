// A cluster gate's coverage: counted per node, added up over shards, and its floor in words.
import { describe, expect, it } from 'vitest';
import { policyCoverage } from '../harness/coverage.js';
import { newRow } from '../report/gate-results.js';
import { checkFloor } from './floor.js';
import { CLUSTER_LOSE_UNSYNCED_SHARE, countCut, countRequests, emptyClusterCoverage, formatClusterCoverage, formatClusterFloor, kindFloor, kindShareFloor, mergeClusterCoverage, type ClusterKindCoverage } from './cluster-coverage.js';

describe('cluster coverage', () => {
  it('counts requests and cuts per node, and adds shards up', () => {
    const a = emptyClusterCoverage(3, 'all-kinds', ['coordinated', 'one', 'majority']);
    countRequests(a, [{ node: 0 }, { node: 2 }, { node: 2 }] as never);
    countCut(a, undefined, 'state');
    countCut(a, [1], 'live');
    a.perKind.one!.liveCuts = 1;
    a.perKind.one!.liveLanded = 1;
    const b = emptyClusterCoverage(3, 'all-kinds', ['coordinated', 'one', 'majority']);
    countCut(b, [0, 2], 'state');
    b.perKind.majority!.states = 1;
    a.perKind.majority!.listed = 5;
    // A shard written before `listed` was counted adds nothing to it.
    delete (b.perKind.majority as Partial<ClusterKindCoverage>).listed;
    const m = mergeClusterCoverage([a, undefined, b])!;
    expect(m.perNode).toEqual([
      { node: 0, requests: 1, cutInStates: 2, cutLive: 0 },
      { node: 1, requests: 0, cutInStates: 1, cutLive: 1 },
      { node: 2, requests: 2, cutInStates: 2, cutLive: 0 },
    ]);
    expect([m.perKind.one!.liveLanded, m.perKind.majority!.states, m.perKind.majority!.listed]).toEqual([1, 1, 5]);
    expect(formatClusterCoverage(m)).toContain('  per node: node 0 1 request, cut in 2 states and 0 live cuts; node 1 0 requests');
    expect(mergeClusterCoverage([undefined])).toBeUndefined();
  });

  it('a kind that judged nothing is below the floor, named with what raises it', () => {
    const judged = newRow('cluster coordinated', 'suite');
    judged.cases = 4;
    const none = newRow('cluster majority', 'suite');
    const checks = checkFloor([{ row: judged, floor: [kindFloor('coordinated', true)] }, { row: none, floor: [kindFloor('majority', false)] }]);
    expect(checks.map((c) => c.met)).toEqual([true, false]);
    expect(formatClusterFloor(checks)).toContain('NOT met: cluster majority: majority cuts judged (crash states and landed live cuts) 0, needs at least 1; raise --time-budget or --max-states');
  });

  it('each kind must judge a share of the lose-unsynced states it listed (rounded up), named with its figures and what raises it', () => {
    const row = (judged: number, listed: number) => {
      const r = newRow('cluster one-node', 'suite');
      r.cases = judged;
      Object.assign(policyCoverage(r.coverage, 'lose-unsynced'), { states: judged, listed });
      return r;
    };
    const listed = Math.round(2.5 / CLUSTER_LOSE_UNSYNCED_SHARE);
    const needed = Math.ceil(CLUSTER_LOSE_UNSYNCED_SHARE * listed);
    expect(needed).toBe(3);
    const below = checkFloor([{ row: row(needed - 1, listed), floor: [kindFloor('one', true), kindShareFloor()] }]);
    expect(below.map((c) => c.met)).toEqual([true, false]);
    expect(formatClusterFloor(below)).toContain(`  NOT met: cluster one-node: lose-unsynced states judged of those listed ${needed - 1}/${listed}, needs at least ${needed} (5 % of ${listed}); raise --time-budget`);
    // Nothing listed asks nothing (a kind whose states --max-states left out is held to its case alone).
    expect(checkFloor([{ row: row(needed, listed), floor: [kindShareFloor()] }, { row: row(0, 0), floor: [kindShareFloor()] }]).map((c) => c.met)).toEqual([true, true]);
    expect(formatClusterFloor(checkFloor([{ row: row(needed, listed), floor: [kindShareFloor()] }]))).toMatch(/^floor: met \(1 requirements\): every cut kind asked for judged a case and 5 % of the lose-unsynced crash states it listed/);
  });
});
