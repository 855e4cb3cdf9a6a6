// bench:crash, section "explaining": for every known-bad variant of the built-in queue that
// exhaustive mode catches, what finding its first failing run costs (crash states judged, seconds:
// the baseline) beside what explaining that run costs (cause searches, proofs, reach checks), on the
// same workloads and in the same run; and how right the causes are: the named causes that the
// variant declares, of all named (precision), and the failing states left unexplained.
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Cause, CauseRoute } from '../src/harness/cause/cause.js';
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
  const firstRatios: number[] = [];
  let named = 0;
  let declared = 0;
  const routes: Record<CauseRoute, number> = { known: 0, candidate: 0, reduction: 0 };
  /** Failing states and those left unexplained, apart for variants whose bug no step added to the recording fixes. */
  const share = { fixable: { failing: 0, unexplained: 0 }, design: { failing: 0, unexplained: 0 } };
  try {
    console.log(`\nexplaining a failing run beside finding it (exhaustive mode, seed ${seed}, the first failing run of each variant; every failing state of it explained).`);
    console.log('finding (the baseline) is what the gate pays to find the run\'s failures: the inputs up to it recorded and every state judged; "first" is the time to its first failing state alone.');
    console.log(`${'variant'.padEnd(32)}${pad('finding (baseline)', 22)}${pad('first', 8)}${pad('explaining', 12)}${pad('ratio', 8)}${pad('search', 18)}${pad('proofs', 18)}${pad('reach', 8)}${pad('named', 7)}${pad('declared', 10)}${pad('unexplained', 13)}  causes (route)`);
    for (const variant of variantsProvenBy('powercut-queue', 'exhaustive')) {
      const v = KNOWN_BAD[variant];
      const arb = bothModesArb({ settings: v.settings, variant }).map((p) => p.exhaustive);
      const exhaustive = { writeArtifacts: false, driverWorkers: drivers };
      const found = await runCrashSuite(d, arb, { numRuns: WORKLOADS, seed, endOnFailure: true, artifactRoot, exhaustive });
      // What the gate pays to find the run's failures: every state of each input judged (it keeps exploring after a failure).
      const judgedWhole = await runCrashSuite(d, arb, { numRuns: WORKLOADS, seed, endOnFailure: true, allFailures: true, artifactRoot, exhaustive });
      const explained = await runCrashSuite(d, arb, { numRuns: WORKLOADS, seed, endOnFailure: true, allFailures: true, artifactRoot, exhaustive: { ...exhaustive, explain: { ...EXPLAIN_BOUNDS, checkReach: () => true } } });
      const error = found.error ?? judgedWhole.error ?? explained.error;
      if (error !== undefined) throw new Error(`${variant}: the tool failed: ${error}`);
      const causes: Cause[] = (explained.failure ? [explained.failure, ...explained.otherFailures] : []).map((f) => f.cause).filter((c): c is Cause => c !== undefined);
      if (!found.failure || causes.length === 0) {
        console.log(`${variant.padEnd(32)}  not caught within ${WORKLOADS} workloads`);
        continue;
      }
      const firstMs = found.firstFailureMs ?? found.durationMs;
      const findMs = judgedWhole.durationMs;
      const searchMs = causes.reduce((n, c) => n + c.search.ms, 0);
      const probes = causes.reduce((n, c) => n + c.search.probes, 0);
      const proofMs = causes.reduce((n, c) => n + (c.proof?.ms ?? 0), 0);
      const proofStates = causes.reduce((n, c) => n + (c.proof?.states ?? 0), 0);
      const reachMs = causes.reduce((n, c) => n + (c.reach?.ms ?? 0), 0);
      const explainMs = searchMs + proofMs + reachMs;
      ratios.push(explainMs / findMs);
      firstRatios.push(explainMs / firstMs);
      const proven = causes.filter((c) => c.kind !== 'not-isolated');
      const right = proven.filter((c) => v.causes.some((e) => isExpectedCause(c, e)));
      const states = causes.reduce((n, c) => n + (c.failingStates?.count ?? 0), 0);
      const left = causes.filter((c) => c.kind === 'not-isolated').reduce((n, c) => n + (c.failingStates?.count ?? 0), 0);
      named += proven.length;
      declared += right.length;
      for (const c of proven) routes[c.route ?? 'reduction']++;
      const bucket = v.fixInRecording === false ? share.design : share.fixable;
      bucket.failing += states;
      bucket.unexplained += left;
      console.log(`${variant.padEnd(32)}${pad(`${judgedWhole.cases} states, ${s(findMs)}`, 22)}${pad(s(firstMs), 8)}${pad(s(explainMs), 12)}${pad(`${(explainMs / findMs).toFixed(2)}x`, 8)}` +
        `${pad(`${probes} probes ${s(searchMs)}`, 18)}${pad(`${proofStates} states ${s(proofMs)}`, 18)}${pad(s(reachMs), 8)}` +
        `${pad(String(proven.length), 7)}${pad(String(right.length), 10)}${pad(`${left} of ${states}`, 13)}  ${proven.map((c) => `${c.key} (${c.route ?? 'reduction'})`).join('; ') || '-'}`);
    }
  } finally {
    await rm(artifactRoot, { recursive: true, force: true });
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
  if (ratios.length) {
    console.log(`explaining costs ${Math.min(...ratios).toFixed(2)}x to ${Math.max(...ratios).toFixed(2)}x of finding (median ${median(ratios).toFixed(2)}x; median ${median(firstRatios).toFixed(2)}x of the time to the first failing state alone); each search's bound is ${EXPLAIN_BOUNDS.bound.maxProbes} probes`);
  }
  console.log(`causes by route: ${routes.known} known (a cause proven earlier, proven again on this run), ${routes.candidate} candidates (read off the recording, proven directly), ${routes.reduction} by reduction (the probing search)`);
  const percent = (b: { failing: number; unexplained: number }) => `${b.unexplained} of ${b.failing} failing states (${b.failing ? ((100 * b.unexplained) / b.failing).toFixed(0) : '-'} %)`;
  console.log(`cause precision: ${declared} of ${named} named causes are declared by their variant (${named ? (declared / named).toFixed(2) : '-'})`);
  console.log(`unexplained: ${percent(share.fixable)} of the variants a step added to the recording fixes; ${percent(share.design)} of those whose bug is the order of the program's steps or a design (fixInRecording: false)`);
}
