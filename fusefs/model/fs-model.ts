// The pure crash model (DESIGN.md section 3): path operations on inodes with live and durable
// state, and `crash(policy, seed)`. No I/O, no FUSE; failures throw FsError with a negative errno.
import { GrowBuffer } from './grow-buffer.js';
import {
  EEXIST, EFBIG, EINVAL, EISDIR, ENAMETOOLONG, ENOENT, ENOTDIR, ENOTEMPTY, EPERM, FsError,
} from './errno.js';
import type { DirNode, FileNode, FsTree, JournalOp, Node, SymlinkNode } from './nodes.js';
import { Prng } from './prng.js';
import { tornFile, tornJournalPrefix } from './torn.js';
import type { CrashPolicy } from '../protocol.js';

export const ROOT_INO = 1;
const MAX_FILE_BYTES = 2 ** 34; // 16 GiB: beyond this a write is a bug in the workload, not a test
const MAX_NAME_BYTES = 255;

export interface NodeStat {
  ino: number;
  kind: Node['kind'];
  mode: number; // permission bits
  sizeBytes: number;
  nlink: number;
  mtimeMs: number;
  ctimeMs: number;
}

export class FsModel {
  private nodes = new Map<number, Node>();
  private nextIno = ROOT_INO + 1;
  /** Unsynced directory operations in the order they happened (for `torn`). */
  private journal: JournalOp[] = [];

  constructor(private readonly now: () => number = Date.now) {
    this.nodes.set(ROOT_INO, this.newDir(ROOT_INO, 0o755));
  }

  // ---- lookup ----

  resolve(path: string): number {
    let ino = ROOT_INO;
    for (const name of splitPath(path)) {
      const dir = this.nodes.get(ino)!;
      if (dir.kind !== 'dir') throw new FsError(ENOTDIR, `${path}: a path component is not a directory`);
      const child = dir.live.get(name);
      if (child === undefined) throw new FsError(ENOENT, `${path}: no such file or directory`);
      ino = child;
    }
    return ino;
  }

  node(ino: number): Node {
    const n = this.nodes.get(ino);
    if (!n) throw new FsError(ENOENT, `inode ${ino} does not exist`);
    return n;
  }

  file(ino: number): FileNode {
    const n = this.node(ino);
    if (n.kind === 'dir') throw new FsError(EISDIR, `inode ${ino} is a directory`);
    if (n.kind !== 'file') throw new FsError(EINVAL, `inode ${ino} is not a regular file`);
    return n;
  }

  stat(ino: number): NodeStat {
    const n = this.node(ino);
    const sizeBytes = n.kind === 'file' ? n.live.size : n.kind === 'dir' ? 4096 : Buffer.byteLength(n.target);
    const nlink = n.kind === 'dir' ? 2 : n.nlink;
    return { ino, kind: n.kind, mode: n.mode, sizeBytes, nlink, mtimeMs: n.mtimeMs, ctimeMs: n.ctimeMs };
  }

  readdir(path: string): string[] {
    return [...this.dirAt(path).live.keys()];
  }

  readlink(path: string): string {
    const n = this.node(this.resolve(path));
    if (n.kind !== 'symlink') throw new FsError(EINVAL, `${path}: not a symbolic link`);
    return n.target;
  }

  // ---- directory operations: change only live maps (and the journal) ----

  create(path: string, mode: number): number {
    const { dir, name } = this.parentForNew(path);
    const ino = this.nextIno++;
    const t = this.now();
    const node: FileNode = {
      kind: 'file', ino, mode: mode & 0o7777, mtimeMs: t, ctimeMs: t, nlink: 0,
      live: new GrowBuffer(), durable: new GrowBuffer(), pending: [],
    };
    this.nodes.set(ino, node);
    this.setEntries([{ dir, name, ino }]);
    return ino;
  }

  mkdir(path: string, mode: number): number {
    const { dir, name } = this.parentForNew(path);
    const ino = this.nextIno++;
    this.nodes.set(ino, this.newDir(ino, mode & 0o7777));
    this.setEntries([{ dir, name, ino }]);
    return ino;
  }

