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
import { removalBlamed, removalTooEarly, searchCause, type ProbeFn } from '../cause/search.js';
import { candidatesOf, madeDurableBy, rankCandidates, type FailingCut, type RecordingView } from '../cause/candidates.js';
import { carryOver, type KnownCause, type KnownCauses } from '../cause/known-causes.js';
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
  /** Candidates read off the recording (cause/candidates.ts) proven per run at most, the likeliest first, before any search. */
  maxCandidates: number;
  /**
   * Causes proven earlier in the same gate run: each is tried first on this run's failing states (its
   * fix carried over and proven here), and each cause this run proves is added.
   */
  known?: KnownCauses;
  /**
   * The share a known cause's proof on this run is counted to and bounded by (the gate's judging:
   * judging the run's states again under a fix proven before costs what judging them cost). Absent:
   * `share`.
   */
  knownShare?: TimeShare;
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
  maxCandidates: 3,
} satisfies Omit<ExplainOptions, 'checkReach'>;

/** The reach's targeted listing: every journaled state of the cuts where a cause bites, within these (far above a gate's caps). */
export const REACH_CAPS: StateCaps = { maxStates: 4_000, maxStatesPerInterval: 512, sectorPatterns: 3 };
/** Journaled states failing the same checks that are probed with the cause's unit made durable. */
const REACH_PROBES = 4;
/** The reach judges journaled states this many per recovery slot at a time, and stops at the first that shows the cause. */
const REACH_CHUNK_PER_SLOT = 4;
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
function probeOf(ctx: JudgeContext, recorded: Recorded, state: CrashStateInfo, slot = 0): ProbeFn {
  return async (req) => {
    const s = { id: req.state, interval: state.interval, hash: state.hash };
    const persist = req.persistAll ? (await ctx.daemon.client.units(req.state, req.hypothesis)).map((u): ProbeUnit => ({ kind: u.kind, ino: u.ino })) : req.persist;
    const prepared = await ctx.pool.prepare(slot, s, ctx.caseOf(s), { ...(persist ? { probe: persist } : {}), ...(req.hypothesis ? { hypothesis: req.hypothesis } : {}) });
    const recovery = await ctx.pool.recover(slot, prepared);
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

  /**
   * Proves a cause whose fix is a step added to the recording (found on failing state `own`, or
   * carried over, or read off the recording) and keeps it as a candidate when its proof holds.
   * Returns why it names nothing for `own`, if so.
   */
  const proveStep = async (cause: Cause, own: number, claims?: ReadonlySet<number>, limits = { deadline, budgetEnd }): Promise<string[] | undefined> => {
    // One fix proven once: the same fix found again on a state its proof already judged is answered by that proof.
    const key = fixKey(recorded, cause);
    const earlier = key === undefined ? undefined : proofs.get(key);
    const proven = earlier?.compared.has(own) ? { ...earlier, proof: { ...earlier.proof, curesOwnState: earlier.cures.has(own) } } : await proveFix(ctx, recorded, cause, own, failing, await baseVerdicts(), o, run, limits.deadline, limits.budgetEnd);
    if (key !== undefined && proven && !proven.cutShort) proofs.set(key, proven);
    if (!proven) return [`candidate "${cause.title}": its fix could not be applied to the recording`];
    // Never an unproven cause: a proof the budget cut short names nothing.
    if (proven.cutShort) return [BUDGET_RAN_OUT, `candidate "${cause.title}" (${cause.fix}): its proof was cut short by the budget after ${proven.proof.states} states`];
    cause.proof = proven.proof;
    if (!proofHolds(proven.proof)) return [`candidate "${cause.title}" (${cause.fix}) is not its cause: ${proofWordsShort(proven.proof)}`, ...cause.evidence];
    addCandidate(cause, claims ? new Set([...proven.cures].filter((i) => claims.has(i))) : proven.cures, proven);
    if (!proven.proof.curesOwnState) return [`candidate "${cause.title}" (${cause.fix}) cures ${proven.proof.cured} other failing states of the run, not this one`, ...cause.evidence];
    return undefined;
  };

  const tryState = async (i: number): Promise<void> => {
    searched.add(i);
    const f = failing[i];
    const probe = probeOf(ctx, recorded, f.state);
    const started = Date.now();
    const cause = { ...(await searchState(ctx, judging, recorded, f, probe, boundNow())), route: 'reduction' as const };
    spent.set(i, { probes: cause.search.probes, ms: Date.now() - started });
    if (cause.kind === 'not-isolated') {
      rejected.set(i, cause.search.boundReached && budgetSpent() ? [BUDGET_RAN_OUT, cause.fix, ...cause.evidence] : [cause.fix, ...cause.evidence]);
      if (cause.key === SECOND_CUT_KEY) secondCut.add(i);
      return;
    }
    if (cause.step) {
      const why = await proveStep(cause, i);
      spent.set(i, { probes: cause.search.probes, ms: Date.now() - started });
      if (why) rejected.set(i, why);
      // A moved fsync that fails its proof (another persistence point syncs the removal anyway): the removal itself came too early, when its state shows it.
      const removed = why && cause.step.kind === 'move' ? removalBlamed({ violations: f.violations, trace: recorded.trace, state: f.state }) : undefined;
      if (!removed) return;
      const tooEarly: Cause = {
        ...removalTooEarly(removed, 'the state passes with the persistence point that made it durable left out, and no fsync moved within the run cures it', f.violations.find((v) => !v.hang)?.message ?? ''),
        route: 'reduction', evidence: cause.evidence, search: cause.search,
      };
      if (await explainsToo(ctx, recorded, tooEarly, f, legalDisks)) {
        rejected.delete(i);
        addCandidate(tooEarly, await provenElsewhere(tooEarly, i));
      }
      return;
    }
    addCandidate(cause, await provenElsewhere(cause, i));
  };

  /** A cause proven otherwise than by a fix (its probes on state i): repeated on each other failing state it may explain. */
  const provenElsewhere = async (cause: Cause, i: number): Promise<Set<number>> => {
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
    return cures;
  };

  /** A known cause on this run: its fix carried over and proven; a cause proven otherwise, its probes repeated on the states still unexplained. */
  const tryKnown = async (known: KnownCause, left: readonly number[]): Promise<void> => {
    if (known.cause.step) {
      const carried = carryOver(known, view, left.map(cutOf));
      // Judging's share while it lasts; past it (the run judged up to judging's deadline), the causes'.
      const share = o.knownShare && o.knownShare.deadlineMs() > Date.now() ? o.knownShare : o.share;
      const end = share?.deadlineMs() ?? Infinity;
      const limits = { deadline: Math.min(Date.now() + o.runMs, end), budgetEnd: end };
      if (carried) await within(share === o.share ? undefined : share, () => proveStep(carried, left.find((i) => failing[i].state.id.policy === 'lose-unsynced') ?? left[0], firstCutFails, limits));
      return;
    }
    if (known.cause.kind !== 'torn-write' && !isLogicError(known.cause.kind) && !isRemovalTooEarly(known.cause)) return;
    const cause: Cause = { ...known.cause, route: 'known', evidence: [`a cause proven earlier in this gate run, its probes repeated on this run's states`] };
    const cures = new Set<number>();
    for (const j of left.filter((x) => sameKindOfState(cause, failing[x])).slice(0, MAX_REPEATS)) {
      if (!timeLeft()) break;
      if (await explainsToo(ctx, recorded, cause, failing[j], legalDisks)) cures.add(j);
    }
    if (cures.size === 0) return;
    cause.proven = `${provenOnState(known.cause)}; carried over to this run, the same holds on ${cures.size} failing state${cures.size === 1 ? '' : 's'} of this run`;
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

  const view: RecordingView = { trace: recorded.trace, marks: recorded.marks, outcomes: recorded.run.record.outcomes };
  // With cuts during recovery, a fix carried over or read off the recording (proven without those
  // cuts) may claim only the states whose failure shows without their second cut: each probed once.
  const firstCutFails = judging.o.recoveryCuts ? new Set<number>() : undefined;
  for (const i of firstCutFails ? failing.keys() : []) {
    if (!timeLeft()) break;
    if (await failsWithoutSecondCut(ctx, recorded, failing[i])) firstCutFails!.add(i);
    else {
      searched.add(i);
      secondCut.add(i);
      rejected.set(i, [SECOND_CUT_WHY]);
    }
  }
  const notYetExplained = () => {
    const done = covered();
    return [...failing.keys()].filter((i) => !done.has(i) && (!firstCutFails || firstCutFails.has(i)));
  };
  const cutOf = (i: number): FailingCut => ({ afterOp: failing[i].state.id.afterOp, ...(failing[i].state.id.nodes ? { nodes: failing[i].state.id.nodes } : {}) });

  // Route 1: each cause proven earlier in the gate run, its fix carried over and proven on this run.
  for (const known of o.known?.list() ?? []) {
    const left = notYetExplained();
    if (left.length === 0 || Date.now() >= Math.max(o.knownShare?.deadlineMs() ?? 0, deadline)) break;
    await tryKnown(known, left);
  }
  // Route 2: candidates read off the recording, the likeliest first: each screened on the first
  // state it should cure (one recovery), then proven like any cause.
  const open = notYetExplained();
  const ranked = open.length === 0 ? [] : rankCandidates(candidatesOf(view), open.map(cutOf), o.maxCandidates);
  for (const { candidate, cuts } of ranked) {
    if (!timeLeft()) break;
    const still = cuts.map((k) => open[k]).filter((i) => !covered().has(i));
    if (still.length === 0) continue;
    // A lose-unsynced state has a counterpart in the fixed run: the cheapest to screen on.
    const own = still.find((i) => failing[i].state.id.policy === 'lose-unsynced') ?? still[0];
    const cause = { ...candidate.cause, evidence: [`read off the recording: it bites at ${cuts.length} of the ${open.length} failing states no proven cause explained`] };
    if (!(await curesState(ctx, recorded, cause, failing[own]))) continue;
    await proveStep(cause, own, firstCutFails);
  }

  // Route 3, reduction: the first state of each signature first (a cheap, wide start), then whatever is still unexplained.
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
    // The reach informs, the causes group: it takes at most a quarter of what the caller's share has left.
    if (o.checkReach(cause) && timeLeft()) cause.reach = await reachOf(ctx, recorded, cause, states.map((i) => failing[i]), o, Math.min(deadline, Date.now() + (budgetEnd - Date.now()) / 4));
    causes.push({ cause, states });
    o.known?.add(cause, recorded.trace);
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
      // "Bound reached" only for the run's own bound: a share of the gate's budget that ran out says so in its fix.
      evidence: [...why, ...bounded], search: { ...cost, bound: o.bound, boundReached: notSearched > 0 && bounded[0] !== BUDGET_RAN_OUT },
      failingStates: { count: states.length, of: failing.length },
    };
    return { cause, states };
  });
  return { causes, unexplained };
}

