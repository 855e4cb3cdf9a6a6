// The seeded draw of one live cluster case (pure): which nodes lose power while the others run on,
// at which request of the merged order, and whether a node is paused (SIGSTOP, then SIGCONT) for a
// while before that. The same seed, request count and node count always give the same case.
import { Prng } from '../../../fusefs/model/prng.js';
import type { CrashPoint } from '../../../fusefs/protocol.js';

/** A node's process group stopped at a request of the merged order and resumed `durationMs` later (the randomised testers' "pause"). */
export interface NodePause {
  node: number;
  /** The request (1-based, every node's in one order) at which the node is stopped. */
  atOp: number;
  durationMs: number;
}

/** Whose power a live cut of some nodes takes: a single node, or a minority (fewer than a majority). */
export type LiveCutKind = 'one' | 'minority';

export interface LiveDrawOptions {
  /** Which kinds to draw from (default both); with three nodes a minority is one node. */
  kinds?: readonly LiveCutKind[];
  /** The chance of a pause before the cut (default 0.5). */
  pauseChance?: number;
  /** A pause lasts from minPauseMs to maxPauseMs (defaults 100 and 1000). */
  minPauseMs?: number;
  maxPauseMs?: number;
}

export interface LiveDraw {
  kind: LiveCutKind;
  /** The nodes cut, sorted; the others run on and the cut ones are restarted on their crashed disks. */
  nodesCut: number[];
  /** Just before the request `atOp` of the merged order (any node's). */
  cut: CrashPoint;
  /** Before the cut (its atOp is earlier), on any node: a cut node too (a paused node then losing power). */
  pause?: NodePause;
}

/** The least number of nodes that is a majority of `n`. */
function majorityOf(n: number): number {
  return Math.floor(n / 2) + 1;
}

/**
 * One live case of a cluster of `nodeCount` nodes whose workload makes about `requests` requests
 * (a recorded run's count, or an estimate): the cut nodes (one node, or a minority of 1 to
 * majority-1 nodes), the cut point uniform over the run's requests, and, with `pauseChance`, a
 * pause of a node at a uniform earlier request.
 */
export function drawLiveCase(seed: number, requests: number, nodeCount: number, options: LiveDrawOptions = {}): LiveDraw {
  if (!Number.isInteger(nodeCount) || nodeCount < 2) throw new Error(`drawLiveCase: a live cut of some nodes needs a cluster of 2 nodes or more, got ${nodeCount}`);
  if (!Number.isInteger(requests) || requests < 1) throw new Error(`drawLiveCase: requests must be a positive integer (the run's request count), got ${requests}`);
  const kinds = options.kinds ?? ['one', 'minority'];
  if (kinds.length === 0) throw new Error('drawLiveCase: kinds must name one kind or more (one, minority)');
  const minPauseMs = options.minPauseMs ?? 100;
  const maxPauseMs = options.maxPauseMs ?? 1_000;
  if (!(minPauseMs >= 0 && maxPauseMs >= minPauseMs)) throw new Error(`drawLiveCase: pauses must last from minPauseMs to maxPauseMs, got ${minPauseMs}..${maxPauseMs}`);
  const rng = new Prng(seed);
  const kind = kinds[rng.int(kinds.length)];
  const size = kind === 'one' ? 1 : 1 + rng.int(Math.max(1, majorityOf(nodeCount) - 1));
  const pool = Array.from({ length: nodeCount }, (_, k) => k);
  const nodesCut: number[] = [];
  while (nodesCut.length < size) nodesCut.push(pool.splice(rng.int(pool.length), 1)[0]);
  nodesCut.sort((a, b) => a - b);
  const cutAt = 1 + rng.int(requests);
  const draw: LiveDraw = { kind, nodesCut, cut: { atOp: cutAt, timing: 'before' } };
  // A pause needs a request before the cut's; drawn last, so the cut does not depend on the chance of one.
  if (cutAt > 1 && rng.next() < (options.pauseChance ?? 0.5)) {
    draw.pause = { node: rng.int(nodeCount), atOp: 1 + rng.int(cutAt - 1), durationMs: minPauseMs + rng.int(maxPauseMs - minPauseMs + 1) };
  }
  return draw;
}
