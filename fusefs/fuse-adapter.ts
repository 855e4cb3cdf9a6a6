// fuse-native operations -> the crash model, through the request gate (numbering, trace, crash
// point) and the armed faults. One adapter per mount generation: after a crash the old
// generation answers EIO to anything still arriving on the detached mount.
import { MAX_FILE_BYTES, UNCHANGED_ID, type FsModel, type Owner, type TimeSet } from './model/fs-model.js';
import { fallocateKind, type FallocateKind } from './model/fallocate.js';
import type { SpecialKind } from './model/nodes.js';
import { EBADF, EINVAL, EIO, ENOENT, ENOSPC, FsError } from './model/errno.js';
import { UTIME_NOW_MS, UTIME_OMIT_MS } from './fuse-native-binding.js';
import type { RequestGate } from './request-gate.js';
import type { Faults } from './faults.js';
import type { FsyncHolds } from './fsync-holds.js';
import { MARK_DIR_NAME, type TraceEntry } from './protocol.js';

type Cb = (...args: any[]) => void;
const S_IFMT = 0o170000;
const TYPE_BITS = {
  file: 0o100000, dir: 0o040000, symlink: 0o120000, fifo: 0o010000, socket: 0o140000, chardev: 0o020000, blockdev: 0o060000,
} as const;
/** mknod's type bits -> the model's kind (0 is a regular file, as for mknod(2)). */
const MKNOD_KINDS = new Map<number, SpecialKind | 'file'>([
  [0, 'file'], [TYPE_BITS.file, 'file'], [TYPE_BITS.fifo, 'fifo'], [TYPE_BITS.socket, 'socket'],
  [TYPE_BITS.chardev, 'chardev'], [TYPE_BITS.blockdev, 'blockdev'],
]);
/** The fallocate kinds that take blocks (the others free or move them). */
const ALLOCATING: ReadonlySet<FallocateKind> = new Set(['allocate', 'allocate-keep-size', 'zero', 'zero-keep-size']);
/** chown's -1 ("leave unchanged") as fuse-native delivers it: an unsigned 32-bit value. */
const UNCHANGED_ID_U32 = 0xffffffff;

export type Caller = Owner;

/**
 * The reserved directory of confirmation markers: a driver stats `/.powercut/<N>` right after
 * printing its Nth line; the daemon records where that happened in the request order and answers
 * ENOENT. It exists only for lookups: never listed, never stored, nothing can be created in it.
 */
const MARK_DIR_PATH = `/${MARK_DIR_NAME}`;
const MARK_PREFIX = `${MARK_DIR_PATH}/`;
const MARK_DIR_INO = 0xffff_fff0;
const MARK_DIR_STAT = { mode: 0o040555, uid: 0, gid: 0, size: 0, nlink: 2, ino: MARK_DIR_INO, rdev: 0, blksize: 4096, blocks: 0, mtime: 0, ctime: 0, atime: 0 };

/** What the binding tells about a request beyond its arguments (see fuse-native-binding.ts). */
export interface RequestContext {
  /** uid and gid of the process whose request is being handled; call it synchronously on entry. */
  caller(): Caller;
  /** utimens receives mtime and the UTIME_NOW/UTIME_OMIT sentinels (the patched binding). */
  fullUtimens: boolean;
}

const timeSet = (ms: number): TimeSet => (ms === UTIME_NOW_MS ? 'now' : ms === UTIME_OMIT_MS ? 'omit' : ms);

export interface FsState {
  model: FsModel;
  /** Shared by every node of a cluster: one order for all their requests. */
  gate: RequestGate;
  /** The node this mount is, in a cluster (0 for one node). */
  node?: number;
  faults: Faults;
  /** A recorded run's schedule of slow fsyncs (fsync-holds.ts); null: fsyncs complete at once. */
  fsyncHolds: FsyncHolds | null;
  /** Open handles: fd -> inode and the path it was opened by (hard_remove gives no path after unlink). */
  handles: Map<number, { ino: number; path: string }>;
  nextFd: number;
  /** Every handle in `handles` is at least this (forgetHandles); absent: 1. Handles below it were forgotten. */
  fdFloor?: number;
  generation: number;
  /** Writes answered in the FUSE thread (write-behind.ts), shared by every node; absent or null: every write comes here. */
  writeBehind?: WritesBehind | null;
}

