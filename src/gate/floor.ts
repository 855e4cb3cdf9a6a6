// The gate's floor (pure): what every row must have reached for a pass to mean something. A gate
// that judged no case, whose cuts never landed or whose faults never fired checked nothing, and
// must not pass (as a simulation asserts its coverage counters). Each requirement names the figure
// it reads, its minimum, and the option that raises it.
import type { GateRow } from '../report/gate-results.js';

export interface FloorRequirement {
  /** What must be reached, in words: "crash states under torn". */
  what: string;
  /** The row's figure for it. */
  figure: (row: GateRow) => number;
  /** The least figure that passes, for this row (a scenario must land every cut it asks for). */
  min: (row: GateRow) => number;
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
}

const BUDGET = 'raise --time-budget';
const one = () => 1;

export const CASES_JUDGED: FloorRequirement = { what: 'cases judged', figure: (r) => r.cases, min: one, raise: BUDGET };

/** Exhaustive mode: at least one crash state judged under `policy` (each policy's first state is listed second or third in a run). */
export function statesUnder(policy: string): FloorRequirement {
  return {
    what: `crash states under ${policy}`,
    figure: (r) => r.coverage.policies[policy]?.states ?? 0,
    min: one,
    raise: policy === 'lose-unsynced' ? BUDGET : `${BUDGET} (or --max-states, if it is below the number of policies)`,
  };
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

export function checkFloor(rows: readonly { row: GateRow; floor: readonly FloorRequirement[] }[]): FloorCheck[] {
  return rows.flatMap(({ row, floor }) => floor.map((q) => {
    const figure = q.figure(row);
    const min = q.min(row);
    return { row: row.name, kind: row.kind, what: q.what, figure, min, met: figure >= min, raise: q.raise };
  }));
}

/** The floor and the figures against it, in words: per suite its figures, the scenarios in one line; each unmet requirement with what raises it. */
export function formatFloor(checks: readonly FloorCheck[]): string {
  const unmet = checks.filter((c) => !c.met);
  const head = unmet.length === 0
    ? `floor: met (${checks.length} requirements): every suite judged a case, and a crash state or a landed cut under each policy, a recovery cut or a fault where it cuts recoveries or injects faults; every scenario every cut and fault it asks for`
    : `floor NOT met: ${unmet.length} of ${checks.length} requirements, so the gate checked too little to pass:`;
  const suites = [...new Set(checks.filter((c) => c.kind === 'suite').map((c) => c.row))].map((row) =>
    `  ${row}: ${checks.filter((c) => c.kind === 'suite' && c.row === row).map((c) => `${c.what} ${c.figure}${c.met ? '' : ' (NOT met)'}`).join(', ')}`);
  const scenarios = checks.filter((c) => c.kind === 'scenario');
  const sum = (what: string, f: (c: FloorCheck) => number) => scenarios.filter((c) => c.what === what).reduce((n, c) => n + f(c), 0);
  const scenarioLine = scenarios.length
    ? [`  scenarios: ${['cases judged', 'cuts landed', 'recovery cuts landed', 'faults fired'].map((w) => `${w} ${sum(w, (c) => c.figure)}/${sum(w, (c) => Math.max(c.min, c.figure))}`).join(', ')}`]
    : [];
  return [
    head,
    ...suites,
    ...scenarioLine,
    ...unmet.map((c) => `  NOT met: ${c.kind} ${c.row}: ${c.what} ${c.figure}, needs ${c.min === 1 ? 'at least 1' : `all ${c.min}`}; ${c.raise}`),
  ].join('\n');
}
