// fast-check arbitraries for crash cases, for any target: workloads, crash points, policies,
// faults. Everything shrinks towards small: fewer steps, smaller events. Target settings come from
// the target itself (Target.settingsArb).
import fc from 'fast-check';
import { DEFAULT_STATE_POLICIES, STATE_POLICIES } from '../fusefs/crash-states.js';
import type { CrashPolicy, CrashTiming, Fault } from '../fusefs/protocol.js';
import { RECOVERY_CUT_MAX_OP } from '../src/harness/exhaustive/exhaustive-run.js';
import { PAYLOAD_HEADER_BYTES } from '../src/harness/payload.js';
import { ACK_ORDERS, type Step, type Workload } from '../src/harness/workload.js';
import type { CutTarget, Target } from '../src/harness/target.js';

export const eventSizeArb = fc.oneof(
  { weight: 3, arbitrary: fc.integer({ min: PAYLOAD_HEADER_BYTES, max: 200 }) },
  { weight: 3, arbitrary: fc.integer({ min: 201, max: 3_000 }) }, // spans 512-byte sectors: torn writes
  { weight: 1, arbitrary: fc.integer({ min: 3_001, max: 20_000 }) },
);

const writeArb = fc.record({ op: fc.constant('write' as const), sizesBytes: fc.array(eventSizeArb, { minLength: 1, maxLength: 4 }), waitDurable: fc.boolean() });
const readArb = fc.record({ op: fc.constant('read' as const), maxEvents: fc.integer({ min: 1, max: 8 }) });
const ackArb = fc.record({ op: fc.constant('ack' as const), count: fc.integer({ min: 1, max: 6 }), order: fc.constantFrom(...ACK_ORDERS) });

/**
 * Steps of producers and a consumer running at the same time. Producers mostly wait for each write
 * to be durable: a waiting writer yields to the event loop while its fsync is in flight, which is
 * when the other producer's records land (a writer that never waits finishes before any fsync does).
 */
const producerStepArb: fc.Arbitrary<Step> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ op: fc.constant('write' as const), sizesBytes: fc.array(eventSizeArb, { minLength: 1, maxLength: 2 }), waitDurable: fc.oneof({ weight: 3, arbitrary: fc.constant(true) }, { weight: 1, arbitrary: fc.constant(false) }) }) },
  { weight: 1, arbitrary: fc.constant({ op: 'waitDurable' as const }) },
);
const producerArb = fc.array(producerStepArb, { minLength: 1, maxLength: 5 });
const consumerStepArb: fc.Arbitrary<Step> = fc.oneof(
  { weight: 3, arbitrary: fc.record({ op: fc.constant('read' as const), maxEvents: fc.integer({ min: 1, max: 8 }), waitMs: fc.constantFrom(0, 20) }) },
  { weight: 3, arbitrary: ackArb },
  { weight: 1, arbitrary: fc.constant({ op: 'checkpoint' as const }) },
);
/** Producers (mostly two) and a consumer at the same time. */
export const concurrentStepArb: fc.Arbitrary<Step> = fc
  .record({
    producers: fc.oneof(
      { weight: 3, arbitrary: fc.tuple(producerArb, producerArb) },
      { weight: 1, arbitrary: fc.tuple(producerArb) },
      { weight: 1, arbitrary: fc.tuple(producerArb, producerArb, producerArb) },
    ),
    consumer: fc.array(consumerStepArb, { minLength: 1, maxLength: 5 }),
  })
  .map(({ producers, consumer }) => ({ op: 'concurrently' as const, branches: [...producers, consumer] }));

/** Steps without concurrency: one expected outcome (the driver's reference-model test uses these). */
export const sequentialStepArb: fc.Arbitrary<Step> = fc.oneof(
  { weight: 6, arbitrary: writeArb },
  { weight: 2, arbitrary: fc.constant({ op: 'waitDurable' as const }) },
  { weight: 3, arbitrary: readArb },
  { weight: 3, arbitrary: ackArb },
  { weight: 1, arbitrary: fc.constant({ op: 'checkpoint' as const }) },
  { weight: 1, arbitrary: fc.constant({ op: 'reopen' as const }) },
);

export const stepArb: fc.Arbitrary<Step> = fc.oneof(
  { weight: 8, arbitrary: sequentialStepArb },
  { weight: 1, arbitrary: concurrentStepArb },
);

