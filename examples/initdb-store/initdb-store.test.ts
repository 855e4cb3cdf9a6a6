// The example whose engine needs an initialised data directory (examples/initdb-store: minidb, a
// queue table in a database that refuses to start without its initdb's ~290 files), bounded by
// work: one workload recorded twice on a real mount, with the driver's setup as the starting state
// and with the setup inside the run (--inline-setup, as drivers did before the protocol had one),
// and the known-bad setting (synchronousCommit false) judged over every lose-unsynced state of it.
// With the starting state every crash state listed is the database's own work; inline, most fall
// inside initdb. The starting state is durable, outside the recording, and the same for every run.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import path from 'node:path';
import { REPO_ROOT } from '../../src/harness/dist-path.js';
import { startTempDaemon, type DaemonHandle, type TempDaemon } from '../../src/harness/daemon-process.js';
import { externalTarget } from '../../src/targets/external.js';
import { mergeTimeouts, runDriverProcess } from '../../src/harness/driver-process.js';
import { prepareStartingState } from '../../src/harness/starting-state.js';
import { runExhaustive } from '../../src/harness/exhaustive/exhaustive-run.js';
import { EXPLAIN_BOUNDS } from '../../src/harness/exhaustive/explain.js';
import { untimedBounds } from '../../src/gate/budget.js';
import { markDir, specFor } from '../../src/harness/crash-run.js';
import type { Workload } from '../../src/harness/workload.js';
import { requireRoot } from '../../fusefs/testing.js';

const DRIVER = path.join(REPO_ROOT, 'examples/initdb-store/driver.py');
const WORKLOAD: Workload = {
  steps: [
    { op: 'write', sizesBytes: [120, 700], waitDurable: true },
    { op: 'read', maxEvents: 2 },
    { op: 'ack', count: 1, order: 'oldest' },
    { op: 'write', sizesBytes: [300], waitDurable: true },
    { op: 'checkpoint' },
    { op: 'write', sizesBytes: [64], waitDurable: true },
  ],
};
const target = (args = '') => externalTarget({ command: `python3 ${DRIVER}${args}`, cwd: REPO_ROOT });

let fixture: TempDaemon;
beforeAll(async () => {
  requireRoot('a FUSE mount');
  fixture = await startTempDaemon('initdb-store');
});
afterAll(async () => {
  await fixture?.stop();
});

/** Records the workload once (a fresh reset, from the starting state if the daemon has one); each lose-unsynced state's request, and the request the driver's open line followed. */
async function recordStates(daemon: DaemonHandle, args: string): Promise<{ states: number[]; openedAfter: number; creates: string[] }> {
  await daemon.client.reset(true);
  const run = await runDriverProcess(daemon, target(args).driver, { ...specFor(daemon.mountpoint, { workload: WORKLOAD, settings: {} }, 'workload', 0), mark: markDir(daemon) }, mergeTimeouts());
  expect(run.record.exitCode, run.stderr).toBe(0);
  const { trace, marks } = await daemon.client.traceWithMarks();
  const openLine = run.record.outcomes.findIndex((o) => o.t === 'open') + 1;
  const openedAfter = marks.find((m) => m.n === openLine)!.afterOp;
  const answer = await daemon.client.states(['lose-unsynced'], { maxStates: 10_000, maxStatesPerInterval: 1, sectorPatterns: 0 });
  return { states: answer.states.map((s) => s.id.afterOp), openedAfter, creates: trace.filter((e) => e.kind === 'create').map((e) => e.path) };
}

describe('examples/initdb-store: a database that needs an initialised directory', () => {
  it('with its setup as the starting state, every crash state listed falls after the setup; inline, most fall inside initdb', async () => {
    const daemon = fixture.daemon;
    // Inline (no starting state): the workload run initialises the empty directory itself.
    await daemon.client.startingState({ clear: true });
    const inline = await recordStates(daemon, ' --inline-setup');
    const inSetup = inline.states.filter((op) => op <= inline.openedAfter).length;
    expect(inline.creates.length, 'initdb creates its ~290 files in the run').toBeGreaterThan(250);
    expect(inSetup / inline.states.length, `${inSetup} of ${inline.states.length} states inside initdb`).toBeGreaterThan(0.8);

    // The starting state: made once by the setup run, durable, outside every recording.
    const start = await prepareStartingState(daemon, target().driver, {});
    expect(start).not.toBeNull();
    expect(start!.files).toBeGreaterThan(250);
    const withStart = await recordStates(daemon, '');
    expect(withStart.creates.filter((p) => !p.startsWith('/global/pg_control.tmp') && !p.startsWith('/.powercut')), 'no file of initdb is created in the run').toEqual([]);
    expect(withStart.states.length).toBeGreaterThan(0);
    // Every state listed is after the setup (the run's own requests only), more than the 80 % asked for.
    expect(withStart.states.every((op) => op >= 1)).toBe(true);
    expect(withStart.states.length, 'the workload\'s own states are as many as inline (less its initdb)').toBeGreaterThanOrEqual(inline.states.length - inSetup - 2);
  }, 90_000);

  it('catches the known-bad setting (commits confirmed before their WAL flush) from the starting state', async () => {
    const daemon = fixture.daemon;
    // Every failing state explained, bounded by probes and searches alone (no time bound: the same
    // verdict under any load): one bug, one proven cause for all of them, read off the recording.
    const r = await runExhaustive(daemon, target(), { driver: { command: `python3 ${DRIVER}`, cwd: REPO_ROOT }, workload: WORKLOAD, settings: { synchronousCommit: false } }, {
      policies: ['lose-unsynced'], writeArtifacts: false, allFailures: true, fsyncHolds: null,
      explain: { ...untimedBounds(EXPLAIN_BOUNDS), checkReach: () => false },
    });
    expect(r.failure?.violations.map((v) => v.check), JSON.stringify(r.coverage)).toContain('at-least-once');
    const causes = r.failures.map((f) => f.cause!);
    expect(causes.map((c) => `${c.key} (${c.route}): ${c.failingStates?.count} of ${c.failingStates?.of}`)).toEqual([
      // The WAL's write not fsynced before the commit's confirmation (or, where the flush comes later, the line not waiting for it).
      expect.stringMatching(/^(missing-fsync \/pg_wal\/\* write \/pg_wal\/\*|early-confirmation \/pg_wal\/\* durable) \(candidate\): (\d+) of \2$/),
    ]);
    // The correct setting passes every state of the same run.
    const ok = await runExhaustive(daemon, target(), { driver: { command: `python3 ${DRIVER}`, cwd: REPO_ROOT }, workload: WORKLOAD, settings: {} }, {
      policies: ['lose-unsynced'], writeArtifacts: false, allFailures: false, fsyncHolds: null,
    });
    expect(ok.failure?.violations).toBeUndefined();
    expect(ok.coverage.states).toBeGreaterThan(5);
  }, 90_000);
});
