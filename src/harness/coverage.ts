// What a crash case, a suite or a gate run actually exercised. A suite that only ever cut after
// the driver exited, or whose faults never fired, checked much less than its name says: the
// suites assert minimum rates of these counts, and the gate prints them.

import type { TraceEntry } from '../../fusefs/protocol.js';
import { pathPattern } from './path-pattern.js';

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
  /**
   * Features the recorded runs (exhaustive mode) or cut runs (random mode) reached: each kind of
   * request against the kind of file it touched ("unlink /page.*", "rename /checkpoint.head.tmp"),
   * and each of the target's events that happened; the value is how many runs reached it. The gate
   * steers generation toward the features seen least.
   */
  features: Record<string, number>;
}

/** The features one run reached (see Coverage.features): successful requests by kind and path pattern, and the target's events. */
export function runFeatures(trace: readonly TraceEntry[], events: Record<string, number>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const e of trace) if (e.result === 0) out[`${e.kind} ${pathPattern(e.path)}`] = 1;
  for (const [name, n] of Object.entries(events)) if (n > 0) out[name] = 1;
  return out;
}

export function emptyCoverage(): Coverage {
  return {
    cases: 0, cutsRequested: 0, cutsLanded: 0, recoveryCutsRequested: 0, recoveryCutsLanded: 0, faultCases: 0, faultsFired: 0,
    tornCuts: 0, tornPartialWrites: 0, intervals: 0, intervalsChecked: 0, intervalsCheckedLoseUnsynced: 0, intervalsCheckedTorn: 0, states: 0, statesCapped: 0, statesVerifiedOnMount: 0, events: {}, features: {},
  };
}

/** Adds `b` into `a` (mutates and returns `a`). */
export function addCoverage(a: Coverage, b: Coverage): Coverage {
  for (const key of Object.keys(a) as (keyof Coverage)[]) {
    if (key === 'events' || key === 'features') continue;
    (a[key] as number) += b[key] as number;
  }
  for (const [name, n] of Object.entries(b.events)) a.events[name] = (a.events[name] ?? 0) + n;
  for (const [name, n] of Object.entries(b.features)) a.features[name] = (a.features[name] ?? 0) + n;
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

/** The features reached, rarest first, with how many runs reached each: "unlink /page.* 3, ...". */
export function formatFeatures(c: Coverage): string {
  return Object.entries(c.features).sort(([a, x], [b, y]) => x - y || (a < b ? -1 : 1)).map(([f, n]) => `${f} ${n}`).join(', ');
}

/** The counts as flat name=value pairs (JUnit properties, JSON). */
export function coverageProperties(c: Coverage): [string, number][] {
  const out: [string, number][] = [];
  for (const [k, v] of Object.entries(c)) {
    if (k === 'events' || k === 'features') for (const [name, n] of Object.entries(v as Record<string, number>).sort()) out.push([`${k}.${name}`, n]);
    else out.push([k, v as number]);
  }
  return out;
}
