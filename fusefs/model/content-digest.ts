// Content digests of file versions, kept per chunk so that a crash state's image hash costs what
// changed, not what the files hold (issue 31: a 64 MiB preallocated log hashed whole at every
// persistence point made the `states` listing take minutes). Pure.
//
// A file's digest is sha1(size, Σ terms mod 2^128) over its CHUNK_BYTES chunks, where chunk i's
// term is 0 when its bytes below the size are all zeros (a hole, an ftruncate-extended region:
// nothing to hash) and otherwise the first 128 bits of sha1(i, its bytes with trailing zeros left
// out). Trailing zeros are left out so that a chunk stored short (bytes past its length read as
// zeros) and the same bytes stored whole have one term; the size pins where the zeros end. A sum,
// not a hash chain, so that one chunk's term can be taken out and put back without the others.
import { createHash } from 'node:crypto';

/** Bytes per chunk: a copy-on-write copy costs at most this much (a 64 KiB memcpy is a few microseconds). */
export const CHUNK_BYTES = 64 * 1024;

const ZERO_BLOCK = Buffer.alloc(4096);
const TERM_MOD_BITS = 128;

/**
 * Terms of chunks that never change again (shared between versions: grow-buffer.ts changes in
 * place only a chunk it owns), by the chunk's Buffer: a version cloned from another after an fsync
 * finds the terms of the chunks they share here instead of hashing them again.
 */
const termCache = new WeakMap<Buffer, { index: number; term: bigint }>();

/** Counts the chunks hashed (tests: what a listing cost, in chunks; never reset by the code). */
export const digestStats = { chunksHashed: 0 };

/** Length of `bytes` without its trailing zeros. */
function trimmedLength(bytes: Buffer): number {
  let end = bytes.length;
  // Whole zero blocks by a native compare first, then byte by byte.
  while (end >= ZERO_BLOCK.length && bytes.compare(ZERO_BLOCK, 0, ZERO_BLOCK.length, end - ZERO_BLOCK.length, end) === 0) end -= ZERO_BLOCK.length;
  while (end > 0 && bytes[end - 1] === 0) end--;
  return end;
}

/**
 * The term of chunk `index` holding `bytes` (its bytes below the size; past them it reads as
 * zeros). `immutable`: `bytes` is a shared chunk that never changes again, so its term is cached.
 */
export function chunkTerm(index: number, bytes: Buffer, immutable = false): bigint {
  if (immutable) {
    const hit = termCache.get(bytes);
    if (hit && hit.index === index) return hit.term;
  }
  const end = trimmedLength(bytes);
  let term = 0n;
  if (end > 0) {
    digestStats.chunksHashed++;
    const head = Buffer.alloc(4);
    head.writeUInt32BE(index);
    const d = createHash('sha1').update(head).update(bytes.subarray(0, end)).digest();
    term = (d.readBigUInt64BE(0) << 64n) | d.readBigUInt64BE(8);
  }
  if (immutable) termCache.set(bytes, { index, term });
  return term;
}

/** A file's digest from its size and the sum of its chunks' terms. */
export function combineTerms(sizeBytes: number, termSum: bigint): string {
  if (termSum < 0n) throw new Error(`invariant: a sum of chunk terms is never negative (got ${termSum})`);
  return createHash('sha1').update(`${sizeBytes}:${BigInt.asUintN(TERM_MOD_BITS, termSum).toString(16)}`).digest('hex');
}

/** The digest of `data` as a file's contents: what GrowBuffer.contentDigest gives for a version holding these bytes. */
export function contentDigest(data: Buffer): string {
  let sum = 0n;
  for (let i = 0; i * CHUNK_BYTES < data.length; i++) sum += chunkTerm(i, data.subarray(i * CHUNK_BYTES, Math.min((i + 1) * CHUNK_BYTES, data.length)));
  return combineTerms(data.length, sum);
}
