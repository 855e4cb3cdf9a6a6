// Seeds every fast-check property of the tests from one place, properties/seed.ts (POWERCUT_SEED or
// the default): fc.assert, fc.check and fc.sample without a seed of their own read fast-check's global
// configuration, and so does @fast-check/vitest's test.prop, but when the test is defined, as its file
// is imported: hence a setup file, which runs before each test file is. src/seeds.test.ts checks both.
import fc from 'fast-check';
import { seedFromEnv } from './properties/seed.js';

fc.configureGlobal({ ...fc.readConfigureGlobal(), seed: seedFromEnv().seed });
