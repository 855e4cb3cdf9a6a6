// The gate's time budget (pure, clock injected): how long is left, and whether new work may start.
export type Clock = () => number;

export class Budget {
  private readonly startedMs: number;
  constructor(
    readonly totalMs: number,
    private readonly now: Clock = Date.now,
  ) {
    if (!Number.isFinite(totalMs) || totalMs <= 0) throw new Error(`Budget: totalMs must be a positive number, got ${totalMs}`);
    this.startedMs = now();
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
}

/** How far past its budget a gate may end: 10 %, or 10 s, whichever is larger (a running input, a proof, the last artifact). */
export function allowedOverrunMs(budgetMs: number): number {
  return Math.max(0.1 * budgetMs, 10_000);
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
