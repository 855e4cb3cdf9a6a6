// The phases' shares of a budget and their deadlines, on a hand-driven clock.
import { describe, expect, it } from 'vitest';
import { Budget } from './budget.js';
import { formatPhases, Phases } from './phases.js';

function clocked(totalMs: number, failureFound = () => true) {
  let t = 1_000;
  const now = () => t;
  const budget = new Budget(totalMs, now);
  return { phases: new Phases(budget, now, failureFound), tick: (ms: number) => { t += ms; }, now };
}

describe('the gate phases', () => {
  it('gives causes, shrinking and artifacts their shares, and judging what is left less the room they keep', () => {
    const { phases } = clocked(100_000);
    expect(phases.shareMs('causes')).toBe(20_000);
    expect(phases.shareMs('shrink')).toBe(15_000);
    expect(phases.shareMs('artifacts')).toBe(5_000);
    // Judging leaves the artifacts' share and 10 % for causes of what it finds last.
    expect(phases.leftMs('record+judge')).toBe(85_000);
    // Causes may also use what shrinking has not.
    expect(phases.leftMs('causes')).toBe(35_000);
    expect(phases.leftMs('artifacts')).toBe(100_000);
  });

  it('gives judging the causes\' room back while no failure is found: a share no failure needs is judging\'s', () => {
    let found = false;
    const { phases } = clocked(100_000, () => found);
    expect(phases.leftMs('record+judge')).toBe(95_000);
    found = true;
    expect(phases.leftMs('record+judge')).toBe(85_000);
  });

  it('under a work budget bounds no phase by time: every share is unbounded, and only the time used is counted', () => {
    const { phases, tick } = clocked(Infinity);
    for (const p of ['record+judge', 'causes', 'shrink', 'artifacts'] as const) expect([phases.leftMs(p), phases.deadlineMs(p)]).toEqual([Infinity, Infinity]);
    const leave = phases.enter('causes');
    tick(2_000);
    leave();
    expect(phases.uses().map((u) => [u.phase, u.shareMs, u.usedMs])).toEqual([['record+judge', undefined, 0], ['causes', undefined, 2_000], ['shrink', undefined, 0], ['artifacts', undefined, 0]]);
    expect(formatPhases(phases.uses(), Infinity)).toBe('phases: record+judge 0.0 s, causes 2.0 s, shrink 0.0 s, artifacts 0.0 s (a work budget: no time shares, each phase bounded by counts)');
  });

  it('counts time to the innermost phase entered; causes use what shrinking has not, and past both shares no time is left', () => {
    const { phases, tick } = clocked(100_000);
    tick(10_000);
    const leaveCauses = phases.enter('causes');
    tick(5_000);
    const leaveArtifacts = phases.enter('artifacts');
    tick(1_000);
    leaveArtifacts();
    tick(16_000);
    leaveCauses();
    leaveCauses(); // leaving twice changes nothing
    tick(2_000);
    expect(phases.uses().map((u) => [u.phase, u.usedMs])).toEqual([['record+judge', 12_000], ['causes', 21_000], ['shrink', 0], ['artifacts', 1_000]]);
    // Causes past their share use what shrinking has not (15 s less the 1 s over), and shrinking what is left.
    expect([phases.leftMs('causes'), phases.leftMs('shrink')]).toEqual([14_000, 14_000]);
    const leaveShrink = phases.enter('shrink');
    tick(14_000);
    leaveShrink();
    expect([phases.leftMs('causes'), phases.leftMs('shrink')]).toEqual([0, 0]);
    // With the causes' share spent, judging keeps no room for them: all but the artifacts' unspent 4 s.
    expect(phases.leftMs('record+judge')).toBe(100_000 - 48_000 - 4_000);
  });

  it('ends every phase by the end of the budget, whatever its share', () => {
    const { phases, tick, now } = clocked(20_000);
    tick(19_000);
    expect(phases.deadlineMs('shrink')).toBe(now());
    expect(phases.deadlineMs('record+judge')).toBe(now());
    expect(phases.deadlineMs('artifacts')).toBe(now() + 1_000);
    tick(5_000);
    expect(phases.leftMs('artifacts')).toBe(0);
  });

  it('hands a phase down as a share and says each phase in one line', () => {
    const { phases, tick } = clocked(45_000);
    const shrink = phases.share('shrink');
    const leave = shrink.enter();
    tick(3_000);
    leave();
    expect(shrink.deadlineMs()).toBe(phases.deadlineMs('shrink'));
    expect(formatPhases(phases.uses(), 45_000)).toBe('phases: record+judge 0.0 s, causes 0.0 s of 9.0 s, shrink 3.0 s of 6.8 s, artifacts 0.0 s of 2.3 s (budget 45.0 s)');
  });
});
