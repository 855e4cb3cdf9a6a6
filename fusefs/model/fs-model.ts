// The pure crash model (docs/design.md, "Crash semantics"): path operations on inodes with live and
// durable state, and `crash(policy, seed)`. No I/O, no FUSE; failures throw FsError with a negative errno.
import { applyFallocate, fallocateKind } from './fallocate.js';
import { hashTree } from './tree-hash.js';
import { GrowBuffer } from './grow-buffer.js';
import {
  EEXIST, EFBIG, EINVAL, EISDIR, ENAMETOOLONG, ENOENT, ENOTDIR, ENOTEMPTY, EPERM, FsError,
} from './errno.js';
import type { DirNode, FileNode, FsTree, JournalOp, Meta, Node, NodeKind, SpecialKind, SpecialNode, SymlinkNode, Unsynced } from './nodes.js';
import { policyModule, stateEnumerator } from './policies/index.js';
import { chosenFile, type TornStats } from './torn.js';
import type { CrashPolicy, CrashStateId, ProbeUnit } from '../crash-states.js';

export const ROOT_INO = 1;
/** A new inode's journal bookkeeping (the journaled policy): no change yet. */
const NOTHING_UNCOMMITTED = { uncommitted: 0, uncommittedSize: 0, lastChange: 0, lastSizeChange: 0 } as const;
/** The largest file (EFBIG beyond): 16 GiB, where ext4's is 16 TiB; beyond this a write is a bug in the workload, not a test. */
export const MAX_FILE_BYTES = 2 ** 34;
/** The longest name (ENAMETOOLONG beyond), as ext4's. */
export const MAX_NAME_BYTES = 255;

const S_ISUID = 0o4000;
const S_ISGID = 0o2000;
const S_IXGRP = 0o0010;
/** chown's "leave unchanged" (-1, as the kernel passes it: an unsigned 32-bit all-ones). */
export const UNCHANGED_ID = -1;

/** A hashing tree's file data (exportTree with 'digest'): the digest stands for the bytes. */
const EMPTY = Buffer.alloc(0);

export interface Owner {
  uid: number;
  gid: number;
}

/** One time in utimens: milliseconds, the current time, or left as it is. */
export type TimeSet = number | 'now' | 'omit';

export interface NodeStat {
  ino: number;
  kind: NodeKind;
  mode: number; // permission bits with setuid, setgid and sticky
  uid: number;
  gid: number;
  sizeBytes: number;
  /** Disk blocks it holds, in bytes (st_blocks * 512): a file's allocated blocks, a directory's one. */
  allocatedBytes: number;
  nlink: number;
  rdev: number;
  atimeMs: number;
  mtimeMs: number;
  ctimeMs: number;
}

/** Whoever runs this process: the owner of the root directory and of new nodes by default, and the daemon's own identity. */
export function processOwner(): Owner {
  return { uid: process.getuid?.() ?? 0, gid: process.getgid?.() ?? 0 };
}

export class FsModel {
  private nodes = new Map<number, Node>();
  /**
   * For the journaled policy (an ext4-like journal): every change with a seq up to this one is in a
   * committed journal transaction, so its directory operations persisted whatever the cut.
   */
  private committedSeq = 0;
  private nextIno = ROOT_INO + 1;
  /** Unsynced directory operations in the order they happened (for `torn`). */
  private journal: JournalOp[] = [];
  /** Numbers changes across all files and directories (PendingFileOp.seq, JournalOp.seq). */
  private changeSeq = 0;
  /** The disk usage (GrowBuffer.usageBytes: allocated blocks) of every live file that has a name, summed: kept up to date by each change, never walked for. */
  private namedBytes = 0;

  constructor(private now: () => number = Date.now, private readonly defaultOwner: Owner = processOwner()) {
    const t = now();
    const meta: Meta = { mode: 0o755, uid: defaultOwner.uid, gid: defaultOwner.gid, atimeMs: t, mtimeMs: t, ctimeMs: t };
    this.nodes.set(ROOT_INO, this.newDir(ROOT_INO, meta));
  }

  // ---- lookup ----

