import { describe, expect, it } from 'vitest';
import type { Violation } from '../harness/oracle.js';
import { compareRerun } from './replay.js';

const v = (check: Violation['check']): Violation => ({ check, message: check });

describe('compareRerun: what a replay calls the same failure', () => {
  it('the same checks reproduce', () => {
    expect(compareRerun([v('order'), v('liveness')], [v('liveness'), v('order')])).toEqual({ reproduced: true, notRecurred: [] });
  });
  it('fewer of the recorded checks reproduce, naming the ones that did not fail this time', () => {
    expect(compareRerun([v('order'), v('liveness')], [v('liveness')])).toEqual({ reproduced: true, notRecurred: ['order'] });
  });
  it('a check the artifact did not record is a different failure, even beside a recorded one', () => {
    expect(compareRerun([v('liveness')], [v('liveness'), v('order')]).reproduced).toBe(false);
    expect(compareRerun([v('order')], [v('at-least-once')]).reproduced).toBe(false);
  });
  it('a re-run without violations does not reproduce, nor does any violation of an artifact that recorded none', () => {
    expect(compareRerun([v('order')], []).reproduced).toBe(false);
    expect(compareRerun([], [v('order')]).reproduced).toBe(false);
  });
});
