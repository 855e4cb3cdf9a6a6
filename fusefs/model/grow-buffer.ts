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

/** Bytes per chunk: a copy-on-write copy costs at most this much (a 64 KiB memcpy is a few microseconds). */
export const CHUNK_BYTES = 64 * 1024;
/** The first allocation of a small file; chunk 0 then doubles up to CHUNK_BYTES. */
const MIN_CAPACITY = 64;

export class GrowBuffer {
  private chunks: (Buffer | null)[] = [];
  private owned: boolean[] = [];
  private sizeBytes = 0;

  constructor(initial?: Uint8Array) {
    if (initial && initial.length > 0) this.writeBytes(0, initial, false);
  }

  get size(): number {
    return this.sizeBytes;
  }

  /** Sets the size; bytes that become visible by growing read as zeros. */
  resize(sizeBytes: number): void {
    if (sizeBytes > this.sizeBytes) this.grow(sizeBytes, sizeBytes);
    else if (sizeBytes < this.sizeBytes) {
      const keep = Math.ceil(sizeBytes / CHUNK_BYTES);
      this.chunks.length = keep;
      this.owned.length = keep;
      this.sizeBytes = sizeBytes;
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
    const stop = Math.min(end, src.size);
    for (let pos = start; pos < stop;) {
      const i = Math.floor(pos / CHUNK_BYTES);
      const base = i * CHUNK_BYTES;
      const n = Math.min(base + CHUNK_BYTES, stop) - pos;
      const c = src.chunks[i];
      const have = c ? Math.max(0, Math.min(c.length - (pos - base), n)) : 0;
      // src's chunk may be owned by src (it may change later): copy, never keep it by reference.
      if (have > 0) this.writeBytes(pos, c!.subarray(pos - base, pos - base + have), false);
      if (have < n) this.writeBytes(pos + have, Buffer.alloc(n - have), false);
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

  /** An independent version with the same contents: shares every chunk until either side changes it. */
  clone(): GrowBuffer {
    const g = new GrowBuffer();
    g.chunks = this.chunks.slice();
    g.owned = new Array<boolean>(this.chunks.length).fill(false);
    this.owned.fill(false);
    g.sizeBytes = this.sizeBytes;
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
    const next = Buffer.allocUnsafeSlow(cap);
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
      }
    }
    const count = Math.ceil(newSize / CHUNK_BYTES);
    for (let j = this.chunks.length; j < count; j++) {
      this.chunks.push(null);
      this.owned.push(false);
    }
    this.sizeBytes = newSize;
  }
}
