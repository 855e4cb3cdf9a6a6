// An injected failure (a known-bad variant) produces an artifact folder whose replay command
// reproduces the violation exactly; a folder that is not an artifact is a clear usage error.
import { existsSync, statSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { distPath } from '../src/harness/dist-path.js';
import { crashInputArb, runCrashSuite } from './crash-property.js';
import { useTempDaemon } from './use-temp-daemon.js';
import { VARIANT_SETTINGS } from './variants/index.js';

const daemon = useTempDaemon('replay');
let artifactRoot: string;
beforeAll(async () => {
  artifactRoot = await mkdtemp(path.join(os.tmpdir(), 'powercut-replay-artifacts-'));
});
afterAll(async () => {
  await rm(artifactRoot, { recursive: true, force: true });
});

const cli = (...args: string[]) => execa(process.execPath, [distPath('src/cli.js'), ...args], { reject: false, timeout: 120_000 });

it('a violation writes an artifact whose replay reproduces it (exit 1)', async () => {
  const variant = 'checkpoint-in-place';
  const report = await runCrashSuite(daemon(), crashInputArb({ variant, settings: VARIANT_SETTINGS[variant] }), { numRuns: 40, seed: 7, artifactRoot, timeLimitMs: 25_000 });
  expect(report.failed, report.summary).toBe(true);
  // Shrinking ran, and the artifact is the smallest case: the one fast-check reports.
  expect(report.numShrinks).toBeGreaterThan(0);
  const dir = report.failure!.artifactDir!;
  const stored = JSON.parse(await readFile(path.join(dir, 'case.json'), 'utf8'));
  expect(stored.workload).toEqual(report.counterexample!.workload);
  for (const f of ['case.json', 'violations.json', 'violations.txt', 'trace-cut-0.json', 'trace-cut-0.txt', 'replay.sh', 'images/cut-0-durable', 'images/cut-0-live', 'images/cut-0-after-crash', 'outcomes/run-0-workload.jsonl', 'outcomes/run-1-drain.jsonl']) {
    expect(existsSync(path.join(dir, f)), `${f} in the artifact`).toBe(true);
  }
  expect(statSync(path.join(dir, 'replay.sh')).mode & 0o111).not.toBe(0);
  expect(await readFile(path.join(dir, 'trace-cut-0.txt'), 'utf8')).toContain('----- POWER CUT');
  expect(report.summary).toContain(`replay:   node ${distPath('src/cli.js')} replay ${dir}`);

  const replay = await execa('sh', [path.join(dir, 'replay.sh')], { reject: false, timeout: 120_000 });
  expect(replay.exitCode, String(replay.stdout) + String(replay.stderr)).toBe(1);
  expect(replay.stdout).toContain('REPRODUCED');
  expect(replay.stdout).toContain(report.failure!.violations[0].check);
  expect(replay.stdout).toContain('files the cut changes (live vs durable');
}, 600_000);

it('replay of a folder that is not an artifact names the missing file and exits 2', async () => {
  const r = await cli('replay', os.tmpdir());
  expect(r.exitCode).toBe(2);
  expect(String(r.stderr)).toContain(`${path.join(os.tmpdir(), 'case.json')}: cannot read (ENOENT)`);
});
