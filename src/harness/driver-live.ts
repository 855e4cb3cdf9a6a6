// A driver process while it runs (driver-process.ts starts and ends it): its stdout parsed line by
// line as it comes (node lines name each node's process group; done and error end the run), its
// stderr, and its exit. The harness's control over it (driver-control.ts) reads and waits on this.
import type { ResultPromise } from 'execa';
import type { DriverSpec } from './driver-spec.js';
import { trackGroup } from './process-group.js';
import { parseOutcomeLine, type Outcome } from './outcome.js';

/** A driver process as driver-process.ts starts it: pipes, no buffering, SIGKILL, its own process group. */
export type DriverProc = ResultPromise<{ stdin: 'pipe'; stdout: 'pipe'; stderr: 'pipe'; reject: false; buffer: false; killSignal: 'SIGKILL'; detached: true }>;

/** `p`'s value, or 'timeout' if it takes longer than `ms` (the timer keeps no process alive). */
export async function within<T>(p: Promise<T>, ms: number): Promise<T | 'timeout'> {
  return Promise.race([p, new Promise<'timeout'>((r) => setTimeout(r, ms, 'timeout').unref())]);
}

interface LineWaiter {
  test: (o: Outcome) => boolean;
  resolve: () => void;
}

export class LiveDriver {
  /** Its stdout as printed so far. */
  stdout = '';
  stderr = '';
  /** Each node's process group, as its latest node line named it. */
  readonly groups = new Map<number, number>();
  /** It printed its done or error line. */
  ended = false;
  /** It printed its done line. */
  doneSeen = false;
  exited = false;
  /** The harness killed it before it exited (a cut). */
  killed = false;
  /** Its exit (sets `exited`). */
  readonly done: Promise<Awaited<DriverProc>>;
  private lineWaiters: LineWaiter[] = [];
  // Lines are parsed as they complete, each once; a bad one stops this (the parse of the whole
  // stdout at the end reports it, naming its line).
  private unparsed = 0;
  private lineCount = 0;
  private readable = true;

  /** Reads `proc`'s output from now on and sends it `spec`. */
  constructor(readonly proc: DriverProc, spec: DriverSpec, private readonly onLine?: (o: Outcome, line: number) => void) {
    proc.stdout.on('data', (d: Buffer) => this.read(d.toString()));
    proc.stderr.on('data', (d: Buffer) => (this.stderr += d.toString()));
    proc.stdin.write(JSON.stringify(spec) + '\n');
    // One disk: nothing more comes on stdin (a driver may read it to its end first). A cluster's
    // stays open for restart commands until the run ends.
    if (spec.nodes === undefined) proc.stdin.end();
    this.done = proc.then((r) => {
      this.exited = true;
      return r;
    });
  }

  /** Calls `resolve` at the first line from now on that passes `test`. */
  whenLine(test: (o: Outcome) => boolean, resolve: () => void): void {
    this.lineWaiters.push({ test, resolve });
  }

  private read(chunk: string): void {
    this.stdout += chunk;
    for (let nl = this.stdout.indexOf('\n', this.unparsed); this.readable && nl >= 0; nl = this.stdout.indexOf('\n', this.unparsed)) {
      let o: Outcome;
      try {
        o = parseOutcomeLine(this.stdout.slice(this.unparsed, nl), ++this.lineCount, `driver pid ${this.proc.pid} stdout`);
      } catch {
        this.readable = false;
        break;
      }
      this.unparsed = nl + 1;
      if (o.t === 'node') {
        this.groups.set(o.node, o.pgid);
        trackGroup(o.pgid);
      }
      if (o.t === 'done' || o.t === 'error') this.ended = true;
      if (o.t === 'done') this.doneSeen = true;
      this.onLine?.(o, this.lineCount);
      this.lineWaiters = this.lineWaiters.filter((w) => !(w.test(o) && (w.resolve(), true)));
    }
  }
}
