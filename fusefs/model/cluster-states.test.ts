// A cluster's crash states, pure: per-node recordings numbered in one order. The coordinated states
// at the merged persistence points cover a coordinated cut at every request, and each state builds
// the images it was hashed from.
import fc from 'fast-check';
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { DEFAULT_STATE_CAPS, type DataOutcome, type ProbeUnit } from '../crash-states.js';
import { ClusterStateSpace, cutSubsets, outcomeTuples } from './cluster-states.js';
import { describeState } from './policies/index.js';
import { Recording, RecordingFsModel } from './recording.js';
import { hashTree, StateSpace } from './state-space.js';

const owner = { uid: 0, gid: 0 };

type Step = { node: number; t: 'write' | 'fsync' | 'fsyncdir'; name: string; fill: number; bytes?: number };
const stepArb = (nodes: number): fc.Arbitrary<Step> => fc.record({
  node: fc.nat(nodes - 1), t: fc.constantFrom('write' as const, 'fsync' as const, 'fsyncdir' as const), name: fc.constantFrom('a', 'b'), fill: fc.integer({ min: 1, max: 255 }),
  bytes: fc.constantFrom(10, 700),
});

/** Runs the steps on one recording model per node, one request number for all, as the cluster daemon does. */
function run(nodes: number, steps: readonly Step[]): StateSpace[] {
  let op = 0;
  const recordings = Array.from({ length: nodes }, () => new Recording(owner, 1 << 24));
  const models = recordings.map((r) => new RecordingFsModel(r, () => op));
  for (const s of steps) {
    op++;
    const m = models[s.node];
    const path = `/${s.name}`;
    let ino: number | undefined;
    try {
      ino = m.resolve(path);
    } catch {
      ino = undefined;
    }
    if (s.t === 'write') {
      ino ??= m.create(path, 0o644, owner);
      m.write(ino, 0, Buffer.alloc(s.bytes ?? 10, s.fill));
    } else if (s.t === 'fsync' && ino !== undefined) m.fsync(ino);
    else if (s.t === 'fsyncdir') m.fsync(1);
  }
  for (const r of recordings) r.close();
  return recordings.map((r) => new StateSpace(r, op));
}

const tupleHash = (hashes: string[]) => createHash('sha1').update(hashes.join(' ')).digest('hex');

