// The cut kinds of a cluster gate: which cuts each counts, what --nodes-cut asks for, seeded draws.
import { describe, expect, it } from 'vitest';
import { drawLiveCase } from '../faults/live-draw.js';
import { cutSizes, kindOfCut, kindsAsked, majorityOf } from '../faults/cut-kinds.js';
import { seededRandom, spreadOrder } from './cluster-kinds.js';

describe('cluster cut kinds', () => {
  it('count each cut under the first kind asked that it fits', () => {
    expect([1, 2, 3, 4, 5].map(majorityOf)).toEqual([1, 2, 2, 3, 3]);
    const all = kindsAsked('all-kinds', 5);
    expect(all).toEqual(['coordinated', 'one', 'minority', 'majority']);
    expect(kindOfCut(all, undefined, 5)).toBe('coordinated');
    expect(kindOfCut(all, [3], 5)).toBe('one');
    expect(kindOfCut(all, [1, 4], 5)).toBe('minority');
    expect(kindOfCut(all, [0, 1, 2], 5)).toBe('majority');
    expect(kindOfCut(['minority'], [3], 5), 'a single node is a minority when one-node cuts are not asked').toBe('minority');
    expect(kindOfCut(['coordinated'], [3], 5)).toBeUndefined();
  });

  it('all-kinds with three nodes leaves out minority, which would count nothing beside one node', () => {
    expect(kindsAsked('all-kinds', 3)).toEqual(['coordinated', 'one', 'majority']);
    expect(kindsAsked('minority', 3)).toEqual(['minority']);
    expect(kindsAsked('all-kinds', 2), 'two nodes have no majority short of both').toEqual(['coordinated', 'one']);
  });

  it('draw live cuts of the kind asked, repeatably from the seed (the sizes each kind is counted under, the nodes by drawLiveCase)', () => {
    const asked = kindsAsked('all-kinds', 5);
    expect(asked.map((k) => cutSizes(k, asked, 5))).toEqual([[5], [1], [2], [3, 4]]);
    expect(cutSizes('minority', ['minority'], 5), 'a minority alone may be one node').toEqual([1, 2]);
    const draw = (seed: number) => asked.map((k) => drawLiveCase(seed, 100, 5, { kinds: [k], sizes: cutSizes(k, asked, 5) }));
    expect(draw(7)).toEqual(draw(7));
    for (let seed = 0; seed < 50; seed++) {
      const [all, one, minority, majority] = draw(seed).map((d) => d.nodesCut);
      expect(all).toEqual([0, 1, 2, 3, 4]);
      expect(one).toHaveLength(1);
      expect(minority).toHaveLength(2);
      expect(majority.length).toBeGreaterThanOrEqual(3);
      expect(majority.length).toBeLessThan(5);
      for (const nodes of [one, minority, majority]) expect([...nodes].sort()).toEqual(nodes);
      expect(draw(seed)[0].pause, 'a coordinated cut is never paused first').toBeUndefined();
    }
  });

  it('orders states so that every prefix spreads over the whole run, from a seeded rotation', () => {
    const items = Array.from({ length: 100 }, (_, i) => i);
    const order = spreadOrder(items, seededRandom(1));
    expect([...order].sort((x, y) => x - y)).toEqual(items);
    // The first four of a rotation of 0..99 fall in four different quarters of the rotated run.
    const shift = order[0] - 50;
    const quarter = (x: number) => Math.floor((((x - shift) % 100) + 100) % 100 / 25);
    expect(new Set(order.slice(0, 4).map(quarter)).size).toBeGreaterThanOrEqual(3);
    expect(spreadOrder(items, seededRandom(2))).not.toEqual(order);
    expect(spreadOrder([], seededRandom(1))).toEqual([]);
  });
});
