// The crash states of a cluster's recorded run, pure: one recording per node, its requests numbered
// in the one order of every node. A state is "after request i, the power went on the nodes of S";
// the other nodes lost only their processes, so they keep their live image (a process crash keeps
// the page cache). S = every node is a coordinated cut (a rack's power); a smaller S at the same
// moment as a restart of the rest is when a node that forgot its vote or log tail meets peers that
// remember. Under lose-unsynced a node's durable image changes only at its own persistence points,
// so one cut before each persistence point of the merged order, and one at the end, covers every
// coordinated state: linear in the fsyncs of all nodes together.
import { createHash } from 'node:crypto';
import { STATE_POLICIES, type CrashStateId, type DataOutcome, type Hypothesis, type LostUnit, type ProbeUnit, type StatePolicy, type StateCaps, type StatesAnswer, type CrashStateInfo } from '../crash-states.js';
import { FsModel } from './fs-model.js';
import { keepsNoUnsynced, stateEnumerator } from './policies/index.js';
import { Prng } from './prng.js';
import { fairShares, spreadEvenly } from './spread.js';
import type { StateSpace } from './state-space.js';

/** What the daemon asks of a recorded run's states, for one node or a cluster: each build is one model per node. */
export interface RunStates {
  /** onlyIntervals: the states of these intervals only (one disk; a cluster lists all). */
  enumerate(policies: readonly StatePolicy[], caps: StateCaps, onlyIntervals?: readonly number[]): StatesAnswer;
  build(id: CrashStateId, probe?: readonly ProbeUnit[]): FsModel[];
  lostUnits(id: CrashStateId): LostUnit[];
}

/** One node's run: its StateSpace as it always was. */
export class SingleNodeStates implements RunStates {
  constructor(readonly space: StateSpace) {}

