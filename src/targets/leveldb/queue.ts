// A persistent FIFO queue on LevelDB (classic-level), with the built-in queue's API (DrivenQueue).
//
// Layout: one key per record, `r` + the seq in 16 zero-padded digits (sortable), the event's bytes as
// the value; one meta key `m` holding {f: the first unacked seq, above: acked seqs above it}. Records
// are written in batches of `writeBatchRecords`; an ack is one batch deleting the acked keys and
// rewriting the meta key, so an ack above a gap is as durable as any other.
//
// Durability is claimed only for what LevelDB has made durable:
// - syncWrites on: a record batch written with `sync: true` is durable when the write returns;
// - syncWrites off: a batch written with `sync: false` is not, even after a later synced batch (that
//   one only syncs the current log file: records in an older log, whose memtable is still being
//   flushed, are not covered); it becomes durable when a memtable flush covers it (waitDurable,
//   checkpoint and close force one with compactRange: the table file is synced and the manifest
//   that names it is synced after a directory fsync);
// - syncAcks on: an ack is durable when its synced batch returns; off: ack batches are unsynced until
//   the one that brings the pending acks to `ackSyncEvery`, which is synced and deletes all of them
//   again (so it is durable on its own, whatever happened to the earlier, unsynced ones).
//
// Recovery takes whatever LevelDB opens with. The meta key is authoritative: a record below `f` or in
// `above` is acked (deleted again if an unsynced delete was lost). Unsynced records can be lost in the
// middle (an older log's unsynced tail, a torn write), so a seq that is neither held nor acked below
// the highest known seq is a hole: everything from it on was never durable (durability is a prefix),
// and is dropped, its seqs reused. Otherwise the next seq follows the highest record or acked seq, so
// a seq confirmed durable is never handed out again. Repairs are written with `sync: true`.
import { ClassicLevel } from 'classic-level';
import { existsSync } from 'node:fs';
import { mkdir, open as openFile, readdir, rm } from 'node:fs/promises';
import path from 'node:path';
import { MAX_EVENT_BYTES } from '../../harness/workload.js';
import { errnoOf } from '../errno-text.js';
import type { DrivenQueue } from '../node-driver.js';
import { levelSettings, type LevelQueueSettings } from './settings.js';

export const META_KEY = 'm';
/**
 * Created (and its directory fsynced) once LevelDB has created the database durably. LevelDB 1.20
 * never fsyncs a new database's first manifest (NewDB, google/leveldb#189): until a directory fsync
 * after the next CURRENT rename, a power cut can leave CURRENT naming an empty MANIFEST-000001, and
 * the database never opens again ("no meta-nextfile entry in descriptor"). Without this file, any
 * LevelDB files in the folder are the remains of a creation that never finished: nothing in them was
 * ever confirmed, so they are removed and the database is created again.
 */
export const READY_FILE = 'QUEUE-READY';
/** The files LevelDB creates in its folder (db/filename.cc). */
const LEVELDB_FILE = /^(CURRENT|LOCK|LOG|LOG\.old|MANIFEST-\d+|\d+\.(log|ldb|sst|dbtmp))$/;
const RECORD_PREFIX = 'r';
const RECORD_END = 's';
const SEQ_DIGITS = 16;
/** compactRange over keys no record or meta key uses: LevelDB flushes its memtables and compacts nothing. */
const FLUSH_RANGE = ['z0', 'z1'] as const;
/** A key written (empty) only to learn whether LevelDB is still accepting writes. */
const PROBE_KEY = 'p';

export const recordKey = (seq: number): string => RECORD_PREFIX + String(seq).padStart(SEQ_DIGITS, '0');
export const seqOfKey = (key: string): number => Number(key.slice(RECORD_PREFIX.length));

export interface Meta {
  /** First unacked seq: every seq below it is acked. */
  f: number;
  /** Acked seqs above f (acked while a lower one was still unacked). */
  above: number[];
}

export interface DurableState {
  durableSeq: number;
  durableFirstUnackedSeq: number;
}

/** Known-bad behaviour for the target's variants (known-bad.ts); all off in the correct queue. */
export interface LevelQueueFaults {
  /** Reports a record batch durable as soon as it is written, even with `sync: false`. */
  claimUnsyncedDurable?: boolean;
  /** Trusts LevelDB 1.20 to create a database durably (no READY_FILE, no directory fsync after open). */
  trustLevelDbCreate?: boolean;
  /** Trusts a synced batch that LevelDB wrote to a log file it just created (no directory fsync). */
  trustLevelDbLogRoll?: boolean;
  /** Fails to open when LevelDB reports corruption, instead of repairing (RepairDB) once. */
  noRepair?: boolean;
}