  resolve(path: string): number {
    let ino = ROOT_INO;
    for (const name of splitPath(path)) {
      const dir = this.nodes.get(ino)!;
      // ext4 refuses a long name before it looks: ENAMETOOLONG, not ENOENT (the kernel's lookup asks here first).
      if (name.length > MAX_NAME_BYTES / 3 && Buffer.byteLength(name) > MAX_NAME_BYTES) throw new FsError(ENAMETOOLONG, `${path}: name too long`);
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
    let sizeBytes = 0;
    let allocatedBytes = 0;
    let nlink = n.nlink;
    let rdev = 0;
    if (n.kind === 'file') {
      sizeBytes = n.live.size;
      allocatedBytes = n.live.allocatedBytes;
    } else if (n.kind === 'dir') {
      sizeBytes = allocatedBytes = 4096;
      // Its name and its own "." while named (the root always is), plus each subdirectory's "..".
      nlink = n.nlink > 0 || ino === ROOT_INO ? 2 + n.subdirs : 0;
    } else if (n.kind === 'symlink') sizeBytes = Buffer.byteLength(n.target);
    else rdev = n.rdev;
    return {
      ino, kind: n.kind, mode: n.mode, uid: n.uid, gid: n.gid, sizeBytes, allocatedBytes, nlink, rdev,
      atimeMs: n.atimeMs, mtimeMs: n.mtimeMs, ctimeMs: n.ctimeMs,
    };
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
  // New nodes belong to `owner` (the caller); in a setgid directory they take its group, and new
  // directories inherit the setgid bit (as ext4 does without the grpid mount option).

  create(path: string, mode: number, owner: Owner = this.defaultOwner): number {
    return this.createFile(path, mode, owner);
  }

  mkdir(path: string, mode: number, owner: Owner = this.defaultOwner): number {
    const { dir, name } = this.parentForNew(path);
    const ino = this.nextIno++;
    const t = this.now();
    this.nodes.set(ino, this.newDir(ino, this.newMeta(dir, mode, owner, true, t)));
    this.setEntries([{ dir, name, ino }], t, ino);
    return ino;
  }

  symlink(target: string, path: string, owner: Owner = this.defaultOwner): number {
    const { dir, name } = this.parentForNew(path);
    const ino = this.nextIno++;
    const t = this.now();
    const meta = this.newMeta(dir, 0o777, owner, false, t);
    const node: SymlinkNode = { kind: 'symlink', ino, nlink: 0, ...meta, durableMeta: { ...meta }, metaDirty: false, ...NOTHING_UNCOMMITTED, target };
    this.nodes.set(ino, node);
    this.setEntries([{ dir, name, ino }], t, ino);
    return ino;
  }

  /** A fifo, socket or device node (`rdev` is kept for devices only); 'file' creates a regular file. */
  mknod(path: string, kind: SpecialKind | 'file', mode: number, rdev: number, owner: Owner = this.defaultOwner): number {
    if (kind === 'file') return this.createFile(path, mode, owner);
    const { dir, name } = this.parentForNew(path);
    const ino = this.nextIno++;
    const t = this.now();
    const meta = this.newMeta(dir, mode, owner, false, t);
    const device = kind === 'chardev' || kind === 'blockdev';
    const node: SpecialNode = { kind, ino, nlink: 0, ...meta, durableMeta: { ...meta }, metaDirty: false, ...NOTHING_UNCOMMITTED, rdev: device ? rdev : 0 };
    this.nodes.set(ino, node);
    this.setEntries([{ dir, name, ino }], t, ino);
    return ino;
  }

  link(existing: string, newPath: string): void {
    const ino = this.resolve(existing);
    if (this.node(ino).kind === 'dir') throw new FsError(EPERM, `${existing}: cannot hard-link a directory`);
    const { dir, name } = this.parentForNew(newPath);
    this.setEntries([{ dir, name, ino }], this.now());
  }

  unlink(path: string): void {
    const { dir, name, ino } = this.entry(path);
    if (this.node(ino).kind === 'dir') throw new FsError(EISDIR, `${path}: is a directory (use rmdir)`);
    this.setEntries([{ dir, name, ino: null }], this.now());
  }

  rmdir(path: string): void {
    const { dir, name, ino } = this.entry(path);
    const n = this.node(ino);
    if (n.kind !== 'dir') throw new FsError(ENOTDIR, `${path}: not a directory`);
    if (n.live.size > 0) throw new FsError(ENOTEMPTY, `${path}: directory not empty`);
    this.setEntries([{ dir, name, ino: null }], this.now());
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
    ], this.now());
  }

  // ---- file data: changes only live state ----

  /**
   * Writes `data` at `offset` of the live file. `data` is kept by reference (in the pending writes,
   * in the file's chunks, in a recording): the caller hands over a buffer it never changes again.
   */
  write(ino: number, offset: number, data: Uint8Array): number {
    const f = this.file(ino);
    if (offset + data.length > MAX_FILE_BYTES) throw new FsError(EFBIG, `write beyond ${MAX_FILE_BYTES} bytes`);
    const kept = Buffer.isBuffer(data) ? data : Buffer.from(data.buffer, data.byteOffset, data.length);
    const before = f.live.size;
    const usedBefore = f.nlink > 0 ? f.live.usageBytes : 0;
    f.live.write(offset, kept);
    if (f.nlink > 0) this.namedBytes += f.live.usageBytes - usedBefore;
    f.pending.push({ type: 'write', offset, data: kept, seq: ++this.changeSeq });
    f.mtimeMs = f.ctimeMs = this.now();
    this.changedInode(f, f.live.size !== before);
    return data.length;
  }

  read(ino: number, offset: number, length: number): Buffer {
    return this.file(ino).live.read(offset, length);
  }

  /** True if byte `offsetBytes` of file `ino` reads the same live as on disk (what read faults may hit). */
  matchesDurable(ino: number, offsetBytes: number): boolean {
    const f = this.file(ino);
    if (offsetBytes >= f.live.size || offsetBytes >= f.durable.size) return false;
    return f.live.byteAt(offsetBytes) === f.durable.byteAt(offsetBytes);
  }