/** What the request handlers need of write-behind (write-behind.ts implements it). */
export interface WritesBehind {
  /** Applies every write the binding answered so far. */
  catchUp(): void;
  /** Runs `fn` with the binding answering no write by itself (a request that may change what a write would be answered). */
  paused<T>(fn: () => T): T;
  /** A new mount generation serving `state`, its FUSE thread's buffer `thread`: its writes may be answered there from the next grant on. */
  attach(thread: Buffer, state: FsState, generation: number): void;
}

/** After a power cut or a new model: no handle is open any more (those programs still hold answer EBADF). */
export function forgetHandles(state: FsState): void {
  state.handles.clear();
  state.fdFloor = state.nextFd;
}

/**
 * One write as the model takes it (the write handler's change; a write the binding answered goes
 * through it too): the handle's file, the disk's room (a short write or ENOSPC), then the model,
 * which keeps `data` by reference. Returns the bytes written or a negative errno.
 */
function applyWrite(state: FsState, path: string | null, fd: number, pos: number, data: Buffer): number {
  const ino = inoOfFd(state, path, fd);
  const live = state.model.file(ino).live;
  const len = data.length;
  const admitted = state.faults.admitWrite(len, state.model.liveDataBytes, (n) => live.usageAfterAllocating(pos, n));
  if (admitted === 0 && len > 0) return ENOSPC;
  return state.model.write(ino, pos, admitted === len ? data : data.subarray(0, admitted));
}

function inoOfFd(state: FsState, path: string | null, fd?: number): number {
  if (fd !== undefined && fd > 0) {
    const h = state.handles.get(fd);
    if (!h) throw new FsError(EBADF, `fd ${fd} is not open`);
    return h.ino;
  }
  return state.model.resolve(path ?? '');
}

function pathOfFd(state: FsState, path: string | null, fd?: number): string {
  return path ? path : (fd !== undefined && state.handles.get(fd)?.path) || '';
}

/**
 * A write the binding already answered with `expected` bytes (write-behind.ts): numbered, traced and
 * applied as the write handler would; anything but that answer is a broken invariant (thrown).
 */
export function applyAnsweredWrite(state: FsState, path: string, fd: number, offsetBytes: number, data: Buffer, expected: number): void {
  let answered = false;
  const entry: TraceEntry = { op: 0, kind: 'write', path: pathOfFd(state, path, fd), offset: offsetBytes, length: data.length, state: 'held' };
  state.gate.mutate(entry, () => applyWrite(state, path, fd, offsetBytes, data), (result) => {
    answered = true;
    if (result !== expected) throw new Error(`invariant: the binding answered write ${entry.op} (${entry.path}, ${expected} bytes at ${offsetBytes}) itself, but the model answers ${result}`);
  }, state.node);
  if (!answered) throw new Error(`invariant: the binding answered write ${entry.op} (${entry.path}) itself, but the gate holds it (a crash point)`);
}

/** What every request handler shares: the mount's state, its generation, and how a request is run and answered. */
class RequestRunner {
  constructor(readonly state: FsState, private readonly generation: number, readonly ctx: RequestContext) {}

  get model(): FsModel {
    return this.state.model;
  }

  /** A newer mount generation serves the disk: this one answers EIO. */
  dead(): boolean {
    return this.state.generation !== this.generation;
  }

  /** Runs a non-mutating request; errors thrown as FsError become the errno answer. */
  query(cb: Cb, fn: () => void): void {
    const state = this.state;
    const run = () => {
      state.writeBehind?.catchUp();
      if (this.dead()) return cb(EIO);
      try {
        fn();
      } catch (e) {
        if (e instanceof FsError) return cb(e.errno);
        console.error(`powercut fs: internal error, answering EIO: ${e instanceof Error ? e.stack : String(e)}`);
        cb(EIO);
      }
    };
    if (!state.gate.holdIfFrozen(cb, run, state.node)) run();
  }

  /** One mutating request: `entry` is its trace entry (op 0 and state 'held' until the gate numbers and answers it). */
  mutate(cb: (result: number) => void, entry: TraceEntry, apply: () => number): void {
    const state = this.state;
    if (this.dead()) return cb(EIO);
    const wb = state.writeBehind;
    if (!wb) return state.gate.mutate(entry, apply, cb, state.node);
    // Answered only once write-behind is granted again: a program answered earlier would send its next
    // write while the binding still holds back, and that write would come here too, and so on.
    let answer: number | null = null;
    let inside = true;
    wb.paused(() => state.gate.mutate(entry, apply, (r) => (inside ? (answer = r) : cb(r)), state.node));
    inside = false;
    if (answer !== null) cb(answer);
  }

