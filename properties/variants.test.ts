// Proof that the random-cut suites catch every known-bad variant of the built-in queue: with a fixed
// budget of generated inputs (the mixed suite: general, torn, fault and double-cut inputs, each up to
// 4 power cuts; the fault suite for a variant that needs a fault), the crash property finds a
// violation for each variant, and the correct queue passes the same inputs. A hang or a harness
// error never counts as a catch.
import fc from 'fast-check';
import { rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { caughtBug, crashInputArb, runCrashSuite, scaledRuns, seedFromEnv, type CrashInputOptions } from './crash-property.js';
import { KNOWN_BAD } from '../src/targets/powercut-queue/known-bad.js';
import { useTempDaemon } from './use-temp-daemon.js';

/** The budget: generated inputs per variant (fast-check runs). */
const VARIANT_BUDGET_INPUTS = scaledRuns(40);
/** Up to this many power cuts per input (they share one uncut count). */
const CUTS_PER_INPUT = 4;
/** Fixed so the proof is repeatable; POWERCUT_SEED explores others. */
const SEED = seedFromEnv(20261130).seed;
/**
 * Proven elsewhere: this project's variants that need one exact crash state or interleaving
 * (exhaustive-variants.test.ts), and the one a background ENOSPC needs (its scenario).
 */
const PROVEN_ELSEWHERE = new Set(['close-swallows-failure', 'purge-before-checkpoint', 'checkpoint-unlink-before-rename', 'fsync-claims-late-writes']);
const VARIANTS = Object.keys(KNOWN_BAD).filter((v) => !PROVEN_ELSEWHERE.has(v));
/**
 * Variants whose bug shows only when an injected fault fires: their inputs come from the fault suite
 * (a fault in every input). In the mixed suite about a third of the inputs carry a fault, too few to
 * catch them within the budget for every seed (seed 202: 5 faults fired in 40 inputs, none caught).
 */
const NEEDS_FAULTS = new Set(['fsync-error-ignored']);
/**
 * Variants whose bug shows only in a record torn by write-back (header on disk, data not): their
 * inputs come from the torn suite (every cut torn, aimed at page writes). In the mixed suite about
 * a quarter of the cuts are torn and few of those tear a record's data sectors from its header's;
 * under the sector-prefix rule seed 20261130 tore none that way in 40 inputs (94 cuts).
 */
const NEEDS_TORN = new Set(['no-crc-on-recovery']);
const artifactRoot = path.join(os.tmpdir(), `powercut-variant-artifacts-${process.pid}`);

const optionsFor = (variant: string | undefined, settingsOf: string): CrashInputOptions => ({
  settings: KNOWN_BAD[settingsOf].settings,
  ...(variant !== undefined ? { variant } : {}),
  kind: NEEDS_FAULTS.has(settingsOf) ? 'faults' : NEEDS_TORN.has(settingsOf) ? 'torn' : 'mixed',
  maxCutsPerInput: CUTS_PER_INPUT,
});

const daemon = useTempDaemon('variants');
afterAll(async () => {
  await rm(artifactRoot, { recursive: true, force: true });
});

describe(`known-bad variants are caught within ${VARIANT_BUDGET_INPUTS} inputs`, () => {
  it.each(VARIANTS)('%s', async (variant) => {
    const report = await runCrashSuite(daemon(), crashInputArb(optionsFor(variant, variant)), {
      numRuns: VARIANT_BUDGET_INPUTS, seed: SEED, endOnFailure: true, artifactRoot,
    });
    console.log(`[variant ${variant}] caught: ${caughtBug(report)}, after ${report.casesToFirstFailure ?? report.cases} power cuts, ` +
      `${((report.firstFailureMs ?? report.durationMs) / 1000).toFixed(1)} s\n${report.summary}`);
    expect(report.error, 'harness error').toBeUndefined();
    expect(caughtBug(report), `${variant} was not caught:\n${report.summary}`).toBe(true);
  }, 600_000);
});

describe(`the correct queue passes the same budget of ${VARIANT_BUDGET_INPUTS} inputs`, () => {
  it('drawn over every variant\'s settings', async () => {
    const settingsOf = fc.constantFrom(...VARIANTS).chain((v) => crashInputArb(optionsFor(undefined, v)));
    const report = await runCrashSuite(daemon(), settingsOf, { numRuns: VARIANT_BUDGET_INPUTS, seed: SEED, artifactRoot, ...(seedFromEnv().path ? { path: seedFromEnv().path } : {}) });
    console.log(`[correct queue, variant settings] ${report.summary}`);
    expect(report.error, 'harness error').toBeUndefined();
    expect(report.failed, report.summary).toBe(false);
  }, 900_000);
});
