// Slow fsyncs: through the adapter (no mount), a held fsync completes after its seeded delay, is
// numbered when it completes, and covers only what was written before it arrived.
import { describe, expect, it } from 'vitest';
import { makeFuseOps, type FsState } from './fuse-adapter.js';
import { Faults } from './faults.js';
import { FsyncHolds } from './fsync-holds.js';
import { FsModel } from './model/fs-model.js';
import { RequestGate } from './request-gate.js';

/** The first seed whose first fsync is held (the schedule is seeded: the same every run). */
const HOLDING_SEED = Array.from({ length: 100 }, (_, i) => i + 1).find((seed) => new FsyncHolds({ seed, maxHoldMs: 1 }).nextMs() > 0)!;

function adapter(maxHoldMs: number) {
  const state: FsState = { model: new FsModel(), gate: new RequestGate(), faults: new Faults(1 << 20), fsyncHolds: new FsyncHolds({ seed: HOLDING_SEED, maxHoldMs }), handles: new Map(), nextFd: 1, generation: 1 };
  const ops = makeFuseOps(state, 1, { caller: () => ({ uid: 0, gid: 0 }), fullUtimens: true });
  const call = (op: string, ...args: unknown[]) => new Promise<unknown[]>((resolve) => ops[op](...args, (...a: unknown[]) => resolve(a)));
  return { state, call };
}

describe('slow fsyncs', () => {
  it('a held fsync covers what was written before it arrived, not what was written while it was held', async () => {
    const { state, call } = adapter(40);
    const [, fd] = await call('create', '/f', 0o644);
    await call('write', '/f', fd, Buffer.from('A'.repeat(10)), 10, 0);
    const synced = call('fsync', '/f', 0, fd);
    let done = false;
    void synced.then(() => (done = true));
    await call('write', '/f', fd, Buffer.from('B'.repeat(10)), 10, 10);
    expect(done, 'the fsync is still held when the next write completes').toBe(false);
    await call('fsyncdir', '/', 0, 0);
    expect(await synced).toEqual([0]);
    expect(done).toBe(true);
    // Numbered when it completed: after the write that came while it was held.
    const kinds = state.gate.trace.all().map((e) => e.kind);
    expect(kinds.indexOf('fsync')).toBeGreaterThan(kinds.lastIndexOf('write'));
    state.model.crash('lose-unsynced');
    const f = state.model.exportTree('durable');
    expect(f.type === 'dir' && f.entries.get('f')).toMatchObject({ type: 'file', data: Buffer.from('A'.repeat(10)) });
  });

  it('the same seed holds the same fsyncs for the same time, in order', () => {
    const a = new FsyncHolds({ seed: 7, maxHoldMs: 10 });
    const b = new FsyncHolds({ seed: 7, maxHoldMs: 10 });
    const draws = Array.from({ length: 20 }, () => a.nextMs());
    expect(Array.from({ length: 20 }, () => b.nextMs())).toEqual(draws);
    expect(new Set(draws)).toEqual(new Set([0, 10]));
  });
});

describe('an fsync that started before some changes (the model)', () => {
  it("covers a directory's entries made before it started, and leaves later ones unsynced", () => {
    const m = new FsModel();
    m.create('/x', 0o644);
    const covers = m.changeCount;
    m.create('/y', 0o644);
    m.fsync(1, covers);
    m.crash('lose-unsynced');
    const root = m.exportTree('durable');
    expect(root.type === 'dir' && [...root.entries.keys()]).toEqual(['x']);
  });
  it("covers a file's writes and truncates up to its start, in order", () => {
    const m = new FsModel();
    const ino = m.create('/f', 0o644);
    m.fsync(1);
    m.write(ino, 0, Buffer.from('hello world'));
    m.truncate(ino, 5);
    const covers = m.changeCount;
    m.write(ino, 5, Buffer.from('!!'));
    m.fdatasync(ino, covers);
    expect(m.read(ino, 0, 100).toString()).toBe('hello!!');
    m.crash('lose-unsynced');
    expect(m.read(ino, 0, 100).toString()).toBe('hello');
  });
});
