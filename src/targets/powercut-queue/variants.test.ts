// Each known-bad variant differs from the correct queue in exactly the way its bug says, seen through
// a spied disk layer. (That the property suites catch them after a power cut is proven there.)
import { afterEach, describe, expect, it } from 'vitest';
import { appendFile, cp, readFile, rm, stat } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { DiskOps, Queue, type PageWriter, type PersistentQueue, type QueueSettings } from '../../queue/index.js';
import { decodeCheckpoint, encodeRecord, PAGE_HEADER_BYTES } from '../../queue/format.js';
import { removeTempQueueDirs, SpyOps, tempQueueDir } from '../../queue/testing.js';
import { KNOWN_BAD, VARIANT_NAMES } from './known-bad.js';
import { openQueueVariant, variantOps } from './variants.js';

afterEach(removeTempQueueDirs);
const opened: PersistentQueue[] = [];
afterEach(async () => {
  for (const q of opened.splice(0)) await q.close().catch(() => undefined);
});

interface Spy {
  log: string[];
  holdPageFsync?: Promise<void>;
  /** Held below the variant's own fsync step: a slow disk, as the variant sees it. */
  slowPageFsync?: Promise<void>;
  failNextPageFsync?: boolean;
}
/** Logs the disk steps of an ops instance (correct or variant) and can hold or fail page fsyncs. */
function spy(ops: DiskOps): Spy {
  const s: Spy = { log: [] };
  const o = ops as unknown as Record<string, (...args: unknown[]) => Promise<unknown>>;
  const openFile = o.openFile.bind(ops);
  const fsync = o.fsync.bind(ops);
  const step = o.step.bind(ops);
  o.openFile = (file, flags, op) => (s.log.push(`open ${basename(file as string)} ${flags}`), openFile(file, flags, op));
  // Every file write is a blocking write.
  const writeSync = o.writeSync.bind(ops);
  o.writeSync = (fh, file, buf, pos, op) => (s.log.push(`write ${basename(file as string)}: ${op}`), writeSync(fh, file, buf, pos, op));
  // Failures are injected below fsync, so a variant's own fsync override still runs.
  const stepSync = (o.stepSync as unknown as (file: string, op: string, fn: () => unknown) => unknown).bind(ops);
  (o as unknown as Record<string, unknown>).stepSync = (file: string, op: string, fn: () => unknown) => (s.log.push(`${basename(file)}: ${op}`), stepSync(file, op, fn));
  o.step = async (file, op, fn) => {
    if (op === 'delete acked page') s.log.push(`delete ${basename(file as string)}`);
    if (op === 'fsync of page' && s.slowPageFsync) await s.slowPageFsync;
    if (op === 'fsync of page' && s.failNextPageFsync) {
      s.failNextPageFsync = false;
      // As ext4 does: the failed data is dropped from what can become durable; a retry then "succeeds".
      return step(file, op, () => Promise.reject(Object.assign(new Error('EIO'), { code: 'EIO' })));
    }
    return step(file, op, fn);
  };
  o.fsync = async (fh, file, op) => {
    s.log.push(`fsync ${basename(file as string)}: ${op}`);
    if (op === 'fsync of page' && s.holdPageFsync) await s.holdPageFsync;
    return fsync(fh, file, op);
  };
  return s;
}

async function openBoth(name: string, settings: Partial<QueueSettings> = {}) {
  const merged = { ...(KNOWN_BAD[name].settings as Partial<QueueSettings>), ...settings };
  const goodOps = new DiskOps();
  const badOps = variantOps(name)!;
  const good = { dir: await tempQueueDir(), spy: spy(goodOps) };
  const bad = { dir: await tempQueueDir(), spy: spy(badOps) };
  const goodQ = await Queue.open(good.dir, merged, goodOps);
  const badQ = await Queue.open(bad.dir, merged, badOps);
  opened.push(goodQ, badQ);
  return { good: { ...good, q: goodQ }, bad: { ...bad, q: badQ } };
}
const ev = (i: number) => Buffer.from(`event-${String(i).padStart(4, '0')}`);

