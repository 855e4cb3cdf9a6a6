// A cluster's cut in the report: whose power went, each node's process lines, and each node's
// requests kept apart. A trace whose entries carry `node` is a cluster's; its paths are drawn and
// modelled per node as /node<k>/... (one name space per disk, as the artifact's images are laid
// out: nodeK/...), so two nodes' files of one name never mix.
import type { CrashStateId } from '../../fusefs/crash-states.js';
import { dataInWords } from '../../fusefs/model/policies/write-back.js';
import type { TraceEntry } from '../../fusefs/protocol.js';
import type { CrashCase, CutRecord } from '../harness/crash-case.js';
import type { RunRecord } from '../harness/oracle.js';
import type { CutView, PendingChange } from './trace-model.js';

/** A node line of the run ({"t":"node",...}): the node's process group started, or restarted on its crashed disk. */
export interface NodeEvent {
  node: number;
  /** The line's number in the run's output (1-based). */
  line: number;
  /** Where its mark placed it: after this request (undefined: no mark). */
  afterOp: number | undefined;
  pgid: number;
  restarted: boolean;
}

export interface ClusterCut {
  /** How many nodes the cluster has. */
  nodes: number;
  /** The nodes whose power went, sorted. */
  cut: number[];
  /** A live cut of some nodes: the others ran on and the run went on past the cut (the cut nodes restarted). */
  live: boolean;
  /** Each request's node. */
  nodeOf: Map<number, number>;
  events: NodeEvent[];
}

/** A node's path in the report's one name space: /node<k>/..., as the artifact's images are laid out. */
export function nodePath(node: number, p: string): string {
  return `/node${node}${p === '/' ? '' : p}`;
}

/** The node and the node's own path of a name space path (undefined: not a node's path). */
export function splitNodePath(p: string): { node: number; path: string } | undefined {
  const m = /^\/node(\d+)(\/.*)?$/.exec(p);
  return m ? { node: Number(m[1]), path: m[2] ?? '/' } : undefined;
}

export function isClusterTrace(trace: readonly TraceEntry[]): boolean {
  return trace.some((e) => e.node !== undefined);
}

/** The cluster fields a cluster's case.json adds (src/harness/artifacts.ts, ClusterArtifactCase). */
type ClusterCaseFields = { nodes?: number; nodesCut?: 'all' | number[] };

/** Cut `k` of a cluster's artifact, or undefined when its trace is one disk's. */
export function clusterCut(c: CrashCase, cut: CutRecord, run: RunRecord | undefined, k: number): ClusterCut | undefined {
  if (!isClusterTrace(cut.trace)) return undefined;
  for (const e of cut.trace) if (e.node === undefined) throw new Error(`invariant: request ${e.op} of a cluster's cut ${k + 1} names no node`);
  const fields = c as CrashCase & ClusterCaseFields;
  const marks = new Map((cut.marks ?? []).map((m) => [m.n, m.afterOp]));
  const events: NodeEvent[] = (run?.outcomes ?? []).flatMap((o, i) => (o.t === 'node' ? [{ node: o.node, line: i + 1, afterOp: marks.get(i + 1), pgid: o.pgid, restarted: o.restarted === true }] : []));
  const seen = [...cut.trace.map((e) => e.node!), ...events.map((e) => e.node)];
  const nodes = fields.nodes ?? Math.max(...seen) + 1;
  const all = [...Array(nodes).keys()];
  const state = k === 0 ? c.state : undefined;
  const named = state ? state.nodes : fields.nodesCut === 'all' ? undefined : fields.nodesCut;
  const cutNodes = [...(named ?? all)].sort((a, b) => a - b);
  return {
    nodes,
    cut: cutNodes,
    live: !state && cutNodes.length < nodes,
    nodeOf: new Map(cut.trace.map((e) => [e.op, e.node!])),
    events,
  };
}

/** The cut with each request's paths in its node's name space. */
export function namespacedCut(cut: CutRecord): CutRecord {
  return {
    ...cut,
    trace: cut.trace.map((e) => ({ ...e, path: nodePath(e.node!, e.path), ...(e.path2 !== undefined ? { path2: nodePath(e.node!, e.path2) } : {}) })),
  };
}

/** "node 1", "nodes 0, 2" */
export function nodesInWords(nodes: readonly number[]): string {
  return `node${nodes.length > 1 ? 's' : ''} ${nodes.join(', ')}`;
}

/**
 * A cluster's view of a cut (the view of its namespaced trace): the label says whose power went;
 * a node that kept its power keeps what it had not synced (it ran on, or lost only its process);
 * after a live cut of some nodes, the requests after the cut were applied (the run went on), all
 * but the cut nodes' request frozen at the cut.
 */
export function clusterCutView(view: CutView, info: ClusterCut, state?: CrashStateId): CutView {
  const coordinated = info.cut.length === info.nodes;
  // A torn (journaled) state: each cut node's own outcome, named per node (what it kept of each change is the node's own).
  const own = new Map((state?.outcomes ?? []).map((o) => [o.node, o]));
  const ownWords = (node: number) => {
    const o = own.get(node)!;
    return `${state!.policy}, node ${node}: the first ${o.dirPrefix} unsynced directory operations kept; ${dataInWords(o.data)}`;
  };
  const whose = coordinated ? `every node (${info.nodes})` : `${nodesInWords(info.cut)} of ${info.nodes}${info.live ? ', the others running on' : ', the others losing only their processes'}`;
  const atCut = new Map<number, PendingChange>();
  for (const [op, p] of view.atCut) {
    const node = info.nodeOf.get(op)!;
    if (info.cut.includes(node) && own.has(node)) {
      atCut.set(op, { ...p, fate: 'maybe', because: ownWords(node) });
      continue;
    }
    atCut.set(op, info.cut.includes(node) ? p : {
      ...p, fate: 'kept', because: info.live ? `node ${node} kept its power and ran on` : `node ${node} lost only its process: its page cache kept it`,
    });
  }
  const applied = info.live
    ? (op: number) => (op > view.boundary ? view.byOp.has(op) && !(op === view.frozenAt && info.cut.includes(info.nodeOf.get(op)!)) : view.applied(op))
    : view.applied;
  const policyLabel = own.size > 0 ? [...own.keys()].map(ownWords).join('; ') : view.policyLabel;
  return { ...view, cutLabel: `${view.cutLabel}, on ${whose}`, policyLabel, atCut, applied };
}
