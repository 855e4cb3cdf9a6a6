// Write-behind: the patched binding answers writes in the FUSE thread and queues them; this side
// applies the queued writes to the model, in order, before the daemon handles anything else.
//
// Why: fuse-native hands every request from libfuse's thread to the JavaScript thread and waits for
// the answer (uv_async_send, then a semaphore): two thread wake-ups per request, which bounded a
// program writing on the mount to about 15k writes a second whatever the model did (docs/fs.md,
// "Speed"). A write is the request programs make most, and its answer depends on little: whether
// its handle is open, whether the disk has room, whether a crash point could fall on it. JavaScript
// grants the binding exactly that much (grant()), so the binding answers what the model would have
// answered, and never a write the gate must hold.
//
// Order: a queued write was answered before JavaScript takes it; every request JavaScript handles,
// and every control command, first takes and applies the queue (catchUp, pause), so each sees every
// write answered before it, as the program did. A write answered while JavaScript was handling
// another request was concurrent with it: numbering it after is one of the orders the kernel allows.
//
// Limits are running totals since start (writes answered, cost and bytes charged per mount): a grant
// is the total at JavaScript's last take plus what the model, with those writes applied, allows; so
// writes answered between the take and the grant count against it. Whatever changes what a write may
// be answered (another request, a control command) runs paused: the binding answers nothing itself
// from the take at its start until the grant at its end.
import { MAX_FILE_BYTES } from './model/fs-model.js';
import { WB } from './write-behind-c.js';
import { collectGarbage } from './collect-garbage.js';
import type { FuseBinding } from './fuse-native-binding.js';
import type { RequestGate } from './request-gate.js';
import type { FsState, WritesBehind } from './fuse-adapter.js';

/** Writes shorter than this are copied out of their slab (as the daemon copied every write before), so a slab is not kept alive by a few bytes of an unsynced write. */
const COPY_BELOW_BYTES = 1024;

/** The model's clock, pinned to the time the binding answered a write while that write is applied. */
export class RequestClock {
  pinnedMs: number | null = null;
  readonly now = (): number => this.pinnedMs ?? Date.now();
}

/** Applies one write the binding answered with `expected` bytes, as the daemon's write handler would (trace, gate, faults, model); throws if the model answers otherwise. */
export type ApplyAnswered = (state: FsState, path: string, fd: number, offsetBytes: number, data: Buffer, expected: number) => void;

interface Mount {
  id: number;
  state: FsState;
  generation: number;
}

export class WriteBehind implements WritesBehind {
  private readonly mounts = new Map<number, Mount>(); // by slot
  private nextId = 1;
  private depth = 0;
  private readonly slabs = new Map<number, Buffer>();
  private readonly out = Buffer.alloc(WB.maxQueued * WB.recordDoubles * 8);
  private readonly records = new Float64Array(this.out.buffer, this.out.byteOffset, WB.maxQueued * WB.recordDoubles);
  private readonly paths = Buffer.alloc(WB.pathBytes);
  private readonly totalsBuf = Buffer.alloc((1 + 2 * WB.mounts) * 8);
  private readonly totals = new Float64Array(this.totalsBuf.buffer, this.totalsBuf.byteOffset, 1 + 2 * WB.mounts);
  private readonly limitsBuf = Buffer.alloc((2 + WB.grantDoubles * WB.mounts) * 8);
  private readonly limits = new Float64Array(this.limitsBuf.buffer, this.limitsBuf.byteOffset, 2 + WB.grantDoubles * WB.mounts);
  /** Writes queued now: the binding keeps queued[0] up to date, so a request with none queued asks nothing of it. */
  private readonly queuedBuf = Buffer.alloc(4);
  private readonly queued = new Int32Array(this.queuedBuf.buffer, this.queuedBuf.byteOffset, 1);
  /** Writes applied since start (what the queue handed over). */
  applied = 0;
  /** Bytes of those writes since the last collection (collectIfWorthIt). */
  private bytesSinceCollect = 0;
  /** A write answered by the binding that the model would not have answered so: the daemon must stop (a bug). */
  onBroken: (message: string) => void = (message) => {
    throw new Error(message);
  };

  /** The patched binding's write-behind, or null (the stock binding: every write takes the hop). */
  static create(binding: FuseBinding, gate: RequestGate, clock: RequestClock, apply: ApplyAnswered): WriteBehind | null {
    if (!binding.powercut_wb_init || !binding.powercut_wb_take || !binding.powercut_wb_grant || !binding.powercut_wb_attach) return null;
    return new WriteBehind(binding as Required<FuseBinding>, gate, clock, apply);
  }

  private constructor(private readonly binding: Required<FuseBinding>, private readonly gate: RequestGate, private readonly clock: RequestClock, private readonly apply: ApplyAnswered) {
    binding.powercut_wb_init(() => this.catchUp(), this.queuedBuf);
  }

  /** A new mount generation serving `state`: its writes may be answered in its FUSE thread from the next grant on. */
  attach(thread: Buffer, state: FsState, generation: number): void {
    this.pause();
    try {
      // A slot taken by a mount that still serves stays its own; this one then takes the hop.
      const slotOf = (id: number) => id % WB.mounts;
      let id = this.nextId++;
      for (let tries = 0; tries < WB.mounts && this.live(this.mounts.get(slotOf(id))); tries++) id = this.nextId++;
      if (this.live(this.mounts.get(slotOf(id)))) return;
      this.mounts.set(slotOf(id), { id, state, generation });
      this.binding.powercut_wb_attach(thread, id);
    } finally {
      this.resume();
    }
  }