describe('variant registry', () => {
  it('has the eight variants from real bug history plus the ones this project found or wrote (two of them logic errors), each with a summary and settings', () => {
    expect([...VARIANT_NAMES].sort()).toEqual(
      [
        'no-dir-fsync-new-page',
        'checkpoint-before-page-sync',
        'checkpoint-in-place',
        'page-header-not-synced',
        'no-crc-on-recovery',
        'checkpoint-before-flush',
        'roll-without-flush',
        'fsync-error-ignored',
        'close-swallows-failure',
        'purge-before-checkpoint',
        'checkpoint-unlink-before-rename',
        'fsync-claims-late-writes',
        'ack-returns-early',
        'sync-wait-gives-up',
        'purge-and-ack-early',
        'recovery-skips-first-record',
        'drain-from-page-start',
        'upgrade-log-not-synced',
      ].sort(),
    );
    for (const name of VARIANT_NAMES) {
      expect(KNOWN_BAD[name].settings).toBeTypeOf('object');
      expect(KNOWN_BAD[name].summary.length).toBeGreaterThan(10);
    }
  });
  it('an unknown name is an error listing the valid names', async () => {
    await expect(openQueueVariant('nope', await tempQueueDir())).rejects.toThrow(/unknown queue variant 'nope'; valid names: no-dir-fsync-new-page, /);
  });
});

