// The example cluster driver (a replicated log of three nodes in Python, written against
// docs/driver-protocol.md alone) under powercut as a user runs it: the compiled CLI, one daemon
// serving a real mount per node. `gate --driver CMD --nodes 3` passes the correct log with every cut
// kind; the known-bad flag (a node answers an append before its fsync) fails with an artifact that
// names the driver and its node count, and `replay` of it reproduces exactly from the stored images
// (`explain` refuses it, saying why; `merge` takes the gate's --json).
// Only what is deterministic is asserted: a re-recording of three concurrent nodes is a sample. Each
// gate has a work budget (--cases: its workloads, each judged in full, whatever the machine's load).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { REPO_ROOT } from '../../src/harness/dist-path.js';
import { cliSandbox, COMMAND_TIMEOUT_MS } from '../../src/cli/testing.js';

const DRIVER = `python3 ${path.join(REPO_ROOT, 'examples/cluster-driver/driver.py')}`;
const BAD_FLAG = '--ack-before-fsync';
// A fixed seed: the same workloads every run (its first writes four events, each confirmed before any node's fsync with the flag).
const SEED = '1';
// One workload: the known-bad gate asks its coordinated crash states only (no live cut); the last of
// them, after every confirmation, fails however they interleaved. It stops at its first failure
// (--stop-on-first): what follows in the test needs one artifact.
const CASES = '1';

let root: string;
let sandbox: Awaited<ReturnType<typeof cliSandbox>>;
beforeAll(async () => {
  sandbox = await cliSandbox('powercut-cluster-driver-test-');
  root = sandbox.root;
});
afterAll(async () => expect(await sandbox.remove(), 'mounts left behind').toEqual([]));
const powercut = (args: string[], cwd?: string) => sandbox.run(args, cwd);

