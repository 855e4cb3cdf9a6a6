// Explaining the failing crash states of a run while its recording is still in the daemon. A cause
// is named only with a proof: a candidate found by the cause search (cause/search.ts, probing
// hypothetical images of one state) whose fix, applied to the recording, cures the states it claims
// on the same cuts and breaks none that passed; or, where the fix is not in the recording (recovery
// mishandles a legal disk, a torn record), the probes that show the disk legal and recovery failing
// on it, repeated on each other state it claims. The run's failing states are then given the fewest
// proven causes that explain them (cause/attribute.ts); the rest are said to be unexplained. The
// reach re-checks every journaled state of the cuts where a cause bites.
import type { CrashStateInfo, ProbeUnit, StateCaps, StatesAnswer } from '../../../fusefs/crash-states.js';
import { describeState } from '../../../fusefs/model/policies/index.js';
import { coverStates, isLogicError } from '../cause/attribute.js';
import { boundUntil, DEFAULT_SEARCH_BOUND, proofHolds, reachWords, type Cause, type CauseProof, type CauseReach, type SearchBound } from '../cause/cause.js';
import { BUDGET_RAN_OUT, SECOND_CUT_KEY } from '../cause/of-case.js';
import { searchCause, type ProbeFn } from '../cause/search.js';
import { judge, type Violation } from '../oracle.js';
import { pathPattern } from '../path-pattern.js';
import { within, type TimeShare } from '../time-share.js';
import { fixedRun, type FixedRun } from './fixed-run.js';
import { recordRecovery } from './recovery-recording.js';
import { historyOf, recoverAndJudge, verdictsOf, type JudgeContext, type JudgedState, type Recorded } from './judge-states.js';

export interface ExplainOptions {
  /** One cause search's bound (probes, time). */
  bound: SearchBound;
  /** Whether to check a named cause's reach (the gate: once per new cause). */
  checkReach: (cause: Cause) => boolean;
  /** Time each proof and each reach check may take; what they leave out is said. */
  proofMs: number;
  /** Explaining one run starts no new search, proof or check past this long; what is left is unexplained, and says so. */
  runMs: number;
  /** Cause searches per run at most (each on a state no proven cause explains yet). */
  maxSearches: number;
  /** Caps of the proofs' enumerations. */
  caps: StateCaps;
  /** Caps of the reach's listing of journaled states (default REACH_CAPS; a gate's work budget, with no time bound, lists fewer). */
  reachCaps?: StateCaps;
  /**
   * The caller's share of its time budget (the gate's causes phase): no search, proof or check starts
   * past its deadline, each is bounded by it, and a cause whose proof it cut short is not named
   * (the failure is unexplained: the budget ran out). Its time is counted to it.
   */
  share?: TimeShare;
}

/** The bounds the gate and `powercut explain` search, prove and reach within. */
export const EXPLAIN_BOUNDS = {
  bound: DEFAULT_SEARCH_BOUND,
  proofMs: 10_000,
  runMs: 60_000,
  maxSearches: 24,
  caps: { maxStates: 300, maxStatesPerInterval: 8, sectorPatterns: 1 },
} satisfies Omit<ExplainOptions, 'checkReach'>;

/** The reach's targeted listing: every journaled state of the cuts where a cause bites, within these (far above a gate's caps). */
export const REACH_CAPS: StateCaps = { maxStates: 4_000, maxStatesPerInterval: 512, sectorPatterns: 3 };
/** Journaled states failing the same checks that are probed with the cause's unit made durable. */
const REACH_PROBES = 4;
/** Other failing states a proof of another kind is repeated on, per candidate. */
const MAX_REPEATS = 40;


/** What the run's own judgement said, for proofs to compare with. */
export interface RunVerdicts {
  answer: StatesAnswer;
  /** Every state the run judged; undefined when it judged some only (one cut): the proof then judges the run without its fix first. */
  judged?: JudgedState[];
  /** A failing state's case as the failure signature needs it (its cut place and policy). */
  signatureOf: (state: CrashStateInfo, violations: Violation[]) => string;
}

/** The run's failing states given their causes: each proven cause with the states it explains, the rest unexplained by signature. */
export interface Attribution {
  causes: { cause: Cause; states: number[] }[];
  unexplained: { cause: Cause; states: number[] }[];
}

const failed = (vs: readonly Violation[]) => vs.some((v) => !v.hang);
const checksOf = (vs: readonly Violation[]) => new Set(vs.filter((v) => !v.hang).map((v) => v.check));
const cellOf = (policy: string, afterOp: number) => `${policy} ${afterOp}`;

/** The recording's probes recover without a recovery cut: the lost units are those of the first cut. */
function withoutRecoveryCuts(judging: JudgeContext): JudgeContext {
  if (!judging.o.recoveryCuts) return judging;
  return {
    ...judging,
    o: { ...judging.o, recoveryCuts: false },
    caseOf: (s, on) => {
      const { recoveryCut: _cut, ...c } = judging.caseOf(s, on);
      return c;
    },
  };
}

