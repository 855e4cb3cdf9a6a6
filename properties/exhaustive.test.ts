// Exhaustive mode on the correct queue, each checkpoint design x page write design: generated
// workloads (with producers and a consumer running at once) are recorded once, and every distinct
// crash state they can produce (one per persistence interval under lose-unsynced; every prefix of
// the unsynced directory operations x a set of data outcomes under torn) is recovered by the real
// queue in its own process on the mount and judged. Also with a second cut during each recovery.
import { describe, expect, it } from 'vitest';
import { crashInputArb, runCrashSuite, scaledRuns, seedFromEnv } from './crash-property.js';
import { powercutQueue } from '../src/targets/powercut-queue/index.js';
import { useTempDaemon } from './use-temp-daemon.js';

const INPUTS_PER_DESIGN = scaledRuns(2);
const RECOVERY_CUT_INPUTS = scaledRuns(1);

const daemon = useTempDaemon('exhaustive');

describe('every crash state of recorded runs, correct queue', () => {
  it.each(powercutQueue.suites.map((s) => [s.name, s.settings] as const))('%s', async (name, settings) => {
    const report = await runCrashSuite(daemon(), crashInputArb({ kind: 'exhaustive', settings }), { numRuns: INPUTS_PER_DESIGN, ...seedFromEnv() });
    console.log(`[exhaustive ${name}] ${report.summary}`);
    expect(report.error, 'harness error').toBeUndefined();
    expect(report.failed, report.summary).toBe(false);
    const c = report.coverage;
    expect(c.states, 'crash states checked').toBeGreaterThanOrEqual(INPUTS_PER_DESIGN * 2);
    expect(c.intervals).toBeGreaterThanOrEqual(INPUTS_PER_DESIGN * 2);
    expect(c.intervalsChecked, 'intervals all of whose states were checked').toBeGreaterThan(0);
    expect(c.policies.torn?.states, 'torn states among them').toBeGreaterThan(0);
  }, 600_000);

  it('with a second power cut during the recovery of each state', async () => {
    const report = await runCrashSuite(daemon(), crashInputArb({ kind: 'exhaustive', maxSteps: 6 }), {
      numRuns: RECOVERY_CUT_INPUTS, ...seedFromEnv(), exhaustive: { recoveryCuts: true, caps: { maxStates: 24, maxStatesPerInterval: 6, sectorPatterns: 1 } },
    });
    console.log(`[exhaustive, cut during recovery] ${report.summary}`);
    expect(report.error, 'harness error').toBeUndefined();
    expect(report.failed, report.summary).toBe(false);
    expect(report.coverage.recoveryCutsRequested).toBe(report.coverage.states);
    expect(report.coverage.recoveryCutsLanded, 'recovery cuts that froze at their request').toBeGreaterThan(0.3 * report.coverage.recoveryCutsRequested);
  }, 600_000);
});
