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

/**
 * The crash policies, named here once (fusefs/model/policies/ holds one module each): those whose
 * states exhaustive mode enumerates, and keep-all, a clean shutdown (random cuts' baseline).
 */
export const STATE_POLICIES = ['lose-unsynced', 'torn', 'journaled'] as const;
export type StatePolicy = (typeof STATE_POLICIES)[number];
export const CRASH_POLICIES = [...STATE_POLICIES, 'keep-all'] as const;
/** The policies the suites and the gate use unless told otherwise (journaled is asked for, and used for a cause's reach). */
export const DEFAULT_STATE_POLICIES: readonly StatePolicy[] = ['lose-unsynced', 'torn'];
export type CrashPolicy = (typeof CRASH_POLICIES)[number];

export interface CrashStateId {
  /** Requests 1..afterOp were applied; the power went before request afterOp + 1. */
  afterOp: number;
  policy: StatePolicy;
  /** torn, journaled: how many of the unsynced directory operations persisted (a prefix of their order). */
  dirPrefix?: number;
  /** torn, journaled: which unsynced writes persisted. */
  data?: DataOutcome;
  /**
   * A cluster: the nodes whose power went (sorted); the others lost only their processes and keep
   * their live image (a process crash keeps the page cache). Absent: every node (a coordinated cut).
   */
  nodes?: number[];
  /**
   * A cluster's torn or journaled state: each cut node's own outcome (dirPrefix and data as above),
   * one per cut node in node order; dirPrefix and data themselves are then absent.
   */
  outcomes?: NodeOutcome[];
}

/** One cut node's outcome in a cluster's torn or journaled state. */
export interface NodeOutcome {
  node: number;
  dirPrefix: number;
  data: DataOutcome;
}

export interface CrashStateInfo {
  id: CrashStateId;
  /** The persistence interval (0-based) the state belongs to. */
  interval: number;
  /** Hash of the durable image (a cluster's: of every node's image, in node order); equal hashes recover identically. */
  hash: string;
  /** torn: writes the state keeps only in part (some of their sectors). */
  partialWrites?: number;
}

/**
 * A change a cut lost that a probe image makes durable anyway (the cause search asks "would the
 * recovery pass had this persisted?"): a file's unsynced changes (all, or its first `upTo`), a
 * directory's unsynced entry changes (all, or those of the operations with these change seqs), an
 * inode's unsynced attributes.
 */
export type ProbeUnit = (
  | { kind: 'file'; ino: number; upTo?: number }
  | { kind: 'dir'; ino: number; seqs?: number[] }
  | { kind: 'meta'; ino: number }
) & {
  /** A cluster's state: the cut node whose unit it is (a node not cut keeps its live image, so lost nothing). Absent on one disk. */
  node?: number;
};

/**
 * A change to the recorded run, to check a cause over the whole run: an fsync (of a file, or of a
 * directory for its entries) inserted right after request `afterOp`, as a request of its own (the
 * later requests and the markers after it move up by one); or the fsyncs of the requests in
 * `fsyncSkip` left out (they persist nothing: what they made durable stays unsynced).
 */
export interface Hypothesis {
  /**
   * The inode to fsync: by number, or by a path it has right after request afterOp. A cluster's
   * entry names the node whose program makes the call (required there, refused on one disk): its
   * fsync is a request of its own in the one numbering of every node, so every later request of
   * every node moves up by one, while only that node's disk gets the call.
   */
  fsyncAfter: (({ afterOp: number; ino: number } | { afterOp: number; path: string }) & { node?: number })[];
  /** Requests (in the run's one numbering) whose fsyncs are left out; on a cluster the request is one node's, so only its fsync is. */
  fsyncSkip?: number[];
}

/** One unsynced change inside a lost unit: its change seq, the request that made it, and what it was. */
export interface UnitChange {
  seq: number;
  op: number;
  /** write, truncate, `fallocate KIND` (fallocate.ts); or the directory operation (create, mkdir, rename, unlink, link, ...). */
  kind: string;
  /** A write's or fallocate's bytes [offset, offset + length); a truncate's size. */
  offset?: number;
  length?: number;
  /** A directory operation's entries in this directory: name -> what it named (null: removed). */
  entries?: { name: string; target: string | null }[];
}

/** What a crash state lost, unit by unit (a file, a directory, an inode's attributes), for the cause search. */
export interface LostUnit {
  kind: 'file' | 'dir' | 'meta';
  /** A cluster's state: the cut node that lost it. Absent on one disk. */
  node?: number;
  ino: number;
  /** Where it was at the cut (a live name; '/' for the root). */
  path: string;
  /** Its changes the state lost, in order (none for attributes). */
  changes: UnitChange[];
  /** A directory's unsynced changes the state kept (a torn or journaled prefix of the journal), in order. */
  kept?: UnitChange[];
  /** The fsyncs (or fdatasyncs) of it the run made after the cut, with the change seq each covered up to (a held fsync covers only what came before it arrived). */
  syncedLater: { op: number; covers: number }[];
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