  truncate(ino: number, sizeBytes: number): void {
    const f = this.file(ino);
    if (sizeBytes < 0) throw new FsError(EINVAL, `truncate to negative size ${sizeBytes}`);
    if (sizeBytes > MAX_FILE_BYTES) throw new FsError(EFBIG, `truncate beyond ${MAX_FILE_BYTES} bytes`);
    const usedBefore = f.nlink > 0 ? f.live.usageBytes : 0;
    const sizeChanged = f.live.size !== sizeBytes;
    f.live.resize(sizeBytes);
    if (f.nlink > 0) this.namedBytes += f.live.usageBytes - usedBefore;
    f.pending.push({ type: 'truncate', sizeBytes, seq: ++this.changeSeq });
    f.mtimeMs = f.ctimeMs = this.now();
    this.changedInode(f, sizeChanged);
  }

  /**
   * fallocate(2) with `mode`'s flags on [offsetBytes, offsetBytes + lengthBytes) (fallocate.ts): an
   * unsynced change like a write or a truncate, which a power cut keeps or loses as its policy does.
   */
  fallocate(ino: number, mode: number, offsetBytes: number, lengthBytes: number): void {
    const f = this.file(ino);
    const kind = fallocateKind(mode, offsetBytes, lengthBytes, f.live.size, MAX_FILE_BYTES);
    const sizeBefore = f.live.size;
    const usedBefore = f.nlink > 0 ? f.live.usageBytes : 0;
    applyFallocate(f.live, kind, offsetBytes, lengthBytes);
    if (f.nlink > 0) this.namedBytes += f.live.usageBytes - usedBefore;
    f.pending.push({ type: 'fallocate', kind, offset: offsetBytes, length: lengthBytes, seq: ++this.changeSeq });
    // Every mode changes mtime and ctime on ext4 (file_modified), an allocation too.
    f.mtimeMs = f.ctimeMs = this.now();
    this.changedInode(f, f.live.size !== sizeBefore);
  }

  // ---- attributes: change only live metadata (permission checks are the kernel's, default_permissions) ----

  chmod(ino: number, mode: number): void {
    const n = this.node(ino);
    n.mode = mode & 0o7777;
    n.ctimeMs = this.now();
    this.changedInode(n);
  }

  /** `UNCHANGED_ID` keeps that id. Like Linux, clears setuid (and setgid where group-executable) on non-directories. */
  chown(ino: number, uid: number, gid: number): void {
    const n = this.node(ino);
    if (!Number.isInteger(uid) || uid < UNCHANGED_ID || uid > 0xfffffffe) throw new FsError(EINVAL, `chown: bad uid ${uid}`);
    if (!Number.isInteger(gid) || gid < UNCHANGED_ID || gid > 0xfffffffe) throw new FsError(EINVAL, `chown: bad gid ${gid}`);
    if (uid !== UNCHANGED_ID) n.uid = uid;
    if (gid !== UNCHANGED_ID) n.gid = gid;
    if (n.kind !== 'dir') {
      n.mode &= ~S_ISUID;
      if (n.mode & S_IXGRP) n.mode &= ~S_ISGID;
    }
    n.ctimeMs = this.now();
    this.changedInode(n);
  }

  utimens(ino: number, atime: TimeSet, mtime: TimeSet): void {
    const n = this.node(ino);
    if (atime === 'omit' && mtime === 'omit') return; // utimensat changes nothing, not even ctime
    const t = this.now();
    if (atime !== 'omit') n.atimeMs = atime === 'now' ? t : checkTime(atime);
    if (mtime !== 'omit') n.mtimeMs = mtime === 'now' ? t : checkTime(mtime);
    n.ctimeMs = t;
    this.changedInode(n);
  }

  // ---- durability ----

  /**
   * fsync. Of a file: durable bytes, size and attributes := live. Of a directory: its entries and
   * its attributes, and the attributes of the symlinks, fifos, sockets and devices it names (they
   * cannot be opened for an fsync of their own).
   *
   * `coversUpTo` (a `changeCount` taken when the fsync started) makes a slow fsync exact: it
   * completes now but covers only the changes made before it started; later ones stay unsynced.
   */
  fsync(ino: number, coversUpTo?: number): void {
    const n = this.node(ino);
    this.commitIfNeeded(n, false, coversUpTo ?? this.changeSeq);
    this.syncNode(n, coversUpTo);
  }

  /** fdatasync: the bytes and size of a file (the entries of a directory), not mode, owner or times. */
  fdatasync(ino: number, coversUpTo?: number): void {
    const n = this.node(ino);
    this.commitIfNeeded(n, true, coversUpTo ?? this.changeSeq);
    this.syncContent(n, coversUpTo);
  }

  /** How many changes (writes, truncates, directory operations) were made so far: what an fsync starting now covers. */
  get changeCount(): number {
    return this.changeSeq;
  }

  /** A failed fsync (ext4): the unsynced changes can no longer become durable, yet stay visible live. */
  dropUnsynced(ino: number): void {
    const n = this.node(ino);
    if (n.kind === 'file' && n.pending.length > 0) {
      n.pending = [];
      n.dropped = true;
    }
  }

