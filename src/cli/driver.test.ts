// `powercut driver check` on a real mount: the built-in queue's driver follows the protocol; a
// deliberately broken driver gets every violation reported by run and line, and exit 1.
import { execa } from 'execa';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTempDaemon } from '../harness/daemon-process.js';
import { distPath, REPO_ROOT } from '../harness/dist-path.js';
import { checkDriverRun } from '../harness/protocol-check.js';
import { checkClusterDriver, checkDriver } from './driver.js';

const cli = distPath('src/cli.js');
/** Runs of the overlapping-writes driver: each must pass (the overlap is the driver's in every run). */
const OVERLAP_RUNS = 8;
let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'powercut-driver-check-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** A driver that gets the protocol wrong in the ways a new author might. */
const BROKEN_DRIVER = `
const fs = require('fs');
const spec = JSON.parse(fs.readFileSync(0, 'utf8').split('\\n')[0]);
const out = (o) => fs.writeSync(1, JSON.stringify(o) + '\\n');
if (!['workload', 'drain'].includes(spec.mode)) { process.exit(0); }
out({ t: 'open', durableSeq: 0, durableFirstUnackedSeq: 1 });
out({ t: 'write-intent', id: spec.idBase + 1, size: 10 });
out({ t: 'written', id: spec.idBase + 1 });
out({ t: 'written', id: spec.idBase + 2, seq: 5 });
out({ t: 'written', id: spec.idBase + 3, seq: 2 });
out({ t: 'flushed', seq: 5 });
out({ t: 'done' });
out({ t: 'closed' });
`;

/** The replicated queue's driver, but a restart asked for is never made (nor answered). */
const NO_RESTART_DRIVER = `
import { runNodeDriver } from ${JSON.stringify(distPath('src/targets/node-driver.js'))};
import { ReplicatedQueue } from ${JSON.stringify(distPath('src/targets/powercut-queue/replicated/replicated-queue.js'))};
import { queueContract } from ${JSON.stringify(distPath('src/targets/powercut-queue/contract.js'))};
runNodeDriver({
  target: 'no-restart',
  open: async (spec, emit) => Object.assign(await ReplicatedQueue.open(spec, emit), { restartNode: () => new Promise(() => {}) }),
  contract: queueContract,
  maxEventBytes: () => 1000,
});
`;

/** The replicated queue's driver, but it never makes a restart, and its run ends without waiting for one. */
const EARLY_END_DRIVER = `
import { runNodeDriver } from ${JSON.stringify(distPath('src/targets/node-driver.js'))};
import { ReplicatedQueue } from ${JSON.stringify(distPath('src/targets/powercut-queue/replicated/replicated-queue.js'))};
import { queueContract } from ${JSON.stringify(distPath('src/targets/powercut-queue/contract.js'))};
runNodeDriver({
  target: 'early-end',
  open: async (spec, emit) => {
    const q = Object.assign(await ReplicatedQueue.open(spec, emit), { restartNode: () => new Promise(() => {}) });
    // Its close waits for no cut node.
    Object.defineProperty(q, 'awaitingRestart', { get: () => [] });
    return q;
  },
  contract: queueContract,
  maxEventBytes: () => 1000,
});
`;

