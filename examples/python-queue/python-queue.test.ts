// The Python example queue under powercut, as a user runs it: the compiled CLI against
// `python3 examples/python-queue/driver.py` on a real mount. The driver follows the protocol, the
// correct queue passes the gate, and its known-bad flag (no directory fsync after the ack file's
// rename) is caught by the bounded-replay check. The log preallocated in 64 MB ftruncate segments
// (etcd's WAL) passes too.
import { afterAll, describe, expect, it } from 'vitest';
import { execa } from 'execa';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { distPath, REPO_ROOT } from '../../src/harness/dist-path.js';
import { budgetBroken } from '../../src/cli/testing.js';

const cli = distPath('src/cli.js');
const DRIVER = 'python3 examples/python-queue/driver.py';
const BAD_FLAG = '--no-dir-fsync-after-ack-rename';
// A fixed seed: the same workloads every run. Seed 5 also starts the gate's suite rotation at faults,
// then driver, then cut-during-recovery, so a short budget reaches all three (an exhaustive input may
// run to the end of the whole budget: the suite that comes first must not be cut-during-recovery,
// whose single input would take it all; a suite still without a case at the end is owed one input).
const SEED = 5;
// 20 s: a cut-during-recovery state costs up to three driver runs (its cut drawn again when the
// recovery ended first); at 12 s the gates of the log and of --queue jobs missed their floor or findings.
const PASS_BUDGET_S = 20;
/** --queue jobs judged as a log, at CATCH_SEED: its first input's uncut run already fails (a reopen after every job was acked numbers from 1 again). */
const DEFAULTS_BUDGET_S = 20;
/** Seed 62's driver suite fails at its first input's 6th state (a few seconds): 20 s leaves every suite a turn. */
const CATCH_BUDGET_S = 20;
// The catch's own seed: its driver suite's first input is sequential (a durable write, two reads, an
// ack of six, ...), so its recording is the same under any load and its 6th crash state fails. Seed 5's
// acks sit in concurrent branches: once a busy machine interleaved them so that no state failed in time.
// --stop-on-first: each suite stops at its first failure (explaining and shrinking them would take the rest of the budget).
const CATCH_SEED = 62;
/** The preallocating log (--preallocate, etcd's 64 MB WAL segments). */
const PREALLOCATE = '--preallocate 67108864';
const PREALLOC_BUDGET_S = 20;

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
    // The two checks at once, each on its own mount: they wait on the driver and the daemon most of the time.
    const checks = await Promise.all([[], [BAD_FLAG]].map((extra) => powercut(dir, ['driver', 'check', '--', 'python3', 'examples/python-queue/driver.py', ...extra])));
    for (const r of checks) {
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
    expect(budgetBroken(r.stdout)).toBeUndefined();
    expect(r.stdout).toMatch(/^suite faults\s+[1-9]\d*\s+0\s+0\s+.*pass$/m);
    expect(r.stdout).toMatch(/^suite driver\s+[1-9]\d*\s+0\s+0\s+.*pass$/m);
    expect(r.stdout).toMatch(/^total\s+[1-9]\d*\s+0\s+0\s+.*pass$/m);
    expect(r.stdout).toContain('gate passed');
    expect(r.stdout).not.toContain('artifact:');
    expect(await mountsLeft(dir)).toEqual([]);
  }, TEST_TIMEOUT_MS);

  it(`the gate passes the log preallocated in 64 MB segments by ftruncate (${PREALLOC_BUDGET_S} s, seed ${SEED})`, async () => {
    const dir = await tmp();
    const r = await powercut(dir, ['gate', '--driver', `${DRIVER} ${PREALLOCATE}`, '--time-budget', String(PREALLOC_BUDGET_S), '--seed', String(SEED)]);
    expect(r.exitCode, r.stdout + r.stderr).toBe(0);
    expect(budgetBroken(r.stdout)).toBeUndefined();
    // The recording saw the preallocation, and every suite met its floor.
    expect(r.stdout).toMatch(/features reached .*truncate \/data/);
    expect(r.stdout).toMatch(/^floor: met/m);
    expect(await mountsLeft(dir)).toEqual([]);
  }, TEST_TIMEOUT_MS);

  it(`the gate catches ${BAD_FLAG} with bounded-replay`, async () => {
    const dir = await tmp();
    const r = await powercut(dir, ['gate', '--driver', `${DRIVER} ${BAD_FLAG}`, '--time-budget', String(CATCH_BUDGET_S), '--seed', String(CATCH_SEED), '--stop-on-first', '--artifacts', path.join(dir, 'arts')]);
    expect(r.exitCode, r.stdout + r.stderr).toBe(1);
    expect(budgetBroken(r.stdout)).toBeUndefined();
    // The old ack file came back: seqs whose acks were confirmed durable are delivered again.
    expect(r.stdout).toMatch(/bounded-replay: run \d+ \([a-z, ]+\) delivered seqs [\d, ]+ again after a power cut although their acks were confirmed durable/);
    expect(r.stdout).toContain('gate FAILED');
    const artifacts = await readdir(path.join(dir, 'arts'));
    expect(artifacts.some((a) => a.includes('bounded-replay'))).toBe(true);
    const violations = await readFile(path.join(dir, 'arts', artifacts.find((a) => a.includes('bounded-replay'))!, 'violations.txt'), 'utf8');
    expect(violations).toContain('bounded-replay');
    expect(await mountsLeft(dir)).toEqual([]);
  }, TEST_TIMEOUT_MS);

  describe('--queue jobs: a work queue whose contract differs from a log (ids per session, holes among unconfirmed jobs, any order)', () => {
    const JOBS = `${DRIVER} --queue jobs`;
    it('passes driver check once it declares its contract; with the defaults, the oracle names the declaration it lacks', async () => {
      const dir = await tmp();
      // The two checks at once, each on its own mount: they wait on the driver and the daemon most of the time.
      const [declared, defaults] = await Promise.all([
        powercut(dir, ['driver', 'check', '--', 'python3', 'examples/python-queue/driver.py', '--queue', 'jobs']),
        powercut(dir, ['driver', 'check', '--', 'python3', 'examples/python-queue/driver.py', '--queue', 'jobs', '--declare-defaults']),
      ]);
      expect(declared.exitCode, declared.stdout + declared.stderr).toBe(0);
      expect(defaults.exitCode, defaults.stdout + defaults.stderr).toBe(1);
      // Its restart found no job and numbered from 1 again: no protocol violation, an oracle verdict naming seqScope.
      expect(defaults.stdout).toMatch(/^oracle on the uncut history: monotonic-seqs: .*declares "seqScope": "session" in its contract/m);
      expect(defaults.stdout).toMatch(/^the driver follows the protocol, but the oracle failed its uncut history with \d+ violations? /m);
      expect(await mountsLeft(dir)).toEqual([]);
    }, 2 * TEST_TIMEOUT_MS);

    it(`the gate passes it as declared, and without the declarations fails only on what they declare (${PASS_BUDGET_S} s and ${DEFAULTS_BUDGET_S} s, seeds ${SEED} and ${CATCH_SEED})`, async () => {
      const dir = await tmp();
      const declared = await powercut(dir, ['gate', '--driver', JOBS, '--time-budget', String(PASS_BUDGET_S), '--seed', String(SEED)]);
      expect(declared.exitCode, declared.stdout + declared.stderr).toBe(0);
      expect(budgetBroken(declared.stdout)).toBeUndefined();
      expect(declared.stdout).toContain('checked against: at-least-once; bounded replay 1 (out-of-order acks durable); holes allowed among unconfirmed writes; seqs unique per session; delivered in any order');
      expect(declared.stdout).toMatch(/^floor: met/m);
      // The same queue judged as a log: the clean restarts, the holes and the order it never promised are what fail,
      // and each message names the declaration (so the declared run above did meet those cases).
      const defaults = await powercut(dir, ['gate', '--driver', `${JOBS} --declare-defaults`, '--time-budget', String(DEFAULTS_BUDGET_S), '--seed', String(CATCH_SEED), '--group-by', 'signature', '--artifacts', path.join(dir, 'arts')]);
      expect(defaults.exitCode, defaults.stdout + defaults.stderr).toBe(1);
      expect(budgetBroken(defaults.stdout)).toBeUndefined();
      const found = [...defaults.stdout.matchAll(/^\d+\. ([a-z-]+), /gm)].map((m) => m[1]);
      // Which checks a short gate reaches moves with the machine's load, so each found check must name
      // its declaration; the seqScope one is also shown by driver check above.
      expect(found.length, defaults.stdout).toBeGreaterThan(0);
      for (const check of found) expect(['monotonic-seqs', 'order', 'at-least-once', 'bounded-replay'], defaults.stdout).toContain(check);
      if (found.includes('monotonic-seqs')) expect(defaults.stdout).toContain('declares "seqScope": "session"');
      // A seq the restarted queue gave a new job, delivered after an ack of the old one was confirmed.
      if (found.includes('bounded-replay')) expect(defaults.stdout).toMatch(/bounded-replay: .* came back under other event ids: a queue that numbers its seqs per session/);
      // A hole among unconfirmed jobs, or jobs delivered as they became ready: either declaration.
      if (found.includes('order')) expect(defaults.stdout).toMatch(/order: .*declares "(unconfirmedWrites": "holes|deliveryOrder": "any)"/);
      expect(await mountsLeft(dir)).toEqual([]);
    }, 3 * TEST_TIMEOUT_MS);
  });
});