  /**
   * Power cut: live := durable as `policy` lets a cut leave it (its module in policies/, drawing its
   * choices from `seed`); inodes unreachable from the durable root are gone. Returns how many writes
   * it kept only in part.
   */
  crash(policy: CrashPolicy, seed = 0): TornStats {
    return policyModule(policy).cut(this, seed);
  }

  /** A power cut into the state `id` names (exhaustive mode): its policy settles this model. */
  crashInto(id: CrashStateId): TornStats {
    return stateEnumerator(id.policy).settle(this, id);
  }

  /** Where times come from from now on (a replayed model reads recorded times, then the real clock). */
  setClock(now: () => number): void {
    this.now = now;
  }

  /**
   * Disk space the live files that have a name take (the daemon's --max-data-bytes bounds it): the
   * blocks holding their data (GrowBuffer.usageBytes), not their sizes, so holes are free. Overwrites
   * add nothing; unlinking a file's last name, truncating and punching holes free. A file open after
   * its last name is gone is not counted (the model cannot see handles).
   */
  get liveDataBytes(): number {
    return this.namedBytes;
  }

  /** What a torn cut now can keep or drop: unsynced directory operations and unsynced file changes. */
  unsyncedCounts(): { dirOps: number; fileChanges: number } {
    let fileChanges = 0;
    for (const n of this.nodes.values()) if (n.kind === 'file') fileChanges += n.pending.length;
    return { dirOps: this.journal.length, fileChanges };
  }

  /** An independent copy (exhaustive mode branches crash states off one replayed run). */
  clone(): FsModel {
    const m = Object.create(FsModel.prototype) as FsModel;
    const nodes = new Map<number, Node>();
    for (const [ino, n] of this.nodes) {
      const meta = { ...n, durableMeta: { ...n.durableMeta } };
      if (n.kind === 'file') nodes.set(ino, { ...meta, kind: 'file', live: n.live.clone(), durable: n.durable.clone(), pending: [...n.pending] } as FileNode);
      else if (n.kind === 'dir') nodes.set(ino, { ...meta, kind: 'dir', live: new Map(n.live), durable: new Map(n.durable) } as DirNode);
      else nodes.set(ino, meta as Node);
    }
    Object.assign(m, { ...this, nodes, journal: this.journal.map((op) => ({ changes: [...op.changes], seq: op.seq })) });
    return m;
  }

  private sortedInos(): number[] {
    return [...this.nodes.keys()].sort((a, b) => a - b);
  }

  private persistJournalPrefix(count: number): void {
    for (const c of this.journal.slice(0, count).flatMap((op) => op.changes)) {
      const dir = this.nodes.get(c.dir);
      if (dir?.kind !== 'dir') continue;
      if (c.ino === null) dir.durable.delete(c.name);
      else dir.durable.set(c.name, c.ino);
    }
  }

  /** The end of every power cut: live := durable, nothing unsynced left, unreachable inodes gone. */
  private goBackToDurable(): void {
    this.journal = [];
    this.committedSeq = this.changeSeq;
    for (const n of this.nodes.values()) {
      Object.assign(n, NOTHING_UNCOMMITTED);
      if (n.metaDirty) {
        Object.assign(n, n.durableMeta);
        n.metaDirty = false;
      }
      if (n.kind === 'file') {
        n.live = n.durable.clone();
        n.pending = [];
        n.dropped = false;
      } else if (n.kind === 'dir') {
        n.live = new Map(n.durable);
      }
    }
    this.collect();
  }

  /** The durable or live state as plain data. */
  exportTree(state: 'durable' | 'live', contents: 'bytes' | 'digest' = 'bytes'): FsTree {
    const onPath = new Set<number>();
    const visit = (ino: number): FsTree => {
      const n = this.node(ino);
      const m = state === 'live' ? n : n.durableMeta;
      const meta = { mode: m.mode, uid: m.uid, gid: m.gid };
      if (n.kind === 'symlink') return { type: 'symlink', target: n.target, ...meta };
      if (n.kind === 'file') {
        const g = state === 'live' ? n.live : n.durable;
        if (contents === 'digest') return { type: 'file', data: EMPTY, digest: g.contentDigest(), ...meta };
        // Extents only where the file has holes: a file without is written whole anyway.
        const extents = g.dataExtents();
        const whole = extents.length === 0 ? g.size === 0 : extents.length === 1 && extents[0][0] === 0 && extents[0][1] === g.size;
        return { type: 'file', data: g.toBuffer(), ...(whole ? {} : { extents }), ...meta };
      }
      if (n.kind !== 'dir') return { type: n.kind, rdev: n.rdev, ...meta };
      const map = state === 'live' ? n.live : n.durable;
      const entries = new Map<string, FsTree>();
      onPath.add(ino);
      for (const [name, child] of [...map].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
        // A torn cross-directory rename can leave a directory under itself; an image cannot show that.
        if (!onPath.has(child)) entries.set(name, visit(child));
      }
      onPath.delete(ino);
      return { type: 'dir', entries, ...meta };
    };
    return visit(ROOT_INO);
  }

