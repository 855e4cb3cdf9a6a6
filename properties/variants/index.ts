// Known-bad variants of the queue (DESIGN.md section 7), for the property suites to prove they catch them.
// Each is a DiskOps subclass overriding exactly one crash-ordering step; the queue itself has no switches.
import type { FileHandle } from 'node:fs/promises';
import { DiskOps, PageWriter, Queue } from '../../src/queue/index.js';
import type { PersistentQueue, QueueSettings } from '../../src/queue/index.js';

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

const variants: Record<string, { ops: () => DiskOps; settings: Partial<QueueSettings> }> = {
  // append-log: an atomic-file checkpoint's directory fsync would persist the new page's entry by accident.
  'no-dir-fsync-new-page': { ops: () => new NoDirFsyncNewPage(), settings: { pageCapacityBytes: 256, checkpointDesign: 'append-log' } },
  'checkpoint-before-page-sync': { ops: () => new CheckpointBeforePageSync(), settings: { checkpointWrites: 2 } },
  // Only a torn write-back (the truncation persisting without the new bytes) shows this one.
  'checkpoint-in-place': { ops: () => new CheckpointInPlace(), settings: { checkpointDesign: 'atomic-file', checkpointWrites: 2, checkpointAcks: 1 } },
  'page-header-not-synced': { ops: () => new PageHeaderNotSynced(), settings: { pageCapacityBytes: 256 } },
  'no-crc-on-recovery': { ops: () => new NoCrcOnRecovery(), settings: {} },
  'checkpoint-before-flush': { ops: () => new CheckpointBeforeFlush(), settings: { pageWriteDesign: 'buffered', checkpointWrites: 2 } },
  'roll-without-flush': { ops: () => new RollWithoutFlush(), settings: { pageWriteDesign: 'buffered', pageCapacityBytes: 256 } },
  'fsync-error-ignored': { ops: () => new FsyncErrorIgnored(), settings: {} },
};

export const VARIANT_NAMES: readonly string[] = Object.freeze(Object.keys(variants));

/** Per variant, the settings under which its bug is reachable (merge under the test's own settings). */
export const VARIANT_SETTINGS: Record<string, Partial<QueueSettings>> = Object.fromEntries(
  Object.entries(variants).map(([name, v]) => [name, v.settings]),
);

function variantOf(name: string) {
  const variant = variants[name];
  if (!variant) throw new Error(`unknown queue variant '${name}'; valid names: ${VARIANT_NAMES.join(', ')}`);
  return variant;
}

/** The variant's DiskOps (for tests that drive it directly). */
export function variantOps(name: string): DiskOps {
  return variantOf(name).ops();
}

/** Opens the queue with the named variant's disk strategy; settings default to VARIANT_SETTINGS[name]. */
export async function openQueueVariant(name: string, dir: string, settings: Partial<QueueSettings> = {}): Promise<PersistentQueue> {
  const variant = variantOf(name);
  return Queue.open(dir, { ...variant.settings, ...settings }, variant.ops());
}
