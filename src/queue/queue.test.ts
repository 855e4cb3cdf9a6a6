import { afterEach, describe, expect, it } from 'vitest';
import { appendFile, cp, mkdir, readdir, readFile, rm, stat, truncate, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { spawn } from 'node:child_process';
import { Queue } from './queue.js';
import { openQueue } from './index.js';
import {
  BackpressureTimeoutError,
  DamagedQueueError,
  EventTooLargeError,
  QueueIOError,
  QueueLockedError,
  QueueUsageError,
} from './errors.js';
import { PAGE_HEADER_BYTES, encodeRecord } from './format.js';
import { SpyOps, removeTempQueueDirs, tempQueueDir } from './testing.js';
import { acquireLock, lockFileContent } from './lock.js';
import type { PersistentQueue, QueueSettings } from './types.js';

afterEach(removeTempQueueDirs);

const ev = (i: number) => Buffer.from(`event-${String(i).padStart(4, '0')}`);
const open: PersistentQueue[] = [];
afterEach(async () => {
  for (const q of open.splice(0)) await q.close().catch(() => undefined);
});
async function openQ(dir: string, settings: Partial<QueueSettings> = {}, ops?: SpyOps): Promise<PersistentQueue> {
  const q = ops ? await Queue.open(dir, settings, ops) : await openQueue(dir, settings);
  open.push(q);
  return q;
}
async function writeAll(q: PersistentQueue, from: number, to: number): Promise<number[]> {
  const seqs: number[] = [];
  for (let i = from; i <= to; i++) seqs.push(await q.write(ev(i)));
  return seqs;
}
async function drain(q: PersistentQueue, ack = true): Promise<Array<[number, string]>> {
  const out: Array<[number, string]> = [];
  for (;;) {
    const batch = await q.readBatch(7, 20);
    if (batch.length === 0) return out;
    out.push(...batch.map((e): [number, string] => [e.seq, e.data.toString()]));
    if (ack) await q.ack(batch.map((e) => e.seq));
  }
}
const expected = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, k): [number, string] => [from + k, ev(from + k).toString()]);
/** A copy of the directory as it is on disk right now, without the lock (a process that died). */
async function snapshot(dir: string): Promise<string> {
  const copy = `${dir}-copy-${Math.random().toString(36).slice(2)}`;
  await cp(dir, copy, { recursive: true });
  await rm(join(copy, 'lock'), { force: true });
  return copy;
}

describe.each(['sync', 'buffered'] as const)('queue, %s page writes', (pageWriteDesign) => {
  describe.each(['atomic-file', 'append-log'] as const)('%s checkpoints', (checkpointDesign) => {
    const settings = { pageWriteDesign, checkpointDesign, pageCapacityBytes: 256, checkpointWrites: 5, checkpointAcks: 3 };

    it('delivers in seq order across pages, purges acked pages, and reopens after a clean close without reusing seqs', async () => {
      const dir = await tempQueueDir();
      let q = await openQ(dir, settings);
      expect(await writeAll(q, 1, 40)).toEqual(Array.from({ length: 40 }, (_, k) => k + 1));
      const pagesBefore = (await readdir(dir)).filter((n) => n.startsWith('page.'));
      expect(pagesBefore.length).toBeGreaterThan(3);
      const first = await q.readBatch(25, 100);
      expect(first.map((e) => e.seq)).toEqual(Array.from({ length: 25 }, (_, k) => k + 1));
      await q.ack(first.map((e) => e.seq));
      await q.checkpoint();
      expect(q.durability()).toEqual({ durableSeq: 40, durableFirstUnackedSeq: 26 });
      const pagesAfter = (await readdir(dir)).filter((n) => n.startsWith('page.'));
      expect(pagesAfter.length).toBeLessThan(pagesBefore.length);
      await q.close();
      q = await openQ(dir, settings);
      expect(q.durability()).toEqual({ durableSeq: 40, durableFirstUnackedSeq: 26 });
      expect(await q.write(ev(41))).toBe(41);
      expect(await drain(q)).toEqual(expected(26, 41));
      await q.close();
      q = await openQ(dir, settings);
      expect(await drain(q)).toEqual([]);
      expect(await q.write(ev(42))).toBe(42);
    });
  });
});

