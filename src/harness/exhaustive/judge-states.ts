// Recovering and judging crash states (exhaustive mode and the cause search's proofs): one
// recovery per distinct image, in the pool's slots, each state judged against the confirmations
// the recorded run made before its cut.
import type { CrashStateInfo, Hypothesis, Mark, StateCaps, StatePolicy, StatesAnswer } from '../../../fusefs/crash-states.js';
import { describeState, keepsNoUnsynced } from '../../../fusefs/model/policies/index.js';
import type { TraceEntry } from '../../../fusefs/protocol.js';
import type { Coverage } from '../coverage.js';
import { failedRequests } from '../crash-run.js';
import type { CrashCase } from '../crash-case.js';
import type { DaemonHandle } from '../daemon-process.js';
import type { DriverRun, DriverTimeouts } from '../driver-process.js';
import { HarnessError } from '../harness-error.js';
import { judge, violatedChecks, type RunRecord, type Violation } from '../oracle.js';
import type { Target } from '../target.js';
import type { Prepared, RecoverOn, Recovery, RecoveryPool } from './recovery-pool.js';

/** How long past its deadline a run goes on finishing its lose-unsynced states (a slow recovery, with a cut in it, can take a second a state). */
export const MAX_OVERRUN_MS = 2_000;

/** The workload's confirmations as of a power cut after request `afterOp`: every line marked by then. */
export function truncateAtCut(recorded: Recorded, afterOp: number): RunRecord {
  const lastLine = recorded.marks.filter((m) => m.afterOp <= afterOp).reduce((n, m) => Math.max(n, m.n), 0);
  const withheld = recorded.withheld;
  return {
    role: recorded.before?.length ? 'drain' : 'workload',
    outcomes: recorded.run.record.outcomes.slice(0, lastLine).filter((_, i) => !withheld || (withheld.get(i + 1) ?? 0) <= afterOp),
    exitCode: null,
    killed: true,
    hung: false,
    failedRequests: failedRequests(recorded.trace.filter((e) => e.op <= afterOp)),
  };
}

/** A recorded run: the workload's driver run, its request trace and where each line was marked. */
export interface Recorded {
  run: DriverRun;
  trace: TraceEntry[];
  marks: Mark[];
  /**
   * A hypothesis about the program (a fix's proof): confirmation lines it would print only once this
   * request completed, by line number. Withheld from every state cut before it; the other lines and
   * the requests they follow stay where the recording has them.
   */
  withheld?: ReadonlyMap<number, number>;
  /** The runs before this one in every history it is judged in (a recorded recovery: the workload's lines as of its state's cut). */
  before?: RunRecord[];
}

/** The interval of a listing holding a cut after request `afterOp`: the first whose lose-unsynced state is at or after it. */
export function intervalHolding(answer: StatesAnswer, afterOp: number): number | undefined {
  const lose = answer.states.filter((s) => keepsNoUnsynced(s.id.policy)).sort((a, b) => a.id.afterOp - b.id.afterOp);
  return lose.find((s) => s.id.afterOp >= afterOp)?.interval;
}

/** The runs a state of `recorded` cut after `afterOp` is judged on: the runs before it, its lines as of the cut, then its recovery's. */
export function historyOf(recorded: Recorded, afterOp: number, recoveryRuns: readonly RunRecord[]): RunRecord[] {
  return [...(recorded.before ?? []), truncateAtCut(recorded, afterOp), ...recoveryRuns];
}

/** The checks a set of violations names, for comparing verdicts. */

/** One hash group's outcome: its recovery and each of its states' violations. */
export interface GroupResult {
  recovery: Recovery;
  verdicts: { state: CrashStateInfo; runs: RunRecord[]; violations: Violation[] }[];
}

/** The options of a run that judging its states reads (ExhaustiveOptions has them and more). */
export interface JudgeSettings {
  policies: StatePolicy[];
  caps: StateCaps;
  /** Cut each state's recovery once more, at a request drawn from the state, and recover again. */
  recoveryCuts: boolean;
  timeouts: Partial<DriverTimeouts>;
  /** Called with each judged state and its violations. */
  onState?: (state: CrashStateInfo, violations: Violation[]) => void;
  /**
   * Recover every natively checked state on the mount too and require the same checks to fail
   * both ways (a self-check of the fast path; a disagreement is a harness error naming the state).
   */
  verifyOnMount: boolean;
}

export interface StateTimings {
  recordMs: number;
  enumerateMs: number;
  /** Putting each state in place: its image written for a native recovery, or loaded behind the mount. */
  loadMs: number;
  recoverMs: number;
  judgeMs: number;
  /** Distinct images recovered (states with equal images share one recovery). */
  recoveries: number;
  driverStarts: number;
}

/** What recovering and judging states needs of the run around them. */
export interface JudgeContext {
  daemon: DaemonHandle;
  target: Target;
  o: JudgeSettings;
  pool: RecoveryPool;
  timings: StateTimings;
  coverage: Coverage;
  caseOf: (state: Pick<CrashStateInfo, 'id' | 'hash'>, on?: RecoverOn) => CrashCase;
  /** The state a harness error names (the first slot's to fail). */
  onHarnessError: (state: CrashStateInfo) => void;
}

/**
 * Recovers every state of `answer` (one recovery per distinct image, in the pool's slots) and
 * judges each against the confirmations `recorded` made before its cut; stops at the first failing
 * group unless every failure is wanted, and past the deadline once the lose-unsynced states and each
 * policy's first state are done.
 * With `hypothesis`, the states and images are those of the run with it applied (a cause's proof).
 */
