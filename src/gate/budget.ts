// The gate's budget (pure, clock injected): a time budget (how long is left, and whether new work
// may start), or a work budget (how many suite inputs, or cluster workloads, run; no time bound at
// all, so what the gate does is a function of the seed and the budget, on any machine).
import type { StateCaps } from '../../fusefs/crash-states.js';
import type { ExplainOptions } from '../harness/exhaustive/explain.js';

export type Clock = () => number;

/**
 * A work budget: the suites run exactly this many inputs in the seeded order (a cluster: this many
 * workloads), each judged in full within the state caps, and every bound inside the gate is a count
 * (probes, searches, shrink candidates), never a time. `total`: N inputs in rounds, one input per
 * suite a turn; `perSuite`: each suite its own count (what a time-budgeted run prints to repeat it).
 */
export type WorkBudget = { total: number } | { perSuite: Readonly<Record<string, number>> };

export class Budget {
  private readonly startedMs: number;
  /**
   * `totalMs`: the time budget, or Infinity under a work budget (then nothing is bounded by time:
   * leftMs() is Infinity and nothing expires).
   */
  constructor(
    readonly totalMs: number,
    private readonly now: Clock = Date.now,
  ) {
    if (Number.isNaN(totalMs) || totalMs <= 0) throw new Error(`Budget: totalMs must be a positive number (Infinity under a work budget), got ${totalMs}`);
    this.startedMs = now();
  }
  /** True under a work budget: no time bound anywhere. */
  get untimed(): boolean {
    return this.totalMs === Infinity;
  }
  elapsedMs(): number {
    return this.now() - this.startedMs;
  }
  leftMs(): number {
    return Math.max(0, this.totalMs - this.elapsedMs());
  }
  expired(): boolean {
    return this.leftMs() === 0;
  }
  /**
   * How long until `part` of the allowed overrun past the budget's end is spent (Infinity under a
   * work budget): the room of what may run past the end (an input the floor owes, a known cause's proof).
   */
  overrunLeftMs(part: number): number {
    return this.untimed ? Infinity : this.totalMs + part * allowedOverrunMs(this.totalMs) - this.elapsedMs();
  }
}

/**
 * The reach check's listing under a work budget: with no time bound it judges every journaled state
 * it lists (under a time budget the proof's seconds end it), so it lists as many as a proof judges.
 */
export const UNTIMED_REACH_CAPS: StateCaps = { maxStates: 300, maxStatesPerInterval: 32, sectorPatterns: 1 };

/** A cause search's bounds with no time in them (a work budget): each search bounded by its probes, a run by its searches, a reach by its listing. */
export function untimedBounds(b: Omit<ExplainOptions, 'checkReach'>): Omit<ExplainOptions, 'checkReach'> {
  const { maxMs: _, ...bound } = b.bound;
  return { ...b, bound, proofMs: Infinity, runMs: Infinity, reachCaps: UNTIMED_REACH_CAPS };
}

/** How far past its budget a gate may end: 10 %, or 10 s, whichever is larger (a running input, a proof, the last artifact). */
export function allowedOverrunMs(budgetMs: number): number {
  return Math.max(0.1 * budgetMs, 10_000);
}

/** "--cases 12" or "--cases a=3,b=0": the option that asks for this work budget. */
export function workBudgetOption(w: WorkBudget): string {
  return `--cases ${'total' in w ? w.total : Object.entries(w.perSuite).map(([name, n]) => `${name}=${n}`).join(',')}`;
}

/** "2:05" for 125 000 ms: minutes and seconds, rounded down. */
export function formatClock(ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1000));
  return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, '0')}`;
}

/** "0.6 s", "12.3 s", "2:05": short durations with a decimal, long ones as a clock. */
export function formatDuration(ms: number): string {
  return ms < 60_000 ? `${(ms / 1000).toFixed(1)} s` : formatClock(ms);
}
