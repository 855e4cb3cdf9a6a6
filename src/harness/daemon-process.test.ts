// The daemon as a process: control protocol on malformed input, stale-mount cleanup after SIGKILL,
// and the CLI (powercut mount / powercut ctl).
import { afterAll, describe, expect, it } from 'vitest';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { execa } from 'execa';
import { startDaemon, startTempDaemon, type DaemonHandle } from './daemon-process.js';
import { ControlError } from './control-client.js';

const work = mkdtempSync(join(tmpdir(), 'powercut-daemon-'));
const cli = resolve('dist/src/cli.js');
const started: DaemonHandle[] = [];
afterAll(async () => {
  await Promise.all(started.map((d) => d.stop()));
  rmSync(work, { recursive: true, force: true });
});

async function isMounted(mnt: string): Promise<boolean> {
  return (await readFile('/proc/mounts', 'utf8')).split('\n').some((l) => l.split(' ')[1] === mnt);
}

/** Raw lines over the socket, to send what the typed client never would. */
function rawExchange(socket: string, payload: string, answers: number): Promise<string[]> {
  return new Promise((res, rej) => {
    const s = connect(socket);
    let buf = '';
    const timer = setTimeout(() => rej(new Error('no answer in 5 s')), 5000);
    s.on('data', (d) => {
      buf += d.toString();
      const lines = buf.split('\n').filter(Boolean);
      if (lines.length >= answers) {
        clearTimeout(timer);
        s.destroy();
        res(lines);
      }
    });
    s.on('error', rej);
    s.write(payload);
  });
}

describe('control protocol', () => {
  it('answers malformed requests with ok:false naming the problem and keeps running', async () => {
    const d = await startDaemon({ mountpoint: join(work, 'm1'), socketPath: join(work, 'c1.sock') });
    started.push(d);
    expect(statSync(d.socketPath).mode & 0o777).toBe(0o600);
    const bad = ['not json', '[]', '{"cmd":"explode"}', '{"cmd":"arm","atOp":-1,"timing":"before"}', '{"cmd":"arm","atOp":1,"timing":"during"}',
      '{"cmd":"arm","atOp":1,"timing":"before","kind":"read"}', '{"cmd":"crash","policy":"gentle"}', '{"cmd":"status","extra":1}',
      '{"cmd":"fault","type":"bitflip","path":"/x","offset":0,"bit":9}', '{"cmd":"image"}', '{"cmd":"wait-frozen","timeoutMs":"soon"}'];
    const answers = (await rawExchange(d.socketPath, bad.join('\n') + '\n', bad.length)).map((l) => JSON.parse(l));
    expect(answers).toHaveLength(bad.length);
    for (const a of answers) {
      expect(a.ok).toBe(false);
      expect(typeof a.error).toBe('string');
    }
    expect(answers[3].error).toMatch(/atOp/);
    expect(answers[5].error).toMatch(/kind/);
    expect((await d.client.status()).ok).toBe(true);
    await expect(d.client.image(join(d.mountpoint, 'inside'))).rejects.toThrow(ControlError);
    await d.client.arm({ atOp: 5, timing: 'before' });
    expect((await d.client.status()).armed).toEqual({ atOp: 5, timing: 'before' });
    expect(await d.client.waitFrozen(50)).toEqual({ frozen: false });
  });
});

describe('cleanup', () => {
  it('after SIGKILL of the daemon, the next powercut mount on the same mountpoint works', async () => {
    const mnt = join(work, 'm2');
    const sock = join(work, 'c2.sock');
    const d = await startDaemon({ mountpoint: mnt, socketPath: sock });
    writeFileSync(join(mnt, 'f'), 'x');
    d.kill();
    await new Promise((r) => setTimeout(r, 300));
    // auto_unmount usually removes the mount already; either way the next mount must work.
    const mount = execa(process.execPath, [cli, 'mount', mnt, '--socket', sock], { reject: false, timeout: 30_000 });
    try {
      await new Promise<void>((res, rej) => {
        const t = setTimeout(() => rej(new Error('powercut mount printed nothing in 15 s')), 15_000);
        mount.stdout!.once('data', (line: Buffer) => {
          clearTimeout(t);
          expect(JSON.parse(line.toString()).event).toBe('mounted');
          res();
        });
      });
      writeFileSync(join(mnt, 'g'), 'works');
      expect(readFileSync(join(mnt, 'g'), 'utf8')).toBe('works');
      const status = await execa(process.execPath, [cli, 'ctl', '--socket', sock, 'status'], { reject: false, timeout: 15_000 });
      expect(status.exitCode).toBe(0);
      expect(JSON.parse(status.stdout).opCount).toBeGreaterThan(0);
    } finally {
      mount.kill('SIGTERM');
      await mount;
    }
    expect(await isMounted(mnt)).toBe(false);
  });
});

describe('a killed run\'s mounts', () => {
  it('a later temp daemon of the same label unmounts the dead mounts left in a random folder, and removes the folder; a live mount stays', async () => {
    const folder = mkdtempSync(join(tmpdir(), 'powercut-sweep-test-'));
    const dead = join(folder, 'mnt1');
    mkdirSync(dead);
    // A FUSE mount whose daemon is gone (ENOTCONN): its device closed as a SIGKILL closes it, no auto-unmount.
    await execa('python3', ['-c', [
      'import os, subprocess, sys',
      "fd = os.open('/dev/fuse', os.O_RDWR)",
      "subprocess.run(['mount', '-i', '-t', 'fuse', '-o', 'fd=%d,rootmode=40000,user_id=0,group_id=0' % fd, 'powercut-dead', sys.argv[1]], pass_fds=[fd], check=True)",
    ].join('\n'), dead], { timeout: 15_000 });
    expect(await isMounted(dead)).toBe(true);
    const other = await startTempDaemon('sweep-test');
    try {
      expect(await isMounted(dead)).toBe(false);
      expect(existsSync(folder)).toBe(false);
      // The first daemon's live mount survives the second's sweep.
      const second = await startTempDaemon('sweep-test');
      await second.stop();
      expect(await isMounted(other.daemon.mountpoint)).toBe(true);
    } finally {
      await other.stop();
    }
  });
});

