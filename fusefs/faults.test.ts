// Armed faults as pure decisions: read faults apply only to bytes that still hold their durable content.
import { describe, expect, it } from 'vitest';
import { Faults } from './faults.js';

/** Bytes [0, 8) unchanged since the last fsync; 8 and later rewritten (or never synced). */
const syncedBelow8 = (byteOffset: number) => byteOffset < 8;

describe('read faults', () => {
  it('read-eio fails a read touching armed bytes that are unchanged since the last fsync', () => {
    const f = new Faults();
    f.add({ type: 'read-eio', path: '/p', offset: 4, length: 8 });
    expect(f.readFails('/p', 0, 16, syncedBelow8)).toBe(true);
    expect(f.readFails('/p', 6, 1, syncedBelow8)).toBe(true);
    expect(f.readFails('/q', 0, 16, syncedBelow8)).toBe(false);
    expect(f.readFails('/p', 12, 4, syncedBelow8)).toBe(false); // outside the armed range
  });

  it('read-eio spares a read whose armed bytes were all rewritten since the last fsync', () => {
    const f = new Faults();
    f.add({ type: 'read-eio', path: '/p', offset: 8, length: 4 });
    expect(f.readFails('/p', 0, 16, syncedBelow8)).toBe(false);
    expect(f.readFails('/p', 8, 4, () => true)).toBe(true);
  });

  it('bitflip flips a byte that is unchanged since the last fsync, not a rewritten one', () => {
    const f = new Faults();
    f.add({ type: 'bitflip', path: '/p', offset: 3, bit: 2 });
    f.add({ type: 'bitflip', path: '/p', offset: 9 });
    const data = Buffer.alloc(16);
    f.corruptRead('/p', 0, data, syncedBelow8);
    expect(data[3]).toBe(4);
    expect(data[9]).toBe(0);
    const tail = Buffer.alloc(8);
    f.corruptRead('/p', 8, tail, () => true);
    expect(tail[1]).toBe(1);
  });
});
