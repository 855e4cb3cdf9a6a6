// Explaining a failing crash state while its recorded run is still in the daemon: the cause search
// (cause/search.ts) probes hypothetical images of the state in the recovery pool; the proof applies
// the cause's fix to the recorded run and judges every state of it again; the reach re-checks the
// run under the journaled model (an ext4-like journal) for a state that fails by the same cause.
import type { CrashStateInfo, Hypothesis, StateCaps, StatesAnswer } from '../../../fusefs/crash-states.js';
import { describeState } from '../../../fusefs/model/policies/index.js';
import { DEFAULT_SEARCH_BOUND, reachWords, type Cause, type CauseProof, type CauseReach, type FixStep, type SearchBound } from '../cause/cause.js';
import { SECOND_CUT_KEY } from '../cause/of-case.js';
import { searchCause, type ProbeFn } from '../cause/search.js';
import { judge, type Violation } from '../oracle.js';
import { parentOf, pathPattern } from '../path-pattern.js';
import type { TraceEntry } from '../../../fusefs/protocol.js';
import { recoverAndJudge, truncateAtCut, type JudgeContext, type Recorded } from './judge-states.js';

export interface ExplainOptions {
  /** The cause search's bound (probes, time). */
  bound: SearchBound;
  /** Whether to prove a cause over the whole run and check its reach (the gate: once per new cause). */
  prove: (cause: Cause) => boolean;
  /** Time each of the proof and the reach may take; what they leave out is said. */
  proofMs: number;
  /** Caps of the proof's and the reach's enumerations. */
  caps: StateCaps;
}

/** The bounds the gate and `powercut explain` search, prove and reach within. */
export const EXPLAIN_BOUNDS: Omit<ExplainOptions, 'prove'> = {
  bound: DEFAULT_SEARCH_BOUND,
  proofMs: 10_000,
  caps: { maxStates: 300, maxStatesPerInterval: 8, sectorPatterns: 1 },
};

/** What the run's own judgement said, to compare a proof with: intervals, and those with a failing state. */
export interface RunVerdicts {
  intervals: number;
  /** Undefined when the run judged one state only: the proof then judges the run without its fix first. */
  failingIntervals?: number;
  answer: StatesAnswer;
  /** A failing state's case as the failure signature needs it (its cut place and policy). */
  signatureOf: (state: CrashStateInfo, violations: Violation[]) => string;
}

/** The cause of one failing state, and, when `prove` says so, its proof and its reach. */
export async function explainState(judging: JudgeContext, recorded: Recorded, failing: { state: CrashStateInfo; violations: Violation[] }, o: ExplainOptions, run: RunVerdicts): Promise<Cause> {
  // Probes, the proof and the reach recover without a second cut: the lost units are those of the first.
  const ctx: JudgeContext = judging.o.recoveryCuts ? {
    ...judging,
    o: { ...judging.o, recoveryCuts: false },
    caseOf: (s, on) => {
      const { recoveryCut: _cut, ...c } = judging.caseOf(s, on);
      return c;
    },
  } : judging;
  const units = await ctx.daemon.client.units(failing.state.id);
  const probe: ProbeFn = async (req) => {
    // The failing state's hash seeds its recovery cut, if any: a probe recovers the same way.
    const state = { id: req.state, interval: failing.state.interval, hash: failing.state.hash };
    const prepared = await ctx.pool.prepare(0, state, ctx.caseOf(state), { ...(req.persist ? { probe: req.persist } : {}), ...(req.hypothesis ? { hypothesis: req.hypothesis } : {}) });
    const recovery = await ctx.pool.recover(0, prepared);
    return judge({ target: ctx.target.name, faultsInjected: false, runs: [truncateAtCut(recorded, req.linesAsOf ?? req.state.afterOp), ...recovery.runs] });
  };
  if (judging.o.recoveryCuts) {
    // Cut during its recovery: only a failure the state shows without that second cut has its cause in what the first one lost.
    const checks = new Set(failing.violations.filter((v) => !v.hang).map((v) => v.check));
    if (!(await probe({ state: failing.state.id })).some((v) => !v.hang && checks.has(v.check))) {
      return {
        kind: 'not-isolated', key: SECOND_CUT_KEY, title: 'cause not isolated: the failure needs the cut during recovery',
        fix: 'not isolated: recovered without its second cut (during recovery) the state passes, so the failure lies in what the recovery itself did before that cut; the recovery runs\' own units are not probed',
        evidence: ['without the cut during its recovery, the state recovers'], search: { probes: 1, ms: 0, bound: o.bound, boundReached: false },
      };
    }
  }
  const cause = await searchCause({ state: failing.state, violations: failing.violations, units, trace: recorded.trace, marks: recorded.marks, workload: recorded.run.record }, probe, o.bound);
  if (!o.prove(cause)) return cause;
  const proof = await proveFix(ctx, recorded, cause, o, run);
  const reach = await reachOf(ctx, recorded, failing, cause, probe, o);
  return { ...cause, ...(proof ? { proof } : {}), reach };
}

