// Builds dist/ from the current source before any test runs: tests spawn the compiled daemon and
// drivers, and a stale build would test old code. Incremental (tsconfig.json): only files whose
// output changed are written, so an up-to-date build leaves dist/ as it is.
import { execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';

export default function setup(): void {
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  try {
    execFileSync(process.execPath, [tsc, '-p', 'tsconfig.json'], { stdio: 'pipe', timeout: 180_000 });
  } catch (err) {
    const e = err as { stdout?: Buffer; message: string };
    throw new Error(`the build before the tests failed (tsc -p tsconfig.json):\n${e.stdout?.toString() || e.message}`);
  }
}
