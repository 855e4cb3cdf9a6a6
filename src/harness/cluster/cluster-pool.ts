// Where a cluster's offline crash states are recovered: K slots at once, as one disk's are
// (exhaustive/recovery-pool.ts). A slot is a scratch folder on tmpfs holding one image folder per
// node (node0, node1, ...), into which the daemon writes a state's images, and a drain run natively
// on them (nothing of the mount is used): on the slot's serving driver when the target's driver
// serves, else a driver process a state (runDriverProcess without a daemon). States whose
// images are identical on every node (CrashStateInfo.hash covers the tuple of every node's image)
// are recovered once; each is judged against the workload's confirmations as of its own cut, with
// that one drain. Which state comes next is the caller's (a pure choice: state-turns.ts).
//
// A drain here is offline (its spec says so): the replicated queue then runs its nodes in the
// driver's process instead of starting a Node process per node, which was most of a state's cost
// (140 states a minute before, about 1,400 after: `npm run bench:crash -- --only cluster`). Its
// states are now CPU-bound on the daemon and the drain: measured with `--cluster-slots 1,2,4,8`
// (2 cores, load average 2; 20 coordinated + 20 mixed states and their recording; states a
// minute): K=1: 1281  K=2: 1420  K=4: 1066  K=8: 801, within the noise up to 4: CLUSTER_STATE_SLOTS
// = 4. A target whose recoveries wait on timers says how many it takes (Target.clusterStateSlots):
// NATS R3 (three nats-servers and their elections a state, 8 s alone) takes 12.
import { mkdir, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { DEFAULT_STATE_CAPS, type CrashStateInfo, type StateCaps, type StatePolicy } from '../../../fusefs/crash-states.js';
import { markDir } from '../crash-run.js';
import { spreadEvenly } from '../../../fusefs/model/spread.js';
import { nodeImageDir } from '../../../fusefs/protocol.js';
import type { DaemonHandle } from '../daemon-process.js';
import { DriverWorker, runDriverProcess, type DriverTimeouts } from '../driver-process.js';
import { killGroup } from '../process-group.js';
import { truncateAtCut, type Recorded } from '../exhaustive/judge-states.js';
import { scratchRoot } from '../exhaustive/recovery-pool.js';
import { HarnessError } from '../harness-error.js';
import { judge, type RunRecord, type Violation } from '../oracle.js';
import type { Target } from '../target.js';
import { clusterSpec, offlineDrainSpec, type ClusterInput } from './cluster-run.js';
import { StateTurns } from './state-turns.js';
import { runFolder } from '../run-folder.js';

/**
 * Slots a cluster's states are recovered in at once, unless the target says (the measurements
 * above): the replicated queue gains nothing past 2 on 2 cores, targets that wait on timers gain from more.
 */
export const CLUSTER_STATE_SLOTS = 4;

/** What the pool needs of a recorded run: its input (for the drain's spec) and the run with its marks (for each state's confirmations as of its cut). */
export interface ClusterRecorded {
  input: ClusterInput;
  recorded: Recorded;
}

/** One recorded run of a cluster workload and its crash states (coordinated, then mixed; lose-unsynced before torn and journaled). */
export interface ClusterRecording {
  input: ClusterInput;
  recorded: Recorded;
  intervals: number;
  states: CrashStateInfo[];
  /** States the caps left out. */
  capped: number;
  caps: StateCaps;
}

/** Records `input` once on the cluster daemon and lists its coordinated and mixed crash states under `policies` (each cut node's torn or journaled outcome drawn on its own). */
export async function recordCluster(daemon: DaemonHandle, target: Target, input: ClusterInput, maxStates: number, timeouts: DriverTimeouts, policies: readonly StatePolicy[] = ['lose-unsynced']): Promise<ClusterRecording> {
  const client = daemon.client;
  await client.reset(true);
  const run = await runDriverProcess(daemon, target.driver, { ...clusterSpec(daemon.mountpoints, input, 'workload', 0), mark: markDir(daemon) }, timeouts);
  const { trace, marks } = await client.traceWithMarks();
  const caps = { ...DEFAULT_STATE_CAPS, maxStates };
  const answer = await client.states([...policies], caps);
  return { input, recorded: { run, trace, marks }, intervals: answer.intervals, states: answer.states, capped: answer.capped.states, caps };
}

/** One judged state: its verdict, the runs the oracle judged (the workload as of the cut, the drain), and whether its recovery was another state's. */
export interface ClusterStateVerdict {
  state: CrashStateInfo;
  violations: Violation[];
  runs: RunRecord[];
  drainStderr: string;
  /** Its images were those of a state recovered before (same hash): that drain, judged against this state's confirmations. */
  shared: boolean;
  /** The slot's time on it: its images written and its drain (0 when shared). */
  recoverMs: number;
}

/** A state's recovery failed (the tool, not the queue): which state, and why. */
export class ClusterStateError extends HarnessError {
  constructor(readonly state: CrashStateInfo, readonly reason: unknown) {
    super(`recovering crash state after request ${state.id.afterOp}${state.id.nodes ? ` cutting node(s) ${state.id.nodes.join(', ')}` : ''} failed: ${reason instanceof Error ? reason.message : String(reason)}`);
  }
}

interface Drained {
  drain: RunRecord;
  stderr: string;
}

/** What every drain of one judge() call shares. */
interface JudgeCall {
  daemon: DaemonHandle;
  rec: ClusterRecorded;
  scratch: string;
  /** The target's driver serves several specs: each slot drains on its own serving driver. */
  serves: boolean;
  /** One drain per distinct tuple of images within the recording (its states' hashes). */
  drains: Map<string, Promise<Drained>>;
  /** The budget's end has passed: a serving driver's drain not yet started is abandoned. */
  pastAbandon: () => boolean;
}

const ABANDONED = Symbol('abandoned at the budget\'s end');

/** A drain's bounds when `slots` recoveries share the machine's cores: runMs stretched by slots/cores (see ClusterStatePool). */
export function timeoutsForSlots(timeouts: DriverTimeouts, slots: number): DriverTimeouts {
  return { ...timeouts, runMs: Math.ceil(timeouts.runMs * Math.max(1, slots / os.availableParallelism())) };
}

export class ClusterStatePool {
  private scratch: Promise<string> | undefined;
  private readonly workers: (DriverWorker | undefined)[] = [];

  constructor(
    private readonly target: Target,
    /** Nodes of the cluster: image folders a slot holds. */
    private readonly nodes: number,
    /** Slots at once. */
    readonly size: number,
    private readonly timeouts: DriverTimeouts,
    /** Drain on a serving driver per slot when the target's driver serves (false: a driver process a state, to compare). */
    private readonly serving = true,
  ) {
    if (!Number.isInteger(size) || size < 1) throw new Error(`invariant: cluster state slots must be an integer >= 1, got ${size}`);
    if (!Number.isInteger(nodes) || nodes < 2) throw new Error(`invariant: a cluster state pool serves two nodes or more, got ${nodes}`);
    // A drain's run bound is a liveness check of the queue, so it is the bound of a drain that has
    // the machine to itself: with more slots than cores each drain gets cores/size of it, so its
    // bound is stretched by size/cores. (Seen: NATS R3 with 6 slots on 2 busy cores hung 4 of 22
    // coordinated states at the 20 s bound; the first of them, replayed alone from its stored
    // images, passed.)
    this.drainTimeouts = timeoutsForSlots(timeouts, size);
  }

  /** The bounds of a slot's drain (runMs stretched for the slots sharing the cores). */
  readonly drainTimeouts: DriverTimeouts;

  /**
   * Recovers and judges the states `next` hands out (undefined: that slot is done), in this pool's
   * slots, until every slot is done; `onJudged` sees each verdict as it comes (awaited before the
   * slot takes its next state). The daemon must still hold `rec`'s recording. A slot that fails
   * stops the others from taking more; the first failure is thrown (a ClusterStateError naming its
   * state) once every slot has stopped. At `abandonAtMs` (a Date.now() time; the budget's end), the
   * states still draining are left unjudged and their slots' drivers killed: a drain that waits on
   * elections may take its whole bound, stretched for the slots, far past a gate's budget. They are
   * returned. (Only a serving driver's drain is abandoned; one in a driver process of its own runs to its end.)
   */
  async judge(daemon: DaemonHandle, rec: ClusterRecorded, next: (slot: number) => CrashStateInfo | undefined, onJudged: (v: ClusterStateVerdict) => Promise<void> | void, abandonAtMs = Infinity): Promise<{ abandoned: CrashStateInfo[] }> {
    if (daemon.mountpoints.length !== this.nodes) throw new Error(`invariant: the pool serves ${this.nodes} nodes, but the daemon ${daemon.mountpoints.length}`);
    const scratch = await (this.scratch ??= runFolder(path.join(scratchRoot(), 'powercut-cluster-pool-')));
    // A driver that serves several specs (its hello said so) drains state after state in one
    // process per slot: a Node driver's start-up is a third of a state's CPU on the replicated queue.
    const serves = this.serving && rec.recorded.run.record.outcomes.some((o) => o.t === 'hello' && o.serves === true);
    const drains = new Map<string, Promise<Drained>>();
    let aborted = false;
    const abandoned: CrashStateInfo[] = [];
    let abandonTimer: NodeJS.Timeout | undefined;
    let pastAbandon = false;
    const abandonAt = new Promise<typeof ABANDONED>((resolve) => {
      if (abandonAtMs <= Date.now()) resolve(ABANDONED);
      else if (Number.isFinite(abandonAtMs)) abandonTimer = setTimeout(() => resolve(ABANDONED), abandonAtMs - Date.now());
    });
    void abandonAt.then(() => (pastAbandon = true));
    const call: JudgeCall = { daemon, rec, scratch, serves, drains, pastAbandon: () => pastAbandon };
    const work = async (slot: number): Promise<void> => {
      for (let s = aborted ? undefined : next(slot); s !== undefined; s = aborted ? undefined : next(slot)) {
        const started = performance.now();
        const known = drains.get(s.hash);
        let drained: Drained;
        try {
          const drainP = known ?? this.drain(call, s, slot);
          const got = serves ? await Promise.race([drainP, abandonAt]) : await drainP;
          if (got === ABANDONED) {
            abandoned.push(s);
            if (!known) await this.workers[slot]?.kill();
            return;
          }
          drained = got;
        } catch (err) {
          aborted = true;
          throw err instanceof ClusterStateError ? err : new ClusterStateError(s, err);
        }
        const runs = [truncateAtCut(rec.recorded, s.id.afterOp), drained.drain];
        const violations = judge({ target: this.target.name, faultsInjected: false, runs });
        await onJudged({ state: s, violations, runs, drainStderr: drained.stderr, shared: known !== undefined, recoverMs: known ? 0 : performance.now() - started });
      }
    };
    try {
      const slots = await Promise.allSettled(Array.from({ length: this.size }, (_, slot) => work(slot)));
      const failed = slots.find((r): r is PromiseRejectedResult => r.status === 'rejected');
      if (failed) throw failed.reason;
    } finally {
      clearTimeout(abandonTimer);
      // An abandoned drain ends soon after its driver's kill (or at its check before the driver
      // runs): nothing of this call runs on in the slots' folders once it returns.
      await Promise.allSettled(drains.values());
    }
    return { abandoned };
  }

  /** Writes state `s`'s images into the slot's folder and drains them (registered in the call's drains under its hash, for states with the same images). */
  private drain(call: JudgeCall, s: CrashStateInfo, slot: number): Promise<Drained> {
    const { daemon, rec, serves } = call;
    const dir = path.join(call.scratch, `slot-${slot}`);
    const dirs = Array.from({ length: this.nodes }, (_, k) => path.join(dir, nodeImageDir(k)));
    const p = (async (): Promise<Drained> => {
      await mkdir(dir, { recursive: true });
      // replace: the daemon empties the slot's folder of the previous state's images first.
      await daemon.client.stateImage(s.id, dir, true);
      if (serves && call.pastAbandon()) throw new HarnessError('abandoned at the budget\'s end before its drain');
      const spec = offlineDrainSpec(dirs, rec.input);
      if (!serves) {
        const r = await runDriverProcess(null, this.target.driver, spec, this.drainTimeouts);
        return { drain: r.record, stderr: r.stderr };
      }
      const r = await this.worker(slot).run(spec);
      // The drain's servers must be gone before the slot's folder takes the next state's
      // images: a driver stops its servers before its done line, and any left is killed here.
      for (const o of r.record.outcomes) {
        if (o.t !== 'node') continue;
        if (!(await killGroup(o.pgid, this.timeouts.killMs))) throw new HarnessError(`node ${o.node}'s server (group ${o.pgid}) outlived its drain and did not exit within ${this.timeouts.killMs} ms of SIGKILL`);
      }
      return { drain: r.record, stderr: r.stderr };
    })();
    call.drains.set(s.hash, p);
    // An abandoned drain fails once its driver is killed: only judge()'s end waits for it then.
    p.catch(() => {});
    return p;
  }

  /** Slot `slot`'s serving driver, started on first use and kept across recordings. */
  private worker(slot: number): DriverWorker {
    return (this.workers[slot] ??= new DriverWorker(this.target.driver, this.drainTimeouts));
  }

  /** Stops the slots' drivers and removes the pool's scratch folder (call once no judge() runs). */
  async stop(): Promise<void> {
    await Promise.all(this.workers.splice(0).map((w) => w?.stop()));
    if (this.scratch) await rm(await this.scratch, { recursive: true, force: true });
    this.scratch = undefined;
  }
}

export interface SpreadStatesResult {
  judged: { coordinated: number; mixed: number };
  /** Of those, states whose images another state's recovery had (one drain for both). */
  shared: number;
  failures: { state: CrashStateInfo; violations: Violation[] }[];
}

/**
 * The gate's path for a recording's states without its budget (benchmarks, tests): at most
 * `perKind` coordinated and `perKind` mixed states spread evenly over the run, the two kinds in
 * turn (StateTurns), recovered in the pool's slots. With `stopAtFirstFailure`, no state is taken
 * once one failed (those already in slots are still judged and counted).
 */
export async function judgeSpreadStates(daemon: DaemonHandle, pool: ClusterStatePool, rec: ClusterRecording, perKind: number, stopAtFirstFailure = false): Promise<SpreadStatesResult> {
  const turns = new StateTurns([
    spreadEvenly(rec.states.filter((s) => s.id.nodes === undefined), perKind),
    spreadEvenly(rec.states.filter((s) => s.id.nodes !== undefined), perKind),
  ]);
  const r: SpreadStatesResult = { judged: { coordinated: 0, mixed: 0 }, shared: 0, failures: [] };
  await pool.judge(daemon, rec, () => (stopAtFirstFailure && r.failures.length > 0 ? undefined : turns.next(() => true)?.state), (v) => {
    r.judged[v.state.id.nodes === undefined ? 'coordinated' : 'mixed']++;
    if (v.shared) r.shared++;
    if (v.violations.length > 0) r.failures.push({ state: v.state, violations: v.violations });
  });
  return r;
}
