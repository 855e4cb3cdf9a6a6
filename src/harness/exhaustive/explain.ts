// Explaining the failing crash states of a run while its recording is still in the daemon. A cause
// is named only with a proof: a candidate found by the cause search (cause/search.ts, probing
// hypothetical images of one state) whose fix, applied to the recording, cures the states it claims
// on the same cuts and breaks none that passed; or, where the fix is not in the recording (recovery
// mishandles a legal disk, a torn record), the probes that show the disk legal and recovery failing
// on it, repeated on each other state it claims. The run's failing states are then given the fewest
// proven causes that explain them (cause/attribute.ts); the rest are said to be unexplained. The
// reach re-checks every journaled state of the cuts where a cause bites.
import type { CrashStateInfo, StateCaps } from '../../../fusefs/crash-states.js';
import { keepsNoUnsynced } from '../../../fusefs/model/policies/index.js';
import { coverStates, isLogicError } from '../cause/attribute.js';
import { boundUntil, DEFAULT_SEARCH_BOUND, proofHolds, type Cause, type SearchBound } from '../cause/cause.js';
import { candidatesOf, rankCandidates, type FailingCut, type RecordingView } from '../cause/candidates.js';
import { carryOver, type KnownCause, type KnownCauses } from '../cause/known-causes.js';
import { BUDGET_RAN_OUT, SECOND_CUT_KEY } from '../cause/of-case.js';
import { removalBlamed, removalTooEarly } from '../cause/search.js';
import type { Violation } from '../oracle.js';
import { within, type TimeShare } from '../time-share.js';
import { curesState, fixKey, proofWordsShort, proveFix, type ProvenFix, type RunVerdicts } from './fix-proof.js';
import { recoverAndJudge, verdictsOf, type JudgeContext, type JudgedState, type Recorded } from './judge-states.js';
import { explainsToo, isRemovalTooEarly, LegalDiskVerdicts, MAX_REPEATS, provenOnState, provenOnStates, sameKindOfState } from './proven-otherwise.js';
import { reachOf } from './reach.js';
import { explainRecoveryCut, failsWithoutSecondCut, searchState, SECOND_CUT_WHY } from './recovery-cut-cause.js';
import { probeOf, withoutRecoveryCuts } from './state-probe.js';

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
   * judging the run's states again under a fix proven before costs what judging them cost; its
   * deadline may lie past the causes' share). Absent: `share`.
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

/** What the run's own judgement said, for proofs to compare with. */
/** The run's failing states given their causes: each proven cause with the states it explains, the rest unexplained by signature. */
export interface Attribution {
  causes: { cause: Cause; states: number[] }[];
  unexplained: { cause: Cause; states: number[] }[];
}

/** Failing states of a run with cuts during recovery recovered without their second cut whatever the time left (the gate samples 4 a run). */
const ALWAYS_FIRST_CUT_CHECKS = 4;

/**
 * Gives the run's failing states (`failing`, in state order) the fewest proven causes that explain
 * them: causes proven earlier in the gate run carried over first, then candidates read off the
 * recording, then searches on the first state of each signature and on states still unexplained;
 * each proven on the recording; a greedy cover picks among the proven ones.
 */
export function explainRun(judging: JudgeContext, recorded: Recorded, failing: readonly JudgedState[], o: ExplainOptions, run: RunVerdicts): Promise<Attribution> {
  return within(o.share, () => new RunExplainer(judging, recorded, failing, o, run).explain());
}

/** A candidate cause of the run's failing states and the states (indexes) its proof cures. */
interface Candidate {
  cause: Cause;
  cures: Set<number>;
  proven?: ProvenFix;
}

