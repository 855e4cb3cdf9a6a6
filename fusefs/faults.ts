// Armed faults (docs/design.md, "Faults"): fsync EIO per path glob, ENOSPC after N more bytes, read EIO
// and bit flips on given bytes of the durable content; and the disk's size. Pure decisions; the
// adapter applies them.
import type { Fault } from './protocol.js';
import { pathMatcher, type PathMatcher } from './crash-point.js';

interface Armed {
  fault: Fault;
  matches: PathMatcher | null;
  remaining: number; // fsync-eio: failures left; enospc: bytes left
}

/** The disk's size by default: the named files' total size a daemon holds (its file data lives in memory). */
export const DEFAULT_MAX_DATA_BYTES = 512 * 1024 * 1024;

export class Faults {
  private armed: Armed[] = [];
  /** Reads a read fault answered with EIO or changed a bit of, since the faults were last cleared. */
  readHits = 0;

  /**
   * `maxDataBytes` is the disk's size: a write or truncate that would make the named files' total
   * size (FsModel.liveDataBytes) exceed it gets ENOSPC, whatever the faults.
   */
  constructor(private readonly maxDataBytes = DEFAULT_MAX_DATA_BYTES) {}

  add(fault: Fault): void {
    const matches = 'path' in fault ? pathMatcher(fault.path) : null;
    const remaining = fault.type === 'fsync-eio' ? fault.count ?? Infinity : fault.type === 'enospc' ? fault.afterBytes : 0;
    this.armed.push({ fault, matches, remaining });
  }

  clear(): void {
    this.armed = [];
    this.readHits = 0;
  }

  list(): Fault[] {
    return this.armed.map((a) => a.fault);
  }

  /** True if this fsync must fail with EIO (consumes one failure). */
  fsyncFails(path: string): boolean {
    for (const a of this.armed) {
      if (a.fault.type === 'fsync-eio' && a.remaining > 0 && a.matches!(path)) {
        a.remaining--;
        return true;
      }
    }
    return false;
  }

  /**
   * How many of `lengthBytes` written at `offset` of a file of `fileBytes` fit before ENOSPC, with
   * `usedBytes` of the disk taken: bytes within the file's size cost nothing, the size it grows by
   * (a hole before `offset` included) takes free space; an armed enospc fault counts every byte written and its budget is consumed.
   */
  admitWrite(offset: number, lengthBytes: number, fileBytes: number, usedBytes: number): number {
    const freeBytes = Math.max(0, this.maxDataBytes - usedBytes);
    let admitted = Math.min(lengthBytes, Math.max(0, fileBytes + freeBytes - offset));
    for (const a of this.armed) {
      if (a.fault.type !== 'enospc') continue;
      admitted = Math.min(admitted, a.remaining);
    }
    for (const a of this.armed) if (a.fault.type === 'enospc') a.remaining -= admitted;
    return admitted;
  }

  /** True if a file of `fileBytes` may be truncated to `toBytes` with `usedBytes` of the disk taken (shrinking always may). */
  admitResize(fileBytes: number, toBytes: number, usedBytes: number): boolean {
    return toBytes <= fileBytes || toBytes - fileBytes <= this.maxDataBytes - usedBytes;
  }

  /**
   * True if a read of [offset, offset+length) of `path` touches an armed read-eio byte that is
   * `durable` (still holds its on-disk content): a device fault cannot hit bytes not yet written back.
   */
  readFails(path: string, offset: number, length: number, durable: (byteOffset: number) => boolean): boolean {
    const fails = this.armed.some((a) => {
      if (a.fault.type !== 'read-eio' || !a.matches!(path)) return false;
      const end = Math.min(offset + length, a.fault.offset + a.fault.length);
      for (let i = Math.max(offset, a.fault.offset); i < end; i++) if (durable(i)) return true;
      return false;
    });
    if (fails) this.readHits++;
    return fails;
  }

  /** Flips armed bits of `durable` bytes inside `data`, which holds the bytes read at `offset` (mutates `data`). */
  corruptRead(path: string, offset: number, data: Buffer, durable: (byteOffset: number) => boolean): void {
    for (const a of this.armed) {
      if (a.fault.type !== 'bitflip' || !a.matches!(path)) continue;
      const i = a.fault.offset - offset;
      if (i >= 0 && i < data.length && durable(a.fault.offset)) {
        data[i] ^= 1 << (a.fault.bit ?? 0);
        this.readHits++;
      }
    }
  }
}
