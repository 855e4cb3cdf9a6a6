// `powercut gate` and `powercut scenario` as users run them: compiled CLI, real mount, own process.
// Every gate here but one has a work budget (--cases), so what it finds is a function of its seed
// and that budget, whatever the machine's load; the one run under a time budget asserts only what
// the time budget promises (its overrun, its floor's words, the work budget that repeats it).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execa } from 'execa';
import { existsSync } from 'node:fs';
import { cp, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Ajv } from 'ajv';
import { distPath, REPO_ROOT } from '../harness/dist-path.js';
import { budgetBroken, COMMAND_TIMEOUT_MS, recordVerdict } from '../cli/testing.js';
import { SCENARIOS } from '../../scenarios/index.js';

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
/** The commands' own temporary folders (their mounts among them) go under this test's, so mounts of other runs on the machine never count. */
let commandTmp: string;
beforeAll(async () => {
  commandTmp = await tmp();
});
const powercut = (args: string[], cwd?: string) => execa(process.execPath, [cli, ...args], { reject: false, timeout: COMMAND_TIMEOUT_MS, env: { TMPDIR: commandTmp }, ...(cwd ? { cwd } : {}) });
const mountsLeft = async (prefix: string) => (await readFile('/proc/mounts', 'utf8')).split('\n').filter((l) => l.includes(path.join(commandTmp, prefix)));