  /**
   * fsync or fsyncdir. With a schedule of slow fsyncs it covers the changes made before it arrived
   * and completes (is numbered, applied, answered) only after its delay; `sync` applies it, given
   * the change count it covers (undefined: everything so far).
   */
  syncRequest(cb: (result: number) => void, entry: TraceEntry, sync: (coversUpTo?: number) => number): void {
    const state = this.state;
    if (this.dead()) return cb(EIO);
    const holdMs = state.fsyncHolds?.nextMs() ?? 0;
    if (holdMs === 0) return this.mutate(cb, entry, () => sync());
    state.writeBehind?.catchUp(); // the writes answered before it arrived are among those it covers
    const model = state.model;
    const covers = model.changeCount;
    setTimeout(() => {
      // A reset swapped the model meanwhile (a crash or load is a new generation, which mutate refuses): this fsync belongs to the one that is gone.
      if (state.model !== model) return cb(EIO);
      this.mutate(cb, entry, () => sync(covers));
    }, holdMs);
  }

  inoOf(path: string | null, fd?: number): number {
    return inoOfFd(this.state, path, fd);
  }

  pathOf(path: string | null, fd?: number): string {
    return pathOfFd(this.state, path, fd);
  }

  statOf(ino: number) {
    const s = this.model.stat(ino);
    return {
      mode: TYPE_BITS[s.kind] | s.mode, uid: s.uid, gid: s.gid, size: s.sizeBytes, nlink: s.nlink, ino: s.ino, rdev: s.rdev,
      blksize: 4096, blocks: s.allocatedBytes / 512, mtime: s.mtimeMs, ctime: s.ctimeMs, atime: s.atimeMs,
    };
  }

  openHandle(ino: number, path: string): number {
    const fd = this.state.nextFd++;
    this.state.handles.set(fd, { ino, path });
    return fd;
  }

  /** truncate and ftruncate: growing a file makes a hole, which takes no space (EFBIG past the largest file, from the model). */
  resize(ino: number, sizeBytes: number): number {
    this.model.truncate(ino, sizeBytes);
    return 0;
  }

  /** fallocate: the model's errno first (as the kernel checks the mode before the space), then ENOSPC if its blocks do not fit, all or nothing. */
  fallocate(ino: number, mode: number, offsetBytes: number, lengthBytes: number): number {
    const live = this.model.file(ino).live;
    const kind = fallocateKind(mode, offsetBytes, lengthBytes, live.size, MAX_FILE_BYTES);
    if (ALLOCATING.has(kind)) {
      const used = this.model.liveDataBytes;
      const after = used - live.usageBytes + live.usageAfterAllocating(offsetBytes, lengthBytes, kind.endsWith('keep-size'));
      if (!this.state.faults.admitAllocation(used, after)) return ENOSPC;
    }
    this.model.fallocate(ino, mode, offsetBytes, lengthBytes);
    return 0;
  }

  /** fsync, fdatasync or fsyncdir of the inode, covering the changes up to `coversUpTo`. */
  sync(ino: number, datasync: boolean, coversUpTo?: number): number {
    if (datasync) this.model.fdatasync(ino, coversUpTo);
    else this.model.fsync(ino, coversUpTo);
    return 0;
  }
}

