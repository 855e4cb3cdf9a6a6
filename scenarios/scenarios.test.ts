// Every scenario on a real mount: the correct queue passes it, the variant it names fails exactly
// the check it names (not a hang), its crash points are reached and its faults fire (a scenario
// whose cut is never reached, or whose fault never fires, checks nothing).
import { describe, expect, it } from 'vitest';
import { runCase } from '../src/harness/crash-run.js';
import type { CaseResult } from '../src/harness/crash-case.js';
import { useTempDaemon } from '../properties/use-temp-daemon.js';
import { caseOf, defineScenario, findScenario, SCENARIOS } from './index.js';
import { tripsAsPromised } from '../src/gate/scenario-run.js';
import { resolveTarget } from '../src/targets/index.js';
import { causeOfCase } from '../src/harness/cause/of-case.js';
import { explainCase } from '../src/harness/exhaustive/exhaustive-run.js';
import { causeProblems, explainOnce, withoutReach } from '../properties/variant-proofs.js';

const daemon = useTempDaemon('scenarios');

const run = (c: ReturnType<typeof caseOf>) => runCase(daemon(), resolveTarget(c), c, { writeArtifacts: false, captureImages: false });
const describeViolations = (r: CaseResult) => r.violations.map((v) => v.message).join('\n') || '(none)';

function expectCutsReached(r: CaseResult): void {
  if (r.case.cut) expect(r.coverage.cutsLanded, 'the crash point was never reached').toBe(1);
  if (r.case.recoveryCut) expect(r.coverage.recoveryCutsLanded, 'the recovery crash point was never reached').toBe(1);
  if (r.case.faults?.length) expect(r.coverage.faultsFired, 'the fault never fired').toBe(1);
}

describe('registry', () => {
  it('has unique names, each exposing a known variant', () => {
    expect(SCENARIOS.length).toBeGreaterThanOrEqual(12);
    expect(new Set(SCENARIOS.map((s) => s.name)).size).toBe(SCENARIOS.length);
  });
  it('rejects an unknown variant or check, a named variant in the case, and a case that never cuts', () => {
    const base = SCENARIOS[0];
    expect(() => defineScenario({ ...base, name: 'x', exposes: 'nope' })).toThrow(/exposes 'nope', which is not a known variant of powercut-queue/);
    expect(() => defineScenario({ ...base, name: 'x', trips: 'luck' as 'liveness' })).toThrow(/trips 'luck', which is not a check/);
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
  it(`fails ${scenario.trips} with ${scenario.exposes}, for a cause the variant declares`, async () => {
    const c = caseOf(scenario, scenario.exposes);
    const r = await run(c);
    expectCutsReached(r);
    expect(tripsAsPromised(scenario, r), `the variant did not trip ${scenario.trips}: ${describeViolations(r)}`).toBe(true);
    // As the gate explains a scenario's failure: a fault's cause from the case, a cut's by recording it again.
    const target = resolveTarget(c);
    // Searched and proven as the gate does, without the reach check (variant-proofs.ts, withoutReach):
    // this test asserts the cause and its proof, never its reach.
    const cause = r.runs.some((x) => x.failedRequests.length > 0) ? causeOfCase(r) : await explainCase(daemon(), target, r, withoutReach(explainOnce()));
    if (c.recoveryCut) {
      // A second cut during recovery is not searched: the gate groups it by its signature.
      expect(cause).toBeUndefined();
      return;
    }
    expect(cause, 'the failure was not explained').toBeDefined();
    expect(causeProblems(scenario.exposes, target.knownBad[scenario.exposes], [cause!]).filter((p) => !p.includes('main cause'))).toEqual([]);
  }, 90_000);
});
