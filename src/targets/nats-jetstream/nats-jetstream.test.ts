// The nats-jetstream target on the real mount: its driver follows the protocol; uncut workloads and
// process crashes that keep every write (the power stays on) pass the oracle, so the driver's mapping
// of NATS is sound; exhaustive mode finds the first durability finding of nats-server 2.9.10 in its
// default configuration within a fixed small budget (docs/nats.md); and a server that will not start
// is the queue's liveness failure, naming the server's log, never a harness error.
import { execa } from 'execa';
import { rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { useTempDaemon } from '../../../properties/use-temp-daemon.js';
import { casesOf, caughtBug, crashInputArb, runCrashSuite, seedFromEnv } from '../../../properties/crash-property.js';
import { distPath } from '../../harness/dist-path.js';
import { runCase } from '../../harness/crash-run.js';
import type { Workload } from '../../harness/workload.js';
import { checkNatsEnvironment } from './env.js';
import { fitNatsWorkload, natsJetstream } from './index.js';
import { DEFAULT_NATS_SETTINGS, DRAIN_RESERVE_BYTES, natsSettings, PER_MESSAGE_OVERHEAD_BYTES, SMALL_BLOCKS_MAX_BYTES } from './settings.js';

const SEED = seedFromEnv().seed;
const cli = distPath('src/cli.js');
const artifactRoot = path.join(os.tmpdir(), `powercut-nats-test-artifacts-${process.pid}`);
afterAll(async () => {
  await rm(artifactRoot, { recursive: true, force: true });
});
const daemon = useTempDaemon('nats-jetstream');

/** Every step kind, producers and a consumer at once, a clean restart in the middle. */
const WORKLOAD: Workload = {
  steps: [
    { op: 'write', sizesBytes: [64, 3_000, 20_000], waitDurable: true },
    { op: 'read', maxEvents: 2 },
    { op: 'ack', count: 1, order: 'newest' },
    {
      op: 'concurrently',
      branches: [
        [{ op: 'write', sizesBytes: [900, 12_000], waitDurable: true }, { op: 'write', sizesBytes: [40], waitDurable: false }],
        [{ op: 'write', sizesBytes: [15_000], waitDurable: false }, { op: 'waitDurable' }],
        [{ op: 'read', maxEvents: 4, waitMs: 20 }, { op: 'ack', count: 2, order: 'every-other' }, { op: 'checkpoint' }],
      ],
    },
    { op: 'reopen' },
    { op: 'read', maxEvents: 8 },
    { op: 'ack', count: 3, order: 'oldest' },
    { op: 'write', sizesBytes: [30_000, 500], waitDurable: false },
    { op: 'read', maxEvents: 8, waitMs: 50 },
  ],
};
const SPREAD = { smallBlocks: true, pubAckDurable: false, retention: 'interest', extraConsumers: 2, extraConsumersAck: true, msgId: true, maxMsgSize: 8_192 };
/** 2.9.10 has no sync_interval (2.10.0 added it): the server refuses the configuration and exits. */
const WONT_START = { serverConfig: 'jetstream { sync_interval: always }' };
const ONE_WRITE: Workload = { steps: [{ op: 'write', sizesBytes: [64], waitDurable: true }] };

describe('nats-jetstream target', () => {
  it('checkEnvironment names the package and the command when nats-server is not on the PATH', () => {
    expect(() => checkNatsEnvironment()).not.toThrow();
    const path0 = process.env.PATH;
    process.env.PATH = '/nonexistent';
    try {
      expect(() => checkNatsEnvironment()).toThrow(/nats-server is missing \(package nats-server\): (sudo )?apt-get install -y nats-server/);
    } finally {
      process.env.PATH = path0;
    }
  });

  it('fitWorkload cuts events to the stream and keeps a small-blocks stream below its max_bytes', () => {
    const big: Workload = { steps: Array.from({ length: 10 }, () => ({ op: 'write' as const, sizesBytes: [20_000, 19_000], waitDurable: false })) };
    const sizes = (w: Workload) => w.steps.flatMap((s) => (s.op === 'write' ? s.sizesBytes : []));
    expect(Math.max(...sizes(fitNatsWorkload(big, { maxMsgSize: 1_024 })))).toBeLessThanOrEqual(1_024);
    const fitted = sizes(fitNatsWorkload(big, { smallBlocks: true }));
    expect(fitted.reduce((a, b) => a + b + PER_MESSAGE_OVERHEAD_BYTES, 0)).toBeLessThanOrEqual(SMALL_BLOCKS_MAX_BYTES - DRAIN_RESERVE_BYTES);
    expect(Math.min(...fitted)).toBeGreaterThan(4_000); // cut by one factor, not emptied
    expect(() => natsJetstream.checkSettings({ retention: 'workqueue', extraConsumers: 1 })).toThrow(/extraConsumers/);
    // The gate's steering draws one setting anew, which can pair them: such an input runs with no extra consumers.
    expect(() => fitNatsWorkload(big, { retention: 'workqueue', extraConsumers: 2 })).not.toThrow();
    expect(natsSettings({ retention: 'workqueue', extraConsumers: 2 }).extraConsumers).toBe(0);
    expect(() => natsJetstream.checkSettings({ blockSize: 1 })).toThrow(/unknown setting 'blockSize'/);
  });

  it('its driver passes powercut driver check', async () => {
    const r = await execa(process.execPath, [cli, 'driver', 'check', '--', process.execPath, distPath('src/targets/nats-jetstream/driver.js')], { reject: false, timeout: 60_000 });
    expect(r.exitCode, r.stdout + r.stderr).toBe(0);
    expect(r.stdout).toContain('follows the driver protocol');
  }, 60_000);

  it.each([
    ['the default settings', {}],
    ['small blocks, claims off, interest retention with two acking extra consumers, msg ids', SPREAD],
  ])('an uncut workload and its drain pass the oracle: %s', async (_name, settings) => {
    const fitted = fitNatsWorkload(WORKLOAD, settings);
    const r = await runCase(daemon(), natsJetstream, { target: 'nats-jetstream', workload: fitted, settings, policy: 'keep-all', seed: 1 }, { artifactRoot });
    expect(r.violations.map((v) => v.message)).toEqual([]);
    // The restarted server gave back every event left unacked, and at most the acked ones besides:
    // 2.9.10's clean stop can drop the consumer state's last write, and with it acks it confirmed
    // (docs/nats.md, "Acks confirmed before a clean stop"), which happened here under load.
    const work = r.runs[0].outcomes;
    const written = work.filter((o) => o.t === 'written').length;
    const acked = work.flatMap((o) => (o.t === 'acked' ? o.seqs : [])).length;
    expect(written).toBe(9);
    expect(acked).toBeGreaterThan(0);
    const drained = r.runs[r.runs.length - 1].outcomes.find((o) => o.t === 'drained');
    expect(drained?.t === 'drained' ? drained.count : -1).toBeGreaterThanOrEqual(written - acked);
    expect(drained?.t === 'drained' ? drained.count : Infinity).toBeLessThanOrEqual(written);
    if ('smallBlocks' in settings) expect(r.coverage.events['blocks created'], 'rollovers to new 32000-byte blocks').toBeGreaterThanOrEqual(2);
  }, 30_000);

  it('process crashes (SIGKILL anywhere, every write kept) pass the oracle: the driver maps NATS soundly', async () => {
    // keep-all: the server and driver die, nothing is lost on disk; what a process crash leaves.
    const arb = crashInputArb({ target: 'nats-jetstream', kind: 'general', maxSteps: 6, maxCutsPerInput: 2 })
      .map((input) => ({ ...input, cuts: input.cuts.map((c) => ({ ...c, policy: 'keep-all' as const })) }));
    // Unshrunk: shrinking a server's runs would outlast the test's bound, and the failure would be
    // reported as a timeout instead of the violation and its artifact.
    const report = await runCrashSuite(daemon(), arb, { numRuns: 5, seed: SEED, artifactRoot, endOnFailure: true });
    console.log(`[nats-jetstream, process crashes] ${report.summary}`);
    expect(report.error, 'harness error').toBeUndefined();
    expect(report.failed, report.summary).toBe(false);
    expect(report.coverage.cutsLanded, 'cuts that froze at their request').toBeGreaterThan(0);
  }, 90_000);

  it('exhaustive mode finds the first finding (a PubAck is not durable) in the default configuration within 3 recorded runs', async () => {
    const { serverConfig: _none, ...defaults } = DEFAULT_NATS_SETTINGS;
    const report = await runCrashSuite(daemon(), crashInputArb({ target: 'nats-jetstream', kind: 'exhaustive', settings: defaults }), {
      numRuns: 3, seed: SEED, endOnFailure: true, artifactRoot,
    });
    console.log(`[nats-jetstream, default] caught after ${report.casesToFirstFailure ?? report.cases} crash states, ` +
      `${((report.firstFailureMs ?? report.durationMs) / 1000).toFixed(1)} s\n${report.summary}`);
    expect(report.error, 'harness error').toBeUndefined();
    expect(caughtBug(report), report.summary).toBe(true);
    expect(report.failure!.violations.map((v) => v.check)).toContain('at-least-once');
  }, 60_000);

  it('a server that will not start is a liveness failure naming its log, not a harness error', async () => {
    const r = await runCase(daemon(), natsJetstream, { target: 'nats-jetstream', workload: ONE_WRITE, settings: WONT_START, policy: 'keep-all', seed: 1 }, { artifactRoot });
    const liveness = r.violations.filter((v) => v.check === 'liveness');
    expect(liveness.length, JSON.stringify(r.violations)).toBeGreaterThan(0);
    expect(liveness[0].message).toMatch(/nats-server \(pid \d+, port \d+\) exited with code \d+ before accepting a connection; its log ends:/);
    expect(liveness.map((v) => v.message).join('\n')).toMatch(/sync_interval/);
    const first = r.runs[0].outcomes.find((o) => o.t === 'error');
    expect(first).toMatchObject({ t: 'error', where: 'open' });
  }, 30_000);

  it('a random-mode input whose uncut run fails is one case without a cut, crashed by the input\'s own policy', async () => {
    // lose-unsynced here made the process-crash test above (keep-all) report finding 1's loss.
    const cases = await casesOf(daemon(), { target: 'nats-jetstream', workload: ONE_WRITE, settings: WONT_START, cuts: [{ fraction: 0.5, timing: 'after', policy: 'keep-all', seed: 7 }] });
    expect(cases).toHaveLength(1);
    expect(cases[0]).toMatchObject({ policy: 'keep-all', seed: 7 });
    expect(cases[0].cut).toBeUndefined();
  }, 30_000);
});
