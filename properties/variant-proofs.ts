// Which suite proves which known-bad variant is caught, read from each variant's own data
// (KnownBadVariant.needs and provenBy): the proving tests take their lists from here, and
// variant-proofs.test.ts checks that every variant of every target is proven by one.
import type { KnownBadVariant, VariantProof } from '../src/harness/target.js';
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
};
