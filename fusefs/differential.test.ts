// Differential (conformance) test: random sequences of system calls on the mount and on an
// ordinary directory on the host's filesystem (ext4 here) give the same results (value or errno) and
// the same metadata after every call: type, mode, owner, group, link count, size, device number,
// which paths share an inode, and whether each inode's mtime and ctime changed (not the times
// themselves). The calls include fallocate in every mode FUSE passes on (mode 0, KEEP_SIZE,
// PUNCH_HOLE, ZERO_RANGE with and without KEEP_SIZE, through a small C caller: testing.ts), holes
// (writes past the end, punches), a truncate past the largest file, and a name over 255 bytes. Calls run in two worker processes, one as root and one as an unprivileged user
// (uid/gid 65534), so permission checks are compared too: the test runs as root, and fails saying so
// otherwise. No crash: the live view is a correct filesystem.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { chmodSync, mkdtempSync, writeFileSync } from 'node:fs';
import * as fsp from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { execa, type ResultPromise } from 'execa';
import { startDaemon, type DaemonHandle } from '../src/harness/daemon-process.js';
import { buildFallocateCall, requireRoot } from './testing.js';

const OTHER_ID = 65534; // nobody
const WORKER_TIMEOUT_MS = 20_000;
/** Between two calls on the same tree, so that "changed" is visible at the mount's 1 ms time resolution. */
const CALL_GAP_MS = 3;

// The worker applies one call (or takes a snapshot) per JSON line on stdin and answers one JSON line.
// Node has no mkfifo or mknod: the coreutils commands make those calls, and their error message's
// last part (strerror) stands for the errno.
const WORKER = String.raw`
const fs = require('fs'), net = require('net'), path = require('path'), crypto = require('crypto');
const { execFileSync } = require('child_process');
const FALLOCATE_CALL = process.argv[2];
process.umask(0o022);
const servers = [];
function tool(file, args) {
  try { execFileSync(file, args, { stdio: ['ignore', 'ignore', 'pipe'], timeout: 10000 }); return 'ok'; }
  catch (e) { const msg = String(e.stderr || e.message).trim(); return 'error ' + msg.slice(msg.lastIndexOf(': ') + 2); }
}
function special(p) {
  try { const s = fs.statSync(p); return !s.isFile() && !s.isDirectory(); } catch { return false; }
}
function utimes(p, a, m) {
  if (typeof a === 'number' && typeof m === 'number') { fs.utimesSync(p, a, m); return 'ok'; }
  const args = ['-c'];
  if (a === 'omit') args.push('-m'); else if (m === 'omit') args.push('-a');
  const t = typeof a === 'number' ? a : m;
  if (typeof t === 'number') args.push('-d', '@' + t);
  return tool('touch', [...args, '--', p]);
}
async function apply(root, op) {
  const p = path.join(root, op.p), q = op.q === undefined ? '' : path.join(root, op.q);
  try {
    switch (op.t) {
      case 'write': {
        if (special(p)) return 'special';
        fs.closeSync(fs.openSync(p, 'a+'));
        const fd = fs.openSync(p, 'r+');
        try {
          const n = fs.writeSync(fd, Buffer.alloc(op.len, op.fill), 0, op.len, op.off);
          if (op.sync) fs.fsyncSync(fd);
          return 'wrote ' + n;
        } finally { fs.closeSync(fd); }
      }
      case 'fallocate': {
        if (special(p)) return 'special';
        return execFileSync(FALLOCATE_CALL, [p, String(op.mode), String(op.off), String(op.len)], { timeout: 10000 }).toString().trim();
      }
      case 'append': if (special(p)) return 'special'; fs.appendFileSync(p, Buffer.alloc(op.len, op.fill)); return 'ok';
      case 'truncate': if (special(p)) return 'special'; fs.truncateSync(p, op.size); return 'ok';
      case 'mkdir': fs.mkdirSync(p, { mode: op.mode }); return 'ok';
      case 'rmdir': fs.rmdirSync(p); return 'ok';
      case 'unlink': fs.unlinkSync(p); return 'ok';
      case 'read': if (special(p)) return 'special'; return fs.readFileSync(p).toString('hex').slice(0, 64) + ':' + fs.statSync(p).size;
      case 'readdir': return fs.readdirSync(p).sort().join(',');
      case 'stat': { const s = fs.lstatSync(p); return s.isFile() + ' ' + s.isDirectory() + ' ' + s.isSymbolicLink() + ' ' + (s.isFile() ? s.size : ''); }
      case 'rename': fs.renameSync(p, q); return 'ok';
      case 'link': fs.linkSync(p, q); return 'ok';
      case 'symlink': fs.symlinkSync(op.p, q); return 'ok';
      case 'chmod': fs.chmodSync(p, op.mode); return 'ok';
      case 'chown': fs.chownSync(p, op.uid, op.gid); return 'ok';
      case 'utimes': return utimes(p, op.a, op.m);
      case 'mkfifo': return tool('mkfifo', ['--', p]);
      case 'mknod': return tool('mknod', ['--', p, 'c', '1', '3']);
      case 'bind': return await new Promise((resolve) => {
        const s = net.createServer();
        s.once('error', (e) => resolve('error ' + e.code));
        s.listen(p, () => { servers.push(s); resolve('ok'); });
      });
    }
    throw new Error('unknown op ' + op.t);
  } catch (e) { if (!e.code) throw e; return 'error ' + e.code; }
}
function snapshot(root) {
  const out = {};
  const walk = (rel) => {
    const p = rel ? path.join(root, rel) : root;
    const s = fs.lstatSync(p, { bigint: true });
    const type = s.isFile() ? 'file' : s.isDirectory() ? 'dir' : s.isSymbolicLink() ? 'symlink' : s.isFIFO() ? 'fifo' : s.isSocket() ? 'socket' : s.isCharacterDevice() ? 'chardev' : 'other';
    let content = '';
    if (type === 'file') content = crypto.createHash('sha1').update(fs.readFileSync(p)).digest('hex').slice(0, 12);
    if (type === 'symlink') content = fs.readlinkSync(p);
    const size = type === 'dir' ? '' : String(s.size); // directory sizes are the filesystem's business
    out[rel || '.'] = {
      desc: [type, (Number(s.mode) & 0o7777).toString(8), s.uid + ':' + s.gid, 'n' + s.nlink, size, 'r' + s.rdev, content].join(' '),
      ino: String(s.ino), mtime: String(s.mtimeNs), ctime: String(s.ctimeNs),
    };
    if (type === 'dir') for (const n of fs.readdirSync(p).sort()) walk(rel ? rel + '/' + n : n);
  };
  walk('');
  return out;
}
const rl = require('readline').createInterface({ input: process.stdin });
rl.on('line', async (line) => {
  const req = JSON.parse(line);
  let res;
  if (req.whoami) res = process.getuid() + ':' + process.getgid() + ' groups ' + process.getgroups().join(',');
  else if (req.snapshot) res = snapshot(req.snapshot);
  else if (req.closeServers) { for (const s of servers.splice(0)) s.close(); res = 'ok'; }
  else res = await apply(req.root, req.op);
  process.stdout.write(JSON.stringify(res) + '\n');
});
`;

