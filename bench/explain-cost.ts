// bench:crash, section "the cost of explaining": for known-bad variants of the built-in queue, what
// finding the first failure costs (crash states judged, seconds: the baseline) beside what explaining
// it costs (the cause search's probes and seconds, the proof's and the reach's seconds), on the same
// workloads and in the same run.
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Cause } from '../src/harness/cause/cause.js';
import type { DaemonHandle } from '../src/harness/daemon-process.js';
import type { DriverWorkers } from '../src/harness/driver-workers.js';
import { EXPLAIN_BOUNDS } from '../src/harness/exhaustive/explain.js';
import { bothModesArb, runCrashSuite } from '../properties/crash-property.js';
import { KNOWN_BAD } from '../src/targets/powercut-queue/known-bad.js';

/** One variant per kind of cause the search names. */
const EXPLAIN_VARIANTS = ['no-dir-fsync-new-page', 'checkpoint-before-page-sync', 'no-crc-on-recovery', 'checkpoint-unlink-before-rename', 'purge-before-checkpoint', 'ack-returns-early'];
const WORKLOADS = 10;

const s = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
const pad = (v: string, n: number) => v.padStart(n);

export async function explainCost(d: DaemonHandle, seed: number, drivers: DriverWorkers): Promise<void> {
  const artifactRoot = await mkdtemp(path.join(os.tmpdir(), 'powercut-bench-explain-'));
  const ratios: number[] = [];
  try {
    console.log(`\nthe cost of explaining a failure beside the cost of finding it (exhaustive mode, seed ${seed}, first failure of each variant):`);
    console.log(`${'variant'.padEnd(32)}${pad('finding (baseline)', 24)}${pad('search', 20)}${pad('proof', 9)}${pad('reach', 9)}${pad('explaining / finding', 22)}  cause`);
    for (const variant of EXPLAIN_VARIANTS) {
      const arb = bothModesArb({ settings: KNOWN_BAD[variant].settings, variant }).map((p) => p.exhaustive);
      const found = await runCrashSuite(d, arb, { numRuns: WORKLOADS, seed, endOnFailure: true, artifactRoot, exhaustive: { writeArtifacts: false, driverWorkers: drivers } });
      const explained = await runCrashSuite(d, arb, { numRuns: WORKLOADS, seed, endOnFailure: true, artifactRoot, exhaustive: { writeArtifacts: false, driverWorkers: drivers, explain: { ...EXPLAIN_BOUNDS, checkReach: () => true } } });
      if (found.error !== undefined || explained.error !== undefined) throw new Error(`${variant}: the tool failed: ${found.error ?? explained.error}`);
      const cause: Cause | undefined = explained.failure?.cause;
      if (!found.failure || !cause) {
        console.log(`${variant.padEnd(32)}  not caught within ${WORKLOADS} workloads`);
        continue;
      }
      const findMs = found.firstFailureMs ?? found.durationMs;
      const explainMs = cause.search.ms + (cause.proof?.ms ?? 0) + (cause.reach?.ms ?? 0);
      ratios.push(explainMs / findMs);
      console.log(`${variant.padEnd(32)}${pad(`${found.casesToFirstFailure ?? found.cases} states, ${s(findMs)}`, 24)}${pad(`${cause.search.probes} probes, ${s(cause.search.ms)}`, 20)}` +
        `${pad(cause.proof ? s(cause.proof.ms) : '-', 9)}${pad(cause.reach ? s(cause.reach.ms) : '-', 9)}${pad(`${(explainMs / findMs).toFixed(2)}x`, 22)}  ${cause.key}`);
    }
  } finally {
    await rm(artifactRoot, { recursive: true, force: true });
  }
  if (ratios.length) console.log(`explaining costs ${Math.min(...ratios).toFixed(2)}x to ${Math.max(...ratios).toFixed(2)}x of finding (median ${ratios.sort((a, b) => a - b)[ratios.length >> 1].toFixed(2)}x); the search's bound is ${EXPLAIN_BOUNDS.bound.maxProbes} probes, ${EXPLAIN_BOUNDS.bound.maxMs / 1000} s`);
}
