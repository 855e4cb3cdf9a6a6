// The gate's scheduler (pure): a work budget's rounds, a time budget's shares, a cluster's next workload.
import { describe, expect, it } from 'vitest';
import { MIN_SLICE_MS, nextWorkload, TimeShares, turnOrder, WorkTurns } from './scheduler.js';

describe('the gate\'s scheduler (pure)', () => {
  it('starts each round and each seed at another suite, keeping the order around', () => {
    expect(turnOrder(['a', 'b', 'c'], 0, 0)).toEqual(['a', 'b', 'c']);
    expect(turnOrder(['a', 'b', 'c'], 0, 1)).toEqual(['b', 'c', 'a']);
    expect(turnOrder(['a', 'b', 'c'], 7, 0)).toEqual(['b', 'c', 'a']);
    expect(turnOrder(['a', 'b', 'c'], -1, 0)).toEqual(['c', 'a', 'b']);
    expect(turnOrder([], 3, 2)).toEqual([]);
  });

  it('under a work budget gives exactly N inputs, one per suite a round, each round starting at another suite', () => {
    const turns = new WorkTurns(['a', 'b', 'c'], 0, { total: 7 }, () => false);
    const given = Array.from({ length: 9 }, () => turns.next());
    expect(given).toEqual(['a', 'b', 'c', 'b', 'c', 'a', 'c', undefined, undefined]);
    expect(['a', 'b', 'c'].map((s) => turns.inputsOf(s))).toEqual([2, 2, 3]);
    // The order is the seed's alone: the same seed, the same turns.
    const again = new WorkTurns(['a', 'b', 'c'], 0, { total: 7 }, () => false);
    expect(Array.from({ length: 7 }, () => again.next())).toEqual(given.slice(0, 7));
  });

  it('under a work budget leaves a suite done out, giving its inputs to the others, and per suite gives each its own count', () => {
    const done = new Set<string>();
    const turns = new WorkTurns(['a', 'b', 'c'], 0, { total: 6 }, (s) => done.has(s));
    expect([turns.next(), turns.next()]).toEqual(['a', 'b']);
    done.add('c');
    expect([turns.next(), turns.next(), turns.next(), turns.next(), turns.next()]).toEqual(['b', 'a', 'a', 'b', undefined]);
    const counts: Record<string, number> = { a: 1, b: 3, c: 0 };
    const perSuite = new WorkTurns(['a', 'b', 'c'], 1, { inputsOf: (s) => counts[s] }, () => false);
    expect(Array.from({ length: 5 }, () => perSuite.next())).toEqual(['b', 'a', 'b', 'b', undefined]);
    expect(() => new WorkTurns(['a'], 0, { total: 1.5 }, () => false)).toThrow(/invariant/);
  });

  it('under a time budget gives the suite that used the least time for its weight the next input, ties in the seed\'s order', () => {
    const used: Record<string, number> = { a: 0, b: 0, c: 0 };
    const weight: Record<string, number> = { a: 2, b: 1, c: 1 };
    const shares = new TimeShares(['a', 'b', 'c'], 1, { leftMs: () => 60_000, done: () => false, owed: () => false, usedMs: (s) => used[s], weight: (s) => weight[s] });
    expect(shares.next()).toBe('b');
    used.b = 10_000;
    expect(shares.next()).toBe('c');
    used.c = 1_000;
    expect(shares.next()).toBe('a');
    // a has twice the weight: 15 s of its time counts as 7.5 s, less than b's 10 s.
    used.a = 15_000;
    expect(shares.next()).toBe('c');
    used.c = 12_000;
    expect(shares.next()).toBe('a');
  });

  it('below a slice of judging\'s time gives inputs only to suites the floor still owes a case, then ends for good', () => {
    let leftMs = 60_000;
    const judged = new Set<string>(['a']);
    const shares = new TimeShares(['a', 'b', 'c'], 0, { leftMs: () => leftMs, done: () => false, owed: (s) => !judged.has(s), usedMs: (s) => (s === 'a' ? 1 : 0), weight: () => 1 });
    expect(shares.next()).toBe('b');
    leftMs = MIN_SLICE_MS - 1;
    expect(shares.next()).toBe('b');
    judged.add('b');
    expect(shares.next()).toBe('c');
    judged.add('c');
    expect(shares.next()).toBeUndefined();
    // Over is over: time coming back (a clock that went backwards, say) starts no input.
    leftMs = 60_000;
    expect(shares.next()).toBeUndefined();
  });

  it('gives an exhaustive suite whose inputs take 20 to 30 s at least a third of the judging time of a 300 s gate, and the cheap suites no run of inputs while it waits', () => {
    // A slow driver's suites (issue 47): every crash state of a workload 20-30 s an input, its
    // recoveries cut 30 s, faults 2 s. The costs are given, not slept: judging's 255 s of 300 s.
    const cost: Record<string, (k: number) => number> = { driver: (k) => 20_000 + (k % 3) * 5_000, 'cut-during-recovery': () => 30_000, faults: () => 2_000 };
    const weight: Record<string, number> = { driver: 2, 'cut-during-recovery': 1, faults: 1 };
    const used: Record<string, number> = { driver: 0, 'cut-during-recovery': 0, faults: 0 };
    const inputs: Record<string, number> = { driver: 0, 'cut-during-recovery': 0, faults: 0 };
    const judgingMs = 255_000;
    let spent = 0;
    const order: string[] = [];
    const shares = new TimeShares(Object.keys(cost), 7, { leftMs: () => judgingMs - spent, done: () => false, owed: (s) => inputs[s] === 0, usedMs: (s) => used[s], weight: (s) => weight[s] });
    for (let s = shares.next(); s !== undefined; s = shares.next()) {
      const ms = cost[s](inputs[s]++);
      used[s] += ms;
      spent += ms;
      order.push(s);
    }
    const total = Object.values(used).reduce((a, b) => a + b, 0);
    expect(used.driver / total).toBeGreaterThanOrEqual(1 / 3);
    expect(inputs['cut-during-recovery']).toBeGreaterThan(0);
    // Between two driver inputs the cheap suite runs at most what one driver input costs (20-30 s of 2 s inputs, halved by the weight).
    const runs = order.join(' ').split('driver').slice(1, -1).map((between) => between.split(' ').filter((x) => x === 'faults').length);
    expect(Math.max(...runs)).toBeLessThanOrEqual(Math.ceil(30_000 / 2 / 2_000) + 1);
  });

  it('starts a cluster workload while the budget holds one, and past it one more only for a kind the floor still owes', () => {
    expect(nextWorkload(6_000, 6_000, false, false)).toBe('start');
    expect(nextWorkload(5_999, 6_000, false, false)).toBe('none');
    expect(nextWorkload(5_999, 6_000, false, true)).toBe('overtime');
    expect(nextWorkload(0, 6_000, true, true)).toBe('none');
  });
});
