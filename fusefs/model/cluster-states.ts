// The crash states of a cluster's recorded run, pure: one recording per node, its requests numbered
// in the one order of every node. A state is "after request i, the power went on the nodes of S";
// the other nodes lost only their processes, so they keep their live image (a process crash keeps
// the page cache). S = every node is a coordinated cut (a rack's power); a smaller S at the same
// moment as a restart of the rest is when a node that forgot its vote or log tail meets peers that
// remember. Under lose-unsynced a node's durable image changes only at its own persistence points,
// so one cut before each persistence point of the merged order, and one at the end, covers every
// coordinated state: linear in the fsyncs of all nodes together.
import { createHash } from 'node:crypto';
import type { CrashStateId, LostUnit, ProbeUnit, StatePolicy, StateCaps, StatesAnswer, CrashStateInfo } from '../crash-states.js';
import { FsModel } from './fs-model.js';
import { hashTree, type StateSpace } from './state-space.js';

/** What the daemon asks of a recorded run's states, for one node or a cluster: each build is one model per node. */
export interface RunStates {
  enumerate(policies: readonly StatePolicy[], caps: StateCaps): StatesAnswer;
  build(id: CrashStateId, probe?: readonly ProbeUnit[]): FsModel[];
  lostUnits(id: CrashStateId): LostUnit[];
}

/** One node's run: its StateSpace as it always was. */
export class SingleNodeStates implements RunStates {
  constructor(readonly space: StateSpace) {}

  enumerate(policies: readonly StatePolicy[], caps: StateCaps): StatesAnswer {
    return this.space.enumerate(policies, caps);
  }

  build(id: CrashStateId, probe?: readonly ProbeUnit[]): FsModel[] {
    if (id.nodes !== undefined) throw new Error(`state names nodes ${id.nodes.join(', ')}, but the daemon serves one node`);
    return [probe ? this.space.buildProbe(id, probe) : this.space.build(id)];
  }

  lostUnits(id: CrashStateId): LostUnit[] {
    return this.space.lostUnits(id);
  }
}

/** The nonempty subsets of nodes 0..n-1: every node first (a coordinated cut), then by size, smallest first. */
export function cutSubsets(n: number): number[][] {
  const subsets: number[][] = [];
  for (let mask = 1; mask < 1 << n; mask++) subsets.push([...Array(n).keys()].filter((k) => mask & (1 << k)));
  return subsets.sort((a, b) => (a.length === n ? -1 : b.length === n ? 1 : a.length - b.length || a.join().localeCompare(b.join())));
}

export class ClusterStateSpace implements RunStates {
  constructor(private readonly spaces: readonly StateSpace[]) {
    if (spaces.length < 2) throw new Error('invariant: a cluster state space needs two nodes or more');
    if (new Set(spaces.map((s) => s.opCount)).size !== 1) throw new Error('invariant: the nodes of a cluster run must share one request numbering');
  }

  private get opCount(): number {
    return this.spaces[0].opCount;
  }

  /** The last request before each persistence point of any node, then the run's end: where each interval's cut goes. */
  intervalEnds(): number[] {
    const ends = new Set<number>(this.spaces.flatMap((s) => s.persistenceOps.map((p) => p - 1)));
    ends.add(this.opCount);
    return [...ends].sort((a, b) => a - b);
  }

  /**
   * The distinct states, breadth first: every interval's coordinated state, then, subset by subset
   * (single nodes first), every interval's mixed state; a tuple of images already listed is not
   * listed again. lose-unsynced only: a node's torn outcomes are not drawn per node yet.
   */
  enumerate(policies: readonly StatePolicy[], caps: StateCaps): StatesAnswer {
    const other = policies.filter((p) => p !== 'lose-unsynced');
    if (other.length > 0) throw new Error(`states: a cluster's recorded run has lose-unsynced states only; ${other.join(' and ')} states are not drawn per node yet (ask for policies ["lose-unsynced"])`);
    const ends = this.intervalEnds();
    const subsets = cutSubsets(this.spaces.length);
    // Each node's durable and live image hash at each interval's end, computed once.
    const hashes = ends.map((afterOp) => this.spaces.map((s) => ({ durable: hashTree(s.treeAt(afterOp, 'durable')), live: hashTree(s.treeAt(afterOp, 'live')) })));
    const seen = new Set<string>();
    const states: CrashStateInfo[] = [];
    let capped = 0;
    const incomplete = new Set<number>();
    for (const subset of subsets) {
      ends.forEach((afterOp, interval) => {
        const tuple = hashes[interval].map((h, k) => (subset.includes(k) ? h.durable : h.live));
        const hash = createHash('sha1').update(tuple.join(' ')).digest('hex');
        if (seen.has(hash)) return;
        seen.add(hash);
        if (states.length >= caps.maxStates) {
          capped++;
          incomplete.add(interval);
          return;
        }
        const id: CrashStateId = { afterOp, policy: 'lose-unsynced', ...(subset.length < this.spaces.length ? { nodes: subset } : {}) };
        states.push({ id, interval, hash });
      });
    }
    return {
      intervals: ends.length,
      intervalsComplete: ends.length - incomplete.size,
      states,
      capped: { states: capped, caps: capped > 0 ? [`maxStates ${caps.maxStates}`] : [] },
      incomplete: { 'lose-unsynced': [...incomplete].sort((a, b) => a - b) },
    };
  }

  /** Each node's model at state `id`: the cut nodes' durable image, the others' live image, all ready to mount for recovery. */
  build(id: CrashStateId, probe?: readonly ProbeUnit[]): FsModel[] {
    if (probe) throw new Error('probe units (the cause search) are not supported for a cluster\'s recorded run yet');
    if (id.policy !== 'lose-unsynced') throw new Error(`state: a cluster's states are lose-unsynced only, got ${id.policy}`);
    const cut = id.nodes ?? this.spaces.map((_, k) => k);
    for (const k of cut) if (k >= this.spaces.length) throw new Error(`state: node ${k} does not exist; the cluster has nodes 0..${this.spaces.length - 1}`);
    return this.spaces.map((s, k) => (cut.includes(k) ? s.build({ afterOp: id.afterOp, policy: id.policy }) : FsModel.fromTree(s.treeAt(id.afterOp, 'live'))));
  }

  lostUnits(): LostUnit[] {
    throw new Error('units (the cause search) are not supported for a cluster\'s recorded run yet');
  }
}
