// The leveldb target's known-bad variants: names, the bug each has, the settings under which it is
// reachable, and how its catch is proven (properties/variant-proofs.ts). The implementations are in variants.ts.
import type { KnownBadVariant } from '../../harness/target.js';

export const KNOWN_BAD: Readonly<Record<string, KnownBadVariant>> = Object.freeze({
  'claims-unsynced-durable': {
    summary: 'record batches written with sync: false are reported durable as soon as LevelDB accepts them',
    settings: { syncWrites: false },
    provenBy: ['exhaustive'],
    trips: ['at-least-once'],
    // Its claim comes before LevelDB's own fdatasync of the log; a torn tail of the log, LevelDB's recovery keeps.
    causes: [{ kind: 'early-confirmation', path: '/*.log' }, { kind: 'missing-fsync', path: '/*.log' }, { kind: 'torn-write', path: '/*.log' }],
  },
  // Found by the gate on the first run (docs/leveldb.md): LevelDB 1.20's own bug, google/leveldb#189.
  'trusts-leveldb-create': {
    summary: "relies on LevelDB 1.20 creating a database durably: its first MANIFEST is never fsynced, and a cut leaves CURRENT naming it empty (unopenable)",
    settings: {},
    provenBy: ['exhaustive'],
    trips: ['liveness'],
    causes: [{ kind: 'missing-fsync', path: '/MANIFEST-*' }],
  },
  // Found by the gate (docs/leveldb.md): LevelDB creates a new log file when a batch finds the memtable
  // full and fsyncs only the file, not the directory; needs log rolls (small memtable, large events).
  'trusts-leveldb-log-roll': {
    summary: 'takes a synced batch as durable although LevelDB wrote it to a log file whose directory entry was never fsynced',
    settings: { syncWrites: true, writeBufferSize: 65_536, minEventBytes: 16_384 },
    provenBy: ['exhaustive'],
    // It loses synced records (at-least-once) or synced acks (bounded-replay), whichever the run had.
    trips: ['at-least-once', 'bounded-replay'],
    // The batch is confirmed before the directory fsync (at LevelDB's next manifest write) that makes the new log's name durable.
    causes: [{ kind: 'early-confirmation', path: '/' }, { kind: 'missing-dir-fsync', path: '/*.log' }, { kind: 'torn-write', path: '/*.log' }],
  },
  // Found by the gate (docs/leveldb.md): a torn write-back keeps LevelDB's manifest record naming a
  // new table and loses the table's directory entry; needs memtable flushes.
  'no-repair': {
    summary: 'gives up when LevelDB will not open after a cut ("Corruption: missing files") instead of running RepairDB',
    settings: { syncWrites: false, writeBufferSize: 65_536 },
    provenBy: ['exhaustive'],
    trips: ['liveness'],
    causes: [{ kind: 'missing-dir-fsync', path: '/*.ldb' }],
  },
});
