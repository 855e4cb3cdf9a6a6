// The bytes of one file version (live or durable): fixed-size chunks shared copy-on-write between
// versions, so a power cut (live := durable), an fsync (durable := live) and a model clone cost one
// pointer per chunk, not a copy of the file. Appends are amortised O(1), capacity is never
// zero-filled where it is about to be written, and a write covering whole chunks is kept by
// reference (its data must never change afterwards: the model's callers hand over fresh copies).
//
// Invariants, with size S and CHUNK bytes per chunk:
//   - chunks.length === ceil(S / CHUNK); chunk i holds the bytes from i * CHUNK on, for its length;
//   - a byte below S that lies past its chunk's length (or whose chunk is null) reads as 0;
//   - a byte at or past S may hold anything (stale bytes after a truncate, unused capacity);
//   - a chunk is changed in place only where owned[i] is set: no other GrowBuffer, pending write or
//     recording holds it. clone() clears ownership on both sides; the next change copies the chunk.
//
// Apart from the bytes, a version knows which 4096-byte blocks are allocated (what a disk charges,
// FsModel.liveDataBytes): every block a write touched, those fallocate allocated, none a hole
// (truncating up, writing past the end, punching) left. Truncating down frees the blocks past the size.
//
// And a version knows its content digest, kept per chunk (content-digest.ts): a chunk's term is
// dropped when the chunk changes and computed again only when the digest is next asked for, so a
// crash state's image hash costs what the run wrote since, not the bytes the file holds; a hole
// (truncating up, punching whole chunks) has the term 0 and costs nothing.

import { CHUNK_BYTES, chunkTerm, combineTerms } from './content-digest.js';
import { RunSet, type Run } from './run-set.js';

export { CHUNK_BYTES };
/** The first allocation of a small file; chunk 0 then doubles up to CHUNK_BYTES. */
const MIN_CAPACITY = 64;
/** The allocation unit a disk charges (ext4's block size, statfs's bsize). */
export const BLOCK_BYTES = 4096;

const blockOf = (offsetBytes: number) => Math.floor(offsetBytes / BLOCK_BYTES);

/** Where whole chunks come from; its bytes need not be zeros. */
let allocateChunk: () => Buffer = () => Buffer.allocUnsafeSlow(CHUNK_BYTES);

/**
 * Whole chunks from `alloc` from now on (in this process). The daemon takes them from the patched
 * binding's populated memory: on some VMs a page fault costs 15 times what populating the page does,
 * and a chunk is 16 pages written at once.
 */
export function useChunkAllocator(alloc: () => Buffer): void {
  allocateChunk = alloc;
}

export class GrowBuffer {
  private chunks: (Buffer | null)[] = [];
  private owned: boolean[] = [];
  private sizeBytes = 0;
  /** Allocated block numbers (BLOCK_BYTES each), also past the size (fallocate with KEEP_SIZE). */
  private allocated = new RunSet();
  /**
   * Per chunk its digest term (content-digest.ts), undefined where the chunk changed since it was
   * last computed; `termSum` adds up the known ones, `staleTerms` lists the undefined ones (each at
   * most once: a term is dropped only when it was known). So changing a chunk costs O(1), and the
   * digest costs the chunks changed since it was last asked for.
   */
  private terms: (bigint | undefined)[] = [];
  private termSum = 0n;
  private staleTerms: number[] = [];

  constructor(initial?: Uint8Array) {
    if (initial && initial.length > 0) this.writeBytes(0, initial, false);
  }

  get size(): number {
    return this.sizeBytes;
  }

  /** Sets the size; bytes that become visible by growing read as zeros (a hole: nothing allocated). Shrinking frees the blocks past it. */
  resize(sizeBytes: number): void {
    if (sizeBytes > this.sizeBytes) this.grow(sizeBytes, sizeBytes);
    else if (sizeBytes < this.sizeBytes) {
      const keep = Math.ceil(sizeBytes / CHUNK_BYTES);
      for (let j = keep; j < this.terms.length; j++) this.termSum -= this.terms[j] ?? 0n;
      this.chunks.length = keep;
      this.owned.length = keep;
      this.terms.length = keep;
      this.sizeBytes = sizeBytes;
      // The last chunk kept now ends at the new size: bytes past it no longer count.
      if (keep > 0) this.staleTerm(keep - 1);
      this.allocated.removeFrom(Math.ceil(sizeBytes / BLOCK_BYTES));
    }
  }

