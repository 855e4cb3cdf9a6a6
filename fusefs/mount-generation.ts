// Mounting and unmounting one fuse-native instance over the shared state, with bounded waits, and
// replacing the mounted generation by the next one (crash, reset when frozen).
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { makeFuseOps, type Caller, type FsState, type RequestContext } from './fuse-adapter.js';
import { CALLER_FIELDS_BYTES, CALLER_MAGIC, FALLOCATE_OPCODE, PATCHED_OPCODE_COUNT, loadFuseNative, type FuseBinding } from './fuse-native-binding.js';
import { processOwner } from './model/fs-model.js';
import { EINVAL, EIO, EPERM } from './model/errno.js';

// fsname is joined into fuse-native's -o string, which carries the options it has no setting for.
// big_writes: 128 KiB writes. hard_remove: an unlinked open file stays reachable by its handle
// instead of being renamed to .fuse_hidden. use_ino: programs see the model's inode numbers (hard
// links share one). noatime: the model never changes atime on reads (docs/fs.md), and the mount
// says so. Zero cache timeouts: a reset that is not frozen changes the tree behind the kernel's
// back without a remount.
const MOUNT_OPTIONS = 'big_writes,hard_remove,use_ino,noatime,entry_timeout=0,attr_timeout=0,negative_timeout=0';
const MOUNT_TIMEOUT_MS = 10_000;

/**
 * As root, libfuse mounts with mount(2) in this process unless auto_unmount is asked for (then it
 * forks fusermount, which also stays behind as a watchdog per mount until the daemon exits, and
 * unmounts by path then). So as root: no auto_unmount; a mount left by a killed daemon is cleaned by
 * the next start (the `force` option here, the harness's cleanupStaleMount) and by the harness's
 * exit hooks. Other users need fusermount anyway and keep auto_unmount.
 */
const IS_ROOT = process.geteuid?.() === 0;

export interface Mounted {
  fuse: FuseHandle;
  generation: number;
}

