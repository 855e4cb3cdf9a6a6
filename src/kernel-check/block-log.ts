// The block log QEMU's blklogwrites driver keeps (dm-log-writes' format), and the crash states it
// allows. Pure: bytes in, entries and states out.
//
// The log: sector 0 is a header {u64 magic, u64 version, u64 nr_entries, u32 sector size}; then per
// entry a sector-sized header {u64 sector, u64 nr_sectors, u64 flags, u64 data_len} followed by
// nr_sectors sectors of data (none for a discard or a flush). nr_entries is rewritten only at
// flushes, so the entries are read to the end of the file, stopping at a zero or truncated header.

export const LOG_MAGIC = 0x6a736677736872n;
export const FLAG_FLUSH = 1;
export const FLAG_FUA = 2;
export const FLAG_DISCARD = 4;
export const FLAG_MARK = 8;

export interface LogEntry {
  /** Position in the log, 0-based. */
  index: number;
  /** First sector written (in the log's sector size). */
  sector: number;
  sectors: number;
  flags: number;
  /** What was written (empty for a flush or a discard). */
  data: Buffer;
}

export interface BlockLog {
  sectorSize: number;
  entries: LogEntry[];
}

export function parseBlockLog(buf: Buffer): BlockLog {
  if (buf.length < 28) throw new Error(`block log of ${buf.length} bytes has no header`);
  if (buf.readBigUInt64LE(0) !== LOG_MAGIC) throw new Error(`block log magic is 0x${buf.readBigUInt64LE(0).toString(16)}, not 0x${LOG_MAGIC.toString(16)} (dm-log-writes)`);
  const sectorSize = buf.readUInt32LE(24);
  if (sectorSize < 512 || (sectorSize & (sectorSize - 1)) !== 0) throw new Error(`block log sector size ${sectorSize} is not a power of two >= 512`);
  const entries: LogEntry[] = [];
  let off = sectorSize;
  while (off + 32 <= buf.length) {
    const sector = Number(buf.readBigUInt64LE(off));
    const sectors = Number(buf.readBigUInt64LE(off + 8));
    const flags = Number(buf.readBigUInt64LE(off + 16));
    if (sector === 0 && sectors === 0 && flags === 0) break;
    const dataBytes = flags & (FLAG_DISCARD | FLAG_MARK) ? 0 : sectors * sectorSize;
    if (off + sectorSize + dataBytes > buf.length) break; // written in part when the log was read
    entries.push({ index: entries.length, sector, sectors, flags, data: buf.subarray(off + sectorSize, off + sectorSize + dataBytes) });
    off += sectorSize + dataBytes;
  }
  return { sectorSize, entries };
}

/** How the states of one epoch (the writes between two flushes) are chosen. */
export interface SubsetBound {
  /** Every subset of an epoch's writes when it has at most this many; else prefixes and all-but-one. */
  allSubsetsUpTo: number;
}

export const DEFAULT_SUBSET_BOUND: SubsetBound = { allSubsetsUpTo: 3 };

/** One block-level crash state: which writes reached the disk, and which steps may have completed. */
export interface BlockState {
  /** Log indices of the filesystem writes that are durable, in log order. */
  writes: number[];
  /** Every write up to this flush (log index; -1: none) is in `writes`. */
  flush: number;
  /** The writes after that flush that persisted (subset of the epoch), in log order. */
  subset: number[];
  /** The epoch's writes (after `flush`, before the next flush). */
  epoch: number[];
  /** The model cuts this state may be (steps completed): from `steps[0]` to `steps[1]`. */
  steps: [number, number];
}

/**
 * The crash states of a log: at each flush (and the log's start), everything before it plus a
 * subset of the writes after it up to the next flush (a volatile write cache may have kept any of
 * them) — every subset when there are at most `bound.allSubsetsUpTo`, else every prefix and every
 * all-but-one. Writes at or past `markerSector` are step markers, never part of a state: marker k
 * is written after step k returned, so a state whose last durable write (or flush) follows marker k
 * had at least k steps completed, and one cut before the next flush at most (markers before it)+1.
 */
export function blockStates(log: BlockLog, markerSector: number, stepCount: number, bound: SubsetBound = DEFAULT_SUBSET_BOUND): BlockState[] {
  const markersBefore: number[] = []; // markersBefore[i]: markers with log index < i
  let markers = 0;
  const isMarker = (e: LogEntry) => e.sectors > 0 && e.sector >= markerSector;
  for (const e of log.entries) {
    markersBefore.push(markers);
    if (isMarker(e)) markers++;
  }
  markersBefore.push(markers);
  const isWrite = (e: LogEntry) => e.sectors > 0 && !isMarker(e);
  const flushes = log.entries.filter((e) => e.flags & FLAG_FLUSH).map((e) => e.index);
  const starts = [-1, ...flushes];
  const states: BlockState[] = [];
  const durable: number[] = [];
  let done = 0;
  for (let f = 0; f < starts.length; f++) {
    const from = starts[f];
    const to = f + 1 < starts.length ? starts[f + 1] : log.entries.length;
    for (; done <= from; done++) if (isWrite(log.entries[done])) durable.push(done);
    const epoch = log.entries.slice(from + 1, to).filter(isWrite).map((e) => e.index);
    const hi = Math.min(stepCount, markersBefore[to] + 1);
    for (const subset of epochSubsets(epoch, bound)) {
      const last = subset.length > 0 ? subset[subset.length - 1] : from;
      const lo = Math.min(markersBefore[last + 1], hi);
      states.push({ writes: [...durable, ...subset], flush: from, subset, epoch, steps: [lo, hi] });
    }
  }
  return states;
}

/** The subsets of one epoch's writes a state set keeps (see blockStates), each in log order, no duplicates. */
export function epochSubsets(epoch: readonly number[], bound: SubsetBound): number[][] {
  const n = epoch.length;
  if (n <= bound.allSubsetsUpTo) {
    const out: number[][] = [];
    for (let mask = 0; mask < 1 << n; mask++) out.push(epoch.filter((_, i) => mask & (1 << i)));
    return out;
  }
  const out: number[][] = [];
  for (let k = 0; k <= n; k++) out.push(epoch.slice(0, k));
  // All but one (all but the last is a prefix already).
  for (let i = 0; i < n - 1; i++) out.push(epoch.filter((_, j) => j !== i));
  return out;
}

/** The image `base` with the log's writes `writes` applied in order (a copy; discards read as zeros). */
export function applyWrites(base: Buffer, log: BlockLog, writes: readonly number[]): Buffer {
  const img = Buffer.from(base);
  for (const i of writes) {
    const e = log.entries[i];
    const at = e.sector * log.sectorSize;
    const len = e.sectors * log.sectorSize;
    if (at + len > img.length) throw new Error(`block log entry ${i} writes sectors ${e.sector}+${e.sectors}, past the image's ${img.length} bytes`);
    if (e.flags & FLAG_DISCARD) img.fill(0, at, at + len);
    else e.data.copy(img, at);
  }
  return img;
}

/** Marker step numbers in log order with their log index ("KCMARK n" blocks the guest runner writes). */
export function markerSteps(log: BlockLog, markerSector: number): { index: number; step: number }[] {
  return log.entries
    .filter((e) => e.sector >= markerSector && e.data.length > 0)
    .map((e) => ({ index: e.index, step: Number(/^KCMARK (\d+)/.exec(e.data.subarray(0, 32).toString('latin1'))?.[1] ?? NaN) }));
}
