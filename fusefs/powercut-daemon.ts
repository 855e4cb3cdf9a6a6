// The daemon's state machine: one model, one gate, faults, and the current mount; implements every
// control command. Control input is validated before it gets here.
import { rmSync } from 'node:fs';
import { resolve, relative, isAbsolute } from 'node:path';
import { FsModel, processOwner } from './model/fs-model.js';
import { RequestGate } from './request-gate.js';
import type { CrashPolicy, Hypothesis } from './crash-states.js';
import { DEFAULT_MAX_DATA_BYTES, Faults } from './faults.js';
import { mountGeneration, ReplaceFailure, replaceGeneration, unmountGeneration, type Mounted } from './mount-generation.js';
import type { FsState } from './fuse-adapter.js';
import type { ControlAnswer, ControlRequest, StatusAnswer } from './protocol.js';
import { FsyncHolds, type FsyncHoldSchedule } from './fsync-holds.js';
import { writeTree } from './image-files.js';
import type { FsTree } from './model/nodes.js';
import { Recording, RecordingFsModel } from './model/recording.js';
import { StateSpace } from './model/state-space.js';

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
export class PowercutDaemon {
  private state: FsState;
  private mounted: Mounted | null = null;
  /** Generations a failed replacement left mounted beneath the current one (topmost first): unmount() takes them too. */
  private stranded: Mounted[] = [];
  private crashes = 0;
  /** Serialises crash/reset/shutdown so two remounts never overlap. */
  private lifecycle: Promise<unknown> = Promise.resolve();
  /** The run being recorded since `reset` with record, until its states are asked for. */
  private recording: Recording | null = null;
  /** The recorded run's crash states, once `states` closed the recording. */
  private stateSpace: StateSpace | null = null;
  /** Why the last recording ended before its states were asked for (a crash), for the error `states` then gives. */
  private endedRecording: string | null = null;
  onShutdown: () => void = () => {};
  /** A broken invariant: the daemon must stop, saying which (runDaemon unmounts and exits). */
  onFatal: (message: string) => void = (message) => {
    throw new Error(message);
  };

  private readonly maxRecordingBytes: number;

  constructor(readonly mountpoint: string, model = new FsModel(), limits: Partial<DaemonLimits> = {}) {
    this.maxRecordingBytes = limits.maxRecordingBytes ?? DEFAULT_MAX_RECORDING_BYTES;
    const check = limits.checkInvariants ? () => this.checkInvariants() : null;
    this.state = { model, gate: new RequestGate(check), faults: new Faults(limits.maxDataBytes ?? DEFAULT_MAX_DATA_BYTES), fsyncHolds: null, handles: new Map(), nextFd: 1, generation: 0 };
  }

  private fatal = false;
  private checkInvariants(): void {
    if (this.fatal) return;
    try {
      this.state.model.assertInvariants();
    } catch (e) {
      this.fatal = true;
      this.onFatal(`after request ${this.state.gate.opCount}: ${e instanceof Error ? e.message : String(e)}`);
    }
  }

  async mount(): Promise<void> {
    this.mounted = await mountGeneration(this.mountpoint, this.state);
  }

  async unmount(): Promise<void> {
    const all = [...(this.mounted ? [this.mounted] : []), ...this.stranded];
    this.mounted = null;
    this.stranded = [];
    const failures: string[] = [];
    for (const m of all) {
      try {
        await unmountGeneration(m, this.state);
      } catch (e) {
        failures.push(e instanceof Error ? e.message : String(e));
      }
    }
    this.state.gate.disposeHeld();
    if (failures.length > 0) throw new Error(failures.join('; '));
  }

  /**
   * A new generation in place of the mounted one (replaceGeneration): `change` runs while neither
   * serves; the held requests are answered (EIO) once the old one is detached, then numbering restarts.
   */
  private async remount(change: () => void): Promise<void> {
    const old = this.mounted;
    this.mounted = null;
    try {
      this.mounted = await replaceGeneration(this.mountpoint, this.state, old, change, () => {
        this.state.gate.disposeHeld();
        this.state.gate.restart();
      });
    } catch (e) {
      // What the failure left mounted stays reachable: shutdown unmounts it.
      if (e instanceof ReplaceFailure) this.stranded.unshift(...e.stillMounted);
      throw e;
    }
  }