/** Probes of hypothetical images of one state (its hash seeds a recovery cut, if any: a probe recovers the same way). */
function probeOf(ctx: JudgeContext, recorded: Recorded, state: CrashStateInfo): ProbeFn {
  return async (req) => {
    const s = { id: req.state, interval: state.interval, hash: state.hash };
    const persist = req.persistAll ? (await ctx.daemon.client.units(req.state, req.hypothesis)).map((u): ProbeUnit => ({ kind: u.kind, ino: u.ino })) : req.persist;
    const prepared = await ctx.pool.prepare(0, s, ctx.caseOf(s), { ...(persist ? { probe: persist } : {}), ...(req.hypothesis ? { hypothesis: req.hypothesis } : {}) });
    const recovery = await ctx.pool.recover(0, prepared);
    return judge({ target: ctx.target.name, faultsInjected: false, runs: historyOf(recorded, req.linesAsOf ?? req.state.afterOp, recovery.runs) });
  };
}

/**
 * Gives the run's failing states (`failing`, in state order) the fewest proven causes that explain
 * them: candidates searched on the first state of each signature, then on states still unexplained,
 * each proven on the recording; a greedy cover picks among the proven ones.
 */
export function explainRun(judging: JudgeContext, recorded: Recorded, failing: readonly JudgedState[], o: ExplainOptions, run: RunVerdicts): Promise<Attribution> {
  return within(o.share, () => explainRunWithin(judging, recorded, failing, o, run));
}