  /**
   * hashTree of exportTree(state) without copying a byte: each file's digest is kept per chunk
   * (content-digest.ts), so this costs the chunks changed since the last call, plus the inodes.
   */
  imageHash(state: 'durable' | 'live'): string {
    return hashTree(this.exportTree(state, 'digest'));
  }

  /** A model whose live and durable state are both `tree` (hard links are not preserved). */
  static fromTree(tree: FsTree, now?: () => number, defaultOwner?: Owner): FsModel {
    const m = new FsModel(now, defaultOwner);
    m.loadTree(tree);
    return m;
  }

  /**
   * Fills this model, still empty, with `tree`, all of it durable (its live and durable state are
   * both the tree; hard links are not preserved). `atMs`: every time it sets (a starting state,
   * loaded the same way when a recorded run is replayed); else the model's clock.
   */
  loadTree(tree: FsTree, atMs?: number): void {
    if (tree.type !== 'dir') throw new Error('FsModel.loadTree: the root of an image must be a directory');
    const root = this.nodes.get(ROOT_INO);
    if (this.nodes.size !== 1 || root?.kind !== 'dir' || root.live.size !== 0) throw new Error('invariant: a tree is loaded into an empty model only');
    const clock = this.now;
    if (atMs !== undefined) this.now = () => atMs;
    try {
      this.fillFrom(tree);
    } finally {
      this.now = clock;
    }
  }

  private fillFrom(tree: Extract<FsTree, { type: 'dir' }>): void {
    const m = this as FsModel;
    const setMeta = (ino: number, t: FsTree, defaultMode: number) => {
      // chown first: it clears setuid/setgid, which the image's mode may hold.
      m.chown(ino, t.uid ?? UNCHANGED_ID, t.gid ?? UNCHANGED_ID);
      if (t.type !== 'symlink') m.chmod(ino, t.mode ?? defaultMode);
    };
    const fill = (dirPath: string, t: Extract<FsTree, { type: 'dir' }>) => {
      for (const [name, child] of t.entries) {
        const path = `${dirPath}/${name}`;
        let ino: number;
        if (child.type === 'dir') {
          ino = m.mkdir(path, 0o755);
          fill(path, child);
        } else if (child.type === 'symlink') ino = m.symlink(child.target, path);
        else if (child.type === 'file') {
          ino = m.create(path, 0o644);
          m.write(ino, 0, child.data);
        } else ino = m.mknod(path, child.type, 0o644, child.rdev);
        setMeta(ino, child, child.type === 'dir' ? 0o755 : 0o644);
      }
    };
    fill('', tree);
    setMeta(ROOT_INO, tree, 0o755);
    m.crash('keep-all');
  }

  /** Count of inodes (for invariant checks in tests). */
  get inodeCount(): number {
    return this.nodes.size;
  }

  /**
   * Throws, naming the invariant, when the model contradicts itself: a directory entry naming no
   * inode; a link or subdirectory count that is not the entries'; named bytes that are not the sum
   * of the named files' sizes; a file whose live bytes are not its durable bytes plus its pending
   * changes (unless a failed fsync dropped some); changes out of order. The model's property tests
   * run it after every step, and the daemon after every request when POWERCUT_CHECK_INVARIANTS is set.
   * `filesInFull` false leaves out the one check that rebuilds every file from its durable bytes and
   * pending changes (its cost grows with the data held: the daemon makes it every few requests).
   */
  assertInvariants(filesInFull = true): void {
    const fail = (what: string): never => {
      throw new Error(`FsModel invariant broken: ${what}`);
    };
    const links = new Map<number, number>();
    for (const n of this.nodes.values()) {
      if (n.kind !== 'dir') continue;
      let subdirs = 0;
      for (const [name, child] of n.live) {
        const c = this.nodes.get(child);
        if (!c) fail(`directory ${n.ino} names '${name}' -> inode ${child}, which does not exist`);
        links.set(child, (links.get(child) ?? 0) + 1);
        if (c!.kind === 'dir') subdirs++;
      }
      if (subdirs !== n.subdirs) fail(`directory ${n.ino} counts ${n.subdirs} subdirectories but names ${subdirs}`);
      for (const [name, child] of n.durable) if (!this.nodes.has(child)) fail(`directory ${n.ino}'s durable entry '${name}' names inode ${child}, which does not exist`);
    }
    let named = 0;
    for (const n of this.nodes.values()) {
      const expected = links.get(n.ino) ?? 0;
      if (n.nlink !== expected) fail(`inode ${n.ino} has nlink ${n.nlink} but ${expected} live entries name it`);
      if (n.kind !== 'file') continue;
      if (n.nlink > 0) named += n.live.usageBytes;
      let seq = 0;
      for (const p of n.pending) {
        if (p.seq <= seq || p.seq > this.changeSeq) fail(`file ${n.ino}'s pending changes are out of order (seq ${p.seq} after ${seq}, ${this.changeSeq} changes so far)`);
        seq = p.seq;
      }
      if (!n.dropped && filesInFull) {
        const whole = chosenFile(n.durable, n.pending, { kind: 'all' });
        if (!whole.equals(n.live)) fail(`file ${n.ino}'s live bytes (${n.live.size}) are not its durable bytes (${n.durable.size}) plus its ${n.pending.length} pending changes`);
        if (JSON.stringify(whole.allocatedBlocks()) !== JSON.stringify(n.live.allocatedBlocks())) {
          fail(`file ${n.ino}'s allocated blocks ${JSON.stringify(n.live.allocatedBlocks())} are not those of its durable version plus its ${n.pending.length} pending changes (${JSON.stringify(whole.allocatedBlocks())})`);
        }
      }
    }
    if (named !== this.namedBytes) fail(`named bytes are ${this.namedBytes} but the named files hold ${named}`);
    let seq = 0;
    for (const op of this.journal) {
      if (op.changes.length === 0) fail(`a journalled directory operation (seq ${op.seq}) has no change`);
      if (op.seq <= seq || op.seq > this.changeSeq) fail(`the journal is out of order (seq ${op.seq} after ${seq})`);
      seq = op.seq;
    }
  }

