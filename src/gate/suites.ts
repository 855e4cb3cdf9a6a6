// The property suites the gate runs after the scenarios: the crash property of properties/ over
// each checkpoint x page design, torn multi-sector writes, a second cut during recovery, and faults.
import type { CrashInputOptions } from '../../properties/crash-property.js';
import { VARIANT_SETTINGS } from '../../properties/variants/index.js';

export interface GateSuite {
  name: string;
  options: CrashInputOptions;
}

const BASE_SUITES: GateSuite[] = [
  { name: 'atomic-file/sync', options: { kind: 'general', settings: { checkpointDesign: 'atomic-file', pageWriteDesign: 'sync' } } },
  { name: 'atomic-file/buffered', options: { kind: 'general', settings: { checkpointDesign: 'atomic-file', pageWriteDesign: 'buffered' } } },
  { name: 'append-log/sync', options: { kind: 'general', settings: { checkpointDesign: 'append-log', pageWriteDesign: 'sync' } } },
  { name: 'append-log/buffered', options: { kind: 'general', settings: { checkpointDesign: 'append-log', pageWriteDesign: 'buffered' } } },
  { name: 'torn-writes', options: { kind: 'torn' } },
  { name: 'cut-during-recovery', options: { kind: 'double-cut' } },
  { name: 'faults', options: { kind: 'faults' } },
];

/** The suites, or with a variant the same suites on it (its settings override, so its bug is reachable). */
export function gateSuites(variant?: string): GateSuite[] {
  if (variant === undefined) return BASE_SUITES;
  const forced = VARIANT_SETTINGS[variant];
  if (!forced) throw new Error(`invariant: no settings for variant '${variant}'`);
  return BASE_SUITES.map((s) => ({ name: s.name, options: { ...s.options, variant, settings: { ...s.options.settings, ...forced } } }));
}

/** The fast-check seed of one suite's round: distinct per suite and round, reproducible from the gate's seed. */
export function roundSeed(gateSeed: number, suiteIndex: number, round: number): number {
  return (Math.imul(gateSeed, 0x9e37_79b1) + suiteIndex * 7_919 + round * 104_729) | 0;
}
