// The daemon's state machine: one mount, model and faults per node (one node, or a cluster's), one
// gate ordering all their requests; implements every control command. Control input is validated before it gets here.
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, isAbsolute, join, relative, resolve } from 'node:path';
import { FsModel, processOwner } from './model/fs-model.js';
import { RequestGate } from './request-gate.js';
import type { CrashPolicy, Hypothesis } from './crash-states.js';
import { DEFAULT_MAX_DATA_BYTES, Faults } from './faults.js';
import { mountGeneration, ReplaceFailure, replaceGeneration, unmountGeneration, type Mounted } from './mount-generation.js';
import { applyAnsweredWrite, forgetHandles, type FsState } from './fuse-adapter.js';
import { loadFuseNative } from './fuse-native-binding.js';
import { RequestClock, WriteBehind } from './write-behind.js';
import { CHUNK_BYTES, useChunkAllocator } from './model/grow-buffer.js';
import { nodeImageDir, type ControlAnswer, type ControlRequest, type NodeStatus, type StartingStateSize, type StatusAnswer } from './protocol.js';
import { FsyncHolds, type FsyncHoldSchedule } from './fsync-holds.js';
import { readTree, writeTree } from './image-files.js';
import type { FsTree } from './model/nodes.js';
import { Recording, RecordingFsModel } from './model/recording.js';
import { decodeRecordedRun, encodeRecordedRun, type RecordedRun } from './model/recording-file.js';
import { StateSpace } from './model/state-space.js';
import { ClusterStateSpace, SingleNodeStates, type RunStates } from './model/cluster-states.js';

/** The patched binding's memory counters (StatusAnswer.memoryReuse). */
function memoryReuse(): StatusAnswer['memoryReuse'] {
  const [slabsMapped, slabs, chunksMapped, chunks] = loadFuseNative().binding.powercut_wb_stats?.() ?? [0, 0, 0, 0];
  return { slabsMapped, slabs, chunksMapped, chunks };
}

/** Write data since the last collection past which dropping a model collects the heap (WriteBehind.collectIfWorthIt). */
const COLLECT_AFTER_BYTES = 32 * 1024 * 1024;

/** With POWERCUT_CHECK_INVARIANTS, every file is rebuilt from its durable bytes and pending changes after every this many requests (the other invariants after each). */
const FILES_CHECK_EVERY = 8;

/** Memory a recording may take: its calls and their write data (the whole recorded run is in memory; exhaustive mode needs it). */
export const DEFAULT_MAX_RECORDING_BYTES = 256 * 1024 * 1024;

/** The daemon's memory bounds: file data lives in memory, and a recording keeps a run's writes. */
export interface DaemonLimits {
  /**
   * The disk's size: a write or truncate that would make the named files' total size exceed it gets
   * ENOSPC. Overwrites within a file's size cost nothing; unlinking and truncating free space.
   */
  maxDataBytes: number;
  /** See DEFAULT_MAX_RECORDING_BYTES. */
  maxRecordingBytes: number;
  /**
   * Check the model's invariants (FsModel.assertInvariants) after every request: npm test sets
   * POWERCUT_CHECK_INVARIANTS. A broken one stops the daemon with a message that names it.
   */
  checkInvariants: boolean;
}
/** One node's disk: its mount, its model and faults (in `state`), its recorded run. */
interface NodeDisk {
  index: number;
  mountpoint: string;
  state: FsState;
  mounted: Mounted | null;
  /** Generations a failed replacement left mounted beneath the current one (topmost first): unmount() takes them too. */
  stranded: Mounted[];
  /** Power cuts this node took. */
  crashes: number;
  /** The run being recorded since `reset` with record, until its states are asked for. */
  recording: Recording | null;
  /** The starting state every reset starts from (a driver's setup), or null: an empty disk. */
  start: FsTree | null;
}

export class PowercutDaemon {
  /** Every node's requests in one order (one node: the daemon as it always was). */
  private readonly gate: RequestGate;
  private readonly nodes: NodeDisk[];
  private crashes = 0;
  /** Serialises crash/reset/shutdown so two remounts never overlap. */
  private lifecycle: Promise<unknown> = Promise.resolve();
  /** The recorded run's crash states (a cluster's: per node), once `states` closed the recording. */
  private stateSpace: RunStates | null = null;
  /** The recorded run the state space lists (save-recording writes it). */
  private recordedRun: RecordedRun | null = null;
  /** Why the last recording ended before its states were asked for (a crash), for the error `states` then gives. */
  private endedRecording: string | null = null;
  onShutdown: () => void = () => {};
  /** A broken invariant: the daemon must stop, saying which (runDaemon unmounts and exits). */
  onFatal: (message: string) => void = (message) => {
    throw new Error(message);
  };

