// The Python example queue under powercut, as a user runs it: the compiled CLI against
// `python3 examples/python-queue/driver.py` on a real mount. The driver follows the protocol, the
// correct queue passes the gate, and its known-bad flag (no directory fsync after the ack file's
// rename) is caught by the bounded-replay check.
import { afterAll, describe, expect, it } from 'vitest';
import { execa } from 'execa';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { distPath, REPO_ROOT } from '../../src/harness/dist-path.js';

const cli = distPath('src/cli.js');
const DRIVER = 'python3 examples/python-queue/driver.py';
const BAD_FLAG = '--no-dir-fsync-after-ack-rename';
// A fixed seed: the same workloads every run. Seed 5 also starts the gate's suite rotation at faults,
// then driver, then cut-during-recovery, so a short budget reaches all three (an exhaustive input may
// run to the end of the whole budget: the suite that comes first must not be cut-during-recovery,
// whose single input would take it all). Measured on a 2-core machine: the correct queue checks
// 200-380 crash states in 30 s; with the flag every suite fails on its first input that acks, the
// gate ending after 4-5 s (45-63 crash states of the driver suite).
const SEED = 5;
const PASS_BUDGET_S = 30;
const CATCH_BUDGET_S = 30;

const tmpDirs: string[] = [];
const tmp = async () => {
  const d = await mkdtemp(path.join(os.tmpdir(), 'powercut-python-queue-test-'));
  tmpDirs.push(d);
  return d;
};
afterAll(async () => {
  for (const d of tmpDirs) await rm(d, { recursive: true, force: true });
});
/** A command that outlives this is stopped with SIGTERM (on which it unmounts), well before the test's own timeout. */
const COMMAND_TIMEOUT_MS = 60_000;
const TEST_TIMEOUT_MS = COMMAND_TIMEOUT_MS + 30_000;
// From the repository root (the driver command is relative to it), with its mounts under `dir`
// (TMPDIR), so mounts of other runs on the machine never count as ours.
const powercut = (dir: string, args: string[]) =>
  execa(process.execPath, [cli, ...args], { cwd: REPO_ROOT, env: { TMPDIR: dir }, reject: false, timeout: COMMAND_TIMEOUT_MS, forceKillAfterDelay: 10_000 });
const mountsLeft = async (dir: string) => (await readFile('/proc/mounts', 'utf8')).split('\n').filter((l) => l.includes(dir));

describe('examples/python-queue', () => {
  it('powercut driver check passes on the driver (and on the known-bad one: the flag breaks durability, not the protocol)', async () => {
    const dir = await tmp();
    for (const extra of [[], [BAD_FLAG]]) {
      const r = await powercut(dir, ['driver', 'check', '--', 'python3', 'examples/python-queue/driver.py', ...extra]);
      expect(r.exitCode, r.stdout + r.stderr).toBe(0);
      expect(r.stdout).toMatch(/^ok: 'python3 examples\/python-queue\/driver\.py.*' follows the driver protocol \(workload run, drain run, malformed spec, serving two specs, oracle on the uncut history\)$/m);
    }
    expect(await mountsLeft(dir)).toEqual([]);
  }, 2 * TEST_TIMEOUT_MS);

  it(`the gate passes the correct queue (${PASS_BUDGET_S} s, seed ${SEED})`, async () => {
    const dir = await tmp();
    // Artifacts go to the default root (./powercut-artifacts or $POWERCUT_ARTIFACTS), which outlives
    // the test: a failure of the correct queue is a finding to replay, not a folder to delete.
    const r = await powercut(dir, ['gate', '--driver', DRIVER, '--time-budget', String(PASS_BUDGET_S), '--seed', String(SEED)]);
    expect(r.exitCode, r.stdout + r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^suite faults\s+[1-9]\d*\s+0\s+0\s+.*pass$/m);
    expect(r.stdout).toMatch(/^suite driver\s+[1-9]\d*\s+0\s+0\s+.*pass$/m);
    expect(r.stdout).toMatch(/^total\s+[1-9]\d*\s+0\s+0\s+.*pass$/m);
    expect(r.stdout).toContain('gate passed');
    expect(r.stdout).not.toContain('artifact:');
    expect(await mountsLeft(dir)).toEqual([]);
  }, TEST_TIMEOUT_MS);

  it(`the gate catches ${BAD_FLAG} with bounded-replay`, async () => {
    const dir = await tmp();
    const r = await powercut(dir, ['gate', '--driver', `${DRIVER} ${BAD_FLAG}`, '--time-budget', String(CATCH_BUDGET_S), '--seed', String(SEED), '--artifacts', path.join(dir, 'arts')]);
    expect(r.exitCode, r.stdout + r.stderr).toBe(1);
    // The old ack file came back: seqs whose acks were confirmed durable are delivered again.
    expect(r.stdout).toMatch(/bounded-replay: run \d+ \([a-z, ]+\) delivered seqs [\d, ]+ again after a power cut although their acks were confirmed durable/);
    expect(r.stdout).toContain('gate FAILED');
    const artifacts = await readdir(path.join(dir, 'arts'));
    expect(artifacts.some((a) => a.includes('bounded-replay'))).toBe(true);
    const violations = await readFile(path.join(dir, 'arts', artifacts.find((a) => a.includes('bounded-replay'))!, 'violations.txt'), 'utf8');
    expect(violations).toContain('bounded-replay');
    expect(await mountsLeft(dir)).toEqual([]);
  }, TEST_TIMEOUT_MS);
});
