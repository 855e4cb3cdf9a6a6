// `powercut gate` and `powercut scenario` as users run them: compiled CLI, real mount, own process.
import { afterAll, describe, expect, it } from 'vitest';
import { execa } from 'execa';
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { distPath } from '../harness/dist-path.js';

const cli = distPath('src/cli.js');
const tmpDirs: string[] = [];
const tmp = async () => {
  const d = await mkdtemp(path.join(os.tmpdir(), 'powercut-gate-test-'));
  tmpDirs.push(d);
  return d;
};
afterAll(async () => {
  for (const d of tmpDirs) await rm(d, { recursive: true, force: true });
});
const powercut = (args: string[], cwd?: string) => execa(process.execPath, [cli, ...args], { reject: false, timeout: 120_000, ...(cwd ? { cwd } : {}) });
const mountsLeft = async (prefix: string) => (await readFile('/proc/mounts', 'utf8')).split('\n').filter((l) => l.includes(prefix));

describe('powercut gate', () => {
  it('on a known-bad variant exits 1 with a summary, a JUnit failure and a replayable artifact', async () => {
    const dir = await tmp();
    const r = await powercut(['gate', '--time-budget', '20', '--seed', '3', '--variant', 'fsync-error-ignored', '--artifacts', 'arts', '--junit', 'out/junit.xml'], dir);
    expect(r.exitCode, r.stderr).toBe(1);
    expect(r.stdout).toMatch(/^fsync-eio-then-retry\s+1\s+1\s+\d+\s+[\d.]+ s\s+FAIL$/m);
    expect(r.stdout).toMatch(/^total\s+\d+\s+\d+\s+[1-9]\d*\s+.*FAIL$/m);
    expect(r.stdout).toContain('gate FAILED');
    const artifacts = await readdir(path.join(dir, 'arts'));
    expect(artifacts.length).toBeGreaterThan(0);
    const artifact = path.join(dir, 'arts', artifacts.find((a) => a.includes('fsync-error-ignored'))!);
    expect(existsSync(path.join(artifact, 'case.json'))).toBe(true);
    expect(JSON.parse(await readFile(path.join(artifact, 'case.json'), 'utf8')).variant).toBe('fsync-error-ignored');
    expect(r.stdout).toContain(`replay:   node ${cli} replay ${path.join(dir, 'arts')}`);
    const junit = await readFile(path.join(dir, 'out/junit.xml'), 'utf8');
    expect(junit).toMatch(/<testcase classname="powercut.scenarios" name="fsync-eio-then-retry" time="[\d.]+">\n\s+<failure /);
    expect(await mountsLeft('powercut-gate-')).toEqual([]);
  }, 120_000);

  it('on the correct queue exits 0 and writes no artifact', async () => {
    const dir = await tmp();
    const r = await powercut(['gate', '--time-budget', '20', '--seed', '4', '--artifacts', 'arts'], dir);
    expect(r.exitCode, r.stdout + r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^total\s+\d+\s+\d+\s+0\s+.*pass$/m);
    expect(r.stdout).toContain('gate passed');
    expect(existsSync(path.join(dir, 'arts'))).toBe(false);
    expect(await mountsLeft('powercut-gate-')).toEqual([]);
  }, 120_000);

  it('rejects bad options with exit 2 and a message naming the option', async () => {
    for (const [args, message] of [
      [['--time-budget', 'soon'], /--time-budget must be an integer in 1\.\.\d+, got 'soon'/],
      [['--seed', '1.5'], /--seed must be an integer/],
      [['--variant', 'nope'], /--variant 'nope' is not a known variant; valid names: no-dir-fsync-new-page/],
      [['--bogus'], /Unknown option '--bogus'/],
    ] as const) {
      const r = await powercut(['gate', ...args]);
      expect(r.exitCode).toBe(2);
      expect(r.stderr).toMatch(message);
    }
    const help = await powercut(['gate', '--help']);
    expect([help.exitCode, help.stdout]).toEqual([0, expect.stringContaining('usage: powercut gate')]);
  });
});

describe('powercut scenario', () => {
  it('lists every scenario with the variant it exposes', async () => {
    const r = await powercut(['scenario', 'list']);
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toMatch(/^fsync-eio-then-retry\s+fsync-error-ignored\s+the first fsync of a page fails with EIO/m);
    expect(r.stdout.trim().split('\n')).toHaveLength(12);
  });
  it('run exits 0 on the correct queue and 1 with the variant, printing verdict, violation and artifact', async () => {
    const dir = await tmp();
    const good = await powercut(['scenario', 'run', 'enospc-mid-write']);
    expect(good.exitCode, good.stderr).toBe(0);
    expect(good.stdout).toContain('verdict: pass');
    const bad = await powercut(['scenario', 'run', 'enospc-mid-write', '--variant', 'checkpoint-in-place', '--keep-artifacts', dir]);
    expect(bad.exitCode, bad.stderr).toBe(1);
    expect(bad.stdout).toMatch(/verdict: fail \(1 violation\) in [\d.]+ s\n {2}liveness: the queue did not open after the power cut/);
    expect(bad.stdout).toContain(`artifact: ${dir}/`);
    expect((await readdir(dir)).length).toBe(1);
    expect(await mountsLeft('powercut-scenario-')).toEqual([]);
  }, 60_000);
  it('usage errors exit 2 naming what is wrong', async () => {
    for (const [args, message] of [
      [['scenario'], /missing subcommand: list or run/],
      [['scenario', 'run'], /exactly one scenario NAME \(got 0\)/],
      [['scenario', 'run', 'nope'], /unknown scenario 'nope'; valid names: new-page-dir-not-fsynced/],
      [['scenario', 'run', 'enospc-mid-write', '--variant', 'x'], /--variant 'x' is not a known variant/],
    ] as const) {
      const r = await powercut(args as unknown as string[]);
      expect(r.exitCode).toBe(2);
      expect(r.stderr).toMatch(message);
    }
  });
});
