// One crash policy: what a power cut leaves of the unsynced changes, as one module behind this
// interface (fusefs/model/policies/index.ts names them). A policy reads what a cut could keep
// (unsynced) and settles the model (settle); it sees the model through SettlingModel alone.
import type { CrashStateId, StateCaps, StatePolicy, CrashPolicy } from '../../crash-states.js';
import type { GrowBuffer } from '../grow-buffer.js';
import type { Unsynced } from '../nodes.js';
import type { TornStats } from '../torn.js';

/** What a policy sees of the crash model (FsModel): what a cut could keep, and how to settle the cut. */
export interface SettlingModel {
  unsynced(): Unsynced;
  /** Keeps the first `dirPrefix` unsynced entry changes, these files' durable contents and these inodes' attributes; forgets the rest. */
  settle(dirPrefix: number, durables: ReadonlyMap<number, GrowBuffer>, keepAttributes: ReadonlySet<number> | 'all'): void;
}

/** Exhaustive mode's view of a policy: the distinct states of one persistence interval's end. */
export interface StateEnumerator {
  /** The policy's name, as a state id carries it. */
  readonly policy: StatePolicy;
  /** maxStatesPerInterval bounds its candidates (lose-unsynced has one state per interval, never capped). */
  readonly capped: boolean;
  /** How many candidate states an interval end offers, `u` being what its cut could keep. */
  count(u: Unsynced, caps: StateCaps): number;
  /** Its first `n` candidates, most telling first (n <= count). `interval` seeds the sector patterns. */
  candidates(u: Unsynced, afterOp: number, interval: number, caps: StateCaps, n: number): CrashStateId[];
  /** Settles `model` (replayed to id.afterOp, a copy the caller owns) into the state `id` names. */
  settle(model: SettlingModel, id: CrashStateId): TornStats;
}

export interface CrashPolicyModule {
  readonly name: CrashPolicy;
  /** One line: what a cut under it keeps. */
  readonly summary: string;
  /** A random power cut: settles `model` into one outcome the policy allows, drawn from `seed`. */
  cut(model: SettlingModel, seed: number): TornStats;
  /** Exhaustive mode's enumeration, for the policies with states (keep-all has one outcome: the live state). */
  readonly states?: StateEnumerator;
  /** A state of this policy, in words (messages, artifacts, reports). */
  describe(id: CrashStateId): string;
}
