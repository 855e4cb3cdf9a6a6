// Recovery on open: checkpoint -> pages -> the state the queue resumes from. Reads and validates;
// the only changes it makes are the crash-normal ones (delete leftover pages, truncate a torn head tail).
import { readdir, readFile, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import type { FileHandle } from 'node:fs/promises';
import type { CheckpointDesign } from './types.js';
import { DamagedQueueError } from './errors.js';
import {
  PAGE_HEADER_BYTES,
  decodePageHeader,
  isError,
  pageFileName,
  parsePageFileName,
  recordBytes,
  scanRecords,
  type Checkpoint,
  type ScanStop,
} from './format.js';
import { loadCheckpoint } from './checkpoints.js';
import { isGap, readGaps } from './gaps.js';
import type { DiskOps, ReadPosition } from './ops.js';

export interface PageInfo {
  pageNum: number;
  firstSeq: number;
  file: string;
  /** Final size of a tail page; for the head page, its size at recovery. */
  sizeBytes: number;
  count: number;
}

export interface RecoveredState {
  /** Live pages, from the first unacked page to the head page (last). */
  pages: PageInfo[];
  headFh: FileHandle;
  lastSeq: number;
  firstUnackedSeq: number;
  /** Where reading resumes: the first unacked record (or the head page's end). */
  reader: ReadPosition;
  unackedBytes: number;
  unackedCount: number;
  /** What recovery changed, for logs and tests. */
  actions: string[];
}

const TMP_FILE = /\.tmp$/;

export function describeStop(stop: ScanStop): string {
  const reasons: Record<ScanStop, string> = {
    end: 'end of file',
    truncated: 'record is cut short',
    seq: 'record seq out of sequence (zeroed or stale bytes)',
    length: 'record length runs past the end of the file',
    crc: 'record CRC mismatch',
    limit: 'scan limit',
  };
  return reasons[stop];
}

export async function listPages(dir: string): Promise<number[]> {
  const names = await readdir(dir);
  return names
    .map(parsePageFileName)
    .filter((n): n is number => n !== undefined)
    .sort((a, b) => a - b);
}

export async function recoverQueue(dir: string, design: CheckpointDesign, ops: DiskOps): Promise<RecoveredState> {
  const actions: string[] = [];
  for (const name of await readdir(dir)) {
    if (TMP_FILE.test(name)) {
      await unlink(join(dir, name));
      actions.push(`deleted leftover ${name}`);
    }
  }
  const loaded = await loadCheckpoint(dir, design, ops);
  const pageNums = await listPages(dir);
  const verifyCrc = (record: Buffer) => ops.recordChecksumValid(record);
  if (loaded === undefined) return newQueue(dir, pageNums, ops, verifyCrc, actions);

  const ck: Checkpoint = loaded.checkpoint;
  const ckFile = loaded.file;
  await deletePagesOutside(dir, ck, ckFile, pageNums, ops, verifyCrc, actions);
  const { pages, unackedBytes, unackedCount, reader } = await scanLivePages(dir, ck, ckFile, ops, verifyCrc);
  const head = pages[pages.length - 1];
  const lastSeq = head.firstSeq + head.count - 1;
  if (pages[0].firstSeq > ck.firstUnackedSeq || ck.firstUnackedSeq > lastSeq + 1) {
    throw new DamagedQueueError(ckFile, 0, `first unacked seq ${ck.firstUnackedSeq} is outside the pages' seqs ${pages[0].firstSeq}..${lastSeq}`);
  }

  const headFh = await ops.openFile(head.file, 'r+', 'open head page');
  try {
    const { size } = await headFh.stat();
    if (size > head.sizeBytes) {
      // Drop the torn tail now: stale records behind it must not resurface after a later crash.
      await ops.truncate(headFh, head.file, head.sizeBytes);
      actions.push(`truncated ${pageFileName(head.pageNum)} from ${size} to ${head.sizeBytes} bytes (torn tail after seq ${lastSeq})`);
    }
    // Records found on disk may be only in the page cache (process killed, no power cut): sync them.
    await ops.fsync(headFh, head.file, 'fsync of head page at recovery');
  } catch (err) {
    await headFh.close().catch(() => undefined);
    throw err;
  }
  return {
    pages,
    headFh,
    lastSeq,
    firstUnackedSeq: ck.firstUnackedSeq,
    reader: reader ?? { pageNum: head.pageNum, offsetBytes: head.sizeBytes, seq: ck.firstUnackedSeq },
    unackedBytes,
    unackedCount,
    actions,
  };
}

type VerifyCrc = (record: Buffer) => boolean;

/** Whether a page's bytes hold at least one valid record (a page with none may be deleted as never written). */
function holdsRecords(buf: Buffer, verifyCrc: VerifyCrc): boolean {
  const header = decodePageHeader(buf);
  return !isError(header) && scanRecords(buf, PAGE_HEADER_BYTES, header.firstSeq, { verifyCrc, maxCount: 1 }).count > 0;
}

/** A queue with no checkpoint: a new one, or a crash while creating one (a page exists, its first checkpoint does not). */
async function newQueue(dir: string, pageNums: number[], ops: DiskOps, verifyCrc: VerifyCrc, actions: string[]): Promise<RecoveredState> {
  for (const pageNum of pageNums) {
    const file = join(dir, pageFileName(pageNum));
    const buf = await readFile(file);
    if (holdsRecords(buf, verifyCrc)) {
      throw new DamagedQueueError(file, PAGE_HEADER_BYTES, 'page holds records but the queue has no checkpoint');
    }
    await unlink(file);
    actions.push(`deleted ${pageFileName(pageNum)} left by an interrupted queue creation`);
  }
  const headFh = await ops.createPage(dir, 1, 1);
  const file = join(dir, pageFileName(1));
  return {
    pages: [{ pageNum: 1, firstSeq: 1, file, sizeBytes: PAGE_HEADER_BYTES, count: 0 }],
    headFh,
    lastSeq: 0,
    firstUnackedSeq: 1,
    reader: { pageNum: 1, offsetBytes: PAGE_HEADER_BYTES, seq: 1 },
    unackedBytes: 0,
    unackedCount: 0,
    actions,
  };
}

/** Deletes the pages outside the checkpoint's live range (fully acked ones, an unfinished roll's), then fsyncs the directory if it changed. */
async function deletePagesOutside(dir: string, ck: Checkpoint, ckFile: string, pageNums: number[], ops: DiskOps, verifyCrc: VerifyCrc, actions: string[]): Promise<void> {
  let dirChanged = false;
  for (const pageNum of pageNums) {
    if (pageNum >= ck.firstUnackedPageNum && pageNum <= ck.headPageNum) continue;
    const file = join(dir, pageFileName(pageNum));
    if (pageNum > ck.headPageNum) {
      // Created by a roll whose checkpoint never became durable: writes into it had not started.
      const buf = await readFile(file);
      if (holdsRecords(buf, verifyCrc)) {
        throw new DamagedQueueError(file, PAGE_HEADER_BYTES, `page is past the checkpoint's head page ${ck.headPageNum} (${ckFile}) but holds records`);
      }
    }
    await unlink(file);
    dirChanged = true;
    actions.push(`deleted ${pageFileName(pageNum)} (${pageNum < ck.firstUnackedPageNum ? 'fully acked, purge was interrupted' : 'unfinished roll'})`);
  }
  if (dirChanged) await ops.fsyncDir(dir, 'fsync of directory after deleting leftover pages');
}

/** What the live pages hold: each page, the unacked records, and where reading resumes (undefined: at the head page's end). */
interface LivePages {
  pages: PageInfo[];
  unackedBytes: number;
  unackedCount: number;
  reader: ReadPosition | undefined;
}

/** Reads and validates every page of the checkpoint's live range, first unacked to head, against the checkpoint and each other. */
async function scanLivePages(dir: string, ck: Checkpoint, ckFile: string, ops: DiskOps, verifyCrc: VerifyCrc): Promise<LivePages> {
  const gaps = await readGaps(dir);
  const pages: PageInfo[] = [];
  let unackedBytes = 0;
  let unackedCount = 0;
  let reader: ReadPosition | undefined;
  let expectedSeq: number | undefined;
  for (let pageNum = ck.firstUnackedPageNum; pageNum <= ck.headPageNum; pageNum++) {
    const file = join(dir, pageFileName(pageNum));
    const isHead = pageNum === ck.headPageNum;
    let buf: Buffer;
    try {
      buf = await readFile(file);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') throw new DamagedQueueError(file, 0, `page is missing but checkpoint ${ckFile} references it`);
      throw err;
    }
    const header = decodePageHeader(buf);
    if (isError(header)) throw new DamagedQueueError(file, 0, `${header.error}, but checkpoint ${ckFile} references this page`);
    if (header.pageNum !== pageNum) throw new DamagedQueueError(file, 8, `header says page ${header.pageNum}`);
    if (expectedSeq !== undefined && header.firstSeq !== expectedSeq && !isGap(gaps, expectedSeq, header.firstSeq - 1)) {
      throw new DamagedQueueError(file, 12, `page starts at seq ${header.firstSeq}, previous page ends at seq ${expectedSeq - 1}`);
    }
    if (isHead && header.firstSeq !== ck.minSeq) {
      throw new DamagedQueueError(file, 12, `page starts at seq ${header.firstSeq}, checkpoint ${ckFile} says ${ck.minSeq}`);
    }
    const start = ops.pageRecordsStart(buf, header.firstSeq);
    const scan = scanRecords(buf, start.offsetBytes, start.seq, {
      verifyCrc,
      onRecord: (seq, data, offsetBytes) => {
        if (seq < ck.firstUnackedSeq) return;
        reader ??= ops.resumeReadingAt({ pageNum, offsetBytes, seq }, { pageNum, ...start });
        unackedBytes += recordBytes(data.length);
        unackedCount += 1;
      },
    });
    if (!isHead && scan.stop !== 'end') {
      throw new DamagedQueueError(file, scan.endOffset, `tail page was synced before the roll but seq ${scan.lastSeq + 1}: ${describeStop(scan.stop)}`);
    }
    if (isHead && scan.count < ck.elementCount) {
      throw new DamagedQueueError(
        file,
        scan.endOffset,
        `page holds ${scan.count} valid records but checkpoint ${ckFile} says ${ck.elementCount} were synced (seq ${scan.lastSeq + 1}: ${describeStop(scan.stop)})`,
      );
    }
    pages.push({ pageNum, firstSeq: header.firstSeq, file, sizeBytes: scan.endOffset, count: scan.count });
    expectedSeq = scan.lastSeq + 1;
  }
  return { pages, unackedBytes, unackedCount, reader };
}
