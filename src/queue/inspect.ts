// `powercut queue inspect DIR`: a read-only description of a queue directory (takes no lock).
import { readFile, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { PAGE_HEADER_BYTES, decodeCheckpoint, decodePageHeader, isError, pageFileName, recordCrcValid, scanRecords, type Checkpoint } from './format.js';
import { CHECKPOINT_HEAD_FILE, CHECKPOINT_LOG_FILE, lastValidLogRecord } from './checkpoints.js';
import { LOCK_FILE } from './lock.js';
import { listPages, describeStop } from './recovery.js';
import { GAPS_FILE } from './gaps.js';

export interface PageReport {
  file: string;
  sizeBytes: number;
  header: { pageNum: number; firstSeq: number } | { error: string };
  records: number;
  seqs: string;
  validBytes: number;
  /** Why the scan stopped before the end of the file, if it did. */
  tail?: string;
}

export interface QueueReport {
  dir: string;
  files: string[];
  lockHolderPid?: number;
  checkpointDesign?: 'atomic-file' | 'append-log';
  checkpoint?: Checkpoint | { error: string };
  gaps?: string;
  pages: PageReport[];
}

export async function inspectQueue(dir: string): Promise<QueueReport> {
  const files = (await readdir(dir)).sort();
  const report: QueueReport = { dir, files, pages: [] };
  const lock = await readFile(join(dir, LOCK_FILE), 'utf8').catch(() => undefined);
  if (lock !== undefined) report.lockHolderPid = Number.parseInt(lock, 10);
  if (files.includes(CHECKPOINT_LOG_FILE)) {
    report.checkpointDesign = 'append-log';
    const found = lastValidLogRecord(await readFile(join(dir, CHECKPOINT_LOG_FILE)));
    report.checkpoint = found ? found.checkpoint : { error: 'no valid checkpoint record' };
  } else if (files.includes(CHECKPOINT_HEAD_FILE)) {
    report.checkpointDesign = 'atomic-file';
    report.checkpoint = decodeCheckpoint(await readFile(join(dir, CHECKPOINT_HEAD_FILE)));
  }
  if (files.includes(GAPS_FILE)) report.gaps = await readFile(join(dir, GAPS_FILE), 'utf8');
  for (const pageNum of await listPages(dir)) {
    const file = pageFileName(pageNum);
    const buf = await readFile(join(dir, file));
    const header = decodePageHeader(buf);
    const page: PageReport = { file, sizeBytes: buf.length, header, records: 0, seqs: '-', validBytes: 0 };
    if (!isError(header)) {
      const scan = scanRecords(buf, PAGE_HEADER_BYTES, header.firstSeq, { verifyCrc: recordCrcValid });
      Object.assign(page, { records: scan.count, validBytes: scan.endOffset, seqs: scan.count ? `${header.firstSeq}..${scan.lastSeq}` : '-' });
      if (scan.stop !== 'end') page.tail = `${describeStop(scan.stop)} at offset ${scan.endOffset}`;
    }
    report.pages.push(page);
  }
  return report;
}
