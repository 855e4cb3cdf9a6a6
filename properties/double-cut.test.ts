// A second power cut during recovery is survived too: cut the workload anywhere, then cut the
// recovery drain at one of its first requests, recover again, and judge the whole history.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { crashInputArb, runCrashSuite, scaledRuns, seedFromEnv } from './crash-property.js';
import { startTestDaemon, type TestDaemon } from './daemon-fixture.js';

const RUNS = scaledRuns(15);

let fixture: TestDaemon;
beforeAll(async () => {
  fixture = await startTestDaemon('double-cut');
});
afterAll(async () => {
  await fixture?.stop();
});

it('the correct queue survives a second power cut during recovery', async () => {
  const report = await runCrashSuite(fixture.daemon, crashInputArb({ kind: 'double-cut', maxCutsPerInput: 2 }), { numRuns: RUNS, ...seedFromEnv() });
  console.log(`[double-cut] ${report.summary}`);
  expect(report.failed, report.summary).toBe(false);
  expect(report.cuts).toBeGreaterThanOrEqual(RUNS);
}, 600_000);
