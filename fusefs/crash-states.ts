// Crash states of a recorded run (exhaustive mode): how one is named, and the caps on how many are
// enumerated. A state is "the power went after request afterOp", with the policy's choices spelled
// out, so it can be rebuilt exactly from the recording and replayed.

/**
 * Which unsynced writes (and truncates) a torn state keeps; they are numbered 1.. across files in
 * request order. Every outcome obeys torn's rule (fusefs/model/torn.ts): each 512-byte sector holds
 * its durable bytes plus a prefix, in time order, of the changes that touched it, and each file's
 * size is its durable size or its size after a prefix of its changes.
 */
export type DataOutcome =
  | { kind: 'all' }
  | { kind: 'none' }
  /**
   * Write k persists with the earlier writes of the sectors it touches (those sectors as just after
   * k); every other sector keeps its durable bytes; k's file takes its size as just after k.
   */
  | { kind: 'only'; write: number }
  /**
   * Write k is lost with the later writes of the sectors it touches (those sectors as just before
   * k); every other sector keeps all its writes; k's file takes its final size, or its size just
   * before k if k was its last change of size.
   */
  | { kind: 'except'; write: number }
  /**
   * Each write persists fully, partly (some 512-byte sectors) or not at all, drawn from the seed; a
   * sector that missed a write misses every later one.
   */
  | { kind: 'sectors'; seed: number };

/** The crash policies exhaustive mode enumerates states under. */
export type StatePolicy = 'lose-unsynced' | 'torn';

export interface CrashStateId {
  /** Requests 1..afterOp were applied; the power went before request afterOp + 1. */
  afterOp: number;
  policy: StatePolicy;
  /** torn: how many of the unsynced directory operations persisted (a prefix of their order). */
  dirPrefix?: number;
  /** torn: which unsynced writes persisted. */
  data?: DataOutcome;
}

export interface CrashStateInfo {
  id: CrashStateId;
  /** The persistence interval (0-based) the state belongs to. */
  interval: number;
  /** Hash of the durable image; equal hashes recover identically. */
  hash: string;
  /** torn: writes the state keeps only in part (some of their sectors). */
  partialWrites?: number;
}

/** Caps on the enumeration; every one is explicit, reported when hit, and settable. */
export interface StateCaps {
  /** States per recorded run, all policies together. */
  maxStates: number;
  /** torn: states per persistence interval. */
  maxStatesPerInterval: number;
  /** torn: seeded sector patterns per interval, besides the kept/dropped outcomes. */
  sectorPatterns: number;
}
export const DEFAULT_STATE_CAPS: StateCaps = { maxStates: 1_000, maxStatesPerInterval: 32, sectorPatterns: 3 };

export interface StatesAnswer {
  /** Persistence intervals in the recorded run (fsyncs, fdatasyncs and directory fsyncs that completed, plus one). */
  intervals: number;
  /** Intervals all of whose states are in `states` (no cap cut them short). */
  intervalsComplete: number;
  /** Distinct states, breadth first: every interval's lose-unsynced state, then the torn states of the intervals in rounds. */
  states: CrashStateInfo[];
  /** States the caps left out, and which caps were hit. */
  capped: { states: number; caps: string[] };
  /** Per policy, the intervals whose states under it the caps cut short (absent: none). */
  incomplete?: Partial<Record<StatePolicy, number[]>>;
}

/** A confirmation's place in the request trace: the driver's Nth output line was marked after afterOp requests. */
export interface Mark {
  n: number;
  afterOp: number;
}

/** What a torn state keeps of the unsynced writes, in words (trace pages say the same). */
function dataInWords(d: DataOutcome): string {
  switch (d.kind) {
    case 'all': return 'all unsynced writes kept';
    case 'none': return 'no unsynced write kept';
    case 'only': return `only unsynced write ${d.write} kept, with the earlier writes in its 512-byte sectors; its file at its size just after it`;
    case 'except': return `unsynced write ${d.write} lost, with the later writes in its 512-byte sectors; the rest kept; its file at its final size, or at its size before write ${d.write} if that was the file's last size change`;
    case 'sectors': return `sectors drawn from seed ${d.seed}`;
  }
}

/** "after request 17, torn: directory operations prefix 2, only unsynced write 4 kept, with ...", for messages and artifacts. */
export function describeState(id: CrashStateId): string {
  if (id.policy === 'lose-unsynced') return `after request ${id.afterOp}, lose-unsynced`;
  const data = id.data ? dataInWords(id.data) : '';
  return `after request ${id.afterOp}, torn: directory operations prefix ${id.dirPrefix ?? 0}, ${data}`;
}
