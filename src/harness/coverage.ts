// What a crash case, a suite or a gate run actually exercised. A suite that only ever cut after
// the driver exited, or whose faults never fired, checked much less than its name says: the
// suites assert minimum rates of these counts, and the gate prints them.

import { CRASH_POLICIES } from '../../fusefs/crash-states.js';
import type { TraceEntry } from '../../fusefs/protocol.js';
import { contractKey, describeContracts, type Contract } from './contract.js';
import { pathPattern } from './path-pattern.js';

/** Named among the caps hit when the deadline (the gate's time budget) left crash states unchecked. */
export const TIME_BUDGET_CAP = 'time budget';

/** What was cut under one crash policy. */
export interface PolicyCoverage {
  /** Exhaustive mode: crash states judged under it. */
  states: number;
  /** Exhaustive mode: crash states the caps listed under it (the gate's floor asks a share of the lose-unsynced ones judged). */
  listed: number;
  /** Power cuts made under it (random cuts, recovery cuts), and those that froze at their request. */
  cuts: number;
  landed: number;
  /** Exhaustive mode: persistence intervals all of whose states under this policy were listed by the caps and judged. */
  intervalsChecked: number;
  /**
   * Exhaustive mode: persistence intervals in which at least one state under this policy was judged
   * (a torn interval offers more states than the caps list, so few are checked in full; this says how
   * many had any). Absent in an older result.
   */
  intervalsReached?: number;
}

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
  /** Writes torn cuts kept only in part. */
  tornPartialWrites: number;
  /**
   * Exhaustive mode: persistence intervals in the recorded runs; those all of whose states were
   * checked under every policy asked (per policy: `policies`); and crash states checked.
   */
  intervals: number;
  intervalsChecked: number;
  states: number;
  /** States the caps left out (0 unless a cap was hit). */
  statesCapped: number;
  /** States recovered both natively and on the mount, with the same verdict (verifyOnMount). */
  statesVerifiedOnMount: number;
  /** By crash policy name: what was cut under it. */
  policies: Record<string, PolicyCoverage>;
  /** The contracts the cases were judged against (contractKey), with how many cases each. */
  contracts: Record<string, number>;
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
    tornPartialWrites: 0, intervals: 0, intervalsChecked: 0, states: 0, statesCapped: 0, statesVerifiedOnMount: 0, policies: {}, contracts: {}, events: {}, features: {},
  };
}

/** The counts of `policy` in `c`, made if none yet (to add to). */
export function policyCoverage(c: Coverage, policy: string): PolicyCoverage {
  return (c.policies[policy] ??= { states: 0, listed: 0, cuts: 0, landed: 0, intervalsChecked: 0, intervalsReached: 0 });
}

/** Counts one case judged against `contract` (from the hello line of its first run, if it printed one). */
export function countContract(c: Coverage, contract: Contract | undefined): void {
  if (contract) c.contracts[contractKey(contract)] = (c.contracts[contractKey(contract)] ?? 0) + 1;
}

const COUNTED_RECORDS = ['events', 'features', 'contracts'] as const;

/** Adds `b` into `a` (mutates and returns `a`). */
export function addCoverage(a: Coverage, b: Coverage): Coverage {
  for (const key of Object.keys(a) as (keyof Coverage)[]) {
    if (key === 'policies' || (COUNTED_RECORDS as readonly string[]).includes(key)) continue;
    (a[key] as number) += b[key] as number;
  }
  for (const key of COUNTED_RECORDS) for (const [name, n] of Object.entries(b[key])) a[key][name] = (a[key][name] ?? 0) + n;
  for (const [policy, p] of Object.entries(b.policies)) {
    const into = policyCoverage(a, policy);
    // A figure a shard's older result lacks counts nothing.
    for (const k of Object.keys(into) as (keyof PolicyCoverage)[]) into[k] = (into[k] ?? 0) + (p[k] ?? 0);
  }
  return a;
}

const ratio = (n: number, of: number) => (of === 0 ? '-' : `${n}/${of}`);

