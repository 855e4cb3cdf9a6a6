// On-disk framing (pure, no I/O): page header, records, checkpoint records.
//   page header: magic u32 | format version u16 | 0 u16 | page number u32 | first seq u64 | crc32 u32   (24 bytes)
//   record:      seq u64 | length u32 | data | crc32 u32 over seq+length+data                        (16 + length bytes)
//   checkpoint:  magic u32 | version u16 | 0 u16 | head page u32 | first unacked page u32 |
//                first unacked seq u64 | min seq (head page's first seq) u64 | element count u32 | 0 u32 x2 | crc32 u32  (48 bytes)
// Integers are little-endian; u64 values are JS safe integers.
import { crc32 } from 'node:zlib';

export const FORMAT_VERSION = 1;
const PAGE_MAGIC = 0x47504350; // "PCPG"
const CHECKPOINT_MAGIC = 0x4b434350; // "PCCK"
export const PAGE_HEADER_BYTES = 24;
export const RECORD_OVERHEAD_BYTES = 16;
export const CHECKPOINT_BYTES = 48;
const TWO_32 = 2 ** 32;

function writeU64(buf: Buffer, value: number, offset: number): void {
  if (!Number.isSafeInteger(value) || value < 0) throw new Error(`invariant: u64 field must be a safe non-negative integer, got ${value}`);
  buf.writeUInt32LE(value % TWO_32, offset);
  buf.writeUInt32LE(Math.floor(value / TWO_32), offset + 4);
}
function readU64(buf: Buffer, offset: number): number {
  return buf.readUInt32LE(offset) + buf.readUInt32LE(offset + 4) * TWO_32;
}

/** Largest event that fits a page of this capacity (larger ones are refused, by design). */
export function maxEventBytes(pageCapacityBytes: number): number {
  return pageCapacityBytes - PAGE_HEADER_BYTES - RECORD_OVERHEAD_BYTES;
}

export function recordBytes(dataLength: number): number {
  return RECORD_OVERHEAD_BYTES + dataLength;
}

export interface PageHeader {
  pageNum: number;
  firstSeq: number;
}

export function encodePageHeader(header: PageHeader): Buffer {
  const buf = Buffer.alloc(PAGE_HEADER_BYTES);
  buf.writeUInt32LE(PAGE_MAGIC, 0);
  buf.writeUInt16LE(FORMAT_VERSION, 4);
  buf.writeUInt32LE(header.pageNum, 8);
  writeU64(buf, header.firstSeq, 12);
  buf.writeUInt32LE(crc32(buf.subarray(0, 20)), 20);
  return buf;
}

/** The header, or why it is not one. */
export function decodePageHeader(buf: Buffer): PageHeader | { error: string } {
  if (buf.length < PAGE_HEADER_BYTES) return { error: `page header is ${buf.length} bytes, expected ${PAGE_HEADER_BYTES}` };
  if (buf.readUInt32LE(0) !== PAGE_MAGIC) return { error: 'page header has a wrong magic number' };
  if (buf.readUInt32LE(20) !== crc32(buf.subarray(0, 20))) return { error: 'page header CRC mismatch' };
  const version = buf.readUInt16LE(4);
  if (version !== FORMAT_VERSION) return { error: `page format version ${version} is not supported (this build reads ${FORMAT_VERSION})` };
  return { pageNum: buf.readUInt32LE(8), firstSeq: readU64(buf, 12) };
}

export function encodeRecord(seq: number, data: Buffer): Buffer {
  const buf = Buffer.allocUnsafe(RECORD_OVERHEAD_BYTES + data.length);
  encodeRecordInto(buf, 0, seq, data);
  return buf;
}

// Reused by encodeRecordInto: the CRC of seq+length is taken here and continued over the data, so
// encoding a record allocates nothing (it runs once per event on the write path).
const recordHeaderScratch = Buffer.alloc(12);

/** Encodes one record into buf at offsetBytes (the caller checked it fits); returns its length in bytes. */
export function encodeRecordInto(buf: Buffer, offsetBytes: number, seq: number, data: Buffer): number {
  writeU64(recordHeaderScratch, seq, 0);
  recordHeaderScratch.writeUInt32LE(data.length, 8);
  buf.set(recordHeaderScratch, offsetBytes);
  buf.set(data, offsetBytes + 12);
  buf.writeUInt32LE(crc32(data, crc32(recordHeaderScratch)), offsetBytes + 12 + data.length);
  return RECORD_OVERHEAD_BYTES + data.length;
}

export type ScanStop = 'end' | 'truncated' | 'seq' | 'length' | 'crc' | 'limit';

