// A driver's starting state (docs/driver-protocol.md, "A starting state"): what its engine needs
// before any workload can run (an initialised database directory, a schema), prepared once by the
// driver's setup run on the mount, made durable as a whole and kept by the daemon, so every later
// reset (each workload, recording, drain on the mount, driver check run) starts from a copy of it.
// It is no part of any recorded run: no crash state, cut or fault falls inside it, so the states
// listed and the faults injected are the engine's own work, not its initialisation. A driver with
// no setup exits 2 on the setup spec (as on any spec it cannot read), or prints hello without
// "setup": true and done: its runs start from an empty directory, as before.
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { StartingStateSize } from '../../fusefs/protocol.js';
import { copyStoredImage } from './artifacts.js';
import type { DaemonHandle } from './daemon-process.js';
import { mergeTimeouts, runDriverProcess, type DriverCommand, type DriverTimeouts } from './driver-process.js';
import type { DriverSpec } from './driver-spec.js';
import { HarnessError } from './harness-error.js';
import { DRIVER_EXIT, helloOf } from './outcome.js';
import type { TargetSettings } from './target.js';

/** A setup run's bound: an engine's initialisation (initdb: 8 s alone on the mount) takes longer than a workload. */
export const SETUP_RUN_MS = 120_000;

/** A starting state made by a driver's setup: its size, summed over the nodes (each node's too for a cluster), and the setup's time. */
export interface StartingState extends StartingStateSize {
  /** A cluster's: each node's. */
  nodes?: StartingStateSize[];
  setupMs: number;
}

/** The lines a setup run may print: hello, a cluster's node lines, done (or error, when it failed). */
const SETUP_LINES = new Set(['hello', 'node', 'done', 'error']);

/** The spec of the setup run on the daemon's mounts (a cluster's nodes listed, as its workloads' are). */
export function setupSpec(daemon: DaemonHandle, settings: TargetSettings): DriverSpec {
  const dirs = daemon.mountpoints;
  return { mode: 'setup', dir: dirs[0], settings, idBase: 0, ...(dirs.length > 1 ? { nodes: dirs.map((dir, node) => ({ node, dir })) } : {}) };
}

/**
 * Runs the driver's setup once on the daemon's (emptied) mounts and, when it has one (its hello
 * says "setup": true, then done), keeps what it left as the starting state every later reset starts
 * from. Null when the driver has none: the mounts are empty again. A setup that fails (an error
 * line, a hang, lines a setup does not print) is the tool's failure, named. (Only a target that
 * asks for it, Target.asksSetup, is sent a setup spec.)
 */
export async function prepareStartingState(daemon: DaemonHandle, driver: DriverCommand, settings: TargetSettings, partial: Partial<DriverTimeouts> = {}): Promise<StartingState | null> {
  const started = performance.now();
  await daemon.client.startingState({ clear: true });
  const timeouts = mergeTimeouts({ runMs: SETUP_RUN_MS, ...partial });
  const run = await runDriverProcess(daemon, driver, setupSpec(daemon, settings), timeouts, undefined, { exitCodes: [DRIVER_EXIT.usage] });
  const r = run.record;
  const said = () => (run.stderr.trim() ? `; its stderr ends:\n  ${run.stderr.trim().split('\n').slice(-10).join('\n  ')}` : '');
  if (r.hung) throw new HarnessError(`the driver's setup run (a spec of mode "setup") did not finish within ${timeouts.runMs} ms${said()}`);
  const hello = helloOf(r.outcomes);
  // No setup: the spec was one it cannot read (exit 2), or its hello declares none. Whatever it did is dropped.
  if (r.exitCode === DRIVER_EXIT.usage || hello?.setup !== true) {
    await daemon.client.reset();
    return null;
  }
  const error = r.outcomes.find((o) => o.t === 'error');
  if (error?.t === 'error' || r.exitCode !== DRIVER_EXIT.ok) {
    throw new HarnessError(`the driver's setup run failed${error?.t === 'error' ? ` at ${error.where}: ${error.message}` : ` (exit ${r.exitCode})`}${said()}`);
  }
  const other = r.outcomes.find((o) => !SETUP_LINES.has(o.t));
  if (other) throw new HarnessError(`the driver's setup run printed a "${other.t}" line: a setup run prints its hello line (with "setup": true), a cluster's node lines, and done, and nothing of a workload`);
  if (r.outcomes[r.outcomes.length - 1]?.t !== 'done') throw new HarnessError('the driver\'s setup run exited 0 without its done line');
  const sizes = await daemon.client.startingState();
  const sum = sizes.reduce((a, b) => ({ files: a.files + b.files, dirs: a.dirs + b.dirs, bytes: a.bytes + b.bytes }));
  return { ...sum, ...(sizes.length > 1 ? { nodes: sizes } : {}), setupMs: Math.round(performance.now() - started) };
}

/** In words, for the gate and driver check: its size and that it was not tested. */
export function describeStartingState(s: StartingState | null): string {
  if (!s) return 'none (the driver has no setup: every run starts from an empty directory)';
  const mib = s.bytes >= 1024 * 1024 ? `${(s.bytes / 1024 / 1024).toFixed(1)} MiB` : `${Math.ceil(s.bytes / 1024)} KiB`;
  return `${s.files} files in ${s.dirs} directories, ${mib}${s.nodes ? ` on ${s.nodes.length} nodes` : ''}, made by the driver's setup run in ${(s.setupMs / 1000).toFixed(1)} s; ` +
    'every run starts from a copy of it, durable; it is not tested (no crash state, cut or fault falls inside it)';
}

/** Where an artifact keeps the starting state its case started from (an image, a cluster's with node<k> folders). */
export const STARTING_STATE_IMAGE = 'starting-state';

/** Writes the daemon's starting state, if it has one, into `imagesDir` (an artifact's images): its re-runs start from it. */
export async function keepStartingState(daemon: DaemonHandle, imagesDir: string): Promise<void> {
  if ((await daemon.client.status()).startingState) await daemon.client.image(path.join(imagesDir, STARTING_STATE_IMAGE), 'start');
}

/** Loads the starting state an artifact kept (images/starting-state), if any, so that what runs on `daemon` starts from it as its case did. */
export async function useStoredStartingState(daemon: DaemonHandle, artifactDir: string): Promise<void> {
  const image = path.join(artifactDir, 'images', STARTING_STATE_IMAGE);
  if (!existsSync(image)) return;
  // A copy with every folder it had (an artifact from a clone lacks the empty ones).
  const scratch = await mkdtemp(path.join(os.tmpdir(), 'powercut-starting-state-'));
  try {
    await copyStoredImage(artifactDir, STARTING_STATE_IMAGE, path.join(scratch, 'image'));
    await daemon.client.startingState({ from: path.join(scratch, 'image') });
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}