  symlink(target: string, path: string): number {
    const { dir, name } = this.parentForNew(path);
    const ino = this.nextIno++;
    const t = this.now();
    const node: SymlinkNode = { kind: 'symlink', ino, mode: 0o777, mtimeMs: t, ctimeMs: t, nlink: 0, target };
    this.nodes.set(ino, node);
    this.setEntries([{ dir, name, ino }]);
    return ino;
  }

  link(existing: string, newPath: string): void {
    const ino = this.resolve(existing);
    if (this.node(ino).kind === 'dir') throw new FsError(EPERM, `${existing}: cannot hard-link a directory`);
    const { dir, name } = this.parentForNew(newPath);
    this.setEntries([{ dir, name, ino }]);
  }

  unlink(path: string): void {
    const { dir, name, ino } = this.entry(path);
    if (this.node(ino).kind === 'dir') throw new FsError(EISDIR, `${path}: is a directory (use rmdir)`);
    this.setEntries([{ dir, name, ino: null }]);
  }

  rmdir(path: string): void {
    const { dir, name, ino } = this.entry(path);
    const n = this.node(ino);
    if (n.kind !== 'dir') throw new FsError(ENOTDIR, `${path}: not a directory`);
    if (n.live.size > 0) throw new FsError(ENOTEMPTY, `${path}: directory not empty`);
    this.setEntries([{ dir, name, ino: null }]);
  }

  rename(from: string, to: string): void {
    const src = this.entry(from);
    const srcNode = this.node(src.ino);
    const { dir: dstDir, name: dstName } = this.parent(to);
    const existing = this.node(dstDir).kind === 'dir' ? (this.node(dstDir) as DirNode).live.get(dstName) : undefined;
    if (existing === src.ino) return; // same inode: POSIX says do nothing
    if (srcNode.kind === 'dir' && this.isAncestor(src.ino, dstDir)) {
      throw new FsError(EINVAL, `rename ${from} -> ${to}: cannot move a directory into itself`);
    }
    if (existing !== undefined) {
      const old = this.node(existing);
      if (srcNode.kind === 'dir' && old.kind !== 'dir') throw new FsError(ENOTDIR, `rename ${from} -> ${to}: target is not a directory`);
      if (srcNode.kind !== 'dir' && old.kind === 'dir') throw new FsError(EISDIR, `rename ${from} -> ${to}: target is a directory`);
      if (old.kind === 'dir' && old.live.size > 0) throw new FsError(ENOTEMPTY, `rename ${from} -> ${to}: target directory not empty`);
    }
    this.setEntries([
      { dir: src.dir, name: src.name, ino: null },
      { dir: dstDir, name: dstName, ino: src.ino },
    ]);
  }

  // ---- file data: changes only live state ----

  write(ino: number, offset: number, data: Uint8Array): number {
    const f = this.file(ino);
    if (offset + data.length > MAX_FILE_BYTES) throw new FsError(EFBIG, `write beyond ${MAX_FILE_BYTES} bytes`);
    const copy = Buffer.from(data); // the caller's buffer may be reused or detached
    f.live.write(offset, copy);
    f.pending.push({ type: 'write', offset, data: copy });
    f.mtimeMs = this.now();
    return data.length;
  }

  read(ino: number, offset: number, length: number): Buffer {
    return this.file(ino).live.read(offset, length);
  }

  /** True if byte `offsetBytes` of file `ino` reads the same live as on disk (what read faults may hit). */
  matchesDurable(ino: number, offsetBytes: number): boolean {
    const f = this.file(ino);
    if (offsetBytes >= f.live.size || offsetBytes >= f.durable.size) return false;
    return f.live.read(offsetBytes, 1)[0] === f.durable.read(offsetBytes, 1)[0];
  }

  truncate(ino: number, sizeBytes: number): void {
    const f = this.file(ino);
    if (sizeBytes < 0) throw new FsError(EINVAL, `truncate to negative size ${sizeBytes}`);
    if (sizeBytes > MAX_FILE_BYTES) throw new FsError(EFBIG, `truncate beyond ${MAX_FILE_BYTES} bytes`);
    f.live.resize(sizeBytes);
    f.pending.push({ type: 'truncate', sizeBytes });
    f.mtimeMs = this.now();
  }

