// What a crash case, a suite or a gate run actually exercised. A suite that only ever cut after
// the driver exited, or whose faults never fired, checked much less than its name says: the
// suites assert minimum rates of these counts, and the gate prints them.

/** Named among the caps hit when the deadline (the gate's time budget) left crash states unchecked. */
export const TIME_BUDGET_CAP = 'time budget';

export interface Coverage {
  /** Crash cases judged (a random cut case, or one crash state of an exhaustive run). */
  cases: number;
  /** Random cuts asked for a request, and those that froze at it (the rest fell back to after the driver exited). */
  cutsRequested: number;
  cutsLanded: number;
  /** Second cuts during recovery asked for, and those that landed. */
  recoveryCutsRequested: number;
  recoveryCutsLanded: number;
  /** Cases with a fault armed, and those where the filesystem failed at least one request. */
  faultCases: number;
  faultsFired: number;
  /** Power cuts under the torn policy, and writes they kept only in part. */
  tornCuts: number;
  tornPartialWrites: number;
  /**
   * Exhaustive mode: persistence intervals in the recorded runs; those all of whose states were
   * checked, in all and per policy (an interval counts for a policy when its states under that
   * policy were all listed by the caps and all judged); and crash states checked.
   */
  intervals: number;
  intervalsChecked: number;
  intervalsCheckedLoseUnsynced: number;
  intervalsCheckedTorn: number;
  states: number;
  /** States the caps left out (0 unless a cap was hit). */
  statesCapped: number;
  /** States recovered both natively and on the mount, with the same verdict (verifyOnMount). */
  statesVerifiedOnMount: number;
  /** What the workloads did, as the target counts it (e.g. rolls and purges of page files). */
  events: Record<string, number>;
}

export function emptyCoverage(): Coverage {
  return {
    cases: 0, cutsRequested: 0, cutsLanded: 0, recoveryCutsRequested: 0, recoveryCutsLanded: 0, faultCases: 0, faultsFired: 0,
    tornCuts: 0, tornPartialWrites: 0, intervals: 0, intervalsChecked: 0, intervalsCheckedLoseUnsynced: 0, intervalsCheckedTorn: 0, states: 0, statesCapped: 0, statesVerifiedOnMount: 0, events: {},
  };
}

/** Adds `b` into `a` (mutates and returns `a`). */
export function addCoverage(a: Coverage, b: Coverage): Coverage {
  for (const key of Object.keys(a) as (keyof Coverage)[]) {
    if (key === 'events') continue;
    (a[key] as number) += b[key] as number;
  }
  for (const [name, n] of Object.entries(b.events)) a.events[name] = (a.events[name] ?? 0) + n;
  return a;
}

const ratio = (n: number, of: number) => (of === 0 ? '-' : `${n}/${of}`);

/** One line for logs and summaries; only what happened is shown. */
export function formatCoverage(c: Coverage): string {
  const parts = [`${c.cases} cases`];
  if (c.cutsRequested) parts.push(`cuts landed ${ratio(c.cutsLanded, c.cutsRequested)}`);
  if (c.recoveryCutsRequested) parts.push(`recovery cuts landed ${ratio(c.recoveryCutsLanded, c.recoveryCutsRequested)}`);
  if (c.faultCases) parts.push(`faults fired ${ratio(c.faultsFired, c.faultCases)}`);
  if (c.tornCuts) parts.push(`torn cuts ${c.tornCuts} (partial writes kept ${c.tornPartialWrites})`);
  if (c.intervals) {
    parts.push(`intervals checked ${ratio(c.intervalsChecked, c.intervals)} (lose-unsynced ${ratio(c.intervalsCheckedLoseUnsynced, c.intervals)}, torn ${ratio(c.intervalsCheckedTorn, c.intervals)}), ` +
      `crash states ${c.states}${c.statesCapped ? ` (${c.statesCapped} left out by caps)` : ''}`);
  }
  if (c.statesVerifiedOnMount) parts.push(`states verified on the mount ${c.statesVerifiedOnMount}`);
  for (const [name, n] of Object.entries(c.events).sort()) parts.push(`${name} ${n}`);
  return parts.join(', ');
}

/** The counts as flat name=value pairs (JUnit properties, JSON). */
export function coverageProperties(c: Coverage): [string, number][] {
  const out: [string, number][] = [];
  for (const [k, v] of Object.entries(c)) {
    if (k === 'events') for (const [name, n] of Object.entries(v as Record<string, number>).sort()) out.push([`events.${name}`, n]);
    else out.push([k, v as number]);
  }
  return out;
}
