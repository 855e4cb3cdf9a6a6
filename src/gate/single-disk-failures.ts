// What the single-disk gate (single-disk-source.ts) does with a failing case: explains its cause
// when the case came without one (within the causes' share), then counts it under its key (a cause,
// or a signature) in the run's distinct failures, keeping a new one with its artifact (within the
// artifacts' share) and removing the artifact of a known one.
import { rm } from 'node:fs/promises';
import { replayOf, writeCause } from '../harness/artifacts.js';
import { explainCase } from '../harness/exhaustive/exhaustive-run.js';
import type { CaseResult } from '../harness/crash-case.js';
import type { DriverWorkers } from '../harness/driver-workers.js';
import { budgetRanOut, causeOfCase } from '../harness/cause/of-case.js';
import { within } from '../harness/time-share.js';
import { checkSwallowedError } from '../harness/cause/fault-counterfactual.js';
import { EXPLAIN_BOUNDS, type ExplainOptions } from '../harness/exhaustive/explain.js';
import { KnownCauses } from '../harness/cause/known-causes.js';
import { groupKeyOf } from '../harness/cause/cause.js';
import { failureSignature } from '../harness/failure-signature.js';
import type { GateRow } from '../report/gate-results.js';
import { untimedBounds } from './budget.js';
import type { GateContext } from './case-source.js';
import type { GroupBy } from './gate-report.js';

/** A new failure's smaller case, with the seed and path that generate it. */
export type ShrunkFailure = { failure: CaseResult; seed?: number; path?: string };

export class SingleDiskFailures {
  readonly groupBy: GroupBy;
  /** Causes whose reach was checked in this run's detection (once each; the shrunk case is checked again). Every named cause is proven on its own run. */
  private readonly reaching = new Set<string>();
  /** Causes proven so far: each later failing run tries them first (one proof each, before any search). */
  private readonly known = new KnownCauses();

  /** `drivers`: the serving drivers a cause search records on. */
  constructor(private readonly ctx: GateContext, private readonly drivers: DriverWorkers) {
    this.groupBy = ctx.o.groupBy ?? 'cause';
  }

  /** The key a failing case is counted under: its cause's, or its signature. */
  keyOf(r: CaseResult): string {
    return this.groupBy === 'cause' ? groupKeyOf(causeOfCase(r)) : failureSignature(r);
  }

  /** Counts a failing case under its cause (or signature); a new one is kept (with its artifact), a known one only counted. */
  found(row: GateRow, result: CaseResult, shrunk?: ShrunkFailure): Promise<void> {
    return within(this.ctx.phases.share('artifacts'), () => this.keep(row, result, shrunk));
  }

  private async keep(row: GateRow, result: CaseResult, shrunk?: ShrunkFailure): Promise<void> {
    const distinct = this.ctx.failures;
    const key = this.keyOf(result);
    const signature = failureSignature(result);
    const states = result.cause?.failingStates?.count ?? 1;
    if (distinct.countKnown(key, row, signature, states, result.cause?.route, result.cause)) {
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
    const byCause = this.groupBy === 'cause';
    distinct.add({
      key, title: byCause ? cause.title : signature, count: 1, states, signatures: [{ signature, count: 1 }], cause,
      foundBy: [row.name], checks: [...new Set(kept.violations.map((v) => v.check))], messages: kept.violations.map((v) => v.message),
      ...(kept.artifactDir ? replayOf(kept.artifactDir, kept.case) : {}),
      ...(shrunk?.seed !== undefined ? { seed: shrunk.seed, ...(shrunk.path !== undefined ? { path: shrunk.path } : {}) } : {}),
    }, byCause ? `${cause.title} (${signature})` : signature);
  }

  /**
   * Explains a failure found without its cause (a random cut's, in scenarios or random mode): its run
   * recorded again and the state of its cut explained, unless its signature's cause is known already;
   * written into its artifact. False if the tool failed doing so: the row says why, and the caller
   * restarts the daemon.
   */
  async withCause(row: GateRow, result: CaseResult): Promise<boolean> {
    if (this.groupBy !== 'cause' || result.cause || result.case.state) return true;
    const { phases, daemons, target } = this.ctx;
    const signature = failureSignature(result);
    const known = this.ctx.failures.values().find((f) => f.signatures.some((x) => x.signature === signature));
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
        : (await explainCase(daemons.current.daemon, target, result, this.explain(false, 'causes')!, this.drivers)) ?? (phases.leftMs('causes') > 0 ? undefined : budgetRanOut(result))));
      if (!cause) return true;
      result.cause = cause;
      if (result.artifactDir) await writeCause(result.artifactDir, cause);
      return true;
    } catch (err) {
      row.errors.push(`explaining the failure failed (the failure stands, without its cause): ${err instanceof Error ? err.message : String(err)}`);
      this.ctx.log(`${row.name}: ERROR ${row.errors[row.errors.length - 1]}`);
      return false;
    }
  }

  /**
   * How a failure is explained (undefined when failures are grouped by signature), within `phase`'s
   * share; `always`: its cause's reach is checked even when checked before (a shrunk case's).
   */
  explain(always: boolean, phase: 'causes' | 'shrink'): ExplainOptions | undefined {
    if (this.groupBy !== 'cause') return undefined;
    const { budget, phases, failures: distinct } = this.ctx;
    const reaching = this.reaching;
    return {
      // Under a work budget no search, proof or run of them is bounded by time: by probes and searches alone.
      ...(budget.untimed ? untimedBounds(EXPLAIN_BOUNDS) : EXPLAIN_BOUNDS),
      known: this.known,
      share: phases.share(phase),
      // A known cause proven again on a later run costs what judging that run cost: counted to judging
      // (a shrink's, to shrinking), and like an input the floor owes it may run into the allowed
      // overrun (three quarters of it: the artifacts still get written within it).
      knownShare: { ...phases.share(phase === 'causes' ? 'record+judge' : phase), deadlineMs: () => Date.now() + budget.overrunLeftMs(0.75) },
      checkReach: (c) => {
        const key = groupKeyOf(c);
        return always || (c.kind !== 'not-isolated' && !distinct.has(key) && !reaching.has(key) && Boolean(reaching.add(key)));
      },
    };
  }
}
