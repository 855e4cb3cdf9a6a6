// A cluster's crash states, pure: per-node recordings numbered in one order. The coordinated states
// at the merged persistence points cover a coordinated cut at every request, and each state builds
// the images it was hashed from.
import fc from 'fast-check';
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { DEFAULT_STATE_CAPS } from '../crash-states.js';
import { ClusterStateSpace, cutSubsets } from './cluster-states.js';
import { Recording, RecordingFsModel } from './recording.js';
import { hashTree, StateSpace } from './state-space.js';

const owner = { uid: 0, gid: 0 };

type Step = { node: number; t: 'write' | 'fsync' | 'fsyncdir'; name: string; fill: number };
const stepArb = (nodes: number): fc.Arbitrary<Step> => fc.record({
  node: fc.nat(nodes - 1), t: fc.constantFrom('write' as const, 'fsync' as const, 'fsyncdir' as const), name: fc.constantFrom('a', 'b'), fill: fc.integer({ min: 1, max: 255 }),
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
      m.write(ino, 0, Buffer.alloc(10, s.fill));
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

  it('refuses the policies it does not draw per node, naming them', () => {
    const cluster = new ClusterStateSpace(run(2, []));
    expect(() => cluster.enumerate(['lose-unsynced', 'torn'], DEFAULT_STATE_CAPS)).toThrow(/lose-unsynced states only; torn states are not drawn per node yet/);
  });
});