describe('durability reporting and group commit', () => {
  it('reports a seq durable only after the fsync that covers it, and concurrent waiters share fsyncs', async () => {
    const ops = new SpyOps();
    const q = await openQ(await tempQueueDir(), { checkpointWrites: 0 }, ops);
    let release!: () => void;
    ops.hold = new Promise((r) => (release = r));
    ops.fsyncs = [];
    const states: number[] = [];
    q.onDurable((s) => states.push(s.durableSeq));
    const seqs = await Promise.all(Array.from({ length: 16 }, (_, i) => q.write(ev(i))));
    const waits = Promise.all(seqs.map((s) => q.waitDurable(s)));
    await new Promise((r) => setTimeout(r, 30));
    expect(q.durability().durableSeq).toBe(0);
    expect(states).toEqual([]);
    ops.hold = null;
    release();
    await waits;
    expect(q.durability().durableSeq).toBe(16);
    expect(states.at(-1)).toBe(16);
    const pageFsyncs = ops.fsyncs.filter((o) => o === 'fsync of page').length;
    expect(pageFsyncs).toBeGreaterThanOrEqual(1);
    expect(pageFsyncs).toBeLessThanOrEqual(2);
  });

  it('buffered writes reach the file only by the flush rules (checkpoint, roll, close)', async () => {
    const dir = await tempQueueDir();
    const q = await openQ(dir, { pageWriteDesign: 'buffered', checkpointWrites: 0 });
    await writeAll(q, 1, 3);
    expect((await stat(join(dir, 'page.1'))).size).toBe(PAGE_HEADER_BYTES);
    await q.checkpoint();
    expect((await stat(join(dir, 'page.1'))).size).toBeGreaterThan(PAGE_HEADER_BYTES);
    await q.write(ev(4));
    await q.close();
    const size = (await stat(join(dir, 'page.1'))).size;
    expect(size).toBe(PAGE_HEADER_BYTES + 4 * encodeRecord(1, ev(1)).length);
  });

  it('an ack call that reaches checkpointAcks resolves only after its acks are durable; out-of-order acks wait for the gap', async () => {
    const q = await openQ(await tempQueueDir(), { checkpointAcks: 3, checkpointWrites: 0 });
    await writeAll(q, 1, 10);
    const batch = await q.readBatch(10, 100);
    await q.ack([2, 3, 4, 5]);
    expect(q.durability().durableFirstUnackedSeq).toBe(1);
    await q.checkpoint();
    expect(q.durability().durableFirstUnackedSeq).toBe(1); // a checkpoint cannot skip the gap at 1
    await q.ack([1]);
    expect(q.durability().durableFirstUnackedSeq).toBe(6);
    await q.ack([6, 7]);
    expect(q.durability().durableFirstUnackedSeq).toBe(6); // 2 < checkpointAcks: not yet
    await q.ack([8]);
    expect(q.durability().durableFirstUnackedSeq).toBe(9);
    expect(batch).toHaveLength(10);
  });
});

describe('backpressure', () => {
  it('a writer at maxEvents waits until an ack frees room', async () => {
    const q = await openQ(await tempQueueDir(), { maxEvents: 2 });
    await writeAll(q, 1, 2);
    let done = false;
    const third = q.write(ev(3)).then((s) => ((done = true), s));
    await new Promise((r) => setTimeout(r, 30));
    expect(done).toBe(false);
    const [e] = await q.readBatch(1, 100);
    await q.ack([e.seq]);
    expect(await third).toBe(3);
  });

  it('a writer at maxBytes times out with an error naming the limits', async () => {
    const record = encodeRecord(1, ev(1)).length;
    const q = await openQ(await tempQueueDir(), { pageCapacityBytes: PAGE_HEADER_BYTES + record, maxBytes: 2 * record, writeTimeoutMs: 40 });
    await writeAll(q, 1, 2);
    await expect(q.write(ev(3))).rejects.toThrow(BackpressureTimeoutError);
    await expect(q.write(ev(3))).rejects.toThrow(/waited 40 ms \(writeTimeoutMs\).*2 unacked events.*maxBytes/);
    await q.ack((await q.readBatch(1, 100)).map((e) => e.seq));
    expect(await q.write(ev(3))).toBe(3);
  });
});

