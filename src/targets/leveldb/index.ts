// LevelDB (through classic-level) as a target: a persistent queue of seq-keyed records, durable
// only through synced batches or memtable flushes (queue.ts), under the power cut.
import fc from 'fast-check';
import type { TraceEntry } from '../../../fusefs/protocol.js';
import { ownNodeCommand } from '../../harness/dist-path.js';
import { mapEventSizes, MAX_EVENT_BYTES, type Workload } from '../../harness/workload.js';
import type { Target, TargetSettings } from '../../harness/target.js';
import { KNOWN_BAD } from './known-bad.js';
import { LEVELDB_MIN_WRITE_BUFFER_BYTES, levelContract, levelSettings } from './settings.js';

/** Memtable sizes: LevelDB's minimum (a few large events roll the log), 256 KiB, and LevelDB's default 4 MiB (never rolls). */
export const WRITE_BUFFER_SIZES = [LEVELDB_MIN_WRITE_BUFFER_BYTES, 256 << 10, 4 << 20] as const;
/** Events raised to at least this many bytes by fitWorkload: 0 keeps the generated sizes. */
export const MIN_EVENT_SIZES = [0, 4_096, 16_384] as const;

const settingsArb: fc.Arbitrary<TargetSettings> = fc.record({
  writeBatchRecords: fc.oneof(fc.integer({ min: 1, max: 4 }), fc.constant(16)),
  syncWrites: fc.boolean(),
  syncAcks: fc.boolean(),
  ackSyncEvery: fc.integer({ min: 1, max: 6 }),
  writeBufferSize: fc.constantFrom(...WRITE_BUFFER_SIZES),
  maxFileSize: fc.constantFrom(64 << 10, 2 << 20),
  compactAckedEvery: fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 8 })),
  compression: fc.boolean(),
  minEventBytes: fc.constantFrom(...MIN_EVENT_SIZES),
});

/** Raises every event to the settings' minEventBytes, so short workloads fill memtables. */
function fitWorkload(workload: Workload, settings: TargetSettings): Workload {
  const min = Math.min(levelSettings(settings).minEventBytes, MAX_EVENT_BYTES);
  return mapEventSizes(workload, (sizes) => sizes.map((n) => Math.max(n, min)));
}

const LOG = /^\/\d+\.log$/;
const TABLE = /^\/\d+\.ldb$/;
const MANIFEST = /^\/MANIFEST-\d+$/;

/**
 * What LevelDB did in a run, from its requests: log files created after the first (rolls: a full or
 * flushed memtable), table files written (memtable flushes and compaction outputs), table files
 * deleted (inputs of a compaction), manifests created (one per open) and CURRENT replaced.
 */
export function levelWorkloadEvents(trace: readonly TraceEntry[]): Record<string, number> {
  const ok = (e: TraceEntry) => e.result === 0;
  const created = (re: RegExp) => trace.filter((e) => e.kind === 'create' && re.test(e.path) && ok(e)).length;
  return {
    'log rolls': Math.max(0, created(LOG) - 1),
    'tables written': created(TABLE),
    'tables compacted away': trace.filter((e) => e.kind === 'unlink' && TABLE.test(e.path) && ok(e)).length,
    'manifests': created(MANIFEST),
    'CURRENT replaced': trace.filter((e) => e.kind === 'rename' && e.path2 === '/CURRENT' && ok(e)).length,
  };
}

export const leveldb: Target = {
  name: 'leveldb',
  summary: 'a queue on LevelDB 1.20 (classic-level): seq-keyed records, durable through synced batches or memtable flushes',
  get driver() {
    return ownNodeCommand('src/targets/leveldb/driver.js');
  },
  contract: levelContract,
  checkSettings: (settings) => void levelSettings(settings),
  settingsArb,
  suites: [
    { name: 'synced', settings: { syncWrites: true, syncAcks: true } },
    { name: 'unsynced-acks', settings: { syncWrites: true, syncAcks: false } },
    { name: 'flushed-writes', settings: { syncWrites: false } },
    // Memtables of LevelDB's minimum size filled by a few events, the acked prefix compacted often:
    // log rolls, table files, compactions and manifest records in every run.
    { name: 'rolling', settings: { writeBufferSize: LEVELDB_MIN_WRITE_BUFFER_BYTES, minEventBytes: 16_384, compactAckedEvery: 2 } },
  ],
  fitWorkload,
  // Log appends and their fsyncs (where acknowledged batches become durable), new logs, manifests,
  // the CURRENT rename, table files, and every directory fsync (where new names become durable).
  cutTargets: [
    { kind: 'write', path: '/*.log' },
    { kind: 'fsync', path: '/*.log' },
    { kind: 'create', path: '/*.log' },
    { kind: 'write', path: '/MANIFEST-*' },
    { kind: 'rename', path: '/CURRENT' },
    { kind: 'fsync', path: '/*.ldb' },
    { kind: 'fsyncdir' },
  ],
  faultPaths: ['/*.log', '/MANIFEST-*', '/*.ldb', '/**'],
  knownBad: KNOWN_BAD,
  workloadEvents: levelWorkloadEvents,
  // LevelDB flushes and compacts in a thread of its own: every recording may interleave anew.
  interleaves: () => true,
};
