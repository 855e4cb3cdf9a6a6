// The driver process on an ordinary temp dir (no cut): model-based, random workloads deliver
// exactly what the reference model says, and an uncut history passes the oracle. Needs the
// compiled driver (npm test builds first).
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { sequentialStepArb, workloadArb } from '../../../properties/arbitraries.js';
import { distPath } from '../../harness/dist-path.js';
import type { DriverSpec } from '../../harness/driver-spec.js';
import { judge, type RunRecord } from '../../harness/oracle.js';
import { DRIVER_EXIT, parseOutcomes, type Outcome } from '../../harness/outcome.js';
import { expectUncut, parseWorkload, selectAcks, type Workload } from '../../harness/workload.js';

async function drive(spec: DriverSpec): Promise<{ outcomes: Outcome[]; exitCode: number | undefined; stderr: string }> {
  const r = await execa(process.execPath, [distPath('src/targets/powercut-queue/driver.js')], { input: JSON.stringify(spec), reject: false, stripFinalNewline: false, timeout: 20_000 });
  return { outcomes: parseOutcomes(String(r.stdout), 'driver stdout'), exitCode: r.exitCode, stderr: String(r.stderr) };
}
const record = (role: RunRecord['role'], r: { outcomes: Outcome[]; exitCode: number | undefined }): RunRecord =>
  ({ role, outcomes: r.outcomes, exitCode: r.exitCode ?? null, killed: false, hung: false, failedRequests: [] });

describe('workload model', () => {
  it('picks acks oldest first, newest first, or every other', () => {
    expect(selectAcks([1, 2, 3, 4, 5], 2, 'oldest')).toEqual([1, 2]);
    expect(selectAcks([1, 2, 3, 4, 5], 2, 'newest')).toEqual([5, 4]);
    expect(selectAcks([1, 2, 3, 4, 5], 9, 'every-other')).toEqual([1, 3, 5]);
  });
  it('rejects a bad workload naming the step and field', () => {
    expect(() => parseWorkload({ steps: [{ op: 'write', sizesBytes: [3], waitDurable: true }] }, 'case.json')).toThrow('case.json: steps[0].sizesBytes[0] = 3: must be an integer in 8..');
    expect(() => parseWorkload({ steps: [{ op: 'jump' }] }, 'w')).toThrow('w: steps[0].op = "jump"');
  });
});

describe('driver process', () => {
  it('reports a bad spec with exit code 2 and a message naming the field', async () => {
    const r = await execa(process.execPath, [distPath('src/targets/powercut-queue/driver.js')], { input: '{"mode":"fly"}', reject: false });
    expect(r.exitCode).toBe(DRIVER_EXIT.usage);
    expect(String(r.stderr)).toContain('mode must be "workload" or "drain"');
  });

  it('reports a queue error as an error line with exit code 3', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'powercut-driver-'));
    try {
      const r = await drive({ mode: 'workload', dir, settings: { pageCapacityBytes: 100 }, idBase: 0, workload: { steps: [{ op: 'write', sizesBytes: [90], waitDurable: false }] } });
      expect(r.exitCode).toBe(DRIVER_EXIT.queueError);
      expect(r.outcomes.at(-1)).toMatchObject({ t: 'error', where: 'steps[0] (write)' });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('uncut runs deliver what the reference model says, and pass the oracle', async () => {
    await fc.assert(
      fc.asyncProperty(workloadArb(10, sequentialStepArb), fc.constantFrom(1_024, 65_536), async (raw: Workload, pageCapacityBytes) => {
        const workload = { steps: raw.steps.map((s) => (s.op === 'write' ? { ...s, sizesBytes: s.sizesBytes.map((n) => Math.min(n, pageCapacityBytes - 40)) } : s)) };
        const dir = await mkdtemp(path.join(os.tmpdir(), 'powercut-driver-'));
        try {
          const settings = { pageCapacityBytes, checkpointWrites: 2, checkpointAcks: 2 };
          const run = await drive({ mode: 'workload', dir, settings, idBase: 0, workload });
          expect(run.exitCode, run.stderr).toBe(0);
          const expected = expectUncut(workload);
          const delivered = run.outcomes.filter((o) => o.t === 'delivered').map((o) => (o as { seq: number }).seq);
          expect(delivered).toEqual(expected.reads.flat());
          expect(run.outcomes.filter((o) => o.t === 'ack-intent').map((o) => (o as { seqs: number[] }).seqs)).toEqual(expected.acks.filter((a) => a.length > 0));
          const drain = await drive({ mode: 'drain', dir, settings, idBase: 1_000_000 });
          expect(judge({ target: 'powercut-queue', faultsInjected: false, runs: [record('workload', run), record('drain', drain)] })).toEqual([]);
        } finally {
          await rm(dir, { recursive: true, force: true });
        }
      }),
      { numRuns: 12 },
    );
  }, 120_000);
});
