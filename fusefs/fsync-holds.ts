// Slow fsyncs on purpose (the schedule of a recorded run): each fsync and fsyncdir is held for a
// seeded delay before it completes. A program that tells its caller "durable" before the fsync that
// makes it so has completed then prints (and marks) that line while the fsync is still in flight,
// so a crash state between the two shows the lie. An fsync covers the changes made before it arrived
// (the model's changeCount then), not what was written while it was held. Pure but for the timer.
import { Prng } from './model/prng.js';

/** The schedule as a case stores it: the same seed gives the same delays, in the order fsyncs arrive. */
export interface FsyncHoldSchedule {
  seed: number;
  /**
   * Each fsync completes at once or is held this long, half and half (seeded): long holds are what
   * catches a confirmation that waits a while before it stops waiting.
   */
  maxHoldMs: number;
}

/** Longest hold the daemon accepts: a schedule is a nudge, not a hang. */
export const MAX_FSYNC_HOLD_MS = 1_000;

export class FsyncHolds {
  private readonly prng: Prng;

  constructor(readonly schedule: FsyncHoldSchedule) {
    if (!Number.isInteger(schedule.maxHoldMs) || schedule.maxHoldMs < 0 || schedule.maxHoldMs > MAX_FSYNC_HOLD_MS) {
      throw new Error(`invariant: fsync hold maxHoldMs must be an integer in 0..${MAX_FSYNC_HOLD_MS}, got ${schedule.maxHoldMs}`);
    }
    this.prng = new Prng(schedule.seed);
  }

  /** How long the next fsync is held, in ms. */
  nextMs(): number {
    return this.prng.coin() ? this.schedule.maxHoldMs : 0;
  }
}
