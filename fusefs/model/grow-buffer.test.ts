// GrowBuffer against plain Buffers: random writes, resizes, range copies and clones (chunks shared
// copy-on-write) across chunk boundaries; every version reads exactly as its reference, and no
// buffer handed to write() is ever changed afterwards.
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { CHUNK_BYTES, GrowBuffer } from './grow-buffer.js';

const C = CHUNK_BYTES;
const POINTS = [0, 1, 63, 64, 65, 200, C - 1, C, C + 1, C + 100, 2 * C - 3, 2 * C, 3 * C + 7];
const LENGTHS = [0, 1, 2, 63, 64, 140, 4096, C - 1, C, C + 1, 2 * C, 2 * C + 5];

type Op =
  | { t: 'write'; v: number; at: number; len: number; aligned: boolean }
  | { t: 'resize'; v: number; size: number }
  | { t: 'clone'; v: number }
  | { t: 'copy'; v: number; from: number; at: number; len: number };

const opArb: fc.Arbitrary<Op> = fc.oneof(
  { weight: 5, arbitrary: fc.record({ t: fc.constant('write' as const), v: fc.nat(7), at: fc.constantFrom(...POINTS), len: fc.constantFrom(...LENGTHS), aligned: fc.boolean() }) },
  { weight: 2, arbitrary: fc.record({ t: fc.constant('resize' as const), v: fc.nat(7), size: fc.constantFrom(...POINTS, 5 * C) }) },
  { weight: 2, arbitrary: fc.record({ t: fc.constant('clone' as const), v: fc.nat(7) }) },
  { weight: 1, arbitrary: fc.record({ t: fc.constant('copy' as const), v: fc.nat(7), from: fc.nat(7), at: fc.constantFrom(...POINTS), len: fc.constantFrom(...LENGTHS) }) },
);

function resized(b: Buffer, size: number): Buffer {
  const out = Buffer.alloc(size);
  b.copy(out, 0, 0, Math.min(size, b.length));
  return out;
}

describe('GrowBuffer', () => {
  it('every version reads as its plain-Buffer reference; written buffers never change', () => {
    fc.assert(fc.property(fc.array(opArb, { maxLength: 40 }), (ops) => {
      const versions: { g: GrowBuffer; ref: Buffer }[] = [{ g: new GrowBuffer(), ref: Buffer.alloc(0) }];
      const handedOver: { data: Buffer; copy: Buffer }[] = [];
      let fill = 1;
      for (const op of ops) {
        const v = versions[op.v % versions.length];
        if (op.t === 'write') {
          // Sometimes a view into a larger buffer, so kept chunks are views with an offset.
          const backing = Buffer.alloc(op.len + (op.aligned ? 0 : 3), fill++ & 0xff);
          for (let i = 0; i < backing.length; i += 97) backing[i] = (i * 7 + fill) & 0xff;
          const data = backing.subarray(op.aligned ? 0 : 3);
          handedOver.push({ data, copy: Buffer.from(data) });
          v.g.write(op.at, data);
          const end = op.at + data.length;
          v.ref = resized(v.ref, Math.max(end, v.ref.length));
          data.copy(v.ref, op.at);
        } else if (op.t === 'resize') {
          v.g.resize(op.size);
          v.ref = resized(v.ref, op.size);
        } else if (op.t === 'clone') {
          versions.push({ g: v.g.clone(), ref: Buffer.from(v.ref) });
        } else {
          const src = versions[op.from % versions.length];
          v.g.copyRangeFrom(src.g, op.at, op.at + op.len);
          const stop = Math.min(op.at + op.len, src.ref.length);
          if (stop > op.at) {
            v.ref = resized(v.ref, Math.max(stop, v.ref.length));
            src.ref.copy(v.ref, op.at, op.at, stop);
          }
        }
        for (const w of versions) {
          expect(w.g.size).toBe(w.ref.length);
          expect(w.g.toBuffer().equals(w.ref)).toBe(true);
        }
      }
      for (const w of versions) {
        for (const at of POINTS) {
          expect(w.g.byteAt(at)).toBe(at < w.ref.length ? w.ref[at] : 0);
          for (const len of [1, 100, C]) {
            const want = w.ref.subarray(Math.min(at, w.ref.length), Math.min(at + len, w.ref.length));
            expect(w.g.read(at, len).equals(want)).toBe(true);
          }
        }
      }
      for (const h of handedOver) expect(h.data.equals(h.copy)).toBe(true);
    }), { numRuns: 300 });
  });

  it('keeps whole chunks of written data by reference and copies partial ones', () => {
    const g = new GrowBuffer();
    const data = Buffer.alloc(2 * C + 10, 5);
    g.write(0, data);
    expect(g.read(0, C).buffer).toBe(data.buffer); // kept, not copied
    expect(g.read(2 * C, 10).buffer).not.toBe(data.buffer); // the partial tail is the buffer's own
    const h = g.clone();
    h.write(1, Buffer.from([9]));
    expect(data[1]).toBe(5);
    expect(g.byteAt(1)).toBe(5);
    expect(h.byteAt(1)).toBe(9);
  });
});