async function explainRunWithin(judging: JudgeContext, recorded: Recorded, failing: readonly JudgedState[], o: ExplainOptions, run: RunVerdicts): Promise<Attribution> {
  const ctx = withoutRecoveryCuts(judging);
  /** The caller's budget: past it nothing starts, and a proof it cut short names nothing. */
  const budgetEnd = o.share?.deadlineMs() ?? Infinity;
  const deadline = Math.min(Date.now() + o.runMs, budgetEnd);
  const timeLeft = () => Date.now() < deadline;
  const budgetSpent = () => Date.now() >= budgetEnd;
  /** A search bound that ends with the budget. */
  const boundNow = (): SearchBound => boundUntil(o.bound, budgetEnd);
  const candidates: { cause: Cause; cures: Set<number>; proven?: ProvenFix }[] = [];
  /** Why each searched state got no cause of its own (its candidate's proof failed, or the search found none). */
  const rejected = new Map<number, string[]>();
  /** What the searches and proofs that named nothing cost, per state searched. */
  const spent = new Map<number, { probes: number; ms: number }>();
  const searched = new Set<number>();
  /** States whose failure needs their recovery cut: unexplained under one key, whatever cut them. */
  const secondCut = new Set<number>();
  let base: JudgedState[] | undefined = run.judged;
  const baseVerdicts = async () => {
    base ??= verdictsOf(await recoverAndJudge(ctx, run.answer, recorded, { allFailures: true, deadlineMs: Math.min(deadline, Date.now() + o.proofMs) }));
    return base;
  };
  /** One candidate per key: the same fix proven again (on another state, or within another time bound) adds the states it cured. */
  const addCandidate = (cause: Cause, cures: ReadonlySet<number>, proven?: ProvenFix) => {
    const same = candidates.find((c) => c.cause.key === cause.key);
    if (same) for (const i of cures) same.cures.add(i);
    else candidates.push({ cause, cures: new Set(cures), ...(proven ? { proven } : {}) });
  };
  /** Each fix's proof, by the fix: states a fix was judged on keep its verdict for later candidates with the same fix. */
  const proofs = new Map<string, ProvenFix>();
  const legalDisks = new LegalDiskVerdicts();
  const covered = () => new Set(coverStates(failing.length, candidates.map((c) => ({ kind: c.cause.kind, cures: c.cures }))).chosen.flatMap((c) => c.states));

  const tryState = async (i: number): Promise<void> => {
    searched.add(i);
    const f = failing[i];
    const probe = probeOf(ctx, recorded, f.state);
    const started = Date.now();
    const cause = await searchState(ctx, judging, recorded, f, probe, boundNow());
    spent.set(i, { probes: cause.search.probes, ms: Date.now() - started });
    if (cause.kind === 'not-isolated') {
      rejected.set(i, cause.search.boundReached && budgetSpent() ? [BUDGET_RAN_OUT, cause.fix, ...cause.evidence] : [cause.fix, ...cause.evidence]);
      if (cause.key === SECOND_CUT_KEY) secondCut.add(i);
      return;
    }
    if (cause.step) {
      // One fix proven once: the same fix found again on a state its proof already judged is answered by that proof.
      const key = fixKey(recorded, cause);
      const earlier = key === undefined ? undefined : proofs.get(key);
      const proven = earlier?.compared.has(i) ? { ...earlier, proof: { ...earlier.proof, curesOwnState: earlier.cures.has(i) } } : await proveFix(ctx, recorded, cause, i, failing, await baseVerdicts(), o, run, deadline, budgetEnd);
      if (key !== undefined && proven && !proven.cutShort) proofs.set(key, proven);
      if (!proven) {
        rejected.set(i, [`candidate "${cause.title}": its fix could not be applied to the recording`]);
        return;
      }
      if (proven.cutShort) {
        // Never an unproven cause: a proof the budget cut short names nothing.
        rejected.set(i, [BUDGET_RAN_OUT, `candidate "${cause.title}" (${cause.fix}): its proof was cut short by the budget after ${proven.proof.states} states`]);
        return;
      }
      cause.proof = proven.proof;
      spent.set(i, { probes: cause.search.probes, ms: Date.now() - started });
      if (!proofHolds(proven.proof)) {
        rejected.set(i, [`candidate "${cause.title}" (${cause.fix}) is not its cause: ${proofWordsShort(proven.proof)}`, ...cause.evidence]);
        return;
      }
      if (!proven.proof.curesOwnState) rejected.set(i, [`candidate "${cause.title}" (${cause.fix}) cures ${proven.proof.cured} other failing states of the run, not this one`, ...cause.evidence]);
      addCandidate(cause, proven.cures, proven);
      return;
    }
    // A proof of another kind: the search's own probes on this state, repeated on each other failing state it may explain.
    const cures = new Set([i]);
    const others = failing.map((_, j) => j).filter((j) => j !== i && !covered().has(j));
    const recoveriesBefore = legalDisks.recoveries;
    let repeats = 0;
    for (const j of others) {
      if (!timeLeft() || repeats >= MAX_REPEATS) break;
      if (!sameKindOfState(cause, failing[j])) continue;
      if (await explainsToo(ctx, recorded, cause, failing[j], legalDisks)) cures.add(j);
      // A logic error's repeat costs a recovery only on a cut not probed yet.
      repeats = isLogicError(cause.kind) ? legalDisks.recoveries - recoveriesBefore : repeats + 1;
    }
    cause.proven = provenOnStates(cause, cures.size);
    addCandidate(cause, cures);
  };

  // A state that fails for two reasons: a persistence fix cures what it failed, and a confirmation
  // withheld (a fix proven on its own) cures what is left. Withholding lines only takes claims away,
  // so with both nothing that passed fails. The state is the persistence cause's, its words say so.
  const tryJointly = async () => {
    const confirmations = candidates.filter((c) => c.proven && !c.proven.fix.hypothesis && proofHolds(c.proven.proof));
    for (const c of candidates.filter((x) => x.proven?.fix.hypothesis && proofHolds(x.proven.proof))) {
      for (const w of confirmations) {
        const withheld = w.proven!.fix.recorded.withheld;
        if (!withheld) continue;
        let jointly = 0;
        // What the cover explains is the union of every candidate's cures: only c's grow in this loop.
        const explained = covered();
        for (const j of failing.keys()) {
          if (!timeLeft()) break;
          if (explained.has(j) || c.cures.has(j)) continue;
          if (await c.proven!.passesWithLines(j, withheld)) {
            c.cures.add(j);
            jointly++;
          }
        }
        const proof = c.cause.proof!;
        if (jointly > 0) c.cause.proof = { ...proof, cured: proof.cured + jointly, jointly: [...(proof.jointly ?? []), { step: w.proven!.proof.step, cured: jointly }] };
      }
    }
  };

  // The first state of each signature first (a cheap, wide start), then whatever is still unexplained.
  const firstOfSignature = new Map<string, number>();
  failing.forEach((f, i) => {
    const s = run.signatureOf(f.state, f.violations);
    if (!firstOfSignature.has(s)) firstOfSignature.set(s, i);
  });
  for (const i of firstOfSignature.values()) {
    if (!timeLeft() || searched.size >= o.maxSearches) break;
    if (!covered().has(i)) await tryState(i);
  }
  await tryJointly();
  for (;;) {
    const next = failing.findIndex((_, i) => !searched.has(i) && !covered().has(i));
    if (next < 0 || !timeLeft() || searched.size >= o.maxSearches) break;
    await tryState(next);
  }
  await tryJointly();

  // A logic error is tried on the states other causes cure too: a state that fails with every change
  // durable is its, whatever else hides the symptom there (a confirmation withheld, say).
  for (const logic of candidates.filter((c) => isLogicError(c.cause.kind))) {
    const claimed = [...new Set(candidates.filter((c) => c !== logic).flatMap((c) => [...c.cures]))].filter((j) => !logic.cures.has(j)).sort((a, b) => a - b);
    const recoveriesBefore = legalDisks.recoveries;
    for (const j of claimed) {
      if (!timeLeft() || legalDisks.recoveries - recoveriesBefore >= MAX_REPEATS) break;
      if (await explainsToo(ctx, recorded, logic.cause, failing[j], legalDisks)) logic.cures.add(j);
    }
    logic.cause.proven = provenOnStates(logic.cause, logic.cures.size);
  }

  // A failure that needs its cut during recovery: the first one's recovery recorded, and searched and proven as a run's.
  const needsSecondCut = [...secondCut].find((i) => !covered().has(i));
  if (needsSecondCut !== undefined && timeLeft()) {
    const found = await explainRecoveryCut(ctx, judging, recorded, failing[needsSecondCut], o, deadline, boundNow());
    if ('cause' in found) {
      secondCut.delete(needsSecondCut);
      addCandidate(found.cause, new Set([needsSecondCut]));
    } else rejected.set(needsSecondCut, [found.why, ...(rejected.get(needsSecondCut) ?? [])]);
  }

  const cover = coverStates(failing.length, candidates.map((c) => ({ ...c, kind: c.cause.kind })));
  const causes: Attribution['causes'] = [];
  for (const { candidate, states } of cover.chosen) {
    const cause: Cause = { ...candidate.cause, failingStates: { count: states.length, of: failing.length } };
    if (o.checkReach(cause) && timeLeft()) cause.reach = await reachOf(ctx, recorded, cause, states.map((i) => failing[i]), o, deadline);
    causes.push({ cause, states });
  }
  // The rest, by signature, with what the search showed about them.
  const bySignature = new Map<string, number[]>();
  for (const i of cover.unexplained) {
    const s = secondCut.has(i) ? SECOND_CUT_KEY : run.signatureOf(failing[i].state, failing[i].violations);
    bySignature.set(s, [...(bySignature.get(s) ?? []), i]);
  }
  const unexplained = [...bySignature].map(([signature, states]) => {
    const why = [...new Set(states.flatMap((i) => rejected.get(i) ?? []))];
    const notSearched = states.filter((i) => !searched.has(i)).length;
    const bounded = notSearched === 0 ? [] : budgetSpent()
      ? [BUDGET_RAN_OUT, `${notSearched} of these ${states.length} states were not searched`]
      : [`${notSearched} of these ${states.length} states were not searched: the run's bound of ${o.maxSearches} searches${o.runMs === Infinity ? '' : ` or ${o.runMs / 1000} s`} was reached`];
    const secondCutGroup = signature === SECOND_CUT_KEY;
    const cost = states.reduce((n, i) => ({ probes: n.probes + (spent.get(i)?.probes ?? 0), ms: n.ms + (spent.get(i)?.ms ?? 0) }), { probes: 0, ms: 0 });
    const cause: Cause = {
      kind: 'not-isolated', key: secondCutGroup ? SECOND_CUT_KEY : `unexplained ${signature}`,
      title: secondCutGroup ? 'cause not isolated: the failure needs the cut during recovery' : `unexplained: ${signature}`,
      fix: why.includes(BUDGET_RAN_OUT) || bounded[0] === BUDGET_RAN_OUT ? BUDGET_RAN_OUT : `no proven cause: ${why[0] ?? bounded[0] ?? 'no candidate was found'}`,
      evidence: [...why, ...bounded], search: { ...cost, bound: o.bound, boundReached: notSearched > 0 },
      failingStates: { count: states.length, of: failing.length },
    };
    return { cause, states };
  });
  return { causes, unexplained };
}

