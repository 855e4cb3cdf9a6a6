import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { fairShares, spreadEvenly } from './spread.js';

describe('a bounded sample', () => {
  it('spreads evenly from the first item to the last', () => {
    expect(spreadEvenly([0, 1, 2, 3, 4, 5, 6, 7, 8], 3)).toEqual([0, 4, 8]);
    expect(spreadEvenly([0, 1], 5)).toEqual([0, 1]);
    expect(spreadEvenly([0, 1, 2], 0)).toEqual([]);
  });

  it('shares a cap fairly: small lists keep all, the rest split what they leave', () => {
    expect(fairShares([1500, 10, 10, 400], 1000)).toEqual([580, 10, 10, 400]);
    expect(fairShares([5, 5], 100)).toEqual([5, 5]);
    expect(fairShares([3, 3, 3], 2)).toEqual([1, 1, 0]);
    fc.assert(fc.property(fc.array(fc.nat(50)), fc.nat(200), (sizes, cap) => {
      const shares = fairShares(sizes, cap);
      const total = shares.reduce((a, b) => a + b, 0);
      expect(total).toBe(Math.min(cap, sizes.reduce((a, b) => a + b, 0)));
      shares.forEach((s, i) => expect(s).toBeLessThanOrEqual(sizes[i]));
      // Two lists that were both cut differ by at most one.
      const cut = shares.filter((s, i) => s < sizes[i]);
      if (cut.length > 0) expect(Math.max(...cut) - Math.min(...cut)).toBeLessThanOrEqual(1);
      // A list cut keeps at least as many as any list kept whole.
      const whole = shares.filter((s, i) => s === sizes[i]);
      if (cut.length > 0 && whole.length > 0) expect(Math.min(...cut)).toBeGreaterThanOrEqual(Math.max(...whole) - 1);
    }));
  });
});
