// Armed faults as pure decisions: read faults apply only to bytes that still hold their durable content.
import { describe, expect, it } from 'vitest';
import { constants } from 'node:os';
import { Faults } from './faults.js';
import { GrowBuffer } from './model/grow-buffer.js';
import { makeFuseOps, type FsState } from './fuse-adapter.js';
import { FsModel } from './model/fs-model.js';
import { RequestGate } from './request-gate.js';

/** Bytes [0, 8) unchanged since the last fsync; 8 and later rewritten (or never synced). */
const syncedBelow8 = (byteOffset: number) => byteOffset < 8;

describe('read faults', () => {
  it('count the reads they hit, until cleared: a suite can tell a fault that fired from one that never did', () => {
    const f = new Faults();
    f.add({ type: 'read-eio', path: '/p', offset: 4, length: 8 });
    f.add({ type: 'bitflip', path: '/q', offset: 2, bit: 1 });
    f.readFails('/p', 12, 4, syncedBelow8); // misses
    expect(f.readHits).toBe(0);
    f.readFails('/p', 0, 16, syncedBelow8);
    const data = Buffer.alloc(4);
    f.corruptRead('/q', 0, data, syncedBelow8);
    expect(data[2]).toBe(2);
    expect(f.readHits).toBe(2);
    f.clear();
    expect(f.readHits).toBe(0);
  });

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

describe('the disk size', () => {
  it('admits what fits in the free space; blocks the file holds cost nothing, holes nothing; an armed enospc fault counts every byte', () => {
    const f = new Faults(1_000);
    const file = (bytes: number) => new GrowBuffer(Buffer.alloc(bytes, 1));
    const usage = (g: GrowBuffer, offset: number) => (n: number) => g.usageAfterAllocating(offset, n);
    expect(f.admitWrite(600, 0, usage(file(0), 0))).toBe(600);
    expect(f.admitWrite(600, 600, usage(file(600), 600))).toBe(400); // short write up to the disk's size
    expect(f.admitWrite(1, 1_000, usage(file(1_000), 1_000))).toBe(0);
    expect(f.admitWrite(1_000, 1_000, usage(file(1_000), 0))).toBe(1_000); // an overwrite
    expect(f.admitWrite(1, 0, usage(file(0), 2 ** 31 + 1))).toBe(1); // the hole before it is free
    expect(f.admitAllocation(1_000, 1_001)).toBe(false);
    expect(f.admitAllocation(1_000, 10)).toBe(true);
    expect(f.admitAllocation(1_200, 1_100)).toBe(true); // freeing space fits even on an overfull disk
    f.add({ type: 'enospc', afterBytes: 10 });
    expect(f.admitWrite(600, 1_000, usage(file(1_000), 0))).toBe(10);
    expect(f.admitWrite(5, 1_000, usage(file(1_000), 0))).toBe(0);
    f.clear();
    expect(f.admitWrite(5, 1_000, usage(file(1_000), 0))).toBe(5);
  });

  it('tells the room for writes the binding may answer itself: free bytes, and what the tightest enospc fault lets through', () => {
    const f = new Faults(1_000);
    expect(f.writeRoom(300)).toEqual({ diskBytes: 700, faultBytes: Infinity });
    f.add({ type: 'enospc', afterBytes: 50 });
    f.add({ type: 'enospc', afterBytes: 20 });
    expect(f.writeRoom(300)).toEqual({ diskBytes: 700, faultBytes: 20 });
    f.admitWrite(15, 300, () => 300);
    expect(f.writeRoom(300).faultBytes).toBe(5);
  });
});

describe('the disk size through the adapter (no mount)', () => {
  const DISK_BYTES = 10_000;
  const ENOSPC = -constants.errno.ENOSPC;
  function adapter() {
    const state: FsState = { model: new FsModel(), gate: new RequestGate(), faults: new Faults(DISK_BYTES), fsyncHolds: null, handles: new Map(), nextFd: 1, generation: 1 };
    const ops = makeFuseOps(state, 1, { caller: () => ({ uid: 0, gid: 0 }), fullUtimens: true });
    let answer: unknown[] = [];
    const call = (op: string, ...args: unknown[]): unknown[] => {
      answer = [];
      ops[op](...args, (...a: unknown[]) => { answer = a; });
      return answer;
    };
    const create = (path: string) => call('create', path, 0o100644)[1] as number;
    const write = (fd: number, pos: number, len: number) => call('write', '', fd, Buffer.alloc(len, 1), len, pos)[0];
    return { state, call, create, write };
  }

  it('rewriting one page far beyond the disk\'s size never runs out of space', () => {
    const { state, create, write } = adapter();
    const fd = create('/f');
    for (let i = 0; i < 100; i++) expect(write(fd, 0, 4096)).toBe(4096); // 400 KiB written to a 10 KB disk
    state.model.crash('lose-unsynced');
    expect(state.model.liveDataBytes).toBe(0);
  });

  it('growing the files beyond it gets ENOSPC (a short write first); truncating and unlinking free space', () => {
    const { state, call, create, write } = adapter();
    const a = create('/a');
    expect(write(a, 0, 6_000)).toBe(6_000);
    const b = create('/b');
    expect(write(b, 0, 6_000)).toBe(4_000);
    expect(write(b, 4_000, 1)).toBe(ENOSPC);
    expect(call('ftruncate', '', b, 40_001)[0]).toBe(0); // growing by truncate makes a hole: no space taken
    expect(call('ftruncate', '', b, 4_000)[0]).toBe(0);
    expect(call('truncate', '/a', 1_000)[0]).toBe(0);
    expect(write(b, 4_000, 5_000)).toBe(5_000);
    expect(call('unlink', '/b')[0]).toBe(0);
    expect(state.model.liveDataBytes).toBe(1_000);
    const c = create('/c');
    expect(write(c, 0, 9_000)).toBe(9_000);
    expect(call('truncate', '/c', 9_001)[0]).toBe(0);
    expect(write(c, 9_001, 1)).toBe(ENOSPC); // but writing into the hole takes its block
  });

  it('a sparse file takes only the blocks written: one byte at 2 GiB + 1 on a 10 KB disk; EFBIG past the largest file', () => {
    const { state, call, create, write } = adapter();
    const fd = create('/sparse');
    expect(write(fd, 2 ** 31 + 1, 1)).toBe(1);
    expect(state.model.liveDataBytes).toBe(2);
    expect(call('truncate', '/sparse', 999_999_999_999_999)[0]).toBe(-constants.errno.EFBIG);
    expect(call('fgetattr', '', fd)[1]).toMatchObject({ size: 2 ** 31 + 2, blocks: 8 });
  });

  it('fallocate: ENOSPC when its blocks do not fit, all or nothing; a punched hole frees them; EOPNOTSUPP for what ext4 lacks', () => {
    const { state, call, create } = adapter();
    const fd = create('/f');
    const fallocate = (mode: number, offset: number, length: number) => call('fallocate', '', fd, mode, offset, length)[0];
    expect(fallocate(0, 0, 8_192)).toBe(0);
    expect(fallocate(1, 8_192, 4_096)).toBe(ENOSPC); // KEEP_SIZE: 12 KiB on a 10 KB disk
    expect(state.model.liveDataBytes).toBe(8_192);
    expect(fallocate(3, 0, 4_096)).toBe(0); // PUNCH_HOLE | KEEP_SIZE
    expect(state.model.liveDataBytes).toBe(4_096);
    expect(fallocate(0x40, 0, 4_096)).toBe(-constants.errno.EOPNOTSUPP); // UNSHARE_RANGE
    expect(state.model.stat(state.model.resolve('/f')).sizeBytes).toBe(8_192);
  });
});
