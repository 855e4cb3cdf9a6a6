// Shrinking a failing cluster workload, as the gate's shrink phase does for one disk: ddmin over its
// top-level steps, each candidate recorded afresh and judged by the caller's `fails` (one of its
// crash states of the same cut kind fails the same checks). A recording of several nodes is a
// sample of their interleavings, so the result is 1-minimal for the recordings seen: a step left in
// may be one whose removal failed on that one recording only.
import { BudgetSpent, ddmin } from '../harness/cause/ddmin.js';

export interface ShrunkSteps<T> {
  /** The fewest steps seen failing (all of them when no smaller candidate failed). */
  steps: T[];
  /** Candidates recorded and judged. */
  tried: number;
  /** The bound (its time, or its candidates) was reached before the search ended. */
  cutShort: boolean;
}

/** A shrink's bound: a time (Date.now() ms) under a time budget, a number of candidates under a work budget. */
export interface ShrinkBound {
  endsAtMs: number;
  maxCandidates?: number;
}

/**
 * The smallest subsequence of `steps` (order kept) that `fails` says still fails, by ddmin, within
 * `bound`. `fails(steps)` is taken to hold (the caller saw it); an empty workload is not tried.
 */
export async function shrinkSteps<T>(steps: readonly T[], fails: (subset: readonly T[]) => Promise<boolean>, bound: ShrinkBound, now: () => number = Date.now, triedBefore = 0): Promise<ShrunkSteps<T>> {
  let best = [...steps];
  let tried = 0;
  let cutShort = false;
  try {
    await ddmin(steps, async (subset) => {
      if (subset.length === 0) return false;
      if (bound.endsAtMs !== Infinity && now() >= bound.endsAtMs) throw new BudgetSpent('the shrink\'s time');
      if (triedBefore + tried >= (bound.maxCandidates ?? Infinity)) throw new BudgetSpent(`${bound.maxCandidates} candidates`);
      tried++;
      const failed = await fails(subset);
      if (failed && subset.length < best.length) best = [...subset];
      return failed;
    });
  } catch (err) {
    if (!(err instanceof BudgetSpent)) throw err;
    cutShort = true;
  }
  return { steps: best, tried, cutShort };
}

export interface ShrunkLive<T, P> extends ShrunkSteps<T> {
  /** The pause the smallest failing case keeps (undefined once it failed without it). */
  pause: P | undefined;
  pauseDropped: boolean;
}

/**
 * A live cut's case shrunk: first without its pause (fewer live events), then its steps by ddmin
 * (shrinkSteps), each candidate run by `fails` with the pause kept or not, within `bound`.
 */
export async function shrinkLiveCase<T, P>(steps: readonly T[], pause: P | undefined, fails: (steps: readonly T[], pause: P | undefined) => Promise<boolean>, bound: ShrinkBound, now: () => number = Date.now): Promise<ShrunkLive<T, P>> {
  let kept = pause;
  let tried = 0;
  if (pause !== undefined && (bound.endsAtMs === Infinity || now() < bound.endsAtMs) && (bound.maxCandidates ?? Infinity) > 0) {
    tried++;
    if (await fails(steps, undefined)) kept = undefined;
  }
  const small = steps.length < 2 ? { steps: [...steps], tried: 0, cutShort: false } : await shrinkSteps(steps, (s) => fails(s, kept), bound, now, tried);
  return { ...small, tried: tried + small.tried, pause: kept, pauseDropped: pause !== undefined && kept === undefined };
}