  // ---- the journal's commits (the journaled policy) ----

  /** An inode changed: its attributes, and for the journal its inode (and its size, if that changed). */
  private changedInode(n: Node, sizeChanged = false): void {
    n.metaDirty = true;
    this.uncommittedChange(n, sizeChanged);
  }

  private uncommittedChange(n: Node, sizeChanged: boolean): void {
    const seq = Math.max(1, this.changeSeq);
    if (n.uncommitted === 0) n.uncommitted = seq;
    n.lastChange = seq;
    if (!sizeChanged) return;
    if (n.uncommittedSize === 0) n.uncommittedSize = seq;
    n.lastSizeChange = seq;
  }

  /**
   * A completed fsync or fdatasync commits the journal when its inode has a change not yet committed
   * (ext4: it waits for the transaction that last changed the inode; an fdatasync only for one that
   * changed its size). What is sure to be committed then is every change of every inode up to the
   * inode's latest change, not up to the fsync: a periodic commit (every 5 s) may already have
   * committed that change, and then the fsync starts no commit of its own, so the directory
   * operations made since stay unsynced (real ext4 showed it: kernel-check). A held fsync covers
   * only the changes before `covers`: when the inode changed after that, its oldest uncommitted change.
   */
  private commitIfNeeded(n: Node, datasync: boolean, covers: number): void {
    const sizeOnly = datasync && n.kind !== 'dir';
    const oldest = sizeOnly ? n.uncommittedSize : n.uncommitted;
    if (oldest === 0 || oldest > covers) return;
    const latest = sizeOnly ? n.lastSizeChange : n.lastChange;
    const upTo = latest <= covers ? latest : oldest;
    this.committedSeq = Math.max(this.committedSeq, upTo);
    // An inode changed again after upTo keeps an uncommitted change (its latest: a later seq than its
    // oldest such change, so a held fsync commits no more than it may).
    for (const x of this.nodes.values()) {
      if (x.uncommitted !== 0 && x.uncommitted <= upTo) x.uncommitted = x.lastChange > upTo ? x.lastChange : 0;
      if (x.uncommittedSize !== 0 && x.uncommittedSize <= upTo) x.uncommittedSize = x.lastSizeChange > upTo ? x.lastSizeChange : 0;
    }
  }

  // ---- for the crash policies (fusefs/model/policies/) ----

  /** What a power cut now could keep or lose: the unsynced directory operations (the committed ones first) and files. */
  unsynced(): Unsynced {
    const inos = this.sortedInos();
    const files = inos.map((ino) => this.nodes.get(ino)!).filter((n): n is FileNode => n.kind === 'file').map((n) => ({ ino: n.ino, durable: n.durable, pending: n.pending }));
    let committedDirOps = 0;
    while (committedDirOps < this.journal.length && this.journal[committedDirOps].seq <= this.committedSeq) committedDirOps++;
    return {
      dirOps: this.journal.length,
      committedDirOps,
      files,
      fileChanges: files.reduce((n, f) => n + f.pending.length, 0),
      metaDirty: inos.filter((ino) => this.nodes.get(ino)!.metaDirty),
      journal: this.journal,
    };
  }

  /**
   * A probe (the cause search): the next settle also persists these units, whatever the policy
   * chose for them, as if they had been made durable before the cut. Used on a copy of the model.
   */
  probe(units: readonly ProbeUnit[]): void {
    this.probeUnits = units;
  }
  private probeUnits: readonly ProbeUnit[] = [];

  /** A live path of `ino` ('/' for the root), or undefined when no live entry names it. */
  pathOf(ino: number): string | undefined {
    if (ino === ROOT_INO) return '/';
    const walk = (dir: number, prefix: string, seen: Set<number>): string | undefined => {
      const n = this.nodes.get(dir);
      if (n?.kind !== 'dir' || seen.has(dir)) return undefined;
      seen.add(dir);
      for (const [name, child] of n.live) {
        if (child === ino) return `${prefix}/${name}`;
        const found = walk(child, `${prefix}/${name}`, seen);
        if (found) return found;
      }
      return undefined;
    };
    return walk(ROOT_INO, '', new Set());
  }

