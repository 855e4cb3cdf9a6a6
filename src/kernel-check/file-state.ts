// A file-level state: what the model describes and what kernel-check reads back from an ext4 image
// (names, sizes, bytes, link counts; no modes, owners or times). Pure.
import { createHash } from 'node:crypto';
import type { FsModel } from '../../fusefs/model/fs-model.js';

export interface FileEntry {
  /** Relative path ("d0/f1"). */
  path: string;
  /** Identifies the inode within the state (names sharing it are hard links). */
  inode: number;
  data: Buffer;
}

export interface FileState {
  /** Directories other than the root, sorted. */
  dirs: string[];
  /** Files sorted by path. */
  files: FileEntry[];
}

/** Names ext4 keeps of its own (mkfs makes lost+found): never part of a compared state. */
export const IGNORED_NAMES = new Set(['lost+found']);

export function sortState(s: FileState): FileState {
  return { dirs: [...s.dirs].sort(), files: [...s.files].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0)) };
}

/** Link count of each path's inode in the state (names naming it). */
export function linkCounts(s: FileState): Map<string, number> {
  const byInode = new Map<number, number>();
  for (const f of s.files) byInode.set(f.inode, (byInode.get(f.inode) ?? 0) + 1);
  return new Map(s.files.map((f) => [f.path, byInode.get(f.inode)!]));
}

/**
 * A canonical key: equal keys, equal states. Each file by path, size, content hash and the first
 * path of its inode (so hard links compare by which names share an inode, not by inode numbers).
 */
export function stateKey(s: FileState): string {
  const sorted = sortState(s);
  const firstPath = new Map<number, string>();
  for (const f of sorted.files) if (!firstPath.has(f.inode)) firstPath.set(f.inode, f.path);
  const files = sorted.files.map((f) => `${f.path}:${f.data.length}:${createHash('sha1').update(f.data).digest('hex').slice(0, 16)}:${firstPath.get(f.inode)}`);
  return `D[${sorted.dirs.join(',')}] F[${files.join(' ')}]`;
}

/** A state in a few lines: each directory, each file with its size, link count and its bytes as runs ("4096x0x07 904x0x00"). */
export function describeState(s: FileState): string {
  const sorted = sortState(s);
  const links = linkCounts(sorted);
  const lines = sorted.dirs.map((d) => `  ${d}/`);
  for (const f of sorted.files) lines.push(`  ${f.path}  ${f.data.length} bytes, ${links.get(f.path)} link${links.get(f.path) === 1 ? '' : 's'}${f.data.length ? `: ${byteRuns(f.data)}` : ''}`);
  return lines.length ? lines.join('\n') : '  (empty)';
}

/** Bytes as runs of one value ("512x0x07 3584x0x00"), the way the histories' writes fill files. */
export function byteRuns(data: Buffer): string {
  const runs: string[] = [];
  let i = 0;
  while (i < data.length) {
    let j = i;
    while (j < data.length && data[j] === data[i]) j++;
    runs.push(`${j - i}x0x${data[i].toString(16).padStart(2, '0')}`);
    i = j;
  }
  return runs.length > 12 ? `${runs.slice(0, 12).join(' ')} ... (${runs.length} runs)` : runs.join(' ');
}

/** The live state of a model (after a cut has settled it, its durable state): directories and files, by inode. */
export function modelState(m: FsModel): FileState {
  const dirs: string[] = [];
  const files: FileEntry[] = [];
  const walk = (dir: string) => {
    for (const name of m.readdir(dir === '' ? '/' : `/${dir}`)) {
      const path = dir === '' ? name : `${dir}/${name}`;
      const ino = m.resolve(`/${path}`);
      const st = m.stat(ino);
      if (st.kind === 'dir') {
        dirs.push(path);
        walk(path);
      } else if (st.kind === 'file') files.push({ path, inode: ino, data: m.read(ino, 0, st.sizeBytes) });
    }
  };
  walk('');
  return sortState({ dirs, files });
}

/** The state as JSON-able data (a saved failure), and back. */
export function stateToJson(s: FileState): unknown {
  return { dirs: s.dirs, files: s.files.map((f) => ({ path: f.path, inode: f.inode, data: f.data.toString('base64') })) };
}

export function stateFromJson(v: unknown): FileState {
  const o = v as { dirs: string[]; files: { path: string; inode: number; data: string }[] };
  if (!Array.isArray(o?.dirs) || !Array.isArray(o?.files)) throw new Error('a saved state needs dirs and files arrays');
  return sortState({ dirs: o.dirs, files: o.files.map((f) => ({ path: f.path, inode: f.inode, data: Buffer.from(f.data, 'base64') })) });
}
