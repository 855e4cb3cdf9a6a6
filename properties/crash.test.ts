// The correct queue, in each checkpoint design x page design, survives a power cut anywhere:
// random workloads and settings (checkpointWrites/Acks 1..1024, small pages that roll and purge),
// crash points spread over an uncut run's requests, before/after timing, all three policies.
import { describe, expect, it } from 'vitest';
import type { CheckpointDesign, PageWriteDesign } from '../src/queue/types.js';
import { crashInputArb, runCrashSuite, scaledRuns, seedFromEnv } from './crash-property.js';
import { useTempDaemon } from './use-temp-daemon.js';

const DESIGNS: [CheckpointDesign, PageWriteDesign][] = [
  ['atomic-file', 'sync'],
  ['atomic-file', 'buffered'],
  ['append-log', 'sync'],
  ['append-log', 'buffered'],
];
/** Inputs per design; each input is 2 to 4 power cuts of one workload. */
const RUNS_PER_DESIGN = scaledRuns(10);
const TORN_RUNS = scaledRuns(10);

const daemon = useTempDaemon('crash');

describe('power cut anywhere, correct queue', () => {
  it.each(DESIGNS)('%s checkpoints, %s page writes', async (checkpointDesign, pageWriteDesign) => {
    const arb = crashInputArb({ settings: { checkpointDesign, pageWriteDesign } });
    const report = await runCrashSuite(daemon(), arb, { numRuns: RUNS_PER_DESIGN, ...seedFromEnv() });
    console.log(`[crash ${checkpointDesign}/${pageWriteDesign}] ${report.summary}`);
    expect(report.failed, report.summary).toBe(false);
    expect(report.cuts).toBeGreaterThanOrEqual(RUNS_PER_DESIGN);
  }, 600_000);

  it('torn write-back of unsynced multi-sector events never delivers damaged bytes', async () => {
    const report = await runCrashSuite(daemon(), crashInputArb({ kind: 'torn' }), { numRuns: TORN_RUNS, ...seedFromEnv() });
    console.log(`[crash torn] ${report.summary}`);
    expect(report.failed, report.summary).toBe(false);
  }, 600_000);
});
