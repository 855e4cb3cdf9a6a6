// The filesystem daemon a gate run uses, one at a time: started once, replaced by a fresh one after
// a failure of the tool (a harness error leaves the daemon in an unknown state), and given up when
// none starts, or when the tool failed as often as the run allows (then it is broken, not the queue):
// the run then ends with what it has. The gate loop owns it (gate.ts); the case sources restart it.
import type { TempDaemon } from '../harness/daemon-process.js';
import type { GateRow } from '../report/gate-results.js';

export class DaemonFixture {
  /** The run must end: no daemon could be started after a failure, or the tool failed `maxFailures` times. */
  lost = false;
  private daemon: TempDaemon | undefined;
  /** Failures of the tool so far (each one a restart asked for). */
  private failures = 0;

  constructor(
    private readonly start: () => Promise<TempDaemon>,
    /** Called before a daemon is replaced or stopped (serving drivers run on its mount). */
    private readonly beforeStop: () => Promise<void> = async () => {},
    private readonly log: (line: string) => void = () => {},
    /** The failure of the tool that ends the run instead of a restart (a cluster's: its third); read when one comes, unbounded by default. */
    private readonly maxFailures: () => number = () => Infinity,
  ) {}

  /** Starts the first daemon (a failure here is the caller's: nothing ran yet). */
  async open(): Promise<TempDaemon> {
    this.daemon = await this.start();
    return this.daemon;
  }

  /** The daemon in use, if any (a recording lives in the daemon that made it: compare before using it). */
  get running(): TempDaemon | undefined {
    return this.daemon;
  }

  get current(): TempDaemon {
    if (!this.daemon) throw new Error('invariant: the gate\'s daemon is used before it was started or after it was lost');
    return this.daemon;
  }

  /**
   * A fresh daemon after a failure of the tool. False if the run must end: none starts (`row` says
   * why), or this was the failure that reaches the cap (the row already says what failed).
   */
  async restart(row: GateRow): Promise<boolean> {
    // The old daemon failed already: its stop's own error would say nothing more.
    await this.stopCurrent().catch(() => undefined);
    if (++this.failures >= this.maxFailures()) {
      this.lost = true;
      return false;
    }
    try {
      this.daemon = await this.start();
      return true;
    } catch (err) {
      this.lost = true;
      row.errors.push(`the filesystem daemon could not be restarted, so the gate stopped here: ${err instanceof Error ? err.message : String(err)}`);
      this.log(`${row.name}: ERROR ${row.errors[row.errors.length - 1]}`);
      return false;
    }
  }

  /** Stops the daemon in use, if any (every path out of a gate run). */
  async stop(): Promise<void> {
    await this.stopCurrent();
  }

  private async stopCurrent(): Promise<void> {
    const d = this.daemon;
    this.daemon = undefined;
    await this.beforeStop();
    await d?.stop();
  }
}
