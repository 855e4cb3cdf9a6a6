// Runs one scenario on a running daemon and turns its result into a gate row (shared by
// `powercut scenario run` and `powercut gate`).
import { replayCommand } from '../harness/artifacts.js';
import { runCase, type CaseResult } from '../harness/crash-run.js';
import type { DaemonHandle } from '../harness/daemon-process.js';
import { caseOf, type Scenario } from '../../scenarios/index.js';
import type { GateRow } from './results.js';

export interface ScenarioOutcome {
  row: GateRow;
  result?: CaseResult;
}

export async function runScenario(daemon: DaemonHandle, s: Scenario, variant: string | undefined, artifactRoot: string): Promise<ScenarioOutcome> {
  const started = Date.now();
  try {
    const result = await runCase(daemon, caseOf(s, variant), { artifactRoot });
    const row: GateRow = {
      name: s.name,
      kind: 'scenario',
      cases: 1,
      cuts: result.cuts.length,
      violations: result.violations.length,
      durationMs: result.durationMs,
    };
    if (result.violations.length > 0) {
      row.failure = {
        messages: result.violations.map((v) => v.message),
        ...(result.artifactDir ? { artifactDir: result.artifactDir, replay: replayCommand(result.artifactDir) } : {}),
      };
    }
    return { row, result };
  } catch (err) {
    const error = err instanceof Error ? err.message : String(err);
    return { row: { name: s.name, kind: 'scenario', cases: 1, cuts: 0, violations: 0, durationMs: Date.now() - started, error } };
  }
}
