// The fast path agrees with the mount. Exhaustive mode recovers a crash state natively (its image
// written to tmpfs, the driver recovering there) unless its recovery must be cut; this test
// recovers every state of a fixed set of recorded runs both ways (verifyOnMount, which stops the
// run with a harness error naming the state if the checks that fail differ) for the correct
// queue, every known-bad variant that needs no fault, and LevelDB's durable configuration.
import fc from 'fast-check';
import { rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runExhaustive } from '../src/harness/exhaustive/exhaustive-run.js';
import { KNOWN_BAD } from '../src/targets/powercut-queue/known-bad.js';
import { resolveTarget } from '../src/targets/index.js';
import { crashInputArb, seedFromEnv } from './crash-property.js';
import { useTempDaemon } from './use-temp-daemon.js';

const CASES: { name: string; target: string; variant?: string; settings: Record<string, unknown> }[] = [
  { name: 'powercut-queue, correct', target: 'powercut-queue', settings: {} },
  // Exhaustive mode injects no fault: a variant whose bug needs one has no state to show it.
  ...Object.keys(KNOWN_BAD).filter((v) => KNOWN_BAD[v].needs !== 'fault').map((variant) => ({ name: `powercut-queue, ${variant}`, target: 'powercut-queue', variant, settings: KNOWN_BAD[variant].settings })),
  { name: 'leveldb, synced', target: 'leveldb', settings: { syncWrites: true, syncAcks: true } },
];
/** Per case: recorded runs, and states per run (each is recovered twice). */
const RUNS = 2;
const CAPS = { maxStates: 14, maxStatesPerInterval: 8, sectorPatterns: 1 };

const daemon = useTempDaemon('native-equivalence');
const artifactRoot = path.join(os.tmpdir(), `powercut-native-equivalence-${process.pid}`);
afterAll(async () => {
  await rm(artifactRoot, { recursive: true, force: true });
});

describe('native recovery gives the same verdict as recovery on the mount', () => {
  const totals = { states: 0, failing: 0 };
  it.each(CASES)('$name', async (c) => {
    const inputs = fc.sample(crashInputArb({ target: c.target, kind: 'exhaustive', settings: c.settings, maxSteps: 5, ...(c.variant ? { variant: c.variant } : {}) }), { numRuns: RUNS, seed: seedFromEnv().seed });
    for (const input of inputs) {
      const r = await runExhaustive(daemon(), resolveTarget(input), input, { verifyOnMount: true, allFailures: true, caps: CAPS, artifactRoot, writeArtifacts: false });
      expect(r.coverage.statesVerifiedOnMount, 'every state was judged both ways').toBe(r.coverage.states);
      totals.states += r.coverage.states;
      totals.failing += r.failures.length;
    }
  }, 300_000);
  it('compared failing verdicts as well as passing ones', () => {
    console.log(`[native equivalence] ${totals.states} crash states recovered both ways, ${totals.failing} distinct failures among them`);
    expect(totals.states).toBeGreaterThan(300);
    expect(totals.failing).toBeGreaterThan(5);
  });
});
