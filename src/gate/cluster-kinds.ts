// The kinds of power cut a cluster gate checks (pure): which nodes lose power, named by how many.
// coordinated: every node at once (a rack or datacenter failure); one: a single node; minority:
// fewer nodes than a majority (with 3 nodes that is one node); majority: a majority, not all.
// A cut is counted under one kind: the first asked that it fits, so no case is counted twice.
import type { StatePolicy } from '../../fusefs/crash-states.js';
import { keepsNoUnsynced } from '../../fusefs/model/policies/index.js';

export const CUT_KINDS = ['coordinated', 'one', 'minority', 'majority'] as const;
export type CutKind = (typeof CUT_KINDS)[number];

/** What `--nodes-cut` takes. */
export const NODES_CUT_CHOICES = ['coordinated', 'one', 'minority', 'all-kinds'] as const;
export type NodesCutChoice = (typeof NODES_CUT_CHOICES)[number];
export const DEFAULT_NODES_CUT: NodesCutChoice = 'all-kinds';

export function isNodesCutChoice(x: string): x is NodesCutChoice {
  return (NODES_CUT_CHOICES as readonly string[]).includes(x);
}

/** The least number of nodes that is a majority of `n`. */
export function majorityOf(n: number): number {
  return Math.floor(n / 2) + 1;
}

/** Whether cutting `cut` of `n` nodes (absent: all of them) is a cut of `kind`. */
export function isCutOfKind(kind: CutKind, cut: readonly number[] | undefined, n: number): boolean {
  const k = cut === undefined ? n : cut.length;
  if (k < 1 || k > n) throw new Error(`invariant: a cut of ${k} nodes in a cluster of ${n}`);
  switch (kind) {
    case 'coordinated': return k === n;
    case 'one': return k === 1 && n > 1;
    case 'minority': return k < majorityOf(n);
    case 'majority': return k >= majorityOf(n) && k < n;
  }
}

const sizes = (n: number) => Array.from({ length: n }, (_, i) => i + 1);
const firstNodes = (k: number) => Array.from({ length: k }, (_, j) => j);

/**
 * The kind a cut of `cut` of `n` nodes is counted under: the first of `asked` it fits (so a single
 * node's cut of five counts as one node's when that is asked, as a minority's otherwise); undefined
 * when it fits none (the gate does not check it).
 */
export function kindOfCut(asked: readonly CutKind[], cut: readonly number[] | undefined, n: number): CutKind | undefined {
  return asked.find((kind) => isCutOfKind(kind, cut, n));
}

/**
 * The kinds a `--nodes-cut` choice asks for in a cluster of `n` nodes: all-kinds is every kind that
 * some cut is counted under (with three nodes a minority is one node, so all-kinds there is
 * coordinated, one and majority); a single kind, if the cluster has a cut of it.
 */
export function kindsAsked(choice: NodesCutChoice, n: number): CutKind[] {
  const base: CutKind[] = choice === 'all-kinds' ? [...CUT_KINDS] : [choice];
  const reached = new Set(sizes(n).map((k) => kindOfCut(base, firstNodes(k), n)));
  return base.filter((kind) => reached.has(kind));
}

/** How each kind is named in the summary's rows. */
export const KIND_ROW: Record<CutKind, string> = {
  coordinated: 'cluster coordinated',
  one: 'cluster one-node',
  minority: 'cluster minority',
  majority: 'cluster majority',
};

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
 * The numbers of nodes a cut of `kind` may take so that it is counted under `kind` (of the kinds
 * `asked`): every node (coordinated), or the sizes short of it whose first fitting kind is `kind`.
 * The live cut's nodes of that size are drawn by drawLiveCase (src/harness/cluster/live-draw.ts).
 */
export function cutSizes(kind: CutKind, asked: readonly CutKind[], n: number): number[] {
  if (kind === 'coordinated') return [n];
  const fitting = sizes(n).filter((k) => k < n && kindOfCut(asked, firstNodes(k), n) === kind);
  if (fitting.length === 0) throw new Error(`invariant: a cluster of ${n} nodes has no cut counted as ${kind} (asked: ${asked.join(', ')})`);
  return fitting;
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
