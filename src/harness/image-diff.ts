// Which files differ between two image folders (e.g. live vs durable at the cut): what a power
// cut would take away.
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';

async function listFiles(root: string, rel = ''): Promise<Map<string, Buffer | 'dir'>> {
  const out = new Map<string, Buffer | 'dir'>();
  let entries;
  try {
    entries = await readdir(path.join(root, rel), { withFileTypes: true });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return out;
    throw err;
  }
  for (const e of entries) {
    const name = path.posix.join(rel, e.name);
    if (e.isDirectory()) {
      out.set(name + '/', 'dir');
      for (const [k, v] of await listFiles(root, name)) out.set(k, v);
    } else out.set(name, await readFile(path.join(root, name)));
  }
  return out;
}

export interface ImageDifference {
  file: string;
  what: string;
}

/** Files present in only one image, or with different sizes or bytes. */
export async function diffImages(aDir: string, bDir: string, aName = 'live', bName = 'durable'): Promise<ImageDifference[]> {
  const [a, b] = await Promise.all([listFiles(aDir), listFiles(bDir)]);
  const out: ImageDifference[] = [];
  for (const file of [...new Set([...a.keys(), ...b.keys()])].sort()) {
    const x = a.get(file);
    const y = b.get(file);
    if (y === undefined) out.push({ file, what: `only in ${aName}` });
    else if (x === undefined) out.push({ file, what: `only in ${bName}` });
    else if (x !== 'dir' && y !== 'dir' && !x.equals(y)) {
      let first = 0;
      while (first < Math.min(x.length, y.length) && x[first] === y[first]) first++;
      out.push({ file, what: `${aName} ${x.length} bytes, ${bName} ${y.length} bytes, first difference at byte ${first}` });
    }
  }
  return out;
}
