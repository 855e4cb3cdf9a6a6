// The seeded draw of a live cluster case: the same inputs give the same case, and every case it
// draws is one the harness can run (nodes of the cluster, a minority cut, a pause before the cut).
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { drawLiveCase } from './live-draw.js';

describe('drawLiveCase', () => {
  it('repeats with its seed', () => {
    expect(drawLiveCase(7, 150, 3)).toEqual(drawLiveCase(7, 150, 3));
    const cases = new Set(Array.from({ length: 50 }, (_, seed) => JSON.stringify(drawLiveCase(seed, 150, 3))));
    expect(cases.size, 'different seeds draw different cases').toBeGreaterThan(25);
  });

  it('draws a minority of the nodes, a cut within the run, and a pause of a node before the cut', () => {
    fc.assert(fc.property(fc.integer(), fc.integer({ min: 1, max: 5_000 }), fc.integer({ min: 2, max: 7 }), (seed, requests, n) => {
      const d = drawLiveCase(seed, requests, n, { maxPauseMs: 800 });
      expect(d.nodesCut.length).toBeGreaterThanOrEqual(1);
      expect(d.nodesCut.length).toBeLessThan(Math.floor(n / 2) + 1);
      if (d.kind === 'one') expect(d.nodesCut).toHaveLength(1);
      expect(new Set(d.nodesCut).size).toBe(d.nodesCut.length);
      expect(d.nodesCut).toEqual([...d.nodesCut].sort((a, b) => a - b));
      for (const k of d.nodesCut) expect(k).toBeLessThan(n);
      expect(d.cut.atOp).toBeGreaterThanOrEqual(1);
      expect(d.cut.atOp).toBeLessThanOrEqual(requests);
      if (d.pause) {
        expect(d.pause.atOp).toBeGreaterThanOrEqual(1);
        expect(d.pause.atOp).toBeLessThan(d.cut.atOp);
        expect(d.pause.node).toBeLessThan(n);
        expect(d.pause.durationMs).toBeGreaterThanOrEqual(100);
        expect(d.pause.durationMs).toBeLessThanOrEqual(800);
      }
    }));
  });

  it('draws both kinds and pauses some of the time, and none when told', () => {
    const draws = Array.from({ length: 200 }, (_, seed) => drawLiveCase(seed, 100, 5));
    expect(new Set(draws.map((d) => d.kind))).toEqual(new Set(['one', 'minority']));
    expect(draws.some((d) => d.nodesCut.length === 2), 'a minority of five may be two nodes').toBe(true);
    const paused = draws.filter((d) => d.pause).length;
    expect(paused).toBeGreaterThan(50);
    expect(paused).toBeLessThan(150);
    expect(Array.from({ length: 50 }, (_, seed) => drawLiveCase(seed, 100, 3, { pauseChance: 0 })).some((d) => d.pause)).toBe(false);
  });

  it('draws a majority short of every node, and a cut point within firstOp..lastOp', () => {
    fc.assert(fc.property(fc.integer(), fc.integer({ min: 3, max: 7 }), fc.integer({ min: 1, max: 50 }), (seed, n, first) => {
      const d = drawLiveCase(seed, 100, n, { kinds: ['majority'], firstOp: first, lastOp: 60 });
      expect(d.nodesCut.length).toBeGreaterThanOrEqual(Math.floor(n / 2) + 1);
      expect(d.nodesCut.length).toBeLessThan(n);
      expect(d.cut.atOp).toBeGreaterThanOrEqual(first);
      expect(d.cut.atOp).toBeLessThanOrEqual(60);
    }));
    expect(() => drawLiveCase(1, 100, 3, { kinds: ['majority'], sizes: [1] })).toThrow(/no majority cut of 1 nodes/);
  });

  it('refuses what it cannot draw from, naming it', () => {
    expect(() => drawLiveCase(1, 100, 1)).toThrow(/2 nodes or more, got 1/);
    expect(() => drawLiveCase(1, 0, 3)).toThrow(/requests must be a positive integer/);
    expect(() => drawLiveCase(1, 100, 3, { kinds: [] })).toThrow(/kinds/);
  });
});
