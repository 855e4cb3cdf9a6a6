// A cluster's torn crash states on real mounts: each cut node's outcome is drawn on its own, so a
// state may keep one node's unsynced write whole while another node loses its own; what a state
// loads on the mounts is what its images hold.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closeSync, fsyncSync, mkdtempSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTempDaemon, type TempDaemon } from '../src/harness/daemon-process.js';
import { DEFAULT_STATE_CAPS } from './crash-states.js';
import { nodeImageDir } from './protocol.js';
import { requireRoot } from './testing.js';

let cluster: TempDaemon;
let mnt: string[];
let out: string;

function write(p: string, data: string, sync: boolean): void {
  const fd = openSync(p, 'w');
  writeSync(fd, data);
  if (sync) fsyncSync(fd);
  closeSync(fd);
}

function fsyncDir(p: string): void {
  const fd = openSync(p, 'r');
  fsyncSync(fd);
  closeSync(fd);
}

beforeAll(async () => {
  requireRoot('mounting a cluster');
  cluster = await startTempDaemon('cluster-torn', 3);
  mnt = cluster.daemon.mountpoints;
  out = mkdtempSync(join(tmpdir(), 'powercut-cluster-torn-out-'));
});
afterAll(async () => {
  await cluster?.stop();
  rmSync(out, { recursive: true, force: true });
  const mounts = await readFile('/proc/mounts', 'utf8');
  for (const m of mnt ?? []) expect(mounts).not.toContain(` ${m} `);
});

describe('a cluster\'s torn states on three mounts', () => {
  it('draws each cut node\'s outcome on its own, lists identical tuples once, and loads on the mounts what the images hold', async () => {
    const c = cluster.daemon.client;
    await c.reset(true);
    // Nodes 0 and 1: a synced file, then an unsynced rewrite over three sectors; node 2: synced only.
    const rewrite = (k: number) => `unsynced ${k} `.repeat(140).slice(0, 1500);
    for (const k of [0, 1, 2]) {
      write(join(mnt[k], 'f'), `durable ${k}`, true);
      fsyncDir(mnt[k]);
    }
    for (const k of [0, 1]) write(join(mnt[k], 'f'), rewrite(k), false);
    const answer = await c.states(['lose-unsynced', 'torn'], DEFAULT_STATE_CAPS);
    // One state per tuple of images within an interval (the same tuple at another interval is judged against its own confirmations).
    expect(new Set(answer.states.map((s) => `${s.interval} ${s.hash}`)).size).toBe(answer.states.length);
    const torn = answer.states.filter((s) => s.id.policy === 'torn');
    const perCell = new Map<string, number>();
    for (const s of torn) {
      const cut = s.id.nodes ?? [0, 1, 2];
      expect(s.id.outcomes?.map((o) => o.node)).toEqual(cut);
      const key = `${s.interval} ${cut.join()}`;
      perCell.set(key, (perCell.get(key) ?? 0) + 1);
    }
    for (const n of perCell.values()) expect(n).toBeLessThanOrEqual(DEFAULT_STATE_CAPS.maxStatesPerInterval);
    // The run's end, every node's power gone: node 2 had nothing unsynced, so it only ever reads its durable file.
    const end = torn.filter((s) => s.id.nodes === undefined && s.interval === answer.intervals - 1);
    expect(end.length).toBeGreaterThan(2);
    const read = (dir: string) => readFileSync(join(dir, 'f'), 'utf8');
    const kinds = new Set<string>();
    for (const s of end) {
      await c.stateImage(s.id, out, true);
      const images = [0, 1, 2].map((k) => read(join(out, nodeImageDir(k))));
      expect(images[2]).toBe('durable 2');
      kinds.add(images.map((x, k) => (x === rewrite(k) ? 'new' : x === `durable ${k}` ? 'old' : 'torn')).join());
    }
    // Each node tears on its own: node 0 torn while node 1 kept its old file, and the other way round.
    expect(kinds).toContain('torn,old,old');
    expect(kinds).toContain('old,torn,old');
    // A torn tuple that keeps or drops each rewrite whole is a lose-unsynced state's images (node 1's
    // power gone, the others only their processes: new, old, durable): listed once, as that state.
    expect(kinds).not.toContain('new,old,old');
    expect(answer.states.some((s) => s.id.policy === 'lose-unsynced' && s.id.nodes?.join() === '1' && s.interval === answer.intervals - 1)).toBe(true);
    // What a torn state loads on the mounts is what its images hold.
    const s = end[end.length - 1];
    await c.stateImage(s.id, out, true);
    await c.loadState(s.id);
    for (const k of [0, 1, 2]) expect(read(mnt[k])).toBe(read(join(out, nodeImageDir(k))));
  });
});
