// Where the crash states of a recorded run are recovered. A state that needs nothing of the mount
// during its recovery (no second cut) is recovered natively: the daemon writes its image into a
// scratch directory on tmpfs and a driver recovers, drains and checks liveness there, as ALICE checks
// its reconstructed states; FUSE costs about 50-100 us a request, a tmpfs call a few us. Several
// such slots work at once, each with its own directory and driver. A state with a recovery cut is
// recovered on the mount, one at a time. Both ways must give the same verdicts (recovery-pool.test.ts
// and properties/native-equivalence.test.ts prove it).
import { existsSync } from 'node:fs';
import { cp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { CrashStateInfo, Hypothesis, ProbeUnit } from '../../../fusefs/crash-states.js';
import { recoverWithCut, specFor } from '../crash-run.js';
import type { CrashCase, CutSpec } from '../crash-case.js';
import type { DaemonHandle } from '../daemon-process.js';
import type { DriverSpec } from '../driver-spec.js';
import { runDriver, type DriverRun, type DriverTimeouts, type DriverWorker } from '../driver-process.js';
import type { DriverWorkers } from '../driver-workers.js';
import { judge, type RunRecord, type Violation } from '../oracle.js';
import type { Target } from '../target.js';
import { runFolder } from '../run-folder.js';

export type RecoverOn = 'native' | 'mount';

/** What recovering one state gave: the recovery runs (two with a recovery cut), their stderr, and whether that cut landed. */
export interface Recovery {
  runs: RunRecord[];
  stderr: string[];
  landed: boolean;
  on: RecoverOn;
  /** Time spent putting the state in place (its image written, or loaded behind the mount), then recovering it. */
  placeMs: number;
  recoverMs: number;
}

/** tmpfs when the machine has one (fsync costs nothing there), else the system's temporary folder. */
export function scratchRoot(): string {
  return existsSync('/dev/shm') ? '/dev/shm' : os.tmpdir();
}

/**
 * Recovers a stored image natively, as the pool does (replay's check that both ways agree): a copy
 * of `imageDir` on tmpfs, the drain run of `c` on it, the judgement of `priorRuns` plus that drain.
 */
export async function recoverImageNatively(target: Target, c: CrashCase, imageDir: string, priorRuns: RunRecord[], timeouts: DriverTimeouts): Promise<{ final: RunRecord; violations: Violation[] }> {
  const scratch = await runFolder(path.join(scratchRoot(), 'powercut-replay-native-'));
  try {
    const dir = path.join(scratch, 'queue');
    await cp(imageDir, dir, { recursive: true, preserveTimestamps: true, verbatimSymlinks: true });
    const run = await runDriver(null, target.driver, specFor(dir, c, 'drain', priorRuns.length), false, timeouts);
    return { final: run.record, violations: judge({ target: target.name, faultsInjected: false, runs: [...priorRuns, run.record] }) };
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}

/** A state put in place for recovery: natively, the directory its image was written to. */
export interface Prepared {
  state: CrashStateInfo;
  c: CrashCase;
  dir?: string;
  placeMs: number;
  /** A probe's units made durable too, or a hypothesis about the run (the cause search): what the state's image is built with. */
  extras: ImageExtras;
}

/** What a state's image is built with besides the state (control-client stateImage). */
export interface ImageExtras {
  probe?: ProbeUnit[];
  hypothesis?: Hypothesis;
}

interface Slot {
  worker: DriverWorker;
  dir: string;
  /** Images written for it so far (they alternate between two directories). */
  images: number;
}

export class RecoveryPool {
  /** How many states may be recovered at once. */
  readonly size: number;
  private readonly slots: Slot[] = [];
  private scratch: Promise<string> | undefined;

  private mountLane: Promise<void> = Promise.resolve();
  private readonly redrawnCuts = new Map<string, CutSpec>();

  constructor(
    private readonly daemon: DaemonHandle,
    private readonly target: Target,
    /** Does the target's driver serve many specs in one process (its hello said so)? */
    private readonly serves: boolean,
    private readonly on: RecoverOn,
    workers: number,
    private readonly timeouts: DriverTimeouts,
    /** Where the slots' serving drivers come from (kept alive by the caller across runs). */
    private readonly drivers: DriverWorkers,
  ) {
    if (!Number.isInteger(workers) || workers < 1) throw new Error(`invariant: recovery workers must be an integer >= 1, got ${workers}`);
    this.size = on === 'mount' ? 1 : workers;
  }


  /**
   * Puts state `state` in place for slot `slot`: natively, writes its image into a fresh directory
   * (the daemon can do that while the slot's driver still recovers the previous one); on the
   * mount, nothing yet (the mount holds one state at a time: recover() loads it).
   */
  async prepare(slot: number, state: CrashStateInfo, c: CrashCase, extras: ImageExtras = {}): Promise<Prepared> {
    const started = performance.now();
    if (c.recoveryCut || this.on === 'mount') return { state, c, placeMs: 0, extras };
    const s = await this.slot(slot);
    // Two directories a slot, in turn: one is written while the other is recovered, and the daemon
    // empties the one it writes (no removal on this process's path).
    const dir = path.join(s.dir, String(s.images++ % 2));
    await this.daemon.client.stateImage(state.id, dir, true, extras);
    return { state, c, dir, placeMs: performance.now() - started, extras };
  }

  /** Recovers a prepared state in its slot, as the drain run of its case (a recovery cut makes it a mount recovery). */
  async recover(slot: number, p: Prepared): Promise<Recovery> {
    const started = performance.now();
    const done = (r: Omit<Recovery, 'placeMs' | 'recoverMs'>, placedAt: number): Recovery => ({ ...r, placeMs: p.placeMs + placedAt - started, recoverMs: performance.now() - placedAt });
    if (p.c.recoveryCut) {
      await this.daemon.client.loadState(p.state.id, p.extras);
      const placed = performance.now();
      const r = await recoverWithCut(this.daemon, this.target, p.c, this.timeouts, () => this.daemon.client.loadState(p.state.id, p.extras));
      if (r.cut !== p.c.recoveryCut) this.redrawnCuts.set(p.state.hash, r.cut);
      return done({ runs: r.runs, stderr: r.stderr, landed: r.landed, on: 'mount' }, placed);
    }
    if (p.dir === undefined) {
      await this.daemon.client.loadState(p.state.id, p.extras);
      const placed = performance.now();
      const run = await this.drain(slot, specFor(this.daemon.mountpoint, p.c, 'drain', 1));
      return done({ runs: [run.record], stderr: [run.stderr], landed: false, on: 'mount' }, placed);
    }
    const run = await this.drain(slot, { ...specFor(this.daemon.mountpoint, p.c, 'drain', 1), dir: p.dir });
    return done({ runs: [run.record], stderr: [run.stderr], landed: false, on: 'native' }, started);
  }

  /**
   * Recovers a prepared state on the mount as well, one at a time (the mount holds one state), in a
   * driver of its own: for comparing both ways (ExhaustiveOptions.verifyOnMount).
   */
  recoverOnMount(p: Prepared): Promise<Recovery> {
    const run = this.mountLane.then(async () => {
      const started = performance.now();
      await this.daemon.client.loadState(p.state.id, p.extras);
      const placed = performance.now();
      const spec = specFor(this.daemon.mountpoint, p.c, 'drain', 1);
      const r = this.serves ? await this.drivers.get(this.target.driver, 'mount').run(spec) : await runDriver(this.daemon, this.target.driver, spec, false, this.timeouts);
      return { runs: [r.record], stderr: [r.stderr], landed: false, on: 'mount' as const, placeMs: placed - started, recoverMs: performance.now() - placed };
    });
    this.mountLane = run.then(() => undefined, () => undefined);
    return run;
  }

  /** A pool like this one recovering on another daemon's mount, one state at a time (a recorded recovery's states). */
  onDaemon(daemon: DaemonHandle): RecoveryPool {
    return new RecoveryPool(daemon, this.target, this.serves, 'mount', 1, this.timeouts, this.drivers);
  }

  /** The recovery cut a state's recovery ran with, when it was drawn again within that recovery's requests. */
  redrawnCut(hash: string): CutSpec | undefined {
    return this.redrawnCuts.get(hash);
  }

  /** Removes the pool's scratch folder (the drivers are the caller's). */
  async stop(): Promise<void> {
    if (this.scratch) await rm(await this.scratch, { recursive: true, force: true });
  }

  private async drain(slot: number, spec: DriverSpec): Promise<DriverRun> {
    return this.serves ? (await this.slot(slot)).worker.run(spec) : runDriver(this.daemon, this.target.driver, spec, false, this.timeouts);
  }

  private async slot(i: number): Promise<Slot> {
    if (i < 0 || i >= this.size) throw new Error(`invariant: recovery slot ${i} is not in 0..${this.size - 1}`);
    this.scratch ??= runFolder(path.join(scratchRoot(), 'powercut-recover-'));
    const scratch = await this.scratch;
    this.slots[i] ??= { worker: this.drivers.get(this.target.driver, `slot-${i}`), dir: path.join(scratch, `slot-${i}`), images: 0 };
    return this.slots[i];
  }
}
