// The built-in queue (src/queue/) as a target: the default one.
import fc from 'fast-check';
import type { TraceEntry } from '../../../fusefs/protocol.js';
import { ownNodeCommand } from '../../harness/dist-path.js';
import { hasConcurrentSteps, mapEventSizes, type Workload } from '../../harness/workload.js';
import { maxEventBytes } from '../../queue/format.js';
import { validateSettings } from '../../queue/settings.js';
import type { QueueSettings } from '../../queue/types.js';
import type { Target, TargetSettings } from '../../harness/target.js';
import { queueContract } from './contract.js';
import { KNOWN_BAD } from './known-bad.js';

/** Page capacities small enough that workloads roll pages and purge acked ones. */
export const PAGE_CAPACITIES_BYTES = [1_024, 4_096, 16_384, 65_536] as const;

const settingsArb: fc.Arbitrary<TargetSettings> = fc.record({
  checkpointDesign: fc.constantFrom('atomic-file' as const, 'append-log' as const),
  pageWriteDesign: fc.constantFrom('sync' as const, 'buffered' as const),
  pageCapacityBytes: fc.constantFrom(...PAGE_CAPACITIES_BYTES),
  // 1 (every write/ack) up to the default 1024 (never, in a short workload).
  checkpointWrites: fc.oneof(fc.integer({ min: 1, max: 6 }), fc.constant(1024)),
  checkpointAcks: fc.oneof(fc.integer({ min: 1, max: 6 }), fc.constant(1024)),
});

/** Shrinks every event to fit the settings' page capacity. */
function fitWorkload(workload: Workload, settings: TargetSettings): Workload {
  const cap = maxEventBytes((settings as Partial<QueueSettings>).pageCapacityBytes ?? PAGE_CAPACITIES_BYTES[PAGE_CAPACITIES_BYTES.length - 1]);
  return mapEventSizes(workload, (sizes) => sizes.map((n) => Math.min(n, cap)));
}

const PAGE = /^\/page\.\d+$/;

/** Rolls (a page file created after the first) and purges (a page file deleted). */
function workloadEvents(trace: readonly TraceEntry[]): Record<string, number> {
  const created = trace.filter((e) => e.kind === 'create' && PAGE.test(e.path) && e.result === 0).length;
  return { rolls: Math.max(0, created - 1), purges: trace.filter((e) => e.kind === 'unlink' && PAGE.test(e.path) && e.result === 0).length };
}

const designs = (['atomic-file', 'append-log'] as const).flatMap((checkpointDesign) =>
  (['sync', 'buffered'] as const).map((pageWriteDesign) => ({ name: `${checkpointDesign}/${pageWriteDesign}`, settings: { checkpointDesign, pageWriteDesign } })),
);

export const powercutQueue: Target = {
  name: 'powercut-queue',
  summary: "the built-in queue (Logstash's persisted-queue semantics, four designs)",
  get driver() {
    return ownNodeCommand('src/targets/powercut-queue/driver.js');
  },
  contract: queueContract,
  checkSettings: (settings) => void validateSettings(settings as Partial<QueueSettings>),
  settingsArb,
  suites: designs,
  fitWorkload,
  // Right after a page write (before its fsync) is where torn write-back damages; the rest where ordering bites.
  cutTargets: [{ kind: 'write', path: '/page.*' }, { kind: 'fsync' }, { kind: 'fsyncdir' }, { kind: 'rename' }],
  faultPaths: ['/page.*', '/checkpoint*', '/**'],
  knownBad: KNOWN_BAD,
  workloadEvents,
  // One writer appends the events of a write step in order, in one thread: only branches that run at
  // the same time race (their I/O completes in any order); a sequential workload records the same
  // requests every time (docs/gate.md, "Work budgets").
  interleaves: hasConcurrentSteps,
};