/** One run's explaining: the candidates proven so far, what each state's search showed, and the routes in their order. */
class RunExplainer {
  private readonly ctx: JudgeContext;
  /** The caller's budget: past it nothing starts, and a proof it cut short names nothing. */
  private readonly budgetEnd: number;
  private readonly deadline: number;
  private readonly candidates: Candidate[] = [];
  /** Why each searched state got no cause of its own (its candidate's proof failed, or the search found none). */
  private readonly rejected = new Map<number, string[]>();
  /** What the searches and proofs that named nothing cost, per state searched. */
  private readonly spent = new Map<number, { probes: number; ms: number }>();
  private readonly searched = new Set<number>();
  /** States whose failure needs their recovery cut: unexplained under one key, whatever cut them. */
  private readonly secondCut = new Set<number>();
  /** Each fix's proof, by the fix: states a fix was judged on keep its verdict for later candidates with the same fix. */
  private readonly proofs = new Map<string, ProvenFix>();
  private readonly legalDisks = new LegalDiskVerdicts();
  private readonly view: RecordingView;
  /** With cuts during recovery: the states whose failure shows without their second cut (the only ones a carried or read-off fix may claim). */
  private firstCutFails: Set<number> | undefined;
  private base: JudgedState[] | undefined;

  constructor(private readonly judging: JudgeContext, private readonly recorded: Recorded, private readonly failing: readonly JudgedState[], private readonly o: ExplainOptions, private readonly run: RunVerdicts) {
    this.ctx = withoutRecoveryCuts(judging);
    this.budgetEnd = o.share?.deadlineMs() ?? Infinity;
    this.deadline = Math.min(Date.now() + o.runMs, this.budgetEnd);
    this.base = run.judged;
    this.view = { trace: recorded.trace, marks: recorded.marks, outcomes: recorded.run.record.outcomes };
  }

  async explain(): Promise<Attribution> {
    await this.findFirstCutFailures();
    await this.knownCauses();
    await this.readOffCandidates();
    await this.reduction();
    await this.logicErrorsOnClaimedStates();
    await this.recoveryCut();
    return { causes: await this.chosen(), unexplained: this.unexplained() };
  }

  private timeLeft(): boolean {
    return Date.now() < this.deadline;
  }

  /** When known causes' proofs stop starting (and are cut short): their own share's end, which may lie past the causes'. */
  private knownEnd(): number {
    return (this.o.knownShare ?? this.o.share)?.deadlineMs() ?? Infinity;
  }

  private budgetSpent(): boolean {
    return Date.now() >= this.budgetEnd;
  }

  private async baseVerdicts(): Promise<JudgedState[]> {
    this.base ??= verdictsOf(await recoverAndJudge(this.ctx, this.run.answer, this.recorded, { allFailures: true, deadlineMs: Math.min(this.deadline, Date.now() + this.o.proofMs) }));
    return this.base;
  }

  /** One candidate per key: the same fix proven again (on another state, or within another time bound) adds the states it cured. */
  private addCandidate(cause: Cause, cures: ReadonlySet<number>, proven?: ProvenFix): void {
    const same = this.candidates.find((c) => c.cause.key === cause.key);
    if (same) for (const i of cures) same.cures.add(i);
    else this.candidates.push({ cause, cures: new Set(cures), ...(proven ? { proven } : {}) });
  }

  private covered(): Set<number> {
    return new Set(coverStates(this.failing.length, this.candidates.map((c) => ({ kind: c.cause.kind, cures: c.cures }))).chosen.flatMap((c) => c.states));
  }

  private notYetExplained(): number[] {
    const done = this.covered();
    return [...this.failing.keys()].filter((i) => !done.has(i) && (!this.firstCutFails || this.firstCutFails.has(i)));
  }

  private cutOf(i: number): FailingCut {
    const id = this.failing[i].state.id;
    return { afterOp: id.afterOp, ...(id.nodes ? { nodes: id.nodes } : {}) };
  }

  /** The first lose-unsynced state of `states` (it has a counterpart in a fixed run: the cheapest to prove on), else the first. */
  private ownOf(states: readonly number[]): number {
    return states.find((i) => keepsNoUnsynced(this.failing[i].state.id.policy)) ?? states[0];
  }

