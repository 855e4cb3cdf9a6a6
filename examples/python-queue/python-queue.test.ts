// The Python example queue under powercut, as a user runs it: the compiled CLI against
// `python3 examples/python-queue/driver.py` on a real mount. The driver follows the protocol, the
// correct queue passes the gate, and its known-bad flag (no directory fsync after the ack file's
// rename) is caught by the bounded-replay check. The log preallocated in 64 MB ftruncate segments
// (etcd's WAL) passes too. Every gate has a work budget (--cases): what it finds is a function of its
// seed and that budget, whatever the machine's load.
import { afterAll, describe, expect, it } from 'vitest';
import { execa } from 'execa';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { distPath, REPO_ROOT } from '../../src/harness/dist-path.js';
import { COMMAND_TIMEOUT_MS, recordVerdict } from '../../src/cli/testing.js';

const cli = distPath('src/cli.js');
const DRIVER = 'python3 examples/python-queue/driver.py';
const BAD_FLAG = '--no-dir-fsync-after-ack-rename';
// A fixed seed: the same workloads every run.
const SEED = 5;
// A passing gate: one input of each suite (driver, cut-during-recovery, faults); 40 crash states
// a recording at most besides its lose-unsynced ones (a cut-during-recovery state costs up to three
// driver runs on the mount, Python starting each).
const PASS = ['--cases', '3', '--max-states', '40'];
// The catch's own seed: its driver suite's first input is sequential (a durable write, two reads, an
// ack of six, ...), so its recording is the same under any load and its 6th crash state fails.
// --stop-on-first: each suite stops at its first failure; its one input of the driver suite is all it needs.
const CATCH_SEED = 62;
const CATCH = ['--cases', 'driver=1', '--seed', String(CATCH_SEED)];
/** The preallocating log (--preallocate, etcd's 64 MB WAL segments). */
const PREALLOCATE = '--preallocate 67108864';

const tmpDirs: string[] = [];
const tmp = async () => {
  const d = await mkdtemp(path.join(os.tmpdir(), 'powercut-python-queue-test-'));
  tmpDirs.push(d);
  return d;
};
afterAll(async () => {
  for (const d of tmpDirs) await rm(d, { recursive: true, force: true });
});
/** A command that outlives COMMAND_TIMEOUT_MS (a hang) is stopped with SIGTERM (on which it unmounts), well before the test's own timeout. */
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

  it(`the gate passes the correct queue (${PASS.join(' ')}, seed ${SEED})`, async () => {
    const dir = await tmp();
    // Artifacts go to the default root (./powercut-artifacts or $POWERCUT_ARTIFACTS), which outlives
    // the test: a failure of the correct queue is a finding to replay, not a folder to delete.
    const r = await powercut(dir, ['gate', '--driver', DRIVER, ...PASS, '--seed', String(SEED)]);
    expect(r.exitCode, r.stdout + r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^suite faults\s+[1-9]\d*\s+0\s+0\s+.*pass$/m);
    expect(r.stdout).toMatch(/^suite driver\s+[1-9]\d*\s+0\s+0\s+.*pass$/m);
    expect(r.stdout).toMatch(/^total\s+[1-9]\d*\s+0\s+0\s+.*pass$/m);
    expect(r.stdout).toContain('gate passed');
    expect(r.stdout).not.toContain('artifact:');
    expect(await mountsLeft(dir)).toEqual([]);
  }, TEST_TIMEOUT_MS);

  it('its driver suite checks torn states in most of the persistence intervals of each workload (its inputs judged in full)', async () => {
    const dir = await tmp();
    // Two inputs of the driver suite alone (the floor of the others is not met: exit 4), judged in
    // full within the default caps: every interval that leaves a write unsynced gets its torn states.
    const r = await powercut(dir, ['gate', '--driver', DRIVER, '--cases', 'driver=2', '--seed', String(SEED), '--json', path.join(dir, 'torn.json')]);
    expect(r.exitCode, r.stdout + r.stderr).toBe(4);
    const driver = JSON.parse(await readFile(path.join(dir, 'torn.json'), 'utf8')).rows.find((row: { name: string }) => row.name === 'driver');
    const { 'lose-unsynced': lose, torn } = driver.coverage.policies;
    expect(lose.intervalsReached).toBe(driver.coverage.intervals);
    expect(torn.intervalsReached, JSON.stringify(driver.coverage)).toBeGreaterThanOrEqual(lose.intervalsReached / 2);
    expect(await mountsLeft(dir)).toEqual([]);
  }, TEST_TIMEOUT_MS);

  it(`the gate passes the log preallocated in 64 MB segments by ftruncate (${PASS.join(' ')}, seed ${SEED})`, async () => {
    const dir = await tmp();
    const r = await powercut(dir, ['gate', '--driver', `${DRIVER} ${PREALLOCATE}`, ...PASS, '--seed', String(SEED)]);
    expect(r.exitCode, r.stdout + r.stderr).toBe(0);
    // The recording saw the preallocation, and every suite met its floor.
    expect(r.stdout).toMatch(/features reached .*truncate \/data/);
    expect(r.stdout).toMatch(/^floor: met/m);
    expect(await mountsLeft(dir)).toEqual([]);
  }, TEST_TIMEOUT_MS);

  it(`the gate catches ${BAD_FLAG} with bounded-replay`, async () => {
    const dir = await tmp();
    const r = await powercut(dir, ['gate', '--driver', `${DRIVER} ${BAD_FLAG}`, ...CATCH, '--stop-on-first', '--artifacts', path.join(dir, 'arts'), '--json', path.join(dir, 'catch.json')]);
    expect(r.exitCode, r.stdout + r.stderr).toBe(1);
    await recordVerdict('python-queue-catch', path.join(dir, 'catch.json'));
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

    it(`the gate passes it as declared, and without the declarations fails only on what they declare (seeds ${SEED} and ${CATCH_SEED})`, async () => {
      const dir = await tmp();
      // The two gates at once, each on its own mount: they wait on the driver and the daemon most of the time.
      const [declared, defaults] = await Promise.all([
        powercut(dir, ['gate', '--driver', JOBS, ...PASS, '--seed', String(SEED)]),
        powercut(dir, ['gate', '--driver', `${JOBS} --declare-defaults`, ...CATCH, '--group-by', 'signature', '--artifacts', path.join(dir, 'arts')]),
      ]);
      expect(declared.exitCode, declared.stdout + declared.stderr).toBe(0);
      expect(declared.stdout).toContain('checked against: at-least-once; bounded replay 1 (out-of-order acks durable); holes allowed among unconfirmed writes; seqs unique per session; delivered in any order');
      expect(declared.stdout).toMatch(/^floor: met/m);
      // The same queue judged as a log: the clean restarts, the holes and the order it never promised are what fail,
      // and each message names the declaration (so the declared run above did meet those cases).
      // Its one input of the driver suite: its first uncut run already fails (a reopen after every job
      // was acked numbers from 1 again).
      expect(defaults.exitCode, defaults.stdout + defaults.stderr).toBe(1);
      const found = [...defaults.stdout.matchAll(/^\d+\. ([a-z-]+), /gm)].map((m) => m[1]);
      // Each found check must name its declaration; the seqScope one is also shown by driver check above.
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
