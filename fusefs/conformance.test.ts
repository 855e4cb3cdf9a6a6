// Errno conformance on a real mount, call by call, for what storage engines meet and ext4 answers
// (the values asserted are ext4's, checked by hand on the host's ext4): fallocate in every mode the
// kernel passes to FUSE, sparse files charged by blocks, EFBIG past the largest file, fstat of an
// open file after unlink, ENAMETOOLONG for a name over 255 bytes from every path call, and what a
// power cut keeps of an unsynced fallocate.
// fallocate runs through a small C caller (testing.ts): Node has no fallocate call.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  chmodSync, closeSync, fstatSync, fsyncSync, linkSync, mkdirSync, mkdtempSync, openSync, readFileSync, readSync, renameSync, rmdirSync, rmSync, statSync, truncateSync,
  unlinkSync, writeFileSync, writeSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { startDaemon, type DaemonHandle } from '../src/harness/daemon-process.js';
import { buildFallocateCall, requirePatchedBinding } from './testing.js';

const TOOL_TIMEOUT_MS = 10_000;
let work: string;
let d: DaemonHandle;
let mnt: string;
let fallocateCall: string;

beforeAll(async () => {
  requirePatchedBinding('fallocate on the mount (the patched binding adds it)');
  work = mkdtempSync(join(tmpdir(), 'powercut-conformance-'));
  chmodSync(work, 0o755);
  fallocateCall = buildFallocateCall(work);
  mnt = join(work, 'mnt');
  d = await startDaemon({ mountpoint: mnt, socketPath: join(work, 'ctl.sock') });
});
afterAll(async () => {
  await d?.stop();
  if (work) rmSync(work, { recursive: true, force: true });
});
beforeEach(async () => {
  await d.client.reset();
});

const KEEP_SIZE = 0x01;
const PUNCH_HOLE = 0x02 | KEEP_SIZE;
const COLLAPSE_RANGE = 0x08;
const ZERO_RANGE = 0x10;
const INSERT_RANGE = 0x20;

/** fallocate(2) on `file` (no fsync): 'ok', or its strerror. */
async function fallocate(file: string, mode: number, offset: number, length: number): Promise<string> {
  const r = await execa(fallocateCall, [file, String(mode), String(offset), String(length)], { timeout: TOOL_TIMEOUT_MS });
  return String(r.stdout).trim();
}

function errnoOf(f: () => unknown): string {
  try {
    f();
    return 'ok';
  } catch (e) {
    return (e as NodeJS.ErrnoException).code ?? String(e);
  }
}

