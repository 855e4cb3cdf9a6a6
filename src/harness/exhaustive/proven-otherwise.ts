// Causes proven otherwise than by a fix added to the recording (their fix is recovery's, or the
// order of the program's steps): a logic error (recovery fails on the disk a process crash leaves), a
// torn write recovery mishandles, a removal made durable too early. Each is proven on its state by
// probes, and the same probes repeated on the run's other failing states it may explain.
import { keepsNoUnsynced } from '../../../fusefs/model/policies/index.js';
import type { Cause } from '../cause/cause.js';
import { madeDurableBy } from '../cause/candidates.js';
import { removalBlamed, type ProbeFn } from '../cause/search.js';
import type { Violation } from '../oracle.js';
import { pathPattern } from '../path-pattern.js';
import type { JudgeContext, JudgedState, Recorded } from './judge-states.js';
import { checksOf, probeOf } from './state-probe.js';

/** Other failing states a proof of another kind is repeated on, per candidate. */
export const MAX_REPEATS = 40;

/** The proof of another kind a cause's search made on its state, in words. */
export function provenOnState(cause: Cause): string {
  switch (cause.kind) {
    case 'torn-write': return `the disk is legal (a sector-prefix state the policy allows) and recovery fails on it, while it passes with ${cause.unit?.path ?? 'the file'} kept whole and with it not kept at all`;
    case 'recovery-fails-on-legal-disk': return 'the disk is legal (every change the program made kept, as a process crash leaves it) and recovery still fails the same checks';
    case 'non-atomic-update': return 'the state with one directory operation fewer passes and the state with both passes: only the state between them, which a cut may leave, fails';
    default: return `checked on the state itself: ${cause.evidence.at(-1) ?? ''}`;
  }
}

/** The proof of another kind, with how many failing states of the run it was repeated on. */
export function provenOnStates(cause: Cause, states: number): string {
  return `${provenOnState(cause)}${states > 1 ? `; the same holds on ${states - 1} other failing state${states === 2 ? '' : 's'} of the run` : ''}`;
}

/** Whether a failing state could be explained by a cause of another kind than a fix (it is tried by probes only then). */
export function sameKindOfState(cause: Cause, f: JudgedState): boolean {
  if (cause.kind === 'torn-write') return !keepsNoUnsynced(f.state.id.policy);
  return cause.kind === 'recovery-fails-on-legal-disk' || isRemovalTooEarly(cause);
}

/**
 * A removal made durable too early proven on its states (a process crash right after it fails, or
 * the state passes without the persistence point that made it durable), not by a moved fsync: the
 * program's fix is to remove later, which no fsync added to the recording expresses.
 */
export const isRemovalTooEarly = (c: Cause) => c.kind === 'early-persistence' && !c.step;

/**
 * The verdicts of the disk a process crash leaves, per cut: every change kept is the same image
 * whatever the policy that cut there, so one recovery serves every failing state cut after that request.
 */
export class LegalDiskVerdicts {
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
export async function explainsToo(ctx: JudgeContext, recorded: Recorded, cause: Cause, f: JudgedState, legalDisks: LegalDiskVerdicts): Promise<boolean> {
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
    if (keepsNoUnsynced(f.state.id.policy)) return made !== undefined && !(await fails({ state: f.state.id, hypothesis: { fsyncAfter: [], fsyncSkip: [made.op] } }));
    // A torn state's choices shift when a persistence point is left out: it kept the removal by its
    // prefix of directory operations and passes without it, or it fails as the lose-unsynced state
    // of its cut does (what it kept besides changes nothing), and that one passes without the point.
    if (made === undefined) return passesWithoutRemoval(ctx, f, removed.last.op, fails);
    const bare = { afterOp: f.state.id.afterOp, policy: 'lose-unsynced' as const };
    return (await fails({ state: bare })) && !(await fails({ state: bare, hypothesis: { fsyncAfter: [], fsyncSkip: [made.op] } }));
  }
  const units = await ctx.daemon.client.units(f.state.id);
  const unit = units.find((u) => u.kind === 'file' && cause.unit && pathPattern(u.path) === pathPattern(cause.unit.path));
  if (!unit) return false;
  return !(await fails({ state: f.state.id, persist: [{ kind: 'file', ino: unit.ino }] })) && !(await fails({ state: f.state.id, persist: [{ kind: 'file', ino: unit.ino, upTo: 0 }] }));
}

/**
 * A torn state that kept a removal among the unsynced directory operations its prefix persisted
 * (no fsync made it durable): whether the same state with the prefix ending just before the removal
 * passes. (Leaving a persistence point out instead would shift a torn state's other choices.)
 */
async function passesWithoutRemoval(ctx: JudgeContext, f: JudgedState, removedOp: number, fails: (req: Parameters<ProbeFn>[0]) => Promise<boolean>): Promise<boolean> {
  const prefix = f.state.id.dirPrefix ?? 0;
  const units = await ctx.daemon.client.units(f.state.id);
  // The kept directory operations in their order (a rename between two directories is in both); a
  // directory that lost none is not listed, so the prefix is known in full only if all of it is seen.
  const kept = [...new Map(units.flatMap((u) => (u.kind === 'dir' ? u.kept ?? [] : [])).map((c) => [c.seq, c])).values()].sort((a, b) => a.seq - b.seq);
  const at = kept.findIndex((c) => c.op === removedOp);
  return kept.length === prefix && at >= 0 && !(await fails({ state: { ...f.state.id, dirPrefix: at } }));
}
