// Fault runs: fsync EIO on a queue file, or ENOSPC after some bytes. The queue must fail loudly
// (the driver sees an error when the filesystem failed a request) and must not have confirmed
// anything it did not persist: after a power cut, everything it called durable is recovered.
import { expect, it } from 'vitest';
import { crashInputArb, runCrashSuite, scaledRuns, seedFromEnv } from './crash-property.js';
import { useTempDaemon } from './use-temp-daemon.js';

const RUNS = scaledRuns(20);
/** Faults are drawn inside the run's bytes and files; most must actually fail a request. */
const MIN_FIRED_FRACTION = 0.5;

const daemon = useTempDaemon('faults');

it('the correct queue fails loudly on fsync EIO and ENOSPC and confirms nothing it did not persist', async () => {
  const report = await runCrashSuite(daemon(), crashInputArb({ kind: 'faults' }), { numRuns: RUNS, ...seedFromEnv() });
  console.log(`[faults] ${report.summary}`);
  expect(report.error, 'harness error').toBeUndefined();
  expect(report.failed, report.summary).toBe(false);
  expect(report.coverage.faultCases).toBe(report.cases);
  expect(report.coverage.faultsFired, 'fault cases where the filesystem failed a request').toBeGreaterThanOrEqual(MIN_FIRED_FRACTION * report.cases);
}, 600_000);
