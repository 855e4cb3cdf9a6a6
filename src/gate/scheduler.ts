// Which suite's input the gate runs next, and when a cluster's next workload starts (pure, no clock
// of its own: every time is passed in). A turn is one input of one suite, run to its end.
// Under a work budget (WorkTurns) the turns go in rounds, one input per suite a round, each round
// (and each seed) starting at another suite, until the budget's inputs are given: the order is a
// function of the seed alone. Under a time budget (TimeShares) the suite that has used the least
// judging time for its weight goes next, so each suite gets its share of the time whatever its
// inputs cost: a suite whose inputs take 25 s gets as much time as one whose inputs take 1 s (it
// runs fewer of them), and a cheap suite never runs input after input while a slow one waits.

/** Below this much of judging's time no new input starts, except for a suite the floor still owes a case. */
export const MIN_SLICE_MS = 3_000;

/** The active suites of round `round` in turn order: each round (and each seed, i.e. each CI shard) starts at another one. */
export function turnOrder<T>(active: readonly T[], seed: number, round: number): T[] {
  if (active.length === 0) return [];
  const first = (((seed + round) % active.length) + active.length) % active.length;
  return [...active.slice(first), ...active.slice(0, first)];
}

/** What a work budget asks (budget.ts WorkBudget), with the per-suite counts looked up by suite. */
export type WorkAsk<T> = { total: number } | { inputsOf: (suite: T) => number };

/**
 * A work budget's turns: rounds of one input per suite still running (not done, and under a
 * per-suite budget, with inputs left), in turnOrder, until the budget's inputs are all given. A
 * suite done (given up, or ended at its first failure) is left out from then on; under a total,
 * its inputs go to the others.
 */
export class WorkTurns<T> {
  private round = 0;
  private queued: T[] = [];
  private given = 0;
  private readonly taken = new Map<T, number>();

  constructor(
    private readonly suites: readonly T[],
    private readonly seed: number,
    private readonly ask: WorkAsk<T>,
    private readonly done: (suite: T) => boolean,
  ) {
    if ('total' in ask && !(Number.isInteger(ask.total) && ask.total >= 0)) throw new Error(`invariant: a work budget is a whole number of inputs, got ${ask.total}`);
  }

  /** Inputs handed to `suite` so far. */
  inputsOf(suite: T): number {
    return this.taken.get(suite) ?? 0;
  }

  /** The suite whose input is next, or undefined when the budget is spent (or no suite is left). */
  next(): T | undefined {
    for (;;) {
      if ('total' in this.ask && this.given >= this.ask.total) return undefined;
      const suite = this.queued.shift();
      if (suite === undefined) {
        const active = this.suites.filter((s) => this.wants(s));
        if (active.length === 0) return undefined;
        this.queued = turnOrder(active, this.seed, this.round++);
        continue;
      }
      if (!this.wants(suite)) continue;
      this.given++;
      this.taken.set(suite, this.inputsOf(suite) + 1);
      return suite;
    }
  }

  private wants(s: T): boolean {
    return !this.done(s) && ('total' in this.ask || this.inputsOf(s) < this.ask.inputsOf(s));
  }
}

/** What TimeShares reads of the run, now. */
export interface ShareJudge<T> {
  /** Judging's time left now. */
  leftMs: () => number;
  /** The suite is given up, or ended at its first failure. */
  done: (suite: T) => boolean;
  /** The floor still owes the suite a case (it judged none, and may still start one). */
  owed: (suite: T) => boolean;
  /** Judging time the suite's inputs have used so far. */
  usedMs: (suite: T) => number;
  /** The suite's weight: its share of judging's time is its weight over the sum of the weights of the suites running. */
  weight: (suite: T) => number;
}

/**
 * A time budget's turns: the running suite that has used the least judging time for its weight goes
 * next (ties in the seed's turn order). Below MIN_SLICE_MS of judging's time left only a suite the
 * floor still owes a case gets a turn; once none is owed, the turns are over for good.
 */
export class TimeShares<T> {
  private over = false;

  constructor(
    private readonly suites: readonly T[],
    private readonly seed: number,
    private readonly judge: ShareJudge<T>,
  ) {}

  next(): T | undefined {
    if (this.over) return undefined;
    const active = turnOrder(this.suites.filter((s) => !this.judge.done(s)), this.seed, 0);
    const owed = active.find((s) => this.judge.owed(s));
    if (active.length === 0 || (this.judge.leftMs() < MIN_SLICE_MS && owed === undefined)) {
      this.over = true;
      return undefined;
    }
    if (this.judge.leftMs() < MIN_SLICE_MS) return owed;
    const share = (s: T) => {
      const w = this.judge.weight(s);
      if (!(w > 0)) throw new Error(`invariant: a suite's weight is positive, got ${w}`);
      return this.judge.usedMs(s) / w;
    };
    return active.reduce((best, s) => (share(s) < share(best) ? s : best));
  }
}

/**
 * Whether a cluster gate starts another workload under a time budget: while the budget left holds
 * one (`minMs`: its recording and a state); past that, one more only if the floor still owes a cut
 * kind a case, and only once (`overtimeUsed`: it ran already), so a kind with no case yet is given
 * one workload, never two.
 */
export function nextWorkload(leftMs: number, minMs: number, overtimeUsed: boolean, floorOwes: boolean): 'start' | 'overtime' | 'none' {
  if (leftMs >= minMs) return 'start';
  return overtimeUsed || !floorOwes ? 'none' : 'overtime';
}