describe('powercut gate', () => {
  it('on a known-bad variant exits 1 with a summary, a JUnit failure and a replayable artifact (--stop-on-first)', async () => {
    const dir = await tmp();
    // One input of the faults suite: the catch is the scenario's (fsync-eio-then-retry, run before any
    // suite whatever the budget); the suites, which never fail on this variant, would only add time.
    const r = await powercut(['gate', '--cases', 'faults=1', '--seed', '3', '--variant', 'fsync-error-ignored', '--stop-on-first', '--artifacts', 'arts', '--junit', 'out/junit.xml', '--report', 'out/report'], dir);
    expect(r.exitCode, r.stderr).toBe(1);
    expect(r.stdout).toMatch(/^fsync-eio-then-retry\s+1\s+\d+\s+0\s+[\d.]+ s\s+FAIL$/m);
    expect(r.stdout).toMatch(/^total\s+\d+\s+[1-9]\d*\s+0\s+.*FAIL$/m);
    expect(r.stdout).toMatch(/^coverage: \d+ cases, cuts landed \d+\/\d+/m);
    expect(r.stdout).toContain('gate FAILED');
    const artifacts = await readdir(path.join(dir, 'arts'));
    expect(artifacts.length).toBeGreaterThan(0);
    const artifact = path.join(dir, 'arts', artifacts.find((a) => a.includes('fsync-error-ignored'))!);
    expect(existsSync(path.join(artifact, 'case.json'))).toBe(true);
    expect(JSON.parse(await readFile(path.join(artifact, 'case.json'), 'utf8')).variant).toBe('fsync-error-ignored');
    // Every failing case has its report, and the run's page links to it.
    expect(existsSync(path.join(artifact, 'report.html'))).toBe(true);
    expect(r.stdout).toContain(`HTML report: ${path.join(dir, 'out/report/index.html')}`);
    expect(await readFile(path.join(dir, 'out/report/index.html'), 'utf8')).toContain(path.basename(artifact));
    expect(r.stdout).toContain(`replay:   powercut replay ${path.join(dir, 'arts')}`);
    const junit = await readFile(path.join(dir, 'out/junit.xml'), 'utf8');
    expect(junit).toMatch(/<testcase classname="powercut.scenarios" name="fsync-eio-then-retry" time="[\d.]+">\n\s+<properties>/);
    expect(junit).toMatch(/name="fsync-eio-then-retry"[^]*?<\/properties>\n\s+<failure /);
    expect(junit).toContain('<property name="faultsFired" value="1"/>');
    expect(await mountsLeft('powercut-gate-')).toEqual([]);
  }, COMMAND_TIMEOUT_MS);

  it('on a queue with two different bugs lists both causes as distinct failures, each with its fix and artifact, in the summary, the JUnit and the HTML report', async () => {
    const dir = await tmp();
    // One input of append-log/buffered at seed 47: a sequential workload (it records the same requests
    // on any machine) whose acks purge a page; the scenarios find the early ack besides.
    const r = await powercut(['gate', '--cases', 'append-log/buffered=1', '--seed', '47', '--variant', 'purge-and-ack-early', '--policy', 'lose-unsynced', '--artifacts', 'arts', '--junit', 'out/junit.xml', '--report', 'out/report', '--json', 'out/shard-47.json'], dir);
    expect(r.exitCode, r.stderr).toBe(1);
    expect(r.stdout).toMatch(/^same verdict on any machine: --seed 47 --cases append-log\/buffered=1 \(this work budget\)$/m);
    await recordVerdict('gate-two-bugs', path.join(dir, 'out/shard-47.json'));
    const listed = [...r.stdout.matchAll(/^(\d+)\. (.+): (\d+) failing cases?(?: \(\d+ signatures?\))?, found by (.+)$/gm)];
    // ack-returns-early: an ack confirmed before its checkpoint was durable; purge-before-checkpoint: a page's deletion made
    // durable too early, named where its fix (the directory fsync moved after the checkpoint) is proven on the run that
    // found it (or on the recovery it cut, "in recovery: ..."), else listed as an unexplained liveness failure: both bugs are found, neither is given a cause it was not proven to have.
    expect(listed.map((m) => m[2]), r.stdout).toEqual(expect.arrayContaining([expect.stringMatching(/^confirmation \("acked"\) before the/), expect.stringMatching(/^((in recovery: )?unlink \/page\.\* made durable too early|unexplained: liveness, .+)$/)]));
    // The same two mistakes, and no other cause: the early ack shows on /checkpoint.head.tmp (the
    // scenario's atomic-file design) and on /checkpoint.log (the suite's append-log design).
    // Failing states no proven cause explains are listed as unexplained, never given a cause.
    // The early ack may also be named withheld until the next page fsync (a proven, partial fix; known-bad.ts).
    // On the atomic-file design the checkpoint's rename is durable only once / is fsynced: the ack
    // withheld until then is the full fix, and is named when the recording ranks it first.
    for (const m of listed) expect(m[2], r.stdout).toMatch(/^((in recovery: )?confirmation \("acked"\) before the (fsync of \/(checkpoint\.(head\.tmp|log)|page\.\*)|directory fsync of \/) completed|(in recovery: )?unlink \/page\.\* made durable too early|unexplained: .+|cause not isolated: the failure needs the cut during recovery)$/);
    expect(r.stdout).toMatch(/^\d+ failing states: \d+ proven causes? explains? \d+; \d+ unexplained$/m);
    // One bug reads as one failure: two bugs, two proven groups, whatever the machine (a work budget
    // and a sequential workload); a cause proven once is carried over to the later run, not searched again.
    expect(listed.map((m) => m[2]), r.stdout).toHaveLength(2);
    expect(r.stdout).toMatch(/^\d+ failing states: 2 proven causes explain \d+; 0 unexplained$/m);
    expect(r.stdout).toMatch(/^ {5}again: {3}proven again on [1-9]\d* later failing runs?, its fix carried over/m);
    expect(r.stdout).toMatch(/^ {5}fix: {5}wait for the (fsync of \/checkpoint\S*|directory fsync of \/) at request \d+ to complete before line \d+ of run 0 \("acked"/m);
    expect([...r.stdout.matchAll(/^ {5}signatures: (.+)$/gm)].flatMap((m) => m[1].split('; ')).every((s) => s.includes('lose-unsynced')), '--policy lose-unsynced: no torn state').toBe(true);
    expect(r.stdout).toMatch(new RegExp(`^distinct failures: ${listed.length} causes \\(`, 'm'));
    // One artifact per distinct failure: repeats are counted, their artifacts not kept.
    const artifacts = (await readdir(path.join(dir, 'arts'))).filter((a) => a.includes('purge-and-ack-early'));
    expect(artifacts).toHaveLength(listed.length);
    for (const a of artifacts) expect(existsSync(path.join(dir, 'arts', a, 'report.html')), a).toBe(true);
    const junit = await readFile(path.join(dir, 'out/junit.xml'), 'utf8');
    expect(junit).toContain(`<testsuite name="distinct-failures" tests="${listed.length}" failures="${listed.length}"`);
    const index = await readFile(path.join(dir, 'out/report/index.html'), 'utf8');
    expect(index).toContain(`Distinct failures (${listed.length})`);
    // No dangling link: every artifact the JUnit file or the page names holds its case (a later case of a
    // known signature, or one replaced by its shrunk case, has its folder deleted).
    const named = [...junit.matchAll(/artifact: ([^\s<]+)/g), ...index.matchAll(/href="([^"]+)\/report\.html"/g)].map((m) => path.resolve(path.join(dir, 'out/report'), decodeURIComponent(m[1].replace(/^file:\/\//, ''))));
    expect(named.length).toBeGreaterThan(listed.length);
    for (const a of named) expect(existsSync(path.join(a, 'case.json')), a).toBe(true);
    expect(await mountsLeft('powercut-gate-')).toEqual([]);

    // Why it failed, in a terminal: the stored cause; without cause.json, the case recorded again and searched.
    const causes = await Promise.all(artifacts.map(async (a) => ({ a, c: JSON.parse(await readFile(path.join(dir, 'arts', a, 'cause.json'), 'utf8')) })));
    const proven = causes.find((x) => x.c.kind !== 'not-isolated');
    expect(proven, 'an artifact of a proven cause').toBeDefined();
    const one = path.join(dir, 'arts', proven!.a);
    const stored = proven!.c;
    const [explained, nope] = await Promise.all([powercut(['explain', one]), powercut(['explain', path.join(dir, 'nope')])]);
    expect(nope.exitCode).toBe(2);
    expect(explained.exitCode, explained.stdout + explained.stderr).toBe(0);
    expect(explained.stdout).toContain(`cause:  ${stored.title}`);
    expect(explained.stdout).toMatch(/^fix: {4}\S/m);
    expect(explained.stdout).toMatch(/^proof: {2}(with .*: \d+ of the \d+ failing states of the run pass on the same cuts; no state that passed fails|the disk is legal|checked on the state itself)/m);
    expect(explained.stdout).toMatch(/^reach: {2}(also under the journaled model|only on a filesystem as strict as POSIX allows|not seen under the journaled model)/m);
    // The replay below reads the stored cause: it gets a copy of the artifact that keeps it, and runs
    // beside the search (each records on its own mount), which saves the shorter one's time.
    const copy = path.join(dir, 'replay', proven!.a);
    await cp(one, copy, { recursive: true });
    await rm(path.join(one, 'cause.json'));
    // Two re-runs at most, should its workload run concurrent steps (a sample): enough for the cause line, short for npm test.
    const [searched, replayed] = await Promise.all([powercut(['explain', one]), powercut(['replay', copy, '--reruns', '2'])]);
    expect(searched.exitCode, searched.stdout + searched.stderr).toBe(0);
    expect(searched.stdout).toContain('recording the case again on a fresh mount');
    expect(JSON.parse(await readFile(path.join(one, 'cause.json'), 'utf8')).key).toBe(stored.key);
    expect(replayed.exitCode, replayed.stdout).toBe(1);
    expect(replayed.stdout).toContain(`the cause still holds: ${stored.title}`);

    // Sharded over a CI matrix: a second job's result (here the same run under another seed, which found
    // only the first cause) merges with it by cause into one summary, JSON, JUnit file and page.
    const shard = JSON.parse(await readFile(path.join(dir, 'out/shard-47.json'), 'utf8'));
    // A work budget has no time budget to overrun; its result says what repeats it.
    expect([shard.overrunMs, shard.options.cases, shard.repeat]).toEqual([undefined, { perSuite: { 'append-log/buffered': 1 } }, { cases: { perSuite: { 'append-log/buffered': 1 } }, option: '--seed 47 --cases append-log/buffered=1', inputs: 1, interleaved: 0 }]);
    await writeFile(path.join(dir, 'out/shard-6.json'), JSON.stringify({ ...shard, seed: 6, failures: shard.failures.slice(0, 1) }));
    // A shard of another run is refused (checked below), merged at the same time: neither writes what the other reads.
    await writeFile(path.join(dir, 'out/other.json'), JSON.stringify({ ...shard, seed: 7, options: { ...shard.options, variant: 'ack-returns-early' } }));
    const [m, bad] = await Promise.all([
      powercut(['merge', 'out/shard-47.json', 'out/shard-6.json', '--json', 'merged/result.json', '--junit', 'merged/junit.xml', '--report', 'merged/report'], dir),
      powercut(['merge', 'out/shard-47.json', 'out/other.json'], dir),
    ]);
    expect(m.exitCode, m.stdout + m.stderr).toBe(1);
    expect(m.stdout).toMatch(/^2 shards \(seeds 47, 6\):$/m);
    const merged = JSON.parse(await readFile(path.join(dir, 'merged/result.json'), 'utf8'));
    const schema = JSON.parse(await readFile(path.join(REPO_ROOT, 'docs/gate-result.schema.json'), 'utf8'));
    const validate = new Ajv({ allErrors: true, strict: true }).compile(schema);
    expect(validate(merged), JSON.stringify(validate.errors, null, 1)).toBe(true);
    expect(merged.failures.map((f: { key: string }) => f.key)).toEqual(shard.failures.map((f: { key: string }) => f.key));
    expect(merged.failures[0].count).toBe(2 * shard.failures[0].count);
    expect(merged.shards.map((x: { seed: number }) => x.seed)).toEqual([47, 6]);
    expect(await readFile(path.join(dir, 'merged/junit.xml'), 'utf8')).toContain(`<testsuite name="distinct-failures" tests="${listed.length}" failures="${listed.length}"`);
    expect(await readFile(path.join(dir, 'merged/report/index.html'), 'utf8')).toContain(`Distinct failures (${listed.length})`);
    // A shard of another run is refused, naming the file and the difference.
    expect(bad.exitCode).toBe(2);
    expect(bad.stderr).toMatch(/other\.json is not a shard of the same run as .*shard-47\.json: its variant is "ack-returns-early", not "purge-and-ack-early"/);
  }, 2 * COMMAND_TIMEOUT_MS);

  it('on the correct queue exits 0, states its floor and meets it, writes no artifact, and its --json file follows the schema', async () => {
    const dir = await tmp();
    // One input of each suite; two torn states an interval at most keep it short.
    const r = await powercut(['gate', '--cases', '6', '--seed', '4', '--max-states-per-interval', '2', '--artifacts', 'arts', '--json', 'out/result.json'], dir);
    expect(r.exitCode, r.stdout + r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^total\s+\d+\s+0\s+0\s+.*pass$/m);
    expect(r.stdout).toMatch(/^coverage: \d+ cases, cuts landed \d+\/\d+/m);
    expect(r.stdout).toMatch(/^checked against: at-least-once; bounded replay \d+ to 1024 \(by settings\)/m);
    expect(r.stdout).toMatch(/^floor: met \(\d+ requirements\)/m);
    expect(r.stdout).toMatch(/^ {2}atomic-file\/sync: cases judged [1-9]\d*, crash states under lose-unsynced [1-9]\d*, crash states under torn [1-9]\d*, lose-unsynced states judged of those listed \d+\/\d+$/m);
    expect(r.stdout).toContain('gate passed');
    expect(existsSync(path.join(dir, 'arts'))).toBe(false);
    const schema = JSON.parse(await readFile(path.join(REPO_ROOT, 'docs/gate-result.schema.json'), 'utf8'));
    const validate = new Ajv({ allErrors: true, strict: true }).compile(schema);
    const result = JSON.parse(await readFile(path.join(dir, 'out/result.json'), 'utf8'));
    expect(validate(result), JSON.stringify(validate.errors, null, 1)).toBe(true);
    expect([result.seed, result.verdict, result.exitCode, result.floor.met]).toEqual([4, 'passed', 0, true]);
    // Each phase's time used, in the summary and the result: a work budget gives them no time shares.
    expect(r.stdout).toMatch(/^phases: record\+judge (\d+\.\d s|\d+:\d\d), causes \d+\.\d s, shrink \d+\.\d s, artifacts \d+\.\d s \(a work budget: no time shares, each phase bounded by counts\)$/m);
    expect(result.phases.map((p: { phase: string }) => p.phase)).toEqual(['record+judge', 'causes', 'shrink', 'artifacts']);
    // One input of each suite, in the seed's order; each suite's share of the judging time is said.
    expect(r.stdout).toMatch(/^judging time per suite \(of [\d.:]+( s)?\): atomic-file\/sync \d+ % \(1 input\), .*faults \d+ % \(1 input\)$/m);
    expect(r.stdout).toMatch(/^same (verdict|inputs and work) on any machine: --seed 4 --cases 6 \(this work budget/m);
    expect(result.repeat).toMatchObject({ cases: { total: 6 }, option: '--seed 4 --cases 6', inputs: 6 });
    expect(result.rows.map((row: { name: string }) => row.name)).toEqual(expect.arrayContaining(['atomic-file/sync', 'faults', 'cut-during-recovery']));
    expect(result.checkedAgainst[0].contract.seqScope).toBe('forever');
    // The schema is not vacuous: a file that breaks it is refused.
    expect(validate({ ...result, verdict: 'fine' })).toBe(false);
    expect(await mountsLeft('powercut-gate-')).toEqual([]);
  }, COMMAND_TIMEOUT_MS);

  it('with caps its suites cannot pass exits 4, saying what was not reached and what raises it, within its time budget; it prints the work budget that runs its inputs again on any machine', async () => {
    const dir = await tmp();
    // What the time budget promises, and only that (what it found depends on the machine's speed):
    // its overrun, its floor's words, the work budget that repeats it. The example Python driver has
    // no scenarios, which always run in full and, beside busy loops, alone outlast a short budget. One
    // crash state per recorded run is each run's lose-unsynced states only, never a torn one: the floor
    // is out of reach whatever the load. (A work budget's floor says raise --cases: gate-loop.test.ts.)
    const driver = `python3 ${path.join(REPO_ROOT, 'examples/python-queue/driver.py')}`;
    const r = await powercut(['gate', '--driver', driver, '--time-budget', '20', '--seed', '4', '--max-states', '1', '--artifacts', 'arts', '--json', 'result.json', '--junit', 'junit.xml'], dir);
    expect(r.exitCode, r.stdout + r.stderr).toBe(4);
    expect(budgetBroken(r.stdout)).toBeUndefined();
    expect(r.stdout).toMatch(/^floor NOT met: \d+ of \d+ requirements, so the gate checked too little to pass:$/m);
    expect(r.stdout).toMatch(/^ {2}NOT met: suite driver: crash states under torn 0, needs at least 1; raise --time-budget \(or --max-states, if it is below the number of policies\)$/m);
    expect(r.stdout).toContain('gate FAILED: no violation found, but the gate checked too little to pass');
    const result = JSON.parse(await readFile(path.join(dir, 'result.json'), 'utf8'));
    expect([result.verdict, result.exitCode, result.floor.met]).toEqual(['below-floor', 4, false]);
    expect(result.overrunMs, `the gate ended ${result.overrunMs} ms past its 20 s budget`).toBeLessThanOrEqual(result.allowedOverrunMs);
    expect(await readFile(path.join(dir, 'junit.xml'), 'utf8')).toMatch(/<failure message="below the gate&apos;s floor: [^"]*crash states under torn 0, needs at least 1; raise --time-budget[^"]*" type="below-floor">/);
    expect(r.stdout).toMatch(/^phases: record\+judge \d+\.\d s, causes \d+\.\d s of 4\.0 s, shrink \d+\.\d s of 3\.0 s, artifacts \d+\.\d s of 1\.0 s \(budget 20\.0 s\)$/m);
    // Each suite's inputs, as a work budget: --seed 4 with it runs the same inputs, each in full, anywhere.
    const suites = ['driver', 'cut-during-recovery', 'faults'];
    expect(Object.keys(result.repeat.cases.perSuite)).toEqual(suites);
    expect(r.stdout).toContain(`on any machine: ${result.repeat.option} (the ${result.repeat.inputs} input`);
    expect(result.repeat.option).toMatch(new RegExp(`^--seed 4 --cases ${suites.map((x) => `${x}=\\d+`).join(',')}$`));
    // A budget too small for a case of every suite, or two budgets, or a suite the gate has not: all at once, each exits at its usage check.
    const [small, few, both, unknown] = await Promise.all([
      powercut(['gate', '--time-budget', '10']), powercut(['gate', '--cases', '3']), powercut(['gate', '--cases', '6', '--time-budget', '60']), powercut(['gate', '--cases', 'atomic-file/sync=1,nope=2']),
    ]);
    expect([small.exitCode, few.exitCode, both.exitCode, unknown.exitCode]).toEqual([2, 2, 2, 2]);
    expect(small.stderr).toContain('--time-budget 10 is too small for the gate to judge a case of every suite: its 6 suites need at least 18 s (a slice each), besides the scenarios; give --time-budget 18 or more');
    expect(few.stderr).toContain('--cases 3 is too small for the gate to judge a case of every suite: its 6 suites (atomic-file/sync, atomic-file/buffered, append-log/sync, append-log/buffered, cut-during-recovery, faults) need at least one input each; give --cases 6 or more');
    expect(both.stderr).toContain('--cases and --time-budget are two budgets; give one');
    expect(unknown.stderr).toContain("--cases atomic-file/sync=1,nope=2: 'nope' is not a suite of this gate; its suites: atomic-file/sync, atomic-file/buffered");
    expect(await mountsLeft('powercut-gate-')).toEqual([]);
  }, COMMAND_TIMEOUT_MS);

  it('rejects bad options with exit 2 and a message naming the option', async () => {
    const cases: { args: readonly string[]; message: RegExp }[] = [];
    for (const [args, message] of [
      [['--time-budget', 'soon'], /--time-budget must be an integer in 1\.\.\d+, got 'soon'/],
      [['--seed', '1.5'], /--seed must be an integer/],
      [['--variant', 'nope'], /--variant: 'nope' is not a known variant of target powercut-queue; valid names: no-dir-fsync-new-page/],
      [['--target', 'nope'], /--target: unknown target 'nope'; valid targets: powercut-queue/],
      [['--mode', 'lucky'], /--mode must be one of exhaustive, random, got 'lucky'/],
      [['--settings', '{oops'], /--settings is not valid JSON/],
      [['--settings', '[1]'], /--settings must be a JSON object, got \[1\]/],
      [['--bogus'], /Unknown option '--bogus'/],
    ] as const) cases.push({ args, message });
    // All at once: each is a process start that exits at its usage check.
    const [help, ...runs] = await Promise.all([powercut(['gate', '--help']), ...cases.map((c) => powercut(['gate', ...c.args]))]);
    for (const [i, r] of runs.entries()) {
      expect(r.exitCode, cases[i].args.join(' ')).toBe(2);
      expect(r.stderr).toMatch(cases[i].message);
    }
    expect([help.exitCode, help.stdout]).toEqual([0, expect.stringContaining('usage: powercut gate')]);
  });
});

describe('powercut scenario', () => {
  it('lists every scenario with its target, the variant it exposes and the check that variant trips', async () => {
    const r = await powercut(['scenario', 'list']);
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toMatch(/^fsync-eio-then-retry\s+powercut-queue\s+fsync-error-ignored\s+[a-z-]+\s+the first fsync of a page fails with EIO/m);
    expect(r.stdout.trim().split('\n')).toHaveLength(SCENARIOS.length + 1);
  });
  it('run exits 0 on the correct queue and 1 with the variant, printing verdict, violation and artifact', async () => {
    const dir = await tmp();
    // Both at once, each on its own mount.
    const [good, bad] = await Promise.all([powercut(['scenario', 'run', 'enospc-mid-write']), powercut(['scenario', 'run', 'enospc-mid-write', '--variant', 'checkpoint-in-place', '--artifacts', dir])]);
    expect(good.exitCode, good.stderr).toBe(0);
    expect(good.stdout).toContain('verdict: pass');
    expect(bad.exitCode, bad.stderr).toBe(1);
    expect(bad.stdout).toMatch(/verdict: fail \(1 violation\) in [\d.]+ s\n {2}liveness: the queue did not open after the power cut/);
    expect(bad.stdout).toContain(`artifact: ${dir}/`);
    expect((await readdir(dir)).length).toBe(1);
    expect(await mountsLeft('powercut-scenario-')).toEqual([]);
  }, 60_000);
  it('usage errors exit 2 naming what is wrong', async () => {
    const cases: { args: readonly string[]; message: RegExp }[] = [];
    for (const [args, message] of [
      [['scenario'], /missing subcommand: list or run/],
      [['scenario', 'run'], /exactly one scenario NAME \(got 0\)/],
      [['scenario', 'run', 'nope'], /unknown scenario 'nope'; valid names: new-page-dir-not-fsynced/],
      [['scenario', 'run', 'enospc-mid-write', '--variant', 'x'], /--variant: 'x' is not a known variant of target powercut-queue/],
    ] as const) cases.push({ args, message });
    // All at once: each is a process start that exits at its usage check.
    const runs = await Promise.all(cases.map((c) => powercut([...c.args])));
    for (const [i, r] of runs.entries()) {
      expect(r.exitCode, cases[i].args.join(' ')).toBe(2);
      expect(r.stderr).toMatch(cases[i].message);
    }
  });
});

describe('a daemon that dies', () => {
  it('stops the property at once with the exit signal and stderr named, writes an artifact, and the gate restarts the daemon and goes on', async () => {
    const { startTempDaemon } = await import('../harness/daemon-process.js');
    const { crashInputArb, runCrashSuite } = await import('../../properties/crash-property.js');
    const { runGate } = await import('./gate.js');
    const artifacts = await tmp();

    // The suite: its daemon is SIGKILLed before the first case.
    const doomed = await startTempDaemon('dies');
    try {
      doomed.daemon.kill();
      const report = await runCrashSuite(doomed.daemon, crashInputArb({ kind: 'exhaustive' }), { numRuns: 5, seed: 1, artifactRoot: artifacts });
      expect(report.failed).toBe(true);
      expect(report.error).toMatch(/the fs daemon \(pid \d+\) was killed by SIGKILL/);
      expect(report.numShrinks).toBe(0);
      expect(report.summary).toContain('harness error (not a verdict on the queue; stopped at once, nothing shrunk)');
      expect(await readFile(path.join(report.errorArtifactDir!, 'harness-error.txt'), 'utf8')).toMatch(/killed by SIGKILL/);
    } finally {
      await doomed.stop();
    }

    // The gate: its first daemon is killed as the first scenario's result is printed, wherever the
    // machine's load has the clock; the next scenario finds it dead, the row says so, a new daemon
    // carries on with the rest. No suite input (a work budget of none): the scenarios are what it asserts on.
    let started = 0;
    let first: Awaited<ReturnType<typeof startTempDaemon>> | undefined;
    const report = await runGate({
      cases: { perSuite: {} }, seed: 3, artifactRoot: artifacts,
      out: { write: (text) => { if (/^scenario /.test(String(text)) && first) { first.daemon.kill(); first = undefined; } return true; } },
      startDaemon: async () => {
        const f = await startTempDaemon('gate-dies');
        if (started++ === 0) first = f;
        return f;
      },
    });
    expect(started).toBeGreaterThanOrEqual(2);
    expect(report.harnessErrors).toBeGreaterThanOrEqual(1);
    expect(report.passed).toBe(false);
    expect(report.text).toMatch(/harness error \(the tool failed, not a verdict on the queue\):[^]*killed by SIGKILL/);
    expect(report.rows.filter((r) => r.kind === 'scenario' && r.cases > 0).length, 'scenarios that ran after the restart').toBeGreaterThan(1);
    expect((await readFile('/proc/mounts', 'utf8')).split('\n').filter((l) => l.includes('powercut-gate-dies-'))).toEqual([]);
  }, COMMAND_TIMEOUT_MS);
});