  /**
   * Ends a power cut as a policy chose: the first `dirPrefix` unsynced directory operations persist,
   * each file in `durables` gets that durable version, the unsynced attributes of the inodes in
   * `keepAttributes` persist; then live := durable, and inodes no durable entry reaches are gone.
   */
  settle(dirPrefix: number, durables: ReadonlyMap<number, GrowBuffer>, keepAttributes: ReadonlySet<number> | 'all'): void {
    if (!Number.isInteger(dirPrefix) || dirPrefix < 0 || dirPrefix > this.journal.length) throw new Error(`settle: dirPrefix ${dirPrefix} is not in 0..${this.journal.length}`);
    // A probe's files are whole from their durable version on, whatever the policy chose for them.
    const probed = new Map<number, GrowBuffer>();
    // A unit whose inode this state does not have yet (a state before its create) has nothing to persist.
    const present = this.probeUnits.filter((u) => this.nodes.has(u.ino));
    this.probeUnits = present;
    for (const u of present) {
      if (u.kind !== 'file') continue;
      const f = this.file(u.ino);
      probed.set(u.ino, chosenFile(f.durable, f.pending.slice(0, u.upTo ?? f.pending.length), { kind: 'all' }));
    }
    this.persistJournalPrefix(dirPrefix);
    for (const [ino, durable] of [...durables, ...probed]) this.file(ino).durable = durable;
    for (const n of this.nodes.values()) if (keepAttributes === 'all' || keepAttributes.has(n.ino)) syncMeta(n);
    this.persistProbe(dirPrefix);
    this.goBackToDurable();
  }

  /** The probe's directory entries and attributes, on top of what the policy kept (see probe). */
  private persistProbe(dirPrefix: number): void {
    for (const u of this.probeUnits) {
      const n = this.node(u.ino);
      if (u.kind === 'meta') syncMeta(n);
      else if (u.kind === 'dir') {
        if (n.kind !== 'dir') throw new Error(`probe: inode ${u.ino} is not a directory`);
        for (const op of this.journal.slice(dirPrefix)) {
          if (u.seqs && !u.seqs.includes(op.seq)) continue;
          for (const c of op.changes) {
            if (c.dir !== u.ino) continue;
            if (c.ino === null) n.durable.delete(c.name);
            else n.durable.set(c.name, c.ino);
          }
        }
      }
    }
    this.probeUnits = [];
  }

  // ---- internals ----
  // The public changing methods never call one another (a recording model records each public call
  // it gets, so a nested one would be recorded twice): they share these private helpers instead.

  private createFile(path: string, mode: number, owner: Owner): number {
    const { dir, name } = this.parentForNew(path);
    const ino = this.nextIno++;
    const t = this.now();
    const meta = this.newMeta(dir, mode, owner, false, t);
    const node: FileNode = {
      kind: 'file', ino, nlink: 0, ...meta, durableMeta: { ...meta }, metaDirty: false, ...NOTHING_UNCOMMITTED,
      live: new GrowBuffer(), durable: new GrowBuffer(), pending: [], dropped: false,
    };
    this.nodes.set(ino, node);
    this.setEntries([{ dir, name, ino }], t, ino);
    return ino;
  }

  /** fsync of one inode (see fsync). */
  private syncNode(n: Node, coversUpTo?: number): void {
    this.syncContent(n, coversUpTo);
    // Metadata as at the fsync's end, even when held: a real fsync writes the inode when it gets to it.
    syncMeta(n);
    if (n.kind !== 'dir') return;
    for (const child of n.live.values()) {
      const c = this.node(child);
      if (c.kind !== 'file' && c.kind !== 'dir') syncMeta(c);
    }
  }

  private newDir(ino: number, meta: Meta): DirNode {
    return { kind: 'dir', ino, nlink: 0, ...meta, durableMeta: { ...meta }, metaDirty: false, ...NOTHING_UNCOMMITTED, live: new Map(), durable: new Map(), subdirs: 0 };
  }

  private newMeta(dir: number, mode: number, owner: Owner, isDir: boolean, t: number): Meta {
    const parent = this.node(dir);
    const inherit = (parent.mode & S_ISGID) !== 0;
    let bits = mode & 0o7777;
    if (inherit && isDir) bits |= S_ISGID;
    return { mode: bits, uid: owner.uid, gid: inherit ? parent.gid : owner.gid, atimeMs: t, mtimeMs: t, ctimeMs: t };
  }

