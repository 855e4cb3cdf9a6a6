// Numbers mutating requests, records the trace, and freezes at the crash point: the request there
// and every later one is held unanswered until a crash or reset disposes of it. No FUSE here.
// One gate serves every node of a cluster (one mount each), so all their requests fall in one
// order: a crash point freezes every node at once, and a cut of some nodes releases the others.
import { CrashPointMatcher } from './crash-point.js';
import { EIO, FsError } from './model/errno.js';
import type { Mark } from './crash-states.js';
import type { CrashPoint, TraceEntry } from './protocol.js';
import { Trace } from './trace.js';

/** Markers kept per run (a bound on memory; a workload prints far fewer lines). */
export const MAX_MARKS = 1_000_000;

/** A request held at or after the crash point: `dispose` answers it EIO; `resume` runs it as if the gate had never frozen. */
interface Held {
  node: number;
  dispose: () => void;
  resume: () => void;
  /** A mutating request: its entry (numbered when it came), its change and its answer apart, since a point armed at release may fall on it. */
  mutating?: { entry: TraceEntry; apply: () => number; answer: (result: number) => void };
}

export class RequestGate {
  readonly trace = new Trace();
  /**
   * afterApply runs after every request the model applied (the daemon checks the model's invariants
   * there when asked to). tagNodes: trace entries name their node (a cluster; one node leaves them as they were).
   */
  constructor(private readonly afterApply: (() => void) | null = null, private readonly tagNodes = false) {}

  /** Confirmation markers in request order: the driver's line n was marked after `afterOp` requests. */
  private markList: Mark[] = [];
  private matcher: CrashPointMatcher | null = null;
  private frozenAtOp: number | null = null;
  /** Held requests, in order: each is disposed of (crash and reset detach its mount first) or resumed (a cut that spared its node), once. */
  private held: Held[] = [];
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

  /** How many writes in a row, from now on, surely are not the armed crash point (Infinity when none is armed). */
  writesBeforeCrashPoint(): number {
    return this.matcher ? this.matcher.requestsBefore('write') : Infinity;
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
  mutate(entry: TraceEntry, apply: () => number, reply: (result: number) => void, node = 0): void {
    if (this.tagNodes) entry.node = node;
    this.trace.add(entry);
    const applyNow = () => {
      const result = run(apply);
      entry.result = result < 0 ? result : 0;
      this.afterApply?.();
      return result;
    };
    const answer = (result: number) => {
      entry.state = 'applied';
      reply(result);
    };
    if (this.frozenAtOp !== null) {
      this.held.push({ node, dispose: () => reply(EIO), resume: () => answer(applyNow()), mutating: { entry, apply: applyNow, answer } });
      return;
    }
    const isCrashPoint = this.matcher !== null && this.matcher.offer(entry);
    if (isCrashPoint && this.matcher!.point.timing === 'before') {
      this.freeze(entry, { node, dispose: () => reply(EIO), resume: () => answer(applyNow()) });
      return;
    }
    const result = applyNow();
    if (isCrashPoint) {
      this.freeze(entry, { node, dispose: () => reply(EIO), resume: () => answer(result) });
      return;
    }
    answer(result);
  }

  /**
   * A non-mutating request: false if it may proceed, true if it was held (frozen; `reply` then gets
   * EIO when disposed of, or `resume` runs when its node is released).
   */
  holdIfFrozen(reply: (errno: number) => void, resume: () => void = () => reply(EIO), node = 0): boolean {
    if (this.frozenAtOp === null) return false;
    this.held.push({ node, dispose: () => reply(EIO), resume });
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

  /** Disposes of every held request (of `node` only, if given); call it only once its mount is detached, so no live mount sees the answer. */
  disposeHeld(node?: number): void {
    for (const h of this.take(node === undefined ? null : new Set([node]))) h.dispose();
  }

  /**
   * A cut that spared these nodes: their held requests run, in their order, as if the gate had not
   * frozen, and the gate thaws. The cut nodes' held requests must be disposed of first.
   */
  release(nodes: ReadonlySet<number>): void {
    const resumed = this.take(nodes);
    if (this.held.length > 0) throw new Error(`invariant: release of nodes ${[...nodes].join(', ')} with ${this.held.length} held requests of other nodes not disposed of`);
    this.frozenAtOp = null;
    for (const h of resumed) h.resume();
  }

  /**
   * Thaws every node (a pause's end) and arms `point` in the same step. Requests that came while
   * frozen were numbered as they came, so the point may be one of them: the held requests before it
   * run, it freezes the gate again (applied first if its timing is 'after'), and the later ones stay
   * held. Throws, changing nothing, if the point is already passed.
   */
  releaseAll(point?: CrashPoint): void {
    if (this.frozenAtOp === null) throw new Error('release: the daemon is not frozen');
    const frozenAt = this.frozenAtOp;
    // The request the gate froze at counts as passed; those held after it are offered to the point in order.
    const comeSince = new Set(this.held.flatMap((h) => (h.mutating && h.mutating.entry.op !== frozenAt ? [h.mutating.entry] : [])));
    if (point && this.trace.truncated) throw new Error(`release: the trace holds only the first ${this.trace.all().length} of ${this.trace.length} requests since mount, too few to count crash points from; send reset first`);
    const matcher = point ? new CrashPointMatcher(point, this.trace.all().filter((e) => !comeSince.has(e))) : null;
    const held = this.held;
    this.held = [];
    this.frozenAtOp = null;
    this.matcher = matcher;
    for (const h of held) {
      if (this.frozenAtOp !== null) {
        this.held.push(h);
        continue;
      }
      const m = h.mutating;
      if (m && comeSince.has(m.entry) && this.matcher?.offer(m.entry)) {
        if (this.matcher.point.timing === 'before') {
          this.freeze(m.entry, h);
        } else {
          const result = m.apply();
          this.freeze(m.entry, { node: h.node, dispose: h.dispose, resume: () => m.answer(result) });
        }
        continue;
      }
      h.resume();
    }
  }

  /** Removes and returns the held requests of `nodes` (null: all), in order. */
  private take(nodes: ReadonlySet<number> | null): Held[] {
    const taken = this.held.filter((h) => nodes === null || nodes.has(h.node));
    this.held = this.held.filter((h) => !taken.includes(h));
    return taken;
  }

  /** After a crash or reset: numbering and trace restart from 0, disarmed, not frozen. */
  restart(): void {
    if (this.held.length > 0) throw new Error('invariant: restart with held requests not disposed of');
    this.trace.clear();
    this.markList = [];
    this.matcher = null;
    this.frozenAtOp = null;
  }

  private freeze(entry: TraceEntry, held: Held): void {
    this.matcher = null;
    this.frozenAtOp = entry.op;
    this.held.push(held);
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
