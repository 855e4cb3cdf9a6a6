// powercut scenario list | run NAME [--variant V] [--artifacts DIR]
import path from 'node:path';
import { parseCommandArgs, usageFail, type Command } from './usage.js';
import { ARTIFACTS_ENV, defaultArtifactRoot, DEFAULT_ARTIFACTS_DIR } from '../harness/artifacts.js';
import { startTempDaemon } from '../harness/daemon-process.js';
import { describeStartingState, prepareStartingState } from '../harness/starting-state.js';
import { externalTarget } from '../targets/external.js';
import { formatTrace } from '../harness/trace-format.js';
import { findScenario, SCENARIOS } from '../../scenarios/index.js';
import { describeCase } from '../../scenarios/scenario.js';
import { runScenario, tripsAsPromised } from '../gate/scenario-run.js';
import { checkVariant, findTarget } from '../targets/index.js';
import type { ExternalDriver } from '../harness/target.js';

export const help = `usage: powercut scenario list
       powercut scenario run NAME [--variant V | --driver 'CMD ARGS' [--network host]] [--artifacts DIR]

Named, deterministic crash scenarios, each modelling a real durability bug (docs/scenarios.md).

  list                  every scenario: name, target, the known-bad variant it exposes and the
                        check that variant trips, what it models
  run NAME              mounts a filesystem on a temporary folder, runs the scenario's crash case
                        on the correct queue, prints the verdict, the violations and the crash
                        point in the trace, and unmounts (also on Ctrl-C)
    --variant V         run it on a known-bad variant of its target instead
    --driver 'CMD ARGS' run its case (workload, settings, crash point) against your own driver
                        (docs/driver-protocol.md); a crash point naming the built-in queue's
                        files may then never be reached, which the output says
    --network host      with --driver: its processes on the machine's network, not in a network
                        namespace of their own (docs/driver-protocol.md, "Ports and the network")
    --artifacts DIR     write the failure artifact under DIR (default $${ARTIFACTS_ENV}, else
                        ./${DEFAULT_ARTIFACTS_DIR}); replay it with 'powercut replay ARTIFACT_DIR'

The correct queue is expected to pass every scenario; the variant a scenario names must fail the
check it names.

exit codes: 0 nothing violated, 1 a violation was found, 2 usage error, 3 the tool itself failed`;

export const TOOL_FAILED_EXIT = 3;

function list(): number {
  const rows = [['NAME', 'TARGET', 'EXPOSES', 'TRIPS', 'DESCRIPTION'], ...SCENARIOS.map((s) => [s.name, s.case.target ?? 'powercut-queue', s.exposes, s.trips, s.summary])];
  const widths = [0, 1, 2, 3].map((i) => Math.max(...rows.map((r) => r[i].length)));
  for (const r of rows) console.log(r.map((cell, i) => (i < 4 ? cell.padEnd(widths[i]) : cell)).join('  '));
  return 0;
}