describe('examples/cluster-driver: gate --driver CMD --nodes 3', () => {
  it('passes the correct replicated log with every cut kind, offline and live, and says so in --json', async () => {
    const r = await powercut(['gate', '--driver', DRIVER, '--nodes', '3', '--cases', CASES, '--seed', SEED, '--artifacts', 'arts-pass', '--json', 'out/pass.json']);
    expect(r.exitCode, r.stdout + r.stderr).toBe(0);
    expect(r.stdout).toContain(`target external (the driver '${DRIVER}' (in ${root}), a cluster of 3 nodes)`);
    expect(r.stdout).toMatch(/^cluster: 3 nodes, --nodes-cut all-kinds \(coordinated, one, majority\)/m);
    // Which network its driver processes had, said at the start and in the summary (here root: a network namespace each).
    expect(r.stdout.match(/^driver network: each driver process in a network namespace of its own \(unshare --net\): recovery slots never share a port$/gm)).toHaveLength(2);
    expect(existsSync(path.join(root, 'arts-pass'))).toBe(false);
    const result = JSON.parse(await readFile(path.join(root, 'out/pass.json'), 'utf8'));
    expect(result.options.driver).toEqual({ command: DRIVER, cwd: root, nodes: 3 });
    expect(result.driverNetwork).toEqual({ isolation: 'namespace' });
    expect(result.rows.map((row: { name: string; cases: number }) => [row.name, row.cases > 0])).toEqual([
      ['cluster coordinated', true], ['cluster one-node', true], ['cluster majority', true],
    ]);
    // Its --json is a shard merge takes (a CI matrix of seeds), the driver and its nodes among the options shards share.
    const merged = await powercut(['merge', 'out/pass.json']);
    expect(merged.exitCode, merged.stdout + merged.stderr).toBe(0);
    expect(merged.stdout).toMatch(/^cluster: 3 nodes, --nodes-cut all-kinds/m);
  }, COMMAND_TIMEOUT_MS);

  it(`fails the known-bad log (${BAD_FLAG}) with an artifact of the driver and its nodes, which replay reproduces from the stored images`, async () => {
    const bad = `${DRIVER} ${BAD_FLAG}`;
    const r = await powercut(['gate', '--driver', bad, '--nodes', '3', '--nodes-cut', 'coordinated', '--live-cuts', '0', '--cases', CASES, '--seed', SEED, '--stop-on-first', '--artifacts', 'arts-bad']);
    expect(r.exitCode, r.stdout + r.stderr).toBe(1);
    // Each group is the flag's own cause, proven within the search's probes (a confirmation before
    // the fsync of /entries), or unexplained and grouped by what it failed after which cut; never another cause.
    const groups = [...r.stdout.matchAll(/^\d+\. (.*): \d+ failing case/gm)].map((m) => m[1]);
    expect(groups.length, r.stdout).toBeGreaterThan(0);
    // The flag's cause: the confirmation before the fsync of /entries; where no fsync of /entries follows
    // on that node before the run ends, the fix the proof can show is an fsync inserted after the write.
    for (const g of groups) expect(g).toMatch(/^(confirmation \("durable"\) before the fsync of \/entries completed|missing fsync of \/entries after its write|at-least-once.* after a coordinated crash state)$/);
    // One artifact per distinct failure (--stop-on-first: the first failing state in the order the
    // states were handed to the parallel slots, never the first to finish); its folder name is its case's.
    const artifacts = (await readdir(path.join(root, 'arts-bad'))).sort();
    expect(artifacts.length).toBeGreaterThan(0);
    const artifact = artifacts[0];
    const dir = path.join(root, 'arts-bad', artifact);
    const c = JSON.parse(await readFile(path.join(dir, 'case.json'), 'utf8'));
    expect(c.driver).toEqual({ command: bad, cwd: root, nodes: 3 });
    expect(c.nodes).toBe(3);
    expect(c.target).toBeUndefined();
    expect(c.state).toBeDefined();

    // The gate searched its cause, bounded by probes alone (named, or unexplained saying why): explain
    // prints a named one as stored; an unexplained one it searches again on the stored recording.
    const stored = await readFile(path.join(dir, 'cause.json'), 'utf8');
    const explain = await powercut(['explain', dir, '--max-seconds', '8']);
    expect([0, 1, 3], explain.stdout + explain.stderr).toContain(explain.exitCode);
    if (JSON.parse(stored).kind !== 'not-isolated') expect(explain.stdout).toContain('(the cause stored with the artifact, cause.json; --again searches anew)');
    else expect(explain.stdout).toContain('searching the cause on the stored recording');
    // --again records the case anew on three mounts (a sample: whatever it finds, it says so and leaves cause.json alone).
    const beforeAgain = await readFile(path.join(dir, 'cause.json'), 'utf8');
    const again = await powercut(['explain', dir, '--again', '--max-seconds', '4']);
    expect([0, 1, 3], again.stdout + again.stderr).toContain(again.exitCode);
    expect(again.stdout).toContain('recording the case again on 3 fresh mounts, a sample since its nodes interleave anew');
    expect(await readFile(path.join(dir, 'cause.json'), 'utf8')).toBe(beforeAgain);

    // One re-run (a sample, not asserted): the stored images are the exact part.
    const replay = await powercut(['replay', dir, '--reruns', '1']);
    expect(replay.exitCode, replay.stdout + replay.stderr).toBe(1);
    expect(replay.stdout).toContain(`target:   the driver '${bad}' (in ${root})`);
    expect(replay.stdout).toContain('REPRODUCED exactly from the stored images');
    expect(replay.stdout).toMatch(/(REPRODUCED by the full re-run in 1 of 1 re-run, same checks|NOT REPRODUCED in its 1 re-run) \(a sample: its 3 nodes run concurrently/);
  }, 2 * COMMAND_TIMEOUT_MS);

  it('--nodes is a usage error without --driver, or out of range', async () => {
    const noDriver = await powercut(['gate', '--nodes', '3']);
    expect(noDriver.exitCode).toBe(2);
    expect(noDriver.stderr).toContain('--nodes is for a cluster driver (--driver');
    const one = await powercut(['gate', '--driver', DRIVER, '--nodes', '1']);
    expect(one.exitCode).toBe(2);
    expect(one.stderr).toContain('--nodes must be an integer in 2..9');
    const builtIn = await powercut(['gate', '--network', 'host']);
    expect(builtIn.exitCode).toBe(2);
    expect(builtIn.stderr).toContain('--network is for a driver (--driver');
    const bogus = await powercut(['gate', '--driver', DRIVER, '--nodes', '3', '--network', 'none']);
    expect(bogus.exitCode).toBe(2);
    expect(bogus.stderr).toContain("--network must be isolated or host, got 'none'");
  });
});
