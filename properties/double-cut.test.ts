// A second power cut during recovery is survived too: cut the workload anywhere, then cut the
// recovery drain at one of its first requests, recover again, and judge the whole history.
import { expect, it } from 'vitest';
import { crashInputArb, runCrashSuite, scaledRuns, seedFromEnv } from './crash-property.js';
import { useTempDaemon } from './use-temp-daemon.js';

const RUNS = scaledRuns(7);
/** About 60% of recovery cuts land (a recovery makes 20 to 35 requests); far fewer means the suite tests little. */
const MIN_RECOVERY_LANDED_FRACTION = 0.3;

const daemon = useTempDaemon('double-cut');

it('the correct queue survives a second power cut during recovery', async () => {
  const report = await runCrashSuite(daemon(), crashInputArb({ kind: 'double-cut', maxCutsPerInput: 2 }), { numRuns: RUNS, ...seedFromEnv() });
  console.log(`[double-cut] ${report.summary}`);
  expect(report.error, 'harness error').toBeUndefined();
  expect(report.failed, report.summary).toBe(false);
  expect(report.cases).toBeGreaterThanOrEqual(RUNS);
  expect(report.coverage.recoveryCutsRequested).toBe(report.cases);
  expect(report.coverage.recoveryCutsLanded, 'recovery cuts that froze at their request').toBeGreaterThanOrEqual(MIN_RECOVERY_LANDED_FRACTION * report.cases);
}, 600_000);
