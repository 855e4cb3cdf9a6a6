import { describe, expect, it } from 'vitest';
import { inputFits, MAX_ROUND_SLICE_MS, MIN_SLICE_MS, nextWorkload, Rounds, turnMs, turnOrder } from './scheduler.js';

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

  it('gives every suite not done a turn each round, each round starting at another, until none is left', () => {
    const done = new Set<string>();
    const rounds = new Rounds(['a', 'b', 'c'], 0, { leftMs: () => 60_000, done: (s) => done.has(s), owed: () => false });
    const turns = (n: number) => Array.from({ length: n }, () => rounds.next()).map((t) => t && `${t.suite}${t.round}/${t.active.length}`);
    expect(turns(3)).toEqual(['a0/3', 'b0/3', 'c0/3']);
    // A suite done in its turn is left out from the next round on (its round's others keep their turns).
    done.add('c');
    expect(turns(2)).toEqual(['b1/2', 'a1/2']);
    done.add('a');
    done.add('b');
    expect(turns(2)).toEqual([undefined, undefined]);
  });

  it('below a slice of judging\'s time gives turns only to suites the floor still owes a case, then ends for good', () => {
    let leftMs = 60_000;
    const judged = new Set<string>(['a']);
    const rounds = new Rounds(['a', 'b', 'c'], 0, { leftMs: () => leftMs, done: () => false, owed: (s) => !judged.has(s) });
    expect(rounds.next()?.suite).toBe('a');
    leftMs = MIN_SLICE_MS - 1;
    // b is owed (its turn stands), c too; in the next round only what is still owed.
    expect(rounds.next()?.suite).toBe('b');
    judged.add('b');
    expect(rounds.next()?.suite).toBe('c');
    expect(rounds.next()?.suite).toBe('c');
    judged.add('c');
    expect(rounds.next()).toBeUndefined();
    // Over is over: time coming back (a clock that went backwards, say) starts no round.
    leftMs = 60_000;
    expect(rounds.next()).toBeUndefined();
  });

  it('starts a cluster workload while the budget holds one, and past it one more only for a kind the floor still owes', () => {
    expect(nextWorkload(6_000, 6_000, false, false)).toBe('start');
    expect(nextWorkload(5_999, 6_000, false, false)).toBe('none');
    expect(nextWorkload(5_999, 6_000, false, true)).toBe('overtime');
    expect(nextWorkload(0, 6_000, true, true)).toBe('none');
  });
});