/** The cause search on one state (a state whose failure needs its recovery cut gets no search: said so). */
async function searchState(ctx: JudgeContext, judging: JudgeContext, recorded: Recorded, f: JudgedState, probe: ProbeFn, bound: SearchBound): Promise<Cause> {
  if (judging.o.recoveryCuts) {
    // Cut during its recovery: only a failure the state shows without that second cut has its cause in what the first one lost.
    const checks = checksOf(f.violations);
    if (!(await probe({ state: f.state.id })).some((v) => !v.hang && checks.has(v.check))) {
      return {
        kind: 'not-isolated', key: SECOND_CUT_KEY, title: 'cause not isolated: the failure needs the cut during recovery',
        fix: 'not isolated: recovered without its second cut (during recovery) the state passes, so the failure lies in what the recovery itself did before that cut; a run records and searches the recovery of one such state (its own group, when a cause is proven), not of each',
        evidence: ['without the cut during its recovery, the state recovers'], search: { probes: 1, ms: 0, bound, boundReached: false },
      };
    }
  }
  const units = await ctx.daemon.client.units(f.state.id);
  return searchCause({ state: f.state, violations: f.violations, units, trace: recorded.trace, marks: recorded.marks, workload: recorded.run.record }, probe, bound);
}


/**
 * The cause of a failure that needs its cut during recovery: that recovery recorded on a daemon of its
 * own (recovery-recording.ts), the state its cut left searched, and a fix proven on that recording's
 * states with the same rule as a run's. Its words say the step is the recovery's.
 */
