// What a run of a cluster's nodes adds to a driver run (driver-process.ts runs both): the harness's
// control over each node once the crash point froze the cluster (a node's cut kills exactly its
// group; pauses; restarts), its bounds, and how a node is seen stopped.
import { readFileSync } from 'node:fs';

/** What the harness may do to a cluster run once its crash point froze every node. */
export interface ClusterControl {
  /** Each node's process group, as its latest node line named it. */
  readonly groups: ReadonlyMap<number, number>;
  /** SIGKILLs the driver and every node (a coordinated cut: then call the daemon's crash); a paused node is resumed first. */
  killAll(): void;
  /** SIGKILLs these nodes' groups only (resumed first if paused); `reap` then waits (bounded) until they are gone (after the cut: a process in a held request dies only once it is answered). */
  killNodes(nodes: readonly number[]): void;
  /**
   * SIGSTOPs node k's group at once and SIGCONTs it `durationMs` later (bounded by MAX_PAUSE_MS),
   * or at the run's end or the node's kill, whichever comes first: nothing is left stopped. Resolves
   * once its leader is seen stopped (release a freeze meanwhile: a held request delays the stop).
   */
  pause(node: number, durationMs: number): Promise<void>;
  reap(nodes: readonly number[]): Promise<void>;
  /** Asks the driver to restart node k and waits (bounded) for its node line saying so, or for the run's end (the others served it to its end). */
  restart(node: number): Promise<void>;
}

/** How long a driver may take to restart a node and say so. */
export const RESTART_TIMEOUT_MS = 20_000;

/** The longest pause of a node: the workload waits for a paused node's answers, within its run's bound. */
export const MAX_PAUSE_MS = 10_000;

/** What atFreeze answers: 'again' if it armed another crash point (a pause's release arms the cut), so the run waits for that freeze too. */
export type FreezeHandled = void | 'again';

/** How long a SIGSTOPped node's leader may take to be seen stopped. */
export const STOP_SEEN_MS = 2_000;

/** A process's state letter from /proc (R, S, D, T, Z, ...), or null if it is gone. */
export function processState(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0];
  } catch {
    return null;
  }
}

/** Whether a SIGSTOP waits for the process to return from the kernel (pending: a process in a FUSE request stops only once it is answered). */
export function stopPending(pid: number): boolean {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const SIGSTOP_BIT = 1n << 18n; // signal 19
    return ['ShdPnd', 'SigPnd'].some((field) => {
      const mask = new RegExp(`^${field}:\\s*([0-9a-f]+)$`, 'm').exec(status)?.[1];
      return mask !== undefined && (BigInt(`0x${mask}`) & SIGSTOP_BIT) !== 0n;
    });
  } catch {
    return false;
  }
}

export function signalGroupWith(pgid: number | undefined, signal: 'SIGSTOP' | 'SIGCONT'): void {
  if (pgid === undefined) return;
  try {
    process.kill(-pgid, signal);
  } catch {
    // the group is gone already
  }
}

/** How long a node's processes may outlive a driver that exited by itself (a server that sees its stdin close and exits). */
export const NODE_EXIT_GRACE_MS = 2_000;
