// GrowBuffer against plain Buffers: random writes, resizes, range copies and clones (chunks shared
// copy-on-write) across chunk boundaries; every version reads exactly as its reference, and no
// buffer handed to write() is ever changed afterwards.
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { contentDigest, digestStats } from './content-digest.js';
import { BLOCK_BYTES, CHUNK_BYTES, GrowBuffer } from './grow-buffer.js';
import { WB } from '../write-behind-c.js';

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
        // The digest kept per chunk is the digest of the bytes, however the version got them.
        expect(v.g.contentDigest()).toBe(contentDigest(v.ref));
        // Outside its extents a version reads as zeros (what an image writer leaves as holes).
        const outside = Buffer.from(v.ref);
        for (const [a, b] of v.g.dataExtents()) outside.fill(0, a, b);
        expect(outside.equals(Buffer.alloc(outside.length))).toBe(true);
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

// ---- allocated blocks: what the disk charges (fallocate, holes) ----

describe('GrowBuffer allocated blocks against a plain reference (bytes and a set of block numbers)', () => {
  const B = BLOCK_BYTES;
  const AT = [0, 1, B - 1, B, B + 7, 3 * B, C - 5, C, C + B, 2 * C + 3];
  const LEN = [1, 100, B, B + 1, 3 * B, C, C + B + 9];
  const ALIGNED = [0, B, 2 * B, C, C + B];
  type AllocOp =
    | { t: 'write' | 'allocate' | 'punch' | 'zero' | 'zero-keep'; at: number; len: number }
    | { t: 'resize'; size: number }
    | { t: 'collapse' | 'insert'; at: number; len: number };
  const allocOpArb: fc.Arbitrary<AllocOp> = fc.oneof(
    fc.record({ t: fc.constantFrom('write' as const, 'allocate' as const, 'punch' as const, 'zero' as const, 'zero-keep' as const), at: fc.constantFrom(...AT), len: fc.constantFrom(...LEN) }),
    fc.record({ t: fc.constant('resize' as const), size: fc.constantFrom(...AT) }),
    fc.record({ t: fc.constantFrom('collapse' as const, 'insert' as const), at: fc.constantFrom(...ALIGNED), len: fc.constantFrom(B, 2 * B, C) }),
  );
  const blocksOf = (a: number, end: number) => Array.from({ length: Math.max(0, Math.ceil(end / B) - Math.floor(a / B)) }, (_, i) => Math.floor(a / B) + i);

  it('every operation leaves the bytes and the allocated blocks the reference computes, and usage follows from them', () => {
    fc.assert(
      fc.property(fc.array(allocOpArb, { maxLength: 20 }), (ops) => {
        const g = new GrowBuffer();
        let bytes: Buffer = Buffer.alloc(0);
        let blocks = new Set<number>();
        for (const op of ops) {
          if (op.t === 'resize') {
            g.resize(op.size);
            // Shrinking frees the blocks past the new size (preallocated ones too); growing makes a hole.
            if (op.size < bytes.length) blocks = new Set([...blocks].filter((b) => b < Math.ceil(op.size / B)));
            bytes = resized(bytes, op.size);
          } else if (op.t === 'collapse' || op.t === 'insert') {
            if (op.at >= bytes.length || (op.t === 'collapse' && op.at + op.len >= bytes.length)) continue; // ext4 refuses these
            if (op.t === 'collapse') {
              g.collapse(op.at, op.len);
              bytes = Buffer.concat([bytes.subarray(0, op.at), bytes.subarray(op.at + op.len)]);
              const first = op.at / B;
              const n = op.len / B;
              blocks = new Set([...blocks].filter((b) => b < first || b >= first + n).map((b) => (b >= first + n ? b - n : b)));
            } else {
              g.insert(op.at, op.len);
              bytes = Buffer.concat([bytes.subarray(0, op.at), Buffer.alloc(op.len), bytes.subarray(op.at)]);
              blocks = new Set([...blocks].map((b) => (b >= op.at / B ? b + op.len / B : b)));
            }
          } else {
            const end = op.at + op.len;
            if (op.t === 'write') {
              const data = Buffer.alloc(op.len, (op.at % 250) + 1);
              g.write(op.at, data);
              bytes = resized(bytes, Math.max(bytes.length, end));
              data.copy(bytes, op.at);
            } else if (op.t === 'allocate') {
              g.allocate(op.at, end);
            } else if (op.t === 'punch') {
              g.punch(op.at, end);
              bytes.fill(0, Math.min(op.at, bytes.length), Math.min(end, bytes.length));
              for (let b = Math.ceil(op.at / B); b < Math.floor(end / B); b++) blocks.delete(b);
              continue;
            } else {
              g.zero(op.at, end, op.t === 'zero-keep');
              if (op.t === 'zero') bytes = resized(bytes, Math.max(bytes.length, end));
              bytes.fill(0, Math.min(op.at, bytes.length), Math.min(end, bytes.length));
            }
            for (const b of blocksOf(op.at, end)) blocks.add(b);
          }
        }
        expect(g.toBuffer().equals(bytes), 'the bytes').toBe(true); // (toEqual compares byte by byte: slow on these sizes)
        expect(g.contentDigest(), 'the digest').toBe(contentDigest(bytes));
        const runs = g.allocatedBlocks().flatMap(([a, b]) => Array.from({ length: b - a + 1 }, (_, i) => a + i));
        expect(runs).toEqual([...blocks].sort((x, y) => x - y));
        const tail = bytes.length % B;
        const eofBlock = Math.floor(bytes.length / B);
        expect(g.usageBytes).toBe(blocks.size * B - (tail !== 0 && blocks.has(eofBlock) ? B - tail : 0));
        expect(g.allocatedBytes).toBe(blocks.size * B);
      }),
      { numRuns: 200 },
    );
  });

  it('usageAfterAllocating foretells the usage a write or an allocation leaves', () => {
    fc.assert(
      fc.property(fc.array(allocOpArb, { maxLength: 8 }), fc.constantFrom(...AT), fc.constantFrom(0, ...LEN), fc.boolean(), (ops, at, len, keepSize) => {
        const g = new GrowBuffer();
        for (const op of ops) if (op.t === 'write') g.write(op.at, Buffer.alloc(op.len, 1)); else if (op.t === 'resize') g.resize(op.size); else if (op.t === 'punch') g.punch(op.at, op.at + op.len);
        const foretold = g.usageAfterAllocating(at, len, keepSize);
        if (keepSize) g.allocate(at, at + len);
        else if (len > 0) g.write(at, Buffer.alloc(len, 2));
        expect(g.usageBytes).toBe(foretold);
      }),
      { numRuns: 300 },
    );
  });

  it('a write of n bytes adds at most n + WB.blockSlackBytes to the usage: what the binding charges a write it answers itself', () => {
    fc.assert(
      fc.property(fc.array(allocOpArb, { maxLength: 8 }), fc.constantFrom(...AT), fc.constantFrom(...LEN), (ops, at, len) => {
        const g = new GrowBuffer();
        for (const op of ops) {
          if (op.t === 'write') g.write(op.at, Buffer.alloc(op.len, 1));
          else if (op.t === 'resize') g.resize(op.size);
          else if (op.t === 'punch') g.punch(op.at, op.at + op.len);
          else if (op.t === 'allocate') g.allocate(op.at, op.at + op.len); // KEEP_SIZE: also past the end
          else if (op.t === 'zero' || op.t === 'zero-keep') g.zero(op.at, op.at + op.len, op.t === 'zero-keep');
        }
        expect(g.usageAfterAllocating(at, len) - g.usageBytes).toBeLessThanOrEqual(len + WB.blockSlackBytes);
      }),
      { numRuns: 300 },
    );
  });

  it('a digest costs the chunks changed since it was last asked for: a 64 MiB ftruncate none, an append one', () => {
    const g = new GrowBuffer();
    const hashed = () => digestStats.chunksHashed;
    let before = hashed();
    g.resize(64 << 20);
    const empty = g.contentDigest();
    expect(hashed() - before).toBe(0);
    expect(empty).toBe(contentDigest(Buffer.alloc(64 << 20))); // a hole digests as the zeros it reads as
    before = hashed();
    g.write(10 * C + 5, Buffer.alloc(4096, 7));
    g.contentDigest();
    expect(hashed() - before).toBe(1);
    // A clone (what an fsync makes of the live version) shares the terms: nothing hashed again.
    const durable = g.clone();
    before = hashed();
    durable.contentDigest();
    g.write(20 * C, Buffer.alloc(100, 9));
    g.contentDigest();
    expect(hashed() - before).toBe(1);
    expect(durable.contentDigest()).not.toBe(g.contentDigest());
  });
});