describe('a cluster\'s crash states', () => {
  it('lists every node first, then single nodes, then larger subsets', () => {
    expect(cutSubsets(3)).toEqual([[0, 1, 2], [0], [1], [2], [0, 1], [0, 2], [1, 2]]);
  });

  it('covers a coordinated cut at every request with one state per merged persistence interval, and builds what it hashed', () => {
    fc.assert(fc.property(fc.integer({ min: 2, max: 3 }).chain((n) => fc.tuple(fc.constant(n), fc.array(stepArb(n), { maxLength: 25 }))), ([nodes, steps]) => {
      const spaces = run(nodes, steps);
      const cluster = new ClusterStateSpace(spaces);
      const answer = cluster.enumerate(['lose-unsynced'], { ...DEFAULT_STATE_CAPS, maxStates: 100_000 });
      const listed = new Set(answer.states.filter((s) => s.id.nodes === undefined).map((s) => s.hash));
      for (let i = 0; i <= steps.length; i++) {
        expect(listed.has(tupleHash(spaces.map((s) => hashTree(s.treeAt(i, 'durable')))))).toBe(true);
      }
      for (const s of answer.states) {
        expect(s.id.nodes === undefined || s.id.nodes.length < nodes).toBe(true);
        expect(tupleHash(cluster.build(s.id).map((m) => hashTree(m.exportTree('durable'))))).toBe(s.hash);
      }
    }), { numRuns: 60 });
  });

  it('names each lost unit\'s node, and a probe makes that node\'s unit durable on that node alone (the cause search on a cluster)', () => {
    // Node 0 writes /a and fsyncs it; node 1 writes /b and never fsyncs it (nor its directory).
    const steps: Step[] = [
      { node: 0, t: 'write', name: 'a', fill: 1 }, { node: 0, t: 'fsync', name: 'a', fill: 1 }, { node: 0, t: 'fsyncdir', name: 'a', fill: 1 },
      { node: 1, t: 'write', name: 'b', fill: 2 },
    ];
    const cluster = new ClusterStateSpace(run(2, steps));
    const end = { afterOp: steps.length, policy: 'lose-unsynced' as const };
    const lost = cluster.lostUnits(end);
    // Node 1's data, its directory entry, and attributes (the root's times, /b's): every one on node 1.
    expect(lost.map((u) => [u.node, u.kind, u.path])).toEqual([[1, 'file', '/b'], [1, 'dir', '/'], [1, 'meta', '/'], [1, 'meta', '/b']]);
    expect(cluster.lostUnits({ ...end, nodes: [0] })).toEqual([]);
    const [n0, n1] = cluster.build(end, lost.map((u) => ({ kind: u.kind, ino: u.ino, node: u.node }) as ProbeUnit));
    expect(n1.exportTree('durable')).toMatchObject({ type: 'dir' });
    expect(n1.resolve('/b')).toBeGreaterThan(0);
    expect(hashTree(n0.exportTree('durable'))).toBe(hashTree(cluster.build(end)[0].exportTree('durable')));
    // Without the probe node 1 lost /b.
    expect(() => cluster.build(end)[1].resolve('/b')).toThrow();
    // A unit must name a node the state cut.
    expect(() => cluster.build({ ...end, nodes: [0] }, [{ kind: 'file', ino: lost[0].ino, node: 1 }])).toThrow(/names a node the state cut \(0\)/);
    expect(() => cluster.build(end, [{ kind: 'file', ino: lost[0].ino }])).toThrow(/names a node the state cut/);
  });

  it('takes every combination of the cut nodes\' outcomes when they fit the cap, else each node\'s every outcome within the first states, never a combination twice', () => {
    expect(outcomeTuples([2, 3], 6, (p) => p)).toEqual([[0, 0], [0, 1], [1, 0], [0, 2], [1, 1], [1, 2]]);
    fc.assert(fc.property(fc.array(fc.integer({ min: 1, max: 12 }), { minLength: 1, maxLength: 3 }), fc.integer({ min: 1, max: 40 }), fc.integer(), (counts, cap, seed) => {
      const tuples = outcomeTuples(counts, cap, (p) => seed + p);
      const total = counts.reduce((a, c) => a * c, 1);
      expect(tuples.length).toBe(Math.min(total, cap));
      expect(new Set(tuples.map((t) => t.join())).size).toBe(tuples.length);
      expect(tuples[0]).toEqual(counts.map(() => 0));
      for (const t of tuples) t.forEach((x, k) => expect(x >= 0 && x < counts[k]).toBe(true));
      const first = tuples.slice(0, Math.max(...counts));
      if (total > cap && cap >= Math.max(...counts)) counts.forEach((c, k) => expect(new Set(first.map((t) => t[k])).size).toBe(c));
      expect(outcomeTuples(counts, cap, (p) => seed + p)).toEqual(tuples);
    }), { numRuns: 200 });
  });

  it('under torn, with nothing capped, lists every combination of the cut nodes\' torn images beside the others\' live images, each once', () => {
    const caps = { maxStates: 1_000_000, maxStatesPerInterval: 1_000_000, sectorPatterns: 0 };
    fc.assert(fc.property(fc.array(stepArb(2), { maxLength: 10 }), (steps) => {
      const spaces = run(2, steps);
      const cluster = new ClusterStateSpace(spaces);
      const answer = cluster.enumerate(['lose-unsynced', 'torn'], caps);
      expect(answer.capped.states).toBe(0);
      const listed = answer.states.map((s) => s.hash);
      // Never a combination twice within an interval (at another one it is a state of its own).
      expect(new Set(answer.states.map((s) => `${s.interval} ${s.hash}`)).size).toBe(listed.length);
      for (const s of answer.states) expect(tupleHash(cluster.build(s.id).map((m) => hashTree(m.exportTree('durable'))))).toBe(s.hash);
      const all = new Set(listed);
      for (const afterOp of cluster.intervalEnds()) {
        const torn = spaces.map((s) => tornImages(s, afterOp));
        const live = spaces.map((s) => hashTree(s.treeAt(afterOp, 'live')));
        for (const subset of cutSubsets(2)) {
          const choices = spaces.map((_, k) => (subset.includes(k) ? torn[k] : [live[k]]));
          for (const a of choices[0]) for (const b of choices[1]) expect(all.has(tupleHash([a, b]))).toBe(true);
        }
      }
    }), { numRuns: 40 });
  });

  it('under torn with the default caps, at most maxStatesPerInterval states per interval and subset, and every node\'s every torn image among the first of them', () => {
    const caps = { ...DEFAULT_STATE_CAPS, maxStates: 1_000_000, sectorPatterns: 0 };
    fc.assert(fc.property(fc.array(stepArb(3), { maxLength: 25 }), (steps) => {
      const spaces = run(3, steps);
      const cluster = new ClusterStateSpace(spaces);
      const answer = cluster.enumerate(['torn'], caps);
      const perCell = new Map<string, number>();
      const seenOnNode = spaces.map(() => new Set<string>());
      for (const s of answer.states) {
        const cut = s.id.nodes ?? [0, 1, 2];
        expect(s.id.outcomes?.map((o) => o.node)).toEqual(cut);
        const key = `${s.interval} ${cut.join()}`;
        perCell.set(key, (perCell.get(key) ?? 0) + 1);
        const models = cluster.build(s.id);
        const images = models.map((m) => hashTree(m.exportTree('durable')));
        expect(tupleHash(images)).toBe(s.hash);
        for (const k of cut) seenOnNode[k].add(images[k]);
      }
      for (const n of perCell.values()) expect(n).toBeLessThanOrEqual(caps.maxStatesPerInterval);
      for (const afterOp of cluster.intervalEnds()) {
        spaces.forEach((s, k) => {
          const images = tornImages(s, afterOp);
          if (images.length > caps.maxStatesPerInterval) return; // a node's own cap: not all of them drawn
          for (const h of images) expect(seenOnNode[k].has(h)).toBe(true);
        });
      }
    }), { numRuns: 25 });
  });

  it('lists every lose-unsynced state, coordinated and mixed, before any torn one', () => {
    fc.assert(fc.property(fc.array(stepArb(3), { minLength: 1, maxLength: 20 }), (steps) => {
      const cluster = new ClusterStateSpace(run(3, steps));
      const answer = cluster.enumerate(['lose-unsynced', 'torn'], { ...DEFAULT_STATE_CAPS, maxStates: 1_000_000 });
      const policies = answer.states.map((s) => s.id.policy);
      expect(policies.lastIndexOf('lose-unsynced')).toBeLessThan(policies.indexOf('torn') === -1 ? Infinity : policies.indexOf('torn'));
    }), { numRuns: 15 });
  });

  it('shares maxStates fairly among the cut subsets, each spread over the run, and counts what it left out', () => {
    // The nodes in turn write and fsync a file: many persistence intervals, each a distinct tuple.
    const steps: Step[] = Array.from({ length: 40 }, (_, i) => [
      { node: i % 3, t: 'write' as const, name: 'a', fill: 1 + (i % 200), bytes: 10 }, { node: i % 3, t: 'fsync' as const, name: 'a', fill: 1 },
    ]).flat();
    const cluster = new ClusterStateSpace(run(3, steps));
    const all = cluster.enumerate(['lose-unsynced'], { ...DEFAULT_STATE_CAPS, maxStates: 1_000_000 });
    const cap = 70;
    const answer = cluster.enumerate(['lose-unsynced'], { ...DEFAULT_STATE_CAPS, maxStates: cap });
    expect(all.states.length).toBeGreaterThan(cap);
    expect(answer.states.length).toBe(cap);
    expect(answer.capped.states).toBe(all.states.length - cap);
    // Every subset of nodes is listed (coordinated alone would have filled the cap).
    const perSubset = new Map<string, number[]>();
    for (const s of answer.states) perSubset.set(s.id.nodes?.join() ?? 'all', [...(perSubset.get(s.id.nodes?.join() ?? 'all') ?? []), s.id.afterOp]);
    expect([...perSubset.keys()].sort()).toEqual(['0', '0,1', '0,2', '1', '1,2', '2', 'all']);
    // The coordinated states reach the run's end and its start.
    const coordinated = perSubset.get('all')!;
    expect(Math.min(...coordinated)).toBeLessThan(steps.length / 10);
    expect(Math.max(...coordinated)).toBe(steps.length);
  });

  it('draws each node\'s sector patterns from its own seed, so nodes with the same writes tear differently', () => {
    const steps: Step[] = [0, 1].flatMap((node) => [{ node, t: 'fsyncdir' as const, name: 'a', fill: 0 }]);
    const same: Step[] = [{ node: 0, t: 'write', name: 'a', fill: 7, bytes: 4096 }, { node: 1, t: 'write', name: 'a', fill: 7, bytes: 4096 }];
    const cluster = new ClusterStateSpace(run(2, [...steps.map((s) => ({ ...s, t: 'write' as const, fill: 1 })), { node: 0, t: 'fsync', name: 'a', fill: 0 }, { node: 1, t: 'fsync', name: 'a', fill: 0 }, ...same]));
    const answer = cluster.enumerate(['torn'], { ...DEFAULT_STATE_CAPS, maxStatesPerInterval: 1_000 });
    const sectors = answer.states.filter((s) => s.id.nodes === undefined && s.id.outcomes!.every((o) => o.data.kind === 'sectors'));
    expect(sectors.length).toBeGreaterThan(0);
    for (const s of sectors) expect(s.id.outcomes![0].data).not.toEqual(s.id.outcomes![1].data);
    const images = sectors.map((s) => cluster.build(s.id).map((m) => hashTree(m.exportTree('durable'))));
    expect(images.some(([a, b]) => a !== b)).toBe(true);
  });

  it('journaled states are drawn per node as torn ones are, and build what they hashed', () => {
    const spaces = run(3, [{ node: 0, t: 'write', name: 'a', fill: 1 }, { node: 1, t: 'write', name: 'b', fill: 2 }, { node: 0, t: 'fsync', name: 'a', fill: 0 }, { node: 2, t: 'write', name: 'a', fill: 3, bytes: 1500 }, { node: 1, t: 'fsyncdir', name: 'a', fill: 0 }]);
    const cluster = new ClusterStateSpace(spaces);
    const answer = cluster.enumerate(['journaled'], DEFAULT_STATE_CAPS);
    expect(answer.states.length).toBeGreaterThan(0);
    expect(answer.states.every((s) => s.id.policy === 'journaled')).toBe(true);
    for (const s of answer.states) expect(tupleHash(cluster.build(s.id).map((m) => hashTree(m.exportTree('durable'))))).toBe(s.hash);
  });

  it('names what is wrong with a cluster state it is asked to build', () => {
    const cluster = new ClusterStateSpace(run(2, [{ node: 0, t: 'write', name: 'a', fill: 1 }]));
    expect(() => cluster.build({ afterOp: 1, policy: 'torn', nodes: [1], outcomes: [{ node: 0, dirPrefix: 0, data: { kind: 'all' } }] })).toThrow(/one outcome per cut node \(1\), in node order; got outcomes for 0/);
    expect(() => cluster.build({ afterOp: 1, policy: 'torn', dirPrefix: 0, data: { kind: 'all' } })).toThrow(/in 'outcomes', not at its top/);
    expect(() => cluster.build({ afterOp: 1, policy: 'lose-unsynced', outcomes: [] })).toThrow(/outcomes belong to a cluster's torn and journaled states only/);
    expect(describeState({ afterOp: 1, policy: 'torn', nodes: [1], outcomes: [{ node: 1, dirPrefix: 0, data: { kind: 'all' } }] }))
      .toBe('after request 1, torn, the power of node 1 (the others lost only their processes); node 1: directory operations prefix 0, all unsynced writes kept');
  });
});

/** Node `space`'s distinct torn images at `afterOp` (no sector patterns): every directory prefix with all, none, only and except each write. */
function tornImages(space: StateSpace, afterOp: number): string[] {
  const u = space.unsyncedAt(afterOp);
  const data: DataOutcome[] = [{ kind: 'all' }, { kind: 'none' }, ...Array.from({ length: u.fileChanges }, (_, i) => [{ kind: 'only' as const, write: i + 1 }, { kind: 'except' as const, write: i + 1 }]).flat()];
  const out = new Set<string>();
  for (let dirPrefix = 0; dirPrefix <= u.dirOps; dirPrefix++) for (const d of data) out.add(hashTree(space.build({ afterOp, policy: 'torn', dirPrefix, data: d }).exportTree('durable')));
  return [...out];
}

describe('a hypothesis about a cluster\'s run (the cause search\'s fix, node by node)', () => {
  // Request 1: node 0 creates and writes /a; 2: node 1 the same; 3: node 1 fsyncs /a (its data,
  // not its name); 4: node 0 creates and writes /b. Nothing makes a name durable.
  const steps: Step[] = [
    { node: 0, t: 'write', name: 'a', fill: 1 },
    { node: 1, t: 'write', name: 'a', fill: 2 },
    { node: 1, t: 'fsync', name: 'a', fill: 0 },
    { node: 0, t: 'write', name: 'b', fill: 3 },
  ];
  const names = (m: { exportTree: (w: 'durable') => import('./nodes.js').FsTree }) => {
    const t = m.exportTree('durable');
    return t.type === 'dir' ? [...t.entries.keys()].sort() : [];
  };
  const ROOT = 1;

  it('inserts node 0\'s directory fsync after request 1 as request 2: every later request of every node moves up by one, only node 0 gets the call', () => {
    const cluster = new ClusterStateSpace(run(2, steps));
    expect(cluster.intervalEnds()).toEqual([2, 4]); // node 1's fsync is request 3
    const fixed = cluster.withHypothesis({ fsyncAfter: [{ afterOp: 1, node: 0, path: '/' }] });
    // Node 0's inserted fsync is request 2 (an interval ends at 1); node 1's fsync moved from 3 to 4; the run ends at 5.
    expect(fixed.intervalEnds()).toEqual([1, 3, 5]);
    const end = { afterOp: 5, policy: 'lose-unsynced' as const };
    const [node0, node1] = fixed.build(end);
    expect(names(node0), 'node 0 kept /a\'s name: its inserted directory fsync made it durable').toEqual(['a']);
    expect(names(node1), 'node 1 got no fsync of its directory').toEqual([]);
    // Without the hypothesis neither node kept a name.
    expect(cluster.build({ afterOp: 4, policy: 'lose-unsynced' }).map(names)).toEqual([[], []]);
    // What the end state lost, each change by its renumbered request: node 0's create of /b moved from 4 to 5, node 1's create of /a from 2 to 3.
    const lost = fixed.lostUnits(end);
    const dirOps = (node: number) => lost.filter((u) => u.node === node && u.kind === 'dir').flatMap((u) => u.changes.map((c) => `${c.kind} ${c.entries?.[0]?.name} ${c.op}`));
    expect(dirOps(0)).toEqual(['create b 5']);
    expect(dirOps(1)).toEqual(['create a 3']);
  });

  it('orders two fsyncs inserted after one request by node, and resolves a path on its own node', () => {
    const cluster = new ClusterStateSpace(run(2, steps));
    // Given node 1's first: still node 0's is request 3 and node 1's request 4 (by node), each of / on its own disk.
    const fixed = cluster.withHypothesis({ fsyncAfter: [{ afterOp: 2, node: 1, ino: ROOT }, { afterOp: 2, node: 0, path: '/' }] });
    expect(fixed.intervalEnds()).toEqual([2, 3, 4, 6]); // node 0's at 3, node 1's at 4, node 1's own fsync moved to 5
    expect(fixed.build({ afterOp: 6, policy: 'lose-unsynced' }).map(names)).toEqual([['a'], ['a']]);
    // A cut between the two: node 0's fsync done, node 1's not yet.
    expect(fixed.build({ afterOp: 3, policy: 'lose-unsynced' }).map(names)).toEqual([['a'], []]);
  });

  it('skips only the named request\'s fsync (one node\'s), in the one numbering', () => {
    const cluster = new ClusterStateSpace(run(2, steps));
    const skipped = cluster.withHypothesis({ fsyncAfter: [], fsyncSkip: [3] });
    expect(skipped.intervalEnds()).toEqual([4]);
    // Node 1's /a data is then lost at the end too (its fsync made it durable in the run).
    const fileLost = (c: ClusterStateSpace, afterOp: number) => c.lostUnits({ afterOp, policy: 'lose-unsynced' }).filter((u) => u.kind === 'file').map((u) => `${u.node} ${u.path}`).sort();
    expect(fileLost(cluster, 4)).toEqual(['0 /a', '0 /b']);
    expect(fileLost(skipped, 4)).toEqual(['0 /a', '0 /b', '1 /a']);
  });

  it('refuses an entry without its node, or naming a node the cluster does not have, saying which field', () => {
    const cluster = new ClusterStateSpace(run(2, steps));
    expect(() => cluster.withHypothesis({ fsyncAfter: [{ afterOp: 1, ino: ROOT }] })).toThrow(/hypothesis\.fsyncAfter\[0\]\.node is missing/);
    expect(() => cluster.withHypothesis({ fsyncAfter: [{ afterOp: 1, node: 0, ino: ROOT }, { afterOp: 1, node: 2, ino: ROOT }] })).toThrow(/hypothesis\.fsyncAfter\[1\]\.node is 2, but the cluster has nodes 0\.\.1/);
    expect(() => cluster.withHypothesis({ fsyncAfter: [{ afterOp: 9, node: 0, ino: ROOT }] })).toThrow(/afterOp 9 is not in 0\.\.4/);
    expect(() => run(1, steps.filter((s) => s.node === 0))[0].withHypothesis({ fsyncAfter: [{ afterOp: 1, node: 0, ino: ROOT }] })).toThrow(/hypothesis\.fsyncAfter\[0\]\.node is 0, but the recorded run is one disk's/);
  });
});