  /** Durable content := live (or, with `coversUpTo`, := as it was after that change): file bytes and size, or directory entries. */
  private syncContent(n: Node, coversUpTo = Infinity): void {
    const covered = (seq: number) => seq <= coversUpTo;
    if (n.kind === 'dir') {
      const ino = n.ino;
      const mine = (op: JournalOp) => op.changes.some((c) => c.dir === ino);
      if (this.journal.every((op) => !mine(op) || covered(op.seq))) n.durable = new Map(n.live);
      else {
        for (const c of this.journal.filter((op) => mine(op) && covered(op.seq)).flatMap((op) => op.changes)) {
          if (c.dir !== ino) continue;
          if (c.ino === null) n.durable.delete(c.name);
          else n.durable.set(c.name, c.ino);
        }
      }
      this.journal = this.journal
        .map((op) => (covered(op.seq) ? { changes: op.changes.filter((c) => c.dir !== ino), seq: op.seq } : op))
        .filter((op) => op.changes.length > 0);
      return;
    }
    if (n.kind !== 'file') return;
    if (n.pending.some((p) => !covered(p.seq))) {
      // A slow fsync: the changes made after it started stay pending. Durable plus the pending
      // changes in order is what can become durable (after a failed fsync, live holds more).
      const upTo = n.pending.filter((p) => covered(p.seq));
      n.durable = chosenFile(n.durable, upTo, { kind: 'all' });
      n.pending = n.pending.filter((p) => !covered(p.seq));
      return;
    }
    if (!n.dropped) {
      // Live is durable plus the pending changes, so durable := live (chunks shared, nothing copied).
      n.durable = n.live.clone();
      n.pending = [];
      return;
    }
    // After a failed fsync live also holds changes that can never become durable: only the pending
    // ones are saved. Bytes untouched since the last fsync already equal live, except where a truncate cut them.
    if (n.pending.some((p) => p.type === 'fallocate')) {
      // A collapse or insert moves bytes no write touched: durable plus the pending changes, in order.
      n.durable = chosenFile(n.durable, n.pending, { kind: 'all' });
      n.pending = [];
      return;
    }
    let cutBytes = Infinity;
    for (const p of n.pending) if (p.type === 'truncate') cutBytes = Math.min(cutBytes, p.sizeBytes);
    if (cutBytes < n.durable.size) n.durable.resize(cutBytes);
    n.durable.resize(n.live.size);
    for (const p of n.pending) if (p.type === 'write') n.durable.copyRangeFrom(n.live, p.offset, p.offset + p.data.length);
    n.pending = [];
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

  /**
   * Applies one directory operation to live maps at time `t`, and journals it. Keeps link and
   * subdirectory counts; the directories changed get new mtime and ctime, and every inode gaining or
   * losing a name a new ctime, except `created`, whose attributes at creation are its durable ones.
   */
  private setEntries(changes: { dir: number; name: string; ino: number | null }[], t: number, created = 0): void {
    const seq = ++this.changeSeq;
    // A new inode is part of the journal's transaction; its attributes at creation are already durable.
    if (created !== 0) this.uncommittedChange(this.node(created), false);
    for (const c of changes) {
      const dir = this.node(c.dir) as DirNode;
      const old = dir.live.get(c.name);
      if (old !== undefined) {
        const o = this.node(old);
        o.nlink--;
        if (o.kind === 'file' && o.nlink === 0) this.namedBytes -= o.live.usageBytes;
        o.ctimeMs = t;
        this.changedInode(o);
        if (o.kind === 'dir') dir.subdirs--;
      }
      if (c.ino === null) dir.live.delete(c.name);
      else {
        dir.live.set(c.name, c.ino);
        const child = this.node(c.ino);
        child.nlink++;
        if (child.kind === 'file' && child.nlink === 1) this.namedBytes += child.live.usageBytes;
        if (c.ino !== created) {
          child.ctimeMs = t;
          this.changedInode(child);
        }
        if (child.kind === 'dir') dir.subdirs++;
      }
      dir.mtimeMs = dir.ctimeMs = t;
      this.changedInode(dir);
      if (dir.subdirs < 0 || (old !== undefined && this.node(old).nlink < 0)) throw new Error('invariant: negative link count');
    }
    this.journal.push({ changes, seq });
  }

  /** Drops inodes unreachable from the root and recomputes link and subdirectory counts, and the named files' bytes. */
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
    for (const n of this.nodes.values()) {
      if (n.kind !== 'dir') continue;
      n.subdirs = 0;
      for (const c of n.live.values()) {
        const child = this.nodes.get(c)!;
        child.nlink++;
        if (child.kind === 'dir') n.subdirs++;
      }
    }
    this.namedBytes = 0;
    for (const n of this.nodes.values()) if (n.kind === 'file' && n.nlink > 0) this.namedBytes += n.live.usageBytes;
  }
}

/** Durable attributes := live (allocates only when something changed). */
function syncMeta(n: Node): void {
  if (!n.metaDirty) return;
  n.durableMeta = { mode: n.mode, uid: n.uid, gid: n.gid, atimeMs: n.atimeMs, mtimeMs: n.mtimeMs, ctimeMs: n.ctimeMs };
  n.metaDirty = false;
}

function checkTime(ms: number): number {
  if (!Number.isFinite(ms) || ms < 0) throw new FsError(EINVAL, `utimens: time ${ms} ms is not representable`);
  return ms;
}

function splitPath(path: string): string[] {
  if (!path.startsWith('/')) throw new FsError(EINVAL, `${path}: paths must be absolute`);
  return path.split('/').filter((p) => p.length > 0);
}