  private readonly maxRecordingBytes: number;
  /** Every model's clock: a write answered in the FUSE thread is applied at the time it was answered. */
  private readonly clock = new RequestClock();
  /** Writes answered in the FUSE thread (write-behind.ts); null until mounted, or with the stock binding. */
  private writeBehind: WriteBehind | null = null;

  /** One mountpoint per node: a cluster's nodes each get a mount of their own, served here in one order. */
  constructor(mountpoints: string | readonly string[], models: FsModel | readonly FsModel[] = [], limits: Partial<DaemonLimits> = {}) {
    const points = typeof mountpoints === 'string' ? [mountpoints] : [...mountpoints];
    const given = models instanceof FsModel ? [models] : models;
    if (points.length === 0) throw new Error('the daemon needs at least one mountpoint');
    if (new Set(points.map((p) => resolve(p))).size !== points.length) throw new Error(`the nodes' mountpoints must differ, got ${points.join(', ')}`);
    if (given.length > points.length) throw new Error(`${given.length} images for ${points.length} mountpoints`);
    this.maxRecordingBytes = limits.maxRecordingBytes ?? DEFAULT_MAX_RECORDING_BYTES;
    const check = limits.checkInvariants ? () => this.checkInvariants() : null;
    this.gate = new RequestGate(check, points.length > 1);
    const maxDataBytes = limits.maxDataBytes ?? DEFAULT_MAX_DATA_BYTES;
    for (const m of given) m.setClock(this.clock.now);
    this.nodes = points.map((mountpoint, index) => ({
      index, mountpoint, mounted: null, stranded: [], crashes: 0, recording: null, start: null,
      state: { model: given[index] ?? new FsModel(this.clock.now), gate: this.gate, node: index, faults: new Faults(maxDataBytes), fsyncHolds: null, handles: new Map(), nextFd: 1, generation: 0 },
    }));
  }

  get mountpoint(): string {
    return this.nodes[0].mountpoint;
  }

  private get isCluster(): boolean {
    return this.nodes.length > 1;
  }

  private fatal = false;
  private checkInvariants(): void {
    if (this.fatal) return;
    try {
      // Every file rebuilt from its changes every few requests: a file's bytes broken stay broken, so
      // it is still caught, within FILES_CHECK_EVERY requests (every request cost npm test a sixth more).
      const filesInFull = this.gate.opCount % FILES_CHECK_EVERY === 0;
      for (const n of this.nodes) n.state.model.assertInvariants(filesInFull);
    } catch (e) {
      this.fatal = true;
      this.onFatal(`after request ${this.gate.opCount}: ${e instanceof Error ? e.message : String(e)}`);
    }
  }

  /** Mounts every node; if one fails, the ones already mounted are unmounted again. */
  async mount(): Promise<void> {
    if (!this.writeBehind) {
      const { binding } = loadFuseNative();
      const chunk = binding.powercut_chunk;
      if (chunk) useChunkAllocator(() => chunk() ?? Buffer.allocUnsafeSlow(CHUNK_BYTES));
      this.writeBehind = WriteBehind.create(binding, this.gate, this.clock, applyAnsweredWrite);
      if (this.writeBehind) this.writeBehind.onBroken = (message) => this.onFatal(message);
      for (const n of this.nodes) n.state.writeBehind = this.writeBehind;
    }
    try {
      for (const n of this.nodes) n.mounted = await mountGeneration(n.mountpoint, n.state);
    } catch (e) {
      await this.unmount().catch(() => undefined);
      throw e;
    }
  }

  async unmount(): Promise<void> {
    // The writes answered so far are applied first; the generations are dead once unmounted, so the binding answers no more.
    this.writeBehind?.pause();
    try {
      await this.unmountAll();
    } finally {
      this.writeBehind?.resume();
    }
  }

