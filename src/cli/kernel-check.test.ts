// `powercut kernel-check`'s command line without a VM: usage errors, and --replay of saved states.
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { KERNEL_CHECK_EXIT, run } from './kernel-check.js';
import { UsageError } from './usage.js';

const regressions = path.join(import.meta.dirname, '..', 'kernel-check', 'regressions');
const tmp = await mkdtemp(path.join(os.tmpdir(), 'kernel-check-cli-'));
afterAll(() => rm(tmp, { recursive: true, force: true }));

async function quietly(argv: string[]): Promise<{ code: number; out: string }> {
  const lines: string[] = [];
  const spy = vi.spyOn(console, 'log').mockImplementation((...a: unknown[]) => void lines.push(a.join(' ')));
  try {
    return { code: await run(argv), out: lines.join('\n') };
  } finally {
    spy.mockRestore();
  }
}

describe('powercut kernel-check', () => {
  it('refuses bad numbers and stray arguments as usage errors', async () => {
    await expect(run(['--histories', '0'])).rejects.toThrow(UsageError);
    await expect(run(['--seed', 'x'])).rejects.toThrow(/--seed must be an integer/);
    await expect(run(['stray'])).rejects.toThrow(/unexpected argument stray/);
    await expect(run(['--replay'])).rejects.toThrow(/--replay needs saved state files/);
  });

  it('--replay judges saved states without a VM: the regressions are journaled states now', async () => {
    const r = await quietly(['--replay', path.join(regressions, 'fsync-after-periodic-commit-create.json')]);
    expect(r.code).toBe(KERNEL_CHECK_EXIT.sound);
    expect(r.out).toMatch(/5\. fsync f0[\s\S]*a state of journaled now/);
  });

  it('--replay exits 1 for a state still outside journaled, naming the nearest model states', async () => {
    const saved = JSON.parse(await readFile(path.join(regressions, 'fsync-after-periodic-commit-create.json'), 'utf8'));
    saved.real.files[0].data = Buffer.alloc(5000, 9).toString('base64'); // bytes no write had
    const file = path.join(tmp, 'outside.json');
    await writeFile(file, JSON.stringify(saved));
    const r = await quietly(['--replay', file]);
    expect(r.code).toBe(KERNEL_CHECK_EXIT.outside);
    expect(r.out).toMatch(/still outside journaled:\n {2}- after step 6: directory operations 2 of 2 \(1 committed\): model files \[f0,f1\], real \[f0\]\n {2}- after step 6: directory operations 1 of 2 \(1 committed\): same names; f0: bytes 0\.\.511 read 512x0x09/);
  });
});
