// The one place npm test's property tests take their seed from. vitest.setup.ts makes it fast-check's
// global seed, so a property that passes none is seeded from here; a property that needs a seed of its
// own (a proof that a bug is caught within a budget, found with that seed) passes seedFromEnv(itsSeed),
// so POWERCUT_SEED reaches it too. src/seeds.test.ts fails on any property seeded another way.
// Kept apart from crash-property.ts so the setup file does not load the whole harness into every test file.

/** The seed of npm test's suites unless $POWERCUT_SEED names another: a run is repeatable; drawing fresh seeds is the gate's job. */
export const DEFAULT_TEST_SEED = 20261201;

/** Seed (default `defaultSeed`) and path from $POWERCUT_SEED / $POWERCUT_PATH, to explore another seed or re-run a reported failure. */
export function seedFromEnv(defaultSeed = DEFAULT_TEST_SEED): { seed: number; path?: string } {
  const seed = process.env.POWERCUT_SEED;
  if (seed !== undefined && !/^-?\d+$/.test(seed)) throw new Error(`POWERCUT_SEED must be an integer, got ${seed}`);
  return { seed: seed !== undefined ? Number(seed) : defaultSeed, ...(process.env.POWERCUT_PATH ? { path: process.env.POWERCUT_PATH } : {}) };
}