  private async unmountAll(): Promise<void> {
    const failures: string[] = [];
    for (const n of this.nodes) {
      const all = [...(n.mounted ? [n.mounted] : []), ...n.stranded];
      n.mounted = null;
      n.stranded = [];
      for (const m of all) {
        try {
          await unmountGeneration(m, n.state);
        } catch (e) {
          failures.push(e instanceof Error ? e.message : String(e));
        }
      }
    }
    this.gate.disposeHeld();
    if (failures.length > 0) throw new Error(failures.join('; '));
  }

  /**
   * A new generation in place of each node's mounted one (replaceGeneration): `change` runs while
   * neither serves; a node's held requests are answered (EIO) once its old generation is detached.
   * If every node is replaced, numbering restarts; otherwise the other nodes' held requests run on
   * (a cut that spared them). No program runs on a node while it is replaced (the harness killed
   * it): a request reaching a replaced node before the last one is detached is numbered in the run that ends.
   */
  private async remount(nodes: readonly NodeDisk[], change: (n: NodeDisk) => void): Promise<void> {
    const whole = nodes.length === this.nodes.length;
    let failure: unknown = null;
    for (const [i, n] of nodes.entries()) {
      // The last node of a whole cut restarts the numbering, before its new generation serves.
      const detached = whole && i === nodes.length - 1
        ? () => {
          this.gate.disposeHeld();
          this.gate.restart();
        }
        : () => this.gate.disposeHeld(n.index);
      const old = n.mounted;
      n.mounted = null;
      try {
        n.mounted = await replaceGeneration(n.mountpoint, n.state, old, () => change(n), detached);
      } catch (e) {
        // What the failure left mounted stays reachable: shutdown unmounts it.
        if (e instanceof ReplaceFailure) n.stranded.unshift(...e.stillMounted);
        failure ??= e;
      }
    }
    if (!whole) {
      // A cut node's request can come after its own detach, while the next cut node is replaced (the
      // kernel flushing the files of its killed processes as they exit): answered EIO too, or the
      // release below would refuse to thaw and the spared nodes' held requests would wait forever.
      for (const n of nodes) this.gate.disposeHeld(n.index);
      this.gate.release(new Set(this.nodes.filter((n) => !nodes.includes(n)).map((n) => n.index)));
    }
    if (failure !== null) throw failure;
  }

  /** The nodes a request names (every node if none), or an error naming the node that does not exist. */
  private nodesOf(cmd: string, indexes: readonly number[] | undefined): NodeDisk[] {
    if (indexes === undefined) return this.nodes;
    for (const k of indexes) if (k >= this.nodes.length) throw new Error(`${cmd}: node ${k} does not exist; the daemon serves ${this.nodes.length} node${this.nodes.length === 1 ? '' : 's'} (0..${this.nodes.length - 1})`);
    return this.nodes.filter((n) => indexes.includes(n.index));
  }

  /**
   * One control command. Every command but wait-frozen runs with write-behind paused: it sees every
   * write answered before it, and the binding answers none by itself until it is done (it may arm,
   * cut the power or change the model).
   */
  async handle(req: ControlRequest): Promise<ControlAnswer> {
    const wb = req.cmd === 'wait-frozen' ? null : this.writeBehind;
    wb?.pause();
    try {
      return await this.command(req);
    } finally {
      wb?.resume();
    }
  }

  private async command(req: ControlRequest): Promise<ControlAnswer> {
    const answer = await this.commandAnswer(req);
    // A model was dropped: what it held is worth reusing before the next run writes.
    if (req.cmd === 'reset' || req.cmd === 'crash' || req.cmd === 'load-state') this.writeBehind?.collectIfWorthIt(COLLECT_AFTER_BYTES);
    return answer;
  }

