// A recorded run (exhaustive mode): every call that changed the model, with the request it served
// and the clock values it read, so the run can be replayed into a fresh model exactly, up to any
// request, without running the program again. Pure: no I/O.
import { FsModel, type Owner } from './fs-model.js';
import type { FsTree } from './nodes.js';

/** The model's changing methods; everything else only reads. */
export const RECORDED_METHODS = [
  'create', 'mkdir', 'symlink', 'mknod', 'link', 'unlink', 'rmdir', 'rename',
  'write', 'truncate', 'fallocate', 'chmod', 'chown', 'utimens', 'fsync', 'fdatasync', 'dropUnsynced',
] as const;
export type RecordedMethod = (typeof RECORDED_METHODS)[number];

export interface RecordedCall {
  /** The mutating request (1-based) the call served. */
  op: number;
  method: RecordedMethod;
  /** Its arguments as passed (write data is kept by reference: the adapter's own copy). */
  args: unknown[];
  /** The clock values it read, in order. */
  times: number[];
}

/**
 * What one recorded call costs in memory besides the bytes it carries (write data, path strings):
 * the call object, its argument and clock arrays. Measured on Node 20: about 190 bytes for a chmod.
 */
export const RECORDED_CALL_OVERHEAD_BYTES = 200;

/** Where a recording stands: its calls, the clock value the model started with, and its memory bound. */
export class Recording {
  readonly calls: RecordedCall[] = [];
  /** What the calls kept so far cost: RECORDED_CALL_OVERHEAD_BYTES each, plus their write data and strings. */
  bytes = 0;
  /** Set once the run took more than the bound: the calls are dropped and crash states refused. */
  overflow: string | null = null;
  /** Set once the run ended (its states were asked for, a crash or a reset came): later calls are not the run's. */
  closed = false;
  startTime = 0;

  /**
   * `base`: the starting state the run began from (a driver's setup, all of it durable), loaded
   * before its first call; its changes are no calls of the run, so no crash state falls in them.
   */
  constructor(readonly owner: Owner, readonly maxBytes: number, readonly base?: FsTree) {}

  add(call: RecordedCall): void {
    if (this.overflow || this.closed) return;
    this.bytes += RECORDED_CALL_OVERHEAD_BYTES;
    for (const a of call.args) {
      if (typeof a === 'string') this.bytes += a.length;
      else if (a instanceof Uint8Array) this.bytes += a.length;
    }
    if (this.bytes > this.maxBytes) {
      this.overflow = `the recorded run took more than ${this.maxBytes} bytes of memory (${RECORDED_CALL_OVERHEAD_BYTES} per recorded call plus its write data; the daemon's --max-recording-bytes); exhaustive mode keeps the whole run in memory: shorten the workload or raise the bound`;
      this.calls.length = 0;
      return;
    }
    this.calls.push(call);
  }

  /** Ends the run: add() ignores every later call, so the calls stay those of the run. */
  close(): void {
    this.closed = true;
  }
}

/** A model that records its changing calls into `recording`, attributed to `currentOp()`. */
export class RecordingFsModel extends FsModel {
  private readonly clockLog: { times: number[] | null };

  constructor(private readonly recording: Recording, private readonly currentOp: () => number, now: () => number = Date.now) {
    const clockLog: { times: number[] | null } = { times: null };
    super(() => {
      const t = now();
      clockLog.times?.push(t);
      return t;
    }, recording.owner);
    this.clockLog = clockLog;
    recording.startTime = this.stat(1).ctimeMs;
    // The starting state is no change of the run: loaded unrecorded, at the run's start time, as replay loads it.
    if (recording.base) {
      this.depth++;
      try {
        this.loadTree(recording.base, recording.startTime);
      } finally {
        this.depth--;
      }
    }
  }

  /** Recorded calls running now: a recorded method called by another is part of the outer call, not a call of its own. */
  private depth = 0;

  /**
   * Runs one changing call; records it only if it succeeded (a call that throws changes nothing),
   * and only if it is the outermost (replaying the outer call makes the inner ones again).
   */
  private record<T>(method: RecordedMethod, args: unknown[], call: () => T): T {
    if (this.depth > 0) return call();
    const times: number[] = [];
    this.clockLog.times = times;
    this.depth++;
    try {
      const result = call();
      this.recording.add({ op: this.currentOp(), method, args, times });
      return result;
    } finally {
      this.depth--;
      this.clockLog.times = null;
    }
  }
}

// Each changing method of FsModel, wrapped to record itself (one list, checked against FsModel's own).
for (const method of RECORDED_METHODS) {
  const original = FsModel.prototype[method] as (...args: unknown[]) => unknown;
  if (typeof original !== 'function') throw new Error(`invariant: FsModel has no method '${method}' to record`);
  Object.defineProperty(RecordingFsModel.prototype, method, {
    value(this: RecordingFsModel, ...args: unknown[]) {
      return (this as unknown as { record: (m: string, a: unknown[], c: () => unknown) => unknown }).record(method, args, () => original.apply(this, args));
    },
  });
}

/**
 * A model with the recorded calls of ops 1..afterOp applied to a fresh one, reading the clock values
 * they read. `from` continues an earlier replay (its model and the index of the next call).
 */
export function replay(recording: Recording, afterOp: number, from?: { model: FsModel; next: number }): { model: FsModel; next: number } {
  if (recording.overflow) throw new Error(recording.overflow);
  let times: number[] = [recording.startTime];
  const clock = () => {
    const t = times.shift();
    if (t === undefined) throw new Error('invariant: a replayed call read the clock more often than when it was recorded');
    return t;
  };
  let model = from?.model;
  if (!model) {
    model = new FsModel(clock, recording.owner);
    if (recording.base) model.loadTree(recording.base, recording.startTime);
  }
  model.setClock(clock);
  let next = from?.next ?? 0;
  const calls = recording.calls;
  for (; next < calls.length && calls[next].op <= afterOp; next++) {
    const call = calls[next];
    times = [...call.times];
    (model[call.method] as (...a: unknown[]) => unknown).apply(model, call.args);
    if (times.length > 0) throw new Error(`invariant: replayed ${call.method} of request ${call.op} read the clock fewer times than when it was recorded`);
  }
  model.setClock(Date.now);
  return { model, next };
}
