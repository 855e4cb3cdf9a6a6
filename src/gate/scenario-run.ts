// Runs one scenario on a running daemon and turns its result into a gate row (shared by
// `powercut scenario run` and `powercut gate`).
import { replayOf } from '../harness/artifacts.js';
import { runCase } from '../harness/crash-run.js';
import type { CaseResult } from '../harness/crash-case.js';
import type { DaemonHandle } from '../harness/daemon-process.js';
import { HarnessError } from '../harness/harness-error.js';
import { caseOf, type Scenario } from '../../scenarios/index.js';
import { newRow, type GateRow } from '../report/gate-results.js';
import type { ExternalDriver } from '../harness/target.js';
import { drawArtifactReport } from '../report/index.js';
import { resolveTarget } from '../targets/index.js';

export interface ScenarioOutcome {
  row: GateRow;
  result?: CaseResult;
  /** Set when the tool failed: the error, with an artifact when one was written. */
  error?: HarnessError;
}

/** True if `result` is the failure the scenario promises on its variant: its check, not a hang. */
export function tripsAsPromised(s: Scenario, result: CaseResult): boolean {
  return result.violations.some((v) => v.check === s.trips && !v.hang);
}

/** Runs the scenario's case on its target, on a known-bad variant of it, or on an external driver instead. */
export async function runScenario(daemon: DaemonHandle, s: Scenario, variant: string | undefined, artifactRoot: string, driver?: ExternalDriver): Promise<ScenarioOutcome> {
  const started = Date.now();
  const row = newRow(s.name, 'scenario');
  try {
    const scenarioCase = caseOf(s, variant);
    const c = driver ? { ...scenarioCase, target: undefined, driver } : scenarioCase;
    const result = await runCase(daemon, resolveTarget(c), c, { artifactRoot });
    await drawArtifactReport(result.artifactDir);
    row.cases = 1;
    row.coverage = result.coverage;
    row.violations = result.violations.length;
    row.durationMs = result.durationMs;
    if (result.violations.length > 0) {
      row.failure = {
        messages: result.violations.map((v) => v.message),
        ...(result.artifactDir ? replayOf(result.artifactDir, c) : {}),
      };
    }
    return { row, result };
  } catch (err) {
    const error = err instanceof HarnessError ? err : new HarnessError(err instanceof Error ? err.message : String(err));
    await drawArtifactReport(error.artifactDir);
    row.errors.push(error.message + (error.artifactDir ? `\nartifact: ${error.artifactDir}` : ''));
    row.durationMs = Date.now() - started;
    return { row, error };
  }
}
