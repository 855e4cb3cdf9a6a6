// The compiled CLI run as users run it, for the tests of its commands: a folder of the test's own
// under which every command's temporary folders (its mounts among them) go, so a test can check that
// its commands left no mount. Test code: no runtime module imports it (src/layout.test.ts).
import { execa } from 'execa';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { distPath } from '../harness/dist-path.js';
import { repeatableVerdict, type GateResultJson } from '../gate/result-json.js';

const cli = distPath('src/cli.js');

/**
 * A command of a test is killed after this long: a bound on a hang, far above what any takes (a work
 * budget's gate takes what its work takes, several times longer beside a busy loop on every core).
 */
export const COMMAND_TIMEOUT_MS = 480_000;

/** Where a test records what a seed and a work budget determine of its gates (the CI compares a quiet run's with a loaded run's): $POWERCUT_VERDICTS. */
export const VERDICTS_ENV = 'POWERCUT_VERDICTS';

/**
 * Records a gate's repeatable verdict (result-json.ts repeatableVerdict) as `name`.json under
 * $POWERCUT_VERDICTS, when set; only one that repeats exactly (one disk, no input interleaved anew).
 * Returns the verdict, for the test's own comparisons.
 */
export async function recordVerdict(name: string, resultFile: string): Promise<string> {
  const result = JSON.parse(await readFile(resultFile, 'utf8')) as GateResultJson;
  const verdict = repeatableVerdict(result);
  const dir = process.env[VERDICTS_ENV];
  if (dir && result.repeat?.interleaved === 0 && result.cluster === undefined) {
    await mkdir(dir, { recursive: true });
    await writeFile(path.join(dir, `${name}.json`), verdict + '\n');
  }
  return verdict;
}

export async function cliSandbox(prefix: string) {
  const root = await mkdtemp(path.join(os.tmpdir(), prefix));
  const commandTmp = path.join(root, 'tmp');
  await mkdir(commandTmp);
  return {
    root,
    /** `powercut ARGS` in `cwd` (the root by default); never rejects: the test reads the exit code. */
    run: (args: string[], cwd = root) => execa(process.execPath, [cli, ...args], { reject: false, timeout: COMMAND_TIMEOUT_MS, forceKillAfterDelay: 10_000, env: { TMPDIR: commandTmp }, cwd }),
    /** Removes the root; returns the mounts of its commands still listed (none, when each unmounted). */
    remove: async (): Promise<string[]> => {
      const left = (await readFile('/proc/mounts', 'utf8')).split('\n').filter((l) => l.includes(commandTmp));
      await rm(root, { recursive: true, force: true });
      return left;
    },
  };
}

/** How a gate broke its time budget, from its summary's `time:` line (undefined when the budget held). */
export function budgetBroken(stdout: string): string | undefined {
  const line = stdout.split('\n').find((l) => l.startsWith('time: '));
  if (line === undefined) return 'the gate printed no "time:" line';
  return line.includes('the budget did NOT hold') ? line : undefined;
}