describe('recovery', () => {
  async function closedQueueWith(n: number, settings: Partial<QueueSettings> = {}) {
    const dir = await tempQueueDir();
    const q = await openQ(dir, settings);
    await writeAll(q, 1, n);
    await q.close();
    return dir;
  }

  it.each([
    ['a truncated record', (file: string, size: number) => truncate(file, size - 5)],
    ['a zero-filled tail', (file: string) => appendFile(file, Buffer.alloc(4096))],
    ['a torn record past the checkpoint', (file: string) => appendFile(file, encodeRecord(6, ev(6)).subarray(0, 20))],
    ['a stale record behind a torn one', (file: string) => appendFile(file, Buffer.concat([Buffer.alloc(30), encodeRecord(8, ev(8))]))],
  ])('%s at the head tail is cut off, the file truncated to the valid prefix, and seqs continue', async (_name, damage) => {
    const dir = await tempQueueDir();
    // Records past the checkpoint: written and synced with waitDurable, checkpointWrites never reached.
    const q = await openQ(dir, { checkpointWrites: 0 });
    await writeAll(q, 1, 5);
    await q.waitDurable(5);
    const copy = await snapshot(dir);
    const file = join(copy, 'page.1');
    const validSize = (await stat(file)).size;
    await damage(file, validSize);
    const cut = _name === 'a truncated record' ? 4 : 5;
    const r = await openQ(copy);
    expect((await stat(file)).size).toBe(cut === 5 ? validSize : validSize - encodeRecord(5, ev(5)).length);
    expect(r.durability().durableSeq).toBe(cut);
    expect(await r.write(ev(cut + 1))).toBe(cut + 1);
    expect(await drain(r)).toEqual(expected(1, cut + 1));
  });

  it('a head page shorter than its checkpoint says is damage where synced, naming file and offset', async () => {
    const dir = await closedQueueWith(5);
    await truncate(join(dir, 'page.1'), PAGE_HEADER_BYTES + 10);
    await expect(openQueue(dir)).rejects.toThrow(DamagedQueueError);
    await expect(openQueue(dir)).rejects.toThrow(
      new RegExp(`damaged where synced: ${join(dir, 'page.1')} at offset ${PAGE_HEADER_BYTES}: page holds 0 valid records but checkpoint .*checkpoint.head says 5`),
    );
  });

  it('a bit flip in a head-page record the checkpoint covers is damage naming file and offset; past the checkpoint it reads as a torn tail', async () => {
    const dir = await tempQueueDir();
    const q = await openQ(dir, { checkpointWrites: 0 });
    await writeAll(q, 1, 5);
    await q.checkpoint(); // the copy taken below keeps this checkpoint: it covers seqs 1..5
    await writeAll(q, 6, 8);
    await q.waitDurable(8); // synced, not covered by a checkpoint
    const copy = await snapshot(dir);
    const file = join(dir, 'page.1');
    const third = PAGE_HEADER_BYTES + 2 * encodeRecord(1, ev(1)).length; // records of equal length
    const flipped = await readFile(file);
    flipped[third + 14] ^= 0x01;
    await q.close();
    await writeFile(file, flipped);
    await expect(openQueue(dir)).rejects.toThrow(DamagedQueueError);
    await expect(openQueue(dir)).rejects.toThrow(
      new RegExp(`damaged where synced: ${file} at offset ${third}: page holds 2 valid records but checkpoint .*checkpoint.head says 8 were synced \\(seq 3: record CRC mismatch`),
    );

    // The documented limit: the same flip in seq 7 (synced after the checkpoint) drops seqs 7 and 8 silently.
    const copyFile = join(copy, 'page.1');
    const seventh = PAGE_HEADER_BYTES + 6 * encodeRecord(1, ev(1)).length;
    const buf = await readFile(copyFile);
    buf[seventh + 14] ^= 0x01;
    await writeFile(copyFile, buf);
    const r = await openQ(copy);
    expect(r.durability().durableSeq).toBe(6);
    expect(await drain(r)).toEqual(expected(1, 6));
  });

  it('a 0-byte page the checkpoint references, a missing page, a corrupt tail page and a corrupt checkpoint are damage', async () => {
    let dir = await closedQueueWith(5);
    await writeFile(join(dir, 'page.1'), '');
    await expect(openQueue(dir)).rejects.toThrow(/page.1 at offset 0: page header is 0 bytes/);

    dir = await closedQueueWith(5);
    await unlink(join(dir, 'page.1'));
    await expect(openQueue(dir)).rejects.toThrow(/page.1 at offset 0: page is missing but checkpoint/);

    dir = await closedQueueWith(30, { pageCapacityBytes: 256 });
    const buf = await readFile(join(dir, 'page.1'));
    buf[PAGE_HEADER_BYTES + 14] ^= 0xff;
    await writeFile(join(dir, 'page.1'), buf);
    await expect(openQueue(dir, { pageCapacityBytes: 256 })).rejects.toThrow(
      new RegExp(`page.1 at offset ${PAGE_HEADER_BYTES}: tail page was synced before the roll but seq 1: record CRC mismatch`),
    );

    dir = await closedQueueWith(5);
    await writeFile(join(dir, 'checkpoint.head'), Buffer.alloc(48, 1));
    await expect(openQueue(dir)).rejects.toThrow(/checkpoint.head at offset 0: checkpoint has a wrong magic number/);
  });

  it('deletes leftovers: pages below the first unacked page, an unfinished roll, a page from an interrupted creation', async () => {
    const dir = await closedQueueWith(3);
    const page1 = await readFile(join(dir, 'page.1'));
    await writeFile(join(dir, 'page.0'), page1);
    await writeFile(join(dir, 'page.2'), '');
    await writeFile(join(dir, 'checkpoint.head.tmp'), 'x');
    const q = await openQ(dir);
    expect((await readdir(dir)).sort()).toEqual(['checkpoint.head', 'lock', 'page.1']);
    expect(await drain(q)).toEqual(expected(1, 3));

    const fresh = await tempQueueDir();
    await (await import('node:fs/promises')).mkdir(fresh, { recursive: true });
    await writeFile(join(fresh, 'page.1'), page1.subarray(0, PAGE_HEADER_BYTES));
    const r = await openQ(fresh);
    expect(await r.write(ev(1))).toBe(1);
  });
});

