// How a cluster gate samples its cuts (pure): a seeded generator, an order spread over the run, and
// a cut in words. The kinds of cut themselves are named in src/faults/cut-kinds.ts.
import type { StatePolicy } from '../../fusefs/crash-states.js';
import { keepsNoUnsynced } from '../../fusefs/model/policies/index.js';

/** A small seeded generator (mulberry32): the gate's node choices and cut points repeat with its seed. */
export function seededRandom(seed: number): () => number {
  let a = seed | 0;
  return () => {
    a = (a + 0x6d2b_79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

/**
 * Every one of `items`, in an order whose every prefix is spread over the whole list (the middle,
 * then the quarters, then the eighths...), starting from a seeded rotation: however many a budget
 * lets the gate judge, they sample the whole run, and successive workloads start elsewhere.
 */
export function spreadOrder<T>(items: readonly T[], random: () => number): T[] {
  const n = items.length;
  if (n === 0) return [];
  const shift = Math.floor(random() * n);
  const rotated = [...items.slice(shift), ...items.slice(0, shift)];
  const out: T[] = [];
  // Breadth first over halves: each level takes the middle of every range the last one left.
  for (let ranges: [number, number][] = [[0, n]]; ranges.length > 0;) {
    const next: [number, number][] = [];
    for (const [lo, hi] of ranges) {
      const mid = Math.floor((lo + hi) / 2);
      out.push(rotated[mid]);
      if (lo < mid) next.push([lo, mid]);
      if (mid + 1 < hi) next.push([mid + 1, hi]);
    }
    ranges = next;
  }
  if (out.length !== n) throw new Error(`invariant: spreadOrder lists each of ${n} items once, listed ${out.length}`);
  return out;
}

/** A cut in words: "a coordinated crash state", "a live cut of node 1, restarted while the run went on". */
export function describeClusterCut(how: 'state' | 'live', nodes: readonly number[] | 'all' | undefined, policy: StatePolicy = 'lose-unsynced'): string {
  const all = nodes === undefined || nodes === 'all';
  const who = all ? '' : nodes.length === 1 ? `node ${nodes[0]}` : `nodes ${nodes.join(', ')}`;
  const state = keepsNoUnsynced(policy) ? 'crash state' : `${policy} crash state`;
  if (how === 'state') return all ? `a coordinated ${state}` : `a ${state} cutting ${who} (the others lost only their processes)`;
  return all ? 'a live coordinated cut' : `a live cut of ${who}, restarted while the run went on`;
}
