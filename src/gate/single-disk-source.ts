// The cases of one disk, as a case source of the gate loop (case-source.ts): every scenario of the
// target first, each a unit, then the suites' inputs, one input a unit (which suite's turn it is:
// scheduler.ts), until the budget is spent: under a work budget its inputs, each judged in full;
// under a time budget judging's share, once no suite is owed a case. A new distinct failure is
// explained (the causes' share, or a work budget's probes), shrunk (the shrink's share, or a count
// of candidates) and kept with its artifact as it is found.
import { rm } from 'node:fs/promises';
import type fc from 'fast-check';
import { DEFAULT_STATE_CAPS } from '../../fusefs/crash-states.js';
import { replayOf, writeCause } from '../harness/artifacts.js';
import { explainCase } from '../harness/exhaustive/exhaustive-run.js';
import type { CaseResult } from '../harness/crash-case.js';
import { mergeTimeouts } from '../harness/driver-process.js';
import { DriverWorkers } from '../harness/driver-workers.js';
import { budgetRanOut, causeOfCase } from '../harness/cause/of-case.js';
import { within } from '../harness/time-share.js';
import { checkSwallowedError } from '../harness/cause/fault-counterfactual.js';
import { EXPLAIN_BOUNDS, type ExplainOptions } from '../harness/exhaustive/explain.js';
import { KnownCauses } from '../harness/cause/known-causes.js';
import { untimedBounds } from './budget.js';
import { failureSignature } from '../harness/failure-signature.js';
import { addCoverage } from '../harness/coverage.js';
import { startTempDaemon } from '../harness/daemon-process.js';
import { SCENARIOS } from '../../scenarios/index.js';
import { crashInputArb, mutantInputArb, runCrashSuite, type CrashInput } from '../../properties/crash-property.js';
import { interleaves, type TargetRef } from '../harness/target.js';
import { newRow, type GateRow } from '../report/gate-results.js';
import { allowedOverrunMs } from './budget.js';
import type { CaseSource, GateContext } from './case-source.js';
import { SCENARIO_FLOOR, type FloorRequirement } from './floor.js';
import { runScenario } from './scenario-run.js';
import { MIN_SLICE_MS, TimeShares, WorkTurns } from './scheduler.js';
import { Steering } from './steering.js';
import { DEFAULT_GATE_MODE, gateSuites, roundSeed, type GateSuite } from './suites.js';
import { MAX_SHRINK_INPUTS, MAX_SHRINK_MS, MIN_SHRINK_MS } from './phases.js';

/** A suite whose tool keeps failing is given up after this many harness errors. */
export const MAX_ERRORS_PER_SUITE = 3;

/** The least budget the gate takes: one slice per suite, so each can judge a case (the scenarios run besides). */
export function minimumBudgetMs(suiteCount: number): number {
  return suiteCount * MIN_SLICE_MS;
}

/** The scenarios written for this target. */
export function scenariosOf(targetName: string): typeof SCENARIOS {
  return SCENARIOS.filter((s) => (s.case.target ?? 'powercut-queue') === targetName);
}

