// When the gate's suites get turns (pure, no clock of its own: every time is passed in). Rounds
// give each suite left a turn, starting at another suite each round and seed; a turn is an equal
// share of judging's time left, at least one input's worth, and leaves a slice to each other suite
// the floor still owes a case; an input starts in a turn only if the suite's longest input so far
// still fits.

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
