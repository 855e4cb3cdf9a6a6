// A seed and a work budget decide a gate's verdict on one disk, whatever the machine: the same
// failure keys, causes and exit code, and the same artifact folders, from a run with one recovery
// slot and from a run with four beside two busy loops. The compiled CLI, real mounts, own processes.
// Its one input (seed 21, atomic-file/sync) runs sequentially: a workload with concurrent steps
// interleaves anew on each recording, and the gate's result says how many did (checked here: none).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execa } from 'execa';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { cliSandbox, COMMAND_TIMEOUT_MS, recordVerdict } from '../cli/testing.js';

const GATE = ['gate', '--cases', 'atomic-file/sync=1', '--seed', '21', '--variant', 'no-dir-fsync-new-page', '--policy', 'lose-unsynced'];
/** Busy loops beside the loaded run: as many as this machine's two cores. */
const BUSY_LOOPS = 2;

let sandbox: Awaited<ReturnType<typeof cliSandbox>>;
beforeAll(async () => {
  sandbox = await cliSandbox('powercut-repeat-test-');
});
afterAll(async () => expect(await sandbox.remove(), 'mounts left behind').toEqual([]));

/** A gate of GATE with `slots` recovery slots, its artifacts and result under `name`. */
async function gate(name: string, slots: number) {
  const r = await sandbox.run([...GATE, '--slots', String(slots), '--artifacts', `arts-${name}`, '--json', `${name}.json`]);
  const file = path.join(sandbox.root, `${name}.json`);
  const result = JSON.parse(await readFile(file, 'utf8'));
  return { r, result, verdict: await recordVerdict(`repeat-${name}`, file), artifacts: (await readdir(path.join(sandbox.root, `arts-${name}`))).sort() };
}

describe('a work budget on one disk', () => {
  it('gives the same failure keys, causes, exit code and artifact folders with 1 recovery slot on a quiet machine and with 4 beside two busy loops', async () => {
    const quiet = await gate('quiet', 1);
    expect(quiet.r.exitCode, quiet.r.stdout + quiet.r.stderr).toBe(1);
    expect(quiet.result.repeat).toMatchObject({ option: '--seed 21 --cases atomic-file/sync=1', inputs: 1, interleaved: 0 });
    expect(quiet.r.stdout).toContain('same verdict on any machine: --seed 21 --cases atomic-file/sync=1 (this work budget)');
    // The variant's cause, found by its scenario and by the suite's input, is in the verdict compared.
    expect(quiet.result.failures.map((f: { key: string }) => f.key)).toContain('missing-dir-fsync / create /page.*');
    const loops = Array.from({ length: BUSY_LOOPS }, () => execa(process.execPath, ['-e', 'for (;;) {}'], { reject: false, timeout: COMMAND_TIMEOUT_MS }));
    let loaded: Awaited<ReturnType<typeof gate>>;
    try {
      loaded = await gate('loaded', 4);
    } finally {
      for (const l of loops) l.kill('SIGKILL');
      await Promise.all(loops);
    }
    expect(loaded.r.exitCode, loaded.r.stdout + loaded.r.stderr).toBe(quiet.r.exitCode);
    expect(loaded.verdict).toBe(quiet.verdict);
    expect(loaded.artifacts).toEqual(quiet.artifacts);
  }, 3 * COMMAND_TIMEOUT_MS);
});