/** Policies in the order the registry names them (as the docs introduce them), others after: summaries list them the same way every time. */
const POLICY_ORDER: readonly string[] = CRASH_POLICIES;
export function policiesInOrder(c: Coverage): [string, PolicyCoverage][] {
  const rank = (p: string) => (POLICY_ORDER.includes(p) ? POLICY_ORDER.indexOf(p) : POLICY_ORDER.length);
  return Object.entries(c.policies).sort(([a], [b]) => rank(a) - rank(b) || (a < b ? -1 : 1));
}

/** One line for logs and summaries; only what happened is shown. */
export function formatCoverage(c: Coverage): string {
  const parts = [`${c.cases} cases`];
  if (c.cutsRequested) parts.push(`cuts landed ${ratio(c.cutsLanded, c.cutsRequested)}`);
  if (c.recoveryCutsRequested) parts.push(`recovery cuts landed ${ratio(c.recoveryCutsLanded, c.recoveryCutsRequested)}`);
  if (c.faultCases) parts.push(`faults fired ${ratio(c.faultsFired, c.faultCases)}`);
  const torn = (c.policies.torn?.states ?? 0) + (c.policies.torn?.cuts ?? 0);
  if (torn) parts.push(`torn cuts ${torn} (partial writes kept ${c.tornPartialWrites})`);
  if (c.intervals) {
    // Intervals belong to the policies exhaustive mode enumerated (a random cut's policy has none).
    // Checked: every state the caps listed in the interval judged; reached: a state judged there (docs/gate.md, "Reading the summary").
    const used = policiesInOrder(c).filter(([, x]) => x.states > 0 || x.intervalsChecked > 0);
    const perPolicy = used.map(([p, x]) => `${p} ${ratio(x.intervalsChecked, c.intervals)}`).join(', ');
    const reached = used.filter(([, x]) => x.intervalsReached !== undefined).map(([p, x]) => `${p} ${ratio(x.intervalsReached!, c.intervals)}`).join(', ');
    parts.push(`intervals checked in full ${ratio(c.intervalsChecked, c.intervals)}${perPolicy ? ` (${perPolicy})` : ''}, ` +
      `${reached ? `intervals with a state judged (${reached}), ` : ''}crash states ${c.states}${c.statesCapped ? ` (${c.statesCapped} left out by caps)` : ''}`);
  }
  if (c.statesVerifiedOnMount) parts.push(`states verified on the mount ${c.statesVerifiedOnMount}`);
  for (const [name, n] of Object.entries(c.events).sort()) parts.push(`${name} ${n}`);
  return parts.join(', ');
}

/** The features reached, rarest first, with how many runs reached each: "unlink /page.* 3, ...". */
export function formatFeatures(c: Coverage): string {
  return Object.entries(c.features).sort(([a, x], [b, y]) => x - y || (a < b ? -1 : 1)).map(([f, n]) => `${f} ${n}`).join(', ');
}

/** "checked against: at-least-once; bounded replay 1 to 1024 (by settings); ...", or undefined when no case declared one. */
export function formatContracts(c: Coverage): string | undefined {
  return Object.keys(c.contracts).length ? `checked against: ${describeContracts(c.contracts)}` : undefined;
}

/** The counts as flat name=value pairs (JUnit properties). */
export function coverageProperties(c: Coverage): [string, number][] {
  const out: [string, number][] = [];
  for (const [k, v] of Object.entries(c)) {
    if (k === 'contracts') continue; // JSON keys; the summary says them in words
    if (k === 'policies') {
      for (const [p, x] of Object.entries(v as Record<string, PolicyCoverage>).sort()) for (const [f, n] of Object.entries(x)) out.push([`policies.${p}.${f}`, n]);
    } else if (k === 'events' || k === 'features') for (const [name, n] of Object.entries(v as Record<string, number>).sort()) out.push([`${k}.${name}`, n]);
    else out.push([k, v as number]);
  }
  return out;
}
