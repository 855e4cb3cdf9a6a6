// Known-bad variants of the built-in queue, for the suites to prove they catch them (docs/design.md,
// "Known-bad variants"). Each overrides exactly one crash-ordering step, mostly as a DiskOps
// subclass; the queue itself has no switches. Only the driver loads this module, and only when asked.
import { renameSync, rmSync } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { dirname } from 'node:path';
import { DiskOps, PageWriter, Queue } from '../../queue/index.js';
import type { PersistentQueue, QueueSettings } from '../../queue/index.js';
import { scanRecords } from '../../queue/format.js';
import type { ReadPosition } from '../../queue/ops.js';
import { KNOWN_BAD, VARIANT_NAMES } from './known-bad.js';

/** Logstash #7162: the new page is created and fsynced, the directory never is. */
class NoDirFsyncNewPage extends DiskOps {
  protected override async syncDirAfterCreate(): Promise<void> {}
}

/** Ordering class: the checkpoint claims records that were written but not yet fsynced. */
class CheckpointBeforePageSync extends DiskOps {
  override async prepareCheckpoint(head: PageWriter): Promise<number> {
    await head.flush();
    return head.flushedCount;
  }
}

/** Logstash #8218: checkpoint.head truncated and rewritten in place (no tmp file, no rename). */
class CheckpointInPlace extends DiskOps {
  override async writeCheckpointFile(file: string, bytes: Buffer): Promise<void> {
    await this.writeFileSynced(file, bytes, 'checkpoint (in place)');
  }
}

/** Logstash #12040: the new page's header is written but never forced to disk before it is used. */
class PageHeaderNotSynced extends DiskOps {
  protected override async syncNewPageHeader(): Promise<void> {}
}

/** Recovery (and reading) trusts records without checking their CRC. */
class NoCrcOnRecovery extends DiskOps {
  override recordChecksumValid(): boolean {
    return true;
  }
}

/** NATS #7018: a buffered checkpoint claims records still sitting in the write buffer. */
class CheckpointBeforeFlush extends DiskOps {
  override async prepareCheckpoint(head: PageWriter): Promise<number> {
    await head.sync();
    return head.appendedCount;
  }
}

/** NATS #7018 (lmb): a new page starts while the old one's buffer is unflushed; it reaches the file later, never fsynced. */
class RollWithoutFlush extends DiskOps {
  override async sealPageBeforeRoll(): Promise<void> {}
}

/** PostgreSQL fsyncgate: fsync EIO is retried, the retry "succeeds", the data is reported durable. */
class FsyncErrorIgnored extends DiskOps {
  override async fsync(fh: FileHandle, file: string, operation: string): Promise<void> {
    try {
      await super.fsync(fh, file, operation);
    } catch {
      await super.fsync(fh, file, `${operation} (retry)`).catch(() => undefined);
    }
  }
}

// The three below (and the last two) are this project's own: each breaks a step whose failure needs one exact crash
// state or interleaving, so a few random cuts rarely find it and exhaustive mode always does.

/** Acked pages deleted (and the deletion made durable) before the checkpoint that stops referencing them: one interval of the run shows it. */
class PurgeBeforeCheckpoint extends DiskOps {
  override async checkpointThenPurge(writeCheckpoint: () => Promise<void>, purge: () => Promise<number>, dir: string): Promise<void> {
    if ((await purge()) > 0) await this.fsyncDir(dir, 'fsync of directory after deleting acked pages');
    await writeCheckpoint();
  }
}

/** checkpoint.head removed before tmp is renamed over it (code written for rename that cannot replace): one torn prefix shows it. */
class CheckpointUnlinkBeforeRename extends DiskOps {
  override async writeCheckpointFile(file: string, bytes: Buffer): Promise<void> {
    const tmp = `${file}.tmp`;
    await this.writeFileSynced(tmp, bytes, 'temporary file');
    this.stepSync(file, 'remove old checkpoint', () => rmSync(file, { force: true }));
    this.stepSync(file, 'rename temporary file over', () => renameSync(tmp, file));
    await this.fsyncDir(dirname(file), 'fsync of directory after rename');
  }
}

/** An fsync reported to cover what was flushed when it completed, not when it was issued: only records landing while it is in flight are hit. */
class FsyncClaimsLateWrites extends DiskOps {
  override recordsCoveredBySync(_flushedAtIssue: number, page: PageWriter): number {
    return page.flushedCount;
  }
}

/**
 * A latency optimisation gone wrong: a page fsync is waited for at most SYNC_WAIT_GIVE_UP_MS, then
 * its records are reported durable anyway. A FUSE fsync usually answers well within that, so the
 * lie shows only when an fsync is slow: the schedule's held fsync replies (or a random cut's grace
 * period) make it slow on purpose.
 */
class SyncWaitGivesUp extends DiskOps {
  override async fsync(fh: FileHandle, file: string, operation: string): Promise<void> {
    if (operation !== 'fsync of page') return super.fsync(fh, file, operation);
    const synced = super.fsync(fh, file, operation);
    synced.catch(() => undefined);
    await Promise.race([synced, new Promise((resolve) => setTimeout(resolve, SYNC_WAIT_GIVE_UP_MS))]);
  }
}
export const SYNC_WAIT_GIVE_UP_MS = 1;

