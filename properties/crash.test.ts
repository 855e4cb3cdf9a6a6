// Random-cut mode, correct queue, each checkpoint design x page write design: random workloads
// and settings (checkpointWrites/Acks 1..1024, small pages that roll and purge), crash points spread
// over an uncut run's requests, before/after timing, all three policies; and the torn suite.
// Each suite also asserts it exercised what it claims: cuts that landed, rolls, purges, torn writes.
import { describe, expect, it } from 'vitest';
import { addCoverage, emptyCoverage } from '../src/harness/coverage.js';
import { crashInputArb, runCrashSuite, scaledRuns, seedFromEnv } from './crash-property.js';
import { powercutQueue } from '../src/targets/powercut-queue/index.js';
import { useTempDaemon } from './use-temp-daemon.js';

/** Inputs per design; each input is 2 to 4 power cuts of one workload. */
const RUNS_PER_DESIGN = scaledRuns(5);
const TORN_RUNS = scaledRuns(5);
/** Random cuts aim inside the uncut run's requests; most must freeze there, not fall back to after the exit. */
const MIN_LANDED_FRACTION = 0.7;

const daemon = useTempDaemon('crash');
const designs = emptyCoverage();
let designsRun = 0;

describe('power cut anywhere, correct queue', () => {
  it.each(powercutQueue.suites.map((s) => [s.name, s.settings] as const))('%s', async (name, settings) => {
    const report = await runCrashSuite(daemon(), crashInputArb({ settings }), { numRuns: RUNS_PER_DESIGN, ...seedFromEnv() });
    console.log(`[crash ${name}] ${report.summary}`);
    expect(report.error, 'harness error').toBeUndefined();
    expect(report.failed, report.summary).toBe(false);
    expect(report.cases).toBeGreaterThanOrEqual(RUNS_PER_DESIGN);
    expect(report.coverage.cutsLanded, 'cuts that froze at their request').toBeGreaterThanOrEqual(MIN_LANDED_FRACTION * report.coverage.cutsRequested);
    addCoverage(designs, report.coverage);
    designsRun++;
  }, 600_000);

  // After the designs (a file's tests run in order): what no single design is sure to reach.
  it('over the four designs, the workloads rolled to new pages and purged acked ones', () => {
    expect(designsRun, 'designs whose suite ran and passed before this test (run the whole file)').toBe(powercutQueue.suites.length);
    expect(designs.events.rolls, 'page rolls in the workloads').toBeGreaterThan(0);
    expect(designs.events.purges, 'page purges in the workloads').toBeGreaterThan(0);
  });

  it('torn write-back of unsynced multi-sector events never delivers damaged bytes', async () => {
    const report = await runCrashSuite(daemon(), crashInputArb({ kind: 'torn' }), { numRuns: TORN_RUNS, ...seedFromEnv() });
    console.log(`[crash torn] ${report.summary}`);
    expect(report.error, 'harness error').toBeUndefined();
    expect(report.failed, report.summary).toBe(false);
    expect(report.coverage.policies.torn?.cuts).toBe(report.cases);
    expect(report.coverage.tornPartialWrites, 'torn cuts that kept a write in part').toBeGreaterThan(0);
  }, 600_000);
});
