// Which lost units of a set a recovery can reach once the set is durable. A directory entry the
// state lost, and that the set does not make durable, hides everything under it: a unit there
// changes nothing recovery reads. A deterministic search never keeps such a unit (leaving it out
// changes no image), but a cluster's probe is one recovery, a sample, and ddmin can keep one by
// chance; named as a cause, its fix would persist a file no path leads to. Pure.
import type { LostUnit } from '../../../fusefs/crash-states.js';

/** The directory operations that make a new inode, named only by the entry they add. */
const NEW_INODE = new Set(['create', 'mkdir', 'mknod', 'symlink']);

/** The units of `set` reachable from `/` on their node, given every unit the state lost (`lost`). */
export function reachableUnits(set: readonly LostUnit[], lost: readonly LostUnit[]): LostUnit[] {
  const durable = new Set(set);
  // node + directory -> names whose entry the state lost and the set leaves lost
  const hidden = new Map<string, Set<string>>();
  const where = (node: number | undefined, dir: string) => `${node ?? ''}:${dir}`;
  for (const u of lost) {
    if (u.kind !== 'dir' || durable.has(u)) continue;
    // Only an entry that made a new inode hides it for sure: a rename's or a link's may leave it a
    // durable older name (a lost rename keeps the file under its old name).
    for (const c of u.changes.filter((x) => NEW_INODE.has(x.kind))) {
      for (const e of c.entries ?? []) {
        if (e.target === null) continue;
        const names = hidden.get(where(u.node, u.path)) ?? new Set<string>();
        names.add(e.name);
        hidden.set(where(u.node, u.path), names);
      }
    }
  }
  const reachable = (u: LostUnit): boolean => {
    const parts = u.path.split('/').filter(Boolean);
    for (let k = 0; k < parts.length; k++) {
      const dir = k === 0 ? '/' : `/${parts.slice(0, k).join('/')}`;
      if (hidden.get(where(u.node, dir))?.has(parts[k])) return false;
    }
    return true;
  };
  return set.filter(reachable);
}