  // ---- allocation (what fallocate changes besides bytes) ----

  /** Blocks allocated, as disk space: each a whole block, but the block holding the end of the file only up to the size. */
  get usageBytes(): number {
    return usage(this.allocated.count, this.sizeBytes, this.allocated.has(blockOf(this.sizeBytes)));
  }

  /** Whole allocated blocks in bytes (st_blocks: the block holding the end counts whole). */
  get allocatedBytes(): number {
    return this.allocated.count * BLOCK_BYTES;
  }

  /**
   * What usageBytes would be after allocating [offsetBytes, offsetBytes + lengthBytes) (nothing
   * changes): by a write, or a fallocate that allocates; the size grows to the range's end unless `keepSize`.
   */
  usageAfterAllocating(offsetBytes: number, lengthBytes: number, keepSize = false): number {
    if (lengthBytes === 0) return this.usageBytes;
    const end = offsetBytes + lengthBytes;
    const size = keepSize ? this.sizeBytes : Math.max(this.sizeBytes, end);
    const eofBlock = blockOf(size);
    const eofAllocated = this.allocated.has(eofBlock) || (eofBlock >= blockOf(offsetBytes) && eofBlock <= blockOf(end - 1));
    return usage(this.allocated.count + this.allocated.countOutside(blockOf(offsetBytes), blockOf(end - 1)), size, eofAllocated);
  }

  /** Allocated blocks in runs (tests, the invariant checks). */
  allocatedBlocks(): readonly Run[] {
    return this.allocated.toArray();
  }

  /** Allocates the blocks [startBytes, endBytes) touches; bytes and size stay. */
  allocate(startBytes: number, endBytes: number): void {
    if (endBytes > startBytes) this.allocated.add(blockOf(startBytes), blockOf(endBytes - 1));
  }

  /**
   * Bytes [startBytes, endBytes) below the size read as zeros from now on, and the blocks wholly
   * inside are freed (fallocate PUNCH_HOLE; the size stays).
   */
  punch(startBytes: number, endBytes: number): void {
    this.clear(startBytes, endBytes);
    this.allocated.remove(Math.ceil(startBytes / BLOCK_BYTES), blockOf(endBytes) - 1);
  }

  /** Bytes [startBytes, endBytes) read as zeros, allocated (fallocate ZERO_RANGE); the size grows to endBytes unless `keepSize`. */
  zero(startBytes: number, endBytes: number, keepSize: boolean): void {
    if (!keepSize && endBytes > this.sizeBytes) this.grow(endBytes, endBytes);
    this.clear(startBytes, endBytes);
    this.allocate(startBytes, endBytes);
  }

  /**
   * Removes [offsetBytes, offsetBytes + lengthBytes), the rest moving down (fallocate COLLAPSE_RANGE;
   * block-aligned). Of a range reaching past the end only what the file has goes (fallocate.ts, sizeAfterFallocate).
   */
  collapse(offsetBytes: number, lengthBytes: number): void {
    if (offsetBytes >= this.sizeBytes) return;
    if (offsetBytes + lengthBytes >= this.sizeBytes) this.resize(offsetBytes);
    else this.shift(offsetBytes, offsetBytes + lengthBytes, offsetBytes, -lengthBytes);
  }

  /** Inserts a hole of `lengthBytes` at `offsetBytes` (at the end if past it), the rest moving up (fallocate INSERT_RANGE; block-aligned). */
  insert(offsetBytes: number, lengthBytes: number): void {
    if (offsetBytes >= this.sizeBytes) this.resize(this.sizeBytes + lengthBytes);
    else this.shift(offsetBytes, offsetBytes, offsetBytes + lengthBytes, lengthBytes);
  }

