// A failure of the tool itself (the fs daemon died, a driver could not be started, a control request
// timed out): never a verdict on the queue. It names what happened to the daemon, so a closed
// control socket is never the whole story.
import type { DaemonHandle } from './daemon-process.js';

export class HarnessError extends Error {
  /** Where the failed case was written, when it was. */
  artifactDir?: string;

  constructor(
    message: string,
    /** Set when the fs daemon died: its exit status and the end of its stderr, in words. */
    readonly daemonDeath?: string,
  ) {
    super(message);
    this.name = 'HarnessError';
  }
}

/** `err` as a HarnessError, with the daemon's death described if it died. */
export async function asHarnessError(err: unknown, daemon: DaemonHandle): Promise<HarnessError> {
  if (err instanceof HarnessError) return err;
  const message = err instanceof Error ? err.message : String(err);
  const death = await daemon.describeDeath();
  return new HarnessError(death ? `${message}\n${death}` : message, death ?? undefined);
}

/**
 * Throws a HarnessError if the fs daemon died: a run on its mount after that failed because of the
 * tool (its mounts answer nothing), whatever the run printed, so it must not be judged.
 */
export async function assertDaemonAlive(daemon: DaemonHandle, what: string): Promise<void> {
  if (!daemon.exitInfo()) return;
  const death = await daemon.describeDeath(0);
  throw new HarnessError(`the filesystem daemon died during ${what}: the runs on its mounts say nothing of the queue${death ? `\n${death}` : ''}`, death ?? undefined);
}