  private async commandAnswer(req: ControlRequest): Promise<ControlAnswer> {
    const gate = this.gate;
    switch (req.cmd) {
      case 'status': {
        const nodes: NodeStatus[] = this.nodes.map((n) => ({
          node: n.index, mountpoint: n.mountpoint, faults: n.state.faults.list(), crashes: n.crashes, readFaultsHit: n.state.faults.readHits,
        }));
        const a: StatusAnswer = {
          ok: true, mountpoint: this.mountpoint, opCount: gate.opCount, armed: gate.armed,
          frozen: gate.frozenAt !== null, frozenAt: gate.frozenAt, crashes: this.crashes,
          faults: nodes.flatMap((n) => n.faults.map((f) => (this.isCluster ? { ...f, node: n.node } : f))),
          readFaultsHit: nodes.reduce((sum, n) => sum + n.readFaultsHit, 0),
          ...(this.writeBehind ? { writesBehind: this.writeBehind.applied, memoryReuse: memoryReuse() } : {}),
          ...(this.isCluster ? { nodes } : {}),
          startingState: this.nodes.some((n) => n.start) ? sumSizes(this.nodes.map((n) => treeSize(n.start))) : null,
        };
        return a as unknown as ControlAnswer;
      }
      case 'arm': {
        const { cmd: _cmd, ...point } = req;
        if (point.node !== undefined) this.nodesOf('arm', [point.node]);
        gate.arm(point);
        return { ok: true };
      }
      case 'disarm':
        gate.disarm();
        return { ok: true };
      case 'release': {
        if (gate.frozenAt === null) throw new Error('the daemon is not frozen (arm a crash point and wait for it first)');
        if (req.arm?.node !== undefined) this.nodesOf('release', [req.arm.node]);
        gate.releaseAll(req.arm);
        return { ok: true };
      }
      case 'wait-frozen': {
        const at = await gate.waitFrozen(req.timeoutMs);
        return at === null ? { ok: true, frozen: false } : { ok: true, frozen: true, frozenAt: at };
      }
      case 'crash': {
        const nodes = this.nodesOf('crash', req.nodes);
        return this.serial(() => this.crash(nodes, req.policy ?? 'lose-unsynced', req.seed ?? 0));
      }
      case 'trace':
        return { ok: true, trace: gate.trace.all(), marks: gate.marks, ...(gate.trace.truncated ? { truncatedAfter: gate.trace.all().length } : {}) };
      case 'image': {
        const which = req.state ?? 'durable';
        const nodes = this.nodesOf('image', req.node === undefined ? undefined : [req.node]);
        if (which === 'start' && nodes.some((n) => !n.start)) throw new Error('image: there is no starting state (send starting-state first)');
        return { ok: true, out: await this.writeImages(req.out, nodes.map((n) => (which === 'start' ? n.start! : n.state.model.exportTree(which))), req.node !== undefined) };
      }
      case 'fault': {
        const { cmd: _cmd, node, ...fault } = req;
        for (const n of this.nodesOf('fault', node === undefined ? undefined : [node])) n.state.faults.add(fault);
        return { ok: true };
      }
      case 'clear-faults':
        for (const n of this.nodes) n.state.faults.clear();
        return { ok: true };
      case 'reset':
        return this.serial(() => this.reset(req.record ?? false, req.fsyncHolds));
      case 'starting-state':
        return this.serial(async () => {
          const trees = req.clear ? this.nodes.map(() => null) : req.from !== undefined ? await this.imageTrees(req.from) : this.nodes.map((n) => n.state.model.exportTree('live'));
          this.nodes.forEach((n, k) => (n.start = trees[k]));
          await this.reset(false);
          return { ok: true, nodes: trees.map(treeSize) };
        });
      case 'states': {
        const { cmd: _cmd, policies, hypothesis, onlyIntervals, ...caps } = req;
        return { ok: true, ...this.space(hypothesis).enumerate(policies, caps, onlyIntervals) };
      }
      case 'load-state': {
        const models = this.space(req.hypothesis).build(req.state, req.probe);
        for (const m of models) m.setClock(this.clock.now);
        return this.serial(() => this.swapModels(models));
      }
      case 'state-image': {
        const trees = this.space(req.hypothesis).build(req.state, req.probe).map((m) => m.exportTree('durable'));
        return { ok: true, out: await this.writeImages(req.out, trees, false, req.replace ?? false) };
      }
      case 'units':
        return { ok: true, units: this.space(req.hypothesis).lostUnits(req.state) };
      case 'save-recording': {
        this.closeRecording();
        const file = this.checkOut(req.out, false);
        mkdirSync(dirname(file), { recursive: true });
        writeFileSync(file, encodeRecordedRun(this.recordedRun!));
        return { ok: true, out: file };
      }
      case 'load-recording':
        return this.serial(async () => {
          const run = decodeRecordedRun(readFileSync(req.from), resolve(req.from));
          if (run.recordings.length !== this.nodes.length) throw new Error(`${resolve(req.from)} holds a run of ${run.recordings.length} node(s); this daemon serves ${this.nodes.length}: start it with as many mounts`);
          this.endRecording(null);
          this.useRecordedRun(run);
          return { ok: true };
        });
      case 'shutdown':
        return this.serial(async () => {
          await this.unmount();
          setImmediate(() => this.onShutdown());
          return { ok: true };
        });
    }
  }