async function explainRecoveryCut(ctx: JudgeContext, judging: JudgeContext, recorded: Recorded, f: JudgedState, o: ExplainOptions, deadline: number, bound: SearchBound): Promise<{ cause: Cause } | { why: string }> {
  const cut = judging.caseOf(f.state).recoveryCut;
  if (!cut) throw new Error(`invariant: crash state ${describeState(f.state.id)} needs a cut during recovery but its case has none`);
  if (cut.policy !== 'lose-unsynced') return { why: `the cut during its recovery lost what the ${cut.policy} policy loses; only a lose-unsynced cut's recovery is recorded and searched` };
  const rr = await recordRecovery(ctx, recorded, f.state, cut, o.caps);
  if ('why' in rr) return { why: `the cut during its recovery was not searched: ${rr.why}` };
  try {
    const judgeUntil = (deadlineMs: number, states = rr.answer.states) => recoverAndJudge(rr.ctx, { ...rr.answer, states }, rr.recorded, { allFailures: true, deadlineMs });
    const [own] = verdictsOf(await judgeUntil(Infinity, [rr.cutState]));
    const checks = checksOf(f.violations);
    if (!own?.violations.some((v) => !v.hang && checks.has(v.check))) {
      return { why: `its recovery, recorded again and cut at the same request (${cut.cut.timing} request ${cut.cut.atOp}), passes: the recovery runs differently each time` };
    }
    const base = verdictsOf(await judgeUntil(Math.min(deadline, Date.now() + o.proofMs)));
    const ownKey = JSON.stringify(own.state.id);
    const failingThere = [own, ...base.filter((v) => failed(v.violations) && JSON.stringify(v.state.id) !== ownKey)];
    const cause = await searchState(rr.ctx, rr.ctx, rr.recorded, own, probeOf(rr.ctx, rr.recorded, own.state), bound);
    if (cause.kind === 'not-isolated') return { why: `in its recovery: ${cause.fix}` };
    if (cause.step) {
      const signatureOf = (s: CrashStateInfo, vs: Violation[]) => `${[...checksOf(vs)].sort().join(',')}, after request ${s.id.afterOp - rr.placedOps} of the recovery`;
      const proven = await proveFix(rr.ctx, rr.recorded, cause, 0, failingThere, base, o, { answer: rr.answer, judged: base, signatureOf }, deadline, deadline);
      if (!proven) return { why: `in its recovery: candidate "${cause.title}": its fix could not be applied to the recording` };
      if (proven.cutShort) return { why: `in its recovery: candidate "${cause.title}": its proof was cut short by the time bound` };
      // Of this run it explains the one state whose recovery was recorded: its own state must be cured.
      if (!proofHolds(proven.proof) || !proven.proof.curesOwnState) {
        const why = proven.proof.curesOwnState ? proofWordsShort(proven.proof) : `with ${proven.proof.step}, the state it was found on still fails`;
        return { why: `in its recovery: candidate "${cause.title}" (${cause.fix}) is not its cause: ${why}` };
      }
      cause.proof = proven.proof;
    } else cause.proven = provenOnState(cause);
    return {
      cause: {
        ...cause,
        key: `in-recovery ${cause.key}`,
        title: `in recovery: ${cause.title}`,
        fix: `during the recovery of crash state ${describeState(f.state.id)}, cut ${cut.cut.timing} its request ${cut.cut.atOp}: ${cause.fix} (the recovery was recorded after ${rr.placedOps} requests that put the state in place: its request r is request ${rr.placedOps} + r there)`,
      },
    };
  } finally {
    await rr.stop();
  }
}

/** A fix's proof: the run's failing states it judged again (`compared`) and those it cured. */
interface ProvenFix {
  fix: FixedRun;
  proof: CauseProof;
  cures: Set<number>;
  compared: Set<number>;
  cutShort: boolean;
  /** Whether failing state i passes with this fix and, besides, these confirmation lines withheld (run numbering); undefined when its state is not known. */
  passesWithLines: (i: number, withheld: ReadonlyMap<number, number>) => Promise<boolean | undefined>;
}

/** What identifies a fix: the fsyncs it inserts and leaves out, or the confirmations it withholds (two candidates may make the same). */
function fixKey(recorded: Recorded, cause: Cause): string | undefined {
  const fix = fixedRun(recorded, cause);
  return fix && JSON.stringify([fix.hypothesis ?? null, [...(fix.recorded.withheld ?? [])]]);
}

/**
 * Proves a cause's fix on the recording: the run's states listed and judged again with it, and
 * compared with the run's states one to one: a lose-unsynced state by its cut (the power going after
 * the same request of the program; a cut right after an inserted fsync is a new state, counted
 * apart); with a fix that inserts nothing (a confirmation withheld), every state by its id. A torn or
 * journaled state of a run with fsyncs inserted has no counterpart by id (its choices count the
 * unsynced changes, which the fix changes): it is probed with what the fix makes durable by its cut.
 * The fix cures a failing state when its counterpart passes; it breaks one that passed when its
 * counterpart fails.
 */
