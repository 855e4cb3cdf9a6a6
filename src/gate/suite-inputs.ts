// The suites of a single-disk gate (single-disk-source.ts) and their inputs: which suite's turn it is
// (scheduler.ts: under a work budget its inputs; under a time budget judging's share, once no suite
// is owed a case), and one input of a suite run, judged in full, its failures explained, a new one
// shrunk (the shrink's share, or a count of candidates) and kept (single-disk-failures.ts).
import { rm } from 'node:fs/promises';
import type fc from 'fast-check';
import { DEFAULT_STATE_CAPS } from '../../fusefs/crash-states.js';
import { replayOf } from '../harness/artifacts.js';
import type { CaseResult } from '../harness/crash-case.js';
import type { DriverWorkers } from '../harness/driver-workers.js';
import { within } from '../harness/time-share.js';
import { failureSignature } from '../harness/failure-signature.js';
import { addCoverage } from '../harness/coverage.js';
import { crashInputArb, mutantInputArb, runCrashSuite, type CrashInput, type SuiteReport } from '../../properties/crash-property.js';
import { interleaves, type TargetRef } from '../harness/target.js';
import { newRow, type GateRow } from '../report/gate-results.js';
import type { WorkBudget } from './budget.js';
import type { GateContext } from './case-source.js';
import { MAX_SHRINK_INPUTS, MAX_SHRINK_MS, MIN_SHRINK_MS } from './phases.js';
import { TimeShares, WorkTurns } from './scheduler.js';
import type { ShrunkFailure, SingleDiskFailures } from './single-disk-failures.js';
import { Steering } from './steering.js';
import { gateSuites, roundSeed, type GateMode, type GateSuite } from './suites.js';

/** A suite whose tool keeps failing is given up after this many harness errors. */
export const MAX_ERRORS_PER_SUITE = 3;

/** A suite of the gate and how far it got. */
export interface SuiteTurn {
  readonly suite: GateSuite;
  /** Its place among the suites (its seeds and its steering are drawn per suite). */
  readonly index: number;
  readonly arb: fc.Arbitrary<CrashInput>;
  readonly row: GateRow;
  /** Given up (its first failure under --stop-on-first, or MAX_ERRORS_PER_SUITE failures of the tool). */
  done: boolean;
  /** Inputs started. */
  chunks: number;
  /** Judging time its inputs used (what its share under a time budget counts). */
  usedMs: number;
}

export class SuiteInputs {
  readonly suites: SuiteTurn[];
  /** Inputs started, over all suites. */
  private inputs = 0;
  /** Inputs recorded with concurrent steps (their interleaving is a sample). */
  private interleaved = 0;
  private readonly steering: Steering;
  private readonly turns: WorkTurns<SuiteTurn> | TimeShares<SuiteTurn>;

  /** `ref`: how the cases name the target; `drivers`: the serving drivers kept alive for the whole run. */
  constructor(private readonly ctx: GateContext, ref: TargetRef, private readonly mode: GateMode, private readonly failures: SingleDiskFailures, private readonly drivers: DriverWorkers) {
    const { o, target, budget, phases } = ctx;
    this.steering = o.steering ?? new Steering(roundSeed(o.seed, -1, -1));
    this.suites = gateSuites(target, mode, o.variant, o.settings, ref, o.policies).map((suite, index) => ({
      suite, index, arb: crashInputArb(suite.options), row: newRow(suite.name, 'suite'), done: false, chunks: 0, usedMs: 0,
    }));
    const work = o.cases;
    if (work && 'perSuite' in work) {
      const names = this.suites.map((x) => x.suite.name);
      const unknown = Object.keys(work.perSuite).filter((n) => !names.includes(n));
      if (unknown.length > 0) throw new Error(`--cases names ${unknown.map((n) => `'${n}'`).join(', ')}, not a suite of this gate (its suites: ${names.join(', ')})`);
    }
    // A suite that judged no case yet is owed one input even when judging's share is spent (the floor
    // asks for it): it may use the room kept for causes and artifacts, and start at most half the
    // allowed overrun past the budget's end (scenarios that ran long), so one input's worth still fits.
    const owed = (x: SuiteTurn) => !x.done && x.row.cases === 0 && budget.overrunLeftMs(0.5) > 0;
    this.turns = work
      ? new WorkTurns(this.suites, o.seed, 'total' in work ? work : { inputsOf: (x) => work.perSuite[x.suite.name] ?? 0 }, (x) => x.done)
      // Judging's time left: the budget less what the causes of late failures and the artifacts keep (phases.ts).
      : new TimeShares(this.suites, o.seed, { leftMs: () => phases.leftMs('record+judge'), done: (x) => x.done, owed, usedMs: (x) => x.usedMs, weight: (x) => x.suite.weight ?? 1 });
  }