describe('startDaemon failing after the mount', () => {
  it('stops the daemon and leaves no mount when the first line is not the mounted event', async () => {
    // A preload makes the real daemon print a bad line just before its "mounted" line, i.e. after it mounted.
    const preload = join(work, 'bad-first-line.cjs');
    writeFileSync(preload, `const log = console.log; console.log = (...a) => { console.log = log; process.stdout.write('not json\\n'); log(...a); };\n`);
    const mnt = join(work, 'm4');
    const before = process.env.NODE_OPTIONS;
    process.env.NODE_OPTIONS = `${before ?? ''} --require ${preload}`.trim();
    let error: unknown;
    try {
      await startDaemon({ mountpoint: mnt, socketPath: join(work, 'c4.sock') });
    } catch (e) {
      error = e;
    } finally {
      if (before === undefined) delete process.env.NODE_OPTIONS;
      else process.env.NODE_OPTIONS = before;
    }
    expect(error).toBeInstanceOf(Error);
    expect((error as Error).message).toMatch(/not json/);
    expect(await isMounted(mnt)).toBe(false);
    const daemons = await execa('pgrep', ['-f', `fusefs/daemon.js --mountpoint ${mnt} `], { reject: false });
    expect(daemons.stdout.trim()).toBe('');
  });
});

describe('powercut ctl', () => {
  it('exits 2 on usage errors, 1 on an error answer, 0 on ok', async () => {
    const d = await startDaemon({ mountpoint: join(work, 'm3'), socketPath: join(work, 'c3.sock') });
    started.push(d);
    const ctl = (...args: string[]) => execa(process.execPath, [cli, 'ctl', '--socket', d.socketPath, ...args], { reject: false, timeout: 15_000 });
    expect((await ctl('arm')).exitCode).toBe(2);
    expect((await ctl('arm', '--at-op', 'x')).exitCode).toBe(2);
    expect((await ctl('crash', '--policy', 'gentle')).exitCode).toBe(2);
    expect((await ctl('status', '--seed', '1')).exitCode).toBe(2);
    expect((await ctl('frobnicate')).exitCode).toBe(2);
    const ok = await ctl('arm', '--at-op', '3', '--kind', 'fsync', '--path', '**/page.*', '--timing', 'after');
    expect(ok.exitCode).toBe(0);
    expect(JSON.parse((await ctl('status')).stdout).armed).toEqual({ atOp: 3, kind: 'fsync', path: '**/page.*', timing: 'after' });
    const passed = await ctl('image', '--out', join(d.mountpoint, 'x'));
    expect(passed.exitCode).toBe(1);
    expect(JSON.parse(passed.stdout).ok).toBe(false);
    expect((await ctl('crash', '--policy', 'torn', '--seed', '7')).exitCode).toBe(0);
    expect((await execa(process.execPath, [cli, 'ctl', '--socket', join(work, 'nothing.sock'), 'status'], { reject: false })).exitCode).toBe(1);
  });

  it('drives a cluster by node: a crash point on one node, a freeze released without a cut, a power cut of some nodes, a fault on one node', async () => {
    const d = await startDaemon({ mountpoint: ['c5-0', 'c5-1', 'c5-2'].map((m) => join(work, m)), socketPath: join(work, 'c5.sock') });
    started.push(d);
    const ctl = (...args: string[]) => execa(process.execPath, [cli, 'ctl', '--socket', d.socketPath, ...args], { reject: false, timeout: 15_000 });
    const [m0, m1, m2] = d.mountpoints;
    expect((await ctl('arm', '--at-op', '1', '--node', '2')).exitCode).toBe(0);
    writeFileSync(join(m0, 'a'), 'node 0 is not counted');
    const held = execa('sh', ['-c', `echo x > ${join(m2, 'b')}`], { reject: false, timeout: 15_000 });
    expect(JSON.parse((await ctl('wait-frozen', '--timeout-ms', '5000')).stdout)).toMatchObject({ frozen: true });
    expect((await ctl('release')).exitCode).toBe(0);
    expect((await held).exitCode).toBe(0);
    writeFileSync(join(m1, 'c'), 'unsynced on node 1');
    expect(JSON.parse((await ctl('crash', '--nodes', '0,1')).stdout)).toMatchObject({ ok: true, nodes: [0, 1] });
    expect(statSync(join(m2, 'b')).isFile(), 'node 2 kept its power and its unsynced file').toBe(true);
    expect(() => statSync(join(m1, 'c')), 'node 1 lost its unsynced file').toThrow();
    expect((await ctl('fault', '--type', 'fsync-eio', '--path', '**', '--node', '1')).exitCode).toBe(0);
    const nodes = JSON.parse((await ctl('status')).stdout).nodes as { node: number; faults: unknown[]; crashes: number }[];
    expect(nodes.map((n) => [n.node, n.faults.length, n.crashes])).toEqual([[0, 0, 1], [1, 1, 1], [2, 0, 0]]);
    const bad = await ctl('crash', '--nodes', 'one');
    expect(bad.exitCode).toBe(2);
    expect(bad.stderr).toContain("--nodes must list node indexes separated by commas (0,2), got 'one'");
    expect((await ctl('release', '--node', '1')).exitCode, 'release arms a point only with --at-op').toBe(2);
  });
});
