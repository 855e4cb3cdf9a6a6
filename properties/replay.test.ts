// An injected failure (a known-bad variant) produces an artifact whose replay reproduces it, from
// a copy of the folder anywhere; once the bug is gone the replay says it passes now (exit 0), even
// though recovery of the old damaged disk still fails; a folder that is not an artifact is a usage error.
import { existsSync, statSync } from 'node:fs';
import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { writeHarnessErrorArtifact } from '../src/harness/artifacts.js';
import { distPath, REPO_ROOT } from '../src/harness/dist-path.js';
import { HarnessError } from '../src/harness/harness-error.js';
import { crashInputArb, runCrashSuite, seedFromEnv } from './crash-property.js';
import { KNOWN_BAD } from '../src/targets/powercut-queue/known-bad.js';
import { useTempDaemon } from './use-temp-daemon.js';

const daemon = useTempDaemon('replay');
/**
 * Shrinking is bounded by candidates tried, never by time (a busy machine's seconds try fewer): these
 * tests need a shrunk case, not the smallest one (unbounded, the first took 42 s).
 */
const SHRINK_INPUTS = 6;
let artifactRoot: string;
beforeAll(async () => {
  artifactRoot = await mkdtemp(path.join(os.tmpdir(), 'powercut-replay-artifacts-'));
});
afterAll(async () => {
  await rm(artifactRoot, { recursive: true, force: true });
});

const cli = (...args: string[]) => execa(process.execPath, [distPath('src/cli.js'), ...args], { reject: false, timeout: 120_000 });

it('a violation writes an artifact whose replay.sh, copied elsewhere, reproduces it; after a fix it passes now', async () => {
  const variant = 'checkpoint-in-place';
  const report = await runCrashSuite(daemon(), crashInputArb({ variant, settings: KNOWN_BAD[variant].settings }), { numRuns: 40, seed: seedFromEnv(7).seed, artifactRoot, maxShrinkInputs: SHRINK_INPUTS });
  expect(report.failed, report.summary).toBe(true);
  // Shrinking ran, and the artifact is the smallest case: the one fast-check reports.
  expect(report.numShrinks).toBeGreaterThan(0);
  const dir = report.failure!.artifactDir!;
  const stored = JSON.parse(await readFile(path.join(dir, 'case.json'), 'utf8'));
  expect(stored.workload).toEqual(report.counterexample!.workload);
  for (const f of ['case.json', 'violations.json', 'violations.txt', 'trace-cut-0.json', 'trace-cut-0.txt', 'replay.sh', 'report.html', 'images/cut-0-durable', 'images/cut-0-live', 'images/cut-0-after-crash', 'outcomes/run-0-workload.jsonl', 'outcomes/run-1-drain.jsonl']) {
    expect(existsSync(path.join(dir, f)), `${f} in the artifact`).toBe(true);
  }
  expect(statSync(path.join(dir, 'replay.sh')).mode & 0o111).not.toBe(0);
  expect(await readFile(path.join(dir, 'trace-cut-0.txt'), 'utf8')).toContain('----- POWER CUT');
  expect(await readFile(path.join(dir, 'replay.sh'), 'utf8')).not.toContain(REPO_ROOT); // no path of this machine
  expect(report.summary).toContain(`replay:   powercut replay ${dir}`);

  // The folder copied to another place, replayed through its replay.sh with a checkout named by POWERCUT_HOME.
  const elsewhere = await mkdtemp(path.join(os.tmpdir(), 'powercut-copied-artifact-'));
  try {
    await cp(dir, elsewhere, { recursive: true });
    const replay = await execa('sh', [path.join(elsewhere, 'replay.sh'), '--open'], { reject: false, timeout: 120_000, cwd: os.tmpdir(), env: { POWERCUT_HOME: REPO_ROOT, DISPLAY: '', WAYLAND_DISPLAY: '' } });
    expect(replay.exitCode, String(replay.stdout) + String(replay.stderr)).toBe(1);
    expect(replay.stdout).toContain(path.join(elsewhere, 'report.html'));
    expect(replay.stdout).toContain('REPRODUCED by the full re-run');
    expect(replay.stdout).toContain(report.failure!.violations[0].check);
    expect(replay.stdout).toContain('files the cut changes (live vs durable');

    // "Fixed": the same case on the correct queue. The full re-run passes (exit 0), while the
    // stored disk, damaged by the old code, still fails recovery: both are said, neither hides the other.
    const c = JSON.parse(await readFile(path.join(elsewhere, 'case.json'), 'utf8'));
    delete c.variant;
    await writeFile(path.join(elsewhere, 'case.json'), JSON.stringify(c));
    const fixed = await execa('sh', [path.join(elsewhere, 'replay.sh')], { reject: false, timeout: 120_000, env: { POWERCUT_HOME: REPO_ROOT } });
    expect(fixed.exitCode, String(fixed.stdout) + String(fixed.stderr)).toBe(0);
    expect(fixed.stdout).toContain('PASSES NOW');
    expect(fixed.stdout).toContain('recovery of the stored disk still fails');
  } finally {
    await rm(elsewhere, { recursive: true, force: true });
  }
}, 600_000);