describe('checkpoint designs', () => {
  it('append log: recovery takes the last valid record when the last one is torn', async () => {
    const dir = await tempQueueDir();
    const q = await openQ(dir, { checkpointDesign: 'append-log', checkpointWrites: 0, checkpointAcks: 1 });
    await writeAll(q, 1, 6);
    await q.ack((await q.readBatch(2, 100)).map((e) => e.seq));
    const copy = await snapshot(dir);
    const log = await readFile(join(copy, 'checkpoint.log'));
    expect(log.length % 48).toBe(0);
    await appendFile(join(copy, 'checkpoint.log'), Buffer.alloc(20, 0xab));
    const r = await openQ(copy, { checkpointDesign: 'append-log' });
    expect(r.durability().durableFirstUnackedSeq).toBe(3);
    expect(await drain(r)).toEqual(expected(3, 6));
    expect((await stat(join(copy, 'checkpoint.log'))).size % 48).toBe(0);
  });

  it('append log is compacted as it grows', async () => {
    const dir = await tempQueueDir();
    const q = await openQ(dir, { checkpointDesign: 'append-log', checkpointWrites: 1, pageWriteDesign: 'buffered' });
    for (let i = 0; i < 1100; i++) await q.checkpoint().then(() => q.write(ev(i)));
    expect((await stat(join(dir, 'checkpoint.log'))).size).toBeLessThanOrEqual(1024 * 48);
  });

  it('atomic-file queue reopened with append-log is migrated; an interrupted migration is finished; downgrade is refused', async () => {
    const dir = await tempQueueDir();
    let q = await openQ(dir, { checkpointDesign: 'atomic-file' });
    await writeAll(q, 1, 4);
    await q.close();
    const interrupted = await snapshot(dir);
    q = await openQ(dir, { checkpointDesign: 'append-log' });
    expect((await readdir(dir)).sort()).toEqual(['checkpoint.log', 'lock', 'page.1']);
    expect(await drain(q, false)).toEqual(expected(1, 4));
    await q.close();
    await expect(openQueue(dir, { checkpointDesign: 'atomic-file' })).rejects.toThrow(/uses append-log checkpoints.*downgrade/);

    // Crash after step 1 (checkpoint.log renamed in and synced) and before step 2 (unlink checkpoint.head).
    await cp(join(dir, 'checkpoint.log'), join(interrupted, 'checkpoint.log'));
    const r = await openQ(interrupted, { checkpointDesign: 'append-log' });
    expect(await readdir(interrupted)).not.toContain('checkpoint.head');
    expect(await drain(r, false)).toEqual(expected(1, 4));
  });
});

