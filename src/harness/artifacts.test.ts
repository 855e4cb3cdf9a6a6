import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { copyStoredImage, isClusterCase, readArtifact, replayOf, writeArtifact, writeClusterArtifact, writeImageFolderLists, type ClusterArtifactCase } from './artifacts.js';
import { emptyCoverage } from './coverage.js';
import type { RunRecord } from './oracle.js';

let tmp: string | undefined;
afterEach(async () => {
  if (tmp) await rm(tmp, { recursive: true, force: true });
  tmp = undefined;
});

describe('stored images keep their empty folders (git does not)', () => {
  it('an image whose folders are all empty comes back whole from its folder list alone', async () => {
    tmp = await mkdtemp(path.join(os.tmpdir(), 'powercut-artifacts-test-'));
    const images = path.join(tmp, 'artifact', 'images');
    await mkdir(path.join(images, 'cut-0-after-crash', 'streams', 'S', 'msgs'), { recursive: true });
    await mkdir(path.join(images, 'cut-0-live', 'streams'), { recursive: true });
    await writeFile(path.join(images, 'cut-0-live', 'streams', 'meta.inf'), 'm');
    await writeImageFolderLists(images);
    // A clone: the files and the lists, no empty folder.
    await rm(path.join(images, 'cut-0-after-crash'), { recursive: true });

    const dest = path.join(tmp, 'copy');
    expect(await copyStoredImage(path.join(tmp, 'artifact'), 'cut-0-after-crash', dest)).toBe(true);
    expect(existsSync(path.join(dest, 'streams', 'S', 'msgs'))).toBe(true);
    expect(await copyStoredImage(path.join(tmp, 'artifact'), 'cut-0-live', path.join(tmp, 'live'))).toBe(true);
    expect(await readFile(path.join(tmp, 'live', 'streams', 'meta.inf'), 'utf8')).toBe('m');
    expect(await copyStoredImage(path.join(tmp, 'artifact'), 'cut-1-after-crash', path.join(tmp, 'none'))).toBe(false);
  });

  it('a folder list that points outside the image is refused, naming the file', async () => {
    tmp = await mkdtemp(path.join(os.tmpdir(), 'powercut-artifacts-test-'));
    await mkdir(path.join(tmp, 'images'));
    await writeFile(path.join(tmp, 'images', 'cut-0-after-crash.dirs.json'), '["../escape"]');
    await expect(copyStoredImage(tmp, 'cut-0-after-crash', path.join(tmp, 'copy'))).rejects.toThrow(/cut-0-after-crash\.dirs\.json: expected a list of relative folder paths/);
  });
});

