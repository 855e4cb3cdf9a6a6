// A failure that needs its second cut, during recovery: what the first cut lost cannot explain it,
// so the recovery itself is recorded on a mount of its own (recovery-recording.ts), the second cut
// becomes a crash state of that recording, and it is searched and proven like a run's.
import type { CrashStateInfo, StateCaps } from '../../../fusefs/crash-states.js';
import { describeState, keepsNoUnsynced } from '../../../fusefs/model/policies/index.js';
import { proofHolds, type Cause, type SearchBound } from '../cause/cause.js';
import { SECOND_CUT_KEY } from '../cause/of-case.js';
import { searchCause, type ProbeFn } from '../cause/search.js';
import type { Violation } from '../oracle.js';
import { proveFix, proofWordsShort } from './fix-proof.js';
import { recoverAndJudge, verdictsOf, type JudgeContext, type JudgedState, type Recorded } from './judge-states.js';
import { provenOnState } from './proven-otherwise.js';
import { recordRecovery } from './recovery-recording.js';
import { checksOf, failed, probeOf } from './state-probe.js';

export const SECOND_CUT_WHY = 'not isolated: recovered without its second cut (during recovery) the state passes, so the failure lies in what the recovery itself did before that cut; a run records and searches the recovery of one such state (its own group, when a cause is proven), not of each';

/** Whether a state judged with a cut during its recovery fails the same checks recovered without it (`ctx` recovers without recovery cuts). */
export async function failsWithoutSecondCut(ctx: JudgeContext, recorded: Recorded, f: JudgedState, probe = probeOf(ctx, recorded, f.state)): Promise<boolean> {
  const checks = checksOf(f.violations);
  return (await probe({ state: f.state.id })).some((v) => !v.hang && checks.has(v.check));
}

/** The cause search on one state (a state whose failure needs its recovery cut gets no search: said so). */
export async function searchState(ctx: JudgeContext, judging: JudgeContext, recorded: Recorded, f: JudgedState, probe: ProbeFn, bound: SearchBound): Promise<Cause> {
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
export async function explainRecoveryCut(ctx: JudgeContext, judging: JudgeContext, recorded: Recorded, f: JudgedState, o: { proofMs: number; caps: StateCaps }, deadline: number, bound: SearchBound): Promise<{ cause: Cause } | { why: string }> {
  const cut = judging.caseOf(f.state).recoveryCut;
  if (!cut) throw new Error(`invariant: crash state ${describeState(f.state.id)} needs a cut during recovery but its case has none`);
  if (!keepsNoUnsynced(cut.policy)) return { why: `the cut during its recovery lost what the ${cut.policy} policy loses; only a lose-unsynced cut's recovery is recorded and searched` };
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
