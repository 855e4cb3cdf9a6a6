// A cause's fix applied to a cluster's recorded run (pure): the one-disk fixes of fixed-run.ts, each
// inserted fsync made by one node's program. The nodes run the same program, so a missing fsync is
// missing wherever the state lost the same kind of change: the fix is made on each node whose unit
// of that path pattern the state lost by a request like the one the cause names (every node missed
// the same step; a recovery that trusts a majority needs a majority of them to keep it), and on
// each of those nodes after every request like it. Request numbers stay one sequence for all nodes:
// an fsync inserted on one node moves every node's later requests (withFsyncsInserted).
import type { LostUnit } from '../../../fusefs/crash-states.js';
import type { TraceEntry } from '../../../fusefs/protocol.js';
import { requestsInWords, type Cause, type FixStep } from '../cause/cause.js';
import { pathAfter, withFsyncsInserted, type FixedRun, type InsertedFsync } from '../exhaustive/fixed-run.js';
import type { Recorded } from '../exhaustive/judge-states.js';
import { parentOf, pathPattern } from '../path-pattern.js';

/** A cluster's fixed run, and the fix in the program's words with its nodes: "fsync the directory / on nodes 1, 2 after ...". */
export interface ClusterFixedRun extends FixedRun {
  /** The fix as the programmer makes it (imperative), naming the nodes. */
  fixWords: string;
  /** The nodes whose programs get an fsync (or a moved one). */
  nodes: number[];
}

const nodeOf = (e: TraceEntry): number => {
  if (e.node === undefined) throw new Error(`invariant: request ${e.op} of a cluster's trace names no node (every request of a cluster's run is one node's)`);
  return e.node;
};

export const nodesInWords = (nodes: readonly number[]): string => (nodes.length === 1 ? `node ${nodes[0]}` : `nodes ${nodes.join(', ')}`);

/**
 * The fix of `cause` on the cluster's recording, given what its state lost (`lost`, each unit
 * naming its node): made on the nodes that lost a unit of its kind by such a request, or, with
 * `everyNode` (a candidate read off the recording, a cause carried over from another run), on every
 * node that makes such requests. Undefined for a fix that inserts nothing (a withheld confirmation:
 * cluster-cause's proveOnJudged) or that names a request the trace does not hold.
 */
export function clusterFixedRun(recorded: Recorded, cause: Cause, lost: readonly LostUnit[], everyNode = false): ClusterFixedRun | undefined {
  const step = cause.step;
  const at = (op: number) => recorded.trace.find((e) => e.op === op);
  const traceOf = (node: number) => recorded.trace.filter((e) => e.node === node);
  if (step?.kind === 'move') {
    const sync = at(step.op);
    const next = at(step.afterOp);
    if (!sync || !next) return undefined;
    // The moved fsync stays its own node's; it goes right after the next persistence point, whichever node made that.
    const node = nodeOf(sync);
    const path = pathAfter(traceOf(node), sync.path, step.op, step.afterOp);
    const what = (e: TraceEntry) => `the ${e.kind === 'fsyncdir' ? 'directory fsync' : 'fsync'} of ${e.path} on node ${nodeOf(e)}`;
    const words = `${what(sync)} at request ${step.op} moved after ${what(next)} at request ${step.afterOp}`;
    const fix = withFsyncsInserted(recorded, [{ after: step.afterOp, path, dir: sync.kind === 'fsyncdir', node }], [step.op], words);
    return { ...fix, fixWords: `make ${what(sync)} (request ${step.op}) only after ${what(next)} (request ${step.afterOp})`, nodes: [node] };
  }
  if (step?.kind !== 'fsync-after') return undefined;
  const steps = [step, ...(cause.alsoSteps ?? [])].filter((x): x is Extract<FixStep, { kind: 'fsync-after' }> => x.kind === 'fsync-after');
  const inserted: InsertedFsync[] = [];
  const noun: string[] = [];
  const verb: string[] = [];
  const allNodes = new Set<number>();
  // The minimal set may hold the same unit of several nodes (a majority had to keep it): one step, done on each of them.
  const seen = new Set<string>();
  for (const st of steps) {
    const like = at(st.afterOp);
    if (!like) return undefined;
    const kind = `${st.dir} ${pathPattern(st.path)} ${like.kind} ${pathPattern(like.path)} ${pathPattern(like.path2 ?? '')}`;
    if (seen.has(kind)) continue;
    seen.add(kind);
    const same = (e: TraceEntry) => e.result === 0 && e.kind === like.kind && pathPattern(e.path) === pathPattern(like.path) && pathPattern(e.path2 ?? '') === pathPattern(like.path2 ?? '');
    // Every node that lost a unit of this path pattern by such a request missed the same step.
    const missed = lost.filter((u) => u.node !== undefined && u.kind === (st.dir ? 'dir' : 'file') && pathPattern(u.path) === pathPattern(st.path)
      && u.changes.some((c) => { const e = at(c.op); return e !== undefined && same(e) && e.node === u.node; }));
    const making = everyNode ? recorded.trace.filter(same).map(nodeOf) : [];
    const nodes = [...new Set([nodeOf(like), ...missed.map((u) => u.node!), ...making])].sort((a, b) => a - b);
    const toDest = like.path2 !== undefined && parentOf(like.path2) === st.path;
    const perNode: string[] = [];
    for (const node of nodes) {
      allNodes.add(node);
      const own = traceOf(node);
      const after = own.filter(same).map((e) => e.op);
      for (const op of after) {
        const e = at(op)!;
        // The directory holding the changed entry, or the file by the name it has right after the request (a rename on its own node moves it).
        const path = st.dir ? parentOf(toDest && e.path2 !== undefined ? e.path2 : e.path) : pathAfter(own, e.path, op - 1, op);
        if (!inserted.some((x) => x.after === op && x.node === node && x.path === path)) inserted.push({ after: op, path, dir: st.dir, node });
      }
      perNode.push(`on node ${node}: ${requestsInWords(after)}`);
    }
    const of = st.dir ? `the directory ${st.path}` : `the file ${pathPattern(like.path)}`;
    const which = `every ${like.kind} of ${pathPattern(like.path)}${like.path2 !== undefined ? ` to ${pathPattern(like.path2)}` : ''} (${perNode.join('; ')})`;
    noun.push(`an fsync of ${of} on ${nodesInWords(nodes)} after ${which}`);
    verb.push(`fsync ${of} on ${nodesInWords(nodes)} after ${which}`);
  }
  const words = `${noun[0]}${noun.length > 1 ? `, and ${noun.slice(1).join('; ')}` : ''}`;
  const fix = withFsyncsInserted(recorded, inserted, [], words);
  const before = cause.before ? `, before ${cause.before}` : '';
  return { ...fix, fixWords: `${verb[0]}${before}${verb.length > 1 ? `; and ${verb.slice(1).join('; ')}` : ''}`, nodes: [...allNodes].sort((a, b) => a - b) };
}
