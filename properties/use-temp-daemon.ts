// Test files share one fs daemon on a temporary mount, started before their tests and stopped after.
import { afterAll, beforeAll } from 'vitest';
import { startTempDaemon, type DaemonHandle, type TempDaemon } from '../src/harness/daemon-process.js';

/** Registers the hooks; the returned getter gives the running daemon inside tests. */
export function useTempDaemon(label: string): () => DaemonHandle {
  let fixture: TempDaemon | undefined;
  beforeAll(async () => {
    fixture = await startTempDaemon(label);
  });
  afterAll(async () => {
    await fixture?.stop();
  });
  return () => {
    if (!fixture) throw new Error(`invariant: the '${label}' daemon is used before beforeAll started it`);
    return fixture.daemon;
  };
}
