import { describe, expect, it } from 'vitest';
import { StateTurns } from './state-turns.js';

const drain = <S>(t: StateTurns<S>, allow: (k: number, s: S) => boolean = () => true, end?: () => boolean) => {
  const out: string[] = [];
  for (let x = t.next(allow, end); x; x = t.next(allow, end)) out.push(`${x.kind}:${String(x.state)}`);
  return out;
};

describe('StateTurns', () => {
  it('hands out the kinds in turn: the first state of each kind, then the second of each', () => {
    expect(drain(new StateTurns([['a', 'b', 'c'], ['x'], ['p', 'q']]))).toEqual(['0:a', '1:x', '2:p', '0:b', '2:q', '0:c']);
  });

  it('skips a state not allowed at its turn for good, and counts what it handed out per kind', () => {
    const t = new StateTurns([['a', 'b'], ['x', 'y']]);
    expect(drain(t, (k, s) => s !== 'a' && s !== 'y')).toEqual(['1:x', '0:b']);
    expect(t.taken).toEqual([1, 1]);
  });

  it('ends after a round once the caller says so, never within one', () => {
    let rounds = 0;
    const t = new StateTurns([['a', 'b', 'c'], ['x', 'y', 'z']]);
    expect(drain(t, () => true, () => ++rounds >= 2)).toEqual(['0:a', '1:x', '0:b', '1:y']);
    expect(t.next(() => true)).toBeUndefined();
  });

  it('hands out nothing for no kinds or empty kinds', () => {
    expect(drain(new StateTurns<string>([]))).toEqual([]);
    expect(drain(new StateTurns<string>([[], []]))).toEqual([]);
  });
});