describe('lock', () => {
  it('a second open of the same directory fails naming the holder pid; a stale lock is taken over', async () => {
    const dir = await tempQueueDir();
    const q = await openQ(dir);
    await expect(openQueue(dir)).rejects.toThrow(QueueLockedError);
    await expect(openQueue(dir)).rejects.toThrow(new RegExp(`locked by process ${process.pid}`));
    await q.close();

    const child = spawn('sleep', ['30'], { stdio: 'ignore' });
    try {
      await writeFile(join(dir, 'lock'), `${child.pid}\n`);
      await expect(openQueue(dir)).rejects.toThrow(new RegExp(`locked by process ${child.pid}`));
    } finally {
      child.kill('SIGKILL');
    }
    await new Promise((r) => child.once('exit', r));
    const r = await openQ(dir); // the holder is dead: its lock is stale
    expect(await readFile(join(dir, 'lock'), 'utf8')).toBe(lockFileContent(process.pid));
    await r.close();
    expect(await readdir(dir)).not.toContain('lock');
  });

  it('release is idempotent: a second release never deletes a lock another opener took in between', async () => {
    const dir = await tempQueueDir();
    await mkdir(dir, { recursive: true });
    const lock = await acquireLock(dir);
    await lock.release();
    await writeFile(join(dir, 'lock'), '1\n'); // the next holder (pid 1 is always alive)
    await lock.release();
    expect(await readFile(join(dir, 'lock'), 'utf8')).toBe('1\n');
  });

  it('a stale lock is taken over by exactly one of several racing openers', async () => {
    const dir = await tempQueueDir();
    await mkdir(dir, { recursive: true });
    const child = spawn(process.execPath, ['-e', '']);
    await new Promise((r) => child.once('exit', r));
    // Once flaky (two winners in about one run in three under load): the old takeover moved a racer's fresh lock aside and back.
    for (let round = 0; round < 60; round++) {
      await writeFile(join(dir, 'lock'), `${child.pid}\n`);
      const results = await Promise.allSettled(Array.from({ length: 6 }, () => acquireLock(dir)));
      const won = results.filter((r) => r.status === 'fulfilled');
      expect(won.length, `round ${round}`).toBe(1);
      for (const r of results) if (r.status === 'rejected') expect(r.reason).toBeInstanceOf(QueueLockedError);
      await (won[0] as PromiseFulfilledResult<Awaited<ReturnType<typeof acquireLock>>>).value.release();
      expect((await readdir(dir)).filter((n) => n.startsWith('lock'))).toEqual([]);
    }
  });

  it('a torn lock file (a pid without its newline, e.g. cut short by ENOSPC) names no holder, even if that pid is alive', async () => {
    const dir = await tempQueueDir();
    await mkdir(dir, { recursive: true });
    await writeFile(join(dir, 'lock'), `${process.pid}`);
    const q = await openQ(dir);
    expect(await readFile(join(dir, 'lock'), 'utf8')).toBe(lockFileContent(process.pid));
    await q.close();
  });
});