/** What recovery found and did, for tests and `inspect`-like output. */
export interface Recovery {
  records: number;
  /** Records deleted because the meta key says they were acked. */
  staleAcked: number;
  /** First seq neither held nor acked below a higher known seq, if any; everything from it on was dropped. */
  hole?: number;
  dropped: number;
  /** LevelDB's open failed with this corruption, and RepairDB rebuilt the database. */
  repaired?: string;
}

export class LevelQueueError extends Error {
  constructor(message: string, readonly code?: string) {
    super(message);
    this.name = 'LevelQueueError';
  }
}

type Db = ClassicLevel<string, Buffer>;

export class LevelQueue implements DrivenQueue {
  private pending: { seq: number; data: Buffer }[] = [];
  /** Every LevelDB write and flush runs in this chain, one at a time, in call order. */
  private tail: Promise<void> = Promise.resolve();
  private failure: Error | undefined;
  private closed = false;
  private listeners = new Set<(s: DurableState) => void>();
  private readWakers = new Set<() => void>();
  private flushing: Promise<void> | undefined;

  /** Unacked seqs, ascending (held or pending); `head` is the first not yet known acked. */
  private live: number[];
  private head = 0;
  /** Acked seqs at or above the first unacked one. */
  private acked: Set<number>;
  /** Acked events since the last compaction of the acked prefix. */
  private ackedSinceCompaction = 0;
  /** Acks written since the last synced ack batch or flush (syncAcks off). */
  private unsyncedAcks = new Set<number>();
  private readCursor: number;
  private nextSeq: number;
  /** Highest seq whose batch LevelDB accepted; the first unacked seq its last ack batch recorded. */
  private writtenSeq: number;
  private writtenF: number;
  private durableSeq: number;
  private durableF: number;

  private constructor(
    private readonly db: Db,
    private readonly dir: string,
    private knownLogs: Set<string>,
    private readonly s: LevelQueueSettings,
    private readonly faults: LevelQueueFaults,
    state: { live: number[]; acked: Set<number>; f: number; nextSeq: number; durableSeq: number },
    readonly recovery: Recovery,
  ) {
    this.live = state.live;
    this.acked = state.acked;
    this.nextSeq = state.nextSeq;
    this.readCursor = state.f;
    this.writtenSeq = state.nextSeq - 1;
    this.writtenF = state.f;
    this.durableSeq = state.durableSeq;
    this.durableF = state.f;
  }

  /** Opens (creating or recovering) the queue in `dir`. */
  static async open(dir: string, raw: Record<string, unknown> = {}, faults: LevelQueueFaults = {}): Promise<LevelQueue> {
    const s = levelSettings(raw);
    const creating = !faults.trustLevelDbCreate && !existsSync(path.join(dir, READY_FILE));
    if (creating) {
      await mkdir(dir, { recursive: true });
      for (const name of await readdir(dir)) if (LEVELDB_FILE.test(name)) await rm(path.join(dir, name), { force: true });
    }
    const db: Db = new ClassicLevel<string, Buffer>(dir, {
      keyEncoding: 'utf8',
      valueEncoding: 'buffer',
      createIfMissing: true,
      writeBufferSize: s.writeBufferSize,
      maxFileSize: s.maxFileSize,
      compression: s.compression,
    });
    let repaired: string | undefined;
    try {
      try {
        await db.open();
      } catch (err) {
        // LevelDB appends a manifest record naming a new table file before it fsyncs the directory
        // (the fsync comes with the manifest's own): a torn write-back can keep the record and lose
        // the table's name, and LevelDB then refuses to open ("Corruption: N missing files"). The data
        // is still in the files present (the old log and the compaction inputs are removed only after
        // that fsync): RepairDB rebuilds the manifest from them. Once; only for corruption.
        const message = (err as Error & { cause?: Error }).cause?.message ?? (err as Error).message;
        if (faults.noRepair || creating || !/Corruption/.test(message)) throw err;
        repaired = message;
        await ClassicLevel.repair(dir);
        await db.open();
      }
      if (creating) {
        // CURRENT now names MANIFEST-000002, which LevelDB did fsync; make that name durable, then say so.
        await fsyncDir(dir);
        await (await openFile(path.join(dir, READY_FILE), 'w')).close();
      }
      // Every name LevelDB's open created (a new log, a new manifest, CURRENT) made durable; the log
      // files known now are the ones a later synced batch need not fsync the directory for.
      if (!faults.trustLevelDbCreate) await fsyncDir(dir);
      const knownLogs = await logFiles(dir);
      const { state, recovery, repair } = await recover(db);
      if (repair.length > 0) await db.batch(repair, { sync: true });
      return new LevelQueue(db, dir, knownLogs, s, faults, state, { ...recovery, ...(repaired !== undefined ? { repaired } : {}) });
    } catch (err) {
      await db.close().catch(() => undefined);
      throw asQueueError(err, repaired !== undefined ? `open (after RepairDB for: ${repaired})` : 'open');
    }
  }