  /**
   * Proves a cause whose fix is a step added to the recording (found on failing state `own`, or
   * carried over, or read off the recording) and keeps it as a candidate when its proof holds, for
   * the states it cures of `claims` (all, when absent). Returns why it names nothing for `own`, if so.
   */
  private async proveStep(cause: Cause, own: number, claims?: ReadonlySet<number>, limits = { deadline: this.deadline, budgetEnd: this.budgetEnd }): Promise<string[] | undefined> {
    // One fix proven once: the same fix found again on a state its proof already judged is answered by that proof.
    const key = fixKey(this.recorded, cause);
    const earlier = key === undefined ? undefined : this.proofs.get(key);
    const proven = earlier?.compared.has(own) ? { ...earlier, proof: { ...earlier.proof, curesOwnState: earlier.cures.has(own) } }
      : await proveFix(this.ctx, this.recorded, cause, own, this.failing, await this.baseVerdicts(), this.o, this.run, limits.deadline, limits.budgetEnd);
    if (key !== undefined && proven && !proven.cutShort) this.proofs.set(key, proven);
    if (!proven) return [`candidate "${cause.title}": its fix could not be applied to the recording`];
    // Never an unproven cause: a proof the budget cut short names nothing.
    if (proven.cutShort) return [BUDGET_RAN_OUT, `candidate "${cause.title}" (${cause.fix}): its proof was cut short by the budget after ${proven.proof.states} states`];
    cause.proof = proven.proof;
    if (!proofHolds(proven.proof)) return [`candidate "${cause.title}" (${cause.fix}) is not its cause: ${proofWordsShort(proven.proof)}`, ...cause.evidence];
    this.addCandidate(cause, claims ? new Set([...proven.cures].filter((i) => claims.has(i))) : proven.cures, proven);
    if (!proven.proof.curesOwnState) return [`candidate "${cause.title}" (${cause.fix}) cures ${proven.proof.cured} other failing states of the run, not this one`, ...cause.evidence];
    return undefined;
  }

  /** A cause proven otherwise than by a fix (its probes on state i): repeated on each other failing state it may explain. */
  private async provenElsewhere(cause: Cause, i: number): Promise<Set<number>> {
    const cures = new Set([i]);
    const others = this.failing.map((_, j) => j).filter((j) => j !== i && !this.covered().has(j));
    const recoveriesBefore = this.legalDisks.recoveries;
    let repeats = 0;
    for (const j of others) {
      if (!this.timeLeft() || repeats >= MAX_REPEATS) break;
      if (!sameKindOfState(cause, this.failing[j])) continue;
      if (await explainsToo(this.ctx, this.recorded, cause, this.failing[j], this.legalDisks)) cures.add(j);
      // A logic error's repeat costs a recovery only on a cut not probed yet.
      repeats = isLogicError(cause.kind) ? this.legalDisks.recoveries - recoveriesBefore : repeats + 1;
    }
    cause.proven = provenOnStates(cause, cures.size);
    return cures;
  }

  /** With cuts during recovery: each failing state recovered once without its second cut. */
  private async findFirstCutFailures(): Promise<void> {
    if (!this.judging.o.recoveryCuts) return;
    this.firstCutFails = new Set();
    for (const i of this.failing.keys()) {
      // The first few always (a recovery each: a known cause's proof needs them), the rest while time lasts.
      if (i >= ALWAYS_FIRST_CUT_CHECKS && !this.timeLeft()) break;
      if (await failsWithoutSecondCut(this.ctx, this.recorded, this.failing[i])) this.firstCutFails.add(i);
      else {
        this.searched.add(i);
        this.secondCut.add(i);
        this.rejected.set(i, [SECOND_CUT_WHY]);
      }
    }
  }