  chmod(ino: number, mode: number): void {
    const n = this.node(ino);
    n.mode = mode & 0o7777;
    n.ctimeMs = this.now();
  }

  utimens(ino: number, mtimeMs: number): void {
    this.node(ino).mtimeMs = mtimeMs;
  }

  // ---- durability ----

  /** fsync/fdatasync of a file: durable bytes and size := live. Of a directory: durable map := live. */
  fsync(ino: number): void {
    const n = this.node(ino);
    if (n.kind === 'dir') {
      n.durable = new Map(n.live);
      this.journal = this.journal
        .map((op) => ({ changes: op.changes.filter((c) => c.dir !== ino) }))
        .filter((op) => op.changes.length > 0);
      return;
    }
    if (n.kind !== 'file') return;
    // Bytes untouched since the last fsync already equal live, except where a truncate cut them.
    let cutBytes = Infinity;
    for (const p of n.pending) if (p.type === 'truncate') cutBytes = Math.min(cutBytes, p.sizeBytes);
    if (cutBytes < n.durable.size) n.durable.resize(cutBytes);
    n.durable.resize(n.live.size);
    for (const p of n.pending) if (p.type === 'write') n.durable.copyRangeFrom(n.live, p.offset, p.offset + p.data.length);
    n.pending = [];
  }

  /** A failed fsync (ext4): the unsynced changes can no longer become durable, yet stay visible live. */
  dropUnsynced(ino: number): void {
    const n = this.node(ino);
    if (n.kind === 'file') n.pending = [];
  }

  /** Power cut: live := durable under `policy`; inodes unreachable from the durable root are gone. */
  crash(policy: CrashPolicy, seed = 0): void {
    if (policy === 'keep-all') {
      this.journal = [];
      for (const n of this.nodes.values()) this.fsync(n.ino);
    } else if (policy === 'torn') {
      const prng = new Prng(seed);
      for (const c of tornJournalPrefix(this.journal, prng)) {
        const dir = this.nodes.get(c.dir);
        if (dir?.kind !== 'dir') continue;
        if (c.ino === null) dir.durable.delete(c.name);
        else dir.durable.set(c.name, c.ino);
      }
      const inos = [...this.nodes.keys()].sort((a, b) => a - b);
      for (const ino of inos) {
        const n = this.nodes.get(ino)!;
        if (n.kind === 'file') n.durable = tornFile(n.durable, n.pending, prng);
      }
    } else if (policy !== 'lose-unsynced') {
      throw new Error(`crash: unknown policy '${String(policy)}'`);
    }
    this.journal = [];
    for (const n of this.nodes.values()) {
      if (n.kind === 'file') {
        n.live = n.durable.clone();
        n.pending = [];
      } else if (n.kind === 'dir') {
        n.live = new Map(n.durable);
      }
    }
    this.collect();
  }

  /** The durable or live state as plain data. */
  exportTree(state: 'durable' | 'live'): FsTree {
    const onPath = new Set<number>();
    const visit = (ino: number): FsTree => {
      const n = this.node(ino);
      if (n.kind === 'symlink') return { type: 'symlink', target: n.target };
      if (n.kind === 'file') return { type: 'file', data: (state === 'live' ? n.live : n.durable).toBuffer(), mode: n.mode };
      const map = state === 'live' ? n.live : n.durable;
      const entries = new Map<string, FsTree>();
      onPath.add(ino);
      for (const [name, child] of [...map].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
        // A torn cross-directory rename can leave a directory under itself; an image cannot show that.
        if (!onPath.has(child)) entries.set(name, visit(child));
      }
      onPath.delete(ino);
      return { type: 'dir', entries, mode: n.mode };
    };
    return visit(ROOT_INO);
  }

