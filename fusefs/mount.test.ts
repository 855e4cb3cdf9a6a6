// Real-mount tests (no mocks): the daemon in its own process, the workload from this process or a
// child killed with SIGKILL.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  chmodSync, chownSync, closeSync, existsSync, fdatasyncSync, fsyncSync, linkSync, lstatSync, mkdirSync, mkdtempSync, openSync,
  readFileSync, readSync, readdirSync, renameSync, rmSync, statSync, unlinkSync, utimesSync, writeFileSync, writeSync,
} from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { startDaemon, type DaemonHandle } from '../src/harness/daemon-process.js';
import { DEFAULT_STATE_CAPS } from './crash-states.js';
import { fsyncPath, requireRoot } from './testing.js';

let work: string;
let d: DaemonHandle;
let mnt: string;

function writeFsynced(p: string, data: string): void {
  const fd = openSync(p, 'w');
  writeSync(fd, data);
  fsyncSync(fd);
  closeSync(fd);
}

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'powercut-mount-'));
  chmodSync(work, 0o755); // another user's process must reach the mount
  mnt = join(work, 'mnt');
  d = await startDaemon({ mountpoint: mnt, socketPath: join(work, 'ctl.sock') });
});
afterAll(async () => {
  await d?.stop();
  rmSync(work, { recursive: true, force: true });
});
beforeEach(async () => {
  await d.client.reset();
});

