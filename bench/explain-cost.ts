// bench:crash, section "explaining": for every known-bad variant of the built-in queue that
// exhaustive mode catches, what finding its first failing run costs (crash states judged, seconds:
// the baseline) beside what explaining that run costs (cause searches, proofs, reach checks), on the
// same workloads and in the same run; and how right the causes are: the named causes that the
// variant declares, of all named (precision), and the failing states left unexplained.
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Cause } from '../src/harness/cause/cause.js';
import type { DaemonHandle } from '../src/harness/daemon-process.js';
import type { DriverWorkers } from '../src/harness/driver-workers.js';
import { EXPLAIN_BOUNDS } from '../src/harness/exhaustive/explain.js';
import { isExpectedCause } from '../src/harness/target.js';
import { bothModesArb, runCrashSuite } from '../properties/crash-property.js';
import { variantsProvenBy } from '../properties/variant-proofs.js';
import { KNOWN_BAD } from '../src/targets/powercut-queue/known-bad.js';

const WORKLOADS = 10;

const s = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
const pad = (v: string, n: number) => v.padStart(n);

export async function explainCost(d: DaemonHandle, seed: number, drivers: DriverWorkers): Promise<void> {
  const artifactRoot = await mkdtemp(path.join(os.tmpdir(), 'powercut-bench-explain-'));
  const ratios: number[] = [];
  let named = 0;
  let declared = 0;
  /** Failing states and those left unexplained, apart for variants whose bug no step added to the recording fixes. */
  const share = { fixable: { failing: 0, unexplained: 0 }, design: { failing: 0, unexplained: 0 } };
  try {
    console.log(`\nexplaining a failing run beside finding it (exhaustive mode, seed ${seed}, the first failing run of each variant; every failing state of it explained):`);
    console.log(`${'variant'.padEnd(32)}${pad('finding (baseline)', 24)}${pad('explaining', 12)}${pad('ratio', 8)}${pad('named', 7)}${pad('declared', 10)}${pad('unexplained', 13)}  causes`);
    for (const variant of variantsProvenBy('powercut-queue', 'exhaustive')) {
      const v = KNOWN_BAD[variant];
      const arb = bothModesArb({ settings: v.settings, variant }).map((p) => p.exhaustive);
      const found = await runCrashSuite(d, arb, { numRuns: WORKLOADS, seed, endOnFailure: true, artifactRoot, exhaustive: { writeArtifacts: false, driverWorkers: drivers } });
      const explained = await runCrashSuite(d, arb, { numRuns: WORKLOADS, seed, endOnFailure: true, allFailures: true, artifactRoot, exhaustive: { writeArtifacts: false, driverWorkers: drivers, explain: { ...EXPLAIN_BOUNDS, checkReach: () => true } } });
      if (found.error !== undefined || explained.error !== undefined) throw new Error(`${variant}: the tool failed: ${found.error ?? explained.error}`);
      const causes: Cause[] = (explained.failure ? [explained.failure, ...explained.otherFailures] : []).map((f) => f.cause).filter((c): c is Cause => c !== undefined);
      if (!found.failure || causes.length === 0) {
        console.log(`${variant.padEnd(32)}  not caught within ${WORKLOADS} workloads`);
        continue;
      }
      const findMs = found.firstFailureMs ?? found.durationMs;
      const explainMs = causes.reduce((n, c) => n + c.search.ms + (c.proof?.ms ?? 0) + (c.reach?.ms ?? 0), 0);
      ratios.push(explainMs / findMs);
      const proven = causes.filter((c) => c.kind !== 'not-isolated');
      const right = proven.filter((c) => v.causes.some((e) => isExpectedCause(c, e)));
      const states = causes.reduce((n, c) => n + (c.failingStates?.count ?? 0), 0);
      const left = causes.filter((c) => c.kind === 'not-isolated').reduce((n, c) => n + (c.failingStates?.count ?? 0), 0);
      named += proven.length;
      declared += right.length;
      const bucket = v.fixInRecording === false ? share.design : share.fixable;
      bucket.failing += states;
      bucket.unexplained += left;
      console.log(`${variant.padEnd(32)}${pad(`${found.casesToFirstFailure ?? found.cases} states, ${s(findMs)}`, 24)}${pad(s(explainMs), 12)}${pad(`${(explainMs / findMs).toFixed(2)}x`, 8)}` +
        `${pad(String(proven.length), 7)}${pad(String(right.length), 10)}${pad(`${left} of ${states}`, 13)}  ${proven.map((c) => c.key).join('; ') || '-'}`);
    }
  } finally {
    await rm(artifactRoot, { recursive: true, force: true });
  }
  if (ratios.length) console.log(`explaining costs ${Math.min(...ratios).toFixed(2)}x to ${Math.max(...ratios).toFixed(2)}x of finding (median ${ratios.sort((a, b) => a - b)[ratios.length >> 1].toFixed(2)}x); each search's bound is ${EXPLAIN_BOUNDS.bound.maxProbes} probes, ${EXPLAIN_BOUNDS.bound.maxMs / 1000} s`);
  const percent = (b: { failing: number; unexplained: number }) => `${b.unexplained} of ${b.failing} failing states (${b.failing ? ((100 * b.unexplained) / b.failing).toFixed(0) : '-'} %)`;
  console.log(`cause precision: ${declared} of ${named} named causes are declared by their variant (${named ? (declared / named).toFixed(2) : '-'})`);
  console.log(`unexplained: ${percent(share.fixable)} of the variants a step added to the recording fixes; ${percent(share.design)} of those whose bug is the order of the program's steps or a design (fixInRecording: false)`);
}