  /**
   * After a synced batch: LevelDB writes a batch that finds the memtable full into a new log file,
   * created without a directory fsync (it fsyncs the directory only before syncing a manifest, which
   * the flush of the old memtable does later, in the background). Until then a power cut loses the
   * log's name and every synced batch in it. So if a log file appeared, fsync the directory before
   * calling the batch durable.
   */
  private async syncNewLogs(): Promise<void> {
    if (this.faults.trustLevelDbLogRoll) return;
    const logs = await logFiles(this.dir);
    if ([...logs].every((name) => this.knownLogs.has(name))) return;
    await fsyncDir(this.dir);
    this.knownLogs = logs;
  }

  durability(): DurableState {
    return { durableSeq: this.durableSeq, durableFirstUnackedSeq: this.durableF };
  }

  onDurable(listener: (s: DurableState) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** The first unacked seq now (in memory). */
  private firstUnacked(): number {
    while (this.head < this.live.length && this.acked.has(this.live[this.head])) {
      this.acked.delete(this.live[this.head]);
      this.head++;
    }
    if (this.head > 1024 && this.head * 2 > this.live.length) {
      this.live = this.live.slice(this.head);
      this.head = 0;
    }
    return this.head < this.live.length ? this.live[this.head] : this.nextSeq;
  }

  private check(): void {
    if (this.failure) throw this.failure;
    if (this.closed) throw new LevelQueueError('the queue is closed');
  }

  /** Runs `op` after every earlier LevelDB operation; the first failure stops the queue. */
  private run(op: () => Promise<void>, where: string): Promise<void> {
    const next = this.tail.then(async () => {
      if (this.failure) throw this.failure;
      try {
        await op();
      } catch (err) {
        this.failure ??= asQueueError(err, where);
        throw this.failure;
      }
    });
    this.tail = next.catch(() => undefined);
    return next;
  }

  private advance(seq: number, f: number): void {
    if (seq <= this.durableSeq && f <= this.durableF) return;
    this.durableSeq = Math.max(this.durableSeq, seq);
    this.durableF = Math.max(this.durableF, f);
    const state = this.durability();
    for (const l of [...this.listeners]) l(state);
  }

  /** Writes the buffered records as one batch; resolves when LevelDB has it. */
  private commitPending(): Promise<void> {
    if (this.pending.length === 0) return this.run(async () => undefined, 'write');
    const batch = this.pending;
    this.pending = [];
    const last = batch[batch.length - 1].seq;
    return this.run(async () => {
      await this.db.batch(batch.map((r) => ({ type: 'put' as const, key: recordKey(r.seq), value: r.data })), { sync: this.s.syncWrites });
      this.writtenSeq = last;
      if (this.s.syncWrites) await this.syncNewLogs();
      if (this.s.syncWrites || this.faults.claimUnsyncedDurable) this.advance(last, this.durableF);
      for (const wake of [...this.readWakers]) wake();
    }, 'write');
  }

  async write(data: Buffer): Promise<number> {
    this.check();
    if (data.length > MAX_EVENT_BYTES) throw new LevelQueueError(`event of ${data.length} bytes is larger than ${MAX_EVENT_BYTES}`);
    const seq = this.nextSeq++;
    this.live.push(seq);
    this.pending.push({ seq, data: Buffer.from(data) });
    // A full batch is written now; a waiting reader wants it now too.
    if (this.pending.length >= this.s.writeBatchRecords || this.readWakers.size > 0) await this.commitPending();
    return seq;
  }

  /** Forces a memtable flush: every batch LevelDB accepted before it is in a synced table file named by a synced manifest. */
  private flush(): Promise<void> {
    this.flushing ??= this.run(async () => {
      const seq = this.writtenSeq;
      const f = this.writtenF;
      const acks = [...this.unsyncedAcks];
      await this.db.compactRange(FLUSH_RANGE[0], FLUSH_RANGE[1]);
      // compactRange returns nothing: LevelDB's CompactRange ignores the flush's status. A failed
      // flush sets LevelDB's background error, which the next write reports: write one before
      // calling anything durable.
      await this.probe();
      acks.forEach((a) => this.unsyncedAcks.delete(a));
      this.advance(seq, f);
    }, 'flush').finally(() => {
      this.flushing = undefined;
    });
    return this.flushing;
  }

  /** A write LevelDB refuses once a background flush or compaction failed (its bg_error_). */
  private async probe(): Promise<void> {
    await this.db.put(PROBE_KEY, Buffer.alloc(0), { sync: false });
  }

  async waitDurable(seq: number): Promise<void> {
    this.check();
    if (seq <= this.durableSeq) return;
    if (seq >= this.nextSeq) throw new LevelQueueError(`waitDurable(${seq}): no such seq was written (next is ${this.nextSeq})`);
    if (this.pending.some((r) => r.seq <= seq)) await this.commitPending();
    else await this.run(async () => undefined, 'write');
    while (this.durableSeq < seq) {
      if (this.s.syncWrites || this.faults.claimUnsyncedDurable) throw new LevelQueueError(`invariant: seq ${seq} written in a durable batch but durableSeq is ${this.durableSeq}`);
      await this.flush();
    }
  }

  async readBatch(maxEvents: number, timeoutMs: number): Promise<{ seq: number; data: Buffer }[]> {
    this.check();
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      await this.commitPending();
      const from = this.readCursor;
      const events: { seq: number; data: Buffer }[] = [];
      for (const [key, value] of await this.db.iterator({ gte: recordKey(from), lt: RECORD_END, limit: maxEvents }).all()) {
        events.push({ seq: seqOfKey(key), data: value });
      }
      // A concurrent read moved the cursor: deliver only what is after it.
      const fresh = events.filter((e) => e.seq >= this.readCursor);
      if (fresh.length > 0) {
        this.readCursor = fresh[fresh.length - 1].seq + 1;
        return fresh;
      }
      const left = deadline - Date.now();
      if (left <= 0) return [];
      await new Promise<void>((resolve) => {
        const wake = () => {
          clearTimeout(timer);
          this.readWakers.delete(wake);
          resolve();
        };
        const timer = setTimeout(wake, left);
        this.readWakers.add(wake);
        if (this.pending.length > 0) wake();
      });
      this.check();
    }
  }

