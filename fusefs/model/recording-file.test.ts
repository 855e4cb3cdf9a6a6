// A recorded run through its file: every state listed and built from the decoded recording equals
// the original's (the file is what explain searches a stored cluster state on), a run from a
// starting state keeps it (durable in every state, and through the file), and a file that is not
// one gets an error naming the file and the field.
import fc from 'fast-check';
import { gunzipSync, gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { DEFAULT_STATE_CAPS } from '../crash-states.js';
import { ClusterStateSpace } from './cluster-states.js';
import { Recording, RecordingFsModel } from './recording.js';
import { decodeRecordedRun, encodeRecordedRun } from './recording-file.js';
import { hashTree, StateSpace } from './state-space.js';
import type { FsTree } from './nodes.js';

const owner = { uid: 0, gid: 0 };

type Step = { node: number; t: 'write' | 'fsync' | 'fsyncdir' | 'rename' | 'utimens' | 'chown' | 'truncate'; name: 'a' | 'b'; fill: number; bytes: number };
const stepArb = (nodes: number): fc.Arbitrary<Step> => fc.record({
  node: fc.nat(nodes - 1), t: fc.constantFrom('write' as const, 'fsync' as const, 'fsyncdir' as const, 'rename' as const, 'utimens' as const, 'chown' as const, 'truncate' as const),
  name: fc.constantFrom('a' as const, 'b' as const), fill: fc.integer({ min: 0, max: 255 }), bytes: fc.constantFrom(1, 10, 700),
});

/** The steps on one recording model per node, one request number for all (as the cluster daemon runs them). */
function record(nodes: number, steps: readonly Step[], base?: FsTree): { recordings: Recording[]; lastOp: number } {
  let op = 0;
  const recordings = Array.from({ length: nodes }, () => new Recording(owner, 1 << 24, base));
  const models = recordings.map((r) => new RecordingFsModel(r, () => op));
  for (const s of steps) {
    op++;
    const m = models[s.node];
    const path = `/${s.name}`;
    const ino = exists(m, path) ? m.resolve(path) : undefined;
    if (s.t === 'write') m.write(ino ?? m.create(path, 0o644, owner), s.fill * 3, Buffer.alloc(s.bytes, s.fill));
    else if (s.t === 'fsyncdir') m.fsync(1);
    else if (ino === undefined) continue;
    else if (s.t === 'fsync') m.fsync(ino, s.fill % 2 ? undefined : 1);
    else if (s.t === 'rename') m.rename(path, s.name === 'a' ? '/b' : '/a');
    else if (s.t === 'utimens') m.utimens(ino, s.fill % 2 ? 'now' : s.fill * 1000, 'omit');
    else if (s.t === 'chown') m.chown(ino, s.fill, s.fill + 1);
    else m.truncate(ino, s.bytes);
  }
  for (const r of recordings) r.close();
  return { recordings, lastOp: op };
}

const statesOf = (recordings: readonly Recording[], lastOp: number) => {
  const spaces = recordings.map((r) => new StateSpace(r, lastOp));
  return { spaces, enumerate: (caps: typeof DEFAULT_STATE_CAPS) => (spaces.length > 1 ? new ClusterStateSpace(spaces).enumerate(['lose-unsynced', 'torn'], caps) : spaces[0].enumerate(['lose-unsynced', 'torn'], caps)) };
};

describe('a recorded run\'s file', () => {
  it('lists the same states, and builds the same images at every request, after a round trip', () => {
    fc.assert(fc.property(fc.integer({ min: 1, max: 3 }).chain((n) => fc.tuple(fc.constant(n), fc.array(stepArb(n), { maxLength: 30 }), fc.boolean())), ([nodes, steps, fromStart]) => {
      const run = record(nodes, steps, fromStart ? START : undefined);
      const back = decodeRecordedRun(encodeRecordedRun(run), 'recording.json.gz');
      expect(back.lastOp).toBe(run.lastOp);
      const before = statesOf(run.recordings, run.lastOp);
      const after = statesOf(back.recordings, back.lastOp);
      for (let op = 0; op <= run.lastOp; op++) {
        for (const [k, s] of before.spaces.entries()) {
          expect(hashTree(after.spaces[k].treeAt(op, 'durable'))).toBe(hashTree(s.treeAt(op, 'durable')));
          expect(hashTree(after.spaces[k].treeAt(op, 'live'))).toBe(hashTree(s.treeAt(op, 'live')));
          // The starting state is durable in every state, before the run's first request too.
          if (fromStart) expect(fileAt(after.spaces[k].treeAt(op, 'durable'), 'setup', 'f')).toEqual(START_BYTES);
        }
      }
      const caps = { ...DEFAULT_STATE_CAPS, maxStates: 10_000 };
      expect(after.enumerate(caps)).toEqual(before.enumerate(caps));
    }), { numRuns: 60 });
  });

  it('refuses what is not a recording, naming the file and the field', () => {
    const run = record(2, [{ node: 0, t: 'write', name: 'a', fill: 7, bytes: 10 }, { node: 1, t: 'fsyncdir', name: 'a', fill: 0, bytes: 1 }]);
    const doc = JSON.parse(gunzipText(encodeRecordedRun(run)));
    const bytes = (d: unknown) => gzipSync(JSON.stringify(d));
    expect(() => decodeRecordedRun(Buffer.from('not gzip'), '/a/recording.json.gz')).toThrow(/^\/a\/recording.json.gz: not a powercut recording: it does not read as gzipped JSON/);
    expect(() => decodeRecordedRun(bytes({ ...doc, format: 'x' }), 'f')).toThrow(/its format is "x"/);
    expect(() => decodeRecordedRun(bytes({ ...doc, version: 9 }), 'f')).toThrow(/its version is 9; this powercut reads version 1/);
    const call = doc.nodes[0].calls[1];
    expect(() => decodeRecordedRun(bytes({ ...doc, nodes: [{ ...doc.nodes[0], calls: [{ ...call, op: 2 }, call] }, doc.nodes[1]] }), 'f')).toThrow(/nodes\[0\]\.calls\[1\]\.op is 1, before the previous call's 2: calls must be in request order/);
    expect(() => decodeRecordedRun(bytes({ ...doc, nodes: [{ ...doc.nodes[0], calls: [{ ...call, op: 3 }] }, doc.nodes[1]] }), 'f')).toThrow(/nodes\[0\]\.calls\[0\]\.op must be a request number in 1\.\.2, got 3/);
    expect(() => decodeRecordedRun(bytes({ ...doc, nodes: [{ ...doc.nodes[0], calls: [{ ...call, method: 'format' }] }, doc.nodes[1]] }), 'f')).toThrow(/nodes\[0\]\.calls\[0\]\.method must be one of create/);
    expect(() => decodeRecordedRun(bytes({ ...doc, nodes: [{ ...doc.nodes[0], calls: [{ ...call, args: [[1]] }] }, doc.nodes[1]] }), 'f')).toThrow(/nodes\[0\]\.calls\[0\]\.args\[0\] must be a string/);
  });
});

/** A starting state: what a driver's setup left, loaded before the run's first call. */
const START_BYTES = Buffer.alloc(700, 9);
const START: FsTree = {
  type: 'dir', mode: 0o755, entries: new Map<string, FsTree>([
    ['setup', { type: 'dir', mode: 0o700, entries: new Map<string, FsTree>([['f', { type: 'file', data: START_BYTES, mode: 0o600 }]]) }],
    ['link', { type: 'symlink', target: 'setup/f' }],
  ]),
};

function fileAt(t: FsTree, ...names: string[]): Buffer | undefined {
  let at: FsTree | undefined = t;
  for (const n of names) at = at?.type === 'dir' ? at.entries.get(n) : undefined;
  return at?.type === 'file' ? at.data : undefined;
}

function exists(m: RecordingFsModel, path: string): boolean {
  try {
    m.resolve(path);
    return true;
  } catch {
    return false;
  }
}

const gunzipText = (b: Buffer) => gunzipSync(b).toString('utf8');
