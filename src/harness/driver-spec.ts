// What one driver run is asked to do: the JSON spec the harness writes, one line, on the driver's
// stdin (docs/driver-protocol.md).
import { parseWorkload, type Workload } from './workload.js';

export interface DriverSpec {
  /**
   * 'workload' runs the steps; 'drain' recovers, reads and acks everything, then checks liveness;
   * 'setup' prepares the starting state its engine needs (starting-state.ts; a driver without one exits 2).
   */
  mode: 'workload' | 'drain' | 'setup';
  /** The queue directory (on the mount); a cluster's node 0's. */
  dir: string;
  /** A cluster: each node's data directory, on its own mount (node 0 first). */
  nodes?: ClusterNodeSpec[];
  /** The target's own settings, passed through as they are. */
  settings: Record<string, unknown>;
  /** A known-bad variant the target offers, by name; absent = the correct queue. */
  variant?: string;
  workload?: Workload;
  /** Event ids written are idBase + 1, idBase + 2, ...: unique across the runs of one case. */
  idBase: number;
  /** If set, after printing its Nth line the driver stats `<mark>/<N>` (a marker in the request trace). */
  mark?: string;
  /**
   * A folder off the mount, made for this run alone and removed by the harness once the run has
   * ended (a driver killed at a cut cannot clean up after itself): temporary files, a server's config.
   */
  scratch?: string;
  /**
   * The run recovers copies of the disks off the mount (an offline crash state, a stored image):
   * no node will be cut, paused or restarted, and node lines are not needed, so a cluster driver
   * may run its nodes in its own process. Absent: the run may be cut.
   */
  offline?: boolean;
}

export interface ClusterNodeSpec {
  node: number;
  dir: string;
}

/** What the harness writes on a cluster driver's stdin after cutting one node's power: restart it on its crashed disk. */
export interface RestartCommand {
  cmd: 'restart';
  node: number;
}

/** Drain mode reads and acks in batches of this many events. */
export const DRAIN_BATCH_EVENTS = 64;
/** Drain mode's liveness check writes these events after draining and reads them back. */
export const LIVENESS_SIZES_BYTES = [64, 1500, 9];
/** Drain mode waits this long for its liveness events to come back. */
export const LIVENESS_READ_TIMEOUT_MS = 2_000;

export function parseDriverSpec(text: string, where: string): DriverSpec {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new Error(`${where}: not JSON (${(err as Error).message})`);
  }
  const spec = value as DriverSpec;
  if (typeof spec !== 'object' || spec === null) throw new Error(`${where}: a driver spec is a JSON object`);
  if (spec.mode !== 'workload' && spec.mode !== 'drain') throw new Error(`${where}: mode must be "workload" or "drain", got ${JSON.stringify(spec.mode)}`);
  if (typeof spec.dir !== 'string' || spec.dir === '') throw new Error(`${where}: dir must be a non-empty path`);
  if (typeof spec.settings !== 'object' || spec.settings === null || Array.isArray(spec.settings)) throw new Error(`${where}: settings must be an object`);
  if (spec.variant !== undefined && typeof spec.variant !== 'string') throw new Error(`${where}: variant must be a name`);
  if (!Number.isInteger(spec.idBase) || spec.idBase < 0) throw new Error(`${where}: idBase must be an integer >= 0`);
  if (spec.mark !== undefined && (typeof spec.mark !== 'string' || spec.mark === '')) throw new Error(`${where}: mark must be a non-empty path`);
  if (spec.scratch !== undefined && (typeof spec.scratch !== 'string' || spec.scratch === '')) throw new Error(`${where}: scratch must be a non-empty path`);
  if (spec.offline !== undefined && typeof spec.offline !== 'boolean') throw new Error(`${where}: offline must be true or false, got ${JSON.stringify(spec.offline)}`);
  if (spec.nodes !== undefined) {
    if (!Array.isArray(spec.nodes) || spec.nodes.length < 2) throw new Error(`${where}: nodes must list two nodes or more, got ${JSON.stringify(spec.nodes)}`);
    spec.nodes.forEach((n, k) => {
      if (typeof n !== 'object' || n === null || n.node !== k || typeof n.dir !== 'string' || n.dir === '') throw new Error(`${where}: nodes[${k}] must be {"node": ${k}, "dir": "..."}, got ${JSON.stringify(n)}`);
    });
  }
  if (spec.mode === 'workload') spec.workload = parseWorkload(spec.workload, `${where}: workload`);
  return spec;
}