  private async crash(nodes: readonly NodeDisk[], policy: CrashPolicy, seed: number): Promise<ControlAnswer> {
    const t0 = performance.now();
    // A power cut ends a recorded run: requests are numbered from 1 again after it, so what follows
    // cannot be replayed as part of the run. (A crash during the recovery of a loaded state, after
    // `states` ended the recording, keeps the state space: the harness loads the next state from it.)
    if (this.nodes.some((n) => n.recording)) this.endRecording(`a crash came after request ${this.gate.opCount} of the recorded run, which ended it`);
    // The held requests are answered only once the old mount is detached, so no live mount sees the answers.
    let partialWrites = 0;
    await this.remount(nodes, (n) => {
      // Each node's disk tears on its own: the seed is drawn per node.
      partialWrites += n.state.model.crash(policy, seed + n.index).partialWrites;
      forgetHandles(n.state);
      n.state.fsyncHolds = null;
      n.crashes++;
    });
    this.crashes++;
    return { ok: true, policy, seed, remountMs: Math.round(performance.now() - t0), tornPartialWrites: partialWrites, ...(this.isCluster ? { nodes: nodes.map((n) => n.index) } : {}) };
  }

  /**
   * An empty filesystem on every node; with `record`, every change of the run that follows is
   * recorded for its crash states; with `holds`, its fsyncs are slow on that schedule until the next reset or crash.
   */
  private async reset(record: boolean, holds?: FsyncHoldSchedule): Promise<ControlAnswer> {
    this.stateSpace = null;
    this.recordedRun = null;
    this.endRecording(null);
    const models = this.nodes.map((n) => {
      // The starting state, loaded before the run (a recording's base: none of it is the run's).
      n.recording = record ? new Recording(processOwner(), this.maxRecordingBytes, n.start ?? undefined) : null;
      if (n.recording) return new RecordingFsModel(n.recording, () => this.gate.opCount, this.clock.now);
      return n.start ? FsModel.fromTree(n.start, this.clock.now) : new FsModel(this.clock.now);
    });
    await this.swapModels(models);
    for (const n of this.nodes) n.state.fsyncHolds = holds ? new FsyncHolds(holds) : null;
    return { ok: true };
  }

  /**
   * Replaces each node's filesystem behind its mount: handles, faults, counters and the trace start
   * afresh. Frozen, the held requests belong to processes that may still run: detach first (as crash
   * does) so they, and anything else they do on the old mount, get errors instead of the new
   * filesystem. Otherwise the kernel caches nothing (zero timeouts) and the mounts stay.
   */
  private async swapModels(models: readonly FsModel[]): Promise<ControlAnswer> {
    if (models.length !== this.nodes.length) throw new Error(`invariant: ${models.length} models for ${this.nodes.length} nodes`);
    const change = (n: NodeDisk) => {
      n.state.model = models[n.index];
      forgetHandles(n.state);
      n.state.faults.clear();
      n.state.fsyncHolds = null;
    };
    if (this.gate.frozenAt !== null || this.gate.heldCount > 0) await this.remount(this.nodes, change);
    else {
      this.nodes.forEach(change);
      this.gate.restart();
    }
    return { ok: true };
  }

  /** The recorded run's states, or those of a hypothesis about it (kept while the recording is); the first call ends the recording (later changes are recovery's). */
  private space(hypothesis: Hypothesis | undefined): RunStates {
    const space = this.closeRecording();
    if (!hypothesis || (hypothesis.fsyncAfter.length === 0 && !hypothesis.fsyncSkip?.length)) return space;
    const key = JSON.stringify(hypothesis);
    if (this.hypothesisSpaces.key !== key || this.hypothesisSpaces.of !== space) {
      // A cluster's hypothesis inserts each fsync on its node, renumbering every node (ClusterStateSpace.withHypothesis).
      const derived = space instanceof ClusterStateSpace ? space.withHypothesis(hypothesis) : new SingleNodeStates((space as SingleNodeStates).space.withHypothesis(hypothesis));
      this.hypothesisSpaces = { key, of: space, space: derived };
    }
    return this.hypothesisSpaces.space!;
  }
  private hypothesisSpaces: { key: string; of: RunStates | null; space: RunStates | null } = { key: '', of: null, space: null };

