import { describe, expect, it } from 'vitest';
import type { Violation } from '../harness/oracle.js';
import { compareRerun } from './replay.js';
import { formatSample, REPLAY_EXIT, sampleExit, tallySample } from './replay-verdict.js';
import { replayModeOf } from '../harness/artifacts.js';
import type { CrashCase } from '../harness/crash-case.js';

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

describe('a sampled replay: "reproduced in k of K re-runs", and its exit status', () => {
  const recorded = [v('at-least-once')];
  it('tallies each re-run against the recorded checks, naming the first that reproduced', () => {
    const t = tallySample(recorded, [[v('order')], [], [v('at-least-once')], [v('at-least-once')]]);
    expect(t).toEqual({ reruns: 4, reproduced: 2, different: 1, passed: 1, firstReproduced: 2 });
    expect(formatSample(t, 'its 3 nodes run concurrently')).toMatch(/^REPRODUCED by the full re-run in 2 of 4 re-runs, same checks \(a sample: its 3 nodes run concurrently, .*\); the others: 1 with a different violation, 1 with no violation$/);
  });
  it('says NOT REPRODUCED when no re-run reproduced, with what they found instead', () => {
    const t = tallySample(recorded, [[], [v('order')]]);
    expect(t.firstReproduced).toBeUndefined();
    expect(formatSample(t, 'why')).toMatch(/^NOT REPRODUCED in any of 2 re-runs \(a sample: why, .*\): 1 with a different violation, 1 with no violation$/);
  });
  it('reproduces when the exact stored images do, whatever the re-runs drew', () => {
    expect(sampleExit('reproduced', tallySample(recorded, [[v('order')], []]))).toBe(REPLAY_EXIT.reproduced);
  });
  it('reproduces when any re-run does, even if the stored images pass now (the writer, not the recovery, is at fault)', () => {
    expect(sampleExit('passes', tallySample(recorded, [[], [v('at-least-once')]]))).toBe(REPLAY_EXIT.reproduced);
    expect(sampleExit(undefined, tallySample(recorded, [[v('at-least-once')]]))).toBe(REPLAY_EXIT.reproduced);
  });
  it('is different when nothing reproduced and something found another check; passes now only when all passed', () => {
    expect(sampleExit('different', tallySample(recorded, [[]]))).toBe(REPLAY_EXIT.different);
    expect(sampleExit(undefined, tallySample(recorded, [[], [v('order')]]))).toBe(REPLAY_EXIT.different);
    expect(sampleExit('passes', tallySample(recorded, [[], []]))).toBe(REPLAY_EXIT.passesNow);
  });
});

describe('replayModeOf: which artifacts replay exactly and which are samples', () => {
  const base: CrashCase = { workload: { steps: [{ op: 'write', sizesBytes: [10], waitDurable: true }] }, settings: {}, policy: 'lose-unsynced', seed: 1 };
  it('one process issuing its requests in order is exact', () => {
    expect(replayModeOf(base).mode).toBe('exact');
  });
  it('a workload with a concurrently step is a sample', () => {
    const c: CrashCase = { ...base, workload: { steps: [{ op: 'concurrently', branches: [[{ op: 'write', sizesBytes: [1], waitDurable: false }], [{ op: 'read', maxEvents: 1 }]] }] } };
    expect(replayModeOf(c)).toEqual({ mode: 'sample', why: 'its workload has a concurrently step' });
  });
  it('a cluster (a crash state or a live cut) is a sample, naming its nodes', () => {
    expect(replayModeOf({ ...base, nodes: 3, nodesCut: 'all' } as CrashCase).why).toBe('its 3 nodes run concurrently and the live cut lands among their requests');
    expect(replayModeOf({ ...base, nodes: 3, state: { afterOp: 4, policy: 'lose-unsynced' } } as CrashCase)).toEqual({ mode: 'sample', why: 'its 3 nodes run concurrently' });
  });
});
