import { describe, expect, it } from 'vitest';
import { inputFits, MAX_ROUND_SLICE_MS, MIN_SLICE_MS, turnMs, turnOrder } from './scheduler.js';

describe('the gate\'s scheduler (pure)', () => {
  it('starts each round and each seed at another suite, keeping the order around', () => {
    expect(turnOrder(['a', 'b', 'c'], 0, 0)).toEqual(['a', 'b', 'c']);
    expect(turnOrder(['a', 'b', 'c'], 0, 1)).toEqual(['b', 'c', 'a']);
    expect(turnOrder(['a', 'b', 'c'], 7, 0)).toEqual(['b', 'c', 'a']);
    expect(turnOrder(['a', 'b', 'c'], -1, 0)).toEqual(['c', 'a', 'b']);
    expect(turnOrder([], 3, 2)).toEqual([]);
  });

  it('gives a turn an equal share of what is left, between one slice and the round\'s cap', () => {
    expect(turnMs(60_000, 4, 0)).toBe(15_000);
    expect(turnMs(600_000, 2, 0)).toBe(MAX_ROUND_SLICE_MS);
    expect(turnMs(4_000, 4, 0)).toBe(MIN_SLICE_MS);
  });

  it('keeps a slice for each other suite the floor still owes a case, and shares what is left when it cannot', () => {
    // 20 s left, two suites owed besides this one: this turn leaves them 3 s each.
    expect(turnMs(20_000, 2, 2)).toBe(10_000);
    expect(turnMs(10_000, 2, 2)).toBe(10_000 - 2 * MIN_SLICE_MS);
    // Too little for a slice each: a third each.
    expect(turnMs(6_000, 3, 2)).toBe(2_000);
    expect(() => turnMs(10_000, 0, 0)).toThrow(/invariant/);
  });

  it('starts another input only if one as long as the longest so far ends within the turn and the time left', () => {
    expect(inputFits(1_000, 2_000, 5_000, 10_000)).toBe(true);
    expect(inputFits(1_000, 4_000, 5_000, 10_000)).toBe(false);
    expect(inputFits(1_000, 0, 5_000, MIN_SLICE_MS - 1)).toBe(false);
    expect(inputFits(1_000, 8_000, 20_000, 7_000)).toBe(false);
  });
});
