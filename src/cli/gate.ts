// powercut gate: every scenario of the target, then its property suites for a time or a work budget.
// One walk: the options read and checked (gate-options.ts, with the help text), the gate run on them,
// then its outputs written (the summary, --report, --json) and the verdict said.
import path from 'node:path';
import { writeFile, mkdir } from 'node:fs/promises';
import type { Command } from './usage.js';
import { runGate, scenariosOf } from '../gate/gate.js';
import { GATE_EXIT, type GateReport } from '../gate/gate-report.js';
import { gateResultJson } from '../gate/result-json.js';
import { allowedOverrunMs, formatDuration, workBudgetOption, type WorkBudget } from '../gate/budget.js';
import { writeGateReport } from '../report/index.js';
import { DEFAULT_LIVE_CUTS } from '../gate/cluster-source.js';
import { describeDriverNetwork, driverNetwork } from '../harness/driver-network.js';
import { DEFAULT_NODES_CUT, kindsAsked } from '../faults/cut-kinds.js';
import { gateCommandOf, help, type GateCommand } from './gate-options.js';

export { DEFAULT_TIME_BUDGET_S, help } from './gate-options.js';
export { GATE_EXIT };
export const TOOL_FAILED_EXIT = GATE_EXIT.toolFailed;

export const run: Command = async (argv) => {
  const command = gateCommandOf(argv);
  if (command === 'help') {
    console.log(help);
    return 0;
  }
  announce(command);
  const { options, seed, artifactRoot, junitFile } = command;
  const report = await runGate({ ...options, seed, artifactRoot, ...(junitFile !== undefined ? { junitFile } : {}), out: process.stdout });
  return writeOutputs(command, report);
};

/** The first lines: what the gate runs, on what, for which budget, with which seed (to repeat it). */
function announce(c: GateCommand): void {
  const { options: o, target, nodes, seed, artifactRoot } = c;
  const budgetWords = o.cases ? `a work budget of ${workBudgetWords(o.cases, nodes > 1)}` : `${o.timeBudgetMs! / 1000} s`;
  const repeat = `seed ${seed} (repeat with --seed ${seed})${o.variant ? `; on known-bad variant ${o.variant}` : ''}; artifacts in ${artifactRoot}`;
  if (nodes > 1) {
    const nodesCut = o.nodesCut ?? DEFAULT_NODES_CUT;
    console.log(
      `powercut gate: target ${o.driver ? `${target.name} (${target.summary})` : `${target.name}, a cluster of ${nodes} nodes`}; cuts ${nodesCut} (${kindsAsked(nodesCut, nodes).join(', ')}): ` +
        `offline crash states and ${o.liveCuts ?? DEFAULT_LIVE_CUTS} live cut(s) of each kind per workload, for ${budgetWords}; ` + repeat,
    );
  } else console.log(
    `powercut gate: target ${o.driver ? `${target.name} (${target.summary})` : target.name}, ${o.mode} mode; ${scenariosOf(target.name).length} scenarios, then suites (${c.suites.join(', ')}) ${o.cases ? `for ${budgetWords}` : `for the rest of ${budgetWords}`}; ` + repeat,
  );
  console.log(`driver network: ${describeDriverNetwork(driverNetwork(target.driver.network))}`);
}

/**
 * The summary, then the outputs asked besides (the JUnit file is the gate's own), then the verdict;
 * the exit code: a report or JSON result that could not be written is the tool's failure, unless the
 * queue already failed.
 */
