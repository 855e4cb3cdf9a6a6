// The seeded draw of one live cluster case (pure): which nodes lose power while the others run on,
// at which request of the merged order, and whether a node is paused (SIGSTOP, then SIGCONT) for a
// while before that. The same seed, request count and node count always give the same case.
import { Prng } from '../../fusefs/model/prng.js';
import type { CrashPoint } from '../../fusefs/protocol.js';
import { cutsEveryNode, kindSizes, type CutKind } from './cut-kinds.js';

/** A node's process group stopped at a request of the merged order and resumed `durationMs` later (the randomised testers' "pause"). */
export interface NodePause {
  node: number;
  /** The request (1-based, every node's in one order) at which the node is stopped. */
  atOp: number;
  durationMs: number;
}

export interface LiveDrawOptions {
  /** Which kinds to draw from (default one and minority); with three nodes a minority is one node. */
  kinds?: readonly CutKind[];
  /** Only cuts of these numbers of nodes (a gate counts a cut under the first kind asked it fits: a minority of five, one node asked too, is two nodes). */
  sizes?: readonly number[];
  /** The cut point is uniform over firstOp..lastOp (defaults 1 and requests). */
  firstOp?: number;
  lastOp?: number;
  /** The chance of a pause before the cut (default 0.5). */
  pauseChance?: number;
  /** A pause lasts from minPauseMs to maxPauseMs (defaults 100 and 1000). */
  minPauseMs?: number;
  maxPauseMs?: number;
}

export interface LiveDraw {
  kind: CutKind;
  /** The nodes cut, sorted; the others run on and the cut ones are restarted on their crashed disks. */
  nodesCut: number[];
  /** Just before the request `atOp` of the merged order (any node's). */
  cut: CrashPoint;
  /** Before the cut (its atOp is earlier), on any node: a cut node too (a paused node then losing power). */
  pause?: NodePause;
}

/**
 * One live case of a cluster of `nodeCount` nodes whose workload makes about `requests` requests
 * (a recorded run's count, or an estimate): the cut nodes (of a kind drawn from `kinds`: one node,
 * a minority of 1 to majority-1 nodes, a majority short of all, or all), the cut point uniform over
 * firstOp..lastOp, and, with `pauseChance`, a pause of a node at a uniform earlier request (never
 * before a coordinated cut). The gate draws its live cuts with it.
 */
export function drawLiveCase(seed: number, requests: number, nodeCount: number, options: LiveDrawOptions = {}): LiveDraw {
  if (!Number.isInteger(nodeCount) || nodeCount < 2) throw new Error(`drawLiveCase: a live cut of some nodes needs a cluster of 2 nodes or more, got ${nodeCount}`);
  if (!Number.isInteger(requests) || requests < 1) throw new Error(`drawLiveCase: requests must be a positive integer (the run's request count), got ${requests}`);
  const kinds = options.kinds ?? ['one', 'minority'];
  if (kinds.length === 0) throw new Error('drawLiveCase: kinds must name one kind or more (one, minority)');
  const minPauseMs = options.minPauseMs ?? 100;
  const maxPauseMs = options.maxPauseMs ?? 1_000;
  if (!(minPauseMs >= 0 && maxPauseMs >= minPauseMs)) throw new Error(`drawLiveCase: pauses must last from minPauseMs to maxPauseMs, got ${minPauseMs}..${maxPauseMs}`);
  const firstOp = options.firstOp ?? 1;
  const lastOp = options.lastOp ?? requests;
  if (!(Number.isInteger(firstOp) && Number.isInteger(lastOp) && firstOp >= 1 && firstOp <= lastOp)) throw new Error(`drawLiveCase: the cut point is drawn from firstOp..lastOp, got ${firstOp}..${lastOp}`);
  const rng = new Prng(seed);
  const kind = kinds[rng.int(kinds.length)];
  const fits = kindSizes(kind, nodeCount).filter((k) => options.sizes === undefined || options.sizes.includes(k));
  if (fits.length === 0) throw new Error(`drawLiveCase: a cluster of ${nodeCount} nodes has no ${kind} cut of ${options.sizes?.join(' or ')} nodes`);
  const size = fits.length === 1 ? fits[0] : fits[rng.int(fits.length)];
  const pool = Array.from({ length: nodeCount }, (_, k) => k);
  const nodesCut: number[] = [];
  while (nodesCut.length < size) nodesCut.push(pool.splice(rng.int(pool.length), 1)[0]);
  nodesCut.sort((a, b) => a - b);
  const cutAt = firstOp + rng.int(lastOp - firstOp + 1);
  const draw: LiveDraw = { kind, nodesCut, cut: { atOp: cutAt, timing: 'before' } };
  // A pause needs a request before the cut's; drawn last, so the cut does not depend on the chance of one.
  if (!cutsEveryNode(kind) && cutAt > 1 && rng.next() < (options.pauseChance ?? 0.5)) {
    draw.pause = { node: rng.int(nodeCount), atOp: 1 + rng.int(cutAt - 1), durationMs: minPauseMs + rng.int(maxPauseMs - minPauseMs + 1) };
  }
  return draw;
}
