// Images written as files: bytes read back as written, zero blocks left as holes.
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { writeSparse } from './image-files.js';

const dir = mkdtempSync(join(os.tmpdir(), 'powercut-image-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('writeSparse', () => {
  it('reads back every byte, and an 8 MiB file of one written block allocates far less than 8 MiB', () => {
    const data = Buffer.alloc(8 << 20);
    data.fill(7, 3 << 20, (3 << 20) + 4096);
    data[data.length - 1] = 1; // a byte in the last, short block
    const p = join(dir, 'log');
    writeSparse(p, data);
    expect(readFileSync(p).equals(data)).toBe(true);
    // st_blocks counts 512-byte units; the two data blocks need 8 KiB, the file 8 MiB without holes.
    expect(statSync(p).blocks * 512).toBeLessThan(1 << 20);
  });

  it('writes an all-zero file as its size alone, and an empty one empty', () => {
    for (const [name, size] of [['zeros', 5_000], ['empty', 0]] as const) {
      const p = join(dir, name);
      writeSparse(p, Buffer.alloc(size));
      expect(statSync(p).size).toBe(size);
      expect(readFileSync(p).equals(Buffer.alloc(size))).toBe(true);
    }
  });
});
