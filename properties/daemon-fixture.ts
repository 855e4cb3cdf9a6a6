// One fs daemon per test file (or gate run), on a fresh temporary mountpoint; reused via reset.
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { startDaemon, type DaemonHandle } from '../src/harness/daemon-process.js';

export interface TestDaemon {
  daemon: DaemonHandle;
  /** Unmounts, stops the daemon and removes the temporary folder; idempotent. */
  stop(): Promise<void>;
}

export async function startTestDaemon(label: string): Promise<TestDaemon> {
  const dir = await mkdtemp(path.join(os.tmpdir(), `powercut-${label}-`));
  let daemon: DaemonHandle;
  try {
    daemon = await startDaemon({ mountpoint: path.join(dir, 'mnt'), socketPath: path.join(dir, 'control.sock') });
  } catch (err) {
    await rm(dir, { recursive: true, force: true });
    throw err;
  }
  let stopped: Promise<void> | undefined;
  return {
    daemon,
    stop: () =>
      (stopped ??= (async () => {
        await daemon.stop();
        await rm(dir, { recursive: true, force: true });
      })()),
  };
}
