// The gate's phases and their shares of the time budget (pure, clock injected like Budget):
// recording and judging crash states, proving the causes of failures, shrinking them, writing
// artifacts. Phases nest (a run explains its failures while it is judged; a shrink explains its
// inputs): time is counted to the innermost phase entered. Each phase but record+judge may use its
// share at most (causes also what shrinking left unused); record+judge uses what is left, less the
// room kept for the causes of what it finds last (once it has found a failure: a share no failure
// needs goes back to judging) and for the artifacts, so every phase stops with what it has and the
// gate ends on time. Under a work budget no phase has a share: each is bounded by counts
// (budget.ts), and its time is only counted.
import type { TimeShare } from '../harness/time-share.js';
import { formatDuration, type Budget, type Clock } from './budget.js';

export const PHASES = ['record+judge', 'causes', 'shrink', 'artifacts'] as const;
export type Phase = (typeof PHASES)[number];

/**
 * Each phase's share of the budget: record+judge takes the rest (0.6). Causes get a fifth (a search
 * and a proof take seconds each); shrinking 15 % (its first steps are the ones that shrink most);
 * artifacts a twentieth (writing a case and its image takes well under a second).
 */
/** Shrinking one new distinct failure takes at most this long, and all shrinking at most the shrink phase's share. */
export const MAX_SHRINK_MS = 8_000;
/** Below this much of the shrink phase's share no shrinking starts (a shrink step records and judges an input). */
export const MIN_SHRINK_MS = 1_000;
/**
 * Under a work budget, shrinking one new distinct failure tries at most this many smaller inputs (a
 * cluster: candidate workloads): each is recorded, judged and explained in full, a few seconds each
 * (32 of the built-in queue's took 3:23), where a time budget's shrink stops at MAX_SHRINK_MS.
 */
export const MAX_SHRINK_INPUTS = 4;

export const PHASE_SHARES: Readonly<Record<Exclude<Phase, 'record+judge'>, number>> = { causes: 0.2, shrink: 0.15, artifacts: 0.05 };
/** Once it has found a failure, judging keeps at most this part of the budget free for the causes of the failures it finds last. */
export const CAUSES_RESERVE = 0.1;

/** One phase's share and its time used, for the summary and the JSON result. */
export interface PhaseUse {
  phase: Phase;
  /** Its share of the budget (record+judge: what the others leave); none under a work budget. */
  shareMs?: number;
  usedMs: number;
}

export class Phases {
  private readonly usedMs: Record<Phase, number> = { 'record+judge': 0, causes: 0, shrink: 0, artifacts: 0 };
  /** Phases entered and not left, innermost last; the bottom one is always record+judge. */
  private readonly stack: Phase[] = ['record+judge'];
  private sinceMs: number;
  constructor(
    private readonly budget: Budget,
    private readonly now: Clock = Date.now,
    /** Whether the run has found a failure yet: until then judging keeps no room for causes (a share no failure needs is judging's). */
    private readonly failureFound: () => boolean = () => true,
  ) {
    this.sinceMs = now();
  }

  /** The share of the budget a phase may use. */
  shareMs(phase: Phase): number {
    if (phase === 'record+judge') return this.budget.totalMs * (1 - PHASE_SHARES.causes - PHASE_SHARES.shrink - PHASE_SHARES.artifacts);
    return this.budget.totalMs * PHASE_SHARES[phase];
  }

  /** Time counted to a phase so far (the running one included). */
  used(phase: Phase): number {
    return this.usedMs[phase] + (this.stack[this.stack.length - 1] === phase ? this.now() - this.sinceMs : 0);
  }

  /** How long a phase may still run from now (Infinity under a work budget: counts bound it). */
  leftMs(phase: Phase): number {
    if (this.budget.untimed) return Infinity;
    const artifactsLeft = Math.max(0, this.shareMs('artifacts') - this.used('artifacts'));
    const budgetLeft = this.budget.leftMs();
    if (phase === 'artifacts') return budgetLeft;
    // The others leave the artifacts' share unspent; judging also leaves room for the causes of what
    // it finds last, once it has found something (a failure found in the last stretch of a passing
    // run may then stay unexplained: the work budget the summary prints repeats the run in full).
    const causesRoom = this.failureFound() ? Math.min(Math.max(0, this.shareMs('causes') - this.used('causes')), CAUSES_RESERVE * this.budget.totalMs) : 0;
    const free = Math.max(0, budgetLeft - artifactsLeft);
    if (phase === 'record+judge') return Math.max(0, free - causesRoom);
    return Math.max(0, Math.min(free, this.ownLeftMs(phase)));
  }

  /**
   * Causes and shrinking share one pool: causes may use what shrinking has not (a failure named is
   * worth more than a failure made smaller, and a real server's state takes seconds to recover), and
   * shrinking what is left of both.
   */
  private ownLeftMs(phase: 'causes' | 'shrink'): number {
    const left = (p: 'causes' | 'shrink') => this.shareMs(p) - this.used(p);
    return phase === 'causes' ? left('causes') + Math.max(0, left('shrink')) : left('shrink') + Math.min(0, left('causes'));
  }

  deadlineMs(phase: Phase): number {
    return this.now() + this.leftMs(phase);
  }

  /** Counts the time from now to `phase`, until the returned function is called (calls nest). */
  enter(phase: Phase): () => void {
    this.charge();
    this.stack.push(phase);
    let left = false;
    return () => {
      if (left) return;
      left = true;
      this.charge();
      const at = this.stack.lastIndexOf(phase);
      if (at > 0) this.stack.splice(at, 1);
    };
  }

  /** A phase as a share handed down (harness/time-share.ts). */
  share(phase: Phase): TimeShare {
    return { deadlineMs: () => this.deadlineMs(phase), enter: () => this.enter(phase) };
  }

  /** Each phase's share (none under a work budget) and time used, in the order of PHASES. */
  uses(): PhaseUse[] {
    return PHASES.map((phase) => ({ phase, ...(this.budget.untimed ? {} : { shareMs: this.shareMs(phase) }), usedMs: this.used(phase) }));
  }

  private charge(): void {
    const t = this.now();
    this.usedMs[this.stack[this.stack.length - 1]] += t - this.sinceMs;
    this.sinceMs = t;
  }
}

/**
 * "phases: record+judge 31.2 s, causes 6.1 s of 9.0 s, shrink 3.0 s of 4.5 s, artifacts 0.8 s of 2.3 s (budget 45.0 s)";
 * under a work budget (`budgetMs` Infinity) the time each used, without shares.
 */
export function formatPhases(uses: readonly PhaseUse[], budgetMs: number): string {
  const parts = uses.map((u) => `${u.phase} ${formatDuration(u.usedMs)}${u.phase === 'record+judge' || u.shareMs === undefined ? '' : ` of ${formatDuration(u.shareMs)}`}`);
  return `phases: ${parts.join(', ')} (${budgetMs === Infinity ? 'a work budget: no time shares, each phase bounded by counts' : `budget ${formatDuration(budgetMs)}`})`;
}