  /**
   * Keeps [0, keepBytes), then the bytes from `fromBytes` on at `toBytes` (a gap reads as zeros),
   * blocks and their allocation alike; `deltaBytes` = toBytes - fromBytes, a multiple of BLOCK_BYTES.
   */
  private shift(keepBytes: number, fromBytes: number, toBytes: number, deltaBytes: number): void {
    if (keepBytes % BLOCK_BYTES !== 0 || deltaBytes % BLOCK_BYTES !== 0) throw new Error(`invariant: a shift moves whole blocks (keep ${keepBytes}, by ${deltaBytes})`);
    const src = this.clone();
    const oldSize = this.sizeBytes;
    const allocated = src.allocated.clone();
    this.resize(keepBytes);
    // A hole is skipped, not written: past the size a gap reads as zeros, and takes no block.
    this.copyFrom(src, fromBytes, oldSize, toBytes, false);
    this.resize(Math.max(keepBytes, oldSize + deltaBytes));
    // Allocation moves with the bytes: blocks of a collapsed range are gone, an inserted range is a hole.
    if (deltaBytes < 0) allocated.remove(blockOf(keepBytes), blockOf(fromBytes) - 1);
    allocated.shiftFrom(blockOf(fromBytes), deltaBytes / BLOCK_BYTES);
    this.allocated = allocated;
  }

  /** Bytes [startBytes, min(endBytes, size)) read as zeros: whole chunks dropped, the rest zero-filled. */
  private clear(startBytes: number, endBytes: number): void {
    const stop = Math.min(endBytes, this.sizeBytes);
    for (let pos = startBytes; pos < stop;) {
      const i = Math.floor(pos / CHUNK_BYTES);
      const base = i * CHUNK_BYTES;
      const to = Math.min(CHUNK_BYTES, stop - base);
      if (pos === base && to === CHUNK_BYTES) {
        this.chunks[i] = null;
        this.owned[i] = false;
        this.setTerm(i, 0n);
      } else if (this.chunks[i]) {
        const c = this.chunks[i]!;
        // Bytes past a short chunk already read as zeros.
        if (pos - base < c.length) this.writable(i, pos - base, Math.min(to, c.length)).fill(0, pos - base, Math.min(to, c.length));
      }
      pos = base + to;
    }
  }

  /**
   * Writes `data` at `offset`, growing the size (a gap reads as zeros). Whole chunks of `data` are
   * kept by reference: the caller must never change `data` afterwards.
   */
  write(offset: number, data: Uint8Array): void {
    this.writeBytes(offset, data, true);
  }

  /** Copies [start, end) of `src` (clipped to its size) into the same range here. */
  copyRangeFrom(src: GrowBuffer, start: number, end: number): void {
    this.copyFrom(src, start, end, start, true);
  }

  /** Copies [start, end) of `src` (clipped to its size) to `to` on here; its holes are written as zeros, or skipped. */
  private copyFrom(src: GrowBuffer, start: number, end: number, to: number, zeroHoles: boolean): void {
    const stop = Math.min(end, src.size);
    for (let pos = start; pos < stop;) {
      const i = Math.floor(pos / CHUNK_BYTES);
      const base = i * CHUNK_BYTES;
      const n = Math.min(base + CHUNK_BYTES, stop) - pos;
      const c = src.chunks[i];
      const have = c ? Math.max(0, Math.min(c.length - (pos - base), n)) : 0;
      // src's chunk may be owned by src (it may change later): copy, never keep it by reference.
      if (have > 0) this.writeBytes(pos - start + to, c!.subarray(pos - base, pos - base + have), false);
      if (zeroHoles && have < n) this.writeBytes(pos - start + to + have, Buffer.alloc(n - have), false);
      pos += n;
    }
  }

  /** The byte at `offset` (0 past the end). */
  byteAt(offset: number): number {
    if (offset >= this.sizeBytes) return 0;
    const i = Math.floor(offset / CHUNK_BYTES);
    const c = this.chunks[i];
    const k = offset - i * CHUNK_BYTES;
    return c && k < c.length ? c[k] : 0;
  }

  /** [offset, offset + length) clipped to the size: a view while it lies in one chunk (valid until the next change), else a copy. */
  read(offset: number, length: number): Buffer {
    const stop = Math.min(offset + length, this.sizeBytes);
    if (stop <= offset) return Buffer.alloc(0);
    const i = Math.floor(offset / CHUNK_BYTES);
    const base = i * CHUNK_BYTES;
    const c = this.chunks[i];
    if (stop <= base + CHUNK_BYTES && c && stop - base <= c.length) return c.subarray(offset - base, stop - base);
    const out = Buffer.alloc(stop - offset);
    this.copyOut(offset, out);
    return out;
  }