/** One worker process; calls are answered in order. */
class Worker {
  private readonly child: ResultPromise;
  private readonly waiting: ((line: string) => void)[] = [];

  constructor(script: string, id: number | null, fallocateCall: string) {
    const ids = id === null ? {} : { uid: id, gid: id };
    this.child = execa(process.execPath, [script, fallocateCall], { ...ids, stdin: 'pipe', stdout: 'pipe', stderr: 'inherit', buffer: false, reject: false });
    createInterface({ input: this.child.stdout! }).on('line', (line) => this.waiting.shift()?.(line));
  }

  call<T>(req: unknown): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`worker did not answer ${JSON.stringify(req)} within ${WORKER_TIMEOUT_MS} ms`)), WORKER_TIMEOUT_MS);
      this.waiting.push((line) => {
        clearTimeout(timer);
        resolve(JSON.parse(line) as T);
      });
      this.child.stdin!.write(JSON.stringify(req) + '\n');
    });
  }

  async stop(): Promise<void> {
    this.child.stdin!.end();
    const exited = await Promise.race([this.child.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), 5_000).unref())]);
    if (!exited) this.child.kill('SIGKILL');
  }
}

let work: string;
let d: DaemonHandle;
let asRoot: Worker;
let asOther: Worker;

beforeAll(async () => {
  requireRoot(`comparing permission checks as another user (a worker started as uid ${OTHER_ID})`);
  work = mkdtempSync(join(tmpdir(), 'powercut-diff-'));
  chmodSync(work, 0o755); // the unprivileged worker must reach both trees and its script
  const script = join(work, 'worker.cjs');
  writeFileSync(script, WORKER, { mode: 0o644 });
  const fallocateCall = buildFallocateCall(work);
  d = await startDaemon({ mountpoint: join(work, 'mnt'), socketPath: join(work, 'ctl.sock') });
  asRoot = new Worker(script, null, fallocateCall);
  asOther = new Worker(script, OTHER_ID, fallocateCall);
});
afterAll(async () => {
  await asRoot?.stop();
  await asOther?.stop();
  await d?.stop();
  if (work) await fsp.rm(work, { recursive: true, force: true });
});

