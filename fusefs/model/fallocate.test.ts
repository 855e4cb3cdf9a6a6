// fallocate in the crash model: the errno of each mode as ext4 answers it (through the VFS), what each
// kind does to a file's bytes, size and allocated blocks, and what a power cut keeps of it. The
// sector rule for every kind is checked against the brute-force reference in torn.test.ts, the
// model's invariants with fallocate among random operations in fs-model.test.ts.
import { describe, expect, it } from 'vitest';
import { EFBIG, EINVAL, EOPNOTSUPP, FsError } from './errno.js';
import {
  FALLOC_FL_COLLAPSE_RANGE, FALLOC_FL_INSERT_RANGE, FALLOC_FL_KEEP_SIZE, FALLOC_FL_PUNCH_HOLE, FALLOC_FL_UNSHARE_RANGE, FALLOC_FL_ZERO_RANGE, fallocateKind,
} from './fallocate.js';
import { FsModel, MAX_FILE_BYTES, ROOT_INO } from './fs-model.js';
import { BLOCK_BYTES } from './grow-buffer.js';

const errnoOf = (f: () => unknown): number => {
  try {
    f();
    return 0;
  } catch (e) {
    if (e instanceof FsError) return e.errno;
    throw e;
  }
};
const B = BLOCK_BYTES;
const KEEP = FALLOC_FL_KEEP_SIZE;
const PUNCH = FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE;

function fileWith(bytes: Buffer): { m: FsModel; ino: number } {
  const m = new FsModel(() => 0, { uid: 0, gid: 0 });
  const ino = m.create('/f', 0o644);
  m.write(ino, 0, bytes);
  m.fsync(ino);
  m.fsync(ROOT_INO);
  return { m, ino };
}
const pattern = (n: number) => Buffer.from(Array.from({ length: n }, (_, i) => (i % 251) + 1));

describe('fallocate modes and their errno (ext4 through the VFS)', () => {
  it.each([
    ['mode 0', 0, 0, 10, 'allocate'],
    ['KEEP_SIZE', KEEP, 0, 10, 'allocate-keep-size'],
    ['PUNCH_HOLE | KEEP_SIZE', PUNCH, 0, 10, 'punch'],
    ['ZERO_RANGE', FALLOC_FL_ZERO_RANGE, 0, 10, 'zero'],
    ['ZERO_RANGE | KEEP_SIZE', FALLOC_FL_ZERO_RANGE | KEEP, 0, 10, 'zero-keep-size'],
    ['COLLAPSE_RANGE', FALLOC_FL_COLLAPSE_RANGE, 0, B, 'collapse'],
    ['INSERT_RANGE', FALLOC_FL_INSERT_RANGE, 0, B, 'insert'],
  ] as const)('%s is %s', (_name, mode, offset, length, kind) => {
    expect(fallocateKind(mode, offset, length, 4 * B, MAX_FILE_BYTES)).toBe(kind);
  });

  it.each([
    ['a negative offset', 0, -1, 10, EINVAL],
    ['a zero length', 0, 0, 0, EINVAL],
    ['an unknown bit', 0x400, 0, 10, EOPNOTSUPP],
    ['PUNCH_HOLE without KEEP_SIZE', FALLOC_FL_PUNCH_HOLE, 0, 10, EOPNOTSUPP],
    ['PUNCH_HOLE with ZERO_RANGE', PUNCH | FALLOC_FL_ZERO_RANGE, 0, 10, EOPNOTSUPP],
    ['COLLAPSE_RANGE with KEEP_SIZE', FALLOC_FL_COLLAPSE_RANGE | KEEP, 0, B, EINVAL],
    ['INSERT_RANGE with KEEP_SIZE', FALLOC_FL_INSERT_RANGE | KEEP, 0, B, EINVAL],
    ['UNSHARE_RANGE (ext4 shares no blocks)', FALLOC_FL_UNSHARE_RANGE, 0, 10, EOPNOTSUPP],
    ['COLLAPSE_RANGE not block-aligned', FALLOC_FL_COLLAPSE_RANGE, 512, B, EINVAL],
    ['COLLAPSE_RANGE reaching the end', FALLOC_FL_COLLAPSE_RANGE, 2 * B, 2 * B, EINVAL],
    ['INSERT_RANGE at the end', FALLOC_FL_INSERT_RANGE, 4 * B, B, EINVAL],
    ['a range past the largest file', 0, MAX_FILE_BYTES, 1, EFBIG],
  ] as const)('%s: errno %i', (_name, mode, offset, length, errno) => {
    expect(errnoOf(() => fallocateKind(mode, offset, length, 4 * B, MAX_FILE_BYTES))).toBe(errno);
  });

  it('a refused fallocate changes nothing', () => {
    const { m, ino } = fileWith(pattern(100));
    const before = m.changeCount;
    expect(errnoOf(() => m.fallocate(ino, FALLOC_FL_COLLAPSE_RANGE, 0, B))).toBe(EINVAL);
    expect(m.changeCount).toBe(before);
    expect(m.read(ino, 0, 200)).toEqual(pattern(100));
  });
});

