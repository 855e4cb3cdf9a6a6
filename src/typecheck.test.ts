// Everything type-checks, tests included (tsconfig.test.json): vitest runs the tests through esbuild,
// which strips types without checking them. A test of its own rather than a step before vitest, so
// its 15-25 s of one core overlap the other test files instead of delaying them all.
import { execa } from 'execa';
import { createRequire } from 'node:module';
import { expect, it } from 'vitest';
import { REPO_ROOT } from './harness/dist-path.js';

const TSC_TIMEOUT_MS = 180_000;

it('the source and the tests type-check (tsc -p tsconfig.test.json)', async () => {
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  const r = await execa(process.execPath, [tsc, '-p', 'tsconfig.test.json'], { cwd: REPO_ROOT, reject: false, timeout: TSC_TIMEOUT_MS });
  expect(r.exitCode, `tsc -p tsconfig.test.json:\n${r.stdout}${r.stderr}`).toBe(0);
}, TSC_TIMEOUT_MS + 10_000);