async function proveFix(ctx: JudgeContext, recorded: Recorded, cause: Cause, own: number, failing: readonly JudgedState[], base: readonly JudgedState[], o: ExplainOptions, run: RunVerdicts, deadline: number, budgetEnd: number): Promise<ProvenFix | undefined> {
  const fix = fixedRun(recorded, cause);
  if (!fix) return undefined;
  const started = Date.now();
  const until = Math.min(deadline, started + o.proofMs);
  const answer = fix.hypothesis ? await ctx.daemon.client.states(ctx.o.policies, o.caps, fix.hypothesis) : run.answer;
  const extras = fix.hypothesis ? { hypothesis: fix.hypothesis } : {};
  // A state the fix leaves as it was keeps the run's verdict: only the changed ones are recovered again.
  const idAt = (s: CrashStateInfo, runOp: number) => JSON.stringify([s.id.policy, runOp, s.id.dirPrefix ?? null, s.id.data ?? null]);
  const idKey = (s: CrashStateInfo) => idAt(s, s.id.afterOp);
  const baseById = new Map(base.map((v) => [idKey(v.state), v]));
  const kept = answer.states.flatMap((s) => {
    const v = fix.unchanged(s.id.afterOp) ? baseById.get(idKey(s)) : undefined;
    return v ? [{ ...v, state: s }] : [];
  });
  const keptIds = new Set(kept.map((v) => idKey(v.state)));
  // A fix that inserts no fsync leaves every image as it was: a state the run recovered is judged
  // again against the fixed lines, not recovered again.
  const recoveredById = new Map(fix.hypothesis ? [] : base.flatMap((v) => (v.recoveryRuns ? [[idKey(v.state), v.recoveryRuns] as const] : [])));
  const changed = answer.states.filter((s) => !keptIds.has(idKey(s)));
  const rejudged = changed.flatMap((s): JudgedState[] => {
    const runs = recoveredById.get(idKey(s));
    return runs ? [{ state: s, violations: judge({ target: ctx.target.name, faultsInjected: false, runs: historyOf(fix.recorded, s.id.afterOp, runs) }) }] : [];
  });
  const judged = await recoverAndJudge(ctx, { ...answer, states: changed.filter((s) => !recoveredById.has(idKey(s))) }, fix.recorded, { allFailures: true, deadlineMs: until, ...extras });
  const verdicts = [...kept, ...rejudged, ...verdictsOf(judged)];
  // A state's counterpart key: its cut under lose-unsynced; its whole id when the fix inserts nothing.
  const keyOf = (s: CrashStateInfo, runOp: number): string | undefined => (fix.hypothesis
    ? (s.id.policy === 'lose-unsynced' ? cellOf('lose-unsynced', runOp) : undefined)
    : idAt(s, runOp));
  const runKey = (s: CrashStateInfo) => keyOf(s, s.id.afterOp);
  // Failing lose-unsynced states whose cut the listing did not hold (a random cut falls anywhere; the
  // proof's time bound ends a listing early): their cuts judged directly, the one it was found on first.
  const fixedKey = (s: CrashStateInfo) => (fix.isNew(s.id.afterOp) ? undefined : keyOf(s, fix.runOpOf(s.id.afterOp)));
  const held = new Set(verdicts.map((v) => fixedKey(v.state)));
  const missing = [own, ...failing.keys()].filter((i, k, all) => all.indexOf(i) === k && failing[i].state.id.policy === 'lose-unsynced' && !held.has(runKey(failing[i].state)));
  const cutsOf = (is: readonly number[]) => is.flatMap((i) => fix.fixedOpsOf(failing[i].state.id.afterOp).map((afterOp) => ({ id: { afterOp, policy: 'lose-unsynced' as const }, interval: failing[i].state.interval, hash: `fixed-cut-${afterOp}` })));
  // The own state's cuts are judged while the budget lasts; the others while the run's time lasts.
  for (const [is, deadlineMs] of [[missing.filter((i) => i === own), budgetEnd], [missing.filter((i) => i !== own), deadline]] as const) {
    if (is.length > 0) verdicts.push(...verdictsOf(await recoverAndJudge(ctx, { ...answer, states: cutsOf(is) }, fix.recorded, { allFailures: true, deadlineMs, ...extras })));
  }
  const counterpart = new Map<string, JudgedState>();
  const exposed = new Set<string>();
  for (const v of verdicts) {
    const key = fixedKey(v.state);
    if (key !== undefined) counterpart.set(key, v);
    else if (fix.isNew(v.state.id.afterOp) && failed(v.violations)) exposed.add(run.signatureOf(v.state, v.violations));
  }
  const cures = new Set<number>();
  const stillFailing = new Set<string>();
  const compared = new Set<number>();
  for (let i = 0; i < failing.length; i++) {
    const f = failing[i];
    const key = runKey(f.state);
    const c = key !== undefined ? counterpart.get(key) : undefined;
    let passes: boolean | undefined;
    if (c) passes = !failed(c.violations);
    else if (key === undefined && Date.now() < (i === own ? budgetEnd : deadline)) passes = await passesWithFix(ctx, recorded, fix, f);
    if (passes === undefined) continue;
    compared.add(i);
    if (passes) cures.add(i);
    else stillFailing.add(run.signatureOf(f.state, f.violations));
  }
  let broken = 0;
  const runPassed = new Set(base.filter((v) => !failed(v.violations)).map((v) => runKey(v.state)).filter((k) => k !== undefined));
  for (const [key, v] of counterpart) if (runPassed.has(key) && failed(v.violations)) broken++;
  /** The run's lines withheld until a request completed, in the fixed run's numbering. */
  const inFixedRun = (withheld: ReadonlyMap<number, number>) => new Map([...withheld].map(([line, until]) => [line, fix.fixedOpsOf(until)[0]]));
  const passesWithLines = async (i: number, withheld: ReadonlyMap<number, number>): Promise<boolean | undefined> => {
    const f = failing[i];
    const key = runKey(f.state);
    if (key === undefined) return passesWithFix(ctx, { ...recorded, withheld }, fix, f);
    const c = counterpart.get(key);
    if (!c?.recoveryRuns) return undefined;
    return !failed(judge({ target: ctx.target.name, faultsInjected: false, runs: historyOf({ ...fix.recorded, withheld: inFixedRun(withheld) }, c.state.id.afterOp, c.recoveryRuns) }));
  };
  return {
    fix,
    passesWithLines,
    cures,
    compared,
    // The budget ended while proving: what it would have judged next may be the state the fix breaks.
    cutShort: Date.now() >= budgetEnd,
    proof: {
      step: fix.words, failing: compared.size, cured: cures.size, curesOwnState: cures.has(own), broken, exposed: [...exposed],
      states: verdicts.length, capped: judged.outOfTime || answer.capped.states > 0, stillFailing: [...stillFailing], ms: Date.now() - started,
    },
  };
}

