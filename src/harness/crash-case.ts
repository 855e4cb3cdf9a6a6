// What one crash case is (case.json of an artifact) and what judging it gives: the shapes shared by
// the runs that produce them (crash-run.ts, exhaustive/) and the artifacts that store them.
import type { CrashStateId, Mark, StateCaps } from '../../fusefs/crash-states.js';
import type { FsyncHoldSchedule } from '../../fusefs/fsync-holds.js';
import type { CrashPoint, CrashPolicy, Fault, TraceEntry } from '../../fusefs/protocol.js';
import type { Cause } from './cause/cause.js';
import type { Coverage } from './coverage.js';
import type { RunRecord, Violation } from './oracle.js';
import type { TargetRef, TargetSettings } from './target.js';
import type { Workload } from './workload.js';

export interface CutSpec {
  cut: CrashPoint;
  policy: CrashPolicy;
  seed: number;
}

/** Everything that determines one crash run; stored as case.json in an artifact. */
export interface CrashCase extends TargetRef {
  workload: Workload;
  settings: TargetSettings;
  /** A known-bad variant the target offers, by name; absent = the correct queue. */
  variant?: string;
  /** Where the power is cut. Absent: the cut comes after the workload driver exits (fault runs). */
  cut?: CrashPoint;
  policy: CrashPolicy;
  seed: number;
  /** Armed before the workload, cleared before the cut. */
  faults?: Fault[];
  /**
   * Read faults (read-eio, bitflip) armed after the first cut and kept for every recovery run: the
   * disk the queue recovers from is damaged. The queue must report the damage or deliver intact
   * data; dropping or corrupting what it confirmed, silently, is a violation.
   */
  recoveryFaults?: Fault[];
  /** A second power cut during the recovery drain (request numbers restart at 1 after a cut). */
  recoveryCut?: CutSpec;
  /** Settings merged over `settings` for every run after the first cut (e.g. a format migration on restart). */
  recoverySettings?: TargetSettings;
  /** Exhaustive mode: the crash state of the recorded run this case checks (then `cut` is absent). */
  state?: CrashStateId;
  /** Exhaustive mode: the caps the state was found under; a replay enumerates with the same. */
  stateCaps?: StateCaps;
  /** Exhaustive mode: where the state's recovery ran, natively on a copy of its image or on the mount; replay runs both. */
  recoveredOn?: 'native' | 'mount';
  /** Exhaustive mode: the slow-fsync schedule the workload was recorded with; a replay records with the same. */
  fsyncHolds?: FsyncHoldSchedule;
}

export interface CutRecord {
  /** Op number the filesystem froze at, or null when the driver exited first (cut after the run). */
  frozenAt: number | null;
  /** The mutating requests of the run, as the daemon answered them, up to the cut. */
  trace: TraceEntry[];
  /** Writes the torn policy kept only in part at this cut (0 for other policies). */
  tornPartialWrites?: number;
  /** Exhaustive mode: where each confirmation of the recorded run happened in the trace. */
  marks?: Mark[];
}

export interface CaseResult {
  case: CrashCase;
  runs: RunRecord[];
  cuts: CutRecord[];
  violations: Violation[];
  verdict: 'pass' | 'fail';
  coverage: Coverage;
  /** Set when a violation was found and an artifact written. */
  artifactDir?: string;
  durationMs: number;
  /** stderr of each driver run (diagnostics; empty normally). */
  stderr: string[];
  /** Why it failed (exhaustive mode, when asked: the cause search). */
  cause?: Cause;
}
