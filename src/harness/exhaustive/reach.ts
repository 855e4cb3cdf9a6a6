// A cause's reach: whether it bites a journaling filesystem in its default mode (ext4 data=ordered),
// judged on every journaled state of the intervals where it bites (a listing with far larger caps
// than a gate's), a few per recovery slot at a time, so one that shows it ends the check early.
import type { StateCaps } from '../../../fusefs/crash-states.js';
import { describeState, modelsJournalingFs } from '../../../fusefs/model/policies/index.js';
import { reachWords, type Cause, type CauseReach } from '../cause/cause.js';
import { pathPattern } from '../path-pattern.js';
import { recoverAndJudge, verdictsOf, type JudgeContext, type JudgedState, type Recorded } from './judge-states.js';
import { checksOf, probeOf } from './state-probe.js';

/** The reach's targeted listing: every journaled state of the cuts where a cause bites, within these (far above a gate's caps). */
export const REACH_CAPS: StateCaps = { maxStates: 4_000, maxStatesPerInterval: 512, sectorPatterns: 3 };

/** Journaled states failing the same checks that are probed with the cause's unit made durable. */
const REACH_PROBES = 4;

/** The reach judges journaled states this many per recovery slot at a time, and stops at the first that shows the cause. */
const REACH_CHUNK_PER_SLOT = 4;

/**
 * Whether the cause bites a journaling filesystem in its default mode: a state of the journaled
 * model (which may hold more states than ext4 can, never fewer) at the cuts where the cause bites
 * that fails the same checks and, for a persistence cause, passes once the cause's unit is made
 * durable. "Not on ext4" only when every journaled state of those cuts was judged and passed.
 */
export async function reachOf(ctx: JudgeContext, recorded: Recorded, cause: Cause, explained: readonly JudgedState[], o: { proofMs: number; reachCaps?: StateCaps }, deadline: number): Promise<CauseReach> {
  const started = Date.now();
  const reach = (journaled: boolean, complete: boolean, why: string, statesChecked: number): CauseReach => ({ journaled, complete, words: reachWords(journaled, complete), why, statesChecked, ms: Date.now() - started });
  const journaledOne = explained.find((f) => modelsJournalingFs(f.state.id.policy));
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