describe('powercut driver check', () => {
  it("passes the built-in queue's driver", async () => {
    const r = await execa(process.execPath, [cli, 'driver', 'check', '--', process.execPath, distPath('src/targets/powercut-queue/driver.js')], { reject: false, timeout: 120_000 });
    expect(r.exitCode, r.stdout + r.stderr).toBe(0);
    expect(r.stdout).toContain('follows the driver protocol (workload run, drain run, malformed spec, serving two specs, oracle on the uncut history)');
  }, 120_000);

  it('reports every violation of a broken driver by run and line, and exits 1', async () => {
    const driver = path.join(dir, 'broken-driver.cjs');
    await writeFile(driver, BROKEN_DRIVER);
    const r = await execa(process.execPath, [cli, 'driver', 'check', '--', process.execPath, driver], { reject: false, timeout: 120_000 });
    expect(r.exitCode, r.stdout + r.stderr).toBe(1);
    for (const line of [
      'workload run, line 1: the first line must be the hello line, got "open"',
      'workload run, line 3: "written" line without its "seq" field',
      'workload run, line 5: seq goes backwards: write returned seq 2 after seq 5 (one writer at a time)',
      'workload run, line 6: unknown kind "flushed"',
      'workload run, line 8: output after the run ended with its done line at line 7',
      'workload run: 8 lines printed but 0 markers in the request trace',
      'malformed spec: a malformed spec must exit 2 (usage), got exit 0',
    ]) expect(r.stdout).toContain(line);
    expect(r.stdout).toMatch(/\d+ protocol violations found$/m);
  }, 120_000);

  it(`passes a correct driver whose liveness writes overlap, ${OVERLAP_RUNS} runs of ${OVERLAP_RUNS}, and keeps its output`, async () => {
    const fixture = await startTempDaemon('driver-check-overlap');
    const driver = [process.execPath, path.join(REPO_ROOT, 'src/cli/overlapping-writes-driver.mjs')];
    let overlapped = 0;
    try {
      for (let i = 0; i < OVERLAP_RUNS; i++) {
        const results = await checkDriver(fixture.daemon, driver, {});
        expect(results.flatMap((r) => r.problems.map((p) => `${r.name}: ${p.message}`)), `run ${i + 1}`).toEqual([]);
        // The liveness writes did overlap: read as one writer at a time, the drain's seqs go backwards.
        const drain = results.find((r) => r.name === 'drain run')!;
        if (checkDriverRun({ stdout: drain.stdout!, exitCode: 0, sequential: true }).some((p) => p.message.includes('seq goes backwards'))) overlapped++;
      }
    } finally {
      await fixture.stop();
    }
    expect(overlapped).toBe(OVERLAP_RUNS);
    // The command line keeps each run's stdout and stderr, and says where.
    const out = path.join(dir, 'kept');
    const r = await execa(process.execPath, [cli, 'driver', 'check', '--out', out, '--', ...driver], { reject: false, timeout: 120_000 });
    expect(r.exitCode, r.stdout + r.stderr).toBe(0);
    expect(r.stdout).toContain(`the output of each run is kept in ${out}`);
    expect(await readFile(path.join(out, 'drain-run.stdout.txt'), 'utf8')).toContain('"t":"drained"');
    expect(await readFile(path.join(out, 'malformed-spec.stderr.txt'), 'utf8')).toContain('driver spec on stdin');
  }, 300_000);

  it('--nodes 3 passes the replicated queue\'s cluster driver: node lines, a cut of node 1 mid-run, its restart, a clean end; a majority cut, its restarts', async () => {
    const r = await execa(process.execPath, [cli, 'driver', 'check', '--nodes', '3', '--out', path.join(dir, 'cluster'), '--', process.execPath, distPath('src/targets/powercut-queue/replicated/driver.js')], { reject: false, timeout: 120_000 });
    expect(r.exitCode, r.stdout + r.stderr).toBe(0);
    expect(r.stdout).toContain("follows the driver protocol (cluster workload run, workload run with node 1's cut and restart, cluster drain run, oracle on the cut run and its drain, " +
      'workload run with a majority (nodes 1, 2) cut and restarted, drain after the majority cut, oracle on the majority cut run and its drain)');
    expect(r.stdout).toMatch(/^checked against: at-least-once; bounded replay \d+ .*\(the contract its hello line declared\)$/m);
    const majority = await readFile(path.join(dir, 'cluster', 'workload-run-with-a-majority-nodes-1-2-cut-and-restarted.stdout.txt'), 'utf8');
    for (const k of [1, 2]) expect(majority).toMatch(new RegExp(`\\{"t":"node","node":${k},"pgid":\\d+,"restarted":true\\}`));
    expect(await readFile(path.join(dir, 'cluster', 'workload-run-with-node-1-s-cut-and-restart.stdout.txt'), 'utf8')).toMatch(/\{"t":"node","node":1,"pgid":\d+,"restarted":true\}/);
  }, 120_000);

  describe('a broken cluster driver', () => {
    let cluster: Awaited<ReturnType<typeof startTempDaemon>>;
    beforeAll(async () => {
      cluster = await startTempDaemon('driver-check-cluster', 3);
    });
    afterAll(async () => {
      await cluster?.stop();
    });
    const messages = (results: Awaited<ReturnType<typeof checkClusterDriver>>) => results.flatMap((r) => r.problems.map((p) => `${r.name}${p.line > 0 ? `, line ${p.line}` : ''}: ${p.message}`));

    it('that never answers a restart fails, naming the restart it did not make within the bound', async () => {
      const driver = path.join(dir, 'no-restart-driver.mjs');
      await writeFile(driver, NO_RESTART_DRIVER);
      const results = await checkClusterDriver(cluster.daemon, [process.execPath, driver], {}, 1_500);
      const said = messages(results);
      expect(said.join('\n')).toMatch(/workload run with node 1's cut and restart: the cluster driver did not restart node 1 \(no \{"t":"node","node":1,\.\.\.,"restarted":true\} line\) within 1500 ms/);
      expect(results.map((r) => r.name), 'no drain after a failed cut run').toEqual(['cluster workload run', "workload run with node 1's cut and restart"]);
    }, 60_000);

    it('that ends its run before the restart it was asked for fails, naming the rule', async () => {
      const driver = path.join(dir, 'early-end-driver.mjs');
      await writeFile(driver, EARLY_END_DRIVER);
      const said = messages(await checkClusterDriver(cluster.daemon, [process.execPath, driver], {}, 5_000));
      expect(said.join('\n')).toContain('workload run with node 1\'s cut and restart: the cluster driver ended its run (its "done" line) while node 1 was cut and not yet restarted: a cluster driver must wait (bounded) for the harness\'s {"cmd":"restart","node":1}');
    }, 60_000);

    it('that is a single-disk driver fails: no node lines, and it cannot restart a node', async () => {
      const results = await checkClusterDriver(cluster.daemon, [process.execPath, distPath('src/targets/powercut-queue/driver.js')], {}, 1_500);
      const said = messages(results);
      for (let k = 0; k < 3; k++) expect(said).toContain(`cluster workload run: no node line for node ${k}: a cluster driver prints {"t":"node","node":${k},"pgid":P} for each node of the spec as it starts its server`);
      expect(said.join('\n')).toContain('node 1 made no request of its disk in the workload run');
    }, 60_000);
  });

  it('says what is missing on a usage error', async () => {
    const r = await execa(process.execPath, [cli, 'driver', 'check'], { reject: false });
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain('driver check needs the driver command after --');
  });
});