  /** Route 1: each cause proven earlier in the gate run, its fix carried over and proven on this run. */
  private async knownCauses(): Promise<void> {
    for (const known of this.o.known?.list() ?? []) {
      const left = this.notYetExplained();
      if (left.length === 0 || Date.now() >= this.knownEnd()) break;
      await this.tryKnown(known, left);
    }
  }

  /** A known cause on this run: its fix carried over and proven; a cause proven otherwise, its probes repeated on the states still unexplained. */
  private async tryKnown(known: KnownCause, left: readonly number[]): Promise<void> {
    const o = this.o;
    if (known.cause.step) {
      const carried = carryOver(known, this.view, left.map((i) => this.cutOf(i)));
      // One proof per known cause on a run, within its caps, counted to judging and bounded by its own
      // share, not the causes': it costs about what judging the run's states cost, and it is what
      // makes one bug read as one failure when failing runs come late in the budget.
      const end = this.knownEnd();
      const limits = { deadline: Math.min(Date.now() + o.proofMs, end), budgetEnd: end };
      if (carried) await within(o.knownShare ?? o.share, () => this.proveStep(carried, this.ownOf(left), this.firstCutFails, limits));
      return;
    }
    if (known.cause.kind !== 'torn-write' && !isLogicError(known.cause.kind) && !isRemovalTooEarly(known.cause)) return;
    const cause: Cause = { ...known.cause, route: 'known', evidence: ['a cause proven earlier in this gate run, its probes repeated on this run\'s states'] };
    const cures = new Set<number>();
    for (const j of left.filter((x) => sameKindOfState(cause, this.failing[x])).slice(0, MAX_REPEATS)) {
      if (Date.now() >= this.knownEnd()) break;
      if (await explainsToo(this.ctx, this.recorded, cause, this.failing[j], this.legalDisks)) cures.add(j);
    }
    if (cures.size === 0) return;
    cause.proven = `${provenOnState(known.cause)}; carried over to this run, the same holds on ${cures.size} failing state${cures.size === 1 ? '' : 's'} of this run`;
    this.addCandidate(cause, cures);
  }

  /** Route 2: candidates read off the recording, the likeliest first: each screened on the first state it should cure (one probe), then proven like any cause. */
  private async readOffCandidates(): Promise<void> {
    const open = this.notYetExplained();
    const ranked = open.length === 0 ? [] : rankCandidates(candidatesOf(this.view), open.map((i) => this.cutOf(i)), this.o.maxCandidates);
    for (const { candidate, cuts } of ranked) {
      if (!this.timeLeft()) break;
      const still = cuts.map((k) => open[k]).filter((i) => !this.covered().has(i));
      if (still.length === 0) continue;
      const own = this.ownOf(still);
      const cause = { ...candidate.cause, evidence: [`read off the recording: it bites at ${cuts.length} of the ${open.length} failing states no proven cause explained`] };
      if (!(await curesState(this.ctx, this.recorded, cause, this.failing[own]))) continue;
      await this.proveStep(cause, own, this.firstCutFails);
    }
  }

  /** Route 3, reduction: the first state of each signature first (a cheap, wide start), then whatever is still unexplained. */
  private async reduction(): Promise<void> {
    const firstOfSignature = new Map<string, number>();
    this.failing.forEach((f, i) => {
      const s = this.run.signatureOf(f.state, f.violations);
      if (!firstOfSignature.has(s)) firstOfSignature.set(s, i);
    });
    for (const i of firstOfSignature.values()) {
      if (!this.timeLeft() || this.searched.size >= this.o.maxSearches) break;
      if (!this.covered().has(i)) await this.tryState(i);
    }
    await this.tryJointly();
    for (;;) {
      const next = this.failing.findIndex((_, i) => !this.searched.has(i) && !this.covered().has(i));
      if (next < 0 || !this.timeLeft() || this.searched.size >= this.o.maxSearches) break;
      await this.tryState(next);
    }
    await this.tryJointly();
  }

