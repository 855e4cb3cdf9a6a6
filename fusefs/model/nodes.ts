// Inode shapes of the crash model: each carries a live state (what running processes see) and a
// durable state (what survives a power cut). DESIGN.md section 3.
import { GrowBuffer } from './grow-buffer.js';

/** A change to a file since its last fsync, in order; kept so `torn` can persist a random part. */
export type PendingFileOp =
  | { type: 'write'; offset: number; data: Buffer }
  | { type: 'truncate'; sizeBytes: number };

interface NodeBase {
  ino: number;
  mode: number; // permission bits only
  mtimeMs: number;
  ctimeMs: number;
  /** Live hard-link count (directory entries naming this inode in live maps). */
  nlink: number;
}

export interface FileNode extends NodeBase {
  kind: 'file';
  live: GrowBuffer;
  durable: GrowBuffer;
  pending: PendingFileOp[];
}

export interface DirNode extends NodeBase {
  kind: 'dir';
  live: Map<string, number>;
  durable: Map<string, number>;
}

export interface SymlinkNode extends NodeBase {
  kind: 'symlink';
  target: string; // immutable: a symlink's content is durable once its entry is
}

export type Node = FileNode | DirNode | SymlinkNode;

/** One unsynced directory-entry change: `dir[name] := ino` (null = removed). */
export interface DirChange {
  dir: number;
  name: string;
  ino: number | null;
}

/** A directory operation (create, rename, ...) as the journal records it, for `torn`. */
export interface JournalOp {
  changes: DirChange[];
}

/** A filesystem tree as plain data: what `image` writes and `--image` loads. */
export type FsTree =
  | { type: 'dir'; entries: Map<string, FsTree>; mode?: number }
  | { type: 'file'; data: Buffer; mode?: number }
  | { type: 'symlink'; target: string };
