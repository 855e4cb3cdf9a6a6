// pollUntil: the event loop runs between its checks. The wait it replaced raced a settled promise
// with a timer, which spins in microtasks: a condition only an event can set was never seen.
import { describe, expect, it } from 'vitest';
import { pollUntil } from './poll-until.js';

describe('pollUntil', () => {
  it('lets the event loop run between checks: a condition a timer sets is seen before the deadline', async () => {
    let asked = false;
    setTimeout(() => (asked = true), 20);
    expect(await pollUntil(() => asked, Date.now() + 10_000)).toBe(true);
  });

  it('the wait it replaced starves the event loop: the same condition is never seen', async () => {
    let asked = false;
    setTimeout(() => (asked = true), 20);
    const settled = Promise.resolve();
    const deadline = Date.now() + 300;
    while (!asked && Date.now() < deadline) await Promise.race([settled, new Promise((r) => setTimeout(r, 10))]);
    expect(asked).toBe(false);
  });

  it('gives up at the deadline', async () => {
    expect(await pollUntil(() => false, Date.now() + 30)).toBe(false);
  });
});
