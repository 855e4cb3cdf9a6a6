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
  /**
   * The policy of a second cut during the recovery of one of its states: what a filesystem loses
   * twice is the same kind of thing (a journaling one journals its recovery's writes too).
   */
  readonly recoveryCutPolicy: StatePolicy;
}

export interface CrashPolicyModule {
  readonly name: CrashPolicy;
  /** One line: what a cut under it keeps. */
  readonly summary: string;
  /**
   * What a cut keeps of the unsynced changes: none (its state is the durable image alone, so one
   * state per cut, named by the cut: the same cut of another recording, a fixed run's, is its
   * counterpart), some (each state a choice among them), or all.
   */
  readonly keepsUnsynced: 'none' | 'some' | 'all';
  /**
   * It models a journaling filesystem in its default mode (ext4 data=ordered): the directory
   * operations before the last journal commit survive a cut. The kernel check holds ext4 to it, and
   * a cause's reach ("does it bite a journaling filesystem?") is judged on its states.
   */
  readonly modelsJournalingFs: boolean;
  /**
   * How exhaustive mode explains a random cut under it (the gate's random cuts, `powercut explain`):
   * by the one state of its cut, by every state of its persistence interval (a cut mid-interval keeps
   * fewer writes than the interval's end), or, absent, not at all.
   */
  readonly randomCutAsStates?: 'its-cut' | 'its-interval';
  /** A random power cut: settles `model` into one outcome the policy allows, drawn from `seed`. */
  cut(model: SettlingModel, seed: number): TornStats;
  /** Exhaustive mode's enumeration, for the policies with states (keep-all has one outcome: the live state). */
  readonly states?: StateEnumerator;
  /** A state of this policy, in words (messages, artifacts, reports). */
  describe(id: CrashStateId): string;
}