const LONG_NAME = 'n'.repeat(256); // ENAMETOOLONG from every call
const SHORT_NAMES = ['a', 'b', 'd/a', 'd/b', 'd', 'e'];
const name = fc.constantFrom(...SHORT_NAMES, LONG_NAME);
// bind cuts a socket's path at sun_path's 108 bytes, which the two trees' roots reach differently.
const shortName = fc.constantFrom(...SHORT_NAMES);
// fallocate's modes that FUSE passes on: 0, KEEP_SIZE, PUNCH_HOLE | KEEP_SIZE, ZERO_RANGE (| KEEP_SIZE).
const fallocateModeArb = fc.constantFrom(0, 0x01, 0x03, 0x10, 0x11);
const who = fc.constantFrom('root' as const, 'other' as const);
const modeArb = fc.constantFrom(0o644, 0o600, 0o755, 0o777, 0o1777, 0o2777, 0o4755, 0o2755, 0o555, 0o000);
const idArb = fc.constantFrom(-1, 0, OTHER_ID, 1234);
const secondsArb = fc.integer({ min: 1_000_000_000, max: 2_000_000_000 });
type Time = number | 'now' | 'omit';
type Op = { as: 'root' | 'other' } & (
  | { t: 'write'; p: string; off: number; len: number; fill: number; sync: boolean }
  | { t: 'append'; p: string; len: number; fill: number }
  | { t: 'truncate'; p: string; size: number }
  | { t: 'fallocate'; p: string; mode: number; off: number; len: number }
  | { t: 'mkdir' | 'chmod'; p: string; mode: number }
  | { t: 'rmdir' | 'unlink' | 'read' | 'readdir' | 'stat' | 'mkfifo' | 'mknod' | 'bind'; p: string }
  | { t: 'rename' | 'link' | 'symlink'; p: string; q: string }
  | { t: 'chown'; p: string; uid: number; gid: number }
  | { t: 'utimes'; p: string; a: Time; m: Time }
);
const opArb: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ as: who, t: fc.constant('write' as const), p: name, off: fc.nat(300_000), len: fc.integer({ min: 0, max: 200_000 }), fill: fc.integer({ min: 1, max: 255 }), sync: fc.boolean() }),
  fc.record({ as: who, t: fc.constant('fallocate' as const), p: name, mode: fallocateModeArb, off: fc.nat(300_000), len: fc.integer({ min: 1, max: 200_000 }) }),
  fc.record({ as: who, t: fc.constant('append' as const), p: name, len: fc.integer({ min: 1, max: 5000 }), fill: fc.integer({ min: 1, max: 255 }) }),
  fc.record({ as: who, t: fc.constant('truncate' as const), p: name, size: fc.oneof({ weight: 9, arbitrary: fc.nat(400_000) }, { weight: 1, arbitrary: fc.constant(999_999_999_999_999) }) }),
  fc.record({ as: who, t: fc.constant('mkdir' as const), p: name, mode: fc.constantFrom(0o777, 0o755, 0o700, 0o2777) }),
  fc.record({ as: who, t: fc.constantFrom('rmdir' as const, 'unlink' as const, 'read' as const, 'readdir' as const, 'stat' as const), p: name }),
  fc.record({ as: who, t: fc.constantFrom('rename' as const, 'link' as const, 'symlink' as const), p: name, q: name }),
  fc.record({ as: who, t: fc.constant('chmod' as const), p: name, mode: modeArb }),
  // chown(-1, -1) is left out: ext4 updates ctime, while the kernel sends FUSE nothing to do.
  fc.record({ as: who, t: fc.constant('chown' as const), p: name, uid: idArb, gid: idArb }).filter((o) => o.uid !== -1 || o.gid !== -1),
  // Both times given, both now, or one left alone: what utimes() and `touch` can express.
  fc.record({
    as: who, t: fc.constant('utimes' as const), p: name,
    times: fc.oneof(
      fc.tuple(secondsArb, secondsArb),
      fc.constant<[Time, Time]>(['now', 'now']),
      fc.tuple(fc.constant<Time>('omit'), fc.oneof(secondsArb, fc.constant<Time>('now'))),
      fc.tuple(fc.oneof(secondsArb, fc.constant<Time>('now')), fc.constant<Time>('omit')),
    ),
  }).map(({ times: [a, m], ...rest }) => ({ ...rest, a, m })),
  fc.record({ as: who, t: fc.constantFrom('mkfifo' as const, 'mknod' as const), p: name }),
  fc.record({ as: who, t: fc.constant('bind' as const), p: shortName }),
);