describe('a cluster artifact', () => {
  const base: ClusterArtifactCase = {
    target: 'replicated-queue', workload: { steps: [{ op: 'write', sizesBytes: [10], waitDurable: true }] }, settings: {}, policy: 'lose-unsynced', seed: 4, nodes: 3,
    cut: { atOp: 7, timing: 'before' }, nodesCut: [1],
  };
  const write = (c: ClusterArtifactCase) => writeClusterArtifact(tmp!, c.target!, {
    case: c, runs: [{ role: 'workload', outcomes: [], exitCode: null, killed: true, hung: false, failedRequests: [] }], violations: [],
    trace: [{ op: 1, kind: 'write', path: '/page.1', node: 2, result: 0 } as never], frozenAt: 1, stderr: [''],
  });

  it('reads back with its nodes, its live cut and its trace of every node', async () => {
    tmp = await mkdtemp(path.join(os.tmpdir(), 'powercut-artifacts-test-'));
    const dir = await write(base);
    expect(path.basename(dir)).toContain('-cluster-');
    const a = await readArtifact(dir);
    expect(isClusterCase(a.case) && [a.case.nodes, a.case.nodesCut]).toEqual([3, [1]]);
    expect(a.cuts[0].trace[0].node).toBe(2);
    expect(await readFile(path.join(dir, 'trace-cut-0.txt'), 'utf8')).toContain('node 2 write');
  });

  it('names case.json and the field when its nodes are wrong', async () => {
    tmp = await mkdtemp(path.join(os.tmpdir(), 'powercut-artifacts-test-'));
    await expect(readArtifact(await write({ ...base, nodesCut: [3] }))).rejects.toThrow(/case\.json: nodesCut must be a non-empty list of nodes in 0\.\.2, got \[3\]/);
    await expect(readArtifact(await write({ ...base, nodes: 1 }))).rejects.toThrow(/case\.json: nodes must be the cluster's node count, an integer >= 2, got 1/);
    const { nodesCut: _, cut: __, ...noCut } = base;
    await expect(readArtifact(await write(noCut as ClusterArtifactCase))).rejects.toThrow(/case\.json: a cluster case names a crash state \(state\) or a live cut's nodes/);
  });
});

describe('replayOf: whether replay recovers the stored disks exactly, or only samples re-runs', () => {
  const run = (role: RunRecord['role']): RunRecord => ({ role, outcomes: [], exitCode: 0, killed: false, hung: false, failedRequests: [] });
  const cluster: ClusterArtifactCase = { target: 'replicated-queue', workload: { steps: [{ op: 'write', sizesBytes: [10], waitDurable: true }] }, settings: {}, policy: 'lose-unsynced', seed: 4, nodes: 3 };
  /** An artifact of `c` whose images hold cut-0-after-crash/NODE for each node given (an empty folder; git would keep only its list). */
  async function artifact(c: ClusterArtifactCase, nodes: number[], runs = [run('workload'), run('drain')]): Promise<string> {
    const images = await mkdtemp(path.join(tmp!, 'images-'));
    for (const k of nodes) await mkdir(path.join(images, 'cut-0-after-crash', `node${k}`), { recursive: true });
    return writeClusterArtifact(path.join(tmp!, 'arts'), 'replicated-queue', { case: c, runs, violations: [], trace: [], frozenAt: 1, stderr: [] }, nodes.length ? images : undefined);
  }

  it('a cluster crash state with every node\'s disk replays exactly from them; its re-runs are a sample', async () => {
    tmp = await mkdtemp(path.join(os.tmpdir(), 'powercut-artifacts-test-'));
    const dir = await artifact({ ...cluster, state: { afterOp: 4, policy: 'lose-unsynced' } }, [0, 1, 2]);
    expect(replayOf(dir, (await readArtifact(dir)).case)).toEqual({ artifactDir: dir, replay: `powercut replay ${dir}`, replayMode: 'sample', replayStoredImages: true });
    // A clone of a committed artifact: an empty node folder survives only in its folder list.
    await rm(path.join(dir, 'images', 'cut-0-after-crash', 'node1'), { recursive: true });
    expect(replayOf(dir, (await readArtifact(dir)).case).replayStoredImages).toBe(true);
  });

  it('a coordinated live cut keeps every node\'s disk and replays exactly from them; a live cut of some nodes keeps theirs only, so only its re-runs judge it', async () => {
    tmp = await mkdtemp(path.join(os.tmpdir(), 'powercut-artifacts-test-'));
    const live = (nodesCut: ClusterArtifactCase['nodesCut']): ClusterArtifactCase => ({ ...cluster, cut: { atOp: 7, timing: 'before' }, nodesCut });
    expect(replayOf(await artifact(live('all'), [0, 1, 2]), live('all')).replayStoredImages).toBe(true);
    expect(replayOf(await artifact(live([0, 1]), [0, 1]), live([0, 1]))).toMatchObject({ replayMode: 'sample', replayStoredImages: false });
    // A cut that never landed wrote no image.
    expect(replayOf(await artifact(live('all'), []), live('all')).replayStoredImages).toBe(false);
  });

  it('stored disks without a run after the cut have no recovery to replay (as replay skips them)', async () => {
    tmp = await mkdtemp(path.join(os.tmpdir(), 'powercut-artifacts-test-'));
    const state = { ...cluster, state: { afterOp: 4, policy: 'lose-unsynced' as const } };
    expect(replayOf(await artifact(state, [0, 1, 2], [run('workload')]), state).replayStoredImages).toBe(false);
  });

  it('a single disk\'s case of one process replays exactly, with or without its stored post-crash image', async () => {
    tmp = await mkdtemp(path.join(os.tmpdir(), 'powercut-artifacts-test-'));
    const c = { workload: cluster.workload, settings: {}, policy: 'lose-unsynced' as const, seed: 1, cut: { atOp: 2, timing: 'before' as const } };
    const images = path.join(tmp, 'images');
    await mkdir(path.join(images, 'cut-0-after-crash'), { recursive: true });
    const result = { case: c, runs: [run('workload'), run('drain')], violations: [], verdict: 'fail' as const, coverage: emptyCoverage(), durationMs: 0, stderr: [], cuts: [{ frozenAt: 2, trace: [] }] };
    expect(replayOf(await writeArtifact(path.join(tmp, 'arts'), 'powercut-queue', result, images), c)).toMatchObject({ replayMode: 'exact', replayStoredImages: true });
    expect(replayOf(await writeArtifact(path.join(tmp, 'arts'), 'powercut-queue', result), c)).toMatchObject({ replayMode: 'exact', replayStoredImages: false });
  });
});