  /** The [start, end) byte ranges below the size that chunks hold, merged, in order: every byte outside reads as zero (a hole). */
  dataExtents(): [number, number][] {
    const out: [number, number][] = [];
    for (let i = 0; i < this.chunks.length; i++) {
      const c = this.chunks[i];
      if (!c) continue;
      const start = i * CHUNK_BYTES;
      const end = Math.min(start + c.length, this.sizeBytes);
      if (end <= start) continue;
      const last = out[out.length - 1];
      if (last && last[1] === start) last[1] = end;
      else out.push([start, end]);
    }
    return out;
  }

  /** A copy of the contents. */
  toBuffer(): Buffer {
    const out = Buffer.alloc(this.sizeBytes);
    this.copyOut(0, out);
    return out;
  }

  /** True if both hold the same bytes: shared chunks compare by reference, so a version and a clone of it compare in time proportional to what changed. */
  equals(other: GrowBuffer): boolean {
    if (other.sizeBytes !== this.sizeBytes) return false;
    for (let i = 0; i < this.chunks.length; i++) {
      const [a, b] = [this.chunks[i], other.chunks[i]];
      if (a === b) continue;
      const valid = Math.min(this.sizeBytes - i * CHUNK_BYTES, CHUNK_BYTES); // bytes past the size may differ
      const [x, y] = [Buffer.alloc(valid), Buffer.alloc(valid)];
      if (a) a.copy(x, 0, 0, Math.min(a.length, valid));
      if (b) b.copy(y, 0, 0, Math.min(b.length, valid));
      if (!x.equals(y)) return false;
    }
    return true;
  }

  /**
   * The digest of the contents (content-digest.ts; equal for equal bytes, holes and written zeros
   * alike): computes the terms of the chunks changed since it was last asked for, no others.
   */
  contentDigest(): string {
    for (const i of this.staleTerms) {
      if (i >= this.chunks.length || this.terms[i] !== undefined) continue;
      const t = this.termOf(i);
      this.terms[i] = t;
      this.termSum += t;
    }
    this.staleTerms = [];
    return combineTerms(this.sizeBytes, this.termSum);
  }

  /** Chunk i's term, from the cache of its bytes when the chunk is shared (never changed again) and lies wholly below the size. */
  private termOf(i: number): bigint {
    const c = this.chunks[i];
    if (!c) return 0n;
    const valid = Math.min(this.sizeBytes - i * CHUNK_BYTES, CHUNK_BYTES, c.length);
    // An owned chunk may still change; bytes of a chunk past the size may be stale: neither is cached.
    if (this.owned[i] || valid < c.length) return chunkTerm(i, c.subarray(0, valid));
    return chunkTerm(i, c, true);
  }

  /** Chunk i changed: its term is computed again when the digest is next asked for. */
  private staleTerm(i: number): void {
    const t = this.terms[i];
    if (t === undefined) return;
    this.termSum -= t;
    this.terms[i] = undefined;
    this.staleTerms.push(i);
    // A version whose digest is never asked for (a live one) keeps its list bounded: truncating
    // down and growing again can list a chunk twice.
    if (this.staleTerms.length > 2 * this.chunks.length + 16) this.staleTerms = this.staleTerms.filter((j) => j < this.chunks.length && this.terms[j] === undefined);
  }

  private setTerm(i: number, term: bigint): void {
    this.staleTerm(i);
    this.terms[i] = term;
    this.termSum += term;
  }

  /** An independent version with the same contents: shares every chunk until either side changes it. */
  clone(): GrowBuffer {
    const g = new GrowBuffer();
    g.chunks = this.chunks.slice();
    g.owned = new Array<boolean>(this.chunks.length).fill(false);
    this.owned.fill(false);
    g.sizeBytes = this.sizeBytes;
    g.allocated = this.allocated.clone();
    g.terms = this.terms.slice();
    g.termSum = this.termSum;
    g.staleTerms = this.staleTerms.slice();
    return g;
  }

  /** Copies the bytes from `offset` into `out` (as many as `out` holds; zeros where no chunk holds them). */
  private copyOut(offset: number, out: Buffer): void {
    const stop = offset + out.length;
    for (let pos = offset; pos < stop;) {
      const i = Math.floor(pos / CHUNK_BYTES);
      const base = i * CHUNK_BYTES;
      const n = Math.min(base + CHUNK_BYTES, stop) - pos;
      const c = this.chunks[i];
      const k = pos - base;
      if (c && k < c.length) c.copy(out, pos - offset, k, Math.min(c.length, k + n));
      pos += n; // `out` is zero-filled: bytes past a short chunk stay 0
    }
  }

