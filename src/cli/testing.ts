// The compiled CLI run as users run it, for the tests of its commands: a folder of the test's own
// under which every command's temporary folders (its mounts among them) go, so a test can check that
// its commands left no mount. Test code: no runtime module imports it (src/layout.test.ts).
import { execa } from 'execa';
import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { distPath } from '../harness/dist-path.js';

const cli = distPath('src/cli.js');

export async function cliSandbox(prefix: string) {
  const root = await mkdtemp(path.join(os.tmpdir(), prefix));
  const commandTmp = path.join(root, 'tmp');
  await mkdir(commandTmp);
  return {
    root,
    /** `powercut ARGS` in `cwd` (the root by default); never rejects: the test reads the exit code. */
    run: (args: string[], cwd = root) => execa(process.execPath, [cli, ...args], { reject: false, timeout: 120_000, forceKillAfterDelay: 10_000, env: { TMPDIR: commandTmp }, cwd }),
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
