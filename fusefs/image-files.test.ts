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

  it('reads only the extents it is given: bytes outside them are holes even where data holds non-zero bytes', () => {
    const data = Buffer.alloc(40_000, 9);
    const p = join(dir, 'extents');
    // Two extents sharing the block 4096..8191, and a last one ending mid-block.
    writeSparse(p, data, [[100, 5000], [6000, 9000], [20_000, 20_001]]);
    const want = Buffer.alloc(40_000);
    data.copy(want, 0, 0, 12_288); // blocks 0..2 hold extent bytes: written whole
    data.copy(want, 20_480 - 4096, 16_384, 20_480); // block 4 (16384..20479) holds byte 20000
    expect(readFileSync(p).equals(want)).toBe(true);
    expect(() => writeSparse(join(dir, 'bad'), data, [[10, 20], [5, 30]])).toThrow(/extents of .*bad are ordered ranges within its 40000 bytes/);
  });
});
