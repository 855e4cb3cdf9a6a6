// The gate's floor on hand-made rows: what each kind of suite must reach, and the words for it.
import { describe, expect, it } from 'vitest';
import type { TargetRef } from '../harness/target.js';
import { emptyCoverage, policyCoverage } from '../harness/coverage.js';
import { newRow } from '../report/gate-results.js';
import { findTarget } from '../targets/index.js';
import { checkFloor, formatFloor, SCENARIO_FLOOR } from './floor.js';
import { gateSuites } from './suites.js';

const target = findTarget('powercut-queue');
const ref: TargetRef = { target: target.name };

describe('the gate floor', () => {
  it('asks every exhaustive design suite for a case and a crash state under each policy used, and says what raises an unmet one', () => {
    const suite = gateSuites(target, 'exhaustive', undefined, {}, ref).find((s) => s.name === 'atomic-file/sync')!;
    const row = newRow(suite.name, 'suite');
    row.cases = 40;
    row.coverage = emptyCoverage();
    policyCoverage(row.coverage, 'lose-unsynced').states = 40;
    const checks = checkFloor([{ row, floor: suite.floor }]);
    expect(checks.map((c) => [c.what, c.figure, c.met])).toEqual([['cases judged', 40, true], ['crash states under lose-unsynced', 40, true], ['crash states under torn', 0, false], ['lose-unsynced states judged of those listed', 40, true]]);
    expect(formatFloor(checks)).toContain("NOT met: suite atomic-file/sync: crash states under torn 0, needs at least 1; raise --time-budget (or --max-states, if it is below the number of policies)");
    // --policy lose-unsynced asks nothing of torn.
    const only = gateSuites(target, 'exhaustive', undefined, {}, ref, ['lose-unsynced']).find((s) => s.name === 'atomic-file/sync')!;
    expect(checkFloor([{ row, floor: only.floor }]).every((c) => c.met)).toBe(true);
  });
  it('asks the fault suite for a fault fired, cut-during-recovery for a recovery cut, random suites for landed cuts', () => {
    const bySuite = (mode: 'exhaustive' | 'random') => Object.fromEntries(gateSuites(target, mode, undefined, {}, ref).map((s) => [s.name, s.floor.map((q) => q.what)]));
    expect(bySuite('exhaustive')).toMatchObject({ faults: ['cases judged', 'faults fired'], 'cut-during-recovery': ['cases judged', 'recovery cuts landed'] });
    expect(bySuite('random')).toMatchObject({ 'append-log/sync': ['cases judged', 'cuts landed under lose-unsynced', 'cuts landed under torn'], 'torn-writes': ['cases judged', 'cuts landed under torn'] });
  });
  it('asks a scenario for every cut and fault it asks for', () => {
    const row = newRow('fsync-eio-then-retry', 'scenario');
    row.cases = 1;
    row.coverage = { ...emptyCoverage(), cases: 1, cutsRequested: 1, cutsLanded: 1, faultCases: 1, faultsFired: 0 };
    const unmet = checkFloor([{ row, floor: SCENARIO_FLOOR }]).filter((c) => !c.met);
    expect(unmet.map((c) => c.what)).toEqual(['faults fired']);
    expect(formatFloor(checkFloor([{ row, floor: SCENARIO_FLOOR }]))).toContain('scenarios: cases judged 1/1, cuts landed 1/1, recovery cuts landed 0/0, faults fired 0/1');
  });
});

describe('the share of lose-unsynced states', () => {
  const suite = () => gateSuites(target, 'exhaustive', undefined, {}, ref, ['lose-unsynced']).find((s) => s.name === 'append-log/sync')!;
  const rowWith = (judged: number, listed: number) => {
    const row = newRow('append-log/sync', 'suite');
    row.cases = judged;
    row.coverage = emptyCoverage();
    Object.assign(policyCoverage(row.coverage, 'lose-unsynced'), { states: judged, listed });
    return row;
  };
  it('asks a quarter of the lose-unsynced states listed judged, and prints judged / listed', () => {
    const met = checkFloor([{ row: rowWith(10, 40), floor: suite().floor }]);
    expect(met.every((c) => c.met)).toBe(true);
    expect(formatFloor(met)).toContain('append-log/sync: cases judged 10, crash states under lose-unsynced 10, lose-unsynced states judged of those listed 10/40');
    const below = checkFloor([{ row: rowWith(9, 40), floor: suite().floor }]);
    expect(below.filter((c) => !c.met).map((c) => [c.what, c.figure, c.min, c.of])).toEqual([['lose-unsynced states judged of those listed', 9, 10, 40]]);
    expect(formatFloor(below)).toContain('NOT met: suite append-log/sync: lose-unsynced states judged of those listed 9/40, needs at least 10 (a quarter of 40); raise --time-budget');
    // A share rounds up: a quarter of 7 is 2.
    expect(checkFloor([{ row: rowWith(1, 7), floor: suite().floor }]).some((c) => !c.met)).toBe(true);
    expect(checkFloor([{ row: rowWith(2, 7), floor: suite().floor }]).every((c) => c.met)).toBe(true);
  });
  it('is not asked of the recovery-cut suite (each state recovered twice) nor when lose-unsynced is not used', () => {
    const whats = (s: ReturnType<typeof gateSuites>[number]) => s.floor.map((q) => q.what);
    expect(whats(gateSuites(target, 'exhaustive', undefined, {}, ref).find((s) => s.name === 'cut-during-recovery')!)).not.toContain('lose-unsynced states judged of those listed');
    expect(whats(gateSuites(target, 'exhaustive', undefined, {}, ref, ['torn']).find((s) => s.name === 'append-log/sync')!)).not.toContain('lose-unsynced states judged of those listed');
  });
});
