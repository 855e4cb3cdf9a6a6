// npm run bench:crash — exhaustive mode against random-cut mode on the same generated workloads, in
// one run: crash states checked per minute beside power cuts per minute, and where each state's time
// goes (recording the workload, enumerating and building states, loading them into the mount, the
// recovery driver, the oracle). Two rounds, the modes alternating; compare the ratio, the machine is noisy.
// Then time to catch: on the same budget of workloads, how many crash cases each mode needs to catch
// the known-bad variants whose bugs need one exact crash state, torn prefix or interleaving.
//   node dist/bench/crash.bench.js [--workloads N] [--seed N]
import fc from 'fast-check';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { runCase } from '../src/harness/crash-run.js';
import { startTempDaemon, type DaemonHandle } from '../src/harness/daemon-process.js';
import { runExhaustive, type StateTimings } from '../src/harness/exhaustive/exhaustive-run.js';
import { bothModesArb, casesOf, caughtBug, runCrashSuite } from '../properties/crash-property.js';
import { powercutQueue } from '../src/targets/powercut-queue/index.js';
import { KNOWN_BAD } from '../src/targets/powercut-queue/known-bad.js';

const ROUNDS = 2;
/** Random mode draws this many cuts per workload (what the suites draw: 2 to 4). */
const RANDOM_CUTS_PER_WORKLOAD = 3;
/** Exhaustive mode's target on this 2-core machine. */
const TARGET_STATES_PER_MIN = 1000;
/** Time to catch: these variants, this many generated workloads each (the suites' budget). */
const CATCH_VARIANTS = ['purge-before-checkpoint', 'checkpoint-unlink-before-rename', 'fsync-claims-late-writes'];
const CATCH_BUDGET_WORKLOADS = 10;

function options(): { workloads: number; seed: number } {
  const { values } = parseArgs({ options: { workloads: { type: 'string' }, seed: { type: 'string' } } });
  const int = (v: string | undefined, name: string, dflt: number) => {
    if (v === undefined) return dflt;
    if (!/^\d+$/.test(v) || Number(v) < 1) throw new Error(`--${name} must be an integer >= 1, got '${v}'`);
    return Number(v);
  };
  return { workloads: int(values.workloads, 'workloads', 6), seed: int(values.seed, 'seed', 20261201) };
}

