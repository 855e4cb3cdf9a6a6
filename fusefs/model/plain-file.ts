// The model's file changes applied to plain buffers, the simplest way (a whole copy per change): the
// brute-force references of the model's tests (torn.test.ts, fs-model.test.ts) compute files with
// this, independently of GrowBuffer and torn.ts.
import type { PendingFileOp } from './nodes.js';

type Change = PendingFileOp extends infer T ? (T extends { seq: number } ? Omit<T, 'seq'> : never) : never;

/** `file` after `change` (a new buffer; bytes past the old size read as zeros). */
export function appliedPlain(file: Buffer, change: Change): Buffer {
  const sized = (size: number) => {
    const next = Buffer.alloc(size);
    file.copy(next, 0, 0, Math.min(file.length, size));
    return next;
  };
  if (change.type === 'write') {
    const next = sized(Math.max(file.length, change.offset + change.data.length));
    change.data.copy(next, change.offset);
    return next;
  }
  if (change.type === 'truncate') return sized(change.sizeBytes);
  const { offset, length } = change;
  const end = offset + length;
  switch (change.kind) {
    case 'allocate': return sized(Math.max(file.length, end));
    case 'allocate-keep-size': return sized(file.length);
    case 'punch':
    case 'zero-keep-size': {
      const next = sized(file.length);
      next.fill(0, Math.min(offset, next.length), Math.min(end, next.length));
      return next;
    }
    case 'zero': {
      const next = sized(Math.max(file.length, end));
      next.fill(0, offset, end);
      return next;
    }
    case 'collapse': return Buffer.concat([file.subarray(0, offset), file.subarray(end)]);
    case 'insert': return Buffer.concat([file.subarray(0, offset), Buffer.alloc(length), file.subarray(offset)]);
  }
}