describe('powercut fs on a real mount', () => {
  it('keeps a file written and fsynced in a fsynced directory', async () => {
    writeFsynced(join(mnt, 'a'), 'durable');
    fsyncPath(mnt);
    await d.client.crash();
    expect(readFileSync(join(mnt, 'a'), 'utf8')).toBe('durable');
  });

  it('loses data written and not fsynced', async () => {
    writeFsynced(join(mnt, 'a'), 'old');
    fsyncPath(mnt);
    writeFileSync(join(mnt, 'a'), 'new, never fsynced');
    expect(readFileSync(join(mnt, 'a'), 'utf8')).toBe('new, never fsynced');
    await d.client.crash();
    expect(readFileSync(join(mnt, 'a'), 'utf8')).toBe('old');
  });

  it('loses a file created, written and fsynced in a directory that was not fsynced', async () => {
    mkdirSync(join(mnt, 'q'));
    fsyncPath(mnt);
    writeFsynced(join(mnt, 'q', 'page.1'), 'data');
    await d.client.crash();
    expect(readdirSync(join(mnt, 'q'))).toEqual([]);
  });

  it('keeps it when the directory was fsynced too', async () => {
    mkdirSync(join(mnt, 'q'));
    fsyncPath(mnt);
    writeFsynced(join(mnt, 'q', 'page.1'), 'data');
    fsyncPath(join(mnt, 'q'));
    await d.client.crash();
    expect(readFileSync(join(mnt, 'q', 'page.1'), 'utf8')).toBe('data');
  });

  it('reverts a rename of x.tmp over x without a directory fsync', async () => {
    writeFsynced(join(mnt, 'x'), 'old');
    fsyncPath(mnt);
    writeFsynced(join(mnt, 'x.tmp'), 'new');
    renameSync(join(mnt, 'x.tmp'), join(mnt, 'x'));
    await d.client.crash();
    expect(readFileSync(join(mnt, 'x'), 'utf8')).toBe('old');
    expect(existsSync(join(mnt, 'x.tmp'))).toBe(false);
  });

  it('brings back a file unlinked without a directory fsync', async () => {
    writeFsynced(join(mnt, 'a'), 'back');
    fsyncPath(mnt);
    unlinkSync(join(mnt, 'a'));
    await d.client.crash();
    expect(readFileSync(join(mnt, 'a'), 'utf8')).toBe('back');
  });

  it('arm + SIGKILL of a writer blocked at the crash point, then crash, gives the expected image', async () => {
    writeFsynced(join(mnt, 'log'), 'A');
    fsyncPath(mnt);
    // The writer appends B and fsyncs, then appends C and fsyncs; cut before the second fsync.
    const script = `const fs=require('fs');const fd=fs.openSync(${JSON.stringify(join(mnt, 'log'))},'a');
fs.writeSync(fd,'B');fs.fsyncSync(fd);fs.writeSync(1,'B durable\\n');fs.writeSync(fd,'C');fs.fsyncSync(fd);fs.writeSync(1,'C durable\\n');`;
    // fsyncs of /log since reset: 1 = the setup above, 2 = B, 3 = C.
    await d.client.arm({ atOp: 3, kind: 'fsync', path: '/log', timing: 'before' });
    const writer = execa(process.execPath, ['-e', script], { reject: false, timeout: 20_000 });
    const frozen = await d.client.waitFrozen(10_000);
    expect(frozen.frozen).toBe(true);
    expect((await d.client.status()).frozen).toBe(true);
    writer.kill('SIGKILL');
    await d.client.crash();
    const result = await writer;
    expect(result.signal).toBe('SIGKILL');
    expect(result.stdout.trim()).toBe('B durable');
    expect(readFileSync(join(mnt, 'log'), 'utf8')).toBe('AB');
    const image = join(work, 'image-arm');
    await d.client.image(image);
    expect(await readFile(join(image, 'log'), 'utf8')).toBe('AB');
    expect((await d.client.status()).opCount).toBe(0);
  });

  it('fsync EIO drops the data from what can become durable while it stays visible', async () => {
    writeFsynced(join(mnt, 'f'), '');
    fsyncPath(mnt);
    await d.client.fault({ type: 'fsync-eio', path: '/f', count: 1 });
    const fd = openSync(join(mnt, 'f'), 'r+');
    writeSync(fd, 'lost');
    expect(() => fsyncSync(fd)).toThrow(/EIO/);
    expect(readFileSync(join(mnt, 'f'), 'utf8')).toBe('lost');
    fsyncSync(fd); // succeeds, persists nothing
    closeSync(fd);
    await d.client.crash();
    expect(readFileSync(join(mnt, 'f'))).toEqual(Buffer.alloc(4));
  });

  it('ENOSPC after N bytes, read EIO and bit flips', async () => {
    await d.client.fault({ type: 'enospc', afterBytes: 10 });
    const fd = openSync(join(mnt, 'g'), 'w');
    expect(writeSync(fd, 'x'.repeat(8))).toBe(8);
    expect(writeSync(fd, 'y'.repeat(8))).toBe(2); // short write up to the budget
    expect(() => writeSync(fd, 'z')).toThrow(/ENOSPC/);
    closeSync(fd);
    await d.client.clearFaults();
    writeFsynced(join(mnt, 'h'), '\0'.repeat(16));
    await d.client.fault({ type: 'bitflip', path: '/h', offset: 3, bit: 1 });
    expect(readFileSync(join(mnt, 'h'))[3]).toBe(2);
    await d.client.fault({ type: 'read-eio', path: '/h', offset: 0, length: 4 });
    expect(() => readFileSync(join(mnt, 'h'))).toThrow(/EIO/);
  });

  it('read faults hit only bytes that still hold their durable content, not bytes rewritten since the last fsync', async () => {
    writeFsynced(join(mnt, 'r'), 'durable!');
    await d.client.fault({ type: 'bitflip', path: '/r', offset: 1, bit: 0 });
    await d.client.fault({ type: 'read-eio', path: '/r', offset: 6, length: 2 });
    const fd = openSync(join(mnt, 'r'), 'r+');
    try {
      writeSync(fd, 'DURABLE?', 0); // live now differs from the durable copy in every faulted byte
      expect(readFileSync(join(mnt, 'r'), 'utf8')).toBe('DURABLE?');
      writeSync(fd, 'durable!', 0); // live equals durable again: the faults apply
      expect(() => readFileSync(join(mnt, 'r'))).toThrow(/EIO/);
      await d.client.clearFaults();
      await d.client.fault({ type: 'bitflip', path: '/r', offset: 1, bit: 0 });
      expect(readFileSync(join(mnt, 'r'), 'utf8')).toBe('dtrable!');
      writeSync(fd, 'grown', 8); // bytes past the durable size are never durable content
      await d.client.fault({ type: 'bitflip', path: '/r', offset: 9, bit: 0 });
      expect(readFileSync(join(mnt, 'r'), 'utf8')).toBe('dtrable!grown');
    } finally {
      closeSync(fd);
    }
  });

  it('records every mutating request in the trace', async () => {
    writeFsynced(join(mnt, 't'), 'abc');
    const kinds = (await d.client.trace()).map((e) => e.kind);
    expect(kinds).toEqual(['create', 'write', 'fsync']);
  });

  it('reset while frozen remounts: a process still running on the old mount never reaches the new filesystem', async () => {
    // The writer works relative to its cwd on the mount, blocks in an fsync at the crash point and is
    // not killed; after the reset it tries to go on.
    const script = `const fs=require('fs');process.chdir(${JSON.stringify(mnt)});const fd=fs.openSync('log','w');fs.writeSync(fd,'A');
let r='';try{fs.fsyncSync(fd);r+='fsync ok;'}catch(e){r+='fsync '+e.code+';'}
try{fs.writeFileSync('leak','x');r+='leak written'}catch(e){r+='leak '+e.code}
fs.writeSync(1,r);`;
    await d.client.arm({ atOp: 1, kind: 'fsync', path: '/log', timing: 'before' });
    const writer = execa(process.execPath, ['-e', script], { reject: false, timeout: 20_000 });
    expect((await d.client.waitFrozen(10_000)).frozen).toBe(true);
    await d.client.reset();
    const result = await writer;
    expect(result.exitCode).toBe(0);
    expect(result.stdout).not.toMatch(/fsync ok|leak written/);
    expect(readdirSync(mnt)).toEqual([]);
    const status = await d.client.status();
    expect([status.opCount, status.frozen, status.armed]).toEqual([0, false, null]);
    writeFileSync(join(mnt, 'after'), 'works');
    expect(readFileSync(join(mnt, 'after'), 'utf8')).toBe('works');
  });

  it('a crash during a recorded run ends the recording; a crash while recovering a loaded state keeps the states', async () => {
    await d.client.reset(true);
    writeFsynced(join(mnt, 'a'), 'x');
    await d.client.crash();
    writeFileSync(join(mnt, 'after-crash'), 'not the run');
    await expect(d.client.states(['lose-unsynced'], DEFAULT_STATE_CAPS)).rejects.toThrow(/ended early: a crash came after request \d+ of the recorded run/);

    await d.client.reset(true);
    writeFsynced(join(mnt, 'b'), 'y');
    fsyncPath(mnt);
    const { states } = await d.client.states(['lose-unsynced'], DEFAULT_STATE_CAPS);
    const last = states[states.length - 1].id;
    await d.client.loadState(last);
    expect(readFileSync(join(mnt, 'b'), 'utf8')).toBe('y');
    writeFileSync(join(mnt, 'recovery'), 'z');
    await d.client.crash();
    await d.client.loadState(last);
    expect(readdirSync(mnt)).toEqual(['b']);
  });

  it('reset empties the filesystem and zeroes the counters', async () => {
    writeFileSync(join(mnt, 'z'), 'z');
    await d.client.reset();
    expect(readdirSync(mnt)).toEqual([]);
    expect((await d.client.status()).opCount).toBe(0);
  });

  it('a power cut loses a chmod that was not fsynced and keeps one that was', async () => {
    writeFsynced(join(mnt, 'a'), 'x');
    fsyncPath(mnt);
    chmodSync(join(mnt, 'a'), 0o600);
    expect(statSync(join(mnt, 'a')).mode & 0o7777).toBe(0o600);
    await d.client.crash();
    expect(statSync(join(mnt, 'a')).mode & 0o7777).toBe(0o644);
    chmodSync(join(mnt, 'a'), 0o600);
    fsyncPath(join(mnt, 'a'));
    await d.client.crash();
    expect(statSync(join(mnt, 'a')).mode & 0o7777).toBe(0o600);
  });

  it('fdatasync saves data but not a chmod or new times; keep-all keeps them', async () => {
    writeFsynced(join(mnt, 'a'), 'x');
    fsyncPath(mnt);
    const before = statSync(join(mnt, 'a'));
    const fd = openSync(join(mnt, 'a'), 'r+');
    writeSync(fd, 'y', 1);
    chmodSync(join(mnt, 'a'), 0o600);
    fdatasyncSync(fd);
    closeSync(fd);
    await d.client.crash();
    const after = statSync(join(mnt, 'a'));
    expect(readFileSync(join(mnt, 'a'), 'utf8')).toBe('xy');
    expect([after.mode & 0o7777, after.mtimeMs]).toEqual([0o644, before.mtimeMs]);
    chmodSync(join(mnt, 'a'), 0o640);
    utimesSync(join(mnt, 'a'), 1_000_000_000, 2_000_000_000);
    await d.client.crash('keep-all');
    const kept = statSync(join(mnt, 'a'));
    expect([kept.mode & 0o7777, kept.atimeMs, kept.mtimeMs]).toEqual([0o640, 1e12, 2e12]);
  });

  it('files another user creates are theirs; the kernel enforces modes; the owner survives an fsync', async () => {
    requireRoot('a file created by another user (a process started as uid 65534)');
    chmodSync(mnt, 0o777);
    writeFsynced(join(mnt, 'root-only'), 'secret');
    chmodSync(join(mnt, 'root-only'), 0o600);
    fsyncPath(mnt);
    const script = `const fs=require('fs');const p=${JSON.stringify(mnt)};
const fd=fs.openSync(p+'/mine','w',0o640);fs.writeSync(fd,'mine');fs.fsyncSync(fd);fs.closeSync(fd);
const d=fs.openSync(p,'r');fs.fsyncSync(d);fs.closeSync(d);
let r='';try{fs.readFileSync(p+'/root-only');r='read'}catch(e){r=e.code}
try{fs.chownSync(p+'/mine',0,0);r+=' chown'}catch(e){r+=' '+e.code}
fs.writeSync(1,r);`;
    const child = await execa(process.execPath, ['-e', script], { uid: 65534, gid: 65534, reject: false, timeout: 20_000 });
    expect(child.stderr).toBe('');
    expect(child.stdout).toBe('EACCES EPERM');
    await d.client.crash();
    const s = statSync(join(mnt, 'mine'));
    expect([s.uid, s.gid, s.mode & 0o7777]).toEqual([65534, 65534, 0o640]);
    chownSync(join(mnt, 'mine'), 1234, -1); // root may; not fsynced, so lost
    await d.client.crash();
    expect(statSync(join(mnt, 'mine')).uid).toBe(65534);
  });

  it('hard links report one inode number and the count of names, before and after a power cut', async () => {
    writeFsynced(join(mnt, 'a'), 'x');
    linkSync(join(mnt, 'a'), join(mnt, 'b'));
    mkdirSync(join(mnt, 'd'));
    mkdirSync(join(mnt, 'd', 'e'));
    fsyncPath(mnt);
    fsyncPath(join(mnt, 'd'));
    const check = () => {
      const [a, b] = [statSync(join(mnt, 'a')), statSync(join(mnt, 'b'))];
      expect([a.ino === b.ino, a.nlink, statSync(join(mnt, 'd')).nlink, statSync(mnt).nlink]).toEqual([true, 2, 3, 3]);
    };
    check();
    const ino = statSync(join(mnt, 'a')).ino;
    await d.client.crash();
    check();
    expect(statSync(join(mnt, 'a')).ino).toBe(ino);
  });

  it('fifos, sockets and device nodes need a directory fsync like any name; the image writes fifos and devices, skips sockets', async () => {
    requireRoot('a device node (mknod)');
    const bind = async (name: string) => {
      const server = createServer();
      await new Promise<void>((resolve, reject) => server.once('error', reject).listen(join(mnt, name), resolve));
      return () => new Promise<void>((resolve) => server.close(() => resolve()));
    };
    await execa('mkfifo', [join(mnt, 'lost-fifo')]);
    const closeLost = await bind('lost-sock');
    await execa('mknod', [join(mnt, 'lost-null'), 'c', '1', '3']);
    await d.client.crash();
    await closeLost();
    for (const name of ['lost-fifo', 'lost-sock', 'lost-null']) expect(existsSync(join(mnt, name)), `${name}, named without a directory fsync`).toBe(false);
    await execa('mkfifo', [join(mnt, 'fifo')]);
    const close = await bind('sock');
    await execa('mknod', [join(mnt, 'null'), 'c', '1', '3']);
    fsyncPath(mnt);
    const image = join(work, 'image-special');
    await d.client.image(image);
    await close();
    await d.client.crash();
    expect(lstatSync(join(mnt, 'fifo')).isFIFO()).toBe(true);
    expect(lstatSync(join(mnt, 'sock')).isSocket()).toBe(true);
    expect(lstatSync(join(image, 'fifo')).isFIFO()).toBe(true);
    expect(existsSync(join(image, 'sock'))).toBe(false);
    const dev = lstatSync(join(mnt, 'null'));
    expect([dev.isCharacterDevice(), dev.rdev]).toEqual([true, lstatSync('/dev/null').rdev]);
    expect(lstatSync(join(image, 'null')).rdev).toBe(dev.rdev);
  });

  it('an open file stays readable, writable and fsyncable after its last name is gone', () => {
    const fd = openSync(join(mnt, 'tmp'), 'w+');
    try {
      unlinkSync(join(mnt, 'tmp'));
      expect(writeSync(fd, 'still here', 0)).toBe(10);
      fsyncSync(fd);
      const buf = Buffer.alloc(10);
      expect(readSync(fd, buf, 0, 10, 0)).toBe(10);
      expect(buf.toString()).toBe('still here');
    } finally {
      closeSync(fd);
    }
  });
});