it('replay.sh without powercut on the PATH or POWERCUT_HOME says how to get it and exits 2', async () => {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'powercut-lonely-artifact-'));
  try {
    const a = await writeHarnessErrorArtifact(dir, 'powercut-queue', { workload: { steps: [] }, settings: {}, policy: 'lose-unsynced', seed: 1 }, new HarnessError('x'));
    const r = await execa('sh', [path.join(a, 'replay.sh')], { reject: false, cwd: dir, env: { PATH: '/usr/bin:/bin' }, extendEnv: false });
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain('powercut not found: put it on the PATH, or set POWERCUT_HOME to a built checkout');
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

it('replay of a folder that is not an artifact names the missing file and exits 2', async () => {
  // An empty folder of its own: a shared one (the system's temporary folder) may hold anyone's case.json.
  const notArtifact = await mkdtemp(path.join(os.tmpdir(), 'powercut-not-an-artifact-'));
  try {
    const r = await cli('replay', notArtifact);
    expect(r.exitCode).toBe(2);
    expect(String(r.stderr)).toContain(`${path.join(notArtifact, 'case.json')}: cannot read (ENOENT)`);
  } finally {
    await rm(notArtifact, { recursive: true, force: true });
  }
});

it('exhaustive mode: a failing workload shrinks to a smaller one whose enumeration still fails, and its crash state replays exactly', async () => {
  const variant = 'checkpoint-unlink-before-rename';
  const report = await runCrashSuite(daemon(), crashInputArb({ kind: 'exhaustive', variant, settings: KNOWN_BAD[variant].settings, maxSteps: 5 }), { numRuns: 10, seed: seedFromEnv(11).seed, artifactRoot, maxShrinkInputs: SHRINK_INPUTS });
  expect(report.error, 'harness error').toBeUndefined();
  expect(report.failed, report.summary).toBe(true);
  expect(report.numShrinks, 'shrink steps').toBeGreaterThan(0);
  const dir = report.failure!.artifactDir!;
  const stored = JSON.parse(await readFile(path.join(dir, 'case.json'), 'utf8'));
  expect(stored.workload).toEqual(report.counterexample!.workload);
  expect(stored.state.afterOp).toBeGreaterThan(0);
  expect(existsSync(path.join(dir, 'images/cut-0-after-crash'))).toBe(true);
  const replay = await execa('sh', [path.join(dir, 'replay.sh')], { reject: false, timeout: 120_000, env: { POWERCUT_HOME: REPO_ROOT } });
  expect(replay.exitCode, String(replay.stdout) + String(replay.stderr)).toBe(1);
  // Checked natively, so replayed both ways, which agree.
  expect(stored.recoveredOn).toBe('native');
  expect(replay.stdout).toContain('recovery of the stored disk still fails (on the mount)');
  expect(replay.stdout).toContain('recovery of the stored disk still fails (natively)');
  expect(replay.stdout).not.toContain('the two ways disagree');
  expect(replay.stdout).toContain('REPRODUCED by the full re-run');
  expect(replay.stdout).toMatch(/crash state after request \d+, torn: directory operations prefix \d+/);
}, 300_000);

it('a confirmation that does not wait for its fsync is caught through the recorded slow-fsync schedule, and its replay records with the same schedule', async () => {
  const variant = 'sync-wait-gives-up';
  // The lie shows only when the driver prints its line while the fsync is held: a driver that gets
  // no CPU for the whole hold wakes to the fsync done and its timer due at once, takes the fsync's
  // completion first, and tells no lie. Held 25 ms, a loaded 2-core machine's CI once gave the
  // replay's re-run no failing state (a run queue of several tasks per core waits about that long).
  // Held 250 ms, ten times that: the replay, with the same schedule, holds the same fsyncs as long.
  const fsyncHolds = { seed: 5, maxHoldMs: 250 };
  const report = await runCrashSuite(daemon(), crashInputArb({ kind: 'exhaustive', variant, settings: KNOWN_BAD[variant].settings, maxSteps: 5 }), { numRuns: 10, seed: seedFromEnv(13).seed, artifactRoot, maxShrinkInputs: SHRINK_INPUTS, exhaustive: { fsyncHolds } });
  expect(report.error, 'harness error').toBeUndefined();
  expect(report.failed, report.summary).toBe(true);
  const dir = report.failure!.artifactDir!;
  const stored = JSON.parse(await readFile(path.join(dir, 'case.json'), 'utf8'));
  expect(stored.fsyncHolds).toEqual(fsyncHolds);
  const replay = await execa('sh', [path.join(dir, 'replay.sh')], { reject: false, timeout: 120_000, env: { POWERCUT_HOME: REPO_ROOT } });
  expect(replay.exitCode, String(replay.stdout) + String(replay.stderr)).toBe(1);
  expect(replay.stdout).toContain('REPRODUCED by the full re-run');
}, 300_000);