/**
 * Whether a torn or journaled state passes with what the fix's inserted fsyncs made durable before its cut
 * (an fsync inserted right after the cut's own request comes after the cut: the state without it is the run's).
 * An fsync inserted after a request is of the file it wrote, or of the directory whose entry it changed:
 * it makes that unit's changes up to that request durable. A fix that also leaves an fsync out changes
 * what the state kept, which a probe of the run's state cannot show: such a state is not shown cured.
 */
async function passesWithFix(ctx: JudgeContext, recorded: Recorded, fix: FixedRun, f: JudgedState): Promise<boolean> {
  if (!fix.hypothesis || fix.hypothesis.fsyncSkip?.length) return false;
  const syncs = fix.hypothesis.fsyncAfter.map((x) => x.afterOp).filter((op) => op < f.state.id.afterOp);
  const persist: ProbeUnit[] = [];
  for (const u of await ctx.daemon.client.units(f.state.id)) {
    if (u.kind === 'meta') continue;
    const lastSync = Math.max(-1, ...syncs.filter((op) => u.changes.some((c) => c.op === op)));
    const upTo = u.changes.filter((c) => c.op <= lastSync);
    if (upTo.length === 0) continue;
    persist.push(u.kind === 'file' ? { kind: 'file', ino: u.ino, upTo: upTo.length } : { kind: 'dir', ino: u.ino, seqs: upTo.map((c) => c.seq) });
  }
  if (persist.length === 0) return false;
  // As strict as a counterpart found by its cut: cured only when it fails no check at all.
  return !failed(await probeOf(ctx, recorded, f.state)({ state: f.state.id, persist }));
}

/** Why a proof names no cause, briefly. */
function proofWordsShort(p: CauseProof): string {
  if (p.cured === 0) return `with ${p.step}, no failing state of the run passes (0 of ${p.failing})`;
  return `with ${p.step}, ${p.broken} state${p.broken === 1 ? '' : 's'} that passed fail`;
}

/** The proof of another kind a cause's search made on its state, in words. */
function provenOnState(cause: Cause): string {
  switch (cause.kind) {
    case 'torn-write': return `the disk is legal (a sector-prefix state the policy allows) and recovery fails on it, while it passes with ${cause.unit?.path ?? 'the file'} kept whole and with it not kept at all`;
    case 'recovery-fails-on-legal-disk': return 'the disk is legal (every change the program made kept, as a process crash leaves it) and recovery still fails the same checks';
    case 'non-atomic-update': return 'the state with one directory operation fewer passes and the state with both passes: only the state between them, which a cut may leave, fails';
    default: return `checked on the state itself: ${cause.evidence.at(-1) ?? ''}`;
  }
}

/** The proof of another kind, with how many failing states of the run it was repeated on. */
function provenOnStates(cause: Cause, states: number): string {
  return `${provenOnState(cause)}${states > 1 ? `; the same holds on ${states - 1} other failing state${states === 2 ? '' : 's'} of the run` : ''}`;
}

/** Whether a failing state could be explained by a cause of another kind than a fix (it is tried by probes only then). */
function sameKindOfState(cause: Cause, f: JudgedState): boolean {
  if (cause.kind === 'torn-write') return f.state.id.policy !== 'lose-unsynced';
  return cause.kind === 'recovery-fails-on-legal-disk';
}