  /** The suite whose turn it is, or undefined when none has one for the budget left. */
  next(): SuiteTurn | undefined {
    return this.turns.next();
  }

  steered(): { inputs: number; of: number } {
    return { inputs: this.steering.steered, of: this.inputs };
  }

  work(): { inputs: number; interleaved: number; repeat: WorkBudget; of?: number } {
    const work = this.ctx.o.cases;
    return {
      inputs: this.inputs, interleaved: this.interleaved,
      // Each suite's inputs: a work budget that gives each the same inputs again (steering draws per suite).
      repeat: work ?? { perSuite: Object.fromEntries(this.suites.map((x) => [x.suite.name, x.chunks])) },
      ...(work ? { of: 'total' in work ? work.total : Object.values(work.perSuite).reduce((a, b) => a + b, 0) } : {}),
    };
  }

  judgingShares(): { name: string; inputs: number; usedMs: number }[] {
    return this.suites.map((x) => ({ name: x.suite.name, inputs: x.chunks, usedMs: x.usedMs }));
  }

  /** One input of a suite (a fast-check run of one input, run to completion), judged, its failures explained, shrunk and kept. */
  async run(s: SuiteTurn): Promise<void> {
    const { ctx } = this;
    const { o, phases } = ctx;
    ctx.doing(`suite ${s.suite.name}, input ${s.chunks + 1}`);
    const judgedBefore = phases.used('record+judge');
    const seed = roundSeed(o.seed, s.index, s.chunks++);
    const base = o.generation === 'plain' ? undefined : this.steering.pick(s.index);
    const arb = base ? mutantInputArb(base, s.suite.options) : s.arb;
    this.inputs++;
    // One input per fast-check run, run to its end: fast-check's own time limit would abandon a
    // running property, whose crash case would then race the next one on the shared daemon.
    const report = await runCrashSuite(ctx.daemons.current.daemon, arb, {
      numRuns: 1,
      seed,
      // No shrinking here: it has no bound. A new distinct failure is shrunk below, bounded.
      endOnFailure: true,
      allFailures: !o.stopOnFirst,
      artifactRoot: o.artifactRoot,
      exhaustive: this.exhaustiveOptions(phases.deadlineMs('record+judge'), s.suite),
    });
    this.tally(s, report, judgedBefore);
    if (report.error !== undefined) {
      // The tool failed, not the queue: say so, start a fresh daemon, and go on.
      s.row.errors.push(report.error + (report.errorArtifactDir ? `\nartifact: ${report.errorArtifactDir}` : ''));
      ctx.log(`suite ${s.suite.name}: ERROR (the tool failed, not the queue; daemon restarted): ${report.error.split('\n')[0]}`);
      // No daemon restarted: the fixture is lost, and the loop asks for no more.
      if (!(await ctx.daemons.restart(s.row))) return;
      if (s.row.errors.length >= MAX_ERRORS_PER_SUITE) s.done = true;
      return;
    }
    if (report.failure) await this.failed(s, report, report.failure, arb, seed);
  }

  /** An input's figures, on its suite's row and in the steering. */
  private tally(s: SuiteTurn, report: SuiteReport, judgedBefore: number): void {
    for (const t of report.tried) {
      this.steering.observe(s.index, t.input, t.features);
      if (interleaves(this.ctx.target, t.input.workload)) this.interleaved++;
    }
    s.usedMs += this.ctx.phases.used('record+judge') - judgedBefore;
    s.row.cases += report.cases;
    for (const cap of report.capsHit) if (!s.row.capsHit.includes(cap)) s.row.capsHit.push(cap);
    addCoverage(s.row.coverage, report.coverage);
    s.row.durationMs += report.durationMs;
  }