const SECOND_CUT_WHY = 'not isolated: recovered without its second cut (during recovery) the state passes, so the failure lies in what the recovery itself did before that cut; a run records and searches the recovery of one such state (its own group, when a cause is proven), not of each';

/** Whether a state judged with a cut during its recovery fails the same checks recovered without it (`ctx` recovers without recovery cuts). */
async function failsWithoutSecondCut(ctx: JudgeContext, recorded: Recorded, f: JudgedState, probe = probeOf(ctx, recorded, f.state)): Promise<boolean> {
  const checks = checksOf(f.violations);
  return (await probe({ state: f.state.id })).some((v) => !v.hang && checks.has(v.check));
}

/** The cause search on one state (a state whose failure needs its recovery cut gets no search: said so). */
async function searchState(ctx: JudgeContext, judging: JudgeContext, recorded: Recorded, f: JudgedState, probe: ProbeFn, bound: SearchBound): Promise<Cause> {
  // Cut during its recovery: only a failure the state shows without that second cut has its cause in what the first one lost.
  if (judging.o.recoveryCuts && !(await failsWithoutSecondCut(ctx, recorded, f, probe))) {
    return {
      kind: 'not-isolated', key: SECOND_CUT_KEY, title: 'cause not isolated: the failure needs the cut during recovery',
      fix: SECOND_CUT_WHY, evidence: ['without the cut during its recovery, the state recovers'], search: { probes: 1, ms: 0, bound, boundReached: false },
    };
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
  // Under inserted fsyncs only lose-unsynced states have counterparts (a cut is a cut); a torn or
  // journaled failing state is probed with what the fix made durable (passesWithFix), so the fixed
  // run's own torn and journaled states would be recovered for nothing.
  const answer = fix.hypothesis ? await ctx.daemon.client.states(['lose-unsynced'], o.caps, fix.hypothesis) : run.answer;
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
  // A failing state without a counterpart (torn, journaled) is probed with what the fix made durable, in every slot at once, its own state first.
  const probed = await inSlots(ctx.pool.size, [own, ...failing.keys()].filter((i, k, all) => all.indexOf(i) === k && runKey(failing[i].state) === undefined),
    (i, slot) => (Date.now() < (i === own ? budgetEnd : deadline) ? passesWithFix(ctx, recorded, fix, failing[i], slot) : Promise.resolve(undefined)));
  const cures = new Set<number>();
  const stillFailing = new Set<string>();
  const compared = new Set<number>();
  for (let i = 0; i < failing.length; i++) {
    const f = failing[i];
    const key = runKey(f.state);
    const c = key !== undefined ? counterpart.get(key) : undefined;
    const passes = c ? !failed(c.violations) : probed.get(i);
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
 * A candidate's screen before its proof: whether `f` passes with just what the candidate names made
 * durable (the directory entries of its kind and name pattern, or the data of its files), one probe
 * of the state as the cause search's are; a directory fsync makes every entry durable, so this is
 * what tells the entry that matters from one that rides along. A withheld confirmation: the state's
 * recovery judged again without the line (no recovery); a moved fsync: its counterpart cut.
 */
async function curesState(ctx: JudgeContext, recorded: Recorded, cause: Cause, f: JudgedState): Promise<boolean> {
  const fix = fixedRun(recorded, cause);
  if (!fix) return false;
  const step = cause.step;
  if (step?.kind === 'fsync-after' && cause.unit) {
    const at = new Map(recorded.trace.map((e) => [e.op, e]));
    const like = at.get(step.afterOp);
    const same = (op: number) => {
      const e = at.get(op);
      return e !== undefined && like !== undefined && e.kind === like.kind && pathPattern(e.path) === pathPattern(like.path) && pathPattern(e.path2 ?? '') === pathPattern(like.path2 ?? '');
    };
    const persist: ProbeUnit[] = [];
    for (const u of await ctx.daemon.client.units(f.state.id)) {
      if (step.dir && u.kind === 'dir' && u.path === step.path) {
        const seqs = u.changes.filter((c) => same(c.op)).map((c) => c.seq);
        if (seqs.length) persist.push({ kind: 'dir', ino: u.ino, seqs });
      } else if (!step.dir && u.kind === 'file' && u.changes.some((c) => same(c.op))) persist.push({ kind: 'file', ino: u.ino });
    }
    return persist.length > 0 && !failed(await probeOf(ctx, recorded, f.state)({ state: f.state.id, persist }));
  }
  if (!fix.hypothesis) {
    if (!f.recoveryRuns) return true; // no recovery kept to judge again: the proof decides
    return !failed(judge({ target: ctx.target.name, faultsInjected: false, runs: historyOf(fix.recorded, f.state.id.afterOp, f.recoveryRuns) }));
  }
  if (f.state.id.policy !== 'lose-unsynced') return passesWithFix(ctx, recorded, fix, f);
  const afterOp = fix.fixedOpsOf(f.state.id.afterOp)[0];
  const answer = { intervals: 0, intervalsComplete: 0, states: [{ id: { afterOp, policy: 'lose-unsynced' as const }, interval: f.state.interval, hash: `screen-${afterOp}` }], capped: { states: 0, caps: [] } };
  const [v] = verdictsOf(await recoverAndJudge(ctx, answer, fix.recorded, { allFailures: true, deadlineMs: Infinity, hypothesis: fix.hypothesis }));
  return v !== undefined && !failed(v.violations);
}

/**
 * Whether a torn or journaled state passes with what the fix's inserted fsyncs made durable before its cut
 * (an fsync inserted right after the cut's own request comes after the cut: the state without it is the run's).
 * An fsync inserted after a request is of the file it wrote, or of the directory whose entry it changed:
 * it makes that unit's changes up to that request durable. A fix that also leaves an fsync out changes
 * what the state kept, which a probe of the run's state cannot show: such a state is not shown cured.
 */
async function passesWithFix(ctx: JudgeContext, recorded: Recorded, fix: FixedRun, f: JudgedState, slot = 0): Promise<boolean> {
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
  return !failed(await probeOf(ctx, recorded, f.state, slot)({ state: f.state.id, persist }));
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
  return cause.kind === 'recovery-fails-on-legal-disk' || isRemovalTooEarly(cause);
}

/**
 * A removal made durable too early proven on its states (a process crash right after it fails, or
 * the state passes without the persistence point that made it durable), not by a moved fsync: the
 * program's fix is to remove later, which no fsync added to the recording expresses.
 */
const isRemovalTooEarly = (c: Cause) => c.kind === 'early-persistence' && !c.step;

/** `work` on each item, `slots` at a time (each call given its own slot of the recovery pool); the results by item. */
async function inSlots<T, R>(slots: number, items: readonly T[], work: (item: T, slot: number) => Promise<R>): Promise<Map<T, R>> {
  const out = new Map<T, R>();
  let next = 0;
  await Promise.all(Array.from({ length: Math.max(1, Math.min(slots, items.length)) }, async (_, slot) => {
    while (next < items.length) {
      const item = items[next++];
      out.set(item, await work(item, slot));
    }
  }));
  return out;
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
  const legalDiskFails = () => legalDisks.of(f.state.id.afterOp, () => probe({ state: f.state.id, persistAll: true }));
  if (cause.kind === 'recovery-fails-on-legal-disk') return failsWith(await legalDiskFails());
  if (isRemovalTooEarly(cause)) {
    // The same kind of removal last on the file recovery chokes on, and either a process crash there
    // fails too, or the state passes with the persistence point that made that removal durable left out.
    const removed = removalBlamed({ violations: f.violations, trace: recorded.trace, state: f.state });
    if (removed === undefined || cause.key !== `early-persistence ${removed.last.kind} ${pathPattern(removed.named)}`) return false;
    if (failsWith(await legalDiskFails())) return true;
    const made = recorded.trace.filter((e) => e.op > removed.last.op && e.op <= f.state.id.afterOp && e.result === 0 && (e.kind === 'fsync' || e.kind === 'fsyncdir')
      && madeDurableBy(recorded.trace, e).some((x) => x.op === removed.last.op)).at(-1);
    // A torn state's choices shift when a persistence point is left out: only a lose-unsynced state is asked so.
    return made !== undefined && f.state.id.policy === 'lose-unsynced' && !(await fails({ state: f.state.id, hypothesis: { fsyncAfter: [], fsyncSkip: [made.op] } }));
  }
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
  const until = Math.min(deadline, Date.now() + o.proofMs);
  let statesChecked = 0;
  let tried = 0;
  let outOfTime = false;
  // In chunks, so a journaled state that shows the cause ends the check early (a complete "not on ext4" still judges them all).
  const chunk = REACH_CHUNK_PER_SLOT * ctx.pool.size;
  for (let from = 0; from < answer.states.length && !outOfTime; from += chunk) {
    const judged = await recoverAndJudge(ctx, { ...answer, states: answer.states.slice(from, from + chunk) }, recorded, { allFailures: true, deadlineMs: until });
    outOfTime = judged.outOfTime;
    for (const v of verdictsOf(judged)) {
      statesChecked++;
      if (!v.violations.some((x) => !x.hang && checks.has(x.check))) continue;
      const u = cause.unit;
      if (!u || u.kind === 'meta') return reach(true, true, `journaled state ${describeState(v.state.id)} fails the same checks`, statesChecked);
      // A persistence cause: the journaled state must fail for want of the same unit (a few are probed).
      if (tried >= REACH_PROBES) continue;
      tried++;
      // A candidate read off the recording names its unit by path, not by inode: the state's own unit of that pattern.
      const ino = u.ino !== 0 ? u.ino : (await ctx.daemon.client.units(v.state.id)).find((x) => x.kind === u.kind && pathPattern(x.path) === pathPattern(u.path))?.ino;
      if (ino === undefined) continue;
      const fixedThere = await probeOf(ctx, recorded, v.state)({ state: v.state.id, persist: [{ kind: u.kind, ino }] });
      if (!fixedThere.some((x) => !x.hang && checks.has(x.check))) return reach(true, true, `journaled state ${describeState(v.state.id)} fails the same checks and passes once ${u.path} is durable`, statesChecked);
    }
  }
  const where = `the ${intervals.length} interval${intervals.length === 1 ? '' : 's'} where it bites`;
  const listed = answer.states.length + answer.capped.states;
  const notChecked = listed - statesChecked;
  if (notChecked === 0) return reach(false, true, `all ${statesChecked} journaled states of ${where} pass it`, statesChecked);
  const bounds = [...(answer.capped.states > 0 ? [`${answer.capped.states} beyond the caps`] : []), ...(outOfTime ? [`the ${((until - started) / 1000).toFixed(1)} s it was given`] : [])].join(', ');
  return reach(false, false, `not seen in ${statesChecked} of ${listed} journaled states of ${where} (${notChecked} not checked: ${bounds})`, statesChecked);
}