  /** The cause search on failing state i, and its proof. */
  private async tryState(i: number): Promise<void> {
    this.searched.add(i);
    const f = this.failing[i];
    const started = Date.now();
    const cause = { ...(await searchState(this.ctx, this.judging, this.recorded, f, probeOf(this.ctx, this.recorded, f.state), boundUntil(this.o.bound, this.budgetEnd))), route: 'reduction' as const };
    this.spent.set(i, { probes: cause.search.probes, ms: Date.now() - started });
    if (cause.kind === 'not-isolated') {
      this.rejected.set(i, cause.search.boundReached && this.budgetSpent() ? [BUDGET_RAN_OUT, cause.fix, ...cause.evidence] : [cause.fix, ...cause.evidence]);
      if (cause.key === SECOND_CUT_KEY) this.secondCut.add(i);
      return;
    }
    if (!cause.step) {
      this.addCandidate(cause, await this.provenElsewhere(cause, i));
      return;
    }
    const why = await this.proveStep(cause, i);
    this.spent.set(i, { probes: cause.search.probes, ms: Date.now() - started });
    if (why) this.rejected.set(i, why);
    // A moved fsync that fails its proof (another persistence point syncs the removal anyway): the removal itself came too early, when its state shows it.
    const removed = why && cause.step.kind === 'move' ? removalBlamed({ violations: f.violations, trace: this.recorded.trace, state: f.state }) : undefined;
    if (!removed) return;
    const tooEarly: Cause = {
      ...removalTooEarly(removed, 'the state passes with the persistence point that made it durable left out, and no fsync moved within the run cures it', f.violations.find((v) => !v.hang)?.message ?? ''),
      route: 'reduction', evidence: cause.evidence, search: cause.search,
    };
    if (await explainsToo(this.ctx, this.recorded, tooEarly, f, this.legalDisks)) {
      this.rejected.delete(i);
      this.addCandidate(tooEarly, await this.provenElsewhere(tooEarly, i));
    }
  }

