// Numbers mutating requests, records the trace, and freezes at the crash point: the request there
// and every later one is held unanswered until a crash or reset disposes of it. No FUSE here.
import { CrashPointMatcher } from './crash-point.js';
import { EIO, FsError } from './model/errno.js';
import type { CrashPoint, MutatingKind, TraceEntry } from './protocol.js';
import { Trace, type TraceArgs } from './trace.js';

export class RequestGate {
  readonly trace = new Trace();
  private matcher: CrashPointMatcher | null = null;
  private frozenAtOp: number | null = null;
  /** Held requests: each is called once to dispose of it (answers EIO; crash and reset detach the mount first), never to apply it. */
  private held: (() => void)[] = [];
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
    this.matcher = new CrashPointMatcher(point, this.trace.all());
  }

  disarm(): void {
    this.matcher = null;
  }

  /**
   * One mutating request. `apply` changes the model and returns the answer (>= 0, or a negative
   * errno; an FsError thrown is its errno). `reply` answers the kernel, now or never.
   */
  mutate(kind: MutatingKind, args: TraceArgs, apply: () => number, reply: (result: number) => void, dispose: () => void): void {
    const entry = this.trace.add(kind, args);
    if (this.frozenAtOp !== null) {
      this.held.push(dispose);
      return;
    }
    const isCrashPoint = this.matcher?.offer({ kind, path: args.path, path2: args.path2 }) ?? false;
    if (isCrashPoint && this.matcher!.point.timing === 'before') {
      this.freeze(entry, dispose);
      return;
    }
    const result = run(apply);
    entry.result = result < 0 ? result : 0;
    if (isCrashPoint) {
      this.freeze(entry, dispose);
      return;
    }
    entry.state = 'applied';
    reply(result);
  }

  /** A non-mutating request: false if it may proceed, true if it was held (frozen). */
  holdIfFrozen(dispose: () => void): boolean {
    if (this.frozenAtOp === null) return false;
    this.held.push(dispose);
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
    for (const d of held) d();
  }

  /** After a crash or reset: numbering and trace restart from 0, disarmed, not frozen. */
  restart(): void {
    if (this.held.length > 0) throw new Error('invariant: restart with held requests not disposed of');
    this.trace.clear();
    this.matcher = null;
    this.frozenAtOp = null;
  }

  private freeze(entry: TraceEntry, dispose: () => void): void {
    this.matcher = null;
    this.frozenAtOp = entry.op;
    this.held.push(dispose);
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