/** The checkpoint upgrade renames its new log into place without fsyncing it: only a cut during that recovery shows it. */
class UpgradeLogNotSynced extends DiskOps {
  override async writeUpgradedCheckpointLog(file: string, bytes: Buffer): Promise<void> {
    const tmp = `${file}.tmp`;
    const fh = await this.openFile(tmp, 'w', 'open temporary file');
    try {
      this.writeSync(fh, tmp, bytes, 0);
    } finally {
      await fh.close().catch(() => undefined);
    }
    this.stepSync(file, 'rename temporary file over', () => renameSync(tmp, file));
    await this.fsyncDir(dirname(file), 'fsync of directory after rename');
  }
}

// The two below are logic errors, not a persistence step: the disk holds what it must, and recovery misreads it.

/** Recovery reads each page from its second record: the first record after the header is skipped. */
class RecoverySkipsFirstRecord extends DiskOps {
  override pageRecordsStart(page: Buffer, firstSeq: number): { offsetBytes: number; seq: number } {
    const start = super.pageRecordsStart(page, firstSeq);
    const first = scanRecords(page, start.offsetBytes, start.seq, { verifyCrc: (r) => this.recordChecksumValid(r), maxCount: 1 });
    return first.count === 1 ? { offsetBytes: first.endOffset, seq: start.seq + 1 } : start;
  }
}

/** After recovery, reading resumes at the start of the first unacked record's page: the acked records before it are delivered again. */
class DrainFromPageStart extends DiskOps {
  override resumeReadingAt(_firstUnacked: ReadPosition, pageStart: ReadPosition): ReadPosition {
    return pageStart;
  }
}

/** ack() resolves as soon as the acks are recorded in memory, without waiting for the checkpoint it asked for. */
async function openAckReturnsEarly(dir: string, settings: Partial<QueueSettings>, ops: DiskOps): Promise<PersistentQueue> {
  const queue = await Queue.open(dir, settings, ops);
  const ack = queue.ack.bind(queue);
  queue.ack = (seqs) => {
    // Its failure still stops the queue (every later call rejects); only this caller is not told.
    ack(seqs).catch(() => undefined);
    return Promise.resolve();
  };
  return queue;
}

/** PostgreSQL fsyncgate's cousin: a background write fails, and close() still resolves, so the program is never told. */
async function openCloseSwallowsFailure(dir: string, settings: Partial<QueueSettings>, ops: DiskOps): Promise<PersistentQueue> {
  const queue = await Queue.open(dir, settings, ops);
  const close = queue.close.bind(queue);
  queue.close = () => close().catch(() => undefined);
  return queue;
}

/** A variant is a DiskOps of its own, or a wrapper opened over the given (correct) DiskOps. */
const implementations: Record<string, { ops?: () => DiskOps; open?: (dir: string, settings: Partial<QueueSettings>, ops: DiskOps) => Promise<PersistentQueue> }> = {
  'no-dir-fsync-new-page': { ops: () => new NoDirFsyncNewPage() },
  'checkpoint-before-page-sync': { ops: () => new CheckpointBeforePageSync() },
  'checkpoint-in-place': { ops: () => new CheckpointInPlace() },
  'page-header-not-synced': { ops: () => new PageHeaderNotSynced() },
  'no-crc-on-recovery': { ops: () => new NoCrcOnRecovery() },
  'checkpoint-before-flush': { ops: () => new CheckpointBeforeFlush() },
  'roll-without-flush': { ops: () => new RollWithoutFlush() },
  'fsync-error-ignored': { ops: () => new FsyncErrorIgnored() },
  'close-swallows-failure': { open: openCloseSwallowsFailure },
  'purge-before-checkpoint': { ops: () => new PurgeBeforeCheckpoint() },
  'checkpoint-unlink-before-rename': { ops: () => new CheckpointUnlinkBeforeRename() },
  'fsync-claims-late-writes': { ops: () => new FsyncClaimsLateWrites() },
  'ack-returns-early': { open: openAckReturnsEarly },
  'sync-wait-gives-up': { ops: () => new SyncWaitGivesUp() },
  'purge-and-ack-early': { open: (dir, settings) => openAckReturnsEarly(dir, settings, new PurgeBeforeCheckpoint()) },
  'recovery-skips-first-record': { ops: () => new RecoverySkipsFirstRecord() },
  'drain-from-page-start': { ops: () => new DrainFromPageStart() },
  'upgrade-log-not-synced': { ops: () => new UpgradeLogNotSynced() },
};

for (const name of VARIANT_NAMES) if (!implementations[name]) throw new Error(`invariant: known-bad variant '${name}' has no implementation`);

function variantOf(name: string) {
  const variant = implementations[name];
  if (!variant) throw new Error(`unknown queue variant '${name}'; valid names: ${VARIANT_NAMES.join(', ')}`);
  return variant;
}

/** The variant's DiskOps (for tests that drive it directly); undefined for a variant that is not a disk step. */
export function variantOps(name: string): DiskOps | undefined {
  return variantOf(name).ops?.();
}

/**
 * Opens the queue with the named variant; settings default to the variant's own (KNOWN_BAD[name].settings).
 * `ops` is the disk layer a wrapper variant runs on (tests pass a spy); a DiskOps variant uses its own.
 */
export async function openQueueVariant(name: string, dir: string, settings: Partial<QueueSettings> = {}, ops: DiskOps = new DiskOps()): Promise<PersistentQueue> {
  const variant = variantOf(name);
  const merged = { ...(KNOWN_BAD[name].settings as Partial<QueueSettings>), ...settings };
  return variant.open ? variant.open(dir, merged, ops) : Queue.open(dir, merged, variant.ops!());
}
