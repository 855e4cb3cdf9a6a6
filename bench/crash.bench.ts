// npm run bench:crash — how fast crash cases are checked, each figure beside its baseline from the
// same run (the machine is noisy: compare the ratios):
// 1. the built-in queue, the same generated workloads three ways: exhaustive mode recovering its
//    states natively (the default), exhaustive mode recovering them on the mount (the way before),
//    and random cuts; two rounds, the order alternating; where a state's time goes;
// 2. a row per built-in target: crash states per minute, and for nats-jetstream the time to its
//    first finding;
// 3. time to catch: on the same workloads, how many crash cases and seconds each mode needs to
//    catch the known-bad variants whose bugs need one exact crash state, torn prefix, interleaving
//    or slow fsync;
// 4. steered against plain generation: two gate runs of the same seed and budget, and what each
//    reached (purges, rolls, the rarest features).
//   node dist/bench/crash.bench.js [--workloads N] [--seed N] [--gate-seconds N]
import fc from 'fast-check';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { DEFAULT_STATE_CAPS } from '../fusefs/crash-states.js';
import { runCase } from '../src/harness/crash-run.js';
import { startTempDaemon, type DaemonHandle } from '../src/harness/daemon-process.js';
import { mergeTimeouts } from '../src/harness/driver-process.js';
import { DriverWorkers } from '../src/harness/driver-workers.js';
import { runExhaustive, type ExhaustiveOptions, type StateTimings } from '../src/harness/exhaustive/exhaustive-run.js';
import { formatFeatures } from '../src/harness/coverage.js';
import { bothModesArb, casesOf, caughtBug, crashInputArb, runCrashSuite, type CrashInput } from '../properties/crash-property.js';
import { runGate } from '../src/gate/gate.js';
import { totals } from '../src/report/gate-results.js';
import { resolveTarget } from '../src/targets/index.js';
import { KNOWN_BAD } from '../src/targets/powercut-queue/known-bad.js';

const ROUNDS = 2;
/** Random mode draws this many cuts per workload (what the suites draw: 2 to 4). */
const RANDOM_CUTS_PER_WORKLOAD = 3;
/** Exhaustive mode's target for the built-in queue on this 2-core machine. */
const TARGET_STATES_PER_MIN = 20_000;
/** States per recorded run in section 1, the same for both ways of recovering (the mount is slow). */
const SECTION1_CAPS = { ...DEFAULT_STATE_CAPS, maxStates: 250 };
/** Time to catch: these variants, this many generated workloads each (the suites' budget). */
const CATCH_VARIANTS = ['purge-before-checkpoint', 'checkpoint-unlink-before-rename', 'fsync-claims-late-writes', 'ack-returns-early', 'sync-wait-gives-up'];
const CATCH_BUDGET_WORKLOADS = 10;
/** Section 2: workloads per other target. */
const TARGET_WORKLOADS = 4;

interface Options {
  workloads: number;
  seed: number;
  gateSeconds: number;
}

function options(): Options {
  const { values } = parseArgs({ options: { workloads: { type: 'string' }, seed: { type: 'string' }, 'gate-seconds': { type: 'string' } } });
  const int = (v: string | undefined, name: string, dflt: number) => {
    if (v === undefined) return dflt;
    if (!/^\d+$/.test(v) || Number(v) < 1) throw new Error(`--${name} must be an integer >= 1, got '${v}'`);
    return Number(v);
  };
  return { workloads: int(values.workloads, 'workloads', 6), seed: int(values.seed, 'seed', 20261201), gateSeconds: int(values['gate-seconds'], 'gate-seconds', 45) };
}

const perMin = (cases: number, ms: number) => (ms > 0 ? (cases / ms) * 60_000 : 0);
const pad = (s: string | number, n: number) => String(s).padStart(n);

/** Serving drivers kept alive for the whole benchmark, as the gate keeps them for its run. */
const drivers = new DriverWorkers(mergeTimeouts());

