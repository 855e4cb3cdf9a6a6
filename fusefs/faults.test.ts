// Armed faults as pure decisions: read faults apply only to bytes that still hold their durable content.
import { describe, expect, it } from 'vitest';
import { constants } from 'node:os';
import { Faults } from './faults.js';
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
  it('admits what fits in the free space; bytes within the file cost nothing; an armed enospc fault counts every byte', () => {
    const f = new Faults(1_000);
    expect(f.admitWrite(0, 600, 0, 0)).toBe(600);
    expect(f.admitWrite(600, 600, 600, 600)).toBe(400); // short write up to the disk's size
    expect(f.admitWrite(1_000, 1, 1_000, 1_000)).toBe(0);
    expect(f.admitWrite(0, 1_000, 1_000, 1_000)).toBe(1_000); // an overwrite
    expect(f.admitWrite(2_000, 1, 0, 0)).toBe(0); // the hole before it would not fit
    expect(f.admitResize(1_000, 1_001, 1_000)).toBe(false);
    expect(f.admitResize(1_000, 10, 1_000)).toBe(true);
    f.add({ type: 'enospc', afterBytes: 10 });
    expect(f.admitWrite(0, 600, 1_000, 1_000)).toBe(10);
    expect(f.admitWrite(0, 5, 1_000, 1_000)).toBe(0);
    f.clear();
    expect(f.admitWrite(0, 5, 1_000, 1_000)).toBe(5);
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
    expect(call('ftruncate', '', b, 4_001)[0]).toBe(ENOSPC);
    expect(call('truncate', '/a', 1_000)[0]).toBe(0);
    expect(write(b, 4_000, 5_000)).toBe(5_000);
    expect(call('unlink', '/b')[0]).toBe(0);
    expect(state.model.liveDataBytes).toBe(1_000);
    const c = create('/c');
    expect(write(c, 0, 9_000)).toBe(9_000);
    expect(call('truncate', '/c', 9_001)[0]).toBe(ENOSPC);
  });
});
