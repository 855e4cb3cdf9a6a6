// Every scenario on a real mount: the correct queue passes it, the variant it names fails it, and
// its crash points are actually reached (a scenario whose cut is never reached checks nothing).
import { describe, expect, it } from 'vitest';
import { runCase, type CaseResult } from '../src/harness/crash-run.js';
import { useTempDaemon } from '../properties/use-temp-daemon.js';
import { caseOf, defineScenario, findScenario, SCENARIOS } from './index.js';

const daemon = useTempDaemon('scenarios');

const run = (c: ReturnType<typeof caseOf>) => runCase(daemon(), c, { writeArtifacts: false, captureImages: false });
const describeViolations = (r: CaseResult) => r.violations.map((v) => v.message).join('\n') || '(none)';

function expectCutsReached(r: CaseResult): void {
  if (r.case.cut) expect(r.cuts[0].frozenAt, 'the crash point was never reached').not.toBeNull();
  if (r.case.recoveryCut) expect(r.cuts[1].frozenAt, 'the recovery crash point was never reached').not.toBeNull();
}

describe('registry', () => {
  it('has the eleven scenarios of issue 5, each exposing a known variant', () => {
    expect(SCENARIOS).toHaveLength(11);
    expect(new Set(SCENARIOS.map((s) => s.name)).size).toBe(11);
  });
  it('rejects an unknown variant, a named variant in the case, and a case that never cuts', () => {
    const base = SCENARIOS[0];
    expect(() => defineScenario({ ...base, name: 'x', exposes: 'nope' })).toThrow(/exposes 'nope', which is not a known variant/);
    expect(() => defineScenario({ ...base, name: 'x', case: { ...base.case, variant: 'fsync-error-ignored' } as typeof base.case })).toThrow(/must not name a variant/);
    expect(() => defineScenario({ ...base, name: 'x', case: { ...base.case, cut: undefined } })).toThrow(/needs a crash point/);
    expect(() => findScenario('nope')).toThrow(/unknown scenario 'nope'; valid names: new-page-dir-not-fsynced, /);
  });
});

describe.each(SCENARIOS.map((s) => [s.name, s] as const))('%s', (_name, scenario) => {
  it('passes on the correct queue', async () => {
    const r = await run(caseOf(scenario));
    expectCutsReached(r);
    expect(r.verdict, describeViolations(r)).toBe('pass');
  }, 60_000);
  it(`fails with ${scenario.exposes}`, async () => {
    const r = await run(caseOf(scenario, scenario.exposes));
    expectCutsReached(r);
    expect(r.verdict, 'the variant was not caught').toBe('fail');
  }, 60_000);
});