/** The requests that change nothing durable: attributes, listings, opens and reads. */
function queryOps(r: RequestRunner): Record<string, Cb> {
  const state = r.state;
  return {
    init: (cb) => cb(0),
    statfs: (_path, cb) => cb(0, { bsize: 4096, frsize: 4096, blocks: 1 << 24, bfree: 1 << 23, bavail: 1 << 23, files: 1 << 20, ffree: 1 << 19, favail: 1 << 19, fsid: 0x70c7, flag: 0, namemax: 255 }),
    getattr: (path, cb) => {
      // A confirmation marker: recorded in the trace, never stored, always absent. Answered even
      // when frozen (it changes nothing), so a program cut at one request can still print what
      // its other threads learned before the cut (the harness's grace period).
      if (path.startsWith(MARK_PREFIX) && !r.dead()) {
        state.writeBehind?.catchUp(); // the mark falls after every write answered before it
        const n = Number(path.slice(MARK_PREFIX.length));
        if (Number.isSafeInteger(n) && n >= 1) state.gate.mark(n);
        return cb(ENOENT);
      }
      r.query(cb, () => cb(0, path === MARK_DIR_PATH ? MARK_DIR_STAT : r.statOf(r.model.resolve(path))));
    },
    // By handle (fstat, also of an unlinked file). A handle a reset or crash forgot: by path, as
    // libfuse would have asked without the binding's channel adding the handle; no path left: ENOENT.
    fgetattr: (path, fd, cb) => r.query(cb, () => {
      const h = state.handles.get(fd);
      if (h) return cb(0, r.statOf(h.ino));
      if (!path) throw new FsError(ENOENT, `fd ${fd}: no longer open, and its file has no name`);
      cb(0, r.statOf(r.model.resolve(path)));
    }),
    readdir: (path, cb) => r.query(cb, () => cb(0, r.model.readdir(path))),
    open: (path, _flags, cb) => r.query(cb, () => {
      const ino = r.model.resolve(path);
      r.model.file(ino); // EISDIR for directories
      cb(0, r.openHandle(ino, path));
    }),
    opendir: (path, _flags, cb) => r.query(cb, () => cb(0, r.openHandle(r.model.resolve(path), path))),
    release: (_path, fd, cb) => {
      state.writeBehind?.catchUp(); // the handle's writes the binding answered need it open
      state.handles.delete(fd); // never held: closing a file changes nothing durable
      cb(0);
    },
    releasedir: (_path, fd, cb) => {
      state.handles.delete(fd);
      cb(0);
    },
    flush: (_path, _fd, cb) => r.query(cb, () => cb(0)),
    readlink: (path, cb) => r.query(cb, () => cb(0, r.model.readlink(path))),
    read: (path, fd, buf: Buffer, len: number, pos: number, cb) => r.query(cb, () => {
      const p = r.pathOf(path, fd);
      const ino = r.inoOf(path, fd);
      const durable = (byteOffset: number) => r.model.matchesDurable(ino, byteOffset);
      if (state.faults.readFails(p, pos, len, durable)) return cb(EIO);
      const data = r.model.read(ino, pos, len); // a view of the model's bytes: copied out, never changed
      buf.set(data);
      state.faults.corruptRead(p, pos, buf.subarray(0, data.length), durable);
      cb(data.length);
    }),
  };
}

/** The requests that change a file's data or make it durable: numbered, traced, held at a crash point. */
function dataOps(r: RequestRunner): Record<string, Cb> {
  const state = r.state;
  return {
    create: (path, mode, cb) => {
      let fd = 0;
      const owner = r.ctx.caller();
      r.mutate((res: number) => (res < 0 ? cb(res) : cb(0, fd)), { op: 0, kind: 'create', path, mode: mode & 0o7777, state: 'held' }, () => {
        fd = r.openHandle(r.model.create(path, mode, owner), path);
        return 0;
      });
    },
    write: (path, fd, buf: Buffer, len: number, pos: number, cb) => {
      // fuse-native detaches `buf` after the answer (its memory is libfuse's, reused for the next
      // request), and a held request answers much later: copy now, once. The copy is handed to the
      // model, which keeps it by reference (pending writes, file chunks, a recording): never touched again.
      const data = Buffer.allocUnsafe(len);
      data.set(buf.length === len ? buf : buf.subarray(0, len));
      r.mutate(cb, { op: 0, kind: 'write', path: r.pathOf(path, fd), offset: pos, length: len, state: 'held' }, () => applyWrite(state, path, fd, pos, data));
    },
    truncate: (path, size, cb) => r.mutate(cb, { op: 0, kind: 'truncate', path, length: size, state: 'held' }, () => r.resize(r.model.resolve(path), size)),
    ftruncate: (path, fd, size, cb) => r.mutate(cb, { op: 0, kind: 'truncate', path: r.pathOf(path, fd), length: size, state: 'held' }, () => r.resize(r.inoOf(path, fd), size)),
    // The patched binding only (fuse-native-binding.ts). The kernel's FUSE passes KEEP_SIZE, PUNCH_HOLE
    // and ZERO_RANGE on; it answers EOPNOTSUPP to COLLAPSE_RANGE and INSERT_RANGE itself.
    fallocate: (path, fd, mode: number, offset: number, length: number, cb) => r.mutate(cb, { op: 0, kind: 'fallocate', path: r.pathOf(path, fd), offset, length, mode, state: 'held' }, () => r.fallocate(r.inoOf(path, fd), mode, offset, length)),
    fsync: (path, datasync, fd, cb) => {
      const p = r.pathOf(path, fd);
      r.syncRequest(cb, { op: 0, kind: 'fsync', path: p, datasync: !!datasync, state: 'held' }, (coversUpTo) => {
        const ino = r.inoOf(path, fd);
        if (state.faults.fsyncFails(p)) {
          r.model.dropUnsynced(ino); // ext4: the failed data can no longer become durable
          return EIO;
        }
        return r.sync(ino, !!datasync, coversUpTo);
      });
    },
    fsyncdir: (path, datasync, fd, cb) => r.syncRequest(cb, { op: 0, kind: 'fsyncdir', path: r.pathOf(path, fd), datasync: !!datasync, state: 'held' }, (coversUpTo) => r.sync(r.inoOf(path, fd), !!datasync, coversUpTo)),
  };
}