  private closeRecording(): RunStates {
    if (!this.stateSpace) {
      const recordings = this.nodes.map((n) => n.recording);
      if (recordings.some((r) => r === null)) {
        const why = this.endedRecording ? ` (the last recorded run ended early: ${this.endedRecording})` : '';
        throw new Error(`no recorded run${why}: send reset with record, run the workload, then ask for states`);
      }
      this.endRecording(null);
      this.useRecordedRun({ recordings: recordings as Recording[], lastOp: this.gate.opCount });
    }
    return this.stateSpace!;
  }

  /** The run whose states are listed from now on (recorded here, or loaded from a file). */
  private useRecordedRun(run: RecordedRun): void {
    const spaces = run.recordings.map((r) => new StateSpace(r, run.lastOp));
    this.stateSpace = this.isCluster ? new ClusterStateSpace(spaces) : new SingleNodeStates(spaces[0]);
    this.recordedRun = run;
  }

  /** Closes the recordings (the models stay mounted, and their later calls are not recorded); `why` says why if the run was cut short. */
  private endRecording(why: string | null): void {
    for (const n of this.nodes) {
      n.recording?.close();
      n.recording = null;
    }
    this.endedRecording = why;
  }

  /**
   * Writes images under `out` (one node's at out; a cluster's as out/node<k>) and returns the
   * absolute path. `one`: the single tree is a cluster node's, written at out itself.
   */
  private async writeImages(out: string, trees: readonly FsTree[], one: boolean, replace = false): Promise<string> {
    const abs = this.checkOut(out, replace);
    if (!this.isCluster || one) writeTree(trees[0], abs);
    else trees.forEach((t, k) => writeTree(t, join(abs, nodeImageDir(k))));
    return abs;
  }

  /** The trees of an image folder: one node's at `from`, a cluster's in its node<k> folders. */
  private async imageTrees(from: string): Promise<FsTree[]> {
    const abs = this.checkOut(from, false);
    if (!this.isCluster) return [await readTree(abs)];
    return Promise.all(this.nodes.map((n) => readTree(join(abs, nodeImageDir(n.index)))));
  }

  /** `out` as an absolute path outside every node's mount (emptied first with `replace`). */
  private checkOut(out: string, replace: boolean): string {
    const abs = resolve(out);
    for (const { mountpoint } of this.nodes) {
      const rel = relative(resolve(mountpoint), abs);
      // The daemon must never do file I/O on its own mount: it would be serving itself.
      if (rel === '' || (!rel.startsWith('..') && !isAbsolute(rel))) throw new Error(`out ${abs} is inside the mount ${mountpoint}; choose a directory outside it`);
      // Replacing a folder that holds the mount would delete through it (and the daemon would serve itself).
      const up = relative(abs, resolve(mountpoint));
      if (replace && !up.startsWith('..') && !isAbsolute(up)) throw new Error(`out ${abs} holds the mount ${mountpoint}; an image may replace only a folder outside it`);
    }
    if (replace) rmSync(abs, { recursive: true, force: true });
    return abs;
  }

  private serial<T>(fn: () => Promise<T>): Promise<T> {
    const next = this.lifecycle.then(fn, fn);
    this.lifecycle = next.catch(() => undefined);
    return next;
  }
}

/** How many files and directories a tree holds (its root not counted), and its files' bytes. */
function treeSize(t: FsTree | null): StartingStateSize {
  const size: StartingStateSize = { files: 0, dirs: 0, bytes: 0 };
  const visit = (n: FsTree) => {
    if (n.type === 'dir') {
      for (const c of n.entries.values()) {
        if (c.type === 'dir') size.dirs++;
        visit(c);
      }
    } else if (n.type === 'file') {
      size.files++;
      size.bytes += n.data.length;
    }
  };
  if (t) visit(t);
  return size;
}

function sumSizes(sizes: readonly StartingStateSize[]): StartingStateSize {
  return sizes.reduce((a, b) => ({ files: a.files + b.files, dirs: a.dirs + b.dirs, bytes: a.bytes + b.bytes }), { files: 0, dirs: 0, bytes: 0 });
}
