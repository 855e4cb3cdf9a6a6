// A fix's proof on the recording (cause.ts's rule): the run's states listed again with the fix,
// judged, and compared one to one with the run's own verdicts; a failing state is cured when its
// counterpart passes, a passing one broken when its counterpart fails. Also a candidate's screen (one
// state, with just what it names made durable) before its proof.
import type { CrashStateInfo, ProbeUnit, StateCaps, StatesAnswer } from '../../../fusefs/crash-states.js';
import { keepsNoUnsynced } from '../../../fusefs/model/policies/index.js';
import type { Cause, CauseProof } from '../cause/cause.js';
import { judge, type Violation } from '../oracle.js';
import { pathPattern } from '../path-pattern.js';
import { fixedRun, type FixedRun } from './fixed-run.js';
import { historyOf, recoverAndJudge, verdictsOf, type JudgeContext, type JudgedState, type Recorded } from './judge-states.js';
import { failed, inSlots, probeOf } from './state-probe.js';

const cellOf = (policy: string, afterOp: number) => `${policy} ${afterOp}`;

/** A fix's proof: the run's failing states it judged again (`compared`) and those it cured. */
export interface ProvenFix {
  fix: FixedRun;
  proof: CauseProof;
  cures: Set<number>;
  compared: Set<number>;
  cutShort: boolean;
  /** Whether failing state i passes with this fix and, besides, these confirmation lines withheld (run numbering); undefined when its state is not known. */
  passesWithLines: (i: number, withheld: ReadonlyMap<number, number>) => Promise<boolean | undefined>;
}

/** What identifies a fix: the fsyncs it inserts and leaves out, or the confirmations it withholds (two candidates may make the same). */
export function fixKey(recorded: Recorded, cause: Cause): string | undefined {
  const fix = fixedRun(recorded, cause);
  return fix && JSON.stringify([fix.hypothesis ?? null, [...(fix.recorded.withheld ?? [])]]);
}

/** What the run answered and judged, as the proofs of its fixes need it. */
export interface RunVerdicts {
  answer: StatesAnswer;
  /** Every state the run judged; undefined when it judged some only (one cut): the proof then judges the run without its fix first. */
  judged?: JudgedState[];
  /** A failing state's case as the failure signature needs it (its cut place and policy). */
  signatureOf: (state: CrashStateInfo, violations: Violation[]) => string;
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
export async function proveFix(ctx: JudgeContext, recorded: Recorded, cause: Cause, own: number, failing: readonly JudgedState[], base: readonly JudgedState[], o: { proofMs: number; caps: StateCaps }, run: RunVerdicts, deadline: number, budgetEnd: number): Promise<ProvenFix | undefined> {
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
    ? (keepsNoUnsynced(s.id.policy) ? cellOf('lose-unsynced', runOp) : undefined)
    : idAt(s, runOp));
  const runKey = (s: CrashStateInfo) => keyOf(s, s.id.afterOp);
  // Failing lose-unsynced states whose cut the listing did not hold (a random cut falls anywhere; the
  // proof's time bound ends a listing early): their cuts judged directly, the one it was found on first.
  const fixedKey = (s: CrashStateInfo) => (fix.isNew(s.id.afterOp) ? undefined : keyOf(s, fix.runOpOf(s.id.afterOp)));
  const held = new Set(verdicts.map((v) => fixedKey(v.state)));
  const missing = [own, ...failing.keys()].filter((i, k, all) => all.indexOf(i) === k && keepsNoUnsynced(failing[i].state.id.policy) && !held.has(runKey(failing[i].state)));
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
export async function curesState(ctx: JudgeContext, recorded: Recorded, cause: Cause, f: JudgedState): Promise<boolean> {
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
  if (!keepsNoUnsynced(f.state.id.policy)) return passesWithFix(ctx, recorded, fix, f);
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
export function proofWordsShort(p: CauseProof): string {
  if (p.cured === 0) return `with ${p.step}, no failing state of the run passes (0 of ${p.failing})`;
  return `with ${p.step}, ${p.broken} state${p.broken === 1 ? '' : 's'} that passed fail`;
}
