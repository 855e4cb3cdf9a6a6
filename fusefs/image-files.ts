// Durable images as ordinary files: `image --out DIR` writes one, `--image DIR` loads one.
import { execFileSync } from 'node:child_process';
import { chmodSync, closeSync, ftruncateSync, lchownSync, mkdirSync, openSync, readdirSync, symlinkSync, writeSync } from 'node:fs';
import { lstat, readdir, readFile, readlink } from 'node:fs/promises';
import { join } from 'node:path';
import { BLOCK_BYTES } from './model/grow-buffer.js';
import type { FsTree, SpecialKind } from './model/nodes.js';

const TOOL_TIMEOUT_MS = 10_000;

/** A node of the tree that could not be written as a file of its kind, and why. */
export interface SkippedNode {
  path: string;
  type: SpecialKind;
  reason: string;
}

/**
 * Writes `tree` under `dir`, which must not exist or be empty (an image is never merged into old
 * files). Modes are applied; owners too when running as root. Fifos become fifos; device nodes
 * become device nodes when running as root (mknod needs CAP_MKNOD) and are skipped otherwise;
 * sockets are always skipped: a socket file is only a name for a listening process, which died
 * with the power, and no tool creates one without binding. Each skip is reported on stderr and returned.
 *
 * Synchronous: exhaustive mode writes one small image per crash state, and a few dozen blocking
 * calls cost far less than as many thread-pool round trips. Never call it on the daemon's own mount
 * (the daemon refuses such an `out`): it would wait for itself.
 */
export function writeTree(tree: FsTree, dir: string): SkippedNode[] {
  if (tree.type !== 'dir') throw new Error('image: the root of a tree must be a directory');
  mkdirSync(dir, { recursive: true });
  const existing = readdirSync(dir);
  if (existing.length > 0) throw new Error(`image: output directory ${dir} is not empty (${existing.length} entries); choose a new one`);
  const skipped: SkippedNode[] = [];
  writeChildren(tree, dir, skipped);
  applyMeta(tree, dir);
  for (const s of skipped) console.error(`powercut image: skipped ${s.type} ${s.path}: ${s.reason}`);
  return skipped;
}

const isRoot = () => process.getuid?.() === 0;

function applyMeta(t: FsTree, p: string): void {
  if (isRoot() && (t.uid !== undefined || t.gid !== undefined)) lchownSync(p, t.uid ?? -1, t.gid ?? -1);
  // After chown, which clears setuid/setgid. Symlinks have no mode of their own on Linux.
  if (t.type !== 'symlink' && t.mode !== undefined) chmodSync(p, t.mode);
}

/** Linux's dev_t encoding as FUSE passes it in 32 bits (glibc's major()/minor()). */
function majorMinor(rdev: number): [number, number] {
  return [(rdev >>> 8) & 0xfff, (rdev & 0xff) | ((rdev >>> 12) & 0xfff00)];
}

function writeChildren(tree: Extract<FsTree, { type: 'dir' }>, dir: string, skipped: SkippedNode[]): void {
  for (const [name, child] of tree.entries) {
    const p = join(dir, name);
    if (child.type === 'dir') {
      mkdirSync(p);
      writeChildren(child, p, skipped);
    } else if (child.type === 'file') {
      writeSparse(p, child.data, child.extents);
    } else if (child.type === 'symlink') {
      symlinkSync(child.target, p);
    } else if (child.type === 'fifo') {
      execFileSync('mkfifo', ['--', p], { timeout: TOOL_TIMEOUT_MS, stdio: 'ignore' });
    } else if (child.type === 'socket') {
      skipped.push({ path: p, type: child.type, reason: 'a socket cannot be recreated without a process listening on it' });
      continue;
    } else if (!isRoot()) {
      skipped.push({ path: p, type: child.type, reason: 'creating a device node needs root' });
      continue;
    } else {
      const [major, minor] = majorMinor(child.rdev);
      execFileSync('mknod', ['--', p, child.type === 'chardev' ? 'c' : 'b', String(major), String(minor)], { timeout: TOOL_TIMEOUT_MS, stdio: 'ignore' });
    }
    applyMeta(child, p); // a directory's mode last: 0555 would have refused its children
  }
}

