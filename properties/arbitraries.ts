// fast-check arbitraries for crash cases: workloads, queue settings, crash points and policies.
// Everything shrinks towards small: fewer steps, smaller events, the default-ish settings.
import fc from 'fast-check';
import { type CrashPolicy, type CrashTiming, type Fault } from '../fusefs/protocol.js';
import type { CutTarget } from '../src/harness/crash-run.js';
import type { QueueSettings } from '../src/queue/types.js';
import { PAYLOAD_HEADER_BYTES } from '../src/harness/payload.js';
import { ACK_ORDERS, maxEventBytes, type Step, type Workload } from '../src/harness/workload.js';

export const eventSizeArb = fc.oneof(
  { weight: 3, arbitrary: fc.integer({ min: PAYLOAD_HEADER_BYTES, max: 200 }) },
  { weight: 3, arbitrary: fc.integer({ min: 201, max: 3_000 }) }, // spans 512-byte sectors: torn writes
  { weight: 1, arbitrary: fc.integer({ min: 3_001, max: 20_000 }) },
);

export const stepArb: fc.Arbitrary<Step> = fc.oneof(
  { weight: 6, arbitrary: fc.record({ op: fc.constant('write' as const), sizesBytes: fc.array(eventSizeArb, { minLength: 1, maxLength: 4 }), waitDurable: fc.boolean() }) },
  { weight: 2, arbitrary: fc.constant({ op: 'waitDurable' as const }) },
  { weight: 3, arbitrary: fc.record({ op: fc.constant('read' as const), maxEvents: fc.integer({ min: 1, max: 8 }) }) },
  { weight: 3, arbitrary: fc.record({ op: fc.constant('ack' as const), count: fc.integer({ min: 1, max: 6 }), order: fc.constantFrom(...ACK_ORDERS) }) },
  { weight: 1, arbitrary: fc.constant({ op: 'checkpoint' as const }) },
  { weight: 1, arbitrary: fc.constant({ op: 'reopen' as const }) },
);

export function workloadArb(maxSteps = 16, step: fc.Arbitrary<Step> = stepArb): fc.Arbitrary<Workload> {
  return fc.array(step, { minLength: 1, maxLength: maxSteps }).map((steps) => ({ steps }));
}

/** Write-heavy steps with multi-sector events left unsynced: what a torn write-back damages. */
export const tornStepArb: fc.Arbitrary<Step> = fc.oneof(
  { weight: 6, arbitrary: fc.record({ op: fc.constant('write' as const), sizesBytes: fc.array(fc.integer({ min: 513, max: 8_000 }), { minLength: 1, maxLength: 3 }), waitDurable: fc.constant(false) }) },
  { weight: 1, arbitrary: fc.constant({ op: 'waitDurable' as const }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('read' as const), maxEvents: fc.integer({ min: 1, max: 4 }) }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('ack' as const), count: fc.integer({ min: 1, max: 4 }), order: fc.constantFrom(...ACK_ORDERS) }) },
);

/** Page capacities small enough that workloads roll pages and purge acked ones. */
export const PAGE_CAPACITIES_BYTES = [1_024, 4_096, 16_384, 65_536] as const;

export const settingsArb: fc.Arbitrary<Partial<QueueSettings>> = fc.record({
  checkpointDesign: fc.constantFrom('atomic-file' as const, 'append-log' as const),
  pageWriteDesign: fc.constantFrom('sync' as const, 'buffered' as const),
  pageCapacityBytes: fc.constantFrom(...PAGE_CAPACITIES_BYTES),
  // 1 (every write/ack) up to the default 1024 (never, in a short workload).
  checkpointWrites: fc.oneof(fc.integer({ min: 1, max: 6 }), fc.constant(1024)),
  checkpointAcks: fc.oneof(fc.integer({ min: 1, max: 6 }), fc.constant(1024)),
});

