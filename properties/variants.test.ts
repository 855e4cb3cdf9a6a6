// Proof that the suites catch every known-bad variant (DESIGN.md section 7): with a fixed budget
// of generated inputs (the mixed suite: general, torn, fault and double-cut inputs, each up to 4 power cuts), the crash property finds
// a violation for each variant, and the correct queue passes the same inputs.
import fc from 'fast-check';
import { rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { VARIANT_NAMES, VARIANT_SETTINGS } from './variants/index.js';
import { crashInputArb, runCrashSuite, scaledRuns, seedFromEnv, type CrashInputOptions } from './crash-property.js';
import { useTempDaemon } from './use-temp-daemon.js';

/** The budget: generated inputs per variant (fast-check runs). */
export const VARIANT_BUDGET_INPUTS = scaledRuns(40);
/** Up to this many power cuts per input (they share one uncut count). */
const CUTS_PER_INPUT = 4;
/** Fixed so the proof is repeatable; POWERCUT_SEED explores others. */
const SEED = seedFromEnv().seed ?? 20261130;
const artifactRoot = process.env.POWERCUT_ARTIFACTS ?? path.join(os.tmpdir(), 'powercut-variant-artifacts');

const optionsFor = (variant: string | undefined, settingsOf: string): CrashInputOptions => ({
  settings: VARIANT_SETTINGS[settingsOf],
  ...(variant !== undefined ? { variant } : {}),
  kind: 'mixed',
  maxCutsPerInput: CUTS_PER_INPUT,
});

const daemon = useTempDaemon('variants');
afterAll(async () => {
  if (!process.env.POWERCUT_ARTIFACTS) await rm(artifactRoot, { recursive: true, force: true });
});

describe(`known-bad variants are caught within ${VARIANT_BUDGET_INPUTS} inputs`, () => {
  it.each(VARIANT_NAMES)('%s', async (variant) => {
    const report = await runCrashSuite(daemon(), crashInputArb(optionsFor(variant, variant)), {
      numRuns: VARIANT_BUDGET_INPUTS, seed: SEED, endOnFailure: true, artifactRoot,
    });
    console.log(`[variant ${variant}] caught: ${report.failed && !report.error}, after ${report.cuts} power cuts, ` +
      `${((report.firstFailureMs ?? report.durationMs) / 1000).toFixed(1)} s\n${report.summary}`);
    expect(report.error, 'harness error').toBeUndefined();
    expect(report.failed, `${variant} was not caught:\n${report.summary}`).toBe(true);
  }, 600_000);
});

describe(`the correct queue passes the same budget of ${VARIANT_BUDGET_INPUTS} inputs`, () => {
  it('drawn over every variant\'s settings', async () => {
    const settingsOf = fc.constantFrom(...VARIANT_NAMES).chain((v) => crashInputArb({ ...optionsFor(undefined, v), settings: VARIANT_SETTINGS[v] }));
    const report = await runCrashSuite(daemon(), settingsOf, { numRuns: VARIANT_BUDGET_INPUTS, seed: SEED, ...(seedFromEnv().path ? { path: seedFromEnv().path } : {}) });
    console.log(`[correct queue, variant settings] ${report.summary}`);
    expect(report.failed, report.summary).toBe(false);
  }, 900_000);
});