/** Every sequence starts from a few files and directories of both users, so most calls meet something. */
const PREFIX: Op[] = [
  { as: 'root', t: 'mkdir', p: 'd', mode: 0o777 },
  { as: 'root', t: 'write', p: 'a', off: 0, len: 10, fill: 1, sync: false },
  { as: 'other', t: 'write', p: 'd/a', off: 0, len: 10, fill: 2, sync: false },
  { as: 'other', t: 'mkdir', p: 'e', mode: 0o755 },
];

interface Entry { desc: string; ino: string; mtime: string; ctime: string }
type Snapshot = Record<string, Entry>;

/**
 * What must be equal between the two trees: each path's metadata with its inode named by the first
 * path holding it, and, for paths still naming the same inode as before the call, whether its mtime
 * and ctime changed.
 */
function comparable(before: Snapshot, after: Snapshot): Record<string, string> {
  const firstPath = new Map<string, string>();
  for (const [p, e] of Object.entries(after)) if (!firstPath.has(e.ino)) firstPath.set(e.ino, p);
  const out: Record<string, string> = {};
  for (const [p, e] of Object.entries(after)) {
    const prev = before[p];
    const times = prev?.ino === e.ino ? ` mtime:${prev.mtime !== e.mtime ? 'changed' : 'same'} ctime:${prev.ctime !== e.ctime ? 'changed' : 'same'}` : '';
    out[p] = `${e.desc} ino=${firstPath.get(e.ino)}${times}`;
  }
  return out;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('differential: the mount behaves like an ordinary directory', () => {
  it('gives the same results, contents and metadata for random call sequences, as root and as another user', async () => {
    expect(await asRoot.call<string>({ whoami: true }), 'the root worker\'s ids').toMatch(/^0:0 groups /);
    // No group of root's is left to the other worker (spawning with a uid drops the supplementary groups).
    expect(await asOther.call<string>({ whoami: true }), 'the other worker\'s ids').toMatch(new RegExp(`^${OTHER_ID}:${OTHER_ID} groups (${OTHER_ID})?$`));
    let run = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(opArb, { minLength: 1, maxLength: 25 }), async (ops) => {
        await d.client.reset();
        const ref = join(work, `ref-${run++}`);
        await fsp.mkdir(ref);
        try {
          for (const root of [ref, d.mountpoint]) await fsp.chmod(root, 0o777);
          let before = { ref: await asRoot.call<Snapshot>({ snapshot: ref }), mnt: await asRoot.call<Snapshot>({ snapshot: d.mountpoint }) };
          for (const op of [...PREFIX, ...ops]) {
            await sleep(CALL_GAP_MS);
            const worker = op.as === 'root' ? asRoot : asOther;
            const expected = await worker.call<string>({ root: ref, op });
            const actual = await worker.call<string>({ root: d.mountpoint, op });
            expect(actual, JSON.stringify(op)).toBe(expected);
            const after = { ref: await asRoot.call<Snapshot>({ snapshot: ref }), mnt: await asRoot.call<Snapshot>({ snapshot: d.mountpoint }) };
            expect(comparable(before.mnt, after.mnt), `after ${JSON.stringify(op)}`).toEqual(comparable(before.ref, after.ref));
            before = after;
          }
        } finally {
          await asRoot.call({ closeServers: true });
          await asOther.call({ closeServers: true });
          await fsp.rm(ref, { recursive: true, force: true });
        }
      }),
      { numRuns: 60 },
    );
  });
});