  private live(m: Mount | undefined): boolean {
    return m !== undefined && m.state.generation === m.generation;
  }

  /** Applies every write answered so far. Call before reading or changing anything a write touches. */
  catchUp(): void {
    // Paused, the binding answers nothing and the pause took the queue. A write answered before this
    // request came was counted before its answer went out, so a count of 0 means none is waiting.
    if (this.depth > 0 || this.queued[0] === 0) return;
    this.take(false);
    this.grant();
  }

  /** Applies every write answered so far, and the binding answers none until the matching resume(). */
  pause(): void {
    if (this.depth++ === 0) this.take(true);
  }

  resume(): void {
    if (this.depth === 0) throw new Error('invariant: write-behind resumed more often than paused');
    // Nothing was queued while paused, so the totals the pause's take read are still the binding's.
    if (--this.depth === 0) this.grant();
  }

  /** Runs `fn` paused (a request or command that may change what a write would be answered). */
  paused<T>(fn: () => T): T {
    this.pause();
    try {
      return fn();
    } finally {
      this.resume();
    }
  }

  /** Takes the queue (pausing the binding with `pause`) and applies it; a write that cannot be applied as answered stops the daemon (onBroken). */
  private take(pause: boolean): void {
    try {
      this.applyQueue(pause);
    } catch (e) {
      this.onBroken(`write-behind: ${e instanceof Error ? e.message : String(e)}`);
    }
  }

  private applyQueue(pause: boolean): void {
    const fresh: unknown[] = [];
    const n = this.binding.powercut_wb_take(this.out, this.paths, fresh, this.totalsBuf, pause ? 1 : 0);
    for (let i = 0; i < fresh.length; i += 2) this.slabs.set(fresh[i] as number, fresh[i + 1] as Buffer);
    const r = this.records;
    let lastPathAt = -1;
    let lastPathLength = -1;
    let path = '';
    let lastSlab = -1;
    for (let i = 0; i < n; i++) {
      const o = i * WB.recordDoubles;
      const id = r[o];
      const mount = this.mounts.get(id % WB.mounts);
      if (!mount || mount.id !== id) throw new Error(`invariant: write-behind: a write of mount ${id}, which is not attached`);
      const lengthBytes = r[o + 3];
      const slab = this.slabs.get(r[o + 4]);
      if (!slab) throw new Error(`invariant: write-behind: slab ${r[o + 4]} was never handed over`);
      lastSlab = r[o + 4];
      const view = slab.subarray(r[o + 5], r[o + 5] + lengthBytes);
      const data = lengthBytes < COPY_BELOW_BYTES ? Buffer.from(view) : view;
      if (r[o + 7] !== lastPathAt || r[o + 8] !== lastPathLength) {
        lastPathAt = r[o + 7];
        lastPathLength = r[o + 8];
        path = this.paths.toString('utf8', lastPathAt, lastPathAt + lastPathLength);
      }
      this.clock.pinnedMs = r[o + 6];
      try {
        this.apply(mount.state, path, r[o + 1], r[o + 2], data, lengthBytes);
      } finally {
        this.clock.pinnedMs = null;
      }
      this.applied++;
      this.bytesSinceCollect += lengthBytes;
    }
    // Slabs before the last one written to are full: the binding writes no more into them, and the
    // model's views keep what it needs alive. The last one stays until a later write lands past it.
    if (lastSlab >= 0) for (const id of this.slabs.keys()) if (id < lastSlab) this.slabs.delete(id);
  }

  /**
   * After the daemon dropped a model (reset, power cut, a state loaded): a full collection if at
   * least `minBytes` were written behind since the last, so the memory the old model held goes back
   * to the binding's pools for the writes to come (collect-garbage.ts says why).
   */
  collectIfWorthIt(minBytes: number): void {
    if (this.bytesSinceCollect < minBytes) return;
    this.bytesSinceCollect = 0;
    collectGarbage();
  }

  /** What the binding may answer until the next grant, from the gate, the faults and the models now (after the last take). */
  private grant(): void {
    const l = this.limits;
    const t = this.totals;
    const gate = this.gate;
    const writesSafe = gate.frozenAt !== null || gate.heldCount > 0 ? 0 : gate.writesBeforeCrashPoint();
    l[0] = t[0] + writesSafe;
    l[1] = MAX_FILE_BYTES;
    l.fill(0, 2);
    for (const [slot, m] of this.mounts) {
      const at = 2 + slot * WB.grantDoubles;
      if (!this.live(m)) {
        // Its slot stays empty (id 0): the binding answers none of its writes, and none is queued (the pause before its end took them).
        this.mounts.delete(slot);
        continue;
      }
      l[at] = m.id;
      const room = m.state.faults.writeRoom(m.state.model.liveDataBytes);
      l[at + 1] = 1;
      l[at + 2] = m.state.fdFloor ?? 1;
      l[at + 3] = t[1 + 2 * slot] + room.diskBytes;
      l[at + 4] = t[2 + 2 * slot] + room.faultBytes;
    }
    this.binding.powercut_wb_grant(this.limitsBuf);
  }
}
