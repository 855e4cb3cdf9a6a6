import { defineConfig } from 'vitest/config';
import DurationSequencer from './vitest.sequencer.js';

export default defineConfig({
  test: {
    include: ['fusefs/**/*.test.ts', 'src/**/*.test.ts', 'properties/**/*.test.ts', 'scenarios/**/*.test.ts', 'examples/**/*.test.ts'],
    // Spawned daemons and drivers run compiled code: build it first, so no test ever runs a stale dist/.
    globalSetup: ['./vitest.global-setup.ts'],
    // Every daemon a test starts checks its model's invariants after every request (fusefs/daemon.ts).
    env: { POWERCUT_CHECK_INVARIANTS: '1' },
    // One seed for every fast-check property (vitest.setup.ts): a run is repeatable, POWERCUT_SEED explores another.
    setupFiles: ['./vitest.setup.ts'],
    // Real-mount tests spawn daemons and drivers; forks keep fuse-native out of worker threads.
    pool: 'forks',
    // Three test files at once on 2 cores (vitest's default there is one): the real-mount files wait
    // on daemons, drivers and elections part of the time, and npm test must stay under 10 minutes.
    // Measured quiet on one head: 592 s with three, 657 s with two (it used 1.9 cores of 2).
    maxWorkers: 3,
    // Tests of a describe.concurrent at once (nats-findings.test.ts: servers that mostly wait).
    maxConcurrency: 3,
    // One process per worker for all its files: each file no longer pays its own fork and imports
    // (26 s of npm test's imports instead of 48). The files share no state they do not restore.
    isolate: false,
    // Longest files first even on a fresh clone (no vitest cache): test-durations.json.
    sequence: { sequencer: DurationSequencer },
    testTimeout: 60_000,
    hookTimeout: 60_000,
    teardownTimeout: 30_000,
  },
});
