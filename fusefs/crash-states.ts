// Crash states of a recorded run (exhaustive mode): how one is named, and the caps on how many are
// enumerated. A state is "the power went after request afterOp", with the policy's choices spelled
// out, so it can be rebuilt exactly from the recording and replayed.

/** Which unsynced writes (and truncates) a torn state keeps; they are numbered 1.. in request order. */
export type DataOutcome =
  | { kind: 'all' }
  | { kind: 'none' }
  | { kind: 'only'; write: number }
  | { kind: 'except'; write: number }
  /** Each write persists fully, partly (some 512-byte sectors) or not at all, drawn from the seed. */
  | { kind: 'sectors'; seed: number };

export interface CrashStateId {
  /** Requests 1..afterOp were applied; the power went before request afterOp + 1. */
  afterOp: number;
  policy: 'lose-unsynced' | 'torn';
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
export const DEFAULT_STATE_CAPS: StateCaps = { maxStates: 400, maxStatesPerInterval: 24, sectorPatterns: 2 };

export interface StatesAnswer {
  /** Persistence intervals in the recorded run (fsyncs, fdatasyncs and directory fsyncs that completed, plus one). */
  intervals: number;
  /** Intervals all of whose states are in `states` (no cap cut them short). */
  intervalsComplete: number;
  /** Distinct states, in request order. */
  states: CrashStateInfo[];
  /** States the caps left out, and which caps were hit. */
  capped: { states: number; caps: string[] };
}

/** A confirmation's place in the request trace: the driver's Nth output line was marked after afterOp requests. */
export interface Mark {
  n: number;
  afterOp: number;
}

/** "after request 17, torn: 2 of 3 directory operations, only write 4 kept", for messages and artifacts. */
export function describeState(id: CrashStateId): string {
  if (id.policy === 'lose-unsynced') return `after request ${id.afterOp}, lose-unsynced`;
  const d = id.data;
  const data = !d ? '' : d.kind === 'all' ? 'all unsynced writes kept' : d.kind === 'none' ? 'no unsynced write kept' : d.kind === 'only' ? `only unsynced write ${d.write} kept` : d.kind === 'except' ? `every unsynced write but ${d.write} kept` : `sectors drawn from seed ${d.seed}`;
  return `after request ${id.afterOp}, torn: directory operations prefix ${id.dirPrefix ?? 0}, ${data}`;
}
