// Steering (pure, seeded): inputs that reached a rare feature are kept per suite and handed out for
// mutation, the rarer their rarest feature the likelier; common ones are not kept.
import { describe, expect, it } from 'vitest';
import type { CrashInput } from '../../properties/crash-property.js';
import { RARE_RUNS, Steering } from './steering.js';

const input = (n: number): CrashInput => ({ workload: { steps: [{ op: 'write', sizesBytes: [n], waitDurable: false }] }, settings: {}, cuts: [] });

describe('steering', () => {
  it('hands out nothing until a suite has a corpus, then mostly its entries', () => {
    const s = new Steering(1);
    expect(Array.from({ length: 10 }, () => s.pick(0))).toEqual(Array(10).fill(undefined));
    s.observe(0, input(1), { 'unlink /page.*': 1, purges: 1 });
    const picks = Array.from({ length: 100 }, () => s.pick(0));
    expect(picks.filter((p) => p !== undefined).length).toBeGreaterThan(60);
    expect(picks.every((p) => p === undefined || p.workload.steps[0].op === 'write')).toBe(true);
    expect(s.pick(1)).toBeUndefined(); // another suite's corpus is its own
  });
  it('keeps an input only while one of its features is rare, and prefers the rarest', () => {
    const s = new Steering(2);
    for (let i = 0; i < RARE_RUNS; i++) s.observe(0, input(100 + i), { 'write /page.*': 1 });
    s.observe(0, input(999), { 'write /page.*': 1 }); // common by now: not kept
    s.observe(0, input(7), { 'write /page.*': 1, purges: 1 });
    const picked = new Map<number, number>();
    for (let i = 0; i < 400; i++) {
      const p = s.pick(0);
      if (p && p.workload.steps[0].op === 'write') picked.set(p.workload.steps[0].sizesBytes[0], (picked.get(p.workload.steps[0].sizesBytes[0]) ?? 0) + 1);
    }
    expect(picked.has(999)).toBe(false);
    // The purging input (purges reached once) beats each of the others (their rarest feature reached 4 times).
    expect(picked.get(7)!).toBeGreaterThan(Math.max(...[100, 101, 102].map((n) => picked.get(n) ?? 0)));
  });
});
