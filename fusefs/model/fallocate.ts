// fallocate(2) as the crash model knows it: the mode flags mapped to one range operation (as Linux's
// VFS and ext4 check them, errno for errno), and what each operation does to one file version. The
// model records each as a pending change (nodes.ts) that crash policies keep or lose as they do writes
// and truncates (torn.ts); docs/fs.md, "fallocate".
import { EFBIG, EINVAL, EOPNOTSUPP, FsError } from './errno.js';
import { BLOCK_BYTES, type GrowBuffer } from './grow-buffer.js';

export const FALLOC_FL_KEEP_SIZE = 0x01;
export const FALLOC_FL_PUNCH_HOLE = 0x02;
export const FALLOC_FL_COLLAPSE_RANGE = 0x08;
export const FALLOC_FL_ZERO_RANGE = 0x10;
export const FALLOC_FL_INSERT_RANGE = 0x20;
export const FALLOC_FL_UNSHARE_RANGE = 0x40;

/**
 * What a fallocate does: allocate (mode 0: blocks, and the size up to the range's end), with
 * KEEP_SIZE (blocks only, also past the end), punch a hole (zeros, blocks freed), zero a range
 * (zeros, blocks allocated; the size grows unless KEEP_SIZE), collapse a range (bytes after it move
 * down) or insert one (a hole; bytes after it move up).
 */
export type FallocateKind = 'allocate' | 'allocate-keep-size' | 'punch' | 'zero' | 'zero-keep-size' | 'collapse' | 'insert';

/** The operation `mode` asks for on a file of `sizeBytes`, or the FsError ext4 (through the VFS) answers. */
export function fallocateKind(mode: number, offsetBytes: number, lengthBytes: number, sizeBytes: number, maxFileBytes: number): FallocateKind {
  if (!Number.isSafeInteger(offsetBytes) || !Number.isSafeInteger(lengthBytes) || offsetBytes < 0 || lengthBytes <= 0) {
    throw new FsError(EINVAL, `fallocate: offset ${offsetBytes}, length ${lengthBytes}`);
  }
  const known = FALLOC_FL_KEEP_SIZE | FALLOC_FL_PUNCH_HOLE | FALLOC_FL_COLLAPSE_RANGE | FALLOC_FL_ZERO_RANGE | FALLOC_FL_INSERT_RANGE | FALLOC_FL_UNSHARE_RANGE;
  // The VFS's checks (vfs_fallocate), in its order.
  if (mode & ~known) throw new FsError(EOPNOTSUPP, `fallocate: unknown mode bits 0x${mode.toString(16)}`);
  const punch = (mode & FALLOC_FL_PUNCH_HOLE) !== 0;
  const zero = (mode & FALLOC_FL_ZERO_RANGE) !== 0;
  const keep = (mode & FALLOC_FL_KEEP_SIZE) !== 0;
  if (punch && zero) throw new FsError(EOPNOTSUPP, 'fallocate: PUNCH_HOLE and ZERO_RANGE together');
  if (punch && !keep) throw new FsError(EOPNOTSUPP, 'fallocate: PUNCH_HOLE without KEEP_SIZE');
  if (mode & FALLOC_FL_COLLAPSE_RANGE && mode !== FALLOC_FL_COLLAPSE_RANGE) throw new FsError(EINVAL, 'fallocate: COLLAPSE_RANGE with other flags');
  if (mode & FALLOC_FL_INSERT_RANGE && mode !== FALLOC_FL_INSERT_RANGE) throw new FsError(EINVAL, 'fallocate: INSERT_RANGE with other flags');
  if (mode & FALLOC_FL_UNSHARE_RANGE && mode & ~(FALLOC_FL_UNSHARE_RANGE | FALLOC_FL_KEEP_SIZE)) throw new FsError(EINVAL, 'fallocate: UNSHARE_RANGE with flags other than KEEP_SIZE');
  if (offsetBytes + lengthBytes > maxFileBytes) throw new FsError(EFBIG, `fallocate: range ends beyond ${maxFileBytes} bytes`);
  // ext4's (ext4_fallocate): it shares no blocks, so it has nothing to unshare.
  if (mode & FALLOC_FL_UNSHARE_RANGE) throw new FsError(EOPNOTSUPP, 'fallocate: UNSHARE_RANGE (ext4 shares no blocks)');
  if (mode & (FALLOC_FL_COLLAPSE_RANGE | FALLOC_FL_INSERT_RANGE)) {
    const what = mode & FALLOC_FL_COLLAPSE_RANGE ? 'COLLAPSE_RANGE' : 'INSERT_RANGE';
    if (offsetBytes % BLOCK_BYTES !== 0 || lengthBytes % BLOCK_BYTES !== 0) throw new FsError(EINVAL, `fallocate: ${what} of a range not aligned to ${BLOCK_BYTES}-byte blocks`);
    if (mode & FALLOC_FL_COLLAPSE_RANGE) {
      if (offsetBytes + lengthBytes >= sizeBytes) throw new FsError(EINVAL, 'fallocate: COLLAPSE_RANGE reaching the end of the file (a truncate)');
      return 'collapse';
    }
    if (offsetBytes >= sizeBytes) throw new FsError(EINVAL, 'fallocate: INSERT_RANGE at or past the end of the file');
    if (lengthBytes > maxFileBytes - sizeBytes) throw new FsError(EFBIG, `fallocate: INSERT_RANGE beyond ${maxFileBytes} bytes`);
    return 'insert';
  }
  if (punch) return 'punch';
  if (zero) return keep ? 'zero-keep-size' : 'zero';
  return keep ? 'allocate-keep-size' : 'allocate';
}

