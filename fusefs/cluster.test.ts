// A cluster on real mounts: one daemon process serves three nodes, one mount each, and numbers every
// node's requests in one order. Writers run as child processes (a held request must not block this one).
import { afterAll, beforeEach, beforeAll, describe, expect, it } from 'vitest';
import { closeSync, existsSync, fsyncSync, mkdtempSync, openSync, readFileSync, readdirSync, rmSync, writeFileSync, writeSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { startTempDaemon, type TempDaemon } from '../src/harness/daemon-process.js';
import { DEFAULT_STATE_CAPS } from './crash-states.js';
import { nodeImageDir } from './protocol.js';
import { requireRoot } from './testing.js';

const NODES = 3;
let cluster: TempDaemon;
let mnt: string[];
let out: string;

function writeFsynced(p: string, data: string, dirToo: string | null = null): void {
  const fd = openSync(p, 'w');
  writeSync(fd, data);
  fsyncSync(fd);
  closeSync(fd);
  if (dirToo) {
    const dfd = openSync(dirToo, 'r');
    fsyncSync(dfd);
    closeSync(dfd);
  }
}

/** A child process writing `data` to `path` (and fsyncing it), so a held request holds only it. */
function writer(path: string, data: string) {
  const script = `const fs=require('fs');const fd=fs.openSync(${JSON.stringify(path)},'w');fs.writeSync(fd,${JSON.stringify(data)});fs.fsyncSync(fd);fs.closeSync(fd)`;
  return execa(process.execPath, ['-e', script], { reject: false, timeout: 20_000 });
}

/** Waits (bounded) until the trace holds a request of `node`. */
async function untilNodeRequest(node: number, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await cluster.daemon.client.trace()).some((e) => e.node === node)) {
    if (Date.now() > deadline) throw new Error(`no request of node ${node} reached the daemon within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

beforeAll(async () => {
  requireRoot('mounting a cluster');
  cluster = await startTempDaemon('cluster', NODES);
  mnt = cluster.daemon.mountpoints;
  out = mkdtempSync(join(tmpdir(), 'powercut-cluster-out-'));
});
afterAll(async () => {
  await cluster?.stop();
  rmSync(out, { recursive: true, force: true });
  // No mount of any node is left.
  const mounts = await readFile('/proc/mounts', 'utf8');
  for (const m of mnt ?? []) expect(mounts).not.toContain(` ${m} `);
});
beforeEach(async () => {
  await cluster.daemon.client.reset();
});

describe('a cluster of three nodes in one daemon', () => {
  it('numbers every node\'s requests in one order, and each trace entry names its node', async () => {
    writeFsynced(join(mnt[0], 'a'), 'zero');
    writeFsynced(join(mnt[2], 'c'), 'two');
    writeFsynced(join(mnt[1], 'b'), 'one');
    const trace = await cluster.daemon.client.trace();
    expect(trace.map((e) => e.op)).toEqual(trace.map((_, i) => i + 1));
    const firstOf = (node: number) => trace.find((e) => e.node === node)!.op;
    expect(firstOf(0)).toBeLessThan(firstOf(2));
    expect(firstOf(2)).toBeLessThan(firstOf(1));
    expect(trace.filter((e) => e.node === 1).map((e) => e.kind)).toEqual(['create', 'write', 'fsync']);
    const status = await cluster.daemon.client.status();
    expect(status.nodes?.map((n) => n.mountpoint)).toEqual(mnt);
  });

  it('cuts one node\'s power at its crash point while the others run on: their held requests complete, its unsynced data is gone', async () => {
    const c = cluster.daemon.client;
    writeFsynced(join(mnt[1], 'kept'), 'synced', mnt[1]);
    writeFsynced(join(mnt[2], 'before'), 'synced', mnt[2]);
    // Node 1's second write since the reset (atOp counts from the reset).
    await c.arm({ atOp: 2, kind: 'write', node: 1, timing: 'before' });
    const cut = writer(join(mnt[1], 'lost'), 'never durable');
    expect((await c.waitFrozen(10_000)).frozen).toBe(true);
    // Every node freezes at the crash point: node 2's request waits too.
    const other = writer(join(mnt[2], 'after'), 'written across the cut');
    await untilNodeRequest(2);
    const opsBefore = (await c.status()).opCount;
    // A killed process's request in flight stays until the daemon answers it: the cut answers it.
    cut.kill('SIGKILL');
    await c.crash('lose-unsynced', 0, [1]);
    await cut;
    const w = await other;
    expect(w.exitCode, w.stderr).toBe(0);
    expect(readFileSync(join(mnt[2], 'after'), 'utf8')).toBe('written across the cut');
    expect(readdirSync(mnt[1]).sort()).toEqual(['kept']);
    expect(readFileSync(join(mnt[1], 'kept'), 'utf8')).toBe('synced');
    const status = await c.status();
    expect(status.nodes?.map((n) => n.crashes)).toEqual([0, 1, 0]);
    // One order across the cut: numbering went on.
    expect(status.opCount).toBeGreaterThan(opsBefore);
  });

  it('release thaws a freeze without a power cut (a pause): held requests complete, nothing is lost, and the next point is armed at once', async () => {
    const c = cluster.daemon.client;
    await expect(c.release()).rejects.toThrow(/not frozen/);
    await c.arm({ atOp: 2, kind: 'write', node: 1, timing: 'before' });
    writeFsynced(join(mnt[1], 'first'), 'one');
    const held = writer(join(mnt[1], 'paused'), 'written across the pause');
    const at = (await c.waitFrozen(10_000)).frozenAt!;
    await expect(c.release({ atOp: at, timing: 'before' })).rejects.toThrow(/already passed/);
    await expect(c.release({ atOp: 2, kind: 'write', node: 1, timing: 'before' })).rejects.toThrow(/already passed/);
    expect((await c.status()).frozen, 'a refused release leaves the freeze').toBe(true);
    await c.release({ atOp: 1, kind: 'write', node: 2, timing: 'before' });
    expect((await held).exitCode).toBe(0);
    expect(readFileSync(join(mnt[1], 'paused'), 'utf8')).toBe('written across the pause');
    const next = writer(join(mnt[2], 'g'), 'x');
    expect((await c.waitFrozen(10_000)).frozen, 'the point armed by release froze node 2\'s first write').toBe(true);
    next.kill('SIGKILL');
    await c.crash('lose-unsynced', 0);
    await next;
    expect((await c.status()).frozen).toBe(false);
  });

  it('a coordinated cut takes every node\'s unsynced data and restarts the numbering', async () => {
    const c = cluster.daemon.client;
    for (const [k, m] of mnt.entries()) writeFsynced(join(m, 'f'), `node ${k}`, k === 0 ? m : null);
    await c.crash();
    expect(existsSync(join(mnt[0], 'f'))).toBe(true);
    expect(existsSync(join(mnt[1], 'f'))).toBe(false);
    expect(existsSync(join(mnt[2], 'f'))).toBe(false);
    expect((await c.status()).opCount).toBe(0);
  });

  it('an fsync fault aimed at one node fails only that node\'s fsyncs', async () => {
    const c = cluster.daemon.client;
    await c.fault({ type: 'fsync-eio', path: '/**' }, 1);
    expect(() => writeFsynced(join(mnt[1], 'f'), 'x')).toThrow(/EIO/);
    writeFsynced(join(mnt[0], 'f'), 'x');
    expect((await c.status()).nodes?.map((n) => n.faults.length)).toEqual([0, 1, 0]);
  });

  it('enumerates a recorded run\'s coordinated states, then its mixed ones, and builds each node\'s image', async () => {
    const c = cluster.daemon.client;
    await c.reset(true);
    writeFsynced(join(mnt[0], 'f'), 'durable on 0', mnt[0]);
    writeFsynced(join(mnt[1], 'g'), 'unsynced dir on 1');
    writeFsynced(join(mnt[2], 'h'), 'unsynced dir on 2');
    const answer = await c.states(['lose-unsynced'], DEFAULT_STATE_CAPS);
    const coordinated = answer.states.filter((s) => s.id.nodes === undefined);
    const mixed = answer.states.filter((s) => s.id.nodes !== undefined);
    // One cut before each fsync of any node (4 fsyncs), and one at the end.
    expect(answer.intervals).toBe(5);
    expect(coordinated.length).toBeGreaterThan(1);
    expect(mixed.length).toBeGreaterThan(0);
    expect(answer.states.indexOf(mixed[0])).toBe(coordinated.length); // coordinated first
    // One state per tuple of images within an interval (the same tuple at another interval is judged against its own confirmations).
    expect(new Set(answer.states.map((s) => `${s.interval} ${s.hash}`)).size).toBe(answer.states.length);
    const lastOp = Math.max(...answer.states.map((s) => s.id.afterOp));
    const end = answer.states.find((s) => s.id.afterOp === lastOp && s.id.nodes?.join() === '1');
    expect(end, 'node 1 alone losing power at the end is a state of its own').toBeDefined();
    await c.stateImage(end!.id, out, true);
    expect(readdirSync(join(out, nodeImageDir(1)))).toEqual([]);
    expect(readFileSync(join(out, nodeImageDir(0), 'f'), 'utf8')).toBe('durable on 0');
    // Node 2 lost only its process: its live image, the unsynced entry too.
    expect(readFileSync(join(out, nodeImageDir(2), 'h'), 'utf8')).toBe('unsynced dir on 2');
    // Node 0 alone losing power at the end leaves every image as it was live except node 0's, which
    // was all synced: the tuple of the run's end as it ran, a state of its own.
    expect(answer.states.some((s) => s.id.afterOp === lastOp && s.id.nodes?.join() === '0')).toBe(true);
    // The run's last coordinated state (the end's, unless the last fsync made no difference).
    await c.loadState(coordinated.at(-1)!.id);
    expect(readdirSync(mnt[1])).toEqual([]);
    expect(readdirSync(mnt[2])).toEqual([]);
    expect(readFileSync(join(mnt[0], 'f'), 'utf8')).toBe('durable on 0');
  });

  it('saves a recorded run to a file and loads it back after other runs: the same states, the same images', async () => {
    const c = cluster.daemon.client;
    await c.reset(true);
    writeFsynced(join(mnt[0], 'f'), 'durable on 0', mnt[0]);
    writeFsynced(join(mnt[1], 'g'), 'unsynced dir on 1');
    const listed = await c.states(['lose-unsynced', 'torn'], DEFAULT_STATE_CAPS);
    const file = join(out, 'saved', 'recording.json.gz');
    await c.saveRecording(file);
    const last = listed.states.at(-1)!;
    await c.stateImage(last.id, join(out, 'before'), true);
    // Another run takes the daemon; the saved one comes back whole.
    await c.reset(true);
    writeFsynced(join(mnt[2], 'other'), 'another run');
    await c.states(['lose-unsynced'], DEFAULT_STATE_CAPS);
    await c.loadRecording(file);
    expect(await c.states(['lose-unsynced', 'torn'], DEFAULT_STATE_CAPS)).toEqual(listed);
    await c.stateImage(last.id, join(out, 'after'), true);
    for (const k of [0, 1, 2]) expect(readdirSync(join(out, 'after', nodeImageDir(k)))).toEqual(readdirSync(join(out, 'before', nodeImageDir(k))));
    expect(readFileSync(join(out, 'after', nodeImageDir(0), 'f'), 'utf8')).toBe('durable on 0');
    // A file that is not a recording, and a run of another node count, are refused by name.
    writeFileSync(join(out, 'not-one'), 'hello');
    await expect(c.loadRecording(join(out, 'not-one'))).rejects.toThrow(/not-one: not a powercut recording: it does not read as gzipped JSON/);
    const one = await startTempDaemon('one-node', 1);
    try {
      await expect(one.daemon.client.loadRecording(file)).rejects.toThrow(/holds a run of 3 node\(s\); this daemon serves 1/);
    } finally {
      await one.stop();
    }
  });

  it('names a node that does not exist', async () => {
    await expect(cluster.daemon.client.crash('lose-unsynced', 0, [5])).rejects.toThrow(/crash: node 5 does not exist; the daemon serves 3 nodes \(0\.\.2\)/);
    await expect(cluster.daemon.client.fault({ type: 'enospc', afterBytes: 0 }, 3)).rejects.toThrow(/fault: node 3 does not exist/);
  });
});

describe('a starting state on every node (a driver\'s setup)', () => {
  it('is each node\'s own, durable and outside the recorded run: every reset and crash state starts from it; clear empties the disks again', async () => {
    const c = cluster.daemon.client;
    // Not fsynced: the starting state makes all of it durable.
    for (const [k, m] of mnt.entries()) {
      await execa('mkdir', [join(m, 'db')]);
      writeFileSync(join(m, 'db', 'init'), `node ${k}`);
    }
    expect(await c.startingState()).toEqual(mnt.map(() => ({ files: 1, dirs: 1, bytes: 6 })));
    expect((await c.status()).startingState).toEqual({ files: 3, dirs: 3, bytes: 18 });
    await c.reset(true);
    expect(await c.trace(), 'loading it is no request of the run').toEqual([]);
    writeFsynced(join(mnt[1], 'log'), 'x', mnt[1]);
    const answer = await c.states(['lose-unsynced'], DEFAULT_STATE_CAPS);
    expect(answer.states.length).toBeGreaterThan(0);
    for (const [i, s] of answer.states.entries()) {
      const dir = join(out, `start-state-${i}`);
      await c.stateImage(s.id, dir);
      for (const k of mnt.keys()) expect(readFileSync(join(dir, nodeImageDir(k), 'db', 'init'), 'utf8'), `state ${i}, node ${k}`).toBe(`node ${k}`);
    }
    await c.image(join(out, 'start'), 'start');
    expect(readdirSync(join(out, 'start')).sort()).toEqual(mnt.map((_, k) => nodeImageDir(k)));
    // A power cut keeps it: it is durable.
    await c.reset();
    writeFileSync(join(mnt[0], 'unsynced'), 'lost');
    await c.crash('lose-unsynced', 0);
    expect(readdirSync(mnt[0]).sort()).toEqual(['db']);
    // Loaded back from its image (as replay does from an artifact), then cleared.
    await c.startingState({ clear: true });
    expect(readdirSync(mnt[2])).toEqual([]);
    expect(await c.startingState({ from: join(out, 'start') })).toEqual(mnt.map(() => ({ files: 1, dirs: 1, bytes: 6 })));
    expect(readFileSync(join(mnt[2], 'db', 'init'), 'utf8')).toBe('node 2');
    await c.startingState({ clear: true });
    expect((await c.status()).startingState).toBeNull();
    expect(readdirSync(mnt[1])).toEqual([]);
  });
});