async function exhaustiveRate(d: DaemonHandle, inputs: readonly CrashInput[], o: Partial<ExhaustiveOptions>, t?: StateTimings): Promise<{ states: number; ms: number }> {
  const started = performance.now();
  let states = 0;
  for (const input of inputs) {
    const r = await runExhaustive(d, resolveTarget(input, input.settings), input, { writeArtifacts: false, driverWorkers: drivers, ...o });
    if (r.failure) throw new Error(`a correct configuration failed a crash state: ${r.failure.violations[0].message}`);
    states += r.coverage.states;
    if (t) for (const k of Object.keys(t) as (keyof StateTimings)[]) t[k] += r.timings[k];
  }
  return { states, ms: performance.now() - started };
}

async function main(): Promise<void> {
  const o = options();
  const fixture = await startTempDaemon('bench-crash');
  const d = fixture.daemon;
  try {
    const native = await builtInQueue(d, o);
    await targetRows(d, o, native);
    await timeToCatch(d, o.seed);
  } finally {
    await drivers.stop();
    await fixture.stop();
  }
  await steering(o);
}

/** Section 1: the built-in queue three ways, on the same workloads. */
async function builtInQueue(d: DaemonHandle, o: Options): Promise<number> {
  const inputs = fc.sample(bothModesArb({}, { min: RANDOM_CUTS_PER_WORKLOAD, max: RANDOM_CUTS_PER_WORKLOAD }), { numRuns: o.workloads, seed: o.seed });
  const total = { native: { cases: 0, ms: 0 }, mount: { cases: 0, ms: 0 }, random: { cases: 0, ms: 0 } };
  const t: StateTimings = { recordMs: 0, enumerateMs: 0, loadMs: 0, recoverMs: 0, judgeMs: 0, recoveries: 0, driverStarts: 0 };
  console.log(`powercut crash-check benchmark: ${o.workloads} generated workloads of the built-in queue (seed ${o.seed}), ${ROUNDS} rounds, ways alternating, after a round to warm up (not counted)`);
  // Warm-up: the JIT of every process, the serving drivers started; what follows is the steady state.
  await exhaustiveRate(d, inputs.map((i) => i.exhaustive), { caps: SECTION1_CAPS });
  const ways = ['native', 'mount', 'random'] as const;
  for (let round = 0; round < ROUNDS; round++) {
    for (const way of round % 2 === 0 ? ways : [...ways].reverse()) {
      if (way === 'random') {
        const started = performance.now();
        for (const input of inputs) {
          for (const c of await casesOf(d, input.random)) {
            const r = await runCase(d, resolveTarget(c), c, { writeArtifacts: false, captureImages: false });
            if (r.verdict === 'fail') throw new Error(`the correct queue failed a random cut: ${r.violations[0].message}`);
            total.random.cases++;
          }
        }
        total.random.ms += performance.now() - started;
      } else {
        const r = await exhaustiveRate(d, inputs.map((i) => i.exhaustive), { recoverOn: way, caps: SECTION1_CAPS }, way === 'native' ? t : undefined);
        total[way].cases += r.states;
        total[way].ms += r.ms;
      }
    }
  }
  const row = (name: string, m: { cases: number; ms: number }) => `${name.padEnd(44)}${pad(m.cases, 8)}${pad((m.ms / 1000).toFixed(1), 10)}${pad(perMin(m.cases, m.ms).toFixed(0), 12)}`;
  console.log(`\n${'way'.padEnd(44)}${pad('checked', 8)}${pad('seconds', 10)}${pad('per minute', 12)}`);
  console.log(row('exhaustive, recovered natively (crash states)', total.native));
  console.log(row('exhaustive, recovered on the mount (states)', total.mount));
  console.log(row('random cuts (power cuts)', total.random));
  const rate = perMin(total.native.cases, total.native.ms);
  console.log(`native / mount: ${(rate / perMin(total.mount.cases, total.mount.ms)).toFixed(1)}x; exhaustive (native) / random: ${(rate / perMin(total.random.cases, total.random.ms)).toFixed(1)}x`);
  const states = total.native.cases;
  const per = (ms: number) => `${(ms / states).toFixed(2)} ms`;
  console.log(`\nper crash state (exhaustive, native; ${states} states, ${t.recoveries} recoveries: states with equal images share one; slot times are summed over the slots, which work at once):`);
  console.log(`  record the workload once:    ${per(t.recordMs)}  (one driver run per workload, fsyncs held on its schedule)`);
  console.log(`  enumerate and hash states:   ${per(t.enumerateMs)}`);
  console.log(`  write the state's image:     ${per(t.loadMs)}  (the daemon, into tmpfs; prepared while the slot's driver recovers the previous state)`);
  console.log(`  recovery driver:             ${per(t.recoverMs)}  (open, recover, drain, liveness, close; ${t.driverStarts} process starts in all)`);
  console.log(`  oracle:                      ${per(t.judgeMs)}`);
  console.log(`target: >= ${TARGET_STATES_PER_MIN} crash states a minute for the built-in queue: ${rate >= TARGET_STATES_PER_MIN ? 'met' : 'NOT met'} (${rate.toFixed(0)})`);
  return rate;
}

