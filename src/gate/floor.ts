// The gate's floor (pure): what every row must have reached for a pass to mean something. A gate
// that judged no case, whose cuts never landed or whose faults never fired checked nothing, and
// must not pass (as a simulation asserts its coverage counters). Each requirement names the figure
// it reads, its minimum, and the option that raises it.
import type { StatePolicy } from '../../fusefs/crash-states.js';
import { keepsNoUnsynced } from '../../fusefs/model/policies/index.js';
import type { GateRow } from '../report/gate-results.js';

export interface FloorRequirement {
  /** What must be reached, in words: "crash states under torn". */
  what: string;
  /** The row's figure for it. */
  figure: (row: GateRow) => number;
  /** The least figure that passes, for this row (a scenario must land every cut it asks for). */
  min: (row: GateRow) => number;
  /** What the figure is a share of, when it is one (crash states listed), and the share asked in words ("half"). */
  of?: { figure: (row: GateRow) => number; share: string };
  /** How to raise the figure, for the message. */
  raise: string;
}

/** One requirement of one row, judged. */
export interface FloorCheck {
  row: string;
  kind: GateRow['kind'];
  what: string;
  figure: number;
  min: number;
  met: boolean;
  raise: string;
  /** The figure is a share of this many (states listed), and the share asked in words. */
  of?: number;
  share?: string;
}

const BUDGET = 'raise --time-budget';
const one = () => 1;

export const CASES_JUDGED: FloorRequirement = { what: 'cases judged', figure: (r) => r.cases, min: one, raise: BUDGET };

/** Exhaustive mode: at least one crash state judged under `policy` (each policy's first state is listed second or third in a run). */
export function statesUnder(policy: StatePolicy): FloorRequirement {
  return {
    what: `crash states under ${policy}`,
    figure: (r) => r.coverage.policies[policy]?.states ?? 0,
    min: one,
    // The durable-only policy's (lose-unsynced's) first state is listed first: no cap leaves it out.
    raise: keepsNoUnsynced(policy) ? BUDGET : `${BUDGET} (or --max-states, if it is below the number of policies)`,
  };
}

/**
 * Exhaustive mode: of the lose-unsynced crash states the caps listed (one per persistence interval:
 * the power going at each point where what is durable changes), at least this share judged. One
 * state per kind would let a gate pass having judged a sliver of what it listed. Not half: a 30 s
 * gate of the correct queue on a loaded 2-core machine judged 39 of 90 (43 %) in its weakest suite,
 * so half would fail a correct queue for the machine's load; a quarter holds with margin and still
 * fails a run that saw too little of its own workloads (docs/gate.md, "The floor").
 */
export const LOSE_UNSYNCED_SHARE = 0.25;

/** Exhaustive mode: at least `share` of the lose-unsynced states listed judged (docs/gate.md, "The floor"). */
export function shareOfLoseUnsynced(share = LOSE_UNSYNCED_SHARE): FloorRequirement {
  const listed = (r: GateRow) => r.coverage.policies['lose-unsynced']?.listed ?? 0;
  return {
    what: 'lose-unsynced states judged of those listed',
    figure: (r) => r.coverage.policies['lose-unsynced']?.states ?? 0,
    min: (r) => Math.ceil(share * listed(r)),
    of: { figure: listed, share: shareWords(share) },
    raise: BUDGET,
  };
}

/** "half", "a quarter", "10 %", "0.4 %" (a share below a percent keeps its tenth). */
export function shareWords(share: number): string {
  return share === 0.5 ? 'half' : share === 0.25 ? 'a quarter' : `${Number((share * 100).toFixed(1))} %`;
}

/** Random mode: at least one cut under `policy` that froze at its request. */
export function cutsLandedUnder(policy: string): FloorRequirement {
  return { what: `cuts landed under ${policy}`, figure: (r) => r.coverage.policies[policy]?.landed ?? 0, min: one, raise: BUDGET };
}