  async ack(seqs: readonly number[]): Promise<void> {
    this.check();
    if (seqs.length === 0) return;
    for (const seq of seqs) {
      if (seq >= this.readCursor) throw new LevelQueueError(`ack(${seq}): that seq was not delivered`);
      this.acked.add(seq);
      this.unsyncedAcks.add(seq);
    }
    const f = this.firstUnacked();
    const sync = this.s.syncAcks || this.unsyncedAcks.size >= this.s.ackSyncEvery;
    // A synced batch deletes every ack not yet durable again: it must not depend on unsynced batches
    // in an older log file, whose tail a power cut may take.
    const dels = sync ? [...this.unsyncedAcks] : [...seqs];
    if (sync) this.unsyncedAcks.clear();
    const meta: Meta = { f, above: [...this.acked].filter((s) => s > f).sort((a, b) => a - b) };
    await this.run(async () => {
      await this.db.batch(
        [...dels.map((seq) => ({ type: 'del' as const, key: recordKey(seq) })), { type: 'put' as const, key: META_KEY, value: Buffer.from(JSON.stringify(meta)) }],
        { sync },
      );
      this.writtenF = f;
      if (sync) {
        await this.syncNewLogs();
        this.advance(this.durableSeq, f);
      }
    }, 'ack');
    this.ackedSinceCompaction += seqs.length;
    if (this.s.compactAckedEvery > 0 && this.ackedSinceCompaction >= this.s.compactAckedEvery && f > 1) {
      this.ackedSinceCompaction = 0;
      await this.run(async () => {
        await this.db.compactRange(RECORD_PREFIX, recordKey(f - 1));
        await this.probe();
      }, 'compaction');
    }
  }

  /** Makes every write and ack so far durable. */
  async checkpoint(): Promise<void> {
    this.check();
    await this.commitPending();
    if (!this.s.syncWrites && !this.faults.claimUnsyncedDurable) {
      if (this.durableSeq < this.writtenSeq || this.durableF < this.writtenF || this.unsyncedAcks.size > 0) await this.flush();
      return;
    }
    if (this.unsyncedAcks.size === 0) return;
    const f = this.firstUnacked();
    const dels = [...this.unsyncedAcks];
    this.unsyncedAcks.clear();
    const meta: Meta = { f, above: [...this.acked].filter((s) => s > f).sort((a, b) => a - b) };
    await this.run(async () => {
      await this.db.batch([...dels.map((seq) => ({ type: 'del' as const, key: recordKey(seq) })), { type: 'put' as const, key: META_KEY, value: Buffer.from(JSON.stringify(meta)) }], { sync: true });
      this.writtenF = f;
      await this.syncNewLogs();
      this.advance(this.durableSeq, f);
    }, 'checkpoint');
  }

