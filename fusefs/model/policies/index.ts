// The crash policies by name, one module each (policy.ts): the model, exhaustive mode's states and
// every message reach a policy through here.
import { CRASH_POLICIES, STATE_POLICIES, type CrashPolicy, type CrashStateId, type StatePolicy } from '../../crash-states.js';
import { journaled } from './journaled.js';
import { keepAll } from './keep-all.js';
import { loseUnsynced } from './lose-unsynced.js';
import type { CrashPolicyModule, StateEnumerator } from './policy.js';
import { torn } from './torn.js';

export type { CrashPolicyModule, StateEnumerator } from './policy.js';

/** The policy the random torn-writes suite cuts under alone (its suite kind 'torn'): it tears writes and nothing else. */
export const TORN_WRITES_POLICY: StatePolicy = 'torn';

const MODULES: Record<CrashPolicy, CrashPolicyModule> = { 'lose-unsynced': loseUnsynced, torn, journaled, 'keep-all': keepAll };
for (const name of CRASH_POLICIES) if (MODULES[name]?.name !== name) throw new Error(`invariant: crash policy '${name}' has no module of its name`);
for (const name of STATE_POLICIES) if (!MODULES[name].states) throw new Error(`invariant: crash policy '${name}' is listed with states but enumerates none`);

/** The module of `name`; the error lists the names. */
export function policyModule(name: CrashPolicy): CrashPolicyModule {
  const m = MODULES[name];
  if (!m) throw new Error(`unknown crash policy '${String(name)}'; the policies are ${CRASH_POLICIES.join(', ')}`);
  return m;
}

/**
 * Whether a cut under `policy` keeps none of the unsynced changes: its state is the durable image
 * alone, one per cut and named by it (the same cut in a fixed run is its counterpart).
 */
export function keepsNoUnsynced(policy: CrashPolicy): boolean {
  return policyModule(policy).keepsUnsynced === 'none';
}

/** Whether `policy` models a journaling filesystem (CrashPolicyModule.modelsJournalingFs). */
export function modelsJournalingFs(policy: CrashPolicy): boolean {
  return policyModule(policy).modelsJournalingFs;
}

export function stateEnumerator(name: StatePolicy): StateEnumerator {
  return policyModule(name).states!;
}

/** "after request 17, torn: directory operations prefix 2, ...", for messages and artifacts. */
export function describeState(id: CrashStateId): string {
  const m = policyModule(id.policy);
  if (id.nodes === undefined && id.outcomes === undefined) return m.describe(id);
  // A cluster's state: whose power went, and each cut node's own outcome.
  const whose = id.nodes === undefined ? 'every node\'s power' : `the power of node${id.nodes.length > 1 ? 's' : ''} ${id.nodes.join(', ')} (the others lost only their processes)`;
  const own = (id.outcomes ?? []).map((o) => `node ${o.node}: ${m.describe({ afterOp: id.afterOp, policy: id.policy, dirPrefix: o.dirPrefix, data: o.data }).replace(/^after request \d+, [a-z-]+: /, '')}`);
  return `after request ${id.afterOp}, ${id.policy}, ${whose}${own.length ? `; ${own.join('; ')}` : ''}`;
}
