// The suites the gate runs after the scenarios, for one target: in exhaustive mode (the default)
// every crash state of each generated workload, per part of the target's settings space, plus a
// second cut during recovery, and the fault suite (faults change the run, so they are cut at random);
// in random mode the random-cut suites.
import { DEFAULT_STATE_POLICIES, type StatePolicy } from '../../fusefs/crash-states.js';
import { keepsNoUnsynced, TORN_WRITES_POLICY } from '../../fusefs/model/policies/index.js';
import { CASES_JUDGED, cutsLandedUnder, FAULTS_FIRED, RECOVERY_CUTS_LANDED, shareOfLoseUnsynced, statesUnder, type FloorRequirement } from './floor.js';
import type { CrashInputOptions } from '../../properties/crash-property.js';
import type { Target, TargetRef } from '../harness/target.js';

export type GateMode = 'exhaustive' | 'random';
export const GATE_MODES: readonly GateMode[] = ['exhaustive', 'random'];
export const DEFAULT_GATE_MODE: GateMode = 'exhaustive';

export interface GateSuite {
  name: string;
  options: CrashInputOptions;
  /** Exhaustive suites whose every state's recovery is cut once more. */
  recoveryCuts?: boolean;
  /** Crash states judged per input at most: a sample spread over each input's listing (ExhaustiveOptions.sampleStates). */
  sampleStates?: number;
  /** What the suite must reach for the gate to pass (floor.ts). */
  floor: FloorRequirement[];
  /** Its share of judging's time under a time budget, as a weight (scheduler.ts TimeShares; default 1). */
  weight?: number;
}

/**
 * A suite that checks every crash state of its workloads (one part of the settings space) gets
 * twice the time of one that cuts at random, cuts recoveries or injects faults: its inputs are the
 * slow, thorough ones (docs/gate.md, "Turns").
 */
export const EXHAUSTIVE_PART_WEIGHT = 2;

/**
 * The cut-during-recovery suite judges a sample of at most this many states of each input, spread
 * over its run: each is recovered twice on the mount (a cut, then again), one to two seconds a state,
 * so a whole input takes minutes (409 states in 4:22 seen; every interval's lose-unsynced state is
 * listed whatever the caps); more workloads, each a sample, find more for the same work.
 */
export const RECOVERY_CUT_SAMPLE = 4;

/**
 * The suites, or with a variant the same suites on it (its settings override, so its bug is reachable).
 * `ref` is how the inputs name the target: a registered name, or an external driver.
 */
export function gateSuites(
  target: Target,
  mode: GateMode,
  variant?: string,
  forcedSettings: Record<string, unknown> = {},
  ref: TargetRef = { target: target.name },
  policies?: readonly StatePolicy[],
): GateSuite[] {
  const t = { ...(ref.driver ? { driver: ref.driver } : { target: target.name }), ...(policies ? { policies } : {}) };
  const parts = target.suites;
  const used: readonly StatePolicy[] = policies ?? DEFAULT_STATE_POLICIES;
  // The floor: every suite judges a case; crash states (exhaustive) or landed cuts (random) under
  // each policy used; a recovery cut landed where recoveries are cut; a fault fired where faults are injected.
  const floors = {
    // and a quarter of the lose-unsynced states listed where each is recovered once (the recovery-cut suite
    // recovers each twice, on the mount: a second a state, so it asks for a recovery cut landed).
    states: [CASES_JUDGED, ...used.map(statesUnder), ...(used.some(keepsNoUnsynced) ? [shareOfLoseUnsynced()] : [])],
    cuts: [CASES_JUDGED, ...used.map(cutsLandedUnder)],
    recovery: [CASES_JUDGED, RECOVERY_CUTS_LANDED],
    faults: [CASES_JUDGED, FAULTS_FIRED],
  };
  // Read faults need the mount during recovery, so they are cut at random in both modes.
  const readFaults: GateSuite[] = target.detectsDamage ? [{ name: 'read-faults', options: { ...t, kind: 'read-faults' }, floor: floors.faults }] : [];
  const base: GateSuite[] = mode === 'exhaustive'
    ? [
      ...parts.map((p) => ({ name: p.name, options: { ...t, kind: 'exhaustive' as const, settings: p.settings }, floor: floors.states, weight: EXHAUSTIVE_PART_WEIGHT })),
      { name: 'cut-during-recovery', options: { ...t, kind: 'exhaustive' as const }, recoveryCuts: true, sampleStates: RECOVERY_CUT_SAMPLE, floor: floors.recovery },
      { name: 'faults', options: { ...t, kind: 'faults' as const }, floor: floors.faults },
      ...readFaults,
    ]
    : [
      ...parts.map((p) => ({ name: p.name, options: { ...t, kind: 'general' as const, settings: p.settings }, floor: floors.cuts })),
      ...(used.includes(TORN_WRITES_POLICY) ? [{ name: 'torn-writes', options: { ...t, kind: 'torn' as const }, floor: [CASES_JUDGED, cutsLandedUnder(TORN_WRITES_POLICY)] }] : []),
      { name: 'cut-during-recovery', options: { ...t, kind: 'double-cut' as const }, floor: floors.recovery },
      { name: 'faults', options: { ...t, kind: 'faults' as const }, floor: floors.faults },
      ...readFaults,
    ];
  if (variant !== undefined && !target.knownBad[variant]) throw new Error(`invariant: no settings for variant '${variant}' of target ${target.name}`);
  const forced = { ...(variant !== undefined ? target.knownBad[variant].settings : {}), ...forcedSettings };
  return base.map((s) => ({ ...s, options: { ...s.options, ...(variant !== undefined ? { variant } : {}), settings: { ...s.options.settings, ...forced } } }));
}

/** The fast-check seed of one suite's round: distinct per suite and round, reproducible from the gate's seed. */
export function roundSeed(gateSeed: number, suiteIndex: number, round: number): number {
  return (Math.imul(gateSeed, 0x9e37_79b1) + suiteIndex * 7_919 + round * 104_729) | 0;
}
