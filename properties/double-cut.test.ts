// A second power cut during recovery is survived too: cut the workload anywhere, then cut the
// recovery drain at one of its first requests, recover again, and judge the whole history.
import { expect, it } from 'vitest';
import { crashInputArb, runCrashSuite, scaledRuns, seedFromEnv } from './crash-property.js';
import { useTempDaemon } from './use-temp-daemon.js';

const RUNS = scaledRuns(15);

const daemon = useTempDaemon('double-cut');

it('the correct queue survives a second power cut during recovery', async () => {
  const report = await runCrashSuite(daemon(), crashInputArb({ kind: 'double-cut', maxCutsPerInput: 2 }), { numRuns: RUNS, ...seedFromEnv() });
  console.log(`[double-cut] ${report.summary}`);
  expect(report.failed, report.summary).toBe(false);
  expect(report.cuts).toBeGreaterThanOrEqual(RUNS);
}, 600_000);