/**
 * Exhaustive mode's steps: more concurrency (each recorded interleaving is checked at every crash
 * state, so it pays off), and shorter workloads (the states grow with the run).
 */
export const exhaustiveStepArb: fc.Arbitrary<Step> = fc.oneof(
  { weight: 3, arbitrary: sequentialStepArb },
  { weight: 1, arbitrary: concurrentStepArb },
);
export const EXHAUSTIVE_MAX_STEPS = 10;

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

/**
 * The policies of random cuts: `only`, else the default ones (lose-unsynced and torn), and keep-all
 * (a clean shutdown) as the baseline: it can only catch bugs that lose data without a cut.
 */
export function policiesArb(only?: readonly CrashPolicy[]): fc.Arbitrary<CrashPolicy> {
  const chosen = STATE_POLICIES.filter((p) => (only ?? DEFAULT_STATE_POLICIES).includes(p));
  return fc.oneof(
    ...chosen.map((p) => ({ weight: 2, arbitrary: fc.constant<CrashPolicy>(p) })),
    { weight: 1, arbitrary: fc.constant<CrashPolicy>('keep-all') },
  );
}
export const policyArb: fc.Arbitrary<CrashPolicy> = policiesArb();

export interface CutChoice {
  /** Where in an uncut run's requests (0..1); turned into a request number once the run is counted. */
  fraction: number;
  /** Count only requests of this kind / touching this path (e.g. page writes): denser cuts where damage happens. */
  target?: CutTarget;
  timing: CrashTiming;
  policy: CrashPolicy;
  seed: number;
}

/** Cut targets: any request (most often), or one of the target's own interesting requests. */
export function cutTargetArb(target: Target): fc.Arbitrary<CutTarget | undefined> {
  if (target.cutTargets.length === 0) return fc.constant(undefined);
  return fc.oneof(
    { weight: 4, arbitrary: fc.constant(undefined) },
    { weight: 5, arbitrary: fc.constantFrom(...target.cutTargets) },
  );
}

export function cutChoiceArb(policy: fc.Arbitrary<CrashPolicy>, target: fc.Arbitrary<CutTarget | undefined>): fc.Arbitrary<CutChoice> {
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
  cut: fc.record({ atOp: fc.noBias(fc.integer({ min: 1, max: RECOVERY_CUT_MAX_OP })), timing: fc.constantFrom<CrashTiming>('before', 'after') }),
  policy: policyArb,
  seed: fc.integer({ min: 1, max: 0x7fff_ffff }),
});

/**
 * A damaged disk for a recovery to read: a flipped bit or a read error at a byte of one of the
 * target's files (a byte past a file's end, or not yet on disk, is never hit: the coverage says
 * whether one was). Mostly near a file's start, where headers, indexes and first records are.
 */
export function readFaultArb(target: Target): fc.Arbitrary<Fault> {
  const path = fc.constantFrom(...target.faultPaths);
  const offset = fc.oneof({ weight: 1, arbitrary: fc.integer({ min: 0, max: 63 }) }, { weight: 2, arbitrary: fc.integer({ min: 0, max: 4_095 }) }, { weight: 1, arbitrary: fc.integer({ min: 0, max: 32_767 }) });
  return fc.oneof(
    fc.record({ type: fc.constant('bitflip' as const), path, offset, bit: fc.integer({ min: 0, max: 7 }) }),
    fc.record({ type: fc.constant('read-eio' as const), path, offset, length: fc.integer({ min: 1, max: 512 }) }),
  );
}

/** Faults for the fault runs: one failing fsync of one of the target's files, or a full disk. */
export function faultArb(target: Target): fc.Arbitrary<Fault> {
  return fc.oneof(
    fc.record({ type: fc.constant('fsync-eio' as const), path: fc.constantFrom(...target.faultPaths), count: fc.constant(1) }),
    // Mostly uniform, like crash points: anywhere in the run. One in four lands in the first bytes
    // (lock file, headers, first metadata), where a partial write once left a queue locked forever.
    fc.record({
      type: fc.constant('enospc' as const),
      afterBytes: fc.oneof(
        { weight: 3, arbitrary: fc.noBias(fc.integer({ min: 0, max: 40_000 })) },
        { weight: 1, arbitrary: fc.integer({ min: 0, max: 128 }) },
      ),
    }),
  );
}