async function writeOutputs(c: GateCommand, report: GateReport): Promise<number> {
  console.log(`\n${report.text}`);
  console.log(timeLine(report.durationMs, c.options.timeBudgetMs));
  if (c.junitFile !== undefined) console.log(`\nJUnit report: ${path.resolve(c.junitFile)}`);
  const reportError = c.reportDir !== undefined ? await writeHtmlReport(c, c.reportDir, report) : undefined;
  const exitCode = reportError !== undefined && report.violations === 0 ? GATE_EXIT.toolFailed : report.exitCode;
  if (c.jsonFile !== undefined && !(await writeJsonResult(c, c.jsonFile, report, exitCode)) && exitCode === GATE_EXIT.passed) return GATE_EXIT.toolFailed;
  // A violation outranks a floor not met in the exit code, but the floor is still said: what was found may not be all there is.
  const floorMissed = report.floor.some((x) => !x.met) ? '; the floor was NOT met either (see "floor NOT met" above): the run checked too little to show what else fails' : '';
  if (exitCode === GATE_EXIT.violation) console.log(`\ngate FAILED: a check was violated; see the failures above (each artifact replays with the command shown)${floorMissed}`);
  else if (exitCode === GATE_EXIT.toolFailed) console.log(`\ngate FAILED: the tool itself failed (${reportError ?? `${report.harnessErrors} harness error(s) above`}), not a verdict on the queue`);
  else if (exitCode === GATE_EXIT.belowFloor) console.log('\ngate FAILED: no violation found, but the gate checked too little to pass (see "floor NOT met" above: what was not reached, and what raises it)');
  else console.log('\ngate passed: no violation found, and the floor was met');
  return exitCode;
}

/** --report DIR: the run's HTML page; what went wrong if it could not be written. */
async function writeHtmlReport(c: GateCommand, dir: string, report: GateReport): Promise<string | undefined> {
  const o = c.options;
  try {
    const page = await writeGateReport(path.resolve(dir), {
      rows: report.rows, failures: report.failures, durationMs: report.durationMs, mode: o.mode, seed: c.seed, target: c.target.name, ...(o.timeBudgetMs !== undefined ? { timeBudgetMs: o.timeBudgetMs } : {}),
      ...(o.cases ? { workBudget: workBudgetOption(o.cases) } : {}),
      ...(o.driver ? { driver: o.driver } : {}),
      ...(o.variant !== undefined ? { variant: o.variant } : {}),
      ...(report.cluster ? { cluster: report.cluster } : {}),
    });
    console.log(`HTML report: ${page}`);
    return undefined;
  } catch (err) {
    const reportError = `could not write the HTML report to ${path.resolve(dir)}: ${err instanceof Error ? err.message : String(err)}`;
    console.error(`powercut gate: ${reportError}`);
    return reportError;
  }
}

/** --json FILE: the whole result with its exit code; false if it could not be written (said on stderr). */
async function writeJsonResult(c: GateCommand, jsonFile: string, report: GateReport, exitCode: number): Promise<boolean> {
  const file = path.resolve(jsonFile);
  try {
    await mkdir(path.dirname(file), { recursive: true });
    await writeFile(file, JSON.stringify({ ...gateResultJson(report, c.seed, c.options), exitCode }, null, 2) + '\n');
    console.log(`JSON result: ${file}`);
    return true;
  } catch (err) {
    console.error(`powercut gate: could not write the JSON result to ${file}: ${err instanceof Error ? err.message : String(err)}`);
    return false;
  }
}

/** "time: 1:02 of a 1:30 budget (...)", or under a work budget (no time budget) how long it took. */
function timeLine(durationMs: number, budgetMs: number | undefined): string {
  if (budgetMs === undefined) return `time: ${formatDuration(durationMs)} (a work budget: no time bound)`;
  const overrunMs = durationMs - budgetMs;
  const allowed = allowedOverrunMs(budgetMs);
  return `time: ${formatDuration(durationMs)} of a ${formatDuration(budgetMs)} budget${overrunMs > 0 ? ` (${formatDuration(overrunMs)} over; ${formatDuration(allowed)} allowed${overrunMs > allowed ? ': the budget did NOT hold' : ''})` : ''}`;
}

/** "12 inputs", "3 workloads", "atomic-file/sync=3, faults=5". */
function workBudgetWords(w: WorkBudget, cluster: boolean): string {
  if ('total' in w) return `${w.total} ${cluster ? 'workload' : 'input'}${w.total === 1 ? '' : 's'}`;
  return Object.entries(w.perSuite).map(([n, k]) => `${n}=${k}`).join(', ');
}
