import { describe, expect, it } from 'vitest';
import { fc, test } from '@fast-check/vitest';
import { AckTracker } from './acks.js';

describe('AckTracker', () => {
  test.prop([fc.integer({ min: 1, max: 50 }).chain((n) => fc.shuffledSubarray([...Array(n).keys()].map((i) => i + 1), { minLength: 0, maxLength: n }))])(
    'first unacked seq is the smallest seq not acked, whatever the ack order',
    (acked) => {
      const tracker = new AckTracker(1);
      const model = new Set<number>();
      for (const seq of acked) {
        tracker.add(seq);
        model.add(seq);
        let expected = 1;
        while (model.has(expected)) expected++;
        expect(tracker.firstUnacked).toBe(expected);
        expect(tracker.pendingOutOfOrder).toBe([...model].filter((s) => s > expected).length);
      }
    },
  );

  it('closing a gap moves first unacked past every out-of-order ack above it', () => {
    const tracker = new AckTracker(10);
    tracker.add(12);
    tracker.add(13, 20);
    expect(tracker.firstUnacked).toBe(10);
    expect(tracker.isAcked(15)).toBe(true);
    expect(tracker.isAcked(11)).toBe(false);
    tracker.add(11);
    tracker.add(10);
    expect(tracker.firstUnacked).toBe(21);
    expect(tracker.pendingOutOfOrder).toBe(0);
  });
});
