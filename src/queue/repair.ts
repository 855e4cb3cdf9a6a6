// `powercut queue repair DIR`: keeps every record that is still intact, drops the rest and says
// exactly what it dropped (file, offset, seqs), so that the queue opens again.
import { readdir, readFile, truncate, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import type { CheckpointDesign } from './types.js';
import { PAGE_HEADER_BYTES, RECORD_OVERHEAD_BYTES, decodeCheckpoint, decodePageHeader, isError, pageFileName, scanRecords, type Checkpoint } from './format.js';
import { AppendLogCheckpointStore, AtomicFileCheckpointStore, CHECKPOINT_HEAD_FILE, CHECKPOINT_LOG_FILE, lastValidLogRecord } from './checkpoints.js';
import { GAPS_FILE, readGaps, type SeqGap } from './gaps.js';
import { acquireLock } from './lock.js';
import { listPages, describeStop } from './recovery.js';
import { DiskOps } from './ops.js';

export interface Dropped {
  file: string;
  offsetBytes: number;
  bytes: number;
  /** Seqs lost, as precisely as can be known. */
  seqs: string;
  reason: string;
}

export interface RepairReport {
  dropped: Dropped[];
  gaps: SeqGap[];
  checkpoint: Checkpoint;
  checkpointRebuilt: boolean;
}

async function readCheckpointLeniently(dir: string): Promise<{ design: CheckpointDesign; checkpoint?: Checkpoint; problem?: Dropped }> {
  const logFile = join(dir, CHECKPOINT_LOG_FILE);
  const headFile = join(dir, CHECKPOINT_HEAD_FILE);
  const log = await readFile(logFile).catch(() => undefined);
  if (log !== undefined) {
    const found = lastValidLogRecord(log);
    if (found) return { design: 'append-log', checkpoint: found.checkpoint };
    return { design: 'append-log', problem: { file: logFile, offsetBytes: 0, bytes: log.length, seqs: 'none (acks only)', reason: 'no valid checkpoint record' } };
  }
  const head = await readFile(headFile).catch(() => undefined);
  if (head === undefined) return { design: 'atomic-file', problem: { file: headFile, offsetBytes: 0, bytes: 0, seqs: 'none (acks only)', reason: 'missing' } };
  const ck = decodeCheckpoint(head);
  if (isError(ck)) return { design: 'atomic-file', problem: { file: headFile, offsetBytes: 0, bytes: head.length, seqs: 'none (acks only)', reason: ck.error } };
  return { design: 'atomic-file', checkpoint: ck };
}

export async function repairQueue(dir: string, ops: DiskOps = new DiskOps()): Promise<RepairReport> {
  const lock = await acquireLock(dir);
  try {
    return await repairLocked(dir, ops);
  } finally {
    await lock.release();
  }
}

async function repairLocked(dir: string, ops: DiskOps): Promise<RepairReport> {
  for (const name of await readdir(dir)) if (name.endsWith('.tmp')) await unlink(join(dir, name));
  const dropped: Dropped[] = [];
  const gaps = await readGaps(dir);
  const loaded = await readCheckpointLeniently(dir);
  if (loaded.problem) dropped.push(loaded.problem);
  const old = loaded.checkpoint;
  const verifyCrc = (r: Buffer) => ops.recordChecksumValid(r);

  const kept: Array<{ pageNum: number; firstSeq: number; count: number }> = [];
  let expected: number | undefined; // next seq after the last kept record
  let bytesPastLastKept = 0; // bound on how many seqs may have been used past the last kept record
  for (const pageNum of await listPages(dir)) {
    const file = join(dir, pageFileName(pageNum));
    const buf = await readFile(file);
    const header = decodePageHeader(buf);
    if (isError(header) || header.pageNum !== pageNum || (expected !== undefined && header.firstSeq < expected)) {
      const reason = isError(header) ? header.error : header.pageNum !== pageNum ? `header says page ${header.pageNum}` : `seqs overlap the previous page`;
      await unlink(file);
      dropped.push({ file, offsetBytes: 0, bytes: buf.length, seqs: expected === undefined ? 'unknown' : `from ${expected}`, reason });
      bytesPastLastKept += buf.length;
      continue;
    }
    const scan = scanRecords(buf, PAGE_HEADER_BYTES, header.firstSeq, { verifyCrc });
    if (scan.stop !== 'end') {
      await truncate(file, scan.endOffset);
      dropped.push({ file, offsetBytes: scan.endOffset, bytes: buf.length - scan.endOffset, seqs: `from ${scan.lastSeq + 1}`, reason: describeStop(scan.stop) });
    }
    if (expected !== undefined && header.firstSeq > expected) gaps.push([expected, header.firstSeq - 1]);
    kept.push({ pageNum, firstSeq: header.firstSeq, count: scan.count });
    expected = scan.lastSeq + 1;
    bytesPastLastKept = buf.length - scan.endOffset;
  }
  // Drop empty tail pages (the queue never rolls away from an empty page).
  for (const page of kept.slice(0, -1).filter((p) => p.count === 0)) {
    await unlink(join(dir, pageFileName(page.pageNum)));
    kept.splice(kept.indexOf(page), 1);
  }
  // Never reuse a seq that may have been reported durable: skip past every seq the dropped bytes could hold.
  const lastKeptSeq = (expected ?? 1) - 1;
  let maxUsedSeq = lastKeptSeq + Math.floor(bytesPastLastKept / RECORD_OVERHEAD_BYTES);
  if (old) maxUsedSeq = Math.max(maxUsedSeq, old.minSeq + old.elementCount - 1);
  if (kept.length === 0 || maxUsedSeq > lastKeptSeq) {
    const pageNum = (kept.at(-1)?.pageNum ?? 0) + 1;
    const fh = await ops.createPage(dir, pageNum, maxUsedSeq + 1);
    await fh.close();
    if (maxUsedSeq > lastKeptSeq && kept.length > 0) gaps.push([lastKeptSeq + 1, maxUsedSeq]);
    kept.push({ pageNum, firstSeq: maxUsedSeq + 1, count: 0 });
  }
  for (const d of dropped) {
    const from = /^from (\d+)$/.exec(d.seqs);
    if (!from) continue;
    const gap = gaps.find(([a]) => a === Number(from[1]));
    if (gap) d.seqs = `${gap[0]}..${gap[1]}`;
    else if (Number(from[1]) > lastKeptSeq) d.seqs = Number(from[1]) <= maxUsedSeq ? `${from[1]}..${maxUsedSeq} at most` : 'none (no whole record)';
  }
  const head = kept[kept.length - 1];
  const pageOf = (seq: number) => [...kept].reverse().find((p) => p.firstSeq <= seq) ?? kept[0];
  let firstUnackedSeq = old ? old.firstUnackedSeq : kept[0].firstSeq;
  firstUnackedSeq = Math.min(Math.max(firstUnackedSeq, kept[0].firstSeq), head.firstSeq + head.count);
  const gapAt = gaps.find(([a, b]) => a <= firstUnackedSeq && firstUnackedSeq <= b);
  if (gapAt) firstUnackedSeq = gapAt[1] + 1;
  const checkpoint: Checkpoint = {
    headPageNum: head.pageNum,
    firstUnackedPageNum: pageOf(firstUnackedSeq).pageNum,
    firstUnackedSeq,
    minSeq: head.firstSeq,
    elementCount: head.count,
  };
  // Pages below the first kept one are not referenced; recovery requires the range to be complete.
  for (const page of kept) if (page.pageNum < checkpoint.firstUnackedPageNum) await unlink(join(dir, pageFileName(page.pageNum)));
  await ops.replaceFileAtomically(join(dir, GAPS_FILE), Buffer.from(JSON.stringify(gaps)));
  const store = loaded.design === 'append-log' ? new AppendLogCheckpointStore(ops, dir) : new AtomicFileCheckpointStore(ops, dir);
  if (store instanceof AppendLogCheckpointStore) await store.rewrite(checkpoint);
  else await store.write(checkpoint);
  await store.close();
  await ops.fsyncDir(dir, 'fsync of directory after repair');
  const rebuilt = old === undefined || JSON.stringify(old) !== JSON.stringify(checkpoint);
  return { dropped, gaps, checkpoint, checkpointRebuilt: rebuilt };
}
