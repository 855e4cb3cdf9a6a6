// A byte array with a logical size and spare capacity, so sequential appends are amortised O(1).
export class GrowBuffer {
  private buf: Buffer;
  size: number;

  constructor(initial?: Buffer) {
    this.buf = initial ? Buffer.from(initial) : Buffer.alloc(0);
    this.size = this.buf.length;
  }

  /** Sets the size; bytes that become visible by growing read as zeros. */
  resize(sizeBytes: number): void {
    if (sizeBytes > this.buf.length) {
      const next = Buffer.alloc(Math.max(sizeBytes, Math.min(this.buf.length * 2, this.buf.length + (64 << 20))));
      this.buf.copy(next, 0, 0, this.size);
      this.buf = next;
    } else if (sizeBytes > this.size) {
      this.buf.fill(0, this.size, sizeBytes);
    }
    this.size = sizeBytes;
  }

  write(offset: number, data: Uint8Array): void {
    const end = offset + data.length;
    if (end > this.size) this.resize(end);
    this.buf.set(data, offset);
  }

  /** Copies [start, end) of `src` (clipped to its size) into the same range here. */
  copyRangeFrom(src: GrowBuffer, start: number, end: number): void {
    const stop = Math.min(end, src.size);
    if (stop <= start) return;
    if (stop > this.size) this.resize(stop);
    src.buf.copy(this.buf, start, start, stop);
  }

  read(offset: number, length: number): Buffer {
    const stop = Math.min(offset + length, this.size);
    return stop <= offset ? Buffer.alloc(0) : this.buf.subarray(offset, stop);
  }

  /** A copy of the contents. */
  toBuffer(): Buffer {
    return Buffer.from(this.buf.subarray(0, this.size));
  }

  clone(): GrowBuffer {
    return new GrowBuffer(this.buf.subarray(0, this.size));
  }
}
