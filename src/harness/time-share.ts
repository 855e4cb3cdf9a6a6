// A share of a time budget handed down to work that cannot see the budget (a run's cause search,
// its artifacts): when the share ends, and how the time spent inside it is counted. Work stops
// starting new steps at the deadline and keeps what it has; nothing is killed.
export interface TimeShare {
  /** When this share ends (Date.now() ms); read when a step is about to start, so it follows the budget as it is spent. */
  deadlineMs(): number;
  /** Counts the time from now to this share, until the returned function is called. */
  enter(): () => void;
}

/** Runs `work` counted to `share` (when given). */
export async function within<T>(share: TimeShare | undefined, work: () => Promise<T>): Promise<T> {
  const leave = share?.enter();
  try {
    return await work();
  } finally {
    leave?.();
  }
}
