// Which suite proves which known-bad variant is caught, read from each variant's own data
// (KnownBadVariant.needs and provenBy): the proving tests take their lists from here, and
// variant-proofs.test.ts checks that every variant of every target is proven by one.
import { proofHolds, proofInWords, type Cause } from '../src/harness/cause/cause.js';
import { EXPLAIN_BOUNDS, type ExplainOptions } from '../src/harness/exhaustive/explain.js';
import { isExpectedCause, type KnownBadVariant, type VariantProof } from '../src/harness/target.js';
import type { SuiteKind } from './crash-property.js';
import { findTarget } from '../src/targets/index.js';

/** The variants of `target` that `proof` proves, in their declared order. */
export function variantsProvenBy(target: string, proof: VariantProof): string[] {
  return Object.entries(findTarget(target).knownBad).filter(([, v]) => v.provenBy.includes(proof)).map(([name]) => name);
}

/** The random suite that draws a variant's inputs: a fault in every input, torn cuts aimed at writes, or the mixed suite. */
export function randomSuiteKindOf(v: KnownBadVariant): Extract<SuiteKind, 'faults' | 'torn' | 'mixed'> {
  return v.needs === 'fault' ? 'faults' : v.needs === 'torn' ? 'torn' : 'mixed';
}

/**
 * The test file that runs each (target, proof) pair, by calling variantsProvenBy with it. A
 * scenario proof is run by scenarios/scenarios.test.ts for the scenario that exposes the variant.
 */
export const PROOF_TESTS: Readonly<Record<string, Partial<Record<Exclude<VariantProof, 'scenario'>, string>>>> = {
  'powercut-queue': { exhaustive: 'properties/exhaustive-variants.test.ts', random: 'properties/variants.test.ts' },
  leveldb: { exhaustive: 'src/targets/leveldb/leveldb.test.ts' },
  // A cluster: the cluster gate's crash states catch it (src/gate/cluster-source.ts).
  'replicated-queue': { exhaustive: 'src/gate/cluster-gate.test.ts' },
};

/** Proof and reach of a cause in a proving test: shorter than the gate's, which `npm test` could not afford for every variant. */
const TEST_PROOF_MS = 4_000;
/** Explaining one run in a proving test: what is left unexplained past it is allowed (and counted by bench:crash, which explains in full). */
const TEST_RUN_MS = 3_000;
const TEST_SEARCHES = 6;

/**
 * The gate's cause search, as a proving test runs it: every named cause proven on its run; the reach
 * checked once per cause, with a variant only for its main one (reach checks are what cost).
 */
export function explainOnce(variant?: KnownBadVariant): ExplainOptions {
  const reached = new Set<string>();
  const main = variant?.causes[0];
  return {
    ...EXPLAIN_BOUNDS, proofMs: TEST_PROOF_MS, runMs: TEST_RUN_MS, maxSearches: TEST_SEARCHES,
    checkReach: (c) => c.kind !== 'not-isolated' && (main === undefined || isExpectedCause(c, main)) && !reached.has(c.key) && Boolean(reached.add(c.key)),
  };
}

/**
 * A proving test's search without the reach checks (on ext4's journaled model): for the tests that
 * assert the causes named and their proofs, never a reach, where reach checks were the most of what
 * explaining cost (35 s of a loaded run of exhaustive-variants.test.ts). src/gate/cli.test.ts checks the
 * reach the gate prints, and recovery-cut-cause.test.ts runs one with explainOnce.
 */
export function withoutReach(o: ExplainOptions): ExplainOptions {
  return { ...o, checkReach: () => false };
}

/**
 * What is wrong with the causes named for a variant's failures, in words (none: as it declares):
 * a cause it does not declare, none of its declared causes named, or a cause named without a proof that holds.
 * Unexplained failures (kind not-isolated) name no cause: they are allowed, and counted by the caller.
 */
export function causeProblems(variant: string, v: KnownBadVariant, causes: readonly Cause[]): string[] {
  const problems: string[] = [];
  const named = causes.filter((c) => c.kind !== 'not-isolated');
  const declared = v.causes.map((e) => (e.path === undefined ? e.kind : `${e.kind} ${e.path}`)).join('; ');
  for (const c of named) {
    if (!v.causes.some((e) => isExpectedCause(c, e))) problems.push(`${variant}: named "${c.key}" (${c.fix}), which it does not declare (declared: ${declared})`);
  }
  if (v.fixInRecording !== false && named.length === 0) problems.push(`${variant}: none of its declared causes (${declared}) was named: every failing state is unexplained`);
  // Every named cause with a fix in the recording is named on its proof: failing states cured, none that passed broken.
  for (const c of named) {
    if (c.proof && !proofHolds(c.proof)) problems.push(`${variant}: "${c.key}" was named although its fix's proof does not hold: ${proofInWords(c.proof)}`);
    if (c.kind !== 'not-isolated' && !c.proof && !c.proven) problems.push(`${variant}: "${c.key}" was named without a proof`);
  }
  return problems;
}
