// Numbers mutating requests, records the trace, and freezes at the crash point: the request there
// and every later one is held unanswered until a crash or reset disposes of it. No FUSE here.
import { CrashPointMatcher } from './crash-point.js';
import { EIO, FsError } from './model/errno.js';
import type { Mark } from './crash-states.js';
import type { CrashPoint, TraceEntry } from './protocol.js';
import { Trace } from './trace.js';

/** Markers kept per run (a bound on memory; a workload prints far fewer lines). */
export const MAX_MARKS = 1_000_000;

export class RequestGate {
  readonly trace = new Trace();
  /** Runs after every request the model applied (the daemon checks the model's invariants there when asked to). */
  constructor(private readonly afterApply: (() => void) | null = null) {}

  /** Confirmation markers in request order: the driver's line n was marked after `afterOp` requests. */
  private markList: Mark[] = [];
  private matcher: CrashPointMatcher | null = null;
  private frozenAtOp: number | null = null;
  /** Held requests' answers: each is called once with EIO to dispose of it (crash and reset detach the mount first), never to apply it. */
  private held: ((errno: number) => void)[] = [];
  private waiters: ((frozenAt: number) => void)[] = [];

  get opCount(): number {
    return this.trace.length;
  }

  get armed(): CrashPoint | null {
    return this.matcher?.point ?? null;
  }

  get frozenAt(): number | null {
    return this.frozenAtOp;
  }

  get heldCount(): number {
    return this.held.length;
  }

  arm(point: CrashPoint): void {
    if (this.frozenAtOp !== null) throw new Error(`arm: the daemon is frozen at request ${this.frozenAtOp}; send crash or reset first`);
    if (this.trace.truncated) {
      throw new Error(`arm: the trace holds only the first ${this.trace.all().length} of ${this.trace.length} requests since mount, too few to count crash points from; send reset first`);
    }
    this.matcher = new CrashPointMatcher(point, this.trace.all());
  }

  disarm(): void {
    this.matcher = null;
  }

  /** A marker for the driver's line n, placed after every mutating request so far. */
  mark(n: number): void {
    if (this.markList.length < MAX_MARKS) this.markList.push({ n, afterOp: this.trace.length });
  }

  get marks(): readonly Mark[] {
    return this.markList;
  }

  /**
   * One mutating request, described by its trace entry (state 'held'; numbered here). `apply`
   * changes the model and returns the answer (>= 0, or a negative errno; an FsError thrown is its
   * errno). `reply` answers the kernel: now with the result, or, if the request is held, once with
   * EIO when it is disposed of.
   */
  mutate(entry: TraceEntry, apply: () => number, reply: (result: number) => void): void {
    this.trace.add(entry);
    if (this.frozenAtOp !== null) {
      this.held.push(reply);
      return;
    }
    const isCrashPoint = this.matcher !== null && this.matcher.offer(entry);
    if (isCrashPoint && this.matcher!.point.timing === 'before') {
      this.freeze(entry, reply);
      return;
    }
    const result = run(apply);
    entry.result = result < 0 ? result : 0;
    this.afterApply?.();
    if (isCrashPoint) {
      this.freeze(entry, reply);
      return;
    }
    entry.state = 'applied';
    reply(result);
  }

  /** A non-mutating request: false if it may proceed, true if it was held (frozen; `reply` then gets EIO when disposed of). */
  holdIfFrozen(reply: (errno: number) => void): boolean {
    if (this.frozenAtOp === null) return false;
    this.held.push(reply);
    return true;
  }

  waitFrozen(timeoutMs: number): Promise<number | null> {
    if (this.frozenAtOp !== null) return Promise.resolve(this.frozenAtOp);
    return new Promise((resolve) => {
      const onFrozen = (at: number) => {
        clearTimeout(timer);
        resolve(at);
      };
      const timer = setTimeout(() => {
        this.waiters = this.waiters.filter((w) => w !== onFrozen);
        resolve(null);
      }, timeoutMs);
      this.waiters.push(onFrozen);
    });
  }

  /** Disposes of every held request; call it only once the mount is detached, so no live mount sees the answer. */
  disposeHeld(): void {
    const held = this.held;
    this.held = [];
    for (const reply of held) reply(EIO);
  }

  /** After a crash or reset: numbering and trace restart from 0, disarmed, not frozen. */
  restart(): void {
    if (this.held.length > 0) throw new Error('invariant: restart with held requests not disposed of');
    this.trace.clear();
    this.markList = [];
    this.matcher = null;
    this.frozenAtOp = null;
  }

  private freeze(entry: TraceEntry, reply: (errno: number) => void): void {
    this.matcher = null;
    this.frozenAtOp = entry.op;
    this.held.push(reply);
    const waiters = this.waiters;
    this.waiters = [];
    for (const w of waiters) w(entry.op);
  }
}

function run(apply: () => number): number {
  try {
    return apply();
  } catch (e) {
    if (e instanceof FsError) return e.errno;
    // A bug must not leave the kernel waiting forever: answer EIO and say why.
    console.error(`powercut fs: internal error, answering EIO: ${e instanceof Error ? e.stack : String(e)}`);
    return EIO;
  }
}