export const RECOVERY_CUTS_LANDED: FloorRequirement = { what: 'recovery cuts landed', figure: (r) => r.coverage.recoveryCutsLanded, min: one, raise: BUDGET };
export const FAULTS_FIRED: FloorRequirement = { what: 'faults fired', figure: (r) => r.coverage.faultsFired, min: one, raise: BUDGET };

/** A scenario is one exact case: every cut and fault it asks for must happen (else it reproduces nothing). */
export const SCENARIO_FLOOR: FloorRequirement[] = [
  CASES_JUDGED,
  { what: 'cuts landed', figure: (r) => r.coverage.cutsLanded, min: (r) => r.coverage.cutsRequested, raise: 'fix the scenario: its crash point is never reached' },
  { what: 'recovery cuts landed', figure: (r) => r.coverage.recoveryCutsLanded, min: (r) => r.coverage.recoveryCutsRequested, raise: 'fix the scenario: its recovery cut is never reached' },
  { what: 'faults fired', figure: (r) => r.coverage.faultsFired, min: (r) => r.coverage.faultCases, raise: 'fix the scenario: its fault never fires' },
];

/** Judges each row's floor; under a work budget (`work`) what raises a figure is --cases, not --time-budget. */
export function checkFloor(rows: readonly { row: GateRow; floor: readonly FloorRequirement[] }[], work = false): FloorCheck[] {
  return rows.flatMap(({ row, floor }) => floor.map((q) => {
    const figure = q.figure(row);
    const min = q.min(row);
    const raise = work ? q.raise.replace('--time-budget', '--cases') : q.raise;
    return { row: row.name, kind: row.kind, what: q.what, figure, min, met: figure >= min, raise, ...(q.of ? { of: q.of.figure(row), share: q.of.share } : {}) };
  }));
}

/** The floor and the figures against it, in words: per suite its figures, the scenarios in one line; each unmet requirement with what raises it. */
export function formatFloor(checks: readonly FloorCheck[]): string {
  const unmet = checks.filter((c) => !c.met);
  const head = unmet.length === 0
    ? `floor: met (${checks.length} requirements): every suite judged a case, and a crash state or a landed cut under each policy (and a quarter of the lose-unsynced states it listed, where it recovers each state once), a recovery cut or a fault where it cuts recoveries or injects faults; every scenario every cut and fault it asks for`
    : `floor NOT met: ${unmet.length} of ${checks.length} requirements, so the gate checked too little to pass:`;
  const suites = [...new Set(checks.filter((c) => c.kind === 'suite').map((c) => c.row))].map((row) =>
    `  ${row}: ${checks.filter((c) => c.kind === 'suite' && c.row === row).map((c) => `${c.what} ${figureWords(c)}${c.met ? '' : ' (NOT met)'}`).join(', ')}`);
  const scenarios = checks.filter((c) => c.kind === 'scenario');
  const sum = (what: string, f: (c: FloorCheck) => number) => scenarios.filter((c) => c.what === what).reduce((n, c) => n + f(c), 0);
  const scenarioLine = scenarios.length
    ? [`  scenarios: ${['cases judged', 'cuts landed', 'recovery cuts landed', 'faults fired'].map((w) => `${w} ${sum(w, (c) => c.figure)}/${sum(w, (c) => Math.max(c.min, c.figure))}`).join(', ')}`]
    : [];
  return [
    head,
    ...suites,
    ...scenarioLine,
    ...unmet.map((c) => `  NOT met: ${c.kind} ${c.row}: ${c.what} ${figureWords(c)}, needs ${needsWords(c)}; ${c.raise}`),
  ].join('\n');
}

/** "29/40" for a share (judged of listed), else the figure. */
export function figureWords(c: Pick<FloorCheck, 'figure' | 'of'>): string {
  return c.of !== undefined ? `${c.figure}/${c.of}` : String(c.figure);
}

/** "at least 20 (half of 40)", "at least 1", "all 3". */
export function needsWords(c: Pick<FloorCheck, 'min' | 'of' | 'share'>): string {
  if (c.of !== undefined) return `at least ${c.min} (${c.share ?? 'a share'} of ${c.of})`;
  return c.min === 1 ? 'at least 1' : `all ${c.min}`;
}