/**
 * The size after `kind` on a file of `sizeBytes`. Live, a collapse or an insert lies inside the file
 * (fallocateKind checks); replayed on an older version (durable, after a failed fsync) it may not: it
 * then removes what of its range the file has, or inserts at the end.
 */
export function sizeAfterFallocate(kind: FallocateKind, offsetBytes: number, lengthBytes: number, sizeBytes: number): number {
  switch (kind) {
    case 'allocate':
    case 'zero': return Math.max(sizeBytes, offsetBytes + lengthBytes);
    case 'collapse': return Math.min(offsetBytes, sizeBytes) + Math.max(0, sizeBytes - offsetBytes - lengthBytes);
    case 'insert': return sizeBytes + lengthBytes;
    default: return sizeBytes;
  }
}

/**
 * The bytes `kind` may change on a file of `sizeBytes`, [start, end): none for an allocation (what
 * it makes visible reads as zeros, as after a truncate), the range below the size for a punch or a
 * zeroing (bytes past the size already read as zeros), everything from the offset on for a shift.
 */
export function fallocateBytes(kind: FallocateKind, offsetBytes: number, lengthBytes: number, sizeBytes: number): [start: number, end: number] {
  switch (kind) {
    case 'allocate':
    case 'allocate-keep-size': return [offsetBytes, offsetBytes];
    case 'punch':
    case 'zero':
    case 'zero-keep-size': return [offsetBytes, Math.max(offsetBytes, Math.min(offsetBytes + lengthBytes, sizeBytes))];
    case 'collapse': return [offsetBytes, Math.max(offsetBytes, sizeBytes)];
    case 'insert': return [Math.min(offsetBytes, sizeBytes), sizeBytes + lengthBytes];
  }
}

/** Applies `kind` to `file` (a live version, or a crash image that holds every earlier change). */
export function applyFallocate(file: GrowBuffer, kind: FallocateKind, offsetBytes: number, lengthBytes: number): void {
  const end = offsetBytes + lengthBytes;
  switch (kind) {
    case 'allocate':
      if (end > file.size) file.resize(end);
      file.allocate(offsetBytes, end);
      return;
    case 'allocate-keep-size': return file.allocate(offsetBytes, end);
    case 'punch': return file.punch(offsetBytes, end);
    case 'zero': return file.zero(offsetBytes, end, false);
    case 'zero-keep-size': return file.zero(offsetBytes, end, true);
    case 'collapse': return file.collapse(offsetBytes, lengthBytes);
    case 'insert': return file.insert(offsetBytes, lengthBytes);
  }
}