export interface ScanResult {
  count: number;
  lastSeq: number; // expectedFirstSeq - 1 when count is 0
  endOffset: number; // offset just past the last valid record
  stop: ScanStop; // 'end' = stopped exactly at the end of buf
}

export interface ScanOptions {
  verifyCrc: (record: Buffer) => boolean;
  maxCount?: number;
  onRecord?: (seq: number, data: Buffer, offset: number) => void;
}

/** The default CRC check of a whole framed record (seq+length+data+crc). */
export function recordCrcValid(record: Buffer): boolean {
  const crcOffset = record.length - 4;
  return record.readUInt32LE(crcOffset) === crc32(record.subarray(0, crcOffset));
}

/**
 * Reads consecutive records from buf starting at offset, expecting seqs expectedFirstSeq, +1, ...
 * Stops at the first record that is incomplete, out of sequence, too long or fails the CRC.
 */
export function scanRecords(buf: Buffer, offset: number, expectedFirstSeq: number, options: ScanOptions): ScanResult {
  let count = 0;
  let pos = offset;
  let expected = expectedFirstSeq;
  const maxCount = options.maxCount ?? Infinity;
  const stop = (reason: ScanStop): ScanResult => ({ count, lastSeq: expected - 1, endOffset: pos, stop: reason });
  for (;;) {
    if (count >= maxCount) return stop('limit');
    if (pos === buf.length) return stop('end');
    if (pos + RECORD_OVERHEAD_BYTES > buf.length) return stop('truncated');
    const seq = readU64(buf, pos);
    if (seq !== expected) return stop('seq');
    const length = buf.readUInt32LE(pos + 8);
    const end = pos + RECORD_OVERHEAD_BYTES + length;
    if (end > buf.length) return stop(length > buf.length ? 'length' : 'truncated');
    const record = buf.subarray(pos, end);
    if (!options.verifyCrc(record)) return stop('crc');
    options.onRecord?.(seq, buf.subarray(pos + 12, end - 4), pos);
    count += 1;
    expected += 1;
    pos = end;
  }
}

export interface Checkpoint {
  headPageNum: number;
  firstUnackedPageNum: number;
  firstUnackedSeq: number;
  /** First seq of the head page. */
  minSeq: number;
  /** Records of the head page that were synced before this checkpoint was written. */
  elementCount: number;
}

export function encodeCheckpoint(ck: Checkpoint): Buffer {
  if (ck.firstUnackedPageNum > ck.headPageNum) throw new Error('invariant: checkpoint first unacked page is after the head page');
  if (ck.firstUnackedSeq > ck.minSeq + ck.elementCount) throw new Error('invariant: checkpoint acks cover events the checkpoint does not hold');
  const buf = Buffer.alloc(CHECKPOINT_BYTES);
  buf.writeUInt32LE(CHECKPOINT_MAGIC, 0);
  buf.writeUInt16LE(FORMAT_VERSION, 4);
  buf.writeUInt32LE(ck.headPageNum, 8);
  buf.writeUInt32LE(ck.firstUnackedPageNum, 12);
  writeU64(buf, ck.firstUnackedSeq, 16);
  writeU64(buf, ck.minSeq, 24);
  buf.writeUInt32LE(ck.elementCount, 32);
  buf.writeUInt32LE(crc32(buf.subarray(0, 44)), 44);
  return buf;
}

export function decodeCheckpoint(buf: Buffer): Checkpoint | { error: string } {
  if (buf.length !== CHECKPOINT_BYTES) return { error: `checkpoint is ${buf.length} bytes, expected ${CHECKPOINT_BYTES}` };
  if (buf.readUInt32LE(0) !== CHECKPOINT_MAGIC) return { error: 'checkpoint has a wrong magic number' };
  if (buf.readUInt32LE(44) !== crc32(buf.subarray(0, 44))) return { error: 'checkpoint CRC mismatch' };
  const version = buf.readUInt16LE(4);
  if (version !== FORMAT_VERSION) return { error: `checkpoint format version ${version} is not supported (this build reads ${FORMAT_VERSION})` };
  return {
    headPageNum: buf.readUInt32LE(8),
    firstUnackedPageNum: buf.readUInt32LE(12),
    firstUnackedSeq: readU64(buf, 16),
    minSeq: readU64(buf, 24),
    elementCount: buf.readUInt32LE(32),
  };
}

export function isError<T extends object>(value: T | { error: string }): value is { error: string } {
  return 'error' in value;
}

export const pageFileName = (pageNum: number): string => `page.${pageNum}`;
/** The page number of a `page.N` file name, or undefined. */
export function parsePageFileName(name: string): number | undefined {
  const m = /^page\.(\d+)$/.exec(name);
  return m ? Number(m[1]) : undefined;
}
