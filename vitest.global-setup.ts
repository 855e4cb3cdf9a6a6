// Builds dist/ from the current source before any test runs: tests spawn the compiled daemon and
// drivers, and a stale build would test old code. Incremental (tsconfig.json): only files whose
// output changed are written, so an up-to-date build leaves dist/ as it is.
// Then the mounts a killed earlier run left under any powercut-* temp folder are cleaned: a test's
// gate mounts inside the test's own random folder, which no later run's daemon would look in.
import { execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sweepDeadMounts } from './src/harness/daemon-process.js';

export default async function setup(): Promise<void> {
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  try {
    execFileSync(process.execPath, [tsc, '-p', 'tsconfig.json'], { stdio: 'pipe', timeout: 180_000 });
  } catch (err) {
    const e = err as { stdout?: Buffer; message: string };
    throw new Error(`the build before the tests failed (tsc -p tsconfig.json):\n${e.stdout?.toString() || e.message}`);
  }
  // Only mounts whose daemon is dead (ENOTCONN) are touched: another run's live mount is left alone.
  await sweepDeadMounts(join(tmpdir(), 'powercut-'));
}