/**
 * The run with the cause's fix applied, judged over every state again (bounded like the gate's
 * enumeration): an fsync inserted after a request (a request of its own; the requests and markers
 * after it move up by one), or a confirmation line printed only once the fsync it needed completed.
 */
async function proveFix(ctx: JudgeContext, recorded: Recorded, cause: Cause, o: ExplainOptions, run: RunVerdicts): Promise<CauseProof | undefined> {
  const step = cause.step;
  if (!step) return undefined;
  const started = Date.now();
  let hypothesis: Hypothesis | undefined;
  let fixed: Recorded;
  let words: string;
  if (step.kind === 'fsync-after') {
    // The fix is the program's: after every request like this one (its kind, its path pattern), not
    // only this one; and the same for each other unit the cause needed made durable with it.
    const steps = [step, ...(cause.alsoSteps ?? [])].filter((x): x is Extract<FixStep, { kind: 'fsync-after' }> => x.kind === 'fsync-after');
    const inserted: { after: number; path: string; dir: boolean }[] = [];
    const described: string[] = [];
    for (const st of steps) {
      const like = recorded.trace.find((e) => e.op === st.afterOp);
      const same = (e: TraceEntry) => like !== undefined && e.result === 0 && e.kind === like.kind && pathPattern(e.path) === pathPattern(like.path) && pathPattern(e.path2 ?? '') === pathPattern(like.path2 ?? '');
      const after = like ? recorded.trace.filter(same).map((e) => e.op) : [st.afterOp];
      // What to fsync after each such request, by the path it has then: the file, or the directory holding the changed entry.
      const toDest = like?.path2 !== undefined && parentOf(like.path2) === st.path;
      const target = (op: number) => {
        const e = recorded.trace.find((x) => x.op === op);
        if (!e) return st.path;
        return st.dir ? parentOf(toDest && e.path2 !== undefined ? e.path2 : e.path) : e.path;
      };
      for (const op of after) {
        const path = target(op);
        if (!inserted.some((x) => x.after === op && x.path === path)) inserted.push({ after: op, dir: st.dir, path });
      }
      const of = st.dir ? `the directory ${st.path}` : (like ? `the file, ${pathPattern(like.path)},` : st.path);
      described.push(`${of} after ${after.length === 1 ? `request ${after[0]}` : `every ${like?.kind} of ${pathPattern(like?.path ?? '')} (requests ${after.join(', ')})`}`);
    }
    inserted.sort((a, b) => a.after - b.after);
    hypothesis = { fsyncAfter: inserted.map((x) => ({ afterOp: x.after, path: x.path })) };
    const before = (op: number, inclusive: boolean) => inserted.filter((x) => (inclusive ? x.after <= op : x.after < op)).length;
    fixed = {
      run: recorded.run,
      trace: [
        ...recorded.trace.map((e) => ({ ...e, op: e.op + before(e.op, false) })),
        ...inserted.map((x, k) => ({ op: x.after + k + 1, kind: x.dir ? 'fsyncdir' as const : 'fsync' as const, path: x.path, state: 'applied' as const, result: 0 })),
      ].sort((a, b) => a.op - b.op),
      // Each fsync comes right after its request: before every line marked after it.
      marks: recorded.marks.map((m) => ({ ...m, afterOp: m.afterOp + before(m.afterOp, true) })),
    };
    words = `an fsync of ${described[0]}${described.length > 1 ? `, and of ${described.slice(1).join('; ')}` : ''}`;
  } else {
    // The program waits at that line, and at every later line of its kind for the next fsync like
    // that one (of a path of the same pattern) to complete: those lines are withheld from the states
    // cut before. Only confirmations are: the program's other lines, and the requests they follow, stay
    // where the recording has them (a write's intent held back past its write would make its bytes on disk look like nobody's).
    const kind = recorded.run.record.outcomes[step.line - 1]?.t;
    const sync = recorded.trace.find((e) => e.op === step.untilOp);
    const syncs = recorded.trace.filter((e) => sync !== undefined && e.kind === sync.kind && e.result === 0 && pathPattern(e.path) === pathPattern(sync.path)).map((e) => e.op);
    // A confirmation printed after the line (a "durable" report of the same acks) cannot come before the wait ends either.
    const confirms = (t: string | undefined) => t === 'durable' || t === 'waited' || t === 'acked';
    const withheld = new Map<number, number>([[step.line, step.untilOp]]);
    for (const m of recorded.marks) {
      const t = recorded.run.record.outcomes[m.n - 1]?.t;
      if (m.n <= step.line || !confirms(t)) continue;
      const until = Math.max(step.untilOp, t === kind ? (syncs.find((op) => op > m.afterOp) ?? 0) : 0);
      if (until > m.afterOp) withheld.set(m.n, until);
    }
    const moved = withheld.size - 1;
    fixed = { ...recorded, withheld };
    words = `line ${step.line} printed only after request ${step.untilOp} completed${moved ? `, and each later confirmation after it (a "${kind}" line after the next ${sync?.kind ?? 'fsync'} of ${pathPattern(sync?.path ?? '')}; ${moved} moved)` : ''}`;
  }
  const failingBefore = run.failingIntervals ?? failingIntervalsOf(await recoverAndJudge(ctx, run.answer, recorded, { allFailures: true, deadlineMs: Date.now() + o.proofMs }));
  const answer = await ctx.daemon.client.states(ctx.o.policies, o.caps, hypothesis);
  const judged = await recoverAndJudge(ctx, answer, fixed, { allFailures: true, deadlineMs: Date.now() + o.proofMs, ...(hypothesis ? { hypothesis } : {}) });
  const failingIntervals = new Set<number>();
  const stillFailing = new Set<string>();
  let states = 0;
  for (const r of judged.results) {
    for (const v of r?.verdicts ?? []) {
      states++;
      if (v.violations.length === 0) continue;
      failingIntervals.add(v.state.interval);
      stillFailing.add(run.signatureOf(v.state, v.violations));
    }
  }
  return {
    step: words, intervalsBefore: run.intervals, failingBefore, intervalsAfter: answer.intervals, failingAfter: failingIntervals.size,
    states, capped: judged.outOfTime || answer.capped.states > 0, stillFailing: [...stillFailing], ms: Date.now() - started,
  };
}

