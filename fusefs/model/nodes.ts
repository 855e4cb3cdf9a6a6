// Inode shapes of the crash model: each carries a live state (what running processes see) and a
// durable state (what survives a power cut). docs/design.md, "Crash semantics".
import { GrowBuffer } from './grow-buffer.js';
import type { FallocateKind } from './fallocate.js';

/**
 * A change to a file since its last fsync, in order; kept so `torn` can persist a part of it.
 * `seq` numbers the changes of all files in the order they happened (exhaustive mode names them).
 */
export type PendingFileOp =
  | { type: 'write'; offset: number; data: Buffer; seq: number }
  | { type: 'truncate'; sizeBytes: number; seq: number }
  | { type: 'fallocate'; kind: FallocateKind; offset: number; length: number; seq: number };

/** An inode's attributes other than its content and names: what chmod, chown and utimens change. */
export interface Meta {
  mode: number; // permission bits with setuid, setgid and sticky (no type bits)
  uid: number;
  gid: number;
  atimeMs: number;
  mtimeMs: number;
  ctimeMs: number;
}

interface NodeBase extends Meta {
  ino: number;
  /** Live hard-link count (directory entries naming this inode in live maps). */
  nlink: number;
  /** The attributes a power cut goes back to: those at creation or at the last fsync that saved them. */
  durableMeta: Meta;
  /** True once a live attribute may differ from `durableMeta` (cheaper than comparing on every write). */
  metaDirty: boolean;
  /**
   * For the journaled policy: the seq of this inode's oldest change not yet in a journal commit (0:
   * none), and of its oldest size change (what makes an fdatasync commit). Changes have seqs
   * (FsModel's change numbering); an attribute change takes the seq of the change before it.
   */
  uncommitted: number;
  uncommittedSize: number;
  /** The seq of this inode's latest change, and of its latest size change (0: none): how far an fsync's commit surely reaches. */
  lastChange: number;
  lastSizeChange: number;
}

export interface FileNode extends NodeBase {
  kind: 'file';
  live: GrowBuffer;
  durable: GrowBuffer;
  pending: PendingFileOp[];
  /**
   * True after a failed fsync dropped pending changes that live still shows (they can no longer
   * become durable): live then differs from durable outside the pending changes. Until the next power cut.
   */
  dropped: boolean;
}

export interface DirNode extends NodeBase {
  kind: 'dir';
  live: Map<string, number>;
  durable: Map<string, number>;
  /** Live entries that are directories: st_nlink is 2 + this (kept, not counted on every stat). */
  subdirs: number;
}

export interface SymlinkNode extends NodeBase {
  kind: 'symlink';
  target: string; // immutable: a symlink's content is durable once its entry is
}

/** Kinds made by mknod (and bind, for sockets) that have no content of their own. */
export const SPECIAL_KINDS = ['fifo', 'socket', 'chardev', 'blockdev'] as const;
export type SpecialKind = (typeof SPECIAL_KINDS)[number];

export interface SpecialNode extends NodeBase {
  kind: SpecialKind;
  rdev: number; // device number for chardev/blockdev, 0 otherwise
}

export type Node = FileNode | DirNode | SymlinkNode | SpecialNode;
export type NodeKind = Node['kind'];

/** One unsynced directory-entry change: `dir[name] := ino` (null = removed). */
export interface DirChange {
  dir: number;
  name: string;
  ino: number | null;
}

/** A directory operation (create, rename, ...) as the journal records it, for `torn`. */
export interface JournalOp {
  changes: DirChange[];
  /** Its place among all changes (file changes too): an fsync covers the changes made before it started. */
  seq: number;
}

/** A file's unsynced state, as a crash policy reads it: its durable version and the changes since. */
export interface UnsyncedFile {
  ino: number;
  durable: GrowBuffer;
  pending: readonly PendingFileOp[];
}

/** What a power cut could keep or lose (FsModel.unsynced), read by the crash policies. */
export interface Unsynced {
  /** Unsynced directory operations, in the order they happened. */
  dirOps: number;
  /** How many of the first ones a journal commit (the journaled policy) made durable anyway. */
  committedDirOps: number;
  /** Every file, in inode order (a policy draws its choices in that order). */
  files: UnsyncedFile[];
  /** Unsynced file changes (writes and truncates) in all. */
  fileChanges: number;
  /** Inodes with unsynced attributes, in inode order. */
  metaDirty: number[];
  /** The unsynced directory operations themselves, in order. */
  journal: readonly JournalOp[];
}

/** Owner and mode of a tree node; absent fields take the loader's defaults. */
export interface TreeMeta {
  mode?: number;
  uid?: number;
  gid?: number;
}

/** A filesystem tree as plain data: what `image` writes and `--image` loads. */
export type FsTree =
  | ({ type: 'dir'; entries: Map<string, FsTree> } & TreeMeta)
  /**
   * `digest`: set only in a tree exported for hashing (FsModel.imageHash), whose `data` is then empty.
   * `extents`: the [start, end) byte ranges of `data` that may hold a non-zero byte, in order (a tree
   * exported from the model knows them: its chunks); every byte outside reads as zero, and an image
   * writer leaves it a hole without reading it. Absent: any byte may.
   */
  | ({ type: 'file'; data: Buffer; digest?: string; extents?: [number, number][] } & TreeMeta)
  | ({ type: 'symlink'; target: string } & TreeMeta)
  | ({ type: SpecialKind; rdev: number } & TreeMeta);
