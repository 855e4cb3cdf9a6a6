// Control protocol between the harness and the fs daemon: one JSON object per line each way
// over a Unix socket (mode 0600). Every request gets exactly one answer:
// {"ok":true, ...} or {"ok":false,"error":"..."}. Types here are the contract; the daemon
// validates every field of every request (malformed input gets an error answer, never a crash).

import type { CrashPolicy, CrashStateId, Hypothesis, ProbeUnit, StatePolicy, StateCaps } from './crash-states.js';
import type { FsyncHoldSchedule } from './fsync-holds.js';

/**
 * The reserved directory at the mount's root where drivers stat their confirmation markers: the
 * daemon records a lookup under it in the trace, answers it, and never stores anything there.
 */
export const MARK_DIR_NAME = '.powercut';

/** Mutating request kinds, numbered from 1 since mount (or since `reset`). */
export const MUTATING_KINDS = [
  'write', 'truncate', 'fallocate', 'create', 'mkdir', 'mknod', 'symlink', 'link', 'unlink', 'rmdir',
  'rename', 'setattr', 'fsync', 'fsyncdir',
] as const;
export type MutatingKind = (typeof MUTATING_KINDS)[number];

export { CRASH_POLICIES as POLICIES, type CrashPolicy } from './crash-states.js';

export type CrashTiming = 'before' | 'after';

/**
 * Crash point: the Nth mutating request overall, or the Nth of `kind`, or the Nth touching `path`
 * (glob), or the Nth of a cluster's `node`, or several filters. Reaching it freezes every node.
 */
export interface CrashPoint {
  atOp: number;
  kind?: MutatingKind;
  path?: string;
  node?: number;
  timing: CrashTiming;
}

/** One mutating request as the daemon saw and answered it. */
export interface TraceEntry {
  op: number; // 1-based, since mount or reset
  kind: MutatingKind;
  path: string;
  path2?: string; // rename/link target, symlink target
  offset?: number;
  length?: number; // bytes for write and fallocate, new size for truncate
  datasync?: boolean;
  mode?: number; // permission bits for create, mkdir, mknod and setattr; fallocate's mode flags
  /** The node whose mount got it (0-based), when the daemon serves a cluster; absent for one node. */
  node?: number;
  /** 0 or a negative errno; absent while the request is held at a crash point. */
  result?: number;
  /** 'applied' normally; 'held' for the crash-point request and the ones held after it. */
  state: 'applied' | 'held';
}

export type Fault =
  | { type: 'fsync-eio'; path: string; count?: number } // glob; count = how many fsyncs fail (default: all)
  | { type: 'enospc'; afterBytes: number } // writes fail with ENOSPC once this many more bytes were written
  | { type: 'read-eio'; path: string; offset: number; length: number }
  | { type: 'bitflip'; path: string; offset: number; bit?: number };

export type ControlRequest =
  | { cmd: 'status' }
  | ({ cmd: 'arm' } & CrashPoint)
  | { cmd: 'disarm' }
  /**
   * Thaws a freeze without a power cut: every node's held requests run on in order (a node's
   * pause: the harness stopped its processes at the freeze); `arm`, if given, is armed at once, before
   * any later request is counted.
   */
  | { cmd: 'release'; arm?: CrashPoint }
  | { cmd: 'wait-frozen'; timeoutMs: number }
  /** nodes: the cluster's nodes whose power goes (default: all); the others' held requests run on. */
  | { cmd: 'crash'; policy?: CrashPolicy; seed?: number; nodes?: number[] }
  | { cmd: 'trace' }
  /** default durable (start: the starting state); a cluster writes each node's image under out/node<k>, or only `node`'s at out. */
  | { cmd: 'image'; out: string; state?: 'durable' | 'live' | 'start'; node?: number }
  /** node: the cluster node it targets (default: every node). */
  | ({ cmd: 'fault'; node?: number } & Fault)
  | { cmd: 'clear-faults' }
  /**
   * record: the daemon keeps a Recording of the run that follows, every model call with its write
   * data (exhaustive mode rebuilds crash states from it). fsyncHolds: its fsyncs are held on that
   * seeded schedule (fsync-holds.ts) until the next reset or crash.
   */
  | { cmd: 'reset'; record?: boolean; fsyncHolds?: FsyncHoldSchedule }
  /**
   * The starting state every later `reset` starts from (a driver's setup), all of it durable and
   * outside every recorded run, so no crash state falls in it: each node's live filesystem as it is
   * now, or the image folder `from` (a cluster's: one node<k> folder per node); `clear`: empty again.
   * The mounts then show it (a reset). Answers each node's size (`nodes`, StartingStateSize[]).
   */
  | { cmd: 'starting-state'; from?: string; clear?: boolean }
  /** hypothesis (every request on recorded states may carry one): the same run with fsyncs inserted (Hypothesis). */
  /** onlyIntervals: list the states of these persistence intervals only (a targeted check, e.g. a cause's reach). */
  | ({ cmd: 'states'; policies: StatePolicy[]; hypothesis?: Hypothesis; onlyIntervals?: number[] } & StateCaps)
  | { cmd: 'load-state'; state: CrashStateId; probe?: ProbeUnit[]; hypothesis?: Hypothesis }
  /** What a state of the recorded run lost, unit by unit (the cause search). */
  | { cmd: 'units'; state: CrashStateId; hypothesis?: Hypothesis }
  /**
   * The image a crash state of the recorded run leaves, written as files under `out` (outside the
   * mount), without touching the mount. replace: whatever `out` holds is removed first (a recovery
   * slot reuses its directories).
   */
  | { cmd: 'state-image'; state: CrashStateId; out: string; replace?: boolean; probe?: ProbeUnit[]; hypothesis?: Hypothesis }
  /** The recorded run (every node's calls with their data) written to the file `out` (outside the mount), to be listed and searched later. */
  | { cmd: 'save-recording'; out: string }
  /** A run saved by save-recording becomes the recorded run: its states are listed, built and probed as if it had just run here. */
  | { cmd: 'load-recording'; from: string }
  | { cmd: 'shutdown' };

export interface StatusAnswer {
  ok: true;
  mountpoint: string;
  opCount: number; // mutating requests so far
  armed: CrashPoint | null;
  frozen: boolean;
  frozenAt: number | null; // op number of the held crash-point request
  faults: Fault[];
  crashes: number; // power cuts since the daemon started
  readFaultsHit: number; // reads a read fault answered EIO or changed, since the faults were armed
  /** Writes the FUSE thread answered itself (write-behind) since the daemon started; absent with the stock binding. */
  writesBehind?: number;
  /** Memory for write data and file chunks since the daemon started: how much was mapped fresh (touched for the first time) of all handed out. */
  memoryReuse?: { slabsMapped: number; slabs: number; chunksMapped: number; chunks: number };
  /** A cluster's nodes (absent for one node); the fields above then sum or list them all. */
  nodes?: NodeStatus[];
  /** The starting state every reset starts from, summed over the nodes; null: none (empty disks). */
  startingState: StartingStateSize | null;
}

/** How big a starting state is. */
export interface StartingStateSize {
  files: number;
  dirs: number;
  /** The files' bytes. */
  bytes: number;
}

export interface NodeStatus {
  node: number;
  mountpoint: string;
  faults: Fault[];
  crashes: number; // power cuts this node took
  readFaultsHit: number;
}

/** Where a cluster's node k keeps its image in a folder of images (image, state-image). */
export const nodeImageDir = (node: number): string => `node${node}`;

export type ControlAnswer = ({ ok: true } & Record<string, unknown>) | { ok: false; error: string };
