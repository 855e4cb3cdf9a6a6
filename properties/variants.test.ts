// Proof that the random-cut suites catch every known-bad variant of the built-in queue: with a fixed
// budget of generated inputs (the mixed suite: general, torn, fault and double-cut inputs, each up to
// 4 power cuts; the fault suite for a variant that needs a fault), the crash property finds a
// violation for each variant, and the correct queue passes inputs drawn the same way. A hang or a harness
// error never counts as a catch.
import fc from 'fast-check';
import { rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { caughtBug, crashInputArb, runCrashSuite, scaledRuns, seedFromEnv, type CrashInputOptions } from './crash-property.js';
import { KNOWN_BAD } from '../src/targets/powercut-queue/known-bad.js';
import { useTempDaemon } from './use-temp-daemon.js';
import { randomSuiteKindOf, variantsProvenBy } from './variant-proofs.js';

/** The budget: generated inputs per variant (fast-check runs). */
const VARIANT_BUDGET_INPUTS = scaledRuns(25);
/**
 * Inputs the correct queue passes, drawn over every variant's settings: fewer than a variant's
 * budget, which a catch seldom uses up (under SEED the latest, purge-and-ack-early, took 20) while
 * the correct queue runs every input in full; the gate explores further.
 */
const CORRECT_INPUTS = scaledRuns(12);
/** Up to this many power cuts per input (they share one uncut count). */
const CUTS_PER_INPUT = 4;
/** Fixed so the proof is repeatable; POWERCUT_SEED explores others. */
const SEED = seedFromEnv(20261130).seed;
/**
 * Seeds of their own for the variants whose catch took longest under SEED (no-crc-on-recovery at its
 * 13th input, purge-and-ack-early at its 20th of the budget: 20-50 s each of npm test). Under these
 * each was caught by its 3rd or 4th input, the same on every run (seeds 1-8 tried: most catch past
 * the 6th). The budget and what counts as a catch are the same for every variant; POWERCUT_SEED,
 * when set, draws every variant's inputs from its seed as before. (sync-wait-gives-up is not proven
 * here: its catch needs a page fsync slow enough to give up on, so the input that catches it moved with
 * the machine's load under any seed; exhaustive mode proves it through the slow-fsync schedule.)
 * ack-returns-early: seed 5 catches it at its 4th input instead of its 8th, but those inputs are
 * longer, and the catch took as long; seed 3 catches it at its 6th, in 21 s where SEED took 47 s
 * back to back on a loaded machine (seed 2 did not catch it within the budget: not every seed is fit).
 * checkpoint-before-page-sync: seed 8 catches it at its 3rd input instead of its 6th (18 s, 35 s;
 * seeds 2, 3, 6, 7 at their 5th to 7th, seed 4 not within the budget).
 */
const CATCH_SEEDS: Readonly<Record<string, number>> = {
  'no-crc-on-recovery': 1,
  'purge-and-ack-early': 5,
  'ack-returns-early': 3,
  'checkpoint-before-page-sync': 8,
};
/** The variants random cuts prove (KnownBadVariant.provenBy); the others need one exact crash state or interleaving (exhaustive mode) or a scenario. */
const VARIANTS = variantsProvenBy('powercut-queue', 'random');
const artifactRoot = path.join(os.tmpdir(), `powercut-variant-artifacts-${process.pid}`);

const optionsFor = (variant: string | undefined, settingsOf: string): CrashInputOptions => ({
  settings: KNOWN_BAD[settingsOf].settings,
  ...(variant !== undefined ? { variant } : {}),
  // What the variant's bug needs to show decides the suite that draws its inputs (KnownBadVariant.needs).
  kind: randomSuiteKindOf(KNOWN_BAD[settingsOf]),
  maxCutsPerInput: CUTS_PER_INPUT,
});

const daemon = useTempDaemon('variants');
afterAll(async () => {
  await rm(artifactRoot, { recursive: true, force: true });
});

describe(`known-bad variants are caught within ${VARIANT_BUDGET_INPUTS} inputs`, () => {
  it.each(VARIANTS)('%s', async (variant) => {
    const report = await runCrashSuite(daemon(), crashInputArb(optionsFor(variant, variant)), {
      numRuns: VARIANT_BUDGET_INPUTS, seed: seedFromEnv(CATCH_SEEDS[variant] ?? 20261130).seed, endOnFailure: true, artifactRoot,
    });
    console.log(`[variant ${variant}] caught: ${caughtBug(report)}, after ${report.casesToFirstFailure ?? report.cases} power cuts (input ${report.numRuns}), ` +
      `${((report.firstFailureMs ?? report.durationMs) / 1000).toFixed(1)} s\n${report.summary}`);
    expect(report.error, 'harness error').toBeUndefined();
    expect(caughtBug(report), `${variant} was not caught:\n${report.summary}`).toBe(true);
  }, 600_000);
});

describe(`the correct queue passes ${CORRECT_INPUTS} inputs`, () => {
  it('drawn over every variant\'s settings', async () => {
    const settingsOf = fc.constantFrom(...VARIANTS).chain((v) => crashInputArb(optionsFor(undefined, v)));
    const report = await runCrashSuite(daemon(), settingsOf, { numRuns: CORRECT_INPUTS, seed: SEED, artifactRoot, ...(seedFromEnv().path ? { path: seedFromEnv().path } : {}) });
    console.log(`[correct queue, variant settings] ${report.summary}`);
    expect(report.error, 'harness error').toBeUndefined();
    expect(report.failed, report.summary).toBe(false);
  }, 900_000);
});
