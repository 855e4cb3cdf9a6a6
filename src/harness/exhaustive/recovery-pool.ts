// Where the crash states of a recorded run are recovered. A state that needs nothing of the mount
// during its recovery (no second cut) is recovered natively: the daemon writes its image into a
// scratch directory on tmpfs and a driver recovers, drains and checks liveness there, as ALICE checks
// its reconstructed states; FUSE costs about 50-100 us a request, a tmpfs call a few us. Several
// such slots work at once, each with its own directory and driver. A state with a recovery cut is
// recovered on the mount, one at a time. Both ways must give the same verdicts (recovery-pool.test.ts
// and properties/native-equivalence.test.ts prove it).
import { existsSync } from 'node:fs';
import { cp, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { CrashStateInfo } from '../../../fusefs/crash-states.js';
import { ID_BASE_PER_RUN, recoverWithCut, specFor, type CrashCase } from '../crash-run.js';
import type { DaemonHandle } from '../daemon-process.js';
import type { DriverSpec } from '../driver-spec.js';
import { DriverWorker, runDriver, type DriverRun, type DriverTimeouts } from '../driver-process.js';
import { judge, type RunRecord, type Violation } from '../oracle.js';
import type { Target } from '../target.js';

export type RecoverOn = 'native' | 'mount';

/** What recovering one state gave: the recovery runs (two with a recovery cut), their stderr, and whether that cut landed. */
export interface Recovery {
  runs: RunRecord[];
  stderr: string[];
  landed: boolean;
  on: RecoverOn;
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
  const scratch = await mkdtemp(path.join(scratchRoot(), 'powercut-replay-native-'));
  try {
    const dir = path.join(scratch, 'queue');
    await cp(imageDir, dir, { recursive: true, preserveTimestamps: true, verbatimSymlinks: true });
    const spec: DriverSpec = { mode: 'drain', dir, settings: c.recoverySettings ? { ...c.settings, ...c.recoverySettings } : c.settings, ...(c.variant !== undefined ? { variant: c.variant } : {}), idBase: priorRuns.length * ID_BASE_PER_RUN };
    const run = await runDriver({} as DaemonHandle, target.driver, spec, false, timeouts); // unarmed: the daemon is never asked
    return { final: run.record, violations: judge({ target: target.name, faultsInjected: false, runs: [...priorRuns, run.record] }) };
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}

interface Slot {
  worker: DriverWorker;
  dir: string;
}

export class RecoveryPool {
  /** How many states may be recovered at once. */
  readonly size: number;
  private readonly slots: Slot[] = [];
  private scratch: Promise<string> | undefined;
  private images = 0;

  constructor(
    private readonly daemon: DaemonHandle,
    private readonly target: Target,
    /** Does the target's driver serve many specs in one process (its hello said so)? */
    private readonly serves: boolean,
    private readonly on: RecoverOn,
    workers: number,
    private readonly timeouts: DriverTimeouts,
  ) {
    if (!Number.isInteger(workers) || workers < 1) throw new Error(`invariant: recovery workers must be an integer >= 1, got ${workers}`);
    this.size = on === 'mount' ? 1 : workers;
  }

  /** Driver processes started so far (for the benchmark). */
  get driverStarts(): number {
    return this.slots.reduce((n, s) => n + s.worker.starts, 0);
  }

  /**
   * Recovers the image `state` leaves, in slot `slot` (0 <= slot < size), as the drain run of
   * `c` (its recovery cut, if it has one, makes it a mount recovery whatever the pool's choice).
   */
  async recover(slot: number, state: CrashStateInfo, c: CrashCase): Promise<Recovery> {
    if (c.recoveryCut) {
      await this.daemon.client.loadState(state.id);
      const r = await recoverWithCut(this.daemon, this.target, c, this.timeouts);
      return { runs: r.runs, stderr: r.stderr, landed: r.landed, on: 'mount' };
    }
    if (this.on === 'mount') {
      await this.daemon.client.loadState(state.id);
      const run = await this.drain(slot, specFor(this.daemon, c, 'drain', 1));
      return { runs: [run.record], stderr: [run.stderr], landed: false, on: 'mount' };
    }
    const s = await this.slot(slot);
    const dir = path.join(s.dir, String(++this.images));
    try {
      await this.daemon.client.stateImage(state.id, dir);
      const run = await this.drain(slot, { ...specFor(this.daemon, c, 'drain', 1), dir });
      return { runs: [run.record], stderr: [run.stderr], landed: false, on: 'native' };
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }

  async stop(): Promise<void> {
    await Promise.all(this.slots.map((s) => s.worker.stop()));
    if (this.scratch) await rm(await this.scratch, { recursive: true, force: true });
  }

  private async drain(slot: number, spec: DriverSpec): Promise<DriverRun> {
    return this.serves ? (await this.slot(slot)).worker.run(spec) : runDriver(this.daemon, this.target.driver, spec, false, this.timeouts);
  }

  private async slot(i: number): Promise<Slot> {
    if (i < 0 || i >= this.size) throw new Error(`invariant: recovery slot ${i} is not in 0..${this.size - 1}`);
    this.scratch ??= mkdtemp(path.join(scratchRoot(), 'powercut-recover-'));
    const scratch = await this.scratch;
    this.slots[i] ??= { worker: new DriverWorker(this.target.driver, this.timeouts), dir: path.join(scratch, `slot-${i}`) };
    return this.slots[i];
  }
}
