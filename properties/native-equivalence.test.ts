// The fast path agrees with the mount. Exhaustive mode recovers a crash state natively (its image
// written to tmpfs, the driver recovering there) unless its recovery must be cut; this test
// recovers every state of a fixed set of recorded runs both ways (verifyOnMount, which stops the
// run with a harness error naming the state if the checks that fail differ) for the correct
// queue, the known-bad variants that reach a distinct part of native recovery (EQUIVALENCE_VARIANTS
// says which and why), and LevelDB's durable configuration.
import fc from 'fast-check';
import { rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runExhaustive } from '../src/harness/exhaustive/exhaustive-run.js';
import { KNOWN_BAD } from '../src/targets/powercut-queue/known-bad.js';
import { resolveTarget } from '../src/targets/index.js';
import { crashInputArb, seedFromEnv } from './crash-property.js';
import { useTempDaemon } from './use-temp-daemon.js';

/**
 * The known-bad variants whose states are recovered both ways: one for each distinct thing native
 * recovery must reproduce (the image it writes to tmpfs, and what recovery then reads, writes or
 * renames there), not every variant (all 16 that need no fault took 4-20 s each, most of them over
 * paths another one takes). Exhaustive mode injects no fault, so no variant that needs one. Left out,
 * each a repeat of one kept: no-dir-fsync-new-page and page-header-not-synced (a page file or its header missing:
 * purge-before-checkpoint's and checkpoint-unlink-before-rename's directory states), roll-without-flush
 * and checkpoint-before-page-sync (unflushed or unsynced page data: checkpoint-before-flush),
 * ack-returns-early, purge-and-ack-early and sync-wait-gives-up (early confirmations, whose states
 * are like fsync-claims-late-writes' and purge-before-checkpoint's).
 */
const EQUIVALENCE_VARIANTS = [
  // The atomic-file checkpoint torn or emptied in place: recovery fails on a checkpoint.head it cannot read.
  'checkpoint-in-place',
  // checkpoint.head unlinked before the rename: states that are prefixes of directory operations.
  'checkpoint-unlink-before-rename',
  // Pages unlinked durably before the checkpoint: a page file missing that the checkpoint names.
  'purge-before-checkpoint',
  // Buffered page writes: checkpoints ahead of page data that was never written.
  'checkpoint-before-flush',
  // The sync page design with writers racing an in-flight fsync.
  'fsync-claims-late-writes',
  // Recovery reads torn page tails without their CRC (torn data outcomes, recovered as valid).
  'no-crc-on-recovery',
  // Recovery's own writes: it upgrades the checkpoint design, renaming a new log into place.
  'upgrade-log-not-synced',
  // Logic errors of recovery and of the drain after it: every change on the disk, misread.
  'recovery-skips-first-record',
  'drain-from-page-start',
];

const CASES: { name: string; target: string; variant?: string; settings: Record<string, unknown> }[] = [
  { name: 'powercut-queue, correct', target: 'powercut-queue', settings: {} },
  ...EQUIVALENCE_VARIANTS.map((variant) => ({ name: `powercut-queue, ${variant}`, target: 'powercut-queue', variant, settings: KNOWN_BAD[variant].settings })),
  { name: 'leveldb, synced', target: 'leveldb', settings: { syncWrites: true, syncAcks: true } },
];
/** Per case: recorded runs, and states per run (each is recovered twice). */
const RUNS = 2;
const CAPS = { maxStates: 14, maxStatesPerInterval: 8, sectorPatterns: 1 };

const daemon = useTempDaemon('native-equivalence');
const artifactRoot = path.join(os.tmpdir(), `powercut-native-equivalence-${process.pid}`);
afterAll(async () => {
  await rm(artifactRoot, { recursive: true, force: true });
});

describe('native recovery gives the same verdict as recovery on the mount', () => {
  const totals = { states: 0, failing: 0 };
  it.each(CASES)('$name', async (c) => {
    const inputs = fc.sample(crashInputArb({ target: c.target, kind: 'exhaustive', settings: c.settings, maxSteps: 5, ...(c.variant ? { variant: c.variant } : {}) }), { numRuns: RUNS, seed: seedFromEnv().seed });
    for (const input of inputs) {
      const r = await runExhaustive(daemon(), resolveTarget(input), input, { verifyOnMount: true, allFailures: true, caps: CAPS, artifactRoot, writeArtifacts: false });
      expect(r.coverage.statesVerifiedOnMount, 'every state was judged both ways').toBe(r.coverage.states);
      totals.states += r.coverage.states;
      totals.failing += r.failures.length;
    }
  }, 300_000);
  it('the variants compared are known variants that need no fault', () => {
    for (const v of EQUIVALENCE_VARIANTS) expect(KNOWN_BAD[v]?.needs, v).not.toBe('fault');
  });
  it('compared failing verdicts as well as passing ones', () => {
    console.log(`[native equivalence] ${totals.states} crash states recovered both ways, ${totals.failing} distinct failures among them`);
    expect(totals.states).toBeGreaterThan(300);
    expect(totals.failing).toBeGreaterThan(5);
  });
});
