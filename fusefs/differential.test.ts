// Differential test: random file operations on the mount and on an ordinary temp dir give the same
// results and contents (no crash). The live view is a correct filesystem.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { mkdtempSync } from 'node:fs';
import * as fsp from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startDaemon, type DaemonHandle } from '../src/harness/daemon-process.js';

let work: string;
let d: DaemonHandle;

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'powercut-diff-'));
  d = await startDaemon({ mountpoint: join(work, 'mnt'), socketPath: join(work, 'ctl.sock') });
});
afterAll(async () => {
  await d?.stop();
});

const name = fc.constantFrom('a', 'b', 'd/a', 'd/b', 'd', 'e');
type Op =
  | { t: 'write'; p: string; off: number; len: number; fill: number; sync: boolean }
  | { t: 'append'; p: string; len: number; fill: number }
  | { t: 'truncate'; p: string; size: number }
  | { t: 'mkdir' | 'rmdir' | 'unlink' | 'read' | 'readdir' | 'stat'; p: string }
  | { t: 'rename' | 'link' | 'symlink'; p: string; q: string };
const opArb: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ t: fc.constant('write' as const), p: name, off: fc.nat(300_000), len: fc.integer({ min: 0, max: 200_000 }), fill: fc.integer({ min: 1, max: 255 }), sync: fc.boolean() }),
  fc.record({ t: fc.constant('append' as const), p: name, len: fc.integer({ min: 1, max: 5000 }), fill: fc.integer({ min: 1, max: 255 }) }),
  fc.record({ t: fc.constant('truncate' as const), p: name, size: fc.nat(400_000) }),
  fc.record({ t: fc.constantFrom('mkdir' as const, 'rmdir' as const, 'unlink' as const, 'read' as const, 'readdir' as const, 'stat' as const), p: name }),
  fc.record({ t: fc.constantFrom('rename' as const, 'link' as const, 'symlink' as const), p: name, q: name }),
);

/** Applies one op under `root`; returns a comparable outcome (value or error code). */
async function apply(root: string, op: Op): Promise<string> {
  const p = join(root, op.p);
  try {
    switch (op.t) {
      case 'write': {
        const fh = await fsp.open(p, 'a+').then((h) => h.close()).then(() => fsp.open(p, 'r+'));
        try {
          const { bytesWritten } = await fh.write(Buffer.alloc(op.len, op.fill), 0, op.len, op.off);
          if (op.sync) await fh.sync();
          return `wrote ${bytesWritten}`;
        } finally {
          await fh.close();
        }
      }
      case 'append':
        await fsp.appendFile(p, Buffer.alloc(op.len, op.fill));
        return 'ok';
      case 'truncate':
        await fsp.truncate(p, op.size);
        return 'ok';
      case 'mkdir':
        await fsp.mkdir(p);
        return 'ok';
      case 'rmdir':
        await fsp.rmdir(p);
        return 'ok';
      case 'unlink':
        await fsp.unlink(p);
        return 'ok';
      case 'read':
        return (await fsp.readFile(p)).toString('hex').slice(0, 64) + ':' + (await fsp.stat(p)).size;
      case 'readdir':
        return (await fsp.readdir(p)).sort().join(',');
      case 'stat': {
        const s = await fsp.lstat(p);
        return `${s.isFile()}${s.isDirectory()}${s.isSymbolicLink()} ${s.isFile() ? s.size : ''}`;
      }
      case 'rename':
        await fsp.rename(p, join(root, op.q));
        return 'ok';
      case 'link':
        await fsp.link(p, join(root, op.q));
        return 'ok';
      case 'symlink':
        await fsp.symlink(op.p, join(root, op.q));
        return 'ok';
    }
  } catch (e) {
    return `error ${(e as NodeJS.ErrnoException).code}`;
  }
}

async function snapshot(root: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const e of await fsp.readdir(root, { withFileTypes: true, recursive: true })) {
    const p = join(e.parentPath, e.name);
    const rel = p.slice(root.length);
    if (e.isSymbolicLink()) out[rel] = 'link:' + (await fsp.readlink(p));
    else if (e.isDirectory()) out[rel] = 'dir';
    else out[rel] = 'file:' + (await fsp.readFile(p)).toString('base64');
  }
  return out;
}

describe('differential: the mount behaves like an ordinary directory', () => {
  it('gives the same results and contents for random operation sequences', async () => {
    let run = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(opArb, { minLength: 1, maxLength: 25 }), async (ops) => {
        await d.client.reset();
        const ref = join(work, `ref-${run++}`);
        await fsp.mkdir(ref);
        for (const op of ops) {
          const expected = await apply(ref, op);
          const actual = await apply(d.mountpoint, op);
          expect(actual, JSON.stringify(op)).toBe(expected);
        }
        expect(await snapshot(d.mountpoint)).toEqual(await snapshot(ref));
        await fsp.rm(ref, { recursive: true });
      }),
      { numRuns: 40 },
    );
  });
});