  enumerate(policies: readonly StatePolicy[], caps: StateCaps, onlyIntervals?: readonly number[]): StatesAnswer {
    return this.space.enumerate(policies, caps, onlyIntervals);
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

/** One node's distinct outcome of a torn or journaled cut at one interval's end: its choices and its image's hash. */
interface Outcome {
  dirPrefix: number;
  data: DataOutcome;
  hash: string;
  partialWrites: number;
}

/** A node's distinct outcomes at one interval's end, and how many candidates the per-interval cap left out. */
interface NodeOutcomes {
  outcomes: Outcome[];
  cappedCandidates: number;
}

/** A node's own sector-pattern seed: two nodes with the same unsynced writes tear differently. */
export function nodeSectorSeed(seed: number, node: number): number {
  if (!(Number.isInteger(node) && node >= 0 && node < 1024)) throw new Error(`invariant: node ${node} is not in 0..1023 (a node's seed stream)`);
  return seed * 1024 + node;
}

/**
 * Which outcome each cut node takes, one index per cut node for each state of one interval and
 * subset, at most `cap` of them. When every combination fits the cap, all of them, fewest later
 * outcomes first. Otherwise the first takes each node's first outcome (every write kept, longest
 * prefix); then each node draws from its own seeded stream: its other outcomes once each in a
 * shuffled order, then at random. So within the first max(outcomes) states every outcome of every
 * node appears, combined with the others' at random; a combination is never listed twice.
 */
export function outcomeTuples(counts: readonly number[], cap: number, seedOf: (position: number) => number): number[][] {
  for (const c of counts) if (!(Number.isInteger(c) && c >= 1)) throw new Error(`invariant: a cut node has at least one outcome, got ${c}`);
  const total = counts.reduce((a, c) => a * c, 1);
  if (total <= cap) {
    const all: number[][] = [[]];
    for (const c of counts) all.splice(0, all.length, ...all.flatMap((t) => Array.from({ length: c }, (_, i) => [...t, i])));
    const sum = (t: number[]) => t.reduce((a, x) => a + x, 0);
    return all.sort((a, b) => sum(a) - sum(b));
  }
  const streams = counts.map((c, position) => {
    const prng = new Prng(seedOf(position));
    const order = Array.from({ length: c - 1 }, (_, i) => i + 1);
    for (let i = order.length - 1; i > 0; i--) {
      const j = prng.int(i + 1);
      [order[i], order[j]] = [order[j], order[i]];
    }
    return { prng, order, c };
  });
  const tuples = [counts.map(() => 0)];
  const seen = new Set([tuples[0].join()]);
  // Bounded: past the shuffled orders, a draw repeats a listed combination with probability < cap / total < 1.
  for (let draw = 0; tuples.length < cap && draw < 16 * cap; draw++) {
    const t = streams.map((s) => (draw < s.order.length ? s.order[draw] : s.prng.int(s.c)));
    const key = t.join();
    if (seen.has(key)) continue;
    seen.add(key);
    tuples.push(t);
  }
  return tuples;
}

export class ClusterStateSpace implements RunStates {
  constructor(private readonly spaces: readonly StateSpace[]) {
    if (spaces.length < 2) throw new Error('invariant: a cluster state space needs two nodes or more');
    if (new Set(spaces.map((s) => s.opCount)).size !== 1) throw new Error('invariant: the nodes of a cluster run must share one request numbering');
  }

  private get opCount(): number {
    return this.spaces[0].opCount;
  }

  /**
   * The same run under a hypothesis: each fsyncAfter entry is node k's request right after request
   * afterOp, in the one numbering of every node, so every node's later requests move up by one while
   * only node k's recording gets the call (two entries after one request: by node, then as given).
   * fsyncSkip names requests of the one numbering: each is one node's, so only its fsync is left out.
   */
  withHypothesis(h: Hypothesis): ClusterStateSpace {
    const n = this.spaces.length;
    h.fsyncAfter.forEach((x, i) => {
      if (x.node === undefined) throw new Error(`hypothesis.fsyncAfter[${i}].node is missing: on a cluster each inserted fsync names the node (0..${n - 1}) whose program makes it`);
      if (!(Number.isInteger(x.node) && x.node >= 0 && x.node < n)) throw new Error(`hypothesis.fsyncAfter[${i}].node is ${x.node}, but the cluster has nodes 0..${n - 1}`);
    });
    const sorted = [...h.fsyncAfter].sort((a, b) => a.afterOp - b.afterOp || a.node! - b.node!);
    // A path names the inode it has on its own node right after its request, in this run.
    const resolved = sorted.map((x) => ({ afterOp: x.afterOp, node: x.node!, ino: 'ino' in x ? x.ino : this.spaces[x.node!].inoAt(x.afterOp, x.path) }));
    return new ClusterStateSpace(this.spaces.map((space, k) => space.withInserted(resolved.map((x) => ({ afterOp: x.afterOp, ino: x.node === k ? x.ino : null })), h.fsyncSkip ?? [])));
  }

  /** The last request before each persistence point of any node, then the run's end: where each interval's cut goes. */
  intervalEnds(): number[] {
    const ends = new Set<number>(this.spaces.flatMap((s) => s.persistenceOps.map((p) => p - 1)));
    ends.add(this.opCount);
    return [...ends].sort((a, b) => a - b);
  }

  /**
   * The distinct states, breadth first: every interval's lose-unsynced state subset by subset
   * (every node first, then single nodes, then larger subsets), then the torn (journaled) states in
   * rounds, each round every subset's every interval, as for one disk. Under torn each cut node's
   * outcome is its own: the node's candidates as one disk's (capped at maxStatesPerInterval, its
   * sector patterns from its own seed), of which the combinations of the cut nodes' distinct images
   * are taken by outcomeTuples, at most maxStatesPerInterval per interval and subset. A tuple of
   * images already listed at the same interval (under any policy) is not listed again; at another
   * interval it is (same hash: one recovery, judged against each cut's confirmations).
   */
  enumerate(policies: readonly StatePolicy[], caps: StateCaps): StatesAnswer {
    const ends = this.intervalEnds();
    const subsets = cutSubsets(this.spaces.length);
    const all = this.spaces.length;
    // The policy whose state is the durable image alone (lose-unsynced) is listed from the images' hashes;
    // the others (write-back) from each cut node's outcomes.
    const durableOnly = STATE_POLICIES.find((p) => keepsNoUnsynced(p) && policies.includes(p));
    const writeBack = STATE_POLICIES.filter((p) => !keepsNoUnsynced(p) && policies.includes(p));
    // Each node's durable and live image hash at each interval's end, computed once.
    const hashes = ends.map((afterOp) => this.spaces.map((s) => ({ durable: s.hashAt(afterOp, 'durable'), live: s.hashAt(afterOp, 'live') })));
    const outcomes = writeBack.map((policy) => this.nodeOutcomes(policy, ends, caps));
    const seen = new Set<string>();
    const states: CrashStateInfo[] = [];
    const capsHit = new Set<string>();
    const incomplete = new Map<StatePolicy, Set<number>>(STATE_POLICIES.filter((p) => policies.includes(p)).map((p) => [p, new Set<number>()]));
    let capped = 0;
    const leaveOut = (policy: StatePolicy, interval: number, n: number, cap: string) => {
      capped += n;
      capsHit.add(cap);
      incomplete.get(policy)!.add(interval);
    };
    const hashOf = (tuple: readonly string[]) => createHash('sha1').update(tuple.join(' ')).digest('hex');
    const list = (info: CrashStateInfo, hash: string) => {
      // One state per tuple of images within an interval (a smaller cut that left the same images
      // is the same state); the same tuple after a later request is a state of its own, judged
      // against that request's confirmations, and shares the first one's recovery (same hash), as
      // one disk's states do.
      const key = `${info.interval} ${hash}`;
      if (seen.has(key)) return;
      seen.add(key);
      if (states.length >= caps.maxStates) leaveOut(info.id.policy, info.interval, 1, `maxStates ${caps.maxStates}`);
      else states.push({ ...info, hash });
    };
    const nodesOf = (subset: number[]) => (subset.length < all ? { nodes: subset } : {});
    if (durableOnly !== undefined) {
      // Each subset's distinct states; when they do not all fit under maxStates, each subset gets a
      // fair share of it, spread over the run (a long run's coordinated states alone would otherwise
      // fill the cap, and no cut of fewer nodes would be listed at all).
      const gathered = new Set<string>();
      const bySubset = subsets.map((subset) => {
        const distinct: { info: CrashStateInfo; hash: string }[] = [];
        ends.forEach((afterOp, interval) => {
          const hash = hashOf(hashes[interval].map((h, k) => (subset.includes(k) ? h.durable : h.live)));
          // A smaller cut that left the images a larger one did at this interval is that state.
          const key = `${interval} ${hash}`;
          if (gathered.has(key)) return;
          gathered.add(key);
          distinct.push({ info: { id: { afterOp, policy: durableOnly, ...nodesOf(subset) }, interval, hash: '' }, hash });
        });
        return distinct;
      });
      const shares = fairShares(bySubset.map((l) => l.length), caps.maxStates);
      bySubset.forEach((l, i) => {
        const kept = new Set(spreadEvenly(l, shares[i]));
        for (const x of l) {
          if (kept.has(x)) list(x.info, x.hash);
          else leaveOut(durableOnly, x.info.interval, 1, `maxStates ${caps.maxStates}`);
        }
      });
    }
    // Each subset's and interval's tuples for each policy, then listed round by round over them all.
    const tuples = writeBack.map((policy, p) => subsets.map((subset) => ends.map((_, interval) => {
      const per = subset.map((k) => outcomes[p][interval][k]);
      const chosen = outcomeTuples(per.map((o) => o.outcomes.length), caps.maxStatesPerInterval, (position) => ((interval * 1024 + subset[position]) * 4 + p));
      // Candidates a node's own cap left out count as if each made distinct images.
      const offered = per.reduce((a, o) => a * (o.outcomes.length + o.cappedCandidates), 1);
      if (offered > chosen.length) leaveOut(policy, interval, offered - chosen.length, `maxStatesPerInterval ${caps.maxStatesPerInterval}`);
      return chosen;
    })));
    const rounds = Math.max(0, ...tuples.flat(2).map((t) => t.length));
    for (let round = 0; round < rounds; round++) {
      writeBack.forEach((policy, p) => subsets.forEach((subset, si) => ends.forEach((afterOp, interval) => {
        const t = tuples[p][si][interval][round];
        if (!t) return;
        const chosen = subset.map((k, position) => ({ node: k, ...outcomes[p][interval][k].outcomes[t[position]] }));
        const partialWrites = chosen.reduce((a, o) => a + o.partialWrites, 0);
        const id: CrashStateId = { afterOp, policy, ...nodesOf(subset), outcomes: chosen.map(({ node, dirPrefix, data }) => ({ node, dirPrefix, data })) };
        list({ id, interval, hash: '', ...(partialWrites > 0 ? { partialWrites } : {}) }, hashOf(hashes[interval].map((h, k) => {
          const position = subset.indexOf(k);
          return position < 0 ? h.live : chosen[position].hash;
        })));
      })));
    }
    const intervalsComplete = ends.filter((_, i) => [...incomplete.values()].every((set) => !set.has(i))).length;
    return {
      intervals: ends.length,
      intervalsComplete,
      states,
      capped: { states: capped, caps: [...capsHit] },
      incomplete: Object.fromEntries([...incomplete].map(([p, set]) => [p, [...set].sort((a, b) => a - b)])),
    };
  }

  /** Every node's distinct outcomes under `policy` at each interval's end: [interval][node], built in request order (one replay per node). */
  private nodeOutcomes(policy: StatePolicy, ends: readonly number[], caps: StateCaps): NodeOutcomes[][] {
    const e = stateEnumerator(policy);
    const byNode = this.spaces.map((space, k) => ends.map((afterOp, interval): NodeOutcomes => {
      const u = space.unsyncedAt(afterOp);
      const offered = e.count(u, caps);
      const take = Math.min(offered, caps.maxStatesPerInterval);
      const seen = new Set<string>();
      const outcomes: Outcome[] = [];
      for (const id of e.candidates(u, afterOp, interval, caps, take)) {
        const data: DataOutcome = id.data?.kind === 'sectors' ? { kind: 'sectors', seed: nodeSectorSeed(id.data.seed, k) } : (id.data ?? { kind: 'none' });
        const dirPrefix = id.dirPrefix ?? 0;
        const image = space.build({ afterOp, policy, dirPrefix, data });
        const hash = image.imageHash('durable');
        if (seen.has(hash)) continue;
        seen.add(hash);
        const partialWrites = space.lastBuildStats.partialWrites;
        outcomes.push({ dirPrefix, data, hash, partialWrites });
      }
      if (outcomes.length === 0) throw new Error(`invariant: node ${k} offers no ${policy} outcome after request ${afterOp}`);
      return { outcomes, cappedCandidates: offered - take };
    }));
    return ends.map((_, interval) => byNode.map((perNode) => perNode[interval]));
  }

  /**
   * Each node's model at state `id`: the cut nodes' durable image (their own outcome under torn),
   * the others' live image, all ready to mount for recovery. With a probe, each cut node's units
   * (those naming it) are made durable too: "would the cluster recover had node k persisted this?"
   */
  build(id: CrashStateId, probe?: readonly ProbeUnit[]): FsModel[] {
    const own = this.ownStates(id);
    const unitsOf = (k: number) => (probe ?? []).filter((u) => u.node === k);
    for (const u of probe ?? []) {
      if (u.node === undefined || !own.has(u.node)) throw new Error(`probe: a unit of a cluster's state names a node the state cut (${[...own.keys()].join(', ')}); got ${JSON.stringify(u)}`);
    }
    return this.spaces.map((s, k) => {
      const mine = own.get(k);
      if (!mine) return FsModel.fromTree(s.treeAt(id.afterOp, 'live'));
      const units = unitsOf(k);
      return units.length > 0 ? s.buildProbe(mine, units.map(({ node: _node, ...u }) => u)) : s.build(mine);
    });
  }

  /** What state `id` lost, unit by unit, on each cut node (the others kept their live image), each naming its node. */
  lostUnits(id: CrashStateId): LostUnit[] {
    return [...this.ownStates(id)].flatMap(([k, mine]) => this.spaces[k].lostUnits(mine).map((u) => ({ ...u, node: k })));
  }

  /** Each cut node's own state (one disk's id: its policy, and under torn or journaled its outcome), by node. */
  private ownStates(id: CrashStateId): Map<number, CrashStateId> {
    const n = this.spaces.length;
    const cut = id.nodes ?? this.spaces.map((_, k) => k);
    for (const k of cut) if (!(Number.isInteger(k) && k >= 0 && k < n)) throw new Error(`state: node ${k} does not exist; the cluster has nodes 0..${n - 1}`);
    if (id.dirPrefix !== undefined || id.data !== undefined) throw new Error(`state: a cluster's ${id.policy} state gives each cut node's dirPrefix and data in 'outcomes', not at its top`);
    const own = new Map<number, CrashStateId>();
    if (keepsNoUnsynced(id.policy)) {
      if (id.outcomes !== undefined) throw new Error('state: outcomes belong to a cluster\'s torn and journaled states only');
      for (const k of cut) own.set(k, { afterOp: id.afterOp, policy: id.policy });
      return own;
    }
    const named = (id.outcomes ?? []).map((o) => o.node);
    if (named.length !== cut.length || named.some((k, i) => k !== cut[i])) {
      throw new Error(`state: a cluster's ${id.policy} state needs one outcome per cut node (${cut.join(', ')}), in node order; got outcomes for ${named.length ? named.join(', ') : 'none'}`);
    }
    for (const o of id.outcomes!) own.set(o.node, { afterOp: id.afterOp, policy: id.policy, dirPrefix: o.dirPrefix, data: o.data });
    return own;
  }
}