/** The requests that change names and attributes. */
function namespaceOps(r: RequestRunner): Record<string, Cb> {
  const model = () => r.model;
  return {
    // Also binding a Unix socket (S_IFSOCK). Privilege for devices is the kernel's check (CAP_MKNOD).
    mknod: (path, mode, dev, cb) => {
      const owner = r.ctx.caller();
      r.mutate(cb, { op: 0, kind: 'mknod', path, mode: mode & 0o7777, state: 'held' }, () => {
        const kind = MKNOD_KINDS.get(mode & S_IFMT);
        if (kind === undefined) throw new FsError(EINVAL, `${path}: mknod of type ${(mode & S_IFMT).toString(8)} is not supported`);
        model().mknod(path, kind, mode, dev, owner);
        return 0;
      });
    },
    unlink: (path, cb) => r.mutate(cb, { op: 0, kind: 'unlink', path, state: 'held' }, () => (model().unlink(path), 0)),
    mkdir: (path, mode, cb) => {
      const owner = r.ctx.caller();
      r.mutate(cb, { op: 0, kind: 'mkdir', path, mode: mode & 0o7777, state: 'held' }, () => (model().mkdir(path, mode, owner), 0));
    },
    rmdir: (path, cb) => r.mutate(cb, { op: 0, kind: 'rmdir', path, state: 'held' }, () => (model().rmdir(path), 0)),
    rename: (src, dest, cb) => r.mutate(cb, { op: 0, kind: 'rename', path: src, path2: dest, state: 'held' }, () => (model().rename(src, dest), 0)),
    link: (src, dest, cb) => r.mutate(cb, { op: 0, kind: 'link', path: src, path2: dest, state: 'held' }, () => (model().link(src, dest), 0)),
    // fuse-native: symlink(target, linkPath)
    symlink: (target, path, cb) => {
      const owner = r.ctx.caller();
      r.mutate(cb, { op: 0, kind: 'symlink', path, path2: target, state: 'held' }, () => (model().symlink(target, path, owner), 0));
    },
    // Who may chmod, chown or set times is checked by the kernel (default_permissions) before these arrive.
    chmod: (path, mode, cb) => r.mutate(cb, { op: 0, kind: 'setattr', path, mode: mode & 0o7777, state: 'held' }, () => (model().chmod(model().resolve(path), mode), 0)),
    chown: (path, uid: number, gid: number, cb) => r.mutate(cb, { op: 0, kind: 'setattr', path, state: 'held' }, () => {
      model().chown(model().resolve(path), uid === UNCHANGED_ID_U32 ? UNCHANGED_ID : uid, gid === UNCHANGED_ID_U32 ? UNCHANGED_ID : gid);
      return 0;
    }),
    // The stock binding passes atime as both times (its bug): then both get atime.
    utimens: (path, atime: number, mtime: number, cb) => r.mutate(cb, { op: 0, kind: 'setattr', path, state: 'held' }, () => {
      model().utimens(model().resolve(path), timeSet(atime), timeSet(r.ctx.fullUtimens ? mtime : atime));
      return 0;
    }),
  };
}

/** fuse-native's operations for one mount generation. */
export function makeFuseOps(state: FsState, generation: number, ctx: RequestContext): Record<string, Cb> {
  const r = new RequestRunner(state, generation, ctx);
  return { ...queryOps(r), ...dataOps(r), ...namespaceOps(r) };
}