  /** A model whose live and durable state are both `tree` (hard links are not preserved). */
  static fromTree(tree: FsTree, now?: () => number): FsModel {
    if (tree.type !== 'dir') throw new Error('FsModel.fromTree: the root of an image must be a directory');
    const m = new FsModel(now);
    const fill = (dirPath: string, t: Extract<FsTree, { type: 'dir' }>) => {
      for (const [name, child] of t.entries) {
        const path = `${dirPath}/${name}`;
        if (child.type === 'dir') {
          m.mkdir(path, child.mode ?? 0o755);
          fill(path, child);
        } else if (child.type === 'symlink') m.symlink(child.target, path);
        else m.write(m.create(path, child.mode ?? 0o644), 0, child.data);
      }
    };
    m.node(ROOT_INO).mode = tree.mode ?? 0o755;
    fill('', tree);
    m.crash('keep-all');
    return m;
  }

  /** Count of inodes (for invariant checks in tests). */
  get inodeCount(): number {
    return this.nodes.size;
  }

  // ---- internals ----

  private newDir(ino: number, mode: number): DirNode {
    const t = this.now();
    return { kind: 'dir', ino, mode, mtimeMs: t, ctimeMs: t, nlink: 0, live: new Map(), durable: new Map() };
  }

  private dirAt(path: string): DirNode {
    const n = this.node(this.resolve(path));
    if (n.kind !== 'dir') throw new FsError(ENOTDIR, `${path}: not a directory`);
    return n;
  }

  private parent(path: string): { dir: number; name: string } {
    const parts = splitPath(path);
    const name = parts.pop();
    if (name === undefined) throw new FsError(EINVAL, `${path}: the root has no parent`);
    if (Buffer.byteLength(name) > MAX_NAME_BYTES) throw new FsError(ENAMETOOLONG, `${path}: name too long`);
    const dir = this.resolve('/' + parts.join('/'));
    if (this.node(dir).kind !== 'dir') throw new FsError(ENOTDIR, `${path}: parent is not a directory`);
    return { dir, name };
  }

  private parentForNew(path: string): { dir: number; name: string } {
    const p = this.parent(path);
    if ((this.node(p.dir) as DirNode).live.has(p.name)) throw new FsError(EEXIST, `${path}: already exists`);
    return p;
  }

  private entry(path: string): { dir: number; name: string; ino: number } {
    const p = this.parent(path);
    const ino = (this.node(p.dir) as DirNode).live.get(p.name);
    if (ino === undefined) throw new FsError(ENOENT, `${path}: no such file or directory`);
    return { ...p, ino };
  }

  private isAncestor(ancestor: number, ino: number, seen = new Set<number>()): boolean {
    if (ancestor === ino) return true;
    const n = this.node(ancestor);
    if (n.kind !== 'dir' || seen.has(ancestor)) return false;
    seen.add(ancestor);
    for (const child of n.live.values()) if (this.isAncestor(child, ino, seen)) return true;
    return false;
  }

  /** Applies one directory operation to live maps, keeps link counts, and journals it. */
  private setEntries(changes: { dir: number; name: string; ino: number | null }[]): void {
    const t = this.now();
    for (const c of changes) {
      const dir = this.node(c.dir) as DirNode;
      const old = dir.live.get(c.name);
      if (old !== undefined) this.node(old).nlink--;
      if (c.ino === null) dir.live.delete(c.name);
      else {
        dir.live.set(c.name, c.ino);
        const child = this.node(c.ino);
        child.nlink++;
        child.ctimeMs = t;
      }
      dir.mtimeMs = t;
    }
    this.journal.push({ changes });
  }

  /** Drops inodes unreachable from the root and recomputes link counts. */
  private collect(): void {
    const reachable = new Set<number>();
    const walk = (ino: number) => {
      const n = this.nodes.get(ino);
      if (!n) throw new Error(`invariant: directory entry names missing inode ${ino}`);
      n.nlink = 0;
      if (reachable.has(ino)) return;
      reachable.add(ino);
      if (n.kind === 'dir') for (const child of n.live.values()) walk(child);
    };
    walk(ROOT_INO);
    for (const ino of [...this.nodes.keys()]) if (!reachable.has(ino)) this.nodes.delete(ino);
    for (const n of this.nodes.values()) if (n.kind === 'dir') for (const c of n.live.values()) this.nodes.get(c)!.nlink++;
  }
}

function splitPath(path: string): string[] {
  if (!path.startsWith('/')) throw new FsError(EINVAL, `${path}: paths must be absolute`);
  return path.split('/').filter((p) => p.length > 0);
}
