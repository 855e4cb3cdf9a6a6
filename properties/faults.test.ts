// Fault runs: fsync EIO on a queue file, or ENOSPC after some bytes. The queue must fail loudly
// (the driver sees an error when the filesystem failed a request) and must not have confirmed
// anything it did not persist: after a power cut, everything it called durable is recovered.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { crashInputArb, runCrashSuite, scaledRuns, seedFromEnv } from './crash-property.js';
import { startTestDaemon, type TestDaemon } from './daemon-fixture.js';

const RUNS = scaledRuns(20);

let fixture: TestDaemon;
beforeAll(async () => {
  fixture = await startTestDaemon('faults');
});
afterAll(async () => {
  await fixture?.stop();
});

it('the correct queue fails loudly on fsync EIO and ENOSPC and confirms nothing it did not persist', async () => {
  const report = await runCrashSuite(fixture.daemon, crashInputArb({ kind: 'faults' }), { numRuns: RUNS, ...seedFromEnv() });
  console.log(`[faults] ${report.summary}`);
  expect(report.failed, report.summary).toBe(false);
}, 600_000);
