import { describe, expect, it } from 'vitest';
import { shrinkLiveCase, shrinkSteps } from './cluster-shrink.js';

describe('shrinking a cluster workload\'s steps', () => {
  it('finds the fewest steps that still fail, in their order', async () => {
    // Fails when a write of 3 comes before the read of it.
    const steps = ['w1', 'w2', 'w3', 'r1', 'a1', 'r3', 'w4'];
    const fails = async (s: readonly string[]) => s.includes('w3') && s.indexOf('w3') < s.indexOf('r3');
    const r = await shrinkSteps(steps, fails, { endsAtMs: Infinity });
    expect(r.steps).toEqual(['w3', 'r3']);
    expect(r.cutShort).toBe(false);
    expect(r.tried).toBeGreaterThan(0);
  });

  it('keeps the smallest failing candidate seen when its time runs out, and never tries an empty workload', async () => {
    let clock = 0;
    const seen: number[] = [];
    const r = await shrinkSteps([1, 2, 3, 4, 5, 6, 7, 8], async (s) => {
      seen.push(s.length);
      clock += 10;
      return s.includes(8);
    }, { endsAtMs: 25 }, () => clock);
    expect(r.cutShort).toBe(true);
    expect(r.tried).toBe(3);
    expect(r.steps.length).toBeLessThan(8);
    expect(r.steps).toContain(8);
    expect(seen).not.toContain(0);
  });

  it('under a work budget tries at most its candidates, whatever the clock says, and keeps the smallest failing one', async () => {
    const seen: number[] = [];
    const bound = { endsAtMs: Infinity, maxCandidates: 3 };
    const r = await shrinkSteps([1, 2, 3, 4, 5, 6, 7, 8], async (s) => (seen.push(s.length), s.includes(8)), bound, () => { throw new Error('a work budget reads no clock'); });
    expect([r.tried, r.cutShort]).toEqual([3, true]);
    expect(seen).toHaveLength(3);
    expect(r.steps).toContain(8);
    // A live cut's pause counts as a candidate too.
    let calls = 0;
    const live = await shrinkLiveCase([1, 2, 3, 4, 5, 6, 7, 8], 'pause', async () => (calls++, true), bound, () => 0);
    expect([calls, live.tried, live.cutShort]).toEqual([3, 3, true]);
  });

  it('keeps every step when no smaller candidate fails', async () => {
    const r = await shrinkSteps(['a', 'b'], async (s) => s.length === 2, { endsAtMs: Infinity });
    expect(r.steps).toEqual(['a', 'b']);
  });
});

describe('shrinking a live cut\'s case', () => {
  it('drops the pause when the case fails without it, then shrinks the steps without it', async () => {
    const runs: string[] = [];
    const r = await shrinkLiveCase(['w1', 'w2', 'r1'], 'pause', async (s, pause) => {
      runs.push(`${s.join('+')}${pause ? ' paused' : ''}`);
      return s.includes('w2');
    }, { endsAtMs: Infinity });
    expect(r).toMatchObject({ steps: ['w2'], pause: undefined, pauseDropped: true });
    expect(runs[0]).toBe('w1+w2+r1');
    expect(runs.every((x) => !x.endsWith('paused'))).toBe(true);
    expect(r.tried).toBe(runs.length);
  });

  it('keeps the pause the failure needs, and shrinks the steps with it', async () => {
    const r = await shrinkLiveCase(['w1', 'w2', 'r1'], 'pause', async (s, pause) => pause !== undefined && s.includes('r1'), { endsAtMs: Infinity });
    expect(r).toMatchObject({ steps: ['r1'], pause: 'pause', pauseDropped: false });
  });

  it('tries nothing once its time is out', async () => {
    let calls = 0;
    const r = await shrinkLiveCase(['w1', 'w2'], 'pause', async () => (calls++, true), { endsAtMs: 0 }, () => 1);
    expect(calls).toBe(0);
    expect(r).toMatchObject({ steps: ['w1', 'w2'], pause: 'pause', pauseDropped: false, cutShort: true });
  });
});
