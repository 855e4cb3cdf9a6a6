// What a replay concludes (pure): one re-run against the recorded violations, a sample of re-runs
// tallied as "reproduced in k of K", and the exit status of an exact replay or a sampled one.
import { violatedChecks, type Violation } from '../harness/oracle.js';

/** What a replay found, as its exit code. */
export const REPLAY_EXIT = { passesNow: 0, reproduced: 1, usage: 2, different: 3, toolFailed: 4 } as const;

/** At most this many re-runs of a sample (`--reruns`): a cluster's re-run takes seconds to a minute, and replay must end. */
export const MAX_REPLAY_RERUNS = 100;

/**
 * A re-run reproduces an artifact when every check it fails is one the artifact recorded. It may fail
 * fewer: one crash state of a concurrent workload can show its damage through fewer checks in another
 * interleaving (a drain that stops early is not judged for holes). A check the artifact never recorded
 * is a different failure.
 */
export function compareRerun(recorded: readonly Violation[], rerun: readonly Violation[]): { reproduced: boolean; notRecurred: string[] } {
  const before = new Set(recorded.map((v) => v.check));
  const now = new Set(rerun.map((v) => v.check));
  return { reproduced: now.size > 0 && [...now].every((c) => before.has(c)), notRecurred: [...before].filter((c) => !now.has(c)).sort() };
}

export type RerunVerdict = 'reproduced' | 'passes' | 'different';

export function verdictOf(recorded: readonly Violation[], rerun: readonly Violation[]): RerunVerdict {
  return rerun.length === 0 ? 'passes' : compareRerun(recorded, rerun).reproduced ? 'reproduced' : 'different';
}

const checksOf = (vs: readonly Violation[]) => violatedChecks(vs).join(', ');

/** One re-run in a line: "REPRODUCED (at-least-once)", "DIFFERENT violation (order)", "no violation". */
export function describeRerun(recorded: readonly Violation[], rerun: readonly Violation[]): string {
  const v = verdictOf(recorded, rerun);
  return v === 'passes' ? 'no violation' : v === 'reproduced' ? `REPRODUCED (the recorded checks: ${checksOf(rerun)})` : `DIFFERENT violation (${checksOf(rerun)}; recorded: ${checksOf(recorded) || 'none'})`;
}

/** A sample of re-runs, counted by verdict. */
export interface SampleTally {
  reruns: number;
  reproduced: number;
  different: number;
  passed: number;
  /** The first re-run that reproduced, by index (its cause is checked), if any did. */
  firstReproduced?: number;
}

export function tallySample(recorded: readonly Violation[], reruns: readonly (readonly Violation[])[]): SampleTally {
  const verdicts = reruns.map((r) => verdictOf(recorded, r));
  const first = verdicts.indexOf('reproduced');
  return {
    reruns: reruns.length,
    reproduced: verdicts.filter((v) => v === 'reproduced').length,
    different: verdicts.filter((v) => v === 'different').length,
    passed: verdicts.filter((v) => v === 'passes').length,
    ...(first >= 0 ? { firstReproduced: first } : {}),
  };
}

/** The sample in words, led by what matters: "REPRODUCED by the full re-run in 3 of 5 re-runs, same checks (a sample: why)". */
export function formatSample(t: SampleTally, why: string): string {
  const others = [t.different ? `${t.different} with a different violation` : '', t.passed ? `${t.passed} with no violation` : ''].filter(Boolean).join(', ');
  const sample = `a sample: ${why}, so every re-run interleaves the requests anew`;
  const reruns = `${t.reruns} re-run${t.reruns === 1 ? '' : 's'}`;
  if (t.reproduced > 0) return `REPRODUCED by the full re-run in ${t.reproduced} of ${reruns}, same checks (${sample})${others ? `; the others: ${others}` : ''}`;
  return `NOT REPRODUCED in ${t.reruns === 1 ? 'its' : 'any of'} ${reruns} (${sample}): ${others}`;
}

/**
 * The exit status of a sampled replay. The stored images' verdict (when there were images of every
 * disk) is exact; the re-runs are draws. It reproduces if the stored images fail the recorded checks
 * or any re-run does; it is different if neither reproduces and either found another check; it
 * passes now only if the images pass (or there were none) and every re-run passed.
 */
export function sampleExit(images: RerunVerdict | undefined, t: SampleTally): number {
  if (images === 'reproduced' || t.reproduced > 0) return REPLAY_EXIT.reproduced;
  if (images === 'different' || t.different > 0) return REPLAY_EXIT.different;
  return REPLAY_EXIT.passesNow;
}

/** The stored images' verdict in a line: exact, so it leads with REPRODUCED or not. */
export function describeImagesVerdict(v: RerunVerdict, what: string): string {
  if (v === 'reproduced') return `REPRODUCED exactly from ${what}: the recorded checks fail on the very disk state the failure saw`;
  if (v === 'different') return `DIFFERENT violation from ${what} (exact: the very disk state the failure saw)`;
  return `NOT REPRODUCED from ${what}: recovering it passes now (exact: the very disk state the failure saw)`;
}
