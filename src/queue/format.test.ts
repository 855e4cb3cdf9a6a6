import { describe, expect, it } from 'vitest';
import { fc, test } from '@fast-check/vitest';
import {
  CHECKPOINT_BYTES,
  PAGE_HEADER_BYTES,
  decodeCheckpoint,
  decodePageHeader,
  encodeCheckpoint,
  encodePageHeader,
  encodeRecord,
  recordCrcValid,
  scanRecords,
} from './format.js';

const verifyCrc = recordCrcValid;

describe('record framing and CRC', () => {
  test.prop([fc.array(fc.uint8Array({ maxLength: 64 }), { maxLength: 20 }), fc.integer({ min: 1, max: 2 ** 40 })])(
    'records round-trip in seq order',
    (datas, firstSeq) => {
      const buf = Buffer.concat(datas.map((d, i) => encodeRecord(firstSeq + i, Buffer.from(d))));
      const seen: Array<[number, Buffer]> = [];
      const scan = scanRecords(buf, 0, firstSeq, { verifyCrc, onRecord: (seq, data) => seen.push([seq, Buffer.from(data)]) });
      expect(scan.stop).toBe('end');
      expect(scan.count).toBe(datas.length);
      expect(seen).toEqual(datas.map((d, i) => [firstSeq + i, Buffer.from(d)]));
    },
  );

  test.prop([fc.integer({ min: 0, max: 39 }), fc.integer({ min: 0, max: 255 })])('any single corrupted byte of a record is detected', (index, xor) => {
    fc.pre(xor !== 0);
    const rec = encodeRecord(7, Buffer.alloc(24, 0x61));
    expect(rec.length, 'the indexes drawn cover the whole record').toBe(40);
    rec[index] ^= xor;
    const scan = scanRecords(rec, 0, 7, { verifyCrc });
    expect(scan.count).toBe(0);
    expect(scan.stop).not.toBe('end');
  });

  it('the CRC covers seq and length, not only the data', () => {
    const rec = encodeRecord(5, Buffer.from('abc'));
    const forged = Buffer.from(rec);
    forged.writeUInt32LE(6, 0); // seq 6 with the data CRC intact would pass a data-only CRC
    expect(recordCrcValid(forged)).toBe(false);
  });

  it('stops at a torn record, a zeroed tail and a seq gap, reporting the end of the valid prefix', () => {
    const a = encodeRecord(1, Buffer.from('one'));
    const b = encodeRecord(2, Buffer.from('two'));
    const torn = scanRecords(Buffer.concat([a, b.subarray(0, b.length - 3)]), 0, 1, { verifyCrc });
    expect(torn).toMatchObject({ count: 1, lastSeq: 1, endOffset: a.length, stop: 'truncated' });
    const zeroed = scanRecords(Buffer.concat([a, Buffer.alloc(4096)]), 0, 1, { verifyCrc });
    expect(zeroed).toMatchObject({ count: 1, endOffset: a.length, stop: 'seq' });
    const gap = scanRecords(Buffer.concat([a, encodeRecord(3, Buffer.from('x'))]), 0, 1, { verifyCrc });
    expect(gap).toMatchObject({ count: 1, stop: 'seq' });
  });

  it('page headers round-trip and reject a torn or foreign header', () => {
    const header = encodePageHeader({ pageNum: 3, firstSeq: 2 ** 33 + 5 });
    expect(header.length).toBe(PAGE_HEADER_BYTES);
    expect(decodePageHeader(header)).toEqual({ pageNum: 3, firstSeq: 2 ** 33 + 5 });
    expect(decodePageHeader(Buffer.alloc(0))).toHaveProperty('error');
    expect(decodePageHeader(Buffer.alloc(PAGE_HEADER_BYTES))).toHaveProperty('error', 'page header has a wrong magic number');
    const flipped = Buffer.from(header);
    flipped[10] ^= 1;
    expect(decodePageHeader(flipped)).toHaveProperty('error', 'page header CRC mismatch');
  });

  it('checkpoints round-trip, reject corruption and refuse to encode a broken invariant', () => {
    const ck = { headPageNum: 4, firstUnackedPageNum: 2, firstUnackedSeq: 90, minSeq: 100, elementCount: 7 };
    const buf = encodeCheckpoint(ck);
    expect(buf.length).toBe(CHECKPOINT_BYTES);
    expect(decodeCheckpoint(buf)).toEqual(ck);
    const bad = Buffer.from(buf);
    bad[20] ^= 0xff;
    expect(decodeCheckpoint(bad)).toHaveProperty('error', 'checkpoint CRC mismatch');
    expect(decodeCheckpoint(Buffer.alloc(0))).toHaveProperty('error');
    expect(() => encodeCheckpoint({ ...ck, firstUnackedSeq: 200 })).toThrow(/invariant/);
    expect(() => encodeCheckpoint({ ...ck, firstUnackedPageNum: 5 })).toThrow(/invariant/);
  });
});
