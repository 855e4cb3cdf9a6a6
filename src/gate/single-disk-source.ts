// The cases of one disk, as a case source of the gate loop (case-source.ts): every scenario of the
// target first, each a unit, then the suites' inputs, one input a unit (suite-inputs.ts: which
// suite's turn it is, and one input judged), until the budget is spent. A new distinct failure is
// explained, shrunk and kept with its artifact as it is found (single-disk-failures.ts).
import { mergeTimeouts } from '../harness/driver-process.js';
import { DriverWorkers } from '../harness/driver-workers.js';
import { startTempDaemon } from '../harness/daemon-process.js';
import { SCENARIOS } from '../../scenarios/index.js';
import type { TargetRef } from '../harness/target.js';
import type { GateRow } from '../report/gate-results.js';
import type { CaseSource, GateContext } from './case-source.js';
import { SCENARIO_FLOOR, type FloorRequirement } from './floor.js';
import { runScenario } from './scenario-run.js';
import { MIN_SLICE_MS } from './scheduler.js';
import { SingleDiskFailures } from './single-disk-failures.js';
import { SuiteInputs } from './suite-inputs.js';
import { DEFAULT_GATE_MODE } from './suites.js';

export { MAX_ERRORS_PER_SUITE } from './suite-inputs.js';

/** The least budget the gate takes: one slice per suite, so each can judge a case (the scenarios run besides). */
export function minimumBudgetMs(suiteCount: number): number {
  return suiteCount * MIN_SLICE_MS;
}

/** The scenarios written for this target. */
export function scenariosOf(targetName: string): typeof SCENARIOS {
  return SCENARIOS.filter((s) => (s.case.target ?? 'powercut-queue') === targetName);
}

/** The scenarios and suites of a single-disk target; `ref` is how its cases name the target. */
export function singleDiskSource(ctx: GateContext, ref: TargetRef): CaseSource {
  const { o, target } = ctx;
  if (o.nodesCut !== undefined || o.liveCuts !== undefined) throw new Error(`nodesCut and liveCuts are for a cluster target; ${target.name} runs on one disk with these settings`);
  const mode = o.mode ?? DEFAULT_GATE_MODE;
  const scenarioRows: GateRow[] = [];
  /** What each row must reach (floor.ts), beside it. */
  const floors = new Map<GateRow, readonly FloorRequirement[]>();
  /** Serving drivers kept alive for the whole run: a driver process start costs tens of milliseconds. */
  const drivers = new DriverWorkers(mergeTimeouts());
  const failures = new SingleDiskFailures(ctx, drivers);
  const suiteInputs = new SuiteInputs(ctx, ref, mode, failures, drivers);
  for (const s of suiteInputs.suites) floors.set(s.row, s.suite.floor);
  const scenarios = scenariosOf(target.name);
  let scenariosRun = 0;

  return {
    unit: mode === 'exhaustive' ? 'crash states' : 'power cuts',
    mode,
    startDaemon: () => startTempDaemon('gate'),
    beforeDaemonStop: () => drivers.stop(),
    // A suite is given up after MAX_ERRORS_PER_SUITE; the others go on.
    maxToolFailures: Infinity,
    // Every suite's row is listed, run or not: a run that stopped early is below its floor, saying which.
    rows: () => [...scenarioRows, ...suiteInputs.suites.map((s) => s.row)],
    floorOf: (row) => floors.get(row) ?? [],
    next() {
      if (scenariosRun < scenarios.length) {
        const sc = scenarios[scenariosRun++];
        return () => scenarioUnit(ctx, failures, sc, (row) => {
          scenarioRows.push(row);
          floors.set(row, SCENARIO_FLOOR);
        });
      }
      const s = suiteInputs.next();
      return s && (() => suiteInputs.run(s));
    },
    stop: async () => {},
    steered: () => suiteInputs.steered(),
    clusterCoverage: () => undefined,
    work: () => suiteInputs.work(),
    judgingShares: () => suiteInputs.judgingShares(),
  };
}

/** One scenario, run in full whatever the budget (a scenario is one exact case); its row is listed (`listRow`) as soon as it ran. */
async function scenarioUnit(ctx: GateContext, failures: SingleDiskFailures, sc: (typeof SCENARIOS)[number], listRow: (row: GateRow) => void): Promise<void> {
  const { o, daemons } = ctx;
  ctx.doing(`scenario ${sc.name}`);
  const { row, result, error } = await runScenario(daemons.current.daemon, sc, o.variant, o.artifactRoot);
  listRow(row);
  const explained = error || !result || result.violations.length === 0 || await failures.withCause(row, result);
  if (row.failure && result) row.failure.key = failures.keyOf(result);
  // No daemon restarted: the fixture is lost, and the loop asks for no more.
  if ((error || !explained) && !(await daemons.restart(row))) return;
  if (result && result.violations.length > 0 && !o.stopOnFirst) await failures.found(row, result);
  const verdict = error ? `ERROR (the tool failed; daemon restarted) ${error.message.split('\n')[0]}` : row.violations > 0 ? `FAIL (${row.failure?.messages[0] ?? ''})` : 'pass';
  ctx.log(`scenario ${sc.name}: ${verdict} [${(row.durationMs / 1000).toFixed(1)} s]`);
}