const ZERO_BLOCK = Buffer.alloc(BLOCK_BYTES);

/**
 * Writes `data` as a new file at `p`, its all-zero blocks left as holes (read back as zeros,
 * allocating nothing): a crash state's image of a log preallocated by ftruncate writes the records,
 * not the megabytes of zeros past them. Only `extents` (FsTree's: where a non-zero byte may be) are
 * read, so a hole's pages are never touched (on this VM a first touch costs ~25 us a page: reading
 * 64 MiB of holes took 0.4 s a state). Runs of data blocks go out in one write each.
 */
export function writeSparse(p: string, data: Buffer, extents: readonly [number, number][] = [[0, data.length]]): void {
  const fd = openSync(p, 'wx');
  try {
    let runStart = -1;
    const flush = (end: number) => {
      for (let at = runStart; at < end;) at += writeSync(fd, data, at, end - at, at);
      runStart = -1;
    };
    let from = 0; // bytes below it are written or left a hole
    let prevStop = 0;
    for (const [start, stop] of extents) {
      if (start < prevStop || stop > data.length || stop < start) throw new Error(`invariant: extents of ${p} are ordered ranges within its ${data.length} bytes (got [${start}, ${stop}) after one ending at ${prevStop})`);
      prevStop = stop;
      // Blocks aligned to the file, so a hole is a whole block; a block two extents share is read once.
      for (let at = Math.max(from, start - (start % BLOCK_BYTES)); at < stop; at += BLOCK_BYTES) {
        const end = Math.min(at + BLOCK_BYTES, data.length);
        const zero = data.compare(ZERO_BLOCK, 0, end - at, at, end) === 0;
        if (!zero && runStart < 0) runStart = at;
        else if (zero && runStart >= 0) flush(at);
        from = end;
      }
      if (runStart >= 0) flush(from);
    }
    ftruncateSync(fd, data.length); // the size, holes at the end included
  } finally {
    closeSync(fd);
  }
}

/** Reads a directory as a tree, with modes, owners, fifos, sockets and device nodes. */
export async function readTree(dir: string): Promise<FsTree> {
  const st = await lstat(dir).catch((e: NodeJS.ErrnoException) => {
    throw new Error(`image: cannot read ${dir}: ${e.code ?? e.message}`);
  });
  if (!st.isDirectory()) throw new Error(`image: ${dir} is not a directory`);
  const entries = new Map<string, FsTree>();
  for (const name of (await readdir(dir)).sort()) {
    const p = join(dir, name);
    const s = await lstat(p);
    const meta = { mode: s.mode & 0o7777, uid: s.uid, gid: s.gid };
    if (s.isDirectory()) entries.set(name, await readTree(p));
    else if (s.isFile()) entries.set(name, { type: 'file', data: await readFile(p), ...meta });
    else if (s.isSymbolicLink()) entries.set(name, { type: 'symlink', target: await readlink(p), uid: s.uid, gid: s.gid });
    else if (s.isFIFO()) entries.set(name, { type: 'fifo', rdev: 0, ...meta });
    else if (s.isSocket()) entries.set(name, { type: 'socket', rdev: 0, ...meta });
    else if (s.isCharacterDevice()) entries.set(name, { type: 'chardev', rdev: s.rdev % 2 ** 32, ...meta });
    else if (s.isBlockDevice()) entries.set(name, { type: 'blockdev', rdev: s.rdev % 2 ** 32, ...meta });
    else throw new Error(`image: ${p} has a file type powercut does not know`);
  }
  return { type: 'dir', entries, mode: st.mode & 0o7777, uid: st.uid, gid: st.gid };
}