/** The scenarios and suites of a single-disk target; `ref` is how its cases name the target. */
export function singleDiskSource(ctx: GateContext, ref: TargetRef): CaseSource {
  const { o, target, budget, phases, daemons, failures: distinct } = ctx;
  if (o.nodesCut !== undefined || o.liveCuts !== undefined) throw new Error(`nodesCut and liveCuts are for a cluster target; ${target.name} runs on one disk with these settings`);
  const mode = o.mode ?? DEFAULT_GATE_MODE;
  const scenarioRows: GateRow[] = [];
  /** What each row must reach (floor.ts), beside it. */
  const floors = new Map<GateRow, readonly FloorRequirement[]>();
  const groupBy = o.groupBy ?? 'cause';
  const keyOf = (r: CaseResult) => (groupBy === 'cause' ? causeOfCase(r).key : failureSignature(r));
  let inputs = 0;
  /** Inputs recorded with concurrent steps (their interleaving is a sample). */
  let interleaved = 0;
  const steering = o.steering ?? new Steering(roundSeed(o.seed, -1, -1));
  /** Counts a failing case under its cause (or signature); a new one is kept (with its artifact), a known one only counted. */
  const found = (row: GateRow, result: CaseResult, shrunk?: { failure: CaseResult; seed?: number; path?: string }): Promise<void> => within(phases.share('artifacts'), () => keep(row, result, shrunk));
  const keep = async (row: GateRow, result: CaseResult, shrunk?: { failure: CaseResult; seed?: number; path?: string }): Promise<void> => {
    const key = keyOf(result);
    const signature = failureSignature(result);
    const states = result.cause?.failingStates?.count ?? 1;
    if (distinct.countKnown(key, row, signature, states, result.cause?.route)) {
      if (result.artifactDir) await rm(result.artifactDir, { recursive: true, force: true });
      return;
    }
    const kept = shrunk?.failure ?? result;
    if (kept !== result && result.artifactDir) await rm(result.artifactDir, { recursive: true, force: true });
    // A random cut shrunk by its signature keeps the cause its first case was explained with.
    if (!kept.cause && result.cause) {
      kept.cause = result.cause;
      if (kept.artifactDir) await writeCause(kept.artifactDir, result.cause);
    }
    const cause = causeOfCase(kept);
    // Every artifact keeps the cause the summary prints (a fault's, read off its case, too): explain needs no re-recording.
    if (!kept.cause && kept.artifactDir) await writeCause(kept.artifactDir, cause);
    distinct.add({
      key, title: groupBy === 'cause' ? cause.title : signature, count: 1, states, signatures: [{ signature, count: 1 }], cause,
      foundBy: [row.name], checks: [...new Set(kept.violations.map((v) => v.check))], messages: kept.violations.map((v) => v.message),
      ...(kept.artifactDir ? replayOf(kept.artifactDir, kept.case) : {}),
      ...(shrunk?.seed !== undefined ? { seed: shrunk.seed, ...(shrunk.path !== undefined ? { path: shrunk.path } : {}) } : {}),
    }, groupBy === 'cause' ? `${cause.title} (${signature})` : signature);
  };
  /**
   * A random cut's cause (scenarios, random mode): its run recorded again and the state of its cut
   * explained, unless its signature's cause is known already. Written into its artifact.
   */
  /** Explains a failure found without its cause. False if the tool failed doing so: the row says why and the daemon is restarted. */
  const withCause = async (row: GateRow, result: CaseResult): Promise<boolean> => {
    if (groupBy !== 'cause' || result.cause || result.case.state) return true;
    const signature = failureSignature(result);
    const known = distinct.values().find((f) => f.signatures.some((x) => x.signature === signature));
    const fromCase = causeOfCase(result);
    if (!known && phases.leftMs('causes') === 0) {
      // No time left to explain it: unexplained, unless its cause is read off the case without a check (damage read at recovery, say).
      if (fromCase.kind !== 'swallowed-error' && !fromCase.key.startsWith('not-searched ')) return true;
      result.cause = budgetRanOut(result);
      if (result.artifactDir) await writeCause(result.artifactDir, result.cause);
      return true;
    }
    try {
      // A fault's swallowed error, read off the case, holds only if the case without the fault passes.
      const cause = known?.cause ?? await within(phases.share('causes'), async () => (fromCase.kind === 'swallowed-error'
        ? checkSwallowedError(daemons.current.daemon, target, result, fromCase)
        : (await explainCase(daemons.current.daemon, target, result, explain(false, 'causes')!, drivers)) ?? (phases.leftMs('causes') > 0 ? undefined : budgetRanOut(result))));
      if (!cause) return true;
      result.cause = cause;
      if (result.artifactDir) await writeCause(result.artifactDir, cause);
      return true;
    } catch (err) {
      row.errors.push(`explaining the failure failed (the failure stands, without its cause): ${err instanceof Error ? err.message : String(err)}`);
      ctx.log(`${row.name}: ERROR ${row.errors[row.errors.length - 1]}`);
      return false;
    }
  };
  /** Causes whose reach was checked in this run's detection (once each; the shrunk case is checked again). Every named cause is proven on its own run. */
  const reaching = new Set<string>();
  /** Causes proven so far: each later failing run tries them first (one proof each, before any search). */
  const known = new KnownCauses();
  const explain = (always: boolean, phase: 'causes' | 'shrink'): ExplainOptions | undefined => (groupBy !== 'cause' ? undefined : {
    // Under a work budget no search, proof or run of them is bounded by time: by probes and searches alone.
    ...(budget.untimed ? untimedBounds(EXPLAIN_BOUNDS) : EXPLAIN_BOUNDS),
    known,
    share: phases.share(phase),
    // A known cause proven again on a later run costs what judging that run cost: counted to judging (a shrink's, to shrinking).
    knownShare: phases.share(phase === 'causes' ? 'record+judge' : phase),
    checkReach: (c) => always || (c.kind !== 'not-isolated' && !distinct.has(c.key) && !reaching.has(c.key) && Boolean(reaching.add(c.key))),
  });
  /** Serving drivers kept alive for the whole run: a driver process start costs tens of milliseconds. */
  const drivers = new DriverWorkers(mergeTimeouts());

  /** One scenario, run in full whatever the budget (a scenario is one exact case). */
  const scenarioUnit = async (sc: (typeof SCENARIOS)[number]): Promise<void> => {
    ctx.doing(`scenario ${sc.name}`);
    const { row, result, error } = await runScenario(daemons.current.daemon, sc, o.variant, o.artifactRoot);
    scenarioRows.push(row);
    floors.set(row, SCENARIO_FLOOR);
    const explained = error || !result || result.violations.length === 0 || await withCause(row, result);
    if (row.failure && result) row.failure.key = keyOf(result);
    // No daemon restarted: the fixture is lost, and the loop asks for no more.
    if ((error || !explained) && !(await daemons.restart(row))) return;
    if (result && result.violations.length > 0 && !o.stopOnFirst) await found(row, result);
    const verdict = error ? `ERROR (the tool failed; daemon restarted) ${error.message.split('\n')[0]}` : row.violations > 0 ? `FAIL (${row.failure?.messages[0] ?? ''})` : 'pass';
    ctx.log(`scenario ${sc.name}: ${verdict} [${(row.durationMs / 1000).toFixed(1)} s]`);
  };

  const suites = gateSuites(target, mode, o.variant, o.settings, ref, o.policies).map((suite, index) => ({
    suite, index, arb: crashInputArb(suite.options), row: newRow(suite.name, 'suite'), done: false, chunks: 0,
    /** Judging time its inputs used (what its share under a time budget counts). */
    usedMs: 0,
  }));
  type Suite = (typeof suites)[number];
  if (o.cases && 'perSuite' in o.cases) {
    const names = suites.map((x) => x.suite.name);
    const unknown = Object.keys(o.cases.perSuite).filter((n) => !names.includes(n));
    if (unknown.length > 0) throw new Error(`--cases names ${unknown.map((n) => `'${n}'`).join(', ')}, not a suite of this gate (its suites: ${names.join(', ')})`);
  }
  for (const s of suites) floors.set(s.row, s.suite.floor);
  const exhaustiveOptions = (deadlineMs: number, suite: GateSuite, shrinking = false) => {
    // Explaining takes the causes phase's share (a shrink's explaining, the shrink phase's).
    const e = explain(shrinking, shrinking ? 'shrink' : 'causes');
    return {
      recoveryCuts: suite.recoveryCuts ?? false, deadlineMs, driverWorkers: drivers, artifacts: phases.share('artifacts'), ...(o.slots !== undefined ? { workers: o.slots } : {}), ...(o.policies ? { policies: o.policies } : {}),
      // A suite's sample is within --max-states too.
      ...(o.caps ? { caps: { ...DEFAULT_STATE_CAPS, ...o.caps } } : {}), ...(suite.sampleStates !== undefined ? { sampleStates: Math.min(suite.sampleStates, o.caps?.maxStates ?? Infinity) } : {}),
      ...(e ? { explain: e } : {}),
    };
  };
  // A suite that judged no case yet is owed one input even when judging's share is spent (the floor
  // asks for it): it may use the room kept for causes and artifacts, and start at most half the
  // allowed overrun past the budget's end (scenarios that ran long), so one input's worth still fits.
  const owed = (x: Suite) => !x.done && x.row.cases === 0 && budget.elapsedMs() < budget.totalMs + allowedOverrunMs(budget.totalMs) / 2;
  /** Judging's time left: the budget less what the causes of late failures and the artifacts keep (phases.ts). */
  const judgeLeft = () => phases.leftMs('record+judge');

  /** One input of a suite (a fast-check run of one input, run to completion), judged, its failures explained, shrunk and kept. */
  const inputUnit = async (s: Suite): Promise<void> => {
    ctx.doing(`suite ${s.suite.name}, input ${s.chunks + 1}`);
    const judgedBefore = phases.used('record+judge');
    const seed = roundSeed(o.seed, s.index, s.chunks++);
    const base = o.generation === 'plain' ? undefined : steering.pick(s.index);
    const arb = base ? mutantInputArb(base, s.suite.options) : s.arb;
    inputs++;
    // One input per fast-check run, run to its end: fast-check's own time limit would abandon a
    // running property, whose crash case would then race the next one on the shared daemon.
    const report = await runCrashSuite(daemons.current.daemon, arb, {
      numRuns: 1,
      seed,
      // No shrinking here: it has no bound. A new distinct failure is shrunk below, bounded.
      endOnFailure: true,
      allFailures: !o.stopOnFirst,
      artifactRoot: o.artifactRoot,
      exhaustive: exhaustiveOptions(phases.deadlineMs('record+judge'), s.suite),
    });
    for (const t of report.tried) {
      steering.observe(s.index, t.input, t.features);
      if (interleaves(target, t.input.workload)) interleaved++;
    }
    s.usedMs += phases.used('record+judge') - judgedBefore;
    s.row.cases += report.cases;
    for (const cap of report.capsHit) if (!s.row.capsHit.includes(cap)) s.row.capsHit.push(cap);
    addCoverage(s.row.coverage, report.coverage);
    s.row.durationMs += report.durationMs;
    if (report.error !== undefined) {
      // The tool failed, not the queue: say so, start a fresh daemon, and go on.
      s.row.errors.push(report.error + (report.errorArtifactDir ? `\nartifact: ${report.errorArtifactDir}` : ''));
      ctx.log(`suite ${s.suite.name}: ERROR (the tool failed, not the queue; daemon restarted): ${report.error.split('\n')[0]}`);
      // No daemon restarted: the fixture is lost, and the loop asks for no more.
      if (!(await daemons.restart(s.row))) return;
      if (s.row.errors.length >= MAX_ERRORS_PER_SUITE) s.done = true;
      return;
    }
    if (!report.failure) return;
    for (const f of [report.failure, ...report.otherFailures]) {
      if (!(await withCause(s.row, f)) && !(await daemons.restart(s.row))) return;
    }
    s.row.violations += 1 + report.otherFailures.length;
    s.row.failure ??= {
      key: keyOf(report.failure),
      messages: report.failure.violations.map((v) => v.message),
      seed: report.seed,
      ...(report.path !== undefined ? { path: report.path } : {}),
      ...(report.failure.artifactDir ? replayOf(report.failure.artifactDir, report.failure.case) : {}),
    };
    if (o.stopOnFirst) {
      s.done = true;
      ctx.log(`suite ${s.suite.name}: FAIL after ${s.row.cases} cases\n${report.summary}`);
      return;
    }
    for (const failure of [report.failure, ...report.otherFailures]) {
      const shrunk = await shrinkNew(s, arb, seed, failure);
      const row = s.row;
      if (!row.failure) throw new Error(`invariant: suite ${s.suite.name} has a failure once it found one`);
      // The shrunk case keeps the original's signature: the row's first failure points at the kept artifact.
      if (shrunk && row.failure.artifactDir === failure.artifactDir && shrunk.failure.artifactDir) {
        row.failure = { ...row.failure, messages: shrunk.failure.violations.map((v) => v.message), ...replayOf(shrunk.failure.artifactDir, shrunk.failure.case) };
      }
      await found(row, failure, shrunk);
    }
  };

  /**
   * A new distinct failure shrunk, keeping its cause (or signature), so its artifact is small: within
   * the shrink phase's share (at most MAX_SHRINK_MS), or under a work budget MAX_SHRINK_INPUTS
   * candidates; the smallest failing case so far is kept. Undefined when none smaller failed, or the failure is known.
   */
  const shrinkNew = async (s: Suite, arb: fc.Arbitrary<CrashInput>, seed: number, failure: CaseResult): Promise<{ failure: CaseResult; seed?: number; path?: string } | undefined> => {
    const key = keyOf(failure);
    const shrinkMs = budget.untimed ? Infinity : Math.min(MAX_SHRINK_MS, phases.leftMs('shrink'));
    if (distinct.has(key) || shrinkMs < MIN_SHRINK_MS) return undefined;
    ctx.doing(`shrinking ${key}`);
    const shrinkEndsMs = Date.now() + shrinkMs;
    const small = await within(phases.share('shrink'), () => runCrashSuite(daemons.current.daemon, arb, {
      // Exhaustive mode explains every case it keeps, so it can shrink by cause; a random cut by its signature.
      numRuns: 1, seed, ...(groupBy === 'cause' && mode === 'exhaustive' ? { causeKey: key } : { signature: failureSignature(failure) }), artifactRoot: o.artifactRoot,
      ...(budget.untimed ? { maxShrinkInputs: MAX_SHRINK_INPUTS } : { shrinkEndsMs }),
      exhaustive: exhaustiveOptions(shrinkEndsMs, s.suite, true),
    }));
    s.row.durationMs += small.durationMs;
    for (const f of small.otherFailures) if (f.artifactDir) await rm(f.artifactDir, { recursive: true, force: true });
    return small.failure ? { failure: small.failure, seed: small.seed, ...(small.path !== undefined ? { path: small.path } : {}) } : undefined;
  };

  const scenarios = scenariosOf(target.name);
  let scenariosRun = 0;
  const work = o.cases;
  const turns = work
    ? new WorkTurns(suites, o.seed, 'total' in work ? work : { inputsOf: (x) => work.perSuite[x.suite.name] ?? 0 }, (x) => x.done)
    : new TimeShares(suites, o.seed, { leftMs: judgeLeft, done: (x) => x.done, owed, usedMs: (x) => x.usedMs, weight: (x) => x.suite.weight ?? 1 });

  return {
    unit: mode === 'exhaustive' ? 'crash states' : 'power cuts',
    mode,
    startDaemon: () => startTempDaemon('gate'),
    beforeDaemonStop: () => drivers.stop(),
    // A suite is given up after MAX_ERRORS_PER_SUITE; the others go on.
    maxToolFailures: Infinity,
    // Every suite's row is listed, run or not: a run that stopped early is below its floor, saying which.
    rows: () => [...scenarioRows, ...suites.map((s) => s.row)],
    floorOf: (row) => floors.get(row) ?? [],
    next() {
      if (scenariosRun < scenarios.length) {
        const sc = scenarios[scenariosRun++];
        return () => scenarioUnit(sc);
      }
      const s = turns.next();
      return s && (() => inputUnit(s));
    },
    stop: async () => {},
    steered: () => ({ inputs: steering.steered, of: inputs }),
    clusterCoverage: () => undefined,
    work: () => ({
      inputs, interleaved,
      // Each suite's inputs: a work budget that gives each the same inputs again (steering draws per suite).
      repeat: work ?? { perSuite: Object.fromEntries(suites.map((x) => [x.suite.name, x.chunks])) },
      ...(work ? { of: 'total' in work ? work.total : Object.values(work.perSuite).reduce((a, b) => a + b, 0) } : {}),
    }),
    judgingShares: () => suites.map((x) => ({ name: x.suite.name, inputs: x.chunks, usedMs: x.usedMs })),
  };
}