function fsynced(path: string, data: Buffer): void {
  const fd = openSync(path, 'w');
  try {
    writeSync(fd, data);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  const dir = openSync(mnt, 'r');
  try {
    fsyncSync(dir);
  } finally {
    closeSync(dir);
  }
}

const pattern = (n: number) => Buffer.from(Array.from({ length: n }, (_, i) => (i % 251) + 1));
const blocksOf = (p: string) => statSync(p).blocks;

describe('fallocate on the mount', () => {
  it('mode 0 and KEEP_SIZE allocate (st_blocks), mode 0 grows the size with zeros', async () => {
    const f = join(mnt, 'f');
    writeFileSync(f, 'hello');
    expect(await fallocate(f, 0, 0, 8192)).toBe('ok');
    expect(statSync(f).size).toBe(8192);
    expect(blocksOf(f)).toBe(16);
    expect(readFileSync(f)).toEqual(Buffer.concat([Buffer.from('hello'), Buffer.alloc(8187)]));
    expect(await fallocate(f, KEEP_SIZE, 8192, 4096)).toBe('ok');
    expect(statSync(f).size).toBe(8192);
    expect(blocksOf(f)).toBe(24);
  });

  it('PUNCH_HOLE zeros the range and frees its whole blocks; ZERO_RANGE zeros it, with or without KEEP_SIZE', async () => {
    const f = join(mnt, 'f');
    writeFileSync(f, pattern(16384));
    expect(await fallocate(f, PUNCH_HOLE, 100, 8192)).toBe('ok');
    const punched = pattern(16384).fill(0, 100, 8292);
    expect(readFileSync(f)).toEqual(punched);
    expect(blocksOf(f)).toBe(24); // block 1 freed; blocks 0 and 2 hold data still
    expect(await fallocate(f, ZERO_RANGE | KEEP_SIZE, 16000, 1000)).toBe('ok');
    expect(statSync(f).size).toBe(16384);
    expect(await fallocate(f, ZERO_RANGE, 16000, 1000)).toBe('ok');
    expect(statSync(f).size).toBe(17000);
    expect(readFileSync(f)).toEqual(Buffer.concat([punched.subarray(0, 16000), Buffer.alloc(1000)]));
  });

  it('COLLAPSE_RANGE and INSERT_RANGE: EOPNOTSUPP (the kernel\'s FUSE never passes them on); UNSHARE_RANGE and a punch without KEEP_SIZE too; EINVAL for a negative offset', async () => {
    const f = join(mnt, 'f');
    writeFileSync(f, pattern(16384));
    expect(await fallocate(f, COLLAPSE_RANGE, 0, 4096)).toBe('Operation not supported');
    expect(await fallocate(f, INSERT_RANGE, 0, 4096)).toBe('Operation not supported');
    expect(await fallocate(f, PUNCH_HOLE & ~KEEP_SIZE, 0, 4096)).toBe('Operation not supported'); // PUNCH_HOLE needs KEEP_SIZE
    expect(await fallocate(f, 0x40, 0, 4096)).toBe('Operation not supported'); // UNSHARE_RANGE: ext4 has none
    expect(await fallocate(f, 0, -1, 4096)).toBe('Invalid argument');
    expect(readFileSync(f)).toEqual(pattern(16384));
  });

  it('a power cut loses an unsynced punch (lose-unsynced) and keeps an fsynced one', async () => {
    const f = join(mnt, 'f');
    fsynced(f, pattern(8192));
    expect(await fallocate(f, PUNCH_HOLE, 0, 4096)).toBe('ok');
    await d.client.crash();
    expect(readFileSync(f)).toEqual(pattern(8192));
    expect(await fallocate(f, PUNCH_HOLE, 0, 4096)).toBe('ok');
    const fd = openSync(f, 'r+');
    try {
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    await d.client.crash();
    expect(readFileSync(f)).toEqual(pattern(8192).fill(0, 0, 4096));
    expect(blocksOf(f)).toBe(8);
  });
});

describe('sparse files and the largest file', () => {
  it('a 1-byte pwrite at 2 GiB + 1 takes one block of the 512 MiB disk', () => {
    const f = join(mnt, 's');
    const fd = openSync(f, 'w');
    try {
      expect(writeSync(fd, Buffer.from('x'), 0, 1, 2 ** 31 + 1)).toBe(1);
    } finally {
      closeSync(fd);
    }
    expect(statSync(f).size).toBe(2 ** 31 + 2);
    expect(blocksOf(f)).toBe(8);
  });

  it('truncate to 999999999999999 bytes: EFBIG', () => {
    writeFileSync(join(mnt, 'f'), 'x');
    expect(errnoOf(() => truncateSync(join(mnt, 'f'), 999_999_999_999_999))).toBe('EFBIG');
  });
});

describe('an open file after its last name is gone', () => {
  it.each([
    ['opened', (p: string) => {
      writeFileSync(p, 'abc');
      return openSync(p, 'r+');
    }],
    ['created', (p: string) => {
      const fd = openSync(p, 'w+');
      writeSync(fd, 'abc');
      return fd;
    }],
  ])('fstat of a file %s, then unlinked: st_nlink 0, its size, and its data still readable', (_how, open) => {
    const p = join(mnt, 'u');
    const fd = open(p);
    try {
      unlinkSync(p);
      const s = fstatSync(fd);
      expect([s.nlink, s.size]).toEqual([0, 3]);
      const buf = Buffer.alloc(3);
      expect(readSync(fd, buf, 0, 3, 0)).toBe(3);
      expect(buf.toString()).toBe('abc');
      expect(errnoOf(() => statSync(p))).toBe('ENOENT');
    } finally {
      closeSync(fd);
    }
  });
});

describe('a name longer than 255 bytes', () => {
  const long = 'n'.repeat(256);
  it.each([
    ['rename from it', () => renameSync(join(mnt, long), join(mnt, 'z'))],
    ['rename to it', () => renameSync(join(mnt, 'f'), join(mnt, long))],
    ['unlink', () => unlinkSync(join(mnt, long))],
    ['link from it', () => linkSync(join(mnt, long), join(mnt, 'z'))],
    ['link to it', () => linkSync(join(mnt, 'f'), join(mnt, long))],
    ['rmdir', () => rmdirSync(join(mnt, long))],
    ['truncate', () => truncateSync(join(mnt, long), 0)],
    ['create', () => writeFileSync(join(mnt, long), 'x')],
    ['mkdir', () => mkdirSync(join(mnt, long))],
    ['stat', () => statSync(join(mnt, long))],
  ])('%s: ENAMETOOLONG', (_what, call) => {
    writeFileSync(join(mnt, 'f'), 'x');
    expect(errnoOf(call)).toBe('ENAMETOOLONG');
  });

  it('255 bytes is still a name', () => {
    const p = join(mnt, 'n'.repeat(255));
    writeFileSync(p, 'x');
    expect(readFileSync(p, 'utf8')).toBe('x');
  });
});
