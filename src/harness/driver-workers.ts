// Serving drivers kept alive across crash cases: a driver process starts in tens of milliseconds
// (Node's start-up and module loading), which exhaustive mode would otherwise pay for every
// recovery slot of every recorded run. The owner (a suite, the gate, a benchmark) stops them.
// (A recorded run gets a process of its own: no process of it may be alive at recovery.)
import { DriverWorker, type DriverCommand, type DriverTimeouts } from './driver-process.js';

export class DriverWorkers {
  private readonly workers = new Map<string, DriverWorker>();
  private readonly spares = new Map<string, DriverWorker>();
  /** Spares handed out: counted, and stopped at the end in case a caller did not. */
  private readonly retired: DriverWorker[] = [];

  constructor(private readonly timeouts: DriverTimeouts) {}

  /** The worker for `command` in role `role` (e.g. "slot-0", "mount"), started on first use. */
  get(command: DriverCommand, role: string): DriverWorker {
    const key = `${JSON.stringify(command)} ${role}`;
    let w = this.workers.get(key);
    if (!w) {
      w = new DriverWorker(command, this.timeouts);
      this.workers.set(key, w);
    }
    return w;
  }

  /**
   * A driver process started ahead of time for one run of its own (a recording: no process of it
   * may outlive it), and another started at once for the next: start-up is off the critical path.
   * The caller runs it with `last` and stops it.
   */
  spare(command: DriverCommand): DriverWorker {
    const key = JSON.stringify(command);
    const ready = this.spares.get(key) ?? new DriverWorker(command, this.timeouts);
    ready.warm();
    const next = new DriverWorker(command, this.timeouts);
    next.warm();
    this.spares.set(key, next);
    this.retired.push(ready);
    return ready;
  }

  /** Driver processes started so far. */
  get starts(): number {
    return [...this.workers.values(), ...this.spares.values(), ...this.retired].reduce((n, w) => n + w.starts, 0);
  }

  async stop(): Promise<void> {
    await Promise.all([...this.workers.values(), ...this.spares.values(), ...this.retired].map((w) => w.stop()));
    this.workers.clear();
    this.spares.clear();
    this.retired.length = 0;
  }
}