/**
 * The verdicts of the disk a process crash leaves, per cut: every change kept is the same image
 * whatever the policy that cut there, so one recovery serves every failing state cut after that request.
 */
class LegalDiskVerdicts {
  private readonly byCut = new Map<number, Promise<Violation[]>>();
  /** Recoveries made (cuts probed). */
  get recoveries(): number {
    return this.byCut.size;
  }
  of(afterOp: number, recover: () => Promise<Violation[]>): Promise<Violation[]> {
    let verdicts = this.byCut.get(afterOp);
    if (!verdicts) this.byCut.set(afterOp, (verdicts = recover()));
    return verdicts;
  }
}

/**
 * The same proof of another kind on another failing state: a logic error fails there too with every
 * lost unit made durable; a torn write of the same file pattern passes there with that file kept
 * whole and with it not kept at all.
 */
async function explainsToo(ctx: JudgeContext, recorded: Recorded, cause: Cause, f: JudgedState, legalDisks: LegalDiskVerdicts): Promise<boolean> {
  const probe = probeOf(ctx, recorded, f.state);
  const checks = checksOf(f.violations);
  const failsWith = (vs: readonly Violation[]) => vs.some((v) => !v.hang && checks.has(v.check));
  const fails = async (req: Parameters<ProbeFn>[0]) => failsWith(await probe(req));
  if (cause.kind === 'recovery-fails-on-legal-disk') return failsWith(await legalDisks.of(f.state.id.afterOp, () => probe({ state: f.state.id, persistAll: true })));
  const units = await ctx.daemon.client.units(f.state.id);
  const unit = units.find((u) => u.kind === 'file' && cause.unit && pathPattern(u.path) === pathPattern(cause.unit.path));
  if (!unit) return false;
  return !(await fails({ state: f.state.id, persist: [{ kind: 'file', ino: unit.ino }] })) && !(await fails({ state: f.state.id, persist: [{ kind: 'file', ino: unit.ino, upTo: 0 }] }));
}

/**
 * Whether the cause bites a journaling filesystem in its default mode: a state of the journaled
 * model (which may hold more states than ext4 can, never fewer) at the cuts where the cause bites
 * that fails the same checks and, for a persistence cause, passes once the cause's unit is made
 * durable. "Not on ext4" only when every journaled state of those cuts was judged and passed.
 */
async function reachOf(ctx: JudgeContext, recorded: Recorded, cause: Cause, explained: readonly JudgedState[], o: ExplainOptions, deadline: number): Promise<CauseReach> {
  const started = Date.now();
  const reach = (journaled: boolean, complete: boolean, why: string, statesChecked: number): CauseReach => ({ journaled, complete, words: reachWords(journaled, complete), why, statesChecked, ms: Date.now() - started });
  const journaledOne = explained.find((f) => f.state.id.policy === 'journaled');
  if (journaledOne) return reach(true, true, `a state it explains is a journaled one (${describeState(journaledOne.state.id)})`, 0);
  const checks = new Set(explained.flatMap((f) => [...checksOf(f.violations)]));
  const intervals = [...new Set(explained.map((f) => f.state.interval))].sort((a, b) => a - b);
  const answer = await ctx.daemon.client.states(['journaled'], o.reachCaps ?? REACH_CAPS, undefined, intervals);
  const judged = await recoverAndJudge(ctx, answer, recorded, { allFailures: true, deadlineMs: Math.min(deadline, Date.now() + o.proofMs) });
  let statesChecked = 0;
  let tried = 0;
  for (const v of verdictsOf(judged)) {
    statesChecked++;
    if (!v.violations.some((x) => !x.hang && checks.has(x.check))) continue;
    const u = cause.unit;
    if (!u || u.kind === 'meta') return reach(true, true, `journaled state ${describeState(v.state.id)} fails the same checks`, statesChecked);
    // A persistence cause: the journaled state must fail for want of the same unit (a few are probed).
    if (tried >= REACH_PROBES) continue;
    tried++;
    const fixedThere = await probeOf(ctx, recorded, v.state)({ state: v.state.id, persist: [{ kind: u.kind, ino: u.ino }] });
    if (!fixedThere.some((x) => !x.hang && checks.has(x.check))) return reach(true, true, `journaled state ${describeState(v.state.id)} fails the same checks and passes once ${u.path} is durable`, statesChecked);
  }
  const where = `the ${intervals.length} interval${intervals.length === 1 ? '' : 's'} where it bites`;
  const listed = answer.states.length + answer.capped.states;
  const notChecked = listed - statesChecked;
  if (notChecked === 0) return reach(false, true, `all ${statesChecked} journaled states of ${where} pass it`, statesChecked);
  const bounds = [...(answer.capped.states > 0 ? [`${answer.capped.states} beyond the caps`] : []), ...(judged.outOfTime ? [`the ${o.proofMs / 1000} s bound`] : [])].join(', ');
  return reach(false, false, `not seen in ${statesChecked} of ${listed} journaled states of ${where} (${notChecked} not checked: ${bounds})`, statesChecked);
}
