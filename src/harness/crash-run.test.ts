// Crash orchestration on a real mount: a cut case leaves no driver behind, a hang is bounded and
// reported as a liveness violation, and crash points spread over a counted run.
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { useTempDaemon } from '../../properties/use-temp-daemon.js';
import { powercutQueue } from '../targets/powercut-queue/index.js';
import { countRequests, crashPointAt, runCase } from './crash-run.js';
import type { CrashCase } from './crash-case.js';
import type { Workload } from './workload.js';

const workload: Workload = {
  steps: [
    { op: 'write', sizesBytes: [100, 900, 30], waitDurable: true },
    { op: 'read', maxEvents: 2 },
    { op: 'ack', count: 1, order: 'newest' },
    { op: 'write', sizesBytes: [700], waitDurable: false },
    { op: 'reopen' },
    { op: 'read', maxEvents: 5 },
    { op: 'ack', count: 5, order: 'oldest' },
  ],
};
const settings = { pageCapacityBytes: 1_024, checkpointWrites: 2, checkpointAcks: 2 };

async function childPids(): Promise<number[]> {
  // Children of this process other than this very `ps`: the daemon, and any driver left behind.
  const r = await execa('ps', ['-o', 'pid=,comm=', '--ppid', String(process.pid)], { reject: false });
  return String(r.stdout).split('\n').map((l) => l.trim().split(/\s+/)).filter(([pid, comm]) => pid && comm !== 'ps').map(([pid]) => Number(pid));
}

const daemon = useTempDaemon('crash-run');

describe('crashPointAt', () => {
  it('spreads fractions over 1..count and keeps the target filters', () => {
    expect(crashPointAt(0, 10, 'before')).toEqual({ atOp: 1, timing: 'before' });
    expect(crashPointAt(0.55, 10, 'after')).toEqual({ atOp: 6, timing: 'after' });
    expect(crashPointAt(1, 10, 'after', { kind: 'write', path: '/page.*' })).toEqual({ atOp: 10, timing: 'after', kind: 'write', path: '/page.*' });
    expect(() => crashPointAt(2, 10, 'after')).toThrow('fraction must be in 0..1');
  });
});

describe('runCase on a real mount', () => {
  it('cuts at the chosen request, passes the correct queue, and leaves no driver running', async () => {
    const before = await childPids();
    const count = (await countRequests(daemon(), powercutQueue, { workload, settings })) ?? 0;
    expect(count).toBeGreaterThan(10);
    expect(await countRequests(daemon(), powercutQueue, { workload, settings }, { kind: 'fsync' })).toBeGreaterThan(0);
    const c: CrashCase = { workload, settings, cut: crashPointAt(0.5, count, 'after'), policy: 'lose-unsynced', seed: 1 };
    const result = await runCase(daemon(), powercutQueue, c, { writeArtifacts: false });
    expect(result.violations).toEqual([]);
    expect(result.cuts[0].frozenAt).toBe(c.cut!.atOp);
    expect(result.cuts[0].trace.find((e) => e.op === c.cut!.atOp)?.state).toBe('held');
    expect(result.runs.map((r) => [r.role, r.killed])).toEqual([['workload', true], ['drain', false]]);
    expect(await childPids()).toEqual(before);
  }, 60_000);

  it('bounds a run that never freezes nor exits, reports it as a hang, and kills the driver', async () => {
    const before = await childPids();
    // A driver that says hello, then waits forever without a request to the mount: it can neither
    // reach its crash point nor finish.
    const hello = JSON.stringify({ t: 'hello', protocol: 1, target: 'powercut-queue', replayBound: { ackBatchSize: 1, outOfOrderAcksDurable: false } });
    const stuck = { ...powercutQueue, driver: { file: '/bin/sh', args: ['-c', `echo '${hello}'; exec sleep 1000`] } };
    const runMs = 1_500;
    const c: CrashCase = { workload, settings, cut: { atOp: 1, timing: 'before' }, policy: 'keep-all', seed: 1 };
    const started = Date.now();
    const result = await runCase(daemon(), stuck, c, { writeArtifacts: false, timeouts: { runMs } });
    // Both runs (the workload and the final drain) waited out their bound, no longer.
    expect(Date.now() - started).toBeGreaterThanOrEqual(2 * runMs);
    expect(Date.now() - started).toBeLessThan(2 * runMs + 15_000);
    expect(result.cuts[0].frozenAt, 'the cut was never reached').toBeNull();
    expect(result.runs.map((r) => [r.role, r.hung])).toEqual([['workload', true], ['drain', true]]);
    expect(result.violations.map((v) => v.message).join('\n')).toContain('liveness: run 0 (workload) neither reached its crash point nor finished within its time bound');
    expect(await childPids()).toEqual(before);
  }, 60_000);
});