describe('fallocate: bytes, size and blocks', () => {
  it('mode 0 grows the size with zeros and allocates; KEEP_SIZE allocates past the end without growing it', () => {
    const { m, ino } = fileWith(pattern(10));
    m.fallocate(ino, 0, 0, 3 * B);
    expect(m.stat(ino).sizeBytes).toBe(3 * B);
    expect(m.read(ino, 0, 3 * B)).toEqual(Buffer.concat([pattern(10), Buffer.alloc(3 * B - 10)]));
    expect(m.liveDataBytes).toBe(3 * B);
    m.fallocate(ino, KEEP, 3 * B, 2 * B);
    expect(m.stat(ino).sizeBytes).toBe(3 * B);
    expect(m.liveDataBytes).toBe(5 * B); // preallocated blocks past the end take space
    m.truncate(ino, B); // truncating down frees them, and the blocks past the new size
    expect(m.liveDataBytes).toBe(B);
  });

  it('PUNCH_HOLE zeros the range and frees the blocks wholly inside it; ZERO_RANGE zeros and keeps them', () => {
    const { m, ino } = fileWith(pattern(4 * B));
    m.fallocate(ino, PUNCH, 100, 2 * B); // blocks 0 and 2 partly, block 1 wholly
    const expected = pattern(4 * B);
    expected.fill(0, 100, 100 + 2 * B);
    expect(m.read(ino, 0, 4 * B)).toEqual(expected);
    expect(m.liveDataBytes).toBe(3 * B);
    m.fallocate(ino, FALLOC_FL_ZERO_RANGE, 0, 5 * B);
    expect(m.read(ino, 0, 5 * B)).toEqual(Buffer.alloc(5 * B));
    expect(m.stat(ino).sizeBytes).toBe(5 * B);
    expect(m.liveDataBytes).toBe(5 * B);
  });

  it('COLLAPSE_RANGE removes whole blocks and moves the rest down; INSERT_RANGE opens a hole', () => {
    const data = pattern(4 * B + 7);
    const { m, ino } = fileWith(data);
    m.fallocate(ino, FALLOC_FL_COLLAPSE_RANGE, B, 2 * B);
    expect(m.read(ino, 0, 10 * B)).toEqual(Buffer.concat([data.subarray(0, B), data.subarray(3 * B)]));
    m.fallocate(ino, FALLOC_FL_INSERT_RANGE, 0, B);
    expect(m.read(ino, 0, 10 * B)).toEqual(Buffer.concat([Buffer.alloc(B), data.subarray(0, B), data.subarray(3 * B)]));
    expect(m.liveDataBytes).toBe(2 * B + 7); // the inserted block is a hole: only the data takes space
    m.assertInvariants();
  });

  it('sparse files take only the blocks written: a byte at 2 GiB + 1, a truncate to 16 GiB, EFBIG past it', () => {
    const m = new FsModel(() => 0, { uid: 0, gid: 0 });
    const ino = m.create('/sparse', 0o644);
    m.write(ino, 2 ** 31 + 1, Buffer.from('x'));
    expect(m.stat(ino).sizeBytes).toBe(2 ** 31 + 2);
    expect(m.liveDataBytes).toBe(2); // its block up to the end of the file
    m.truncate(ino, MAX_FILE_BYTES);
    expect(m.liveDataBytes).toBe(B);
    expect(errnoOf(() => m.truncate(ino, 999_999_999_999_999))).toBe(EFBIG);
    m.assertInvariants();
  });
});

describe('fallocate across a power cut', () => {
  it('lose-unsynced loses an unsynced fallocate whole: bytes, size and blocks; an fsync keeps it', () => {
    const { m, ino } = fileWith(pattern(2 * B));
    m.fallocate(ino, PUNCH, 0, B);
    m.fallocate(ino, KEEP, 2 * B, 4 * B);
    const lost = m.clone();
    lost.crash('lose-unsynced');
    expect(lost.read(lost.resolve('/f'), 0, 4 * B)).toEqual(pattern(2 * B));
    expect(lost.liveDataBytes).toBe(2 * B);
    m.fsync(ino);
    m.crash('lose-unsynced');
    expect(m.read(ino, 0, B)).toEqual(Buffer.alloc(B));
    expect(m.liveDataBytes).toBe(5 * B);
  });

  it('under torn, a cut keeps an allocation\'s size with it or loses both: mode 0 never leaves blocks without its size', () => {
    const { m, ino } = fileWith(Buffer.alloc(0));
    m.fallocate(ino, 0, 0, 2 * B);
    const seen = new Set<string>();
    for (let seed = 0; seed < 50; seed++) {
      const cut = m.clone();
      cut.crash('torn', seed);
      const f = cut.resolve('/f');
      seen.add(`${cut.stat(f).sizeBytes}:${cut.liveDataBytes}`);
      cut.assertInvariants();
    }
    expect([...seen].sort()).toEqual(['0:0', `${2 * B}:${2 * B}`]);
  });
});