describe('error paths', () => {
  it('an event bigger than a page is refused with its size and the limit; the queue stays usable', async () => {
    const q = await openQ(await tempQueueDir(), { pageCapacityBytes: 100 });
    await expect(q.write(Buffer.alloc(61))).rejects.toThrow(EventTooLargeError);
    await expect(q.write(Buffer.alloc(61))).rejects.toThrow(/event of 61 bytes does not fit in a page: pageCapacityBytes 100 holds events of up to 60 bytes/);
    expect(await q.write(Buffer.alloc(60))).toBe(1);
  });

  it('misuse is a clear error', async () => {
    const q = await openQ(await tempQueueDir());
    await expect(q.waitDurable(1)).rejects.toThrow(/seq 1 was never written/);
    await q.write(ev(1));
    await expect(q.ack([1])).rejects.toThrow(/seq 1 is not a delivered, unacked event/);
    await q.readBatch(1, 10);
    await expect(q.ack([1, 1])).rejects.toThrow(QueueUsageError);
    await expect(q.readBatch(0, 10)).rejects.toThrow(/maxEvents must be an integer >= 1/);
    // setTimeout would clamp a longer wait to 1 ms and turn the wait into a polling loop.
    await expect(q.readBatch(1, 2 ** 31)).rejects.toThrow(/readBatch: timeoutMs must be a number from 0 to 2147483647, got 2147483648/);
    await q.close();
    await expect(q.write(ev(2))).rejects.toThrow(/closed/);
  });

  it('a write, ack or waitDurable arriving while close() runs is refused, not accepted and lost', async () => {
    const dir = await tempQueueDir();
    const ops = new SpyOps();
    const q = await Queue.open(dir, { pageWriteDesign: 'buffered', checkpointWrites: 0 }, ops);
    await q.write(ev(1));
    await q.readBatch(1, 10);
    let release!: () => void;
    ops.hold = new Promise<void>((r) => (release = r));
    const closing = q.close();
    // The final checkpoint has flushed the page and waits in its fsync.
    for (let i = 0; i < 2_000 && !ops.fsyncs.includes('fsync of page'); i++) await new Promise((r) => setTimeout(r, 5));
    expect(ops.fsyncs).toContain('fsync of page');
    const late = q.write(ev(2));
    late.catch(() => undefined);
    release();
    ops.hold = null;
    await closing;
    await expect(late).rejects.toThrow(QueueUsageError);
    await expect(late).rejects.toThrow(/write: the queue in .* is closed/);
    await expect(q.ack([1])).rejects.toThrow(QueueUsageError);
    await expect(q.waitDurable(1)).rejects.toThrow(QueueUsageError);
    const r = await openQ(dir);
    expect(await drain(r)).toEqual(expected(1, 1));
  });

  it('fsync EIO: waiters and later calls fail naming file, operation and errno; nothing unsynced is reported durable; reopen recovers', async () => {
    const dir = await tempQueueDir();
    const ops = new SpyOps();
    const q = await openQ(dir, { checkpointWrites: 0 }, ops);
    await writeAll(q, 1, 3);
    ops.failFsync = { match: /fsync of page/, errno: 'EIO' };
    const message = new RegExp(`fsync of page failed on ${join(dir, 'page.1')}: EIO`);
    await expect(q.waitDurable(3)).rejects.toThrow(QueueIOError);
    expect(q.durability().durableSeq).toBe(0);
    await expect(q.write(ev(4))).rejects.toThrow(message);
    await expect(q.checkpoint()).rejects.toThrow(message);
    ops.failFsync = null;
    await expect(q.waitDurable(3)).rejects.toThrow(message); // never retried into a success
    await expect(q.close()).rejects.toThrow(message); // close() releases the files and the lock, and still tells
    const r = await openQ(dir);
    expect(r.durability().durableSeq).toBe(3);
    expect(await drain(r)).toEqual(expected(1, 3));
  });

  it('ENOSPC on a page write fails the write and stops the queue', async () => {
    const dir = await tempQueueDir();
    const ops = new SpyOps();
    const q = await openQ(dir, {}, ops);
    await q.write(ev(1));
    ops.failWrite = { match: /write records/, errno: 'ENOSPC' };
    await expect(q.write(ev(2))).rejects.toThrow(/write records failed on .*page.1: ENOSPC/);
    await expect(q.readBatch(1, 10)).rejects.toThrow(/ENOSPC/);
  });

  it('a background checkpoint that hits ENOSPC makes every later call reject with it, close() included (found by the gate)', async () => {
    const dir = await tempQueueDir();
    const ops = new SpyOps();
    const q = await openQ(dir, { checkpointDesign: 'append-log', checkpointWrites: 2, checkpointAcks: 1 }, ops);
    ops.failWrite = { match: /append to checkpoint log/, errno: 'ENOSPC' };
    await q.write(ev(1));
    await q.write(ev(2)); // starts a checkpoint in the background; nobody awaits it
    for (let i = 0; i < 2_000 && ops.failedWrites === 0; i++) await new Promise((r) => setTimeout(r, 5));
    expect(ops.failedWrites).toBe(1);
    const message = /append to checkpoint log failed on .*checkpoint.log: ENOSPC/;
    await expect(q.close()).rejects.toThrow(message);
    await expect(q.close()).rejects.toThrow(message);
    ops.failWrite = null;
    const r = await openQ(dir, { checkpointDesign: 'append-log' });
    expect(await drain(r)).toEqual(expected(1, 2));
  });

  it('a checkpoint write error (append log fsync EIO) stops the queue and leaves acks not durable', async () => {
    const ops = new SpyOps();
    const q = await openQ(await tempQueueDir(), { checkpointDesign: 'append-log', checkpointAcks: 1 }, ops);
    await q.write(ev(1));
    await q.write(ev(2));
    await q.readBatch(2, 10);
    ops.failFsync = { match: /checkpoint log/, errno: 'EIO' };
    await expect(q.ack([1])).rejects.toThrow(/fsync of checkpoint log failed on .*checkpoint.log: EIO/);
    expect(q.durability().durableFirstUnackedSeq).toBe(1);
  });
});