/** `p`, or a rejection naming `what` once `ms` passed. */
export function withTimeout<T>(what: string, ms: number, p: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout;
  return Promise.race([
    p,
    new Promise<T>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${what} did not finish within ${ms} ms`)), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}

let allowOther: boolean | undefined;
/** allow_other needs root, or user_allow_other in /etc/fuse.conf (fusermount refuses the mount otherwise). Read once per process. */
export function mayAllowOther(): boolean {
  if (allowOther !== undefined) return allowOther;
  if (process.getuid?.() === 0) allowOther = true;
  else {
    try {
      allowOther = /^\s*user_allow_other\s*$/m.test(readFileSync('/etc/fuse.conf', 'utf8'));
    } catch {
      allowOther = false;
    }
  }
  return allowOther;
}

let warnedNoCaller = false;
let FuseWithCaller: { Fuse: ReturnType<typeof makeFuseClass>; patched: boolean } | null = null;

/** fuse-native's Fuse, remembering the request buffer of the request being dispatched (see fuse-native-binding.ts). */
function makeFuseClass() {
  const { Fuse, patched, binding } = loadFuseNative();
  const daemon: Caller = processOwner();
  return class PowercutFuse extends Fuse {
    private requestBuffer: Buffer | null = null;
    /** Set once detachNow() took the mount down: a later unmount has nothing left to do. */
    private detached = false;

    /**
     * Detaches the mount now (umount2 in this process, as root with the patched binding): 0 or -errno
     * (EPERM: not possible here). EINVAL means nothing is mounted there any more (someone detached
     * it): this generation is gone either way.
     */
    detachNow(): number {
      if (this.detached) return 0;
      const r = binding.powercut_umount2 ? binding.powercut_umount2(this.mnt) : EPERM;
      if (r === 0 || r === EINVAL) {
        binding.fuse_native_unmount(this.mnt, this._thread!);
        this.detached = true;
        return 0;
      }
      return r;
    }

    /** The native fuse_thread_t of this mount (write-behind names the mount in it); null before mounting. */
    threadBuffer(): Buffer | null {
      return this._thread;
    }

    /** The uid and gid of the process whose request is being handled; valid only synchronously inside an op. */
    caller(): Caller {
      const b = this.requestBuffer;
      if (!patched || b === null) return daemon;
      const at = b.length - CALLER_FIELDS_BYTES;
      if (b.readUInt32LE(at) !== CALLER_MAGIC) {
        // A broken build must not take the daemon down with every create: say so once, act as the stock binding.
        if (!warnedNoCaller) console.error('powercut fs: invariant broken: the patched binding did not record the caller; new files belong to the daemon\'s user');
        warnedNoCaller = true;
        return daemon;
      }
      return { uid: b.readUInt32LE(at + 4), gid: b.readUInt32LE(at + 8) };
    }

    /**
     * Unmounting: a lazy umount2 in this process where the patched binding offers it and we may
     * (root); else fuse-native's own `sh -c "fusermount -uz MNT"`. The fork of the daemon that the
     * latter costs grows with the daemon's memory and the machine's load: seconds at a few GB under
     * load, which once ran a crash past its 10 s bound.
     */
    protected override _close(cb: (err: Error | null) => void): void {
      let r: number;
      try {
        r = this.detachNow();
      } catch (e) {
        return cb(e instanceof Error ? e : new Error(String(e)));
      }
      if (r === EPERM) return super._close(cb);
      if (r !== 0) return cb(Object.assign(new Error(`umount2 ${this.mnt}: errno ${-r}`), { unmountFailure: true }));
      cb(null);
    }

    /** fuse-native knows 35 opcodes; the patched binding reads 36 flags, the last one fallocate's. */
    protected override _getImplementedArray(): Uint32Array {
      const stock = super._getImplementedArray();
      if (!patched) return stock;
      const flags = new Uint32Array(PATCHED_OPCODE_COUNT);
      flags.set(stock);
      flags[FALLOCATE_OPCODE] = this.ops.fallocate ? 1 : 0;
      return flags;
    }

    protected override _makeHandlerArray() {
      const handlers = super._makeHandlerArray();
      const self = this;
      for (let i = 0; i < handlers.length; i++) {
        const handler = handlers[i];
        if (handler === undefined) continue;
        // JavaScript runs one request at a time: the buffer stays current until the op returns.
        // (`arguments` rather than a rest array: this runs for every request.)
        handlers[i] = function (buffer: Buffer) {
          self.requestBuffer = buffer;
          // eslint-disable-next-line prefer-rest-params
          return handler.apply(null, arguments as unknown as unknown[]);
        };
      }
      installDirectHandlers(handlers, this.ops, binding, patched, (l) => (self.requestBuffer = l));
      return handlers;
    }
  };
}

/**
 * The frequent requests skip fuse-native's generic dispatch (per request: a bound signal, two
 * argument arrays, a method looked up by name, a stat array, process.nextTick) and answer the
 * binding directly. The native signal copies what it needs at once (the stat into libfuse's
 * struct, the result) and posts the FUSE thread, so one stat array serves every answer. `seen`
 * gets each request's buffer first (the caller's uid and gid are read from it).
 */
function installDirectHandlers(handlers: (((...args: any[]) => unknown) | undefined)[], ops: Record<string, (...args: any[]) => void>, b: FuseBinding, patched: boolean, seen: (requestBuffer: Buffer) => void): void {
  const stat = new Uint32Array(18);
  const attrs = (signal: (...a: unknown[]) => void) => (l: Buffer) => (err: number, s?: FuseStat) => {
    if (!err && s) fillStatArray(stat, s);
    signal(l, err || (s ? 0 : EIO), stat);
  };
  const getattrAnswer = attrs(b.fuse_native_signal_getattr);
  const fgetattrAnswer = attrs(b.fuse_native_signal_fgetattr);
  const sigWrite = b.fuse_native_signal_write;
  const sigRead = b.fuse_native_signal_read;
  const sigFsync = b.fuse_native_signal_fsync;
  const sigFlush = b.fuse_native_signal_flush;
  const sigRelease = b.fuse_native_signal_release;
  const sigOpen = b.fuse_native_signal_open;
  const sigCreate = b.fuse_native_signal_create;
  handlers[b.op_getattr] = (l: Buffer, _op: number, path: string) => {
    seen(l);
    ops.getattr(path, getattrAnswer(l));
  };
  // fstat by handle (2.2.6 would answer it by path, which fails once the file is unlinked).
  handlers[b.op_fgetattr] = (l: Buffer, _op: number, path: string, fd: number) => {
    seen(l);
    ops.fgetattr(path, fd, fgetattrAnswer(l));
  };
  handlers[b.op_write] = (l: Buffer, _op: number, path: string, fd: number, buf: Buffer, len: number, lo: number, hi: number) => {
    seen(l);
    ops.write(path, fd, buf, len, lo + hi * 4294967296, (r: number) => sigWrite(l, r, 0, buf.buffer));
  };
  handlers[b.op_read] = (l: Buffer, _op: number, path: string, fd: number, buf: Buffer, len: number, lo: number, hi: number) => {
    seen(l);
    ops.read(path, fd, buf, len, lo + hi * 4294967296, (r: number) => sigRead(l, r, 0, buf.buffer));
  };
  handlers[b.op_fsync] = (l: Buffer, _op: number, path: string, datasync: number, fd: number) => {
    seen(l);
    ops.fsync(path, datasync, fd, (r: number) => sigFsync(l, r));
  };
  handlers[b.op_flush] = (l: Buffer, _op: number, path: string, fd: number) => {
    seen(l);
    ops.flush(path, fd, (r: number) => sigFlush(l, r));
  };
  handlers[b.op_release] = (l: Buffer, _op: number, path: string, fd: number) => {
    seen(l);
    ops.release(path, fd, (r: number) => sigRelease(l, r));
  };
  handlers[b.op_open] = (l: Buffer, _op: number, path: string, flags: number) => {
    seen(l);
    ops.open(path, flags, (r: number, fd?: number) => sigOpen(l, r, fd ?? 0));
  };
  handlers[b.op_create] = (l: Buffer, _op: number, path: string, mode: number) => {
    seen(l);
    ops.create(path, mode, (r: number, fd?: number) => sigCreate(l, r, fd ?? 0));
  };
  // fallocate exists only in the patched binding (fuse-native has no handler of its own for it).
  const sigFallocate = b.fuse_native_signal_fallocate;
  if (patched && sigFallocate && ops.fallocate) {
    handlers[FALLOCATE_OPCODE] = (l: Buffer, _op: number, path: string, fd: number, mode: number, offLo: number, offHi: number, lenLo: number, lenHi: number) => {
      seen(l);
      ops.fallocate(path, fd, mode, offLo + offHi * 4294967296, lenLo + lenHi * 4294967296, (r: number) => sigFallocate(l, r));
    };
  }
}

interface FuseStat {
  mode: number; uid: number; gid: number; size: number; nlink: number; ino: number; rdev: number;
  blksize: number; blocks: number; atime: number; mtime: number; ctime: number;
}

/** fuse-native's stat layout (getStatArray in its index.js): uint32 fields, 64-bit values as low/high pairs, times in ms. */
function fillStatArray(a: Uint32Array, s: FuseStat): void {
  a[0] = s.mode;
  a[1] = s.uid;
  a[2] = s.gid;
  a[3] = s.size % 4294967296;
  a[4] = Math.floor(s.size / 4294967296);
  a[5] = 0; // st_dev: the kernel's
  a[6] = s.nlink;
  a[7] = s.ino;
  a[8] = s.rdev;
  a[9] = s.blksize;
  a[10] = s.blocks % 4294967296;
  a[11] = Math.floor(s.blocks / 4294967296);
  a[12] = s.atime % 4294967296;
  a[13] = Math.floor(s.atime / 4294967296);
  a[14] = s.mtime % 4294967296;
  a[15] = Math.floor(s.mtime / 4294967296);
  a[16] = s.ctime % 4294967296;
  a[17] = Math.floor(s.ctime / 4294967296);
}

export type FuseOps = Record<string, (...args: any[]) => void>;
export interface FuseHandle {
  unmount(cb: (err: Error | null) => void): void;
}

/** What replaceGeneration needs of a mounted instance beyond FuseHandle (PowercutFuse). */
interface Swappable extends FuseHandle {
  mnt: string;
  detachNow(): number;
  threadBuffer(): Buffer | null;
}

/**
 * Mounts `ops` (fuse-native's callback signatures, as makeFuseOps builds them) at `mountpoint` the
 * way powercut mounts: the same binding, options, fast request paths and unmount. `makeOps` gets
 * the caller of the request being handled. The fs benchmark mounts its bare filesystem with this too.
 */
export async function mountFuse(mountpoint: string, makeOps: (ctx: RequestContext) => FuseOps, fsname = 'powercut', extraOptions = ''): Promise<FuseHandle> {
  FuseWithCaller ??= { Fuse: makeFuseClass(), patched: loadFuseNative().patched };
  let fuse: InstanceType<typeof FuseWithCaller.Fuse> | null = null;
  const ops = makeOps({ caller: () => fuse!.caller(), fullUtimens: FuseWithCaller.patched });
  fuse = new FuseWithCaller.Fuse(mountpoint, ops, {
    force: true, // cleans a stale mount left by a killed daemon (fusermount -uz)
    mkdir: true,
    autoUnmount: !IS_ROOT,
    timeout: false, // a request held at the crash point waits as long as the harness needs
    // The kernel checks modes and owners from getattr (the model keeps them); without it anyone
    // allowed in could do anything, and root-squashing tests would mean nothing.
    defaultPermissions: true,
    allowOther: mayAllowOther(),
    fsname: `${fsname},${MOUNT_OPTIONS}${extraOptions ? `,${extraOptions}` : ''}`,
  });
  const f = fuse;
  await withTimeout(`mounting ${mountpoint}`, MOUNT_TIMEOUT_MS, new Promise<void>((resolve, reject) => {
    f.mount((err: Error | null) => (err ? reject(new Error(`cannot mount ${mountpoint}: ${err.message}`)) : resolve()));
  }));
  return f;
}

/** Detaches a mount made by mountFuse (bounded). */
export async function unmountFuse(fuse: FuseHandle): Promise<void> {
  await withTimeout('unmounting', MOUNT_TIMEOUT_MS, new Promise<void>((resolve, reject) => {
    fuse.unmount((err: Error | null) => (err ? reject(new Error(`unmount failed: ${err.message}`)) : resolve()));
  }));
}

export async function mountGeneration(mountpoint: string, state: FsState, extraOptions = ''): Promise<Mounted> {
  if (state.generation === 0) sweepStaleSpares();
  const generation = ++state.generation;
  const fuse = await mountFuse(mountpoint, (ctx) => makeFuseOps(state, generation, ctx), 'powercut', extraOptions);
  const thread = (fuse as Swappable).threadBuffer();
  if (thread && state.writeBehind) state.writeBehind.attach(thread, state, generation);
  return { fuse, generation };
}

/** Detaches the mount; requests still arriving on it are answered EIO by the dead generation. */
export async function unmountGeneration(m: Mounted, state: FsState): Promise<void> {
  if (state.generation === m.generation) state.generation++;
  await unmountFuse(m.fuse);
}

/** Spare mountpoints: /tmp/powercut-next-<daemon pid>-XXXXXX. */
const SPARE_PREFIX = 'powercut-next-';
/** False once the kernel refused a move beneath (before Linux 6.5, or a shared parent mount): no more tries. */
let swapWorks = true;

/** A replacement that failed and left generations mounted: `stillMounted`, topmost first, for the caller to unmount. */
export class ReplaceFailure extends Error {
  constructor(message: string, readonly stillMounted: Mounted[]) {
    super(message);
  }
}

/**
 * Puts a new generation in the place of `old` (a power cut, a reset when frozen). `old` answers EIO
 * from the start. `change` (the power cut applied to the model, or a new model) runs before the new
 * generation can serve; `detached` (answering the held requests, restarting the gate) runs once
 * `old` is detached and before the new generation serves a request at `mountpoint`.
 *
 * As root with the patched binding the new generation is mounted at a spare directory, moved
 * beneath the old one (move_mount, MOVE_MOUNT_BENEATH) and the old one detached on top of it: the
 * path never shows the directory underneath. Unmounting first and mounting after would leave a
 * moment where a program still running on the mount writes into that directory (files then hidden
 * under the new mount, and a non-empty mountpoint that libfuse refuses: "fuse failed"). Elsewhere
 * (not root, older kernels, a shared parent mount) that is what happens, with `nonempty` so the
 * mount never fails over such leftovers.
 *
 * If detaching or unmounting fails, `detached` still runs (the held requests must be answered or
 * their processes hang; `old` answers EIO to anything else) and a ReplaceFailure names what is still mounted.
 */
export async function replaceGeneration(mountpoint: string, state: FsState, old: Mounted | null, change: () => void, detached: () => void): Promise<Mounted> {
  if (old && state.generation === old.generation) state.generation++;
  let answered = false;
  const answerHeld = () => {
    if (answered) return;
    answered = true;
    detached();
  };
  let changed = false;
  if (old && swapWorks && IS_ROOT && loadFuseNative().binding.powercut_move_mount) {
    change();
    changed = true;
    const spare = mkdtempSync(join(tmpdir(), `${SPARE_PREFIX}${process.pid}-`));
    let next: Mounted | null = null;
    let moved = -1;
    try {
      next = await mountGeneration(spare, state);
      moved = loadFuseNative().binding.powercut_move_mount!(spare, mountpoint, 1);
    } catch (e) {
      console.error(`powercut fs: mounting the next generation at ${spare} failed (${message(e)}); remounting by unmount and mount`);
    }
    if (next && moved === 0) {
      // The new generation is beneath the old one: detach the old one on top, synchronously, so no
      // request reaches the new one before `detached` has run.
      let failure: string | null = null;
      try {
        const r = (old.fuse as Swappable).detachNow();
        if (r !== 0) failure = `umount2: errno ${-r}`;
      } catch (e) {
        failure = message(e);
      }
      (next.fuse as Swappable).mnt = mountpoint;
      rmdirQuiet(spare);
      answerHeld();
      if (failure !== null) {
        throw new ReplaceFailure(`replacing the mount at ${mountpoint}: detaching the old generation failed (${failure}); it stays mounted there, on top of the new one`, [old, next]);
      }
      return next;
    }
    if (next) {
      swapWorks = false;
      console.error(`powercut fs: cannot move a mount beneath ${mountpoint} (errno ${-moved}); remounting by unmount and mount from now on`);
      if (state.generation === next.generation) state.generation++;
      try {
        await unmountFuse(next.fuse);
      } catch (e) {
        answerHeld();
        throw new ReplaceFailure(`replacing the mount at ${mountpoint}: unmounting the unused next generation at ${spare} failed (${message(e)})`, [next, old]);
      }
    }
    rmdirQuiet(spare);
  }
  if (old) {
    try {
      await unmountGeneration(old, state);
    } catch (e) {
      answerHeld();
      throw new ReplaceFailure(`replacing the mount at ${mountpoint}: unmounting the old generation failed (${message(e)})`, [old]);
    }
  }
  answerHeld();
  if (!changed) change();
  return mountGeneration(mountpoint, state, old ? 'nonempty' : '');
}

const message = (e: unknown) => (e instanceof Error ? e.message : String(e));

function rmdirQuiet(dir: string): void {
  try {
    rmdirSync(dir);
  } catch { /* still a mountpoint (failed swap) or gone: the sweep of a later start takes it */ }
}

/** Spare mounts of daemons that were killed in the middle of a swap: detached at the first mount of a daemon. */
function sweepStaleSpares(): void {
  let mounts: string[];
  try {
    mounts = readFileSync('/proc/mounts', 'utf8').split('\n').map((l) => l.split(' ')[1] ?? '');
  } catch {
    return;
  }
  const prefix = join(tmpdir(), SPARE_PREFIX);
  for (const m of mounts) {
    if (!m.startsWith(prefix)) continue;
    const pid = Number(/^(\d+)-/.exec(m.slice(prefix.length))?.[1]);
    if (!Number.isSafeInteger(pid) || isAlive(pid)) continue;
    const umount2 = loadFuseNative().binding.powercut_umount2;
    if (!umount2 || umount2(m) === EPERM) {
      try {
        execFileSync('fusermount', ['-uz', m], { stdio: 'ignore', timeout: 5_000 });
      } catch { /* best effort */ }
    }
    rmdirQuiet(m);
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}
