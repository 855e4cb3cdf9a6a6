import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['fusefs/**/*.test.ts', 'src/**/*.test.ts', 'properties/**/*.test.ts', 'examples/**/*.test.ts'],
    // Spawned daemons and drivers run compiled code: build it first, so no test ever runs a stale dist/.
    globalSetup: ['./vitest.global-setup.ts'],
    // Real-mount tests spawn daemons and drivers; forks keep fuse-native out of worker threads.
    pool: 'forks',
    testTimeout: 60_000,
    hookTimeout: 60_000,
    teardownTimeout: 30_000,
  },
});
