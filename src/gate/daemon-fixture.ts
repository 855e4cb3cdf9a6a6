// The filesystem daemon a gate run uses, one at a time: started once, replaced by a fresh one after
// a failure of the tool (a harness error leaves the daemon in an unknown state), and given up when
// none starts: the run then ends with what it has. Both gate loops (one disk, a cluster) use it.
import type { TempDaemon } from '../harness/daemon-process.js';
import type { GateRow } from '../report/gate-results.js';

export class DaemonFixture {
  /** No daemon could be started after a failure: the run must end. */
  lost = false;
  private daemon: TempDaemon | undefined;

  constructor(
    private readonly start: () => Promise<TempDaemon>,
    /** Called before a daemon is replaced or stopped (serving drivers run on its mount). */
    private readonly beforeStop: () => Promise<void> = async () => {},
    private readonly log: (line: string) => void = () => {},
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

  /** A fresh daemon after a failure of the tool. False (and `row` says why) if none starts. */
  async restart(row: GateRow): Promise<boolean> {
    // The old daemon failed already: its stop's own error would say nothing more.
    await this.stopCurrent().catch(() => undefined);
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