async function main(): Promise<void> {
  const o = options();
  const inputs = fc.sample(bothModesArb({}, { min: RANDOM_CUTS_PER_WORKLOAD, max: RANDOM_CUTS_PER_WORKLOAD }), { numRuns: o.workloads, seed: o.seed });
  const fixture = await startTempDaemon('bench-crash');
  const d = fixture.daemon;
  const total = { exhaustive: { cases: 0, ms: 0 }, random: { cases: 0, ms: 0 } };
  const t: StateTimings = { recordMs: 0, enumerateMs: 0, loadMs: 0, recoverMs: 0, judgeMs: 0, recoveries: 0, driverStarts: 0 };
  try {
    console.log(`powercut crash-check benchmark: ${o.workloads} generated workloads (seed ${o.seed}), ${ROUNDS} rounds, modes alternating`);
    for (let round = 0; round < ROUNDS; round++) {
      for (const mode of round % 2 === 0 ? (['exhaustive', 'random'] as const) : (['random', 'exhaustive'] as const)) {
        const started = performance.now();
        for (const input of inputs) {
          if (mode === 'exhaustive') {
            const r = await runExhaustive(d, powercutQueue, input.exhaustive, { writeArtifacts: false });
            if (r.failure) throw new Error(`the correct queue failed a crash state: ${r.failure.violations[0].message}`);
            total.exhaustive.cases += r.coverage.states;
            for (const k of Object.keys(t) as (keyof StateTimings)[]) t[k] += r.timings[k];
          } else {
            for (const c of await casesOf(d, input.random)) {
              const r = await runCase(d, powercutQueue, c, { writeArtifacts: false, captureImages: false });
              if (r.verdict === 'fail') throw new Error(`the correct queue failed a random cut: ${r.violations[0].message}`);
              total.random.cases++;
            }
          }
        }
        total[mode].ms += performance.now() - started;
      }
    }
    await timeToCatch(d, o.seed);
  } finally {
    await fixture.stop();
  }
  const perMin = (m: { cases: number; ms: number }) => (m.cases / m.ms) * 60_000;
  const ex = perMin(total.exhaustive);
  const rnd = perMin(total.random);
  const row = (name: string, cases: number, ms: number, rate: number) =>
    `${name.padEnd(34)}${String(cases).padStart(8)}${(ms / 1000).toFixed(1).padStart(10)}${rate.toFixed(0).padStart(12)}`;
  console.log(`\n${'mode'.padEnd(34)}${'checked'.padStart(8)}${'seconds'.padStart(10)}${'per minute'.padStart(12)}`);
  console.log(row('exhaustive (crash states)', total.exhaustive.cases, total.exhaustive.ms, ex));
  console.log(row('random cuts (power cuts)', total.random.cases, total.random.ms, rnd));
  console.log(`exhaustive / random: ${(ex / rnd).toFixed(1)}x more crash cases checked per minute`);
  const states = total.exhaustive.cases;
  const per = (ms: number) => `${(ms / states).toFixed(2)} ms`;
  console.log(`\nper crash state (exhaustive, ${states} states, ${t.recoveries} recoveries: states with equal images share one):`);
  console.log(`  record the workload once:    ${per(t.recordMs)}  (one driver run per workload, amortized)`);
  console.log(`  enumerate and hash states:   ${per(t.enumerateMs)}`);
  console.log(`  build and load the state:    ${per(t.loadMs)}  (model replay + swap behind the mount; no remount)`);
  console.log(`  recovery driver:             ${per(t.recoverMs)}  (open, recover, drain, liveness, close; ${t.driverStarts} process starts in all)`);
  console.log(`  oracle:                      ${per(t.judgeMs)}`);
  const other = total.exhaustive.ms - (t.recordMs + t.enumerateMs + t.loadMs + t.recoverMs + t.judgeMs);
  console.log(`  other (reset, artifacts):    ${per(other)}`);
  console.log(`\ntarget: >= ${TARGET_STATES_PER_MIN} crash states a minute: ${ex >= TARGET_STATES_PER_MIN ? 'met' : 'NOT met'} (${ex.toFixed(0)})`);
  console.log(JSON.stringify({ exhaustivePerMin: Math.round(ex), randomPerMin: Math.round(rnd), states, recoveries: t.recoveries, msPerState: { record: t.recordMs / states, enumerate: t.enumerateMs / states, load: t.loadMs / states, recover: t.recoverMs / states, judge: t.judgeMs / states } }));
}

/** Each variant on the same workloads in both modes: caught or not, crash cases and seconds until caught. */
async function timeToCatch(d: DaemonHandle, seed: number): Promise<void> {
  const artifactRoot = await mkdtemp(path.join(os.tmpdir(), 'powercut-bench-catch-'));
  try {
    console.log(`\ntime to catch, ${CATCH_BUDGET_WORKLOADS} workloads per variant (seed ${seed}), the same workloads in both modes:`);
    console.log(`${'variant'.padEnd(34)}${'exhaustive'.padStart(26)}${'random cuts'.padStart(26)}`);
    for (const variant of CATCH_VARIANTS) {
      const arb = bothModesArb({ settings: KNOWN_BAD[variant].settings, variant });
      const cells = [];
      for (const mode of ['exhaustive', 'random'] as const) {
        const r = await runCrashSuite(d, arb.map((p) => p[mode]), { numRuns: CATCH_BUDGET_WORKLOADS, seed, endOnFailure: true, artifactRoot });
        if (r.error !== undefined) throw new Error(`${variant}, ${mode} mode: the tool failed: ${r.error}`);
        const cases = r.casesToFirstFailure ?? r.cases;
        const s = ((r.firstFailureMs ?? r.durationMs) / 1000).toFixed(1);
        cells.push(caughtBug(r) ? `caught: ${cases} cases, ${s} s` : `missed: ${cases} cases, ${s} s`);
      }
      console.log(`${variant.padEnd(34)}${cells[0].padStart(26)}${cells[1].padStart(26)}`);
    }
  } finally {
    await rm(artifactRoot, { recursive: true, force: true });
  }
}

main().catch((e: unknown) => {
  console.error(`bench:crash: ${e instanceof Error ? e.message : String(e)}`);
  process.exitCode = 1;
});
