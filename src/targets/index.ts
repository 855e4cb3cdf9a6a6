// The targets powercut knows by name, and how a case names its target.
import type { Target, TargetRef, TargetSettings } from '../harness/target.js';
import { powercutQueue } from './powercut-queue/index.js';
import { leveldb } from './leveldb/index.js';
import { natsJetstream } from './nats-jetstream/index.js';
import { replicatedQueue } from './powercut-queue/replicated/index.js';
import { EXTERNAL_TARGET, externalTarget } from './external.js';

export const DEFAULT_TARGET = 'powercut-queue';

const TARGETS: Record<string, Target> = {
  [powercutQueue.name]: powercutQueue,
  [leveldb.name]: leveldb,
  [natsJetstream.name]: natsJetstream,
  // A cluster target (nodeCount 3): the gate runs it as cluster cases (src/gate/cluster-source.ts).
  [replicatedQueue.name]: replicatedQueue,
};

export const TARGET_NAMES: readonly string[] = Object.freeze(Object.keys(TARGETS));

/** The target called `name`; the error lists the valid names. */
export function findTarget(name: string = DEFAULT_TARGET): Target {
  const t = TARGETS[name];
  if (!t) throw new Error(`unknown target '${name}'; valid targets: ${TARGET_NAMES.join(', ')}`);
  return t;
}

/** The target a case or an option names; an external driver's settings space is just `settings`. */
export function resolveTarget(ref: TargetRef, settings: TargetSettings = {}): Target {
  if (ref.driver) return externalTarget(ref.driver, settings);
  if (ref.target === EXTERNAL_TARGET) throw new Error(`target '${EXTERNAL_TARGET}' needs a driver command (--driver 'CMD ARGS')`);
  return findTarget(ref.target);
}

/** The name artifacts and messages use for a case's target. */
export function targetName(ref: TargetRef): string {
  return ref.driver ? EXTERNAL_TARGET : (ref.target ?? DEFAULT_TARGET);
}

/** The known-bad variant `name` of `target`; the error lists the valid names. */
export function checkVariant(target: Target, name: string): void {
  if (!target.knownBad[name]) {
    const names = Object.keys(target.knownBad);
    throw new Error(`'${name}' is not a known variant of target ${target.name}; valid names: ${names.join(', ') || '(it has none)'}`);
  }
}

/** How many nodes `target` runs with these settings: 1 is a single disk, more a cluster (src/harness/cluster/). */
export function nodeCountOf(target: Target, settings: TargetSettings = {}): number {
  return target.nodeCount?.(settings) ?? 1;
}

/**
 * Throws, naming the target and what runs it instead, when `target` runs as a cluster with these
 * settings: `what` (single-disk machinery: one mount, one cause search) cannot run it.
 */
export function assertSingleDisk(target: Target, settings: TargetSettings, what: string): void {
  const nodes = nodeCountOf(target, settings);
  if (nodes > 1) {
    throw new Error(`${what} runs on one disk, but target ${target.name} runs as a cluster of ${nodes} nodes with these settings; ` +
      `a cluster runs through 'powercut gate --target ${target.name}' (docs/gate.md, "Cluster gates") and its artifacts through 'powercut replay'`);
  }
}