/** The intervals with a failing state, of a judged run. */
function failingIntervalsOf(judged: Awaited<ReturnType<typeof recoverAndJudge>>): number {
  return new Set(judged.results.flatMap((r) => r?.verdicts.filter((v) => v.violations.length > 0).map((v) => v.state.interval) ?? [])).size;
}

/**
 * Whether the cause bites a journaling filesystem in its default mode: a state of the journaled
 * model (which may hold more states than ext4 can, never fewer) that fails the same checks and,
 * for a persistence cause, passes once the cause's unit is made durable. None: it cannot bite ext4.
 */
async function reachOf(ctx: JudgeContext, recorded: Recorded, failing: { state: CrashStateInfo; violations: Violation[] }, cause: Cause, probe: ProbeFn, o: ExplainOptions): Promise<CauseReach> {
  const started = Date.now();
  const reach = (journaled: boolean, why: string, statesChecked: number): CauseReach => ({ journaled, words: reachWords(journaled), why, statesChecked, ms: Date.now() - started });
  if (failing.state.id.policy === 'journaled') return reach(true, `the failing state is a journaled one (${describeState(failing.state.id)})`, 0);
  const checks = new Set(failing.violations.filter((v) => !v.hang).map((v) => v.check));
  const answer = await ctx.daemon.client.states(['journaled'], o.caps);
  const judged = await recoverAndJudge(ctx, answer, recorded, { allFailures: true, deadlineMs: Date.now() + o.proofMs });
  let statesChecked = 0;
  let tried = 0;
  for (const r of judged.results) {
    for (const v of r?.verdicts ?? []) {
      statesChecked++;
      if (!v.violations.some((x) => !x.hang && checks.has(x.check))) continue;
      const u = cause.unit;
      if (!u || u.kind === 'meta') return reach(true, `journaled state ${describeState(v.state.id)} fails the same checks`, statesChecked);
      // A persistence cause: the journaled state must fail for want of the same unit (a few are probed).
      if (tried >= 4) continue;
      tried++;
      const fixedThere = await probe({ state: v.state.id, persist: [{ kind: u.kind, ino: u.ino }] });
      if (!fixedThere.some((x) => !x.hang && checks.has(x.check))) return reach(true, `journaled state ${describeState(v.state.id)} fails the same checks and passes once ${u.path} is durable`, statesChecked);
    }
  }
  const capped = judged.outOfTime || answer.capped.states > 0 ? ` (within the caps: ${answer.capped.states} left out${judged.outOfTime ? ', and the time bound' : ''})` : '';
  return reach(false, `none of the ${statesChecked} journaled states of the run fails by it${capped}`, statesChecked);
}