/** Shrinks every event to fit the settings' page capacity. */
export function fitWorkload(workload: Workload, settings: Partial<QueueSettings>): Workload {
  const cap = maxEventBytes(settings.pageCapacityBytes ?? PAGE_CAPACITIES_BYTES[PAGE_CAPACITIES_BYTES.length - 1]);
  return { steps: workload.steps.map((s) => (s.op === 'write' ? { ...s, sizesBytes: s.sizesBytes.map((n) => Math.min(n, cap)) } : s)) };
}

/** keep-all (a clean shutdown) is the baseline: it can only catch bugs that lose data without a cut. */
export const policyArb: fc.Arbitrary<CrashPolicy> = fc.oneof(
  { weight: 2, arbitrary: fc.constant<CrashPolicy>('lose-unsynced') },
  { weight: 2, arbitrary: fc.constant<CrashPolicy>('torn') },
  { weight: 1, arbitrary: fc.constant<CrashPolicy>('keep-all') },
);

export interface CutChoice {
  /** Where in an uncut run's requests (0..1); turned into a request number once the run is counted. */
  fraction: number;
  /** Count only requests of this kind / touching this path (e.g. page writes): denser cuts where damage happens. */
  target?: CutTarget;
  timing: CrashTiming;
  policy: CrashPolicy;
  seed: number;
}

/** Cut targets: any request (most often), or the Nth page write, fsync, directory fsync, rename. */
export const cutTargetArb: fc.Arbitrary<CutTarget | undefined> = fc.oneof(
  { weight: 4, arbitrary: fc.constant(undefined) },
  { weight: 2, arbitrary: fc.constant<CutTarget>({ kind: 'write', path: '/page.*' }) },
  { weight: 1, arbitrary: fc.constant<CutTarget>({ kind: 'fsync' }) },
  { weight: 1, arbitrary: fc.constant<CutTarget>({ kind: 'fsyncdir' }) },
  { weight: 1, arbitrary: fc.constant<CutTarget>({ kind: 'rename' }) },
);
/** Right after a page write, before its fsync: what torn write-back damages. */
export const PAGE_WRITE_TARGET: CutTarget = { kind: 'write', path: '/page.*' };

export function cutChoiceArb(policy: fc.Arbitrary<CrashPolicy> = policyArb, target: fc.Arbitrary<CutTarget | undefined> = cutTargetArb): fc.Arbitrary<CutChoice> {
  return fc
    .record({
      // Uniform over the run (fast-check's default bias would put most cuts at the first request).
      fraction: fc.noBias(fc.integer({ min: 0, max: 1_000_000 })).map((n) => n / 1_000_000),
      timing: fc.constantFrom<CrashTiming>('before', 'after'),
      policy,
      seed: fc.integer({ min: 1, max: 0x7fff_ffff }),
      target,
    })
    .map(({ target: t, ...rest }) => (t ? { ...rest, target: t } : rest));
}

/** A second cut during recovery: request numbers restart after a cut; a recovery drain makes 20 to 35 (about 60% of these cuts land). */
export const recoveryCutArb = fc.record({
  cut: fc.record({ atOp: fc.noBias(fc.integer({ min: 1, max: 30 })), timing: fc.constantFrom<CrashTiming>('before', 'after') }),
  policy: policyArb,
  seed: fc.integer({ min: 1, max: 0x7fff_ffff }),
});

/** Faults for the fault runs: one failing fsync of a queue file, or a full disk. */
export const faultArb: fc.Arbitrary<Fault> = fc.oneof(
  fc.record({ type: fc.constant('fsync-eio' as const), path: fc.constantFrom('/page.*', '/checkpoint*', '/**'), count: fc.constant(1) }),
  // Mostly uniform, like crash points: anywhere in the run. One in four lands in the first bytes
  // (lock file, page header, first checkpoint), where a partial write once left the queue locked forever.
  fc.record({
    type: fc.constant('enospc' as const),
    afterBytes: fc.oneof(
      { weight: 3, arbitrary: fc.noBias(fc.integer({ min: 0, max: 40_000 })) },
      { weight: 1, arbitrary: fc.integer({ min: 0, max: 128 }) },
    ),
  }),
);
