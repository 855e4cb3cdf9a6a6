// powercut scenario list | run NAME [--variant V] [--keep-artifacts DIR]
import path from 'node:path';
import { parseCommandArgs, usageFail, type Command } from './usage.js';
import { startTempDaemon } from '../harness/daemon-process.js';
import { VARIANT_NAMES } from '../../properties/variants/index.js';
import { defaultArtifactRoot } from '../harness/crash-run.js';
import { formatTrace } from '../harness/trace-format.js';
import { findScenario, SCENARIOS } from '../../scenarios/index.js';
import { describeCase } from '../../scenarios/scenario.js';
import { runScenario } from '../gate/scenario-run.js';

export const help = `usage: powercut scenario list
       powercut scenario run NAME [--variant V] [--keep-artifacts DIR]

Named, deterministic crash scenarios, each modelling a real durability bug (docs/scenarios.md).

  list                  every scenario: name, the known-bad variant it exposes, what it models
  run NAME              mounts a filesystem on a temporary folder, runs the scenario's crash case
                        on the correct queue, prints the verdict, the violations and the crash
                        point in the trace, and unmounts (also on Ctrl-C)
    --variant V         run it on a known-bad variant instead (${VARIANT_NAMES.join(', ')})
    --keep-artifacts DIR
                        write the failure artifact under DIR (default: $POWERCUT_ARTIFACTS or
                        <tmp>/powercut-artifacts); replay it with 'powercut replay ARTIFACT_DIR'

The correct queue is expected to pass every scenario; the variant a scenario names must fail it.

exit codes: 0 nothing violated, 1 a violation was found (or the run failed), 2 usage error`;

function list(): number {
  const width = Math.max(...SCENARIOS.map((s) => s.name.length));
  const exposesWidth = Math.max(...SCENARIOS.map((s) => s.exposes.length));
  console.log(`${'NAME'.padEnd(width)}  ${'EXPOSES'.padEnd(exposesWidth)}  DESCRIPTION`);
  for (const s of SCENARIOS) console.log(`${s.name.padEnd(width)}  ${s.exposes.padEnd(exposesWidth)}  ${s.summary}`);
  return 0;
}

async function runOne(name: string, variant: string | undefined, artifactRoot: string): Promise<number> {
  let scenario;
  try {
    scenario = findScenario(name);
  } catch (err) {
    usageFail((err as Error).message, help);
  }
  const on = variant === undefined ? 'the correct queue (expected: pass)' : `variant ${variant} (expected: ${variant === scenario.exposes ? 'fail' : 'not stated; it exposes ' + scenario.exposes})`;
  console.log(`scenario ${scenario.name} on ${on}`);
  console.log(`  models: ${scenario.models}`);
  console.log(`  case:   ${describeCase(scenario.case)}`);
  const fixture = await startTempDaemon('scenario');
  try {
    const { row, result } = await runScenario(fixture.daemon, scenario, variant, artifactRoot);
    if (row.error !== undefined) {
      console.error(`powercut scenario: the run itself failed (not a verdict on the queue): ${row.error}`);
      return 1;
    }
    if (!result) throw new Error('invariant: a scenario run without an error has a result');
    for (const [k, cut] of result.cuts.entries()) {
      const timing = k === 0 ? result.case.cut?.timing : result.case.recoveryCut?.cut.timing;
      const around = formatTrace(cut.trace, cut.frozenAt, timing).split('\n');
      const at = around.findIndex((l) => l.startsWith('-----'));
      console.log(`  ${k === 0 ? 'power cut' : 'power cut during recovery'} (last requests before it):`);
      console.log(around.slice(Math.max(0, at - 4), at + 2).map((l) => `    ${l}`).join('\n'));
    }
    console.log(`verdict: ${result.verdict}${result.verdict === 'fail' ? ` (${result.violations.length} violation${result.violations.length === 1 ? '' : 's'})` : ''} in ${(result.durationMs / 1000).toFixed(1)} s`);
    for (const m of row.failure?.messages ?? []) console.log(`  ${m}`);
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
    { args: argv, allowPositionals: true, options: { variant: { type: 'string' }, 'keep-artifacts': { type: 'string' }, help: { type: 'boolean', short: 'h' } } },
    help,
  );
  if (values.help) {
    console.log(help);
    return 0;
  }
  const [sub, ...rest] = positionals;
  if (sub === 'list') {
    if (rest.length || values.variant !== undefined || values['keep-artifacts'] !== undefined) usageFail('scenario list takes no arguments or options', help);
    return list();
  }
  if (sub === 'run') {
    if (rest.length !== 1) usageFail(`scenario run takes exactly one scenario NAME (got ${rest.length}); see 'powercut scenario list'`, help);
    const variant = values.variant;
    if (variant !== undefined && !VARIANT_NAMES.includes(variant)) usageFail(`--variant '${variant}' is not a known variant; valid names: ${VARIANT_NAMES.join(', ')}`, help);
    const root = values['keep-artifacts'] !== undefined ? path.resolve(values['keep-artifacts']) : defaultArtifactRoot();
    return runOne(rest[0], variant, root);
  }
  usageFail(sub === undefined ? 'missing subcommand: list or run' : `unknown subcommand '${sub}': expected list or run`, help);
};