describe('each variant differs from the correct queue in its one way', () => {
  it('no-dir-fsync-new-page: the directory is not fsynced after a new page is created', async () => {
    const { good, bad } = await openBoth('no-dir-fsync-new-page');
    for (let i = 0; i < 30; i++) await Promise.all([good.q.write(ev(i)), bad.q.write(ev(i))]);
    const dirSyncAfterCreate = (log: string[]) => log.filter((l) => l.includes('after creating a page')).length;
    expect(dirSyncAfterCreate(good.spy.log)).toBeGreaterThan(0);
    expect(dirSyncAfterCreate(bad.spy.log)).toBe(0);
    expect(bad.spy.log.some((l) => l.startsWith('open page.2'))).toBe(true);
  });

  it('page-header-not-synced: a new page header is not fsynced before the page is used', async () => {
    const { good, bad } = await openBoth('page-header-not-synced');
    for (let i = 0; i < 30; i++) await Promise.all([good.q.write(ev(i)), bad.q.write(ev(i))]);
    expect(good.spy.log.filter((l) => l.includes('new page header')).length).toBeGreaterThan(1);
    expect(bad.spy.log.filter((l) => l.includes('new page header'))).toEqual([]);
  });

  it('checkpoint-in-place: checkpoint.head is rewritten in place, never via a tmp file and rename', async () => {
    const { good, bad } = await openBoth('checkpoint-in-place');
    for (const s of [good, bad]) {
      await s.q.write(ev(1));
      await s.q.checkpoint();
    }
    expect(good.spy.log).toContain('open checkpoint.head.tmp w');
    expect(bad.spy.log).not.toContain('open checkpoint.head.tmp w');
    expect(bad.spy.log).toContain('open checkpoint.head w');
  });

  it('checkpoint-before-page-sync: the checkpoint claims records whose page fsync has not happened', async () => {
    const { good, bad } = await openBoth('checkpoint-before-page-sync', { checkpointWrites: 0 });
    let release!: () => void;
    const hold = new Promise<void>((r) => (release = r));
    const done = { good: false, bad: false };
    const checkpoints: Promise<void>[] = [];
    for (const [k, s] of [['good', good], ['bad', bad]] as const) {
      for (let i = 1; i <= 3; i++) await s.q.write(ev(i));
      s.spy.holdPageFsync = hold;
      checkpoints.push(s.q.checkpoint().then(() => void (done[k] = true)));
    }
    // The variant's checkpoint does not wait for the held page fsync, so it completes (the bound
    // only stops a regression from hanging); the correct one cannot while the fsync is held.
    await Promise.race([checkpoints[1], new Promise((r) => setTimeout(r, 10_000).unref())]);
    const count = async (dir: string) => (decodeCheckpoint(await readFile(join(dir, 'checkpoint.head'))) as { elementCount: number }).elementCount;
    expect(done).toEqual({ good: false, bad: true });
    expect(await count(good.dir)).toBe(0);
    expect(await count(bad.dir)).toBe(3);
    release();
    await Promise.all(checkpoints);
  });

  it('purge-before-checkpoint: acked pages are deleted, with a directory fsync, before the checkpoint that stops referencing them', async () => {
    const { good, bad } = await openBoth('purge-before-checkpoint', { pageCapacityBytes: 256, checkpointAcks: 1 });
    for (const s of [good, bad]) {
      for (let i = 0; i < 12; i++) await s.q.write(ev(i)); // 8 records fill a 256-byte page
      s.spy.log.length = 0;
      const got = await s.q.readBatch(10, 20);
      await s.q.ack(got.map((e) => e.seq));
    }
    const order = (log: string[]) => log.filter((l) => l.startsWith('delete page.') || /write checkpoint/.test(l) || /fsync of directory after deleting/.test(l)).join(' | ');
    expect(order(good.spy.log)).toMatch(/^write checkpoint\.head\.tmp: \w+ \| delete page\.1$/);
    expect(order(bad.spy.log)).toMatch(/^delete page\.1 \| fsync .*: fsync of directory after deleting acked pages \| write checkpoint\.head\.tmp: \w+$/);
  });

  it('checkpoint-unlink-before-rename: checkpoint.head is removed before tmp is renamed over it', async () => {
    const { good, bad } = await openBoth('checkpoint-unlink-before-rename');
    for (const s of [good, bad]) {
      s.spy.log.length = 0;
      await s.q.write(ev(1));
      await s.q.checkpoint();
    }
    const steps = (log: string[]) => log.filter((l) => /old checkpoint|temporary file over/.test(l)).join(' | ');
    expect(steps(good.spy.log)).toBe('checkpoint.head: rename temporary file over');
    // Between the two the directory has no checkpoint.head: a torn cut that keeps only the removal loses both.
    expect(steps(bad.spy.log)).toBe('checkpoint.head: remove old checkpoint | checkpoint.head: rename temporary file over');
  });

  it('fsync-claims-late-writes: an fsync is taken to cover what was flushed when it completed, not when it was issued', () => {
    const page = { flushedCount: 7 } as PageWriter;
    expect(new DiskOps().recordsCoveredBySync(5, page)).toBe(5);
    expect(variantOps('fsync-claims-late-writes')!.recordsCoveredBySync(5, page)).toBe(7);
  });

  it('checkpoint-before-flush: a buffered checkpoint claims records still in the write buffer', async () => {
    const { good, bad } = await openBoth('checkpoint-before-flush', { checkpointWrites: 0 });
    for (const s of [good, bad]) {
      for (let i = 1; i <= 3; i++) await s.q.write(ev(i));
      await s.q.checkpoint();
    }
    const recordSize = encodeRecord(1, ev(1)).length;
    expect((await stat(join(good.dir, 'page.1'))).size).toBe(PAGE_HEADER_BYTES + 3 * recordSize);
    expect((await stat(join(bad.dir, 'page.1'))).size).toBe(PAGE_HEADER_BYTES);
    const ck = decodeCheckpoint(await readFile(join(bad.dir, 'checkpoint.head'))) as { elementCount: number };
    expect(ck.elementCount).toBe(3);
  });

  it('roll-without-flush: the new page starts before the old page is flushed and fsynced', async () => {
    const { good, bad } = await openBoth('roll-without-flush', { checkpointWrites: 0 });
    for (let i = 0; i < 12; i++) await Promise.all([good.q.write(ev(i)), bad.q.write(ev(i))]);
    for (const s of [good, bad]) expect(s.spy.log.some((l) => l.startsWith('open page.2')), 'the queue rolled to page 2').toBe(true);
    const stepsBeforePage2 = (log: string[]) => log.slice(0, log.findIndex((l) => l.startsWith('open page.2')));
    expect(stepsBeforePage2(good.spy.log)).toEqual(expect.arrayContaining(['write page.1: write records', 'fsync page.1: fsync of page']));
    expect(stepsBeforePage2(bad.spy.log)).not.toContain('write page.1: write records');
    const bad1 = bad.spy.log.lastIndexOf('write page.1: write records');
    expect(bad1).toBeGreaterThan(bad.spy.log.findIndex((l) => l.startsWith('open page.2')));
    expect(bad.spy.log.slice(bad1)).not.toContain('fsync page.1: fsync of page');
  });

  it('fsync-error-ignored: a failed fsync is retried and the data reported durable', async () => {
    const { good, bad } = await openBoth('fsync-error-ignored', { checkpointWrites: 0 });
    for (const s of [good, bad]) {
      await s.q.write(ev(1));
      s.spy.failNextPageFsync = true;
    }
    await expect(good.q.waitDurable(1)).rejects.toThrow(/fsync of page failed on .*page.1: EIO/);
    expect(good.q.durability().durableSeq).toBe(0);
    await bad.q.waitDurable(1);
    expect(bad.q.durability().durableSeq).toBe(1);
  });

  it('no-crc-on-recovery: a record with intact seq and length but corrupt data is recovered and delivered', async () => {
    const results: Record<string, string[]> = {};
    for (const name of ['correct', 'no-crc-on-recovery']) {
      const dir = await tempQueueDir();
      const q = name === 'correct' ? await Queue.open(dir, { checkpointWrites: 0 }) : await openQueueVariant(name, dir, { checkpointWrites: 0 });
      opened.push(q);
      await q.write(ev(1));
      await q.waitDurable(1);
      // A power cut mid-write: seq 2's header reached the disk, its data did not (zeros).
      const copy = `${dir}-cut`;
      await cp(dir, copy, { recursive: true });
      await rm(join(copy, 'lock'));
      const torn = encodeRecord(2, ev(2));
      torn.fill(0, 12);
      await appendFile(join(copy, 'page.1'), torn);
      const r = name === 'correct' ? await Queue.open(copy) : await openQueueVariant(name, copy);
      opened.push(r);
      results[name] = (await r.readBatch(10, 20)).map((e) => `${e.seq}:${e.data.toString('hex').slice(0, 8)}`);
    }
    expect(results.correct).toEqual([`1:${ev(1).toString('hex').slice(0, 8)}`]);
    expect(results['no-crc-on-recovery']).toEqual([`1:${ev(1).toString('hex').slice(0, 8)}`, '2:00000000']);
  });

  it('ack-returns-early: ack() resolves while the checkpoint recording the ack is still being written', async () => {
    const results: Record<string, string> = {};
    for (const name of ['correct', 'ack-returns-early']) {
      const dir = await tempQueueDir();
      const ops = new SpyOps();
      const settings = KNOWN_BAD['ack-returns-early'].settings as Partial<QueueSettings>;
      const q = name === 'correct' ? await Queue.open(dir, settings, ops) : await openQueueVariant(name, dir, settings, ops);
      opened.push(q);
      await q.write(ev(1));
      await q.waitDurable(1);
      const [e] = await q.readBatch(1, 10);
      let release!: () => void;
      ops.hold = new Promise<void>((r) => (release = r));
      const acked = q.ack([e.seq]).then(() => 'resolved');
      // The correct ack cannot resolve while its checkpoint is held (50 ms show it waits); the
      // variant's resolves at once (10 s only stop a regression from hanging).
      const early = await Promise.race([acked, new Promise<string>((r) => setTimeout(() => r('pending'), name === 'correct' ? 50 : 10_000).unref())]);
      results[name] = `${early}, durableFirstUnackedSeq ${q.durability().durableFirstUnackedSeq}`;
      ops.hold = null;
      release();
      await acked;
    }
    expect(results.correct).toBe('pending, durableFirstUnackedSeq 1');
    expect(results['ack-returns-early']).toBe('resolved, durableFirstUnackedSeq 1');
  });

  it('sync-wait-gives-up: a page fsync slower than the wait is reported durable before it completes', async () => {
    const { good, bad } = await openBoth('sync-wait-gives-up', { checkpointWrites: 0 });
    let release!: () => void;
    const slow = new Promise<void>((r) => (release = r));
    for (const s of [good, bad]) {
      s.spy.slowPageFsync = slow;
      await s.q.write(ev(1));
    }
    const waits = [good, bad].map((s) => s.q.waitDurable(1).then(() => 'durable'));
    // The correct wait cannot end while the fsync is held (100 ms show it waits); the variant's gives
    // up after 1 ms (10 s only stop a regression from hanging).
    const states = await Promise.all(waits.map((w, i) => Promise.race([w, new Promise<string>((r) => setTimeout(() => r('waiting'), i === 0 ? 100 : 10_000).unref())])));
    expect(states).toEqual(['waiting', 'durable']);
    expect(bad.q.durability().durableSeq).toBe(1);
    release();
    await Promise.all(waits);
  });

  it('close-swallows-failure: after a background checkpoint failed, close() resolves instead of rejecting', async () => {
    const outcomes: Record<string, string> = {};
    for (const name of ['correct', 'close-swallows-failure']) {
      const dir = await tempQueueDir();
      const ops = new SpyOps();
      const settings = KNOWN_BAD['close-swallows-failure'].settings as Partial<QueueSettings>;
      const q = name === 'correct' ? await Queue.open(dir, settings, ops) : await openQueueVariant(name, dir, settings, ops);
      ops.failWrite = { match: /append to checkpoint log/, errno: 'ENOSPC' };
      await q.write(ev(1));
      await q.write(ev(2)); // a background checkpoint, which fails
      for (let i = 0; i < 2_000 && ops.failedWrites === 0; i++) await new Promise((r) => setTimeout(r, 5));
      outcomes[name] = await q.close().then(() => 'resolved', (e: Error) => `rejected: ${e.message}`);
    }
    expect(outcomes.correct).toMatch(/^rejected: .*ENOSPC/);
    expect(outcomes['close-swallows-failure']).toBe('resolved');
  });
});