  /** A clean close makes everything durable first; the database is closed even after a failure. */
  async close(): Promise<void> {
    if (this.closed) return;
    try {
      if (!this.failure) {
        await this.checkpoint();
        // A background flush or compaction that failed must not go unreported: LevelDB's close does
        // not say. Wait for the memtable flush and any compaction in progress, then ask.
        await this.run(async () => {
          await this.db.compactRange(FLUSH_RANGE[0], FLUSH_RANGE[1]);
          await this.probe();
        }, 'close');
      }
    } finally {
      this.closed = true;
      for (const wake of [...this.readWakers]) wake();
      await this.tail;
      await this.db.close();
    }
    if (this.failure) throw this.failure;
  }
}

const LOG_FILE = /^\d+\.log$/;

async function logFiles(dir: string): Promise<Set<string>> {
  return new Set((await readdir(dir)).filter((name) => LOG_FILE.test(name)));
}

async function fsyncDir(dir: string): Promise<void> {
  const fd = await openFile(dir, 'r');
  try {
    await fd.sync();
  } finally {
    await fd.close();
  }
}

function asQueueError(err: unknown, where: string): Error {
  if (err instanceof LevelQueueError) return err;
  const e = err as Error & { code?: string; cause?: Error };
  const detail = e?.cause?.message ? `${e.message} (${e.cause.message})` : (e?.message ?? String(err));
  return new LevelQueueError(`${where}: ${detail}`, errnoOf(e, detail));
}

/** Reads the meta key and every record key; decides what the queue holds and what to repair. */
async function recover(db: Db): Promise<{
  state: { live: number[]; acked: Set<number>; f: number; nextSeq: number; durableSeq: number };
  recovery: Recovery;
  repair: ({ type: 'del'; key: string } | { type: 'put'; key: string; value: Buffer })[];
}> {
  // Through an iterator, which merges by sequence number (a repaired database has every table in level 0).
  const raw = (await db.iterator({ gte: META_KEY, lte: META_KEY, limit: 1 }).all())[0]?.[1];
  const meta: Meta = raw === undefined ? { f: 1, above: [] } : parseMeta(raw);
  let f = meta.f;
  let acked = new Set(meta.above.filter((s) => s >= f));
  const present: number[] = [];
  for await (const key of db.keys({ gte: RECORD_PREFIX, lt: RECORD_END })) present.push(seqOfKey(key));
  const stale = present.filter((s) => s < f || acked.has(s));
  let live = present.filter((s) => s >= f && !acked.has(s));
  const known = Math.max(f - 1, live[live.length - 1] ?? 0, ...acked);
  const held = new Set(live);
  let hole: number | undefined;
  for (let s = f; s <= known; s++) {
    if (!held.has(s) && !acked.has(s)) {
      hole = s;
      break;
    }
  }
  let dropped: number[] = [];
  let nextSeq = known + 1;
  if (hole !== undefined) {
    dropped = live.filter((s) => s >= hole);
    live = live.filter((s) => s < hole);
    acked = new Set([...acked].filter((s) => s < hole));
    nextSeq = hole;
  }
  while (acked.has(f)) acked.delete(f++);
  const repair: ({ type: 'del'; key: string } | { type: 'put'; key: string; value: Buffer })[] = [...stale, ...dropped].map((s) => ({ type: 'del' as const, key: recordKey(s) }));
  const newMeta: Meta = { f, above: [...acked].sort((a, b) => a - b) };
  if (repair.length > 0 || JSON.stringify(newMeta) !== JSON.stringify(meta)) repair.push({ type: 'put', key: META_KEY, value: Buffer.from(JSON.stringify(newMeta)) });
  return {
    state: { live, acked, f, nextSeq, durableSeq: nextSeq - 1 },
    recovery: { records: present.length, staleAcked: stale.length, ...(hole !== undefined ? { hole } : {}), dropped: dropped.length },
    repair,
  };
}

function parseMeta(raw: Buffer): Meta {
  const m = JSON.parse(raw.toString('utf8')) as Meta;
  if (!Number.isInteger(m.f) || m.f < 1 || !Array.isArray(m.above) || !m.above.every((s) => Number.isInteger(s))) {
    throw new LevelQueueError(`damaged meta key: ${raw.toString('utf8').slice(0, 200)}`);
  }
  return m;
}
