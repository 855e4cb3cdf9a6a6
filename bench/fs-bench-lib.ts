// The pieces of `npm run bench:fs` that run in other processes, and what the bench shares:
//   - the BARE filesystem: powercut's own mount (same patched fuse-native binding, options, fast
//     request paths, unmount) over a filesystem that keeps nothing: the ceiling of anything built
//     on fuse-native here (its per-request thread hop), measured in the same run;
//   - a FUSE server in plain JS reading /dev/fuse on its main thread (no binding, no thread hop;
//     root only): what a single-threaded server on the event loop could reach (from
//     bench/fuse-ceiling.ts on branch fs-ceiling, where the C libfuse2 reference also lives);
//   - workloads, small-request rates, statistics, and cleanup of every process and mount started.
// Child entry: node dist/bench/fs-bench-lib.js --serve bare|rawjs --mountpoint DIR
import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import {
  closeSync, fstatSync, fsyncSync, mkdirSync, openSync, readFileSync, readSync, rmSync, statSync, writeSync,
} from 'node:fs';
import { resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { mountFuse, unmountFuse, withTimeout, type FuseHandle, type FuseOps } from '../fusefs/mount-generation.js';
import { processOwner } from '../fusefs/model/fs-model.js';
import { cleanupStaleMount } from '../src/harness/daemon-process.js';

const SELF = fileURLToPath(import.meta.url);
const REQUEST_TIMEOUT_MS = 60_000;
const STOP_TIMEOUT_MS = 5_000;
const ENOENT = -2;

// ───────────────────────────── the bare filesystem (child process) ─────────────────────────────

type Cb = (...a: any[]) => void;

/** Request counts by op, and write sizes, since the last `stats`. */
interface Counts { counts: Record<string, number>; writeLens: [number, number][] }

function bareOps(count: (op: string) => void, writeLen: (len: number) => void): FuseOps {
  const { uid, gid } = processOwner();
  interface F { mode: number; size: number; ino: number }
  const root: F = { mode: 0o040755, size: 4096, ino: 1 };
  const files = new Map<string, F>();
  let nextIno = 2;
  let nextFd = 1;
  const st = (f: F) => ({ mode: f.mode, uid, gid, size: f.size, nlink: f.mode & 0o040000 ? 2 : 1, ino: f.ino, rdev: 0, blksize: 4096, blocks: Math.ceil(f.size / 512), atime: 1, mtime: 1, ctime: 1 });
  const get = (p: string) => (p === '/' ? root : files.get(p));
  return {
    init: (cb: Cb) => { count('init'); cb(0); },
    statfs: (_p: string, cb: Cb) => { count('statfs'); cb(0, { bsize: 4096, frsize: 4096, blocks: 1 << 24, bfree: 1 << 23, bavail: 1 << 23, files: 1 << 20, ffree: 1 << 19, favail: 1 << 19, fsid: 0xbead, flag: 0, namemax: 255 }); },
    getattr: (p: string, cb: Cb) => { count('getattr'); const f = get(p); if (f) cb(0, st(f)); else cb(ENOENT); },
    fgetattr: (p: string, _fd: number, cb: Cb) => { count('fgetattr'); const f = get(p); if (f) cb(0, st(f)); else cb(ENOENT); },
    create: (p: string, mode: number, cb: Cb) => { count('create'); files.set(p, { mode: 0o100000 | (mode & 0o7777), size: 0, ino: nextIno++ }); cb(0, nextFd++); },
    open: (p: string, _flags: number, cb: Cb) => { count('open'); if (files.has(p)) cb(0, nextFd++); else cb(ENOENT); },
    opendir: (_p: string, _flags: number, cb: Cb) => { count('opendir'); cb(0, nextFd++); },
    read: (p: string, _fd: number, _buf: Buffer, len: number, pos: number, cb: Cb) => { count('read'); const f = files.get(p); cb(f ? Math.max(0, Math.min(len, f.size - pos)) : 0); },
    write: (p: string, _fd: number, _buf: Buffer, len: number, pos: number, cb: Cb) => {
      count('write');
      writeLen(len);
      const f = files.get(p);
      if (f && pos + len > f.size) f.size = pos + len;
      cb(len);
    },
    flush: (_p: string, _fd: number, cb: Cb) => { count('flush'); cb(0); },
    fsync: (_p: string, _ds: number, _fd: number, cb: Cb) => { count('fsync'); cb(0); },
    release: (_p: string, _fd: number, cb: Cb) => { count('release'); cb(0); },
    releasedir: (_p: string, _fd: number, cb: Cb) => { count('releasedir'); cb(0); },
    truncate: (p: string, size: number, cb: Cb) => { count('truncate'); const f = files.get(p); if (f) f.size = size; cb(f ? 0 : ENOENT); },
    ftruncate: (p: string, _fd: number, size: number, cb: Cb) => { count('ftruncate'); const f = files.get(p); if (f) f.size = size; cb(f ? 0 : ENOENT); },
    unlink: (p: string, cb: Cb) => { count('unlink'); cb(files.delete(p) ? 0 : ENOENT); },
    readdir: (_p: string, cb: Cb) => { count('readdir'); cb(0, [...files.keys()].map((k) => k.slice(1))); },
    utimens: (_p: string, _a: number, _m: number, cb: Cb) => { count('utimens'); cb(0); },
    chmod: (_p: string, _m: number, cb: Cb) => { count('chmod'); cb(0); },
    chown: (_p: string, _u: number, _g: number, cb: Cb) => { count('chown'); cb(0); },
  };
}

/** The bare filesystem: mounted like powercut, answering one JSON line per stdin line (stats, remount, quit). */
async function serveBare(mountpoint: string): Promise<void> {
  let counts: Record<string, number> = {};
  let writeLens = new Map<number, number>();
  const count = (op: string) => { counts[op] = (counts[op] ?? 0) + 1; };
  const writeLen = (len: number) => writeLens.set(len, (writeLens.get(len) ?? 0) + 1);
  const mount = () => mountFuse(mountpoint, () => bareOps(count, writeLen), 'powercut-bare');
  let fuse: FuseHandle | null = await mount();
  const reply = (o: unknown) => process.stdout.write(`${JSON.stringify(o)}\n`);
  reply({ event: 'mounted', pid: process.pid });
  const handle = async (req: { cmd: string; cycles?: number }): Promise<object> => {
    switch (req.cmd) {
      case 'stats': {
        const out: Counts = { counts, writeLens: [...writeLens].sort((x, y) => y[1] - x[1]).slice(0, 6) };
        counts = {};
        writeLens = new Map();
        return out;
      }
      case 'remount': {
        // The floor under powercut's crash: the same unmount and mount, no model.
        const ms: number[] = [];
        for (let i = 0; i < (req.cycles ?? 1); i++) {
          const t0 = performance.now();
          await unmountFuse(fuse!);
          fuse = null;
          fuse = await mount();
          ms.push(performance.now() - t0);
        }
        return { ms };
      }
      case 'quit':
        if (fuse) await unmountFuse(fuse);
        fuse = null;
        return {};
      default:
        throw new Error(`unknown command ${String(req.cmd)}`);
    }
  };
  let chain: Promise<unknown> = Promise.resolve();
  const rl = createInterface({ input: process.stdin });
  rl.on('line', (line) => {
    chain = chain.then(async () => {
      let req: { cmd: string } | null = null;
      try {
        req = JSON.parse(line);
        reply({ ok: true, ...(await handle(req!)) });
      } catch (e) {
        reply({ ok: false, error: e instanceof Error ? e.message : String(e) });
      }
      if (req?.cmd === 'quit') setTimeout(() => process.exit(0), 50);
    });
  });
  // The bench went away: unmount and leave.
  rl.on('close', () => void chain.then(() => (fuse ? unmountFuse(fuse) : undefined)).finally(() => process.exit(0)));
}

// ─────────────── a FUSE server in plain JS on /dev/fuse (no binding, no thread hop) ───────────────
// What a Node filesystem without fuse-native's per-request thread hop could reach: this process
// opens /dev/fuse, has mount(8) mount it (fd passed as the mount process's fd 3), and answers the
// kernel's requests itself with readSync in a loop on the main thread (its event loop is blocked:
// a ceiling, not a design; a real server would poll /dev/fuse from the event loop).

const OP = { LOOKUP: 1, FORGET: 2, GETATTR: 3, SETATTR: 4, OPEN: 14, READ: 15, WRITE: 16, STATFS: 17, RELEASE: 18, FSYNC: 20, FLUSH: 25, INIT: 26, OPENDIR: 27, READDIR: 28, RELEASEDIR: 29, CREATE: 35, INTERRUPT: 36, DESTROY: 38, BATCH_FORGET: 42, UNLINK: 10 } as const;

function serveRawJs(mountpoint: string): void {
  mkdirSync(mountpoint, { recursive: true });
  const fd = openSync('/dev/fuse', 'r+');
  const { uid, gid } = processOwner();
  const r = spawnSync('mount', ['-i', '-t', 'fuse', '-o', `fd=3,rootmode=40000,user_id=${uid},group_id=${gid}`, 'rawjs', mountpoint], { stdio: ['ignore', 'inherit', 'inherit', fd], timeout: 10_000 });
  if (r.status !== 0) throw new Error(`mount(8) of /dev/fuse failed: status ${r.status}`);
  interface N { id: number; name: string; size: number; mode: number }
  const byName = new Map<string, N>();
  const byId = new Map<number, N>([[1, { id: 1, name: '', size: 4096, mode: 0o040755 }]]);
  byName.set('big', { id: 2, name: 'big', size: 16 << 20, mode: 0o100644 });
  byId.set(2, byName.get('big')!);
  let nextId = 3;
  let nextFh = 1;
  const inBuf = Buffer.alloc(132 * 1024 + 4096);
  const out = Buffer.alloc(132 * 1024 + 4096);
  const zeros = Buffer.alloc(128 * 1024);
  let announced = false;
  const reply = (unique: bigint, error: number, bodyLen: number) => {
    out.writeUInt32LE(16 + bodyLen, 0);
    out.writeInt32LE(error, 4);
    out.writeBigUInt64LE(unique, 8);
    writeSync(fd, out, 0, 16 + bodyLen);
  };
  const attrAt = (o: number, n: N) => {
    out.fill(0, o, o + 88);
    out.writeBigUInt64LE(BigInt(n.id), o);
    out.writeBigUInt64LE(BigInt(n.size), o + 8);
    out.writeBigUInt64LE(BigInt(Math.ceil(n.size / 512)), o + 16);
    out.writeUInt32LE(n.mode, o + 60);
    out.writeUInt32LE(n.mode & 0o040000 ? 2 : 1, o + 64);
    out.writeUInt32LE(uid, o + 68);
    out.writeUInt32LE(gid, o + 72);
    out.writeUInt32LE(4096, o + 80);
  };
  const entryAt = (o: number, n: N) => { out.fill(0, o, o + 40); out.writeBigUInt64LE(BigInt(n.id), o); attrAt(o + 40, n); };
  const nameAt = (o: number, len: number) => {
    const end = inBuf.indexOf(0, o);
    return inBuf.toString('latin1', o, end >= 0 && end < len ? end : len);
  };
  const handle = (len: number): boolean => {
    const opcode = inBuf.readUInt32LE(4);
    const unique = inBuf.readBigUInt64LE(8);
    const nodeid = Number(inBuf.readBigUInt64LE(16));
    const b = 40; // fuse_in_header
    switch (opcode) {
      case OP.INIT: {
        const maxReadahead = inBuf.readUInt32LE(b + 8);
        out.fill(0, 16, 16 + 64);
        out.writeUInt32LE(7, 16);
        out.writeUInt32LE(31, 20);
        out.writeUInt32LE(maxReadahead, 24);
        out.writeUInt32LE(1 | (1 << 5), 28); // ASYNC_READ | BIG_WRITES
        out.writeUInt16LE(12, 32);
        out.writeUInt16LE(9, 34);
        out.writeUInt32LE(128 * 1024, 36); // max_write
        out.writeUInt32LE(1, 40); // time_gran
        reply(unique, 0, 64);
        if (!announced) { announced = true; process.stdout.write(`${JSON.stringify({ event: 'mounted', pid: process.pid })}\n`); }
        return true;
      }
      case OP.LOOKUP: {
        const n = nodeid === 1 ? byName.get(nameAt(b, len)) : undefined;
        if (!n) { reply(unique, -2, 0); return true; }
        entryAt(16, n);
        reply(unique, 0, 128);
        return true;
      }
      case OP.GETATTR:
      case OP.SETATTR: {
        const n = byId.get(nodeid);
        if (!n) { reply(unique, -2, 0); return true; }
        if (opcode === OP.SETATTR && inBuf.readUInt32LE(b) & (1 << 3)) n.size = Number(inBuf.readBigUInt64LE(b + 16));
        out.fill(0, 16, 32);
        attrAt(32, n);
        reply(unique, 0, 104);
        return true;
      }
      case OP.CREATE: {
        const name = nameAt(b + 16, len);
        const n: N = { id: nextId++, name, size: 0, mode: 0o100000 | (inBuf.readUInt32LE(b + 4) & 0o7777) };
        byName.set(name, n);
        byId.set(n.id, n);
        entryAt(16, n);
        out.fill(0, 144, 160);
        out.writeBigUInt64LE(BigInt(nextFh++), 144);
        reply(unique, 0, 144);
        return true;
      }
      case OP.OPEN:
      case OP.OPENDIR:
        out.fill(0, 16, 32);
        out.writeBigUInt64LE(BigInt(nextFh++), 16);
        reply(unique, 0, 16);
        return true;
      case OP.WRITE: {
        const off = Number(inBuf.readBigUInt64LE(b + 8));
        const size = inBuf.readUInt32LE(b + 16);
        const n = byId.get(nodeid);
        if (n && off + size > n.size) n.size = off + size;
        out.writeUInt32LE(size, 16);
        out.writeUInt32LE(0, 20);
        reply(unique, 0, 8);
        return true;
      }
      case OP.READ: {
        const off = Number(inBuf.readBigUInt64LE(b + 8));
        const size = inBuf.readUInt32LE(b + 16);
        const n = byId.get(nodeid);
        const count = n ? Math.max(0, Math.min(size, n.size - off)) : 0;
        zeros.copy(out, 16, 0, count);
        reply(unique, 0, count);
        return true;
      }
      case OP.UNLINK: {
        const n = byName.get(nameAt(b, len));
        if (n) { byName.delete(n.name); byId.delete(n.id); }
        reply(unique, n ? 0 : -2, 0);
        return true;
      }
      case OP.READDIR:
        reply(unique, 0, 0);
        return true;
      case OP.STATFS:
        out.fill(0, 16, 96);
        out.writeUInt32LE(4096, 16 + 40);
        out.writeUInt32LE(255, 16 + 44);
        out.writeUInt32LE(4096, 16 + 48);
        reply(unique, 0, 80);
        return true;
      case OP.FLUSH: case OP.FSYNC: case OP.RELEASE: case OP.RELEASEDIR: case OP.DESTROY:
        reply(unique, 0, 0);
        return true;
      case OP.FORGET: case OP.BATCH_FORGET: case OP.INTERRUPT:
        return true; // no answer
      default:
        reply(unique, -38, 0); // ENOSYS
        return true;
    }
  };
  const done = (e: NodeJS.ErrnoException) => {
    if (e.code === 'ENODEV') process.exit(0); // unmounted
    throw e;
  };
  for (;;) {
    let n: number;
    try {
      n = readSync(fd, inBuf, 0, inBuf.length, null);
    } catch (e) {
      done(e as NodeJS.ErrnoException);
      return;
    }
    handle(n);
  }
}


// ───────────────────────────── processes, mounts, cleanup ─────────────────────────────

/** A process that answers one stdout line per stdin line, in order. */
class LineProcess {
  private waiting: ((line: string) => void)[] = [];
  private early: string[] = [];
  constructor(readonly proc: ChildProcess) {
    createInterface({ input: proc.stdout! }).on('line', (line) => {
      const w = this.waiting.shift();
      if (w) w(line); else this.early.push(line);
    });
  }
  next(timeoutMs: number): Promise<string> {
    const e = this.early.shift();
    if (e !== undefined) return Promise.resolve(e);
    // A request that times out keeps its place in `waiting`: the process answers every line once, in
    // order, so its late answer lands there (and is dropped) and later answers reach their own requests.
    return withTimeout(`an answer of process ${this.proc.pid}`, timeoutMs, new Promise<string>((res) => this.waiting.push(res)));
  }
  call(line: string, timeoutMs: number): Promise<string> {
    this.proc.stdin!.write(`${line}\n`);
    return this.next(timeoutMs);
  }
}

const liveMounts = new Set<string>();
const liveProcs = new Set<ChildProcess>();
const workDirs = new Set<string>();
/** Removes `dir` in cleanupAll, after every mount in it is gone (a bench stopped early, output piped into `head`). */
export function removeOnExit(dir: string): void {
  installHooks();
  workDirs.add(dir);
}

/** Kills every server this process started and unmounts what they left, then removes the work dirs. */
export async function cleanupAll(): Promise<void> {
  for (const p of liveProcs) try { p.kill('SIGKILL'); } catch { /* gone */ }
  for (const m of liveMounts) {
    try {
      await cleanupStaleMount(m);
      liveMounts.delete(m);
    } catch (e) {
      console.error(e instanceof Error ? e.message : String(e));
    }
  }
  removeWorkDirs();
}

/** At exit nothing can be awaited: SIGKILL the servers, detach their mounts (fusermount -uz), remove the work dirs. */
function cleanupAtExit(): void {
  for (const p of liveProcs) try { p.kill('SIGKILL'); } catch { /* gone */ }
  for (const m of liveMounts) try { execFileSync('fusermount', ['-uz', m], { stdio: 'ignore', timeout: STOP_TIMEOUT_MS }); } catch { /* not mounted any more, or best effort */ }
  removeWorkDirs();
}

function removeWorkDirs(): void {
  const mounts = readFileSync('/proc/mounts', 'utf8');
  for (const dir of workDirs) {
    if (mounts.includes(` ${dir}/`)) continue; // never rm -rf into a mount
    try { rmSync(dir, { recursive: true, force: true }); } catch { /* best effort */ }
    workDirs.delete(dir);
  }
}

/** Registers a process and its mount for cleanup on exit and signals (until untracked). */
export function track(proc: ChildProcess, mountpoint: string): void {
  installHooks();
  liveProcs.add(proc);
  liveMounts.add(mountpoint);
}
export async function untrack(proc: ChildProcess, mountpoint: string): Promise<void> {
  await cleanupStaleMount(mountpoint);
  liveProcs.delete(proc);
  liveMounts.delete(mountpoint);
}

let hooks = false;
function installHooks(): void {
  if (hooks) return;
  hooks = true;
  process.on('exit', cleanupAtExit);
  // Output piped into `head`: stop quietly (the exit hook still cleans up).
  process.stdout.on('error', (e: NodeJS.ErrnoException) => { if (e.code === 'EPIPE') process.exit(0); });
  for (const sig of ['SIGINT', 'SIGTERM'] as const) process.once(sig, () => void cleanupAll().finally(() => process.exit(130)));
}

/** True once `p` exited, false if it is still running after `ms`. */
export function exited(p: ChildProcess, ms: number): Promise<boolean> {
  if (p.exitCode !== null || p.signalCode !== null) return Promise.resolve(true);
  return new Promise((res) => {
    const t = setTimeout(() => res(false), ms);
    p.once('exit', () => { clearTimeout(t); res(true); });
  });
}

export interface Target {
  name: string;
  dir: string;
  /** Request counts since the last call (the bare filesystem only). */
  stats?: () => Promise<Counts>;
  /** Between workloads (powercut: reset, which frees the model). */
  between?: () => Promise<void>;
  stop: () => Promise<void>;
}

async function startServer(kind: 'bare' | 'rawjs', mountpoint: string): Promise<LineProcess> {
  installHooks();
  mkdirSync(mountpoint, { recursive: true });
  const proc = spawn(process.execPath, [SELF, '--serve', kind, '--mountpoint', mountpoint], { stdio: ['pipe', 'pipe', 'inherit'] });
  liveProcs.add(proc);
  liveMounts.add(mountpoint);
  const lp = new LineProcess(proc);
  // The plain-JS server says it is mounted when it answers INIT, which the kernel sends during the mount.
  const first = JSON.parse(await lp.next(15_000)) as { event?: string };
  if (first.event !== 'mounted') throw new Error(`${kind} fs: unexpected first line ${JSON.stringify(first)}`);
  return lp;
}

async function stopServer(lp: LineProcess | null, mountpoint: string, quit: boolean): Promise<void> {
  if (lp && quit) try { await lp.call(JSON.stringify({ cmd: 'quit' }), STOP_TIMEOUT_MS); } catch { /* killed below */ }
  if (!quit) await cleanupStaleMount(mountpoint); // the plain-JS server exits when its mount goes
  if (lp) {
    if (!(await exited(lp.proc, STOP_TIMEOUT_MS))) lp.proc.kill('SIGKILL');
    await exited(lp.proc, STOP_TIMEOUT_MS);
    liveProcs.delete(lp.proc);
  }
  await cleanupStaleMount(mountpoint);
  liveMounts.delete(mountpoint);
}

export class BareFs {
  private constructor(private readonly lp: LineProcess, readonly mountpoint: string) {}
  static async start(mountpoint: string): Promise<BareFs> {
    return new BareFs(await startServer('bare', mountpoint), mountpoint);
  }
  async request(req: object, timeoutMs = REQUEST_TIMEOUT_MS): Promise<any> {
    const a = JSON.parse(await this.lp.call(JSON.stringify(req), timeoutMs));
    if (!a.ok) throw new Error(`bare fs ${JSON.stringify(req)}: ${a.error}`);
    return a;
  }
  target(name: string): Target {
    return { name, dir: this.mountpoint, stats: () => this.request({ cmd: 'stats' }), stop: () => stopServer(this.lp, this.mountpoint, true) };
  }
}

export async function startRawJs(mountpoint: string, name: string): Promise<Target> {
  const lp = await startServer('rawjs', mountpoint);
  return { name, dir: mountpoint, stop: () => stopServer(lp, mountpoint, false) };
}

// ───────────────────────────── workloads ─────────────────────────────

export interface Workload { name: string; recordBytes: number; totalBytes: number; fsyncEvery: number }
export const WORKLOADS: Workload[] = [
  { name: 'seq 128 KiB writes', recordBytes: 128 * 1024, totalBytes: 64 << 20, fsyncEvery: 0 },
  { name: 'seq 4 KiB writes', recordBytes: 4096, totalBytes: 16 << 20, fsyncEvery: 0 },
  { name: '140 B appends, fsync/1024', recordBytes: 140, totalBytes: 140 * 1024 * 40, fsyncEvery: 1024 },
];

export interface WorkloadResult { mbps: number; opsPerS: number; ops: number }

/** Writes the workload's file in this process with sync calls (every filesystem runs in another process), ending with an fsync. */
export function runWorkload(dir: string, w: Workload): WorkloadResult {
  const path = `${dir}/bench-${w.recordBytes}`;
  const buf = Buffer.alloc(w.recordBytes, 0x61);
  const ops = Math.floor(w.totalBytes / w.recordBytes);
  const t0 = process.hrtime.bigint();
  const fd = openSync(path, 'a');
  for (let i = 1; i <= ops; i++) {
    writeSync(fd, buf);
    if (w.fsyncEvery > 0 && i % w.fsyncEvery === 0) fsyncSync(fd);
  }
  fsyncSync(fd);
  closeSync(fd);
  const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
  rmSync(path);
  return { mbps: (ops * w.recordBytes) / seconds / 1e6, opsPerS: ops / seconds, ops };
}

/** Calls per second of `op`, after a warm-up, for about `maxMs` or `maxOps`. */
export function rate(op: () => void, maxMs = 600, maxOps = 60_000): number {
  for (let i = 0; i < 200; i++) op();
  const t0 = performance.now();
  let done = 0;
  while (done < maxOps) {
    for (let i = 0; i < 250; i++) op();
    done += 250;
    if (performance.now() - t0 > maxMs) break;
  }
  return done / ((performance.now() - t0) / 1000);
}

export interface SmallOp { name: string; setup(dir: string): { op: () => void; done: () => void } }
export const SMALL_OPS: SmallOp[] = [
  {
    name: 'fstat (getattr)',
    setup: (dir) => {
      const p = `${dir}/small-f`;
      const fd = openSync(p, 'w');
      return { op: () => fstatSync(fd), done: () => { closeSync(fd); rmSync(p); } };
    },
  },
  {
    name: 'stat of a missing name (lookup)',
    setup: (dir) => { const p = `${dir}/no-such-file`; return { op: () => statSync(p, { throwIfNoEntry: false }), done: () => {} }; },
  },
  {
    name: '140 B write, no fsync',
    setup: (dir) => {
      const p = `${dir}/small-w`;
      const fd = openSync(p, 'a');
      const b = Buffer.alloc(140, 0x62);
      return { op: () => writeSync(fd, b), done: () => { closeSync(fd); rmSync(p); } };
    },
  },
];

// ───────────────────────────── statistics ─────────────────────────────

export const median = (xs: number[]) => { const s = [...xs].sort((a, b) => a - b); return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2; };
export const num = (x: number, d = 1) => (Math.abs(x) >= 100 || d === 0 ? x.toFixed(0) : x.toFixed(d));
/** "median (min-max)". */
export const spread = (xs: number[], d = 1) => `${num(median(xs), d)} (${num(Math.min(...xs), d)}-${num(Math.max(...xs), d)})`;

/** FUSE requests per syscall, from the bare filesystem's counts. */
export function perSyscall(stats: Counts, syscalls: number): string {
  return Object.entries(stats.counts).filter(([, c]) => c > 0).map(([k, c]) => `${k} ${(c / syscalls).toFixed(c / syscalls < 0.1 ? 3 : 2)}`).join(', ');
}

// ───────────────────────────── child entry ─────────────────────────────

const isMain = process.argv[1] !== undefined && resolve(process.argv[1]) === SELF;
if (isMain) {
  const { values } = parseArgs({ options: { serve: { type: 'string' }, mountpoint: { type: 'string' } } });
  if (!values.mountpoint || (values.serve !== 'bare' && values.serve !== 'rawjs')) {
    console.error('usage: fs-bench-lib.js --serve bare|rawjs --mountpoint DIR');
    process.exit(2);
  }
  if (values.serve === 'rawjs') serveRawJs(values.mountpoint);
  else serveBare(values.mountpoint).catch((e: unknown) => {
    console.error(`bare fs: ${e instanceof Error ? e.message : String(e)}`);
    process.exit(1);
  });
}
