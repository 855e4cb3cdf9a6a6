// Which suite proves which known-bad variant is caught, read from each variant's own data
// (KnownBadVariant.needs and provenBy): the proving tests take their lists from here, and
// variant-proofs.test.ts checks that every variant of every target is proven by one.
import { proofInWords, type Cause } from '../src/harness/cause/cause.js';
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
  // A cluster: the cluster gate's crash states catch it (src/gate/cluster-gate.ts).
  'replicated-queue': { exhaustive: 'src/gate/cluster-gate.test.ts' },
};

/** Proof and reach of a cause in a proving test: shorter than the gate's, which `npm test` could not afford for every variant. */
const TEST_PROOF_MS = 4_000;

/**
 * The gate's cause search, as a proving test runs it: each cause proven once, on its first case; with
 * a variant, only its main cause, and not at all when its fix cannot be shown in the recording (the
 * test checks no other proof, and proofs are what cost).
 */
export function explainOnce(variant?: KnownBadVariant): ExplainOptions {
  const proven = new Set<string>();
  const main = variant?.causes[0];
  return {
    ...EXPLAIN_BOUNDS, proofMs: TEST_PROOF_MS,
    prove: (c) => c.kind !== 'not-isolated' && variant?.fixInRecording !== false && (main === undefined || isExpectedCause(c, main)) && !proven.has(c.key) && Boolean(proven.add(c.key)),
  };
}

/**
 * What is wrong with the causes named for a variant's failures, in words (none: as it declares):
 * a cause it does not declare, its main cause missing, or the main cause's fix not removing the
 * failures it was proven on.
 */
export function causeProblems(variant: string, v: KnownBadVariant, named: readonly Cause[]): string[] {
  const problems: string[] = [];
  const declared = v.causes.map((e) => `${e.kind} ${e.path}`).join('; ');
  for (const c of named) {
    if (!v.causes.some((e) => isExpectedCause(c, e))) problems.push(`${variant}: named "${c.key}" (${c.fix}), which it does not declare (declared: ${declared})`);
  }
  const main = named.filter((c) => isExpectedCause(c, v.causes[0]));
  if (main.length === 0) problems.push(`${variant}: its main cause (${v.causes[0].kind} ${v.causes[0].path}) was not named; named: ${named.map((c) => c.key).join('; ') || 'none'}`);
  for (const c of v.fixInRecording === false ? [] : main) {
    // The share of intervals that fail must drop (inserted fsyncs add intervals, so counts alone mislead).
    if (c.proof && c.proof.failingAfter / Math.max(1, c.proof.intervalsAfter) >= c.proof.failingBefore / Math.max(1, c.proof.intervalsBefore)) problems.push(`${variant}: the fix of its main cause did not remove failures: ${c.fix}; proof: ${proofInWords(c.proof)}`);
  }
  return problems;
}
