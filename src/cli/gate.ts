// powercut gate [--time-budget SECONDS] [--seed N] [--junit FILE] [--variant V] [--artifacts DIR]
import path from 'node:path';
import { randomInt } from 'node:crypto';
import { parseCommandArgs, usageFail, type Command } from './usage.js';
import { VARIANT_NAMES } from '../../properties/variants/index.js';
import { SCENARIOS } from '../../scenarios/index.js';
import { runGate } from '../gate/gate.js';
import { gateSuites } from '../gate/suites.js';

export const DEFAULT_TIME_BUDGET_S = 180;
export const DEFAULT_ARTIFACTS_DIR = 'powercut-artifacts';

export const help = `usage: powercut gate [--time-budget SECONDS] [--seed N] [--junit FILE] [--variant V] [--artifacts DIR]

The durability gate: runs every crash scenario (${SCENARIOS.length}), then the power-cut property suites
(${gateSuites().map((s) => s.name).join(', ')}) in turns until the time budget is spent.
Needs Linux with FUSE (/dev/fuse, Debian's fuse and libfuse2). See docs/gate.md.

  --time-budget SECONDS  total time (default ${DEFAULT_TIME_BUDGET_S}); the scenarios always run in full, the
                         suites use what is left
  --seed N               base seed of the property suites (default: random, printed); CI shards give
                         each job its own seed
  --junit FILE           also write a JUnit XML report to FILE
  --variant V            run everything on a known-bad variant of the queue, to see the gate catch it
                         (${VARIANT_NAMES.join(', ')})
  --artifacts DIR        where failure artifacts go (default ./${DEFAULT_ARTIFACTS_DIR}); replay one with
                         'powercut replay DIR/<artifact>'

Prints a live progress line on a terminal (plain lines every few seconds otherwise) and a summary
table at the end.

exit codes: 0 nothing was violated, 1 a violation was found (or the harness failed), 2 usage error`;

function integer(value: string, flag: string, min: number, max: number): number {
  if (!/^-?\d+$/.test(value) || Number(value) < min || Number(value) > max) usageFail(`--${flag} must be an integer in ${min}..${max}, got '${value}'`, help);
  return Number(value);
}

export const run: Command = async (argv) => {
  const { values } = parseCommandArgs(
    {
      args: argv,
      options: {
        'time-budget': { type: 'string' },
        seed: { type: 'string' },
        junit: { type: 'string' },
        variant: { type: 'string' },
        artifacts: { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    },
    help,
  );
  if (values.help) {
    console.log(help);
    return 0;
  }
  const budgetS = values['time-budget'] !== undefined ? integer(values['time-budget'], 'time-budget', 1, 7 * 24 * 3600) : DEFAULT_TIME_BUDGET_S;
  const seed = values.seed !== undefined ? integer(values.seed, 'seed', -0x8000_0000, 0x7fff_ffff) : randomInt(0x7fff_ffff);
  const variant = values.variant;
  if (variant !== undefined && !VARIANT_NAMES.includes(variant)) usageFail(`--variant '${variant}' is not a known variant; valid names: ${VARIANT_NAMES.join(', ')}`, help);
  const artifactRoot = path.resolve(values.artifacts ?? DEFAULT_ARTIFACTS_DIR);

  console.log(
    `powercut gate: ${SCENARIOS.length} scenarios, then property suites for the rest of ${budgetS} s; seed ${seed} ` +
      `(repeat with --seed ${seed})${variant ? `; on known-bad variant ${variant}` : ''}; artifacts in ${artifactRoot}`,
  );
  const report = await runGate({
    timeBudgetMs: budgetS * 1000,
    seed,
    ...(variant !== undefined ? { variant } : {}),
    artifactRoot,
    ...(values.junit !== undefined ? { junitFile: values.junit } : {}),
    out: process.stdout,
  });
  console.log(`\n${report.text}`);
  if (values.junit !== undefined) console.log(`\nJUnit report: ${path.resolve(values.junit)}`);
  console.log(report.passed ? '\ngate passed: no violation found' : '\ngate FAILED: see the failures above; each artifact replays with the command shown');
  return report.passed ? 0 : 1;
};