  /**
   * An input's failures (`first`, then the report's others; `arb` and `seed` generated it): explained,
   * counted on its row, then each shrunk and kept, unless the suite stops at its first.
   */
  private async failed(s: SuiteTurn, report: SuiteReport, first: CaseResult, arb: fc.Arbitrary<CrashInput>, seed: number): Promise<void> {
    const { ctx, failures } = this;
    for (const f of [first, ...report.otherFailures]) {
      if (!(await failures.withCause(s.row, f)) && !(await ctx.daemons.restart(s.row))) return;
    }
    s.row.violations += 1 + report.otherFailures.length;
    s.row.failure ??= {
      key: failures.keyOf(first),
      messages: first.violations.map((v) => v.message),
      seed: report.seed,
      ...(report.path !== undefined ? { path: report.path } : {}),
      ...(first.artifactDir ? replayOf(first.artifactDir, first.case) : {}),
    };
    if (ctx.o.stopOnFirst) {
      s.done = true;
      ctx.log(`suite ${s.suite.name}: FAIL after ${s.row.cases} cases\n${report.summary}`);
      return;
    }
    for (const failure of [first, ...report.otherFailures]) {
      const shrunk = await this.shrinkNew(s, arb, seed, failure);
      const row = s.row;
      if (!row.failure) throw new Error(`invariant: suite ${s.suite.name} has a failure once it found one`);
      // The shrunk case keeps the original's signature: the row's first failure points at the kept artifact.
      if (shrunk && row.failure.artifactDir === failure.artifactDir && shrunk.failure.artifactDir) {
        row.failure = { ...row.failure, messages: shrunk.failure.violations.map((v) => v.message), ...replayOf(shrunk.failure.artifactDir, shrunk.failure.case) };
      }
      await failures.found(row, failure, shrunk);
    }
  }

  /**
   * A new distinct failure shrunk, keeping its cause (or signature), so its artifact is small: within
   * the shrink phase's share (at most MAX_SHRINK_MS), or under a work budget MAX_SHRINK_INPUTS
   * candidates; the smallest failing case so far is kept. Undefined when none smaller failed, or the failure is known.
   */
  private async shrinkNew(s: SuiteTurn, arb: fc.Arbitrary<CrashInput>, seed: number, failure: CaseResult): Promise<ShrunkFailure | undefined> {
    const { ctx } = this;
    const { o, budget, phases } = ctx;
    const key = this.failures.keyOf(failure);
    const shrinkMs = budget.untimed ? Infinity : Math.min(MAX_SHRINK_MS, phases.leftMs('shrink'));
    if (ctx.failures.has(key) || shrinkMs < MIN_SHRINK_MS) return undefined;
    ctx.doing(`shrinking ${key}`);
    const shrinkEndsMs = Date.now() + shrinkMs;
    const small = await within(phases.share('shrink'), () => runCrashSuite(ctx.daemons.current.daemon, arb, {
      // Exhaustive mode explains every case it keeps, so it can shrink by cause; a random cut by its signature.
      numRuns: 1, seed, ...(this.failures.groupBy === 'cause' && this.mode === 'exhaustive' ? { causeKey: key } : { signature: failureSignature(failure) }), artifactRoot: o.artifactRoot,
      ...(budget.untimed ? { maxShrinkInputs: MAX_SHRINK_INPUTS } : { shrinkEndsMs }),
      exhaustive: this.exhaustiveOptions(shrinkEndsMs, s.suite, true),
    }));
    s.row.durationMs += small.durationMs;
    for (const f of small.otherFailures) if (f.artifactDir) await rm(f.artifactDir, { recursive: true, force: true });
    return small.failure ? { failure: small.failure, seed: small.seed, ...(small.path !== undefined ? { path: small.path } : {}) } : undefined;
  }

  /** How a suite's input is judged, to `deadlineMs`; `shrinking`: a shrink's candidate. */
  private exhaustiveOptions(deadlineMs: number, suite: GateSuite, shrinking = false) {
    const { o, phases } = this.ctx;
    // Explaining takes the causes phase's share (a shrink's explaining, the shrink phase's).
    const e = this.failures.explain(shrinking, shrinking ? 'shrink' : 'causes');
    return {
      recoveryCuts: suite.recoveryCuts ?? false, deadlineMs, driverWorkers: this.drivers, artifacts: phases.share('artifacts'), ...(o.slots !== undefined ? { workers: o.slots } : {}), ...(o.policies ? { policies: o.policies } : {}),
      // A suite's sample is within --max-states too.
      ...(o.caps ? { caps: { ...DEFAULT_STATE_CAPS, ...o.caps } } : {}), ...(suite.sampleStates !== undefined ? { sampleStates: Math.min(suite.sampleStates, o.caps?.maxStates ?? Infinity) } : {}),
      ...(e ? { explain: e } : {}),
    };
  }
}
