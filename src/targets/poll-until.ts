// A driver's bounded wait for a state its event loop must bring about (a restart the harness asks
// for on stdin): every check waits on a timer. Awaiting a promise that is already settled resolves
// as a microtask, so a loop of such waits never yields to the event loop: stdin is not read, and
// the state never comes. NATS R3's one-node cut lost its restart that way under load (docs/nats.md).
import { setTimeout as sleep } from 'node:timers/promises';

/** How often a wait checks its condition. */
export const POLL_MS = 10;

/** Waits until `done()` or `deadlineMs` (a Date.now() time): true when it is done. */
export async function pollUntil(done: () => boolean, deadlineMs: number): Promise<boolean> {
  while (!done()) {
    if (Date.now() >= deadlineMs) return false;
    await sleep(POLL_MS);
  }
  return true;
}