async function runOne(name: string, variant: string | undefined, artifactRoot: string, driver?: ExternalDriver): Promise<number> {
  let scenario;
  try {
    scenario = findScenario(name);
  } catch (err) {
    usageFail((err as Error).message, help);
  }
  if (variant !== undefined) {
    try {
      checkVariant(findTarget(scenario.case.target), variant);
    } catch (err) {
      usageFail(`--variant: ${(err as Error).message}`, help);
    }
  }
  const on = driver ? `the driver '${driver.command}' (no expectation stated)`
    : variant === undefined ? 'the correct queue (expected: pass)' : `variant ${variant} (expected: ${variant === scenario.exposes ? `fail ${scenario.trips}` : 'not stated; it exposes ' + scenario.exposes})`;
  console.log(`scenario ${scenario.name} on ${on}`);
  console.log(`  models: ${scenario.models}`);
  console.log(`  case:   ${describeCase(scenario.case)}`);
  const fixture = await startTempDaemon('scenario');
  try {
    if (driver) {
      // The driver's setup first, as the gate runs it: the scenario's case starts from its starting state.
      try {
        const start = await prepareStartingState(fixture.daemon, externalTarget(driver).driver, scenario.case.settings);
        if (start) console.log(`  starting state: ${describeStartingState(start)}`);
      } catch (err) {
        console.error(`powercut scenario: the tool itself failed (not a verdict on the queue): ${err instanceof Error ? err.message : String(err)}`);
        return TOOL_FAILED_EXIT;
      }
    }
    const { result, row, error } = await runScenario(fixture.daemon, scenario, variant, artifactRoot, driver);
    if (error) {
      console.error(`powercut scenario: the tool itself failed (not a verdict on the queue): ${row.errors.join('\n')}`);
      return TOOL_FAILED_EXIT;
    }
    if (!result) throw new Error('invariant: a scenario run without an error has a result');
    for (const [k, cut] of result.cuts.entries()) {
      const timing = k === 0 ? result.case.cut?.timing : result.case.recoveryCut?.cut.timing;
      const around = formatTrace(cut.trace, cut.frozenAt, timing).split('\n');
      const at = around.findIndex((l) => l.startsWith('-----'));
      console.log(`  ${k === 0 ? 'power cut' : 'power cut during recovery'} (last requests before it):`);
      console.log(around.slice(Math.max(0, at - 4), at + 2).map((l) => `    ${l}`).join('\n'));
      if (cut.frozenAt === null && (k === 0 ? result.case.cut : result.case.recoveryCut)) console.log('    (the crash point was not reached: the cut came after the driver exited)');
    }
    console.log(`verdict: ${result.verdict}${result.verdict === 'fail' ? ` (${result.violations.length} violation${result.violations.length === 1 ? '' : 's'})` : ''} in ${(result.durationMs / 1000).toFixed(1)} s`);
    for (const m of row.failure?.messages ?? []) console.log(`  ${m}`);
    if (variant === scenario.exposes) console.log(tripsAsPromised(scenario, result) ? `the variant tripped ${scenario.trips}, as the scenario promises` : `NOTE: the scenario promises ${scenario.trips} on this variant, and it was not tripped`);
    if (row.failure?.artifactDir) {
      console.log(`artifact: ${row.failure.artifactDir}`);
      console.log(`replay:   ${row.failure.replay}`);
    }
    return result.verdict === 'pass' ? 0 : 1;
  } finally {
    await fixture.stop();
  }
}

export const run: Command = async (argv) => {
  const { values, positionals } = parseCommandArgs(
    { args: argv, allowPositionals: true, options: { variant: { type: 'string' }, driver: { type: 'string' }, network: { type: 'string' }, artifacts: { type: 'string' }, help: { type: 'boolean', short: 'h' } } },
    help,
  );
  if (values.help) {
    console.log(help);
    return 0;
  }
  const [sub, ...rest] = positionals;
  if (sub === 'list') {
    if (rest.length || values.variant !== undefined || values.driver !== undefined || values.network !== undefined || values.artifacts !== undefined) usageFail('scenario list takes no arguments or options', help);
    return list();
  }
  if (sub === 'run') {
    if (rest.length !== 1) usageFail(`scenario run takes exactly one scenario NAME (got ${rest.length}); see 'powercut scenario list'`, help);
    if (values.driver !== undefined && values.variant !== undefined) usageFail('--variant belongs to a built-in target; with --driver, put the bad behaviour in the command itself', help);
    if (values.network !== undefined && (values.driver === undefined || values.network !== 'host')) usageFail(`--network takes host, with --driver (got '${values.network}'${values.driver === undefined ? ' without --driver' : ''})`, help);
    const root = values.artifacts !== undefined ? path.resolve(values.artifacts) : defaultArtifactRoot();
    return runOne(rest[0], values.variant, root, values.driver !== undefined ? { command: values.driver, cwd: process.cwd(), ...(values.network === 'host' ? { network: 'host' as const } : {}) } : undefined);
  }
  usageFail(sub === undefined ? 'missing subcommand: list or run' : `unknown subcommand '${sub}': expected list or run`, help);
};
