// Steering (pure, seeded): per suite, a feature reached by at most RARE_SHARE of its inputs is rare;
// while one is, most inputs mutate one that reached a rare feature, the rarer the likelier; once no
// feature is rare (also: before any is), every input is fresh.
import { describe, expect, it } from 'vitest';
import type { CrashInput } from '../../properties/crash-property.js';
import { MUTATE_SHARE, RARE_SHARE, Steering } from './steering.js';

const input = (n: number): CrashInput => ({ workload: { steps: [{ op: 'write', sizesBytes: [n], waitDurable: false }] }, settings: {}, cuts: [] });
const sizeOf = (p: CrashInput | undefined) => (p && p.workload.steps[0].op === 'write' ? p.workload.steps[0].sizesBytes[0] : undefined);
const picks = (s: Steering, suite: number, n: number) => Array.from({ length: n }, () => sizeOf(s.pick(suite)));

describe('steering', () => {
  it('hands out nothing while no feature is rare, then mostly inputs that reached a rare one', () => {
    const s = new Steering(1);
    expect(picks(s, 0, 10)).toEqual(Array(10).fill(undefined));
    // Three inputs reach only a common feature; the fourth also purges: 1 of 4 inputs, rare.
    for (let i = 0; i < 3; i++) s.observe(0, input(100 + i), { 'write /page.*': 1 });
    expect(picks(s, 0, 10)).toEqual(Array(10).fill(undefined)); // a feature of every input is not rare
    s.observe(0, input(7), { 'write /page.*': 1, purges: 1 });
    expect(s.rare(0)).toEqual([{ feature: 'purges', share: 0.25 }]);
    const p = picks(s, 0, 400);
    const steered = p.filter((x) => x !== undefined).length;
    expect(steered).toBeGreaterThan(400 * MUTATE_SHARE - 40);
    expect(steered).toBeLessThan(400 * MUTATE_SHARE + 40);
    expect(p.every((x) => x === undefined || x === 7)).toBe(true); // only the purging input, never a common one
    expect(s.pick(1)).toBeUndefined(); // another suite's features and inputs are its own
  });

  it('prefers the rarer of two rare features, and stops steering toward one once it is common', () => {
    const s = new Steering(2);
    for (let i = 0; i < 16; i++) s.observe(0, input(100 + i), { 'write /page.*': 1 });
    s.observe(0, input(1), { 'write /page.*': 1, purges: 1 }); // 1 of 20 inputs
    for (let i = 0; i < 3; i++) s.observe(0, input(2), { 'write /page.*': 1, rolls: 1 }); // 3 of 20
    expect(s.rare(0).map((r) => r.feature)).toEqual(['purges', 'rolls']);
    const p = picks(s, 0, 1000);
    const ones = p.filter((x) => x === 1).length;
    const twos = p.filter((x) => x === 2).length;
    expect(ones).toBeGreaterThan(3 * twos); // weight 1/share^2: 9 to 1
    expect(twos).toBeGreaterThan(0);
    // The purging input's mutants purge: purges reaches more than RARE_SHARE of the inputs, and is no longer steered toward.
    while ((s.rare(0).find((r) => r.feature === 'purges')?.share ?? 1) <= RARE_SHARE) s.observe(0, input(1), { 'write /page.*': 1, purges: 1 });
    expect(s.rare(0).map((r) => r.feature)).toEqual(['rolls']);
    expect(picks(s, 0, 200).every((x) => x === undefined || x === 2)).toBe(true);
  });

  it('counts the mutants that reached the feature they were aimed at', () => {
    const s = new Steering(3);
    for (let i = 0; i < 7; i++) s.observe(0, input(100 + i), { 'write /page.*': 1 });
    s.observe(0, input(7), { 'write /page.*': 1, purges: 1 });
    let base: CrashInput | undefined;
    while (!(base = s.pick(0)));
    s.observe(0, base, { 'write /page.*': 1, purges: 1 }); // aimed at purges, reached it
    while (!(base = s.pick(0)));
    s.observe(0, base, { 'write /page.*': 1 }); // missed
    s.pick(1);
    s.observe(1, input(3), { purges: 1 }); // a fresh input of another suite: not a mutant
    expect(s.aims).toEqual({ mutants: 2, hit: 1 });
    expect(s.steered).toBe(2);
  });
});
