// Durable images as ordinary files: `image --out DIR` writes one, `--image DIR` loads one.
import { lstat, mkdir, readdir, readFile, readlink, symlink, writeFile, chmod } from 'node:fs/promises';
import { join } from 'node:path';
import type { FsTree } from './model/nodes.js';

/** Writes `tree` under `dir`, which must not exist or be empty (an image is never merged into old files). */
export async function writeTree(tree: FsTree, dir: string): Promise<void> {
  if (tree.type !== 'dir') throw new Error('image: the root of a tree must be a directory');
  await mkdir(dir, { recursive: true });
  const existing = await readdir(dir);
  if (existing.length > 0) throw new Error(`image: output directory ${dir} is not empty (${existing.length} entries); choose a new one`);
  await writeChildren(tree, dir);
}

async function writeChildren(tree: Extract<FsTree, { type: 'dir' }>, dir: string): Promise<void> {
  for (const [name, child] of tree.entries) {
    const p = join(dir, name);
    if (child.type === 'dir') {
      await mkdir(p);
      await writeChildren(child, p);
    } else if (child.type === 'file') {
      await writeFile(p, child.data);
      if (child.mode !== undefined) await chmod(p, child.mode);
    } else {
      await symlink(child.target, p);
    }
  }
}

/** Reads a directory as a tree; anything other than files, directories and symlinks is an error naming it. */
export async function readTree(dir: string): Promise<FsTree> {
  const st = await lstat(dir).catch((e: NodeJS.ErrnoException) => {
    throw new Error(`image: cannot read ${dir}: ${e.code ?? e.message}`);
  });
  if (!st.isDirectory()) throw new Error(`image: ${dir} is not a directory`);
  const entries = new Map<string, FsTree>();
  for (const name of (await readdir(dir)).sort()) {
    const p = join(dir, name);
    const s = await lstat(p);
    if (s.isDirectory()) entries.set(name, await readTree(p));
    else if (s.isFile()) entries.set(name, { type: 'file', data: await readFile(p), mode: s.mode & 0o7777 });
    else if (s.isSymbolicLink()) entries.set(name, { type: 'symlink', target: await readlink(p) });
    else throw new Error(`image: ${p} is neither a file, a directory nor a symlink`);
  }
  return { type: 'dir', entries, mode: st.mode & 0o7777 };
}