/** Section 2: every built-in target's crash states per minute; nats-jetstream's time to its first finding. */
async function targetRows(d: DaemonHandle, o: Options, builtInRate: number): Promise<void> {
  const artifactRoot = await mkdtemp(path.join(os.tmpdir(), 'powercut-bench-targets-'));
  try {
    console.log(`\nper target, exhaustive mode (${TARGET_WORKLOADS} workloads each, seed ${o.seed}; each target's durable configuration):`);
    console.log(`${'target'.padEnd(20)}${pad('states', 8)}${pad('seconds', 10)}${pad('per minute', 12)}  first finding`);
    console.log(`${'powercut-queue'.padEnd(20)}${pad('-', 8)}${pad('-', 10)}${pad(builtInRate.toFixed(0), 12)}  none (correct queue; section 1)`);
    // A target with no durable configuration (nats-server 2.9.10) is measured up to its first finding.
    const rows: { target: string; settings: Record<string, unknown>; durable: boolean }[] = [
      { target: 'leveldb', settings: { syncWrites: true, syncAcks: true }, durable: true },
      { target: 'nats-jetstream', settings: {}, durable: false },
    ];
    for (const { target, settings, durable } of rows) {
      try {
        resolveTarget({ target }).checkEnvironment?.();
      } catch (err) {
        console.log(`${target.padEnd(20)}skipped: ${(err as Error).message}`);
        continue;
      }
      const arb = crashInputArb({ target, kind: 'exhaustive', settings });
      if (!durable) {
        const r = await runCrashSuite(d, arb, { numRuns: TARGET_WORKLOADS, seed: o.seed, endOnFailure: true, artifactRoot, exhaustive: { writeArtifacts: false, driverWorkers: drivers } });
        if (r.error) throw new Error(`nats-jetstream: the tool failed: ${r.error}`);
        const first = r.failure ? `${r.failure.violations[0].check} after ${r.casesToFirstFailure} states, ${((r.firstFailureMs ?? 0) / 1000).toFixed(1)} s` : 'none';
        console.log(`${target.padEnd(20)}${pad(r.cases, 8)}${pad((r.durationMs / 1000).toFixed(1), 10)}${pad(perMin(r.cases, r.durationMs).toFixed(0), 12)}  ${first}`);
        continue;
      }
      const inputs = fc.sample(arb, { numRuns: TARGET_WORKLOADS, seed: o.seed });
      const r = await exhaustiveRate(d, inputs, {});
      console.log(`${target.padEnd(20)}${pad(r.states, 8)}${pad((r.ms / 1000).toFixed(1), 10)}${pad(perMin(r.states, r.ms).toFixed(0), 12)}  none`);
    }
  } finally {
    await rm(artifactRoot, { recursive: true, force: true });
  }
}

