// The hash of a whole image (what a crash state is deduplicated by), from each file's content digest.
import { createHash } from 'node:crypto';
import { contentDigest } from './content-digest.js';
import type { FsTree } from './nodes.js';

/**
 * A canonical hash of an image: names, kinds, modes, owners, contents (not times). Equal hashes
 * recover identically. A file counts by its digest (`digest` when the tree carries it, else
 * computed from its bytes: the same either way).
 */
export function hashTree(tree: FsTree): string {
  const h = createHash('sha1');
  const visit = (t: FsTree): void => {
    h.update(`${t.type} ${t.mode ?? ''} ${t.uid ?? ''} ${t.gid ?? ''}\n`);
    if (t.type === 'file') h.update(`${t.digest ?? contentDigest(t.data)}\n`);
    else if (t.type === 'symlink') h.update(`${t.target}\n`);
    else if (t.type === 'dir') {
      for (const [name, child] of t.entries) {
        h.update(`${name}/\n`);
        visit(child);
      }
      h.update('..\n');
    } else h.update(`${t.rdev}\n`);
  };
  visit(tree);
  return h.digest('hex');
}
