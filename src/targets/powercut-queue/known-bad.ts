// The built-in queue's known-bad variants: names, the bug each has and where it was seen, the
// settings under which it is reachable, what its bug needs to show and which suites prove it is
// caught (properties/variant-proofs.ts). The implementations are in variants.ts.
import type { KnownBadVariant } from '../../harness/target.js';

export const KNOWN_BAD: Readonly<Record<string, KnownBadVariant>> = Object.freeze({
  // append-log: an atomic-file checkpoint's directory fsync would persist the new page's entry by accident.
  'no-dir-fsync-new-page': { summary: 'a new page file is created and fsynced, its directory never (Logstash #7162)', settings: { pageCapacityBytes: 256, checkpointDesign: 'append-log' }, provenBy: ['exhaustive', 'random', 'scenario'], causes: [{ kind: 'missing-dir-fsync', path: '/page.*' }] },
  'checkpoint-before-page-sync': { summary: 'the checkpoint is written before the page data it covers is fsynced', settings: { checkpointWrites: 2 }, provenBy: ['exhaustive', 'random', 'scenario'], causes: [{ kind: 'missing-fsync', path: '/page.*' }, { kind: 'early-persistence', path: '/checkpoint.log' }] },
  // A torn write-back (the truncation persisting without the new bytes) shows it, and so does a lost
  // name of checkpoint.head: an fsync of the directory after its creation then exposes the 0-byte
  // file, so no step added to the recording cures it; the fix is the design (tmp file, rename).
  'checkpoint-in-place': { summary: 'checkpoint.head is rewritten in place, no tmp file (Logstash #8218, 0-byte checkpoint)', settings: { checkpointDesign: 'atomic-file', checkpointWrites: 2, checkpointAcks: 1 }, provenBy: ['exhaustive', 'random', 'scenario'], causes: [{ kind: 'missing-dir-fsync', path: '/checkpoint.head' }, { kind: 'torn-write', path: '/checkpoint.head' },
    // The rewrite's truncate fsynced before its new content: moving that fsync after the write's cures the cuts between them (a proven alternative fix).
    { kind: 'early-persistence', path: '/checkpoint.head' },
    // Proven alternatives that cure a few states each: the directory fsync that made the first page durable moved
    // after the first checkpoint's fsync (cut between them, page.1 survives and checkpoint.head's entry does not,
    // which recovery reads as damage), and an fsync between the rewrite's writes (two of its torn states).
    { kind: 'early-persistence', path: '/page.*' }, { kind: 'missing-fsync', path: '/checkpoint.head' }], fixInRecording: false },
  'page-header-not-synced': { summary: "a new page's header is never forced to disk (Logstash #12040)", settings: { pageCapacityBytes: 256 }, provenBy: ['exhaustive', 'random', 'scenario'], causes: [{ kind: 'missing-fsync', path: '/page.*' }] },
  'no-crc-on-recovery': { summary: 'recovery accepts records without checking their CRC (torn or zeroed tails)', settings: {}, needs: 'torn', provenBy: ['exhaustive', 'random', 'scenario'], causes: [{ kind: 'torn-write', path: '/page.*' }] },
  'checkpoint-before-flush': { summary: 'buffered mode checkpoints records still in memory (NATS #7018)', settings: { pageWriteDesign: 'buffered', checkpointWrites: 2 }, provenBy: ['exhaustive', 'random', 'scenario'], causes: [{ kind: 'missing-fsync', path: '/page.*' }, { kind: 'early-persistence', path: '/checkpoint.log' }, { kind: 'early-persistence', path: '/checkpoint.head.tmp' }, { kind: 'recovery-fails-on-legal-disk', path: '/page.*' }] },
  // Its records are confirmed before they are written at all, which the cause search sees as a page never fsynced,
  // confirmations before the checkpoint's fsync, the checkpoint made durable too early, or recovery failing outright;
  // no fsync added to the recording fixes all of that, only the order of the program's steps. Waiting for the
  // new page's directory fsync (/) before confirming cures the states cut before it (a proven alternative fix),
  // and the old page's late write, when it fails (ENOSPC), is never reported. Records never written by the end of
  // the run are lost by a process crash too: recovery then fails a disk holding every change (no file to name).
  'roll-without-flush': { summary: "buffered mode starts a new page without flushing the old one (NATS #7018, lmb)", settings: { pageWriteDesign: 'buffered', pageCapacityBytes: 256 }, provenBy: ['exhaustive', 'random', 'scenario'], causes: [{ kind: 'missing-fsync', path: '/page.*' }, { kind: 'early-confirmation', path: '/page.*' }, { kind: 'early-confirmation', path: '/checkpoint.log' }, { kind: 'early-confirmation', path: '/' }, { kind: 'early-persistence', path: '/checkpoint.log' }, { kind: 'early-persistence', path: '/checkpoint.head.tmp' }, { kind: 'recovery-fails-on-legal-disk', path: '/page.*' }, { kind: 'recovery-fails-on-legal-disk' }, { kind: 'swallowed-error', path: '/page.*' }], fixInRecording: false },
  'fsync-error-ignored': { summary: 'fsync EIO is retried and then reported durable (PostgreSQL fsyncgate)', settings: {}, needs: 'fault', provenBy: ['random', 'scenario'],
    // Every fsync of the queue is retried so: an EIO on a checkpoint file is swallowed the same way.
    causes: [{ kind: 'swallowed-error', path: '/page.*' }, { kind: 'swallowed-error', path: '/checkpoint.log' }, { kind: 'swallowed-error', path: '/checkpoint.log.tmp' }, { kind: 'swallowed-error', path: '/checkpoint.head.tmp' }] },
  // The bug a gate run found in this queue: a background checkpoint write hit ENOSPC and close() still resolved.
  'close-swallows-failure': { summary: 'close() resolves although a background write failed earlier', settings: { checkpointDesign: 'append-log', checkpointWrites: 2, checkpointAcks: 1 }, needs: 'fault', provenBy: ['scenario'], causes: [{ kind: 'swallowed-error', path: '/checkpoint.log' }] },
  // This project's own, each needing one exact crash state or interleaving (exhaustive mode's proof).
  'purge-before-checkpoint': { summary: 'acked pages are deleted, durably, before the checkpoint that stops referencing them', settings: { pageCapacityBytes: 1_024, checkpointAcks: 1 }, provenBy: ['exhaustive'], causes: [{ kind: 'early-persistence', path: '/page.*' }, { kind: 'recovery-fails-on-legal-disk', path: '/page.*' }] },
  'checkpoint-unlink-before-rename': { summary: 'checkpoint.head is removed before tmp is renamed over it (one torn prefix loses both)', settings: { checkpointDesign: 'atomic-file' }, provenBy: ['exhaustive'], causes: [{ kind: 'non-atomic-update', path: '/checkpoint.head' }] },
  'fsync-claims-late-writes': { summary: 'an fsync is taken to cover records written while it was in flight', settings: { pageWriteDesign: 'sync' }, provenBy: ['exhaustive'], causes: [{ kind: 'early-confirmation', path: '/page.*' }, { kind: 'missing-fsync', path: '/page.*' }] },
  // Caught only by the exact replay rule: with checkpointAcks 1 a per-run count allowed one replayed ack.
  // The same step in both checkpoint designs: the append log's fsync, or the atomic file's tmp fsync.
  'ack-returns-early': { summary: 'ack() resolves before the checkpoint recording the ack is durable', settings: { checkpointAcks: 1 }, provenBy: ['exhaustive', 'random'], causes: [{ kind: 'early-confirmation', path: '/checkpoint.log' }, { kind: 'early-confirmation', path: '/checkpoint.head.tmp' }, { kind: 'early-confirmation', path: '/' }] },
  // Caught only when an fsync is slow: the held fsync replies of exhaustive mode, or a random cut's grace period.
  // Two bugs in one queue: a gate that lists every distinct failure must show both.
  // (Two bugs that do not hide each other: each crash state shows at most one of them.)
  // The early ack withheld until the next fsync of a page (the buffered designs flush the page before
  // the checkpoint) is a proven fix too, for the states cut before that fsync: seen once on a fast
  // machine (6 of 11 failing states of an atomic-file/buffered run cured, none broken), the
  // checkpoint's fix not found within the search's bound.
  'purge-and-ack-early': { summary: 'purge-before-checkpoint and ack-returns-early at once (two distinct failures)', settings: { pageCapacityBytes: 1_024, checkpointAcks: 1 }, provenBy: ['exhaustive', 'random'], causes: [{ kind: 'early-confirmation', path: '/checkpoint.log' }, { kind: 'early-confirmation', path: '/checkpoint.head.tmp' }, { kind: 'early-confirmation', path: '/' }, { kind: 'early-confirmation', path: '/page.*' }, { kind: 'early-persistence', path: '/page.*' }, { kind: 'recovery-fails-on-legal-disk', path: '/page.*' }] },
  // Proven by exhaustive mode alone, through the recorded slow-fsync schedule: random cuts catch it only
  // when a page fsync happens to outlast the wait, so which input catches it moves with the machine's load.
  'sync-wait-gives-up': { summary: 'a page fsync is waited for a moment, then its records are reported durable anyway', settings: { pageWriteDesign: 'sync' }, provenBy: ['exhaustive'], causes: [{ kind: 'early-confirmation', path: '/page.*' }, { kind: 'missing-fsync', path: '/page.*' },
    // Under load an unheld page fsync gives up too (a roll's seal among them), and the durable line can
    // then run ahead of the roll's checkpoint: seen once, on a loaded machine, named on /checkpoint.log.
    { kind: 'early-confirmation', path: '/checkpoint.log' }] },
  // A bug of recovery alone: only a second cut, during the recovery that upgrades the checkpoint design, shows it.
  'upgrade-log-not-synced': { summary: 'the checkpoint upgrade (atomic-file to append-log, done by recovery) renames its new log into place without fsyncing it', settings: { checkpointDesign: 'atomic-file' }, provenBy: ['scenario'], trips: ['liveness'], causes: [{ kind: 'missing-fsync', path: '/checkpoint.log' }] },
  // Logic errors: every change the program made is on the disk, and recovery misreads it. No persistence
  // step is missing, so no fsync or confirmation cause may be named for them.
  'recovery-skips-first-record': { summary: 'recovery starts reading each page after its first record', settings: {}, provenBy: ['exhaustive'], causes: [{ kind: 'recovery-fails-on-legal-disk' }] },
  'drain-from-page-start': { summary: "after recovery, reading resumes at the start of the first unacked record's page, delivering its acked records again", settings: { checkpointAcks: 1 }, provenBy: ['exhaustive'], trips: ['bounded-replay'], causes: [{ kind: 'recovery-fails-on-legal-disk' }] },
});

export const VARIANT_NAMES: readonly string[] = Object.freeze(Object.keys(KNOWN_BAD));