  /**
   * A state that fails for two reasons: a persistence fix cures what it failed, and a confirmation
   * withheld (a fix proven on its own) cures what is left. Withholding lines only takes claims away,
   * so with both nothing that passed fails. The state is the persistence cause's, its words say so.
   */
  private async tryJointly(): Promise<void> {
    const confirmations = this.candidates.filter((c) => c.proven && !c.proven.fix.hypothesis && proofHolds(c.proven.proof));
    for (const c of this.candidates.filter((x) => x.proven?.fix.hypothesis && proofHolds(x.proven.proof))) {
      for (const w of confirmations) {
        const withheld = w.proven!.fix.recorded.withheld;
        if (!withheld) continue;
        let jointly = 0;
        // What the cover explains is the union of every candidate's cures: only c's grow in this loop.
        const explained = this.covered();
        for (const j of this.failing.keys()) {
          if (!this.timeLeft()) break;
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
  }

  /**
   * A logic error is tried on the states other causes cure too: a state that fails with every change
   * durable is its, whatever else hides the symptom there (a confirmation withheld, say).
   */
  private async logicErrorsOnClaimedStates(): Promise<void> {
    for (const logic of this.candidates.filter((c) => isLogicError(c.cause.kind))) {
      const claimed = [...new Set(this.candidates.filter((c) => c !== logic).flatMap((c) => [...c.cures]))].filter((j) => !logic.cures.has(j)).sort((a, b) => a - b);
      const recoveriesBefore = this.legalDisks.recoveries;
      for (const j of claimed) {
        if (!this.timeLeft() || this.legalDisks.recoveries - recoveriesBefore >= MAX_REPEATS) break;
        if (await explainsToo(this.ctx, this.recorded, logic.cause, this.failing[j], this.legalDisks)) logic.cures.add(j);
      }
      logic.cause.proven = provenOnStates(logic.cause, logic.cures.size);
    }
  }

  /** A failure that needs its cut during recovery: the first one's recovery recorded, and searched and proven as a run's. */
  private async recoveryCut(): Promise<void> {
    const i = [...this.secondCut].find((j) => !this.covered().has(j));
    if (i === undefined || !this.timeLeft()) return;
    const found = await explainRecoveryCut(this.ctx, this.judging, this.recorded, this.failing[i], this.o, this.deadline, boundUntil(this.o.bound, this.budgetEnd));
    if ('cause' in found) {
      this.secondCut.delete(i);
      this.addCandidate(found.cause, new Set([i]));
    } else this.rejected.set(i, [found.why, ...(this.rejected.get(i) ?? [])]);
  }

  /** The fewest proven causes, each with the states it is given, its reach checked when asked; each added to the known causes. */
  private async chosen(): Promise<Attribution['causes']> {
    const cover = coverStates(this.failing.length, this.candidates.map((c) => ({ ...c, kind: c.cause.kind })));
    const causes: Attribution['causes'] = [];
    for (const { candidate, states } of cover.chosen) {
      const cause: Cause = { ...candidate.cause, failingStates: { count: states.length, of: this.failing.length } };
      // The reach informs, the causes group: it takes at most a quarter of what the caller's share has left.
      if (this.o.checkReach(cause) && this.timeLeft()) {
        cause.reach = await reachOf(this.ctx, this.recorded, cause, states.map((i) => this.failing[i]), this.o, Math.min(this.deadline, Date.now() + (this.budgetEnd - Date.now()) / 4));
      }
      causes.push({ cause, states });
      this.o.known?.add(cause, this.recorded.trace);
    }
    return causes;
  }

  /** The states no proven cause explains, by signature, with what the searches showed about them. */
  private unexplained(): Attribution['unexplained'] {
    const o = this.o;
    const explained = this.covered();
    const bySignature = new Map<string, number[]>();
    for (const i of this.failing.keys()) {
      if (explained.has(i)) continue;
      const s = this.secondCut.has(i) ? SECOND_CUT_KEY : this.run.signatureOf(this.failing[i].state, this.failing[i].violations);
      bySignature.set(s, [...(bySignature.get(s) ?? []), i]);
    }
    return [...bySignature].map(([signature, states]) => {
      const why = [...new Set(states.flatMap((i) => this.rejected.get(i) ?? []))];
      const notSearched = states.filter((i) => !this.searched.has(i)).length;
      const bounded = notSearched === 0 ? [] : this.budgetSpent()
        ? [BUDGET_RAN_OUT, `${notSearched} of these ${states.length} states were not searched`]
        : [`${notSearched} of these ${states.length} states were not searched: the run's bound of ${o.maxSearches} searches${o.runMs === Infinity ? '' : ` or ${o.runMs / 1000} s`} was reached`];
      const secondCutGroup = signature === SECOND_CUT_KEY;
      const cost = states.reduce((n, i) => ({ probes: n.probes + (this.spent.get(i)?.probes ?? 0), ms: n.ms + (this.spent.get(i)?.ms ?? 0) }), { probes: 0, ms: 0 });
      const cause: Cause = {
        kind: 'not-isolated', key: secondCutGroup ? SECOND_CUT_KEY : `unexplained ${signature}`,
        title: secondCutGroup ? 'cause not isolated: the failure needs the cut during recovery' : `unexplained: ${signature}`,
        fix: why.includes(BUDGET_RAN_OUT) || bounded[0] === BUDGET_RAN_OUT ? BUDGET_RAN_OUT : `no proven cause: ${why[0] ?? bounded[0] ?? 'no candidate was found'}`,
        // "Bound reached" only for the run's own bound: a share of the gate's budget that ran out says so in its fix.
        evidence: [...why, ...bounded], search: { ...cost, bound: o.bound, boundReached: notSearched > 0 && bounded[0] !== BUDGET_RAN_OUT },
        failingStates: { count: states.length, of: this.failing.length },
      };
      return { cause, states };
    });
  }
}
