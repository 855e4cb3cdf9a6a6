// A failure that shows only with a second cut, during recovery, gets a cause like any other: its
// recovery recorded on a mount of its own, the cut a crash state of that recording, the fix proven
// there. The variant's bug is recovery's alone (the checkpoint upgrade renames an unsynced log into
// place), and the workload is sequential, so the states and their recovery cuts are the same every run.
import { rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runExhaustive } from '../src/harness/exhaustive/exhaustive-run.js';
import { findTarget } from '../src/targets/index.js';
import { findScenario } from '../scenarios/index.js';
import { useTempDaemon } from './use-temp-daemon.js';
import { causeProblems, explainOnce } from './variant-proofs.js';

const VARIANT = 'upgrade-log-not-synced';
const artifactRoot = path.join(os.tmpdir(), `powercut-recovery-cut-cause-${process.pid}`);
const daemon = useTempDaemon('recovery-cut-cause');
afterAll(async () => {
  await rm(artifactRoot, { recursive: true, force: true });
});

describe('a failure that needs the cut during recovery', () => {
  it(`is given the cause its variant declares, proven in the recorded recovery (${VARIANT})`, async () => {
    const target = findTarget('powercut-queue');
    const { workload, settings, recoverySettings } = findScenario('cut-after-checkpoint-upgrade').case;
    const r = await runExhaustive(daemon(), target, { workload, settings, recoverySettings, variant: VARIANT }, {
      recoveryCuts: true, allFailures: true, artifactRoot, policies: ['lose-unsynced'], explain: { ...explainOnce(target.knownBad[VARIANT]), runMs: 60_000 },
    });
    const causes = r.failures.map((f) => f.cause!);
    console.log(`[recovery-cut cause] ${causes.map((c) => `${c.key} (${c.failingStates?.count} of ${c.failingStates?.of}): ${c.fix}`).join('\n')}`);
    expect(r.failures.length, 'the variant was not caught').toBeGreaterThan(0);
    const inRecovery = causes.find((c) => c.key.startsWith('in-recovery '));
    expect(inRecovery, 'no cause found in the recorded recovery').toBeDefined();
    expect(inRecovery!.fix).toMatch(/^during the recovery of crash state /);
    expect(causeProblems(VARIANT, target.knownBad[VARIANT], causes)).toEqual([]);
  }, 300_000);
});