  async handle(req: ControlRequest): Promise<ControlAnswer> {
    const { gate, faults } = this.state;
    switch (req.cmd) {
      case 'status': {
        const a: StatusAnswer = {
          ok: true, mountpoint: this.mountpoint, opCount: gate.opCount, armed: gate.armed,
          frozen: gate.frozenAt !== null, frozenAt: gate.frozenAt, faults: faults.list(), crashes: this.crashes, readFaultsHit: faults.readHits,
        };
        return a as unknown as ControlAnswer;
      }
      case 'arm': {
        const { cmd: _cmd, ...point } = req;
        gate.arm(point);
        return { ok: true };
      }
      case 'disarm':
        gate.disarm();
        return { ok: true };
      case 'wait-frozen': {
        const at = await gate.waitFrozen(req.timeoutMs);
        return at === null ? { ok: true, frozen: false } : { ok: true, frozen: true, frozenAt: at };
      }
      case 'crash':
        return this.serial(() => this.crash(req.policy ?? 'lose-unsynced', req.seed ?? 0));
      case 'trace':
        return { ok: true, trace: gate.trace.all(), marks: gate.marks, ...(gate.trace.truncated ? { truncatedAfter: gate.trace.all().length } : {}) };
      case 'image':
        return { ok: true, out: await this.writeImage(this.state.model.exportTree(req.state ?? 'durable'), req.out) };
      case 'fault': {
        const { cmd: _cmd, ...fault } = req;
        faults.add(fault);
        return { ok: true };
      }
      case 'clear-faults':
        faults.clear();
        return { ok: true };
      case 'reset':
        return this.serial(() => this.reset(req.record ?? false, req.fsyncHolds));
      case 'states': {
        const { cmd: _cmd, policies, hypothesis, ...caps } = req;
        return { ok: true, ...this.space(hypothesis).enumerate(policies, caps) };
      }
      case 'load-state': {
        const space = this.space(req.hypothesis);
        const model = req.probe ? space.buildProbe(req.state, req.probe) : space.build(req.state);
        return this.serial(() => this.swapModel(model));
      }
      case 'state-image': {
        const space = this.space(req.hypothesis);
        const tree = (req.probe ? space.buildProbe(req.state, req.probe) : space.build(req.state)).exportTree('durable');
        return { ok: true, out: await this.writeImage(tree, req.out, req.replace ?? false) };
      }
      case 'units':
        return { ok: true, units: this.space(req.hypothesis).lostUnits(req.state) };
      case 'shutdown':
        return this.serial(async () => {
          await this.unmount();
          setImmediate(() => this.onShutdown());
          return { ok: true };
        });
    }
  }

  private async crash(policy: CrashPolicy, seed: number): Promise<ControlAnswer> {
    const t0 = performance.now();
    // A power cut ends a recorded run: requests are numbered from 1 again after it, so what follows
    // cannot be replayed as part of the run. (A crash during the recovery of a loaded state, after
    // `states` ended the recording, keeps the state space: the harness loads the next state from it.)
    if (this.recording) this.endRecording(`a crash came after request ${this.state.gate.opCount} of the recorded run, which ended it`);
    // The held requests are answered only once the old mount is detached, so no live mount sees the answers.
    let partialWrites = 0;
    await this.remount(() => {
      partialWrites = this.state.model.crash(policy, seed).partialWrites;
      this.state.handles.clear();
      this.state.fsyncHolds = null;
    });
    this.crashes++;
    return { ok: true, policy, seed, remountMs: Math.round(performance.now() - t0), tornPartialWrites: partialWrites };
  }

