// Write-behind on a real mount: the writes the FUSE thread answers itself (write-behind.ts) are
// numbered in the order the program made them, among the requests JavaScript handles; a crash point
// on a write still holds exactly that write; a full disk answers as it did without write-behind; a
// reset's forgotten handles get EBADF; a write's mtime is the time it was answered, not the time the
// model got to it; and every stat and read sees every write answered before it. Each test first
// checks that the writes it makes did go behind (status.writesBehind), or it would prove nothing.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { closeSync, fstatSync, fsyncSync, mkdtempSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { startDaemon, type DaemonHandle } from '../src/harness/daemon-process.js';
import { fsyncPath, requirePatchedBinding } from './testing.js';

let work: string;
let d: DaemonHandle;
let mnt: string;

beforeAll(async () => {
  requirePatchedBinding('write-behind');
  work = mkdtempSync(join(tmpdir(), 'powercut-write-behind-'));
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

/** Writes the binding answered itself since the daemon started. */
async function behind(): Promise<number> {
  const n = (await d.client.status()).writesBehind;
  if (n === undefined) throw new Error('the daemon reports no writesBehind: write-behind is off (the patched binding did not load?)');
  return n;
}

const record = (i: number, bytes: number) => Buffer.alloc(bytes, 0x41 + (i % 26));

describe('write-behind', () => {
  it('numbers the writes answered in the FUSE thread in program order, among the other requests, and a cut keeps exactly the fsynced ones', async () => {
    const before = await behind();
    const p = join(mnt, 'log');
    const fd = openSync(p, 'w');
    for (let i = 0; i < 20; i++) writeSync(fd, record(i, 1024));
    fsyncSync(fd);
    for (let i = 20; i < 25; i++) writeSync(fd, record(i, 1024));
    // fstat goes to JavaScript, which first applies every write answered before it.
    expect(fstatSync(fd).size).toBe(25 * 1024);
    closeSync(fd);
    expect(await behind() - before).toBe(25);
    const trace = await d.client.trace();
    expect(trace.map((e) => e.kind)).toEqual(['create', ...Array(20).fill('write'), 'fsync', ...Array(5).fill('write')]);
    expect(trace.filter((e) => e.kind === 'write').map((e) => e.offset)).toEqual(Array.from({ length: 25 }, (_, i) => i * 1024));
    expect(trace.every((e) => e.state === 'applied' && e.result === 0)).toBe(true);
    expect(readFileSync(p)).toEqual(Buffer.concat(Array.from({ length: 25 }, (_, i) => record(i, 1024))));
    fsyncPath(mnt); // the name too
    await d.client.crash();
    expect(readFileSync(p)).toEqual(Buffer.concat(Array.from({ length: 20 }, (_, i) => record(i, 1024))));
  });

  for (const timing of ['before', 'after'] as const) {
    it(`a crash point on the Nth write (timing ${timing}) holds exactly that write, though the writes before it went behind`, async () => {
      const p = join(mnt, 'held');
      const fd = openSync(p, 'w');
      fsyncSync(fd);
      closeSync(fd);
      fsyncPath(mnt);
      const before = await behind();
      // The 100th write from now: counted among writes, or (timing after) among every request.
      const nth = 100;
      const sinceReset = (await d.client.status()).opCount;
      await d.client.arm(timing === 'before' ? { atOp: nth, kind: 'write', timing } : { atOp: sinceReset + nth, timing });
      const script = `const fs=require('fs');const fd=fs.openSync(${JSON.stringify(p)},'a');
for(let i=0;i<200;i++){fs.writeSync(fd,Buffer.alloc(256,65+(i%26)));}fs.writeSync(1,'not held\\n');`;
      const writer = execa(process.execPath, ['-e', script], { reject: false, timeout: 20_000 });
      const frozen = await d.client.waitFrozen(10_000);
      expect(frozen).toEqual({ frozen: true, frozenAt: expect.any(Number) });
      const trace = await d.client.trace();
      const writes = trace.filter((e) => e.kind === 'write');
      // The point is the 100th write: numbered, applied only with timing 'after', never answered.
      expect(writes.length).toBeGreaterThanOrEqual(nth);
      expect(writes[nth - 1].op).toBe(frozen.frozenAt);
      expect(writes[nth - 1].result).toBe(timing === 'after' ? 0 : undefined);
      expect(writes.slice(0, nth - 1).every((e) => e.state === 'applied' && e.result === 0)).toBe(true);
      expect(await behind() - before).toBeGreaterThanOrEqual(nth / 2);
      writer.kill('SIGKILL');
      await d.client.crash('keep-all');
      const result = await writer;
      expect(result.stdout).toBe('');
      const kept = timing === 'after' ? nth : nth - 1;
      expect(readFileSync(p)).toEqual(Buffer.concat(Array.from({ length: kept }, (_, i) => Buffer.alloc(256, 65 + (i % 26)))));
    });
  }

  it('a disk that fills up answers as without write-behind: a short write at the boundary, then ENOSPC', async () => {
    const p = join(mnt, 'full');
    const fd = openSync(p, 'w');
    writeSync(fd, record(0, 4096));
    await d.client.fault({ type: 'enospc', afterBytes: 3 * 4096 + 100 });
    const before = await behind();
    const written: number[] = [];
    let error = '';
    for (let i = 0; i < 6 && !error; i++) {
      try {
        written.push(writeSync(fd, record(i, 4096)));
      } catch (e) {
        error = (e as NodeJS.ErrnoException).code ?? String(e);
      }
    }
    closeSync(fd);
    expect(written).toEqual([4096, 4096, 4096, 100]);
    expect(error).toBe('ENOSPC');
    expect(await behind() - before).toBeGreaterThanOrEqual(2);
    expect(readFileSync(p).length).toBe(4 * 4096 + 100);
  });

  it("a reset forgets the handles: a write on one opened before it gets EBADF, one opened after it goes behind", async () => {
    const p = join(mnt, 'f');
    const old = openSync(p, 'w');
    writeSync(old, 'x');
    await d.client.reset();
    expect(() => writeSync(old, 'y')).toThrow(/EBADF/);
    closeSync(old);
    const before = await behind();
    const fd = openSync(p, 'w');
    for (let i = 0; i < 10; i++) writeSync(fd, 'z');
    closeSync(fd);
    expect(await behind() - before).toBe(10);
    expect(readFileSync(p, 'utf8')).toBe('z'.repeat(10));
  });

  it('a write answered behind has the mtime of its answer, not of the moment the model applied it', async () => {
    const p = join(mnt, 't');
    const fd = openSync(p, 'w');
    const before = await behind();
    writeSync(fd, 'one write: below the count that wakes JavaScript, applied only at the fstat');
    const answered = Date.now();
    await new Promise((r) => setTimeout(r, 50));
    const st = fstatSync(fd);
    closeSync(fd);
    expect(await behind() - before).toBe(1);
    expect(st.mtimeMs).toBeLessThanOrEqual(answered);
  });

  it('writers in several processes at once: each file gets its writes in its program order, and the fsynced ones survive a cut', async () => {
    const files = [0, 1, 2, 3].map((k) => join(mnt, `w${k}`));
    const script = (f: string, k: number) => `const fs=require('fs');const fd=fs.openSync(${JSON.stringify(f)},'w');
for(let i=0;i<100;i++){const b=Buffer.alloc(300,97+${k});b.writeUInt32LE(i,0);fs.writeSync(fd,b);}fs.fsyncSync(fd);`;
    const before = await behind();
    const results = await Promise.all(files.map((f, k) => execa(process.execPath, ['-e', script(f, k)], { reject: false, timeout: 20_000 })));
    expect(results.map((r) => r.exitCode)).toEqual([0, 0, 0, 0]);
    expect(await behind() - before).toBeGreaterThan(0);
    const trace = await d.client.trace();
    for (const f of files) {
      // In the file's order, one after the other (the kernel splits a write that crosses a page it does not hold whole).
      const rel = `/${f.split('/').pop()}`;
      const writes = trace.filter((e) => e.kind === 'write' && e.path === rel);
      expect(writes.map((e) => e.offset)).toEqual(writes.map((_, i) => (i === 0 ? 0 : writes[i - 1].offset! + writes[i - 1].length!)));
      expect(writes.reduce((sum, e) => sum + e.length!, 0)).toBe(100 * 300);
    }
    fsyncPath(mnt);
    await d.client.crash();
    for (const [k, f] of files.entries()) {
      const data = readFileSync(f);
      expect(data.length).toBe(100 * 300);
      for (let i = 0; i < 100; i++) expect([data.readUInt32LE(i * 300), data[i * 300 + 299]]).toEqual([i, 97 + k]);
    }
  });
});