  private writeBytes(offset: number, data: Uint8Array, mayKeep: boolean): void {
    const end = offset + data.length;
    if (end > this.sizeBytes) this.grow(end, offset);
    if (data.length > 0) this.allocated.add(blockOf(offset), blockOf(end - 1));
    for (let pos = offset; pos < end;) {
      const i = Math.floor(pos / CHUNK_BYTES);
      const base = i * CHUNK_BYTES;
      const from = pos - base;
      const to = Math.min(CHUNK_BYTES, end - base);
      const src = pos - offset;
      if (mayKeep && from === 0 && to === CHUNK_BYTES) {
        // A whole chunk: keep the caller's bytes (never changed in place: not owned).
        this.chunks[i] = Buffer.isBuffer(data) ? data.subarray(src, src + CHUNK_BYTES) : Buffer.from(data.buffer, data.byteOffset + src, CHUNK_BYTES);
        this.owned[i] = false;
        this.staleTerm(i);
      } else {
        const c = this.writable(i, from, to);
        c.set(src === 0 && to - from === data.length ? data : data.subarray(src, src + to - from), from);
      }
      pos = base + to;
    }
  }

  /**
   * Chunk i, owned and at least `to` bytes long, ready for bytes [from, to) (of the chunk) to be
   * written: every other byte of it below the size holds its content (copied, or zeros).
   */
  private writable(i: number, from: number, to: number): Buffer {
    this.staleTerm(i); // every change in place goes through here
    const c = this.chunks[i];
    if (c && this.owned[i] && c.length >= to) return c;
    const valid = Math.min(this.sizeBytes - i * CHUNK_BYTES, CHUNK_BYTES); // bytes of this chunk below the size
    const keep = c ? Math.min(c.length, valid) : 0;
    let cap = CHUNK_BYTES; // past chunk 0 the file is large: whole chunks
    if (i === 0) {
      // A small file: grow geometrically (doubling an owned chunk), never below what it holds.
      const need = Math.max(to, keep);
      cap = Math.max(MIN_CAPACITY, c && this.owned[i] ? c.length * 2 : 0);
      while (cap < need) cap *= 2;
      cap = Math.min(cap, CHUNK_BYTES);
    }
    const next = cap === CHUNK_BYTES ? allocateChunk() : Buffer.allocUnsafeSlow(cap);
    if (keep > 0) c!.copy(next, 0, 0, keep);
    // Bytes below the size that the old chunk did not hold read as zeros; those about to be written need no fill.
    const zeroTo = Math.min(valid, cap);
    if (keep < from) next.fill(0, keep, Math.min(from, zeroTo));
    if (to < zeroTo) next.fill(0, Math.max(keep, to), zeroTo);
    this.chunks[i] = next;
    this.owned[i] = true;
    return next;
  }

  /** Grows the size to `newSize`; bytes [old size, min(newSize, writeFrom)) must read as zeros (the rest is about to be written). */
  private grow(newSize: number, writeFrom: number): void {
    const old = this.sizeBytes;
    const i = Math.floor(old / CHUNK_BYTES);
    const c = i < this.chunks.length ? this.chunks[i] : null;
    if (c) {
      // Chunk i may hold stale bytes past the old size (after a truncate, or unused capacity).
      const k = old - i * CHUNK_BYTES;
      const zeroTo = Math.min(c.length, newSize - i * CHUNK_BYTES, Math.max(k, writeFrom - i * CHUNK_BYTES));
      if (k < c.length) {
        if (!this.owned[i]) this.chunks[i] = c.subarray(0, k); // shared: stop at the old size instead of changing it
        else if (zeroTo > k) c.fill(0, k, zeroTo);
        this.staleTerm(i);
      }
    }
    const count = Math.ceil(newSize / CHUNK_BYTES);
    for (let j = this.chunks.length; j < count; j++) {
      this.chunks.push(null);
      this.owned.push(false);
      this.terms.push(0n); // a hole: nothing to hash until written
    }
    this.sizeBytes = newSize;
  }
}

/** Disk usage of `blocks` allocated blocks of a file of `sizeBytes`, the block holding its end allocated or not. */
function usage(blocks: number, sizeBytes: number, eofBlockAllocated: boolean): number {
  const tail = sizeBytes % BLOCK_BYTES;
  return blocks * BLOCK_BYTES - (tail !== 0 && eofBlockAllocated ? BLOCK_BYTES - tail : 0);
}