  /**
   * An empty filesystem; with `record`, every change of the run that follows is recorded for its
   * crash states; with `holds`, its fsyncs are slow on that schedule until the next reset or crash.
   */
  private async reset(record: boolean, holds?: FsyncHoldSchedule): Promise<ControlAnswer> {
    this.stateSpace = null;
    this.endRecording(null);
    this.recording = record ? new Recording(processOwner(), this.maxRecordingBytes) : null;
    const model = this.recording ? new RecordingFsModel(this.recording, () => this.state.gate.opCount) : new FsModel();
    await this.swapModel(model);
    this.state.fsyncHolds = holds ? new FsyncHolds(holds) : null;
    return { ok: true };
  }

  /**
   * Replaces the filesystem behind the mount: handles, faults, counters and the trace start afresh.
   * Frozen, the held requests belong to processes that may still run: detach first (as crash does)
   * so they, and anything else they do on the old mount, get errors instead of the new filesystem.
   * Otherwise the kernel caches nothing (zero timeouts) and the mount stays.
   */
  private async swapModel(model: FsModel): Promise<ControlAnswer> {
    const change = () => {
      this.state.model = model;
      this.state.handles.clear();
      this.state.faults.clear();
      this.state.fsyncHolds = null;
    };
    if (this.state.gate.frozenAt !== null || this.state.gate.heldCount > 0) await this.remount(change);
    else {
      change();
      this.state.gate.restart();
    }
    return { ok: true };
  }

  /** The recorded run's state space; the first call ends the recording (later changes are recovery's). */
  /** The recorded run's state space, or the one of a hypothesis about it (kept while the recording is). */
  private space(hypothesis: Hypothesis | undefined): StateSpace {
    const space = this.closeRecording();
    if (!hypothesis || (hypothesis.fsyncAfter.length === 0 && !hypothesis.fsyncSkip?.length)) return space;
    const key = JSON.stringify(hypothesis);
    if (this.hypothesisSpaces.key !== key || this.hypothesisSpaces.of !== space) this.hypothesisSpaces = { key, of: space, space: space.withHypothesis(hypothesis) };
    return this.hypothesisSpaces.space!;
  }
  private hypothesisSpaces: { key: string; of: StateSpace | null; space: StateSpace | null } = { key: '', of: null, space: null };

  private closeRecording(): StateSpace {
    if (!this.stateSpace) {
      if (!this.recording) {
        const why = this.endedRecording ? ` (the last recorded run ended early: ${this.endedRecording})` : '';
        throw new Error(`no recorded run${why}: send reset with record, run the workload, then ask for states`);
      }
      const recording = this.recording;
      this.endRecording(null);
      this.stateSpace = new StateSpace(recording, this.state.gate.opCount);
    }
    return this.stateSpace;
  }

  /** Closes the recording (the model stays mounted, and its later calls are not recorded); `why` says why if the run was cut short. */
  private endRecording(why: string | null): void {
    this.recording?.close();
    this.recording = null;
    this.endedRecording = why;
  }

  /** Writes an image under `out` and returns its absolute path. */
  private async writeImage(tree: FsTree, out: string, replace = false): Promise<string> {
    const abs = resolve(out);
    const rel = relative(resolve(this.mountpoint), abs);
    // The daemon must never do file I/O on its own mount: it would be serving itself.
    if (rel === '' || (!rel.startsWith('..') && !isAbsolute(rel))) throw new Error(`out ${abs} is inside the mount ${this.mountpoint}; choose a directory outside it`);
    if (replace) {
      // Replacing a folder that holds the mount would delete through it (and the daemon would serve itself).
      const up = relative(abs, resolve(this.mountpoint));
      if (!up.startsWith('..') && !isAbsolute(up)) throw new Error(`out ${abs} holds the mount ${this.mountpoint}; an image may replace only a folder outside it`);
      rmSync(abs, { recursive: true, force: true });
    }
    writeTree(tree, abs);
    return abs;
  }

  private serial<T>(fn: () => Promise<T>): Promise<T> {
    const next = this.lifecycle.then(fn, fn);
    this.lifecycle = next.catch(() => undefined);
    return next;
  }
}
