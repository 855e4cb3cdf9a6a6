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
   * `maxDataBytes` is the disk's size: a write or fallocate that would make the blocks the named
   * files hold (FsModel.liveDataBytes: holes are free) exceed it gets ENOSPC, whatever the faults.
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
   * How many of `lengthBytes` written at `offset` fit before ENOSPC, with `usedBytes` of the disk
   * taken and `usageAfter(n)` the disk usage of the file after writing the first n of them
   * (GrowBuffer.usageAfterWrite: blocks already allocated cost nothing, a hole before `offset` nothing
   * either); an armed enospc fault counts every byte written and its budget is consumed.
   */
  admitWrite(lengthBytes: number, usedBytes: number, usageAfter: (bytes: number) => number): number {
    const room = this.maxDataBytes - usedBytes + usageAfter(0);
    let admitted = lengthBytes;
    if (usageAfter(lengthBytes) > room) {
      // The longest prefix that fits (usage grows with the prefix): a short write, as a full disk gives.
      let lo = 0;
      let hi = lengthBytes;
      while (lo < hi) {
        const mid = Math.ceil((lo + hi) / 2);
        if (usageAfter(mid) <= room) lo = mid;
        else hi = mid - 1;
      }
      admitted = lo;
    }
    for (const a of this.armed) {
      if (a.fault.type !== 'enospc') continue;
      admitted = Math.min(admitted, a.remaining);
    }
    for (const a of this.armed) if (a.fault.type === 'enospc') a.remaining -= admitted;
    return admitted;
  }

  /**
   * Room for writes with `usedBytes` of the disk taken: the disk's free bytes, and the bytes an armed
   * enospc fault still lets through (Infinity when none is armed). What the binding may write by itself (write-behind.ts).
   */
  writeRoom(usedBytes: number): { diskBytes: number; faultBytes: number } {
    let faultBytes = Infinity;
    for (const a of this.armed) if (a.fault.type === 'enospc') faultBytes = Math.min(faultBytes, a.remaining);
    return { diskBytes: this.maxDataBytes - usedBytes, faultBytes };
  }

  /** True if a change taking the disk from `usedBytes` to `usedAfterBytes` fits (one that frees space always does): fallocate's check, all or nothing. */
  admitAllocation(usedBytes: number, usedAfterBytes: number): boolean {
    return usedAfterBytes <= usedBytes || usedAfterBytes <= this.maxDataBytes;
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
