// One row of the gate's results: a scenario or a property suite, with what it checked and found.
export interface GateRow {
  name: string;
  kind: 'scenario' | 'suite';
  /** Crash cases run (a property input with three cuts is three cases). */
  cases: number;
  /** Power cuts applied (a case with a cut during recovery has two). */
  cuts: number;
  /** Violated checks found (0 = passed). */
  violations: number;
  durationMs: number;
  /** The first violation found, in words, with where to look. */
  failure?: {
    messages: string[];
    artifactDir?: string;
    replay?: string;
    /** Property suites: fast-check seed and path of the failing run. */
    seed?: number;
    path?: string;
  };
  /** The harness itself failed (environment or bug): not a verdict on the queue. */
  error?: string;
}

export function rowFailed(r: GateRow): boolean {
  return r.violations > 0 || r.error !== undefined;
}

export interface GateTotals {
  cases: number;
  cuts: number;
  violations: number;
  errors: number;
  durationMs: number;
}

export function totals(rows: readonly GateRow[], durationMs: number): GateTotals {
  return {
    cases: rows.reduce((n, r) => n + r.cases, 0),
    cuts: rows.reduce((n, r) => n + r.cuts, 0),
    violations: rows.reduce((n, r) => n + r.violations, 0),
    errors: rows.filter((r) => r.error !== undefined).length,
    durationMs,
  };
}
