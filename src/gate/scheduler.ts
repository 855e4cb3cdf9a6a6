// When the gate's suites get turns, and when a cluster's next workload starts (pure, no clock of its
// own: every time is passed in). Rounds give each suite left a turn, starting at another suite each
// round and seed, and end when judging's time is spent and the floor owes no suite a case; a turn is
// an equal share of judging's time left, at least one input's worth, and leaves a slice to each other
// suite the floor still owes a case; an input starts in a turn only if the suite's longest input so
// far still fits. A cluster's workloads start while the budget holds one, then once more for a kind
// the floor still owes.

/** A round gives each remaining suite this long at most, so all of them get turns within the budget. */
export const MAX_ROUND_SLICE_MS = 30_000;
/** Below this much budget no new round starts (an input takes up to a few seconds). */
export const MIN_SLICE_MS = 3_000;

/** The active suites of round `round` in turn order: each round (and each seed, i.e. each CI shard) starts at another one. */
export function turnOrder<T>(active: readonly T[], seed: number, round: number): T[] {
  if (active.length === 0) return [];
  const first = (((seed + round) % active.length) + active.length) % active.length;
  return [...active.slice(first), ...active.slice(0, first)];
}

/**
 * How long a suite's turn lasts: an equal share of judging's time left among the active suites
 * (MIN_SLICE_MS..MAX_ROUND_SLICE_MS), less a slice kept for each of `othersOwed` suites that judged
 * no case yet, so one slow input never starves the floor of the others; when the time left cannot
 * hold a slice each, they share it.
 */
export function turnMs(judgeLeftMs: number, activeSuites: number, othersOwed: number): number {
  if (activeSuites < 1) throw new Error(`invariant: a turn is for one of the active suites, but ${activeSuites} are active`);
  const sliceMs = Math.max(MIN_SLICE_MS, Math.min(MAX_ROUND_SLICE_MS, judgeLeftMs / activeSuites));
  return Math.max(Math.min(sliceMs, judgeLeftMs - MIN_SLICE_MS * othersOwed), Math.min(MIN_SLICE_MS, judgeLeftMs / (othersOwed + 1)));
}

/** Whether another input of a suite starts in its turn: one as long as its longest so far must end within the turn and judging's time left. */
export function inputFits(nowMs: number, longestInputMs: number, turnEndsMs: number, judgeLeftMs: number): boolean {
  return nowMs + longestInputMs < turnEndsMs && judgeLeftMs >= Math.max(MIN_SLICE_MS, longestInputMs);
}

/** A suite's turn: the round it is in, and the suites active when that round began (its turn's length counts them). */
export interface Turn<T> {
  suite: T;
  round: number;
  active: readonly T[];
}

/**
 * The rounds of turns: each round queues every suite not done, in turnOrder, when it begins. Below
 * one slice of judging's time left a suite gets its turn only if the floor still owes it a case, and
 * no new round begins unless one is owed. Done for good once a round finds nothing to give.
 */
export class Rounds<T> {
  private round = -1;
  private active: T[] = [];
  private queued: T[] = [];
  private over = false;

  constructor(
    private readonly suites: readonly T[],
    private readonly seed: number,
    private readonly judge: {
      /** Judging's time left now. */
      leftMs: () => number;
      /** The suite is given up, or ended at its first failure. */
      done: (suite: T) => boolean;
      /** The floor still owes the suite a case (it judged none, and may still start one). */
      owed: (suite: T) => boolean;
    },
  ) {}

  /** The next turn, or undefined when the rounds are over. */
  next(): Turn<T> | undefined {
    while (!this.over) {
      const suite = this.queued.shift();
      if (suite !== undefined) {
        if (this.judge.leftMs() < MIN_SLICE_MS && !this.judge.owed(suite)) continue;
        return { suite, round: this.round, active: this.active };
      }
      this.round++;
      this.active = this.suites.filter((s) => !this.judge.done(s));
      if (this.active.length === 0 || (this.judge.leftMs() < MIN_SLICE_MS && !this.active.some(this.judge.owed))) this.over = true;
      else this.queued = turnOrder(this.active, this.seed, this.round);
    }
    return undefined;
  }
}

/**
 * Whether a cluster gate starts another workload: while the budget left holds one (`minMs`: its
 * recording and a state); past that, one more only if the floor still owes a cut kind a case, and only once
 * (`overtimeUsed`: it ran already), so a kind with no case yet is given one workload, never two.
 */
export function nextWorkload(leftMs: number, minMs: number, overtimeUsed: boolean, floorOwes: boolean): 'start' | 'overtime' | 'none' {
  if (leftMs >= minMs) return 'start';
  return overtimeUsed || !floorOwes ? 'none' : 'overtime';
}
