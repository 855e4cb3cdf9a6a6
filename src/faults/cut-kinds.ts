// The kinds of power cut of a cluster (pure), named here once: which nodes lose power, by how many.
// coordinated: every node at once (a rack or datacenter failure); one: a single node; minority:
// fewer nodes than a majority (with 3 nodes that is one node); majority: a majority, not all.
// Each kind is one entry of KINDS (its sizes, whether it takes every node, whether its live cut
// waits for the cluster to open, whether live cuts of it are drawn, its summary row); the gate's
// counting, its floor and the live draw (live-draw.ts) ask the entry, never the name. A cut is
// counted under one kind: the first asked that it fits, so no case is counted twice.

export const CUT_KINDS = ['coordinated', 'one', 'minority', 'majority'] as const;
export type CutKind = (typeof CUT_KINDS)[number];

interface CutKindEntry {
  /** The numbers of nodes a cut of this kind takes in a cluster of `n`, ascending (none: the cluster has no such cut). */
  sizes(n: number): number[];
  /**
   * It takes every node: no node runs on, so none is paused before it (the drain restarts them all),
   * and it is one set of nodes (a cap's fair share per set does not thin it).
   */
  everyNode: boolean;
  /**
   * A live cut of it stops a majority while the others run on: a driver restarts a cut node only
   * once its cluster is open, and no cluster opens without a majority, so the cut falls after the
   * open (one landing while the cluster opens is not judged).
   */
  liveCutAfterOpen: boolean;
  /** The gate draws live cuts of it (as well as judging its offline crash states). */
  drawnLive: boolean;
  /** How its row is named in the gate's summary. */
  row: string;
}

/** The least number of nodes that is a majority of `n`. */
export function majorityOf(n: number): number {
  return Math.floor(n / 2) + 1;
}

/** lo..hi, empty when hi < lo. */
const range = (lo: number, hi: number) => Array.from({ length: Math.max(0, hi - lo + 1) }, (_, i) => lo + i);

const KINDS: Record<CutKind, CutKindEntry> = {
  coordinated: { sizes: (n) => [n], everyNode: true, liveCutAfterOpen: false, drawnLive: true, row: 'cluster coordinated' },
  one: { sizes: (n) => (n > 1 ? [1] : []), everyNode: false, liveCutAfterOpen: false, drawnLive: true, row: 'cluster one-node' },
  minority: { sizes: (n) => range(1, majorityOf(n) - 1), everyNode: false, liveCutAfterOpen: false, drawnLive: true, row: 'cluster minority' },
  majority: { sizes: (n) => range(majorityOf(n), n - 1), everyNode: false, liveCutAfterOpen: true, drawnLive: true, row: 'cluster majority' },
};

/** The numbers of nodes a cut of `kind` takes in a cluster of `n` (ascending). */
export function kindSizes(kind: CutKind, n: number): number[] {
  return KINDS[kind].sizes(n);
}

/** Whether a cut of `kind` takes every node (CutKindEntry.everyNode). */
export function cutsEveryNode(kind: CutKind): boolean {
  return KINDS[kind].everyNode;
}

/** Whether a live cut of `kind` falls after its cluster opened (CutKindEntry.liveCutAfterOpen). */
export function liveCutAfterOpen(kind: CutKind): boolean {
  return KINDS[kind].liveCutAfterOpen;
}

/** The kinds the gate draws live cuts of, in CUT_KINDS order. */
export const LIVE_CUT_KINDS: readonly CutKind[] = CUT_KINDS.filter((k) => KINDS[k].drawnLive);

/** How each kind is named in the summary's rows. */
export const KIND_ROW: Readonly<Record<CutKind, string>> = Object.fromEntries(CUT_KINDS.map((k) => [k, KINDS[k].row])) as Record<CutKind, string>;

/** What `--nodes-cut` takes. */
export const NODES_CUT_CHOICES = ['coordinated', 'one', 'minority', 'all-kinds'] as const;
export type NodesCutChoice = (typeof NODES_CUT_CHOICES)[number];
export const DEFAULT_NODES_CUT: NodesCutChoice = 'all-kinds';

export function isNodesCutChoice(x: string): x is NodesCutChoice {
  return (NODES_CUT_CHOICES as readonly string[]).includes(x);
}

/** Whether cutting `cut` of `n` nodes (absent: all of them) is a cut of `kind`. */
export function isCutOfKind(kind: CutKind, cut: readonly number[] | undefined, n: number): boolean {
  const k = cut === undefined ? n : cut.length;
  if (k < 1 || k > n) throw new Error(`invariant: a cut of ${k} nodes in a cluster of ${n}`);
  return kindSizes(kind, n).includes(k);
}

const sizes = (n: number) => range(1, n);
const firstNodes = (k: number) => range(0, k - 1);

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

/**
 * The numbers of nodes a cut of `kind` may take so that it is counted under `kind` (of the kinds
 * `asked`): every node (a kind that takes every node), or the sizes short of it whose first fitting
 * kind is `kind`. The live cut's nodes of that size are drawn by drawLiveCase (live-draw.ts).
 */
export function cutSizes(kind: CutKind, asked: readonly CutKind[], n: number): number[] {
  if (cutsEveryNode(kind)) return [n];
  const fitting = sizes(n).filter((k) => k < n && kindOfCut(asked, firstNodes(k), n) === kind);
  if (fitting.length === 0) throw new Error(`invariant: a cluster of ${n} nodes has no cut counted as ${kind} (asked: ${asked.join(', ')})`);
  return fitting;
}