/** Section 3: each variant on the same workloads in both modes: caught or not, crash cases and seconds until caught. */
async function timeToCatch(d: DaemonHandle, seed: number): Promise<void> {
  const artifactRoot = await mkdtemp(path.join(os.tmpdir(), 'powercut-bench-catch-'));
  let faster = 0;
  try {
    console.log(`\ntime to catch, ${CATCH_BUDGET_WORKLOADS} workloads per variant (seed ${seed}), the same workloads in both modes:`);
    console.log(`${'variant'.padEnd(34)}${pad('exhaustive', 28)}${pad('random cuts', 28)}`);
    for (const variant of CATCH_VARIANTS) {
      const arb = bothModesArb({ settings: KNOWN_BAD[variant].settings, variant });
      const cells: string[] = [];
      const seconds: number[] = [];
      for (const mode of ['exhaustive', 'random'] as const) {
        const r = await runCrashSuite(d, arb.map((p) => p[mode]), { numRuns: CATCH_BUDGET_WORKLOADS, seed, endOnFailure: true, artifactRoot, exhaustive: { writeArtifacts: false, driverWorkers: drivers } });
        if (r.error !== undefined) throw new Error(`${variant}, ${mode} mode: the tool failed: ${r.error}`);
        const cases = r.casesToFirstFailure ?? r.cases;
        const s = (r.firstFailureMs ?? r.durationMs) / 1000;
        seconds.push(caughtBug(r) ? s : Infinity);
        cells.push(`${caughtBug(r) ? 'caught' : 'missed'}: ${cases} cases, ${s.toFixed(1)} s`);
      }
      if (seconds[0] < seconds[1]) faster++;
      console.log(`${variant.padEnd(34)}${pad(cells[0], 28)}${pad(cells[1], 28)}`);
    }
  } finally {
    await rm(artifactRoot, { recursive: true, force: true });
  }
  console.log(`target: exhaustive mode catches every listed variant in fewer seconds than random cuts: ${faster === CATCH_VARIANTS.length ? 'met' : `NOT met (${faster} of ${CATCH_VARIANTS.length})`}`);
}

/** Section 4: the same gate run steered and plain, and what each reached. */
async function steering(o: Options): Promise<void> {
  console.log(`\nsteered against plain generation: two gate runs on the built-in queue, seed ${o.seed}, ${o.gateSeconds} s each, exhaustive mode:`);
  console.log(`${'generation'.padEnd(12)}${pad('inputs', 8)}${pad('states', 8)}${pad('purges/min', 12)}${pad('rolls/min', 11)}${pad('features', 10)}  rarest features (runs reaching each)`);
  for (const generation of ['steered', 'plain'] as const) {
    const artifactRoot = await mkdtemp(path.join(os.tmpdir(), 'powercut-bench-steering-'));
    try {
      const r = await runGate({ timeBudgetMs: o.gateSeconds * 1000, seed: o.seed, generation, artifactRoot, out: { write: () => true } });
      const t = totals(r.rows, r.durationMs);
      const minutes = r.durationMs / 60_000;
      const ev = (name: string) => ((t.coverage.events[name] ?? 0) / minutes).toFixed(0);
      const rarest = formatFeatures(t.coverage).split(', ').slice(0, 4).join(', ');
      console.log(`${generation.padEnd(12)}${pad(r.steered.of, 8)}${pad(t.cases, 8)}${pad(ev('purges'), 12)}${pad(ev('rolls'), 11)}${pad(Object.keys(t.coverage.features).length, 10)}  ${rarest}`);
    } finally {
      await rm(artifactRoot, { recursive: true, force: true });
    }
  }
}

main().catch((e: unknown) => {
  console.error(`bench:crash: ${e instanceof Error ? e.message : String(e)}`);
  process.exitCode = 1;
});