export async function recoverAndJudge(ctx: JudgeContext, answer: StatesAnswer, recorded: Recorded, run: { allFailures: boolean; deadlineMs: number; hypothesis?: Hypothesis }):
  Promise<{ groups: CrashStateInfo[][]; results: (GroupResult | undefined)[]; outOfTime: boolean; firstFailing: number }> {
  const { target, o, pool, timings, coverage } = ctx;
  const caseOf = ctx.caseOf;
  const extras = run.hypothesis ? { hypothesis: run.hypothesis } : {};
  // One recovery per distinct image; every state with that image is judged with its own confirmations.
  const byHash = new Map<string, CrashStateInfo[]>();
  for (const s of answer.states) byHash.set(s.hash, [...(byHash.get(s.hash) ?? []), s]);
  const groups = [...byHash.values()];
  // Finished past the deadline: the lose-unsynced states, and each policy's first state (listed
  // second or third), so a run cut short has still checked every policy once.
  const policies = new Set(answer.states.map((x) => x.id.policy));
  const firstOf = new Set([...policies].map((p) => groups.findIndex((group) => group.some((x) => x.id.policy === p))));
  const mustFinish = (g: number) => firstOf.has(g) || groups[g].some((x) => keepsNoUnsynced(x.id.policy));
  const results: (GroupResult | undefined)[] = [];
  let next = 0;
  /** The earliest group with a failure: later groups need not be started unless every failure is wanted. */
  let firstFailing = Infinity;
  let outOfTime = false;
  /** A slot failed: the others take nothing more (the error is thrown once every slot has stopped). */
  let aborted = false;
  /** The next group to recover, with its state being put in place already (natively: its image written). */
  const take = (slot: number): { g: number; prepared: Promise<Prepared> } | undefined => {
    const g = next;
    if (aborted || g >= groups.length || g > firstFailing) return undefined;
    // Past the deadline the states that must be finished (they come first) are: a second of
    // overrun, for a whole run covered once, but never more than MAX_OVERRUN_MS.
    const now = Date.now();
    if (now > run.deadlineMs && (now > run.deadlineMs + MAX_OVERRUN_MS || !mustFinish(g))) {
      outOfTime = true;
      return undefined;
    }
    next++;
    const prepared = pool.prepare(slot, groups[g][0], caseOf(groups[g][0]), extras);
    prepared.catch(() => undefined); // awaited below, or dropped when the run stops early
    return { g, prepared };
  };
  const recoverGroup = async (slot: number, g: number, prepared: Prepared): Promise<void> => {
    const recovery = await pool.recover(slot, prepared);
    timings.loadMs += recovery.placeMs;
    timings.recoverMs += recovery.recoverMs;
    timings.recoveries++;
    const started = performance.now();
    const verdicts = groups[g].map((state) => {
      const runs = historyOf(recorded, state.id.afterOp, recovery.runs);
      const violations = judge({ target: target.name, faultsInjected: false, runs });
      o.onState?.(state, violations);
      return { state, runs, violations };
    });
    timings.judgeMs += performance.now() - started;
    if (o.verifyOnMount && recovery.on === 'native') {
      const mount = await pool.recoverOnMount(prepared);
      for (const v of verdicts) {
        const onMount = judge({ target: target.name, faultsInjected: false, runs: [v.runs[0], ...mount.runs] });
        const [a, b] = [violatedChecks(v.violations).join(), violatedChecks(onMount).join()];
        if (a !== b) throw new HarnessError(`the native recovery of crash state ${describeState(v.state.id)} failed [${a || 'nothing'}] but its recovery on the mount failed [${b || 'nothing'}]: the two ways must agree (a bug of powercut)`);
      }
      coverage.statesVerifiedOnMount += verdicts.length;
    }
    results[g] = { recovery, verdicts };
    if (!run.allFailures && verdicts.some((v) => v.violations.length > 0)) firstFailing = Math.min(firstFailing, g);
  };
  const work = async (slot: number): Promise<void> => {
    // Each slot prepares its next state while its driver recovers the current one.
    for (let job = take(slot); job !== undefined; ) {
      const g = job.g;
      try {
        const prepared = await job.prepared;
        job = take(slot);
        await recoverGroup(slot, g, prepared);
      } catch (err) {
        aborted = true;
        ctx.onHarnessError(groups[g][0]); // the state a harness error names: the first slot's to fail
        await job?.prepared.catch(() => undefined); // the next state's preparation ends before the pool stops
        throw err;
      }
    }
  };
  const slots = await Promise.allSettled(Array.from({ length: pool.size }, (_, slot) => work(slot)));
  const failed = slots.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed) throw failed.reason;
  return { groups, results, outOfTime, firstFailing };
}


/** A state judged, with its violations. */
export interface JudgedState {
  state: CrashStateInfo;
  violations: Violation[];
  /** Its recovery's runs, when kept: the same image judged against other lines needs no recovery again. */
  recoveryRuns?: readonly RunRecord[];
}

/** Every judged state of a recoverAndJudge result, in group order. */
export function verdictsOf(judged: Pick<Awaited<ReturnType<typeof recoverAndJudge>>, 'results'>): JudgedState[] {
  return judged.results.flatMap((r) => r?.verdicts.map((v) => ({ state: v.state, violations: v.violations, recoveryRuns: r.recovery.runs })) ?? []);
}
