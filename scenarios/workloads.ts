// Step builders shared by the scenarios, so each scenario file reads as its story.
import type { Step } from '../src/harness/workload.js';

/** Small events: one record fits one 512-byte sector, so only the crash point decides what survives. */
export const SMALL_EVENT_BYTES = 100;

/** `count` writers at once, each `sizeBytes`; with waitDurable each waits for its seq to be durable. */
export function write(count: number, waitDurable: boolean, sizeBytes = SMALL_EVENT_BYTES): Step {
  return { op: 'write', sizesBytes: Array.from({ length: count }, () => sizeBytes), waitDurable };
}

/** `count` events one after another, each waited for until durable (each its own fsync). */
export function durableWrites(count: number, sizeBytes = SMALL_EVENT_BYTES): Step[] {
  return Array.from({ length: count }, () => write(1, true, sizeBytes));
}
