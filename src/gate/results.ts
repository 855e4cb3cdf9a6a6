// One row of the gate's results: a scenario or a suite, with what it checked and found.
import { addCoverage, emptyCoverage, type Coverage } from '../harness/coverage.js';

export interface GateRow {
  name: string;
  kind: 'scenario' | 'suite';
  /** Crash cases judged: power cuts (random mode, scenarios) or crash states (exhaustive mode). */
  cases: number;
  coverage: Coverage;
  /** Violated checks found (0 = passed). */
  violations: number;
  durationMs: number;
  /** The first violation found, in words, with where to look. */
  failure?: {
    messages: string[];
    artifactDir?: string;
    replay?: string;
    /** Suites: fast-check seed and path of the failing run. */
    seed?: number;
    path?: string;
  };
  /** The tool itself failed (environment or bug), each time it did: not a verdict on the queue. */
  errors: string[];
  /** Exhaustive mode: the caps that left crash states out. */
  capsHit: string[];
}

export function newRow(name: string, kind: GateRow['kind']): GateRow {
  return { name, kind, cases: 0, coverage: emptyCoverage(), violations: 0, durationMs: 0, errors: [], capsHit: [] };
}

export function rowFailed(r: GateRow): boolean {
  return r.violations > 0 || r.errors.length > 0;
}

export interface GateTotals {
  cases: number;
  coverage: Coverage;
  violations: number;
  /** Harness errors (the tool failed, the daemon was restarted). */
  errors: number;
  durationMs: number;
}

export function totals(rows: readonly GateRow[], durationMs: number): GateTotals {
  const coverage = emptyCoverage();
  for (const r of rows) addCoverage(coverage, r.coverage);
  return {
    cases: rows.reduce((n, r) => n + r.cases, 0),
    coverage,
    violations: rows.reduce((n, r) => n + r.violations, 0),
    errors: rows.reduce((n, r) => n + r.errors.length, 0),
    durationMs,
  };
}
