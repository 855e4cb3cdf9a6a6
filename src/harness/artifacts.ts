// Failure artifacts: one folder per failing case with everything needed to understand and replay it
// (docs/design.md, "Artifacts"). Layout:
//   case.json                 target, workload, settings, variant, crash point or crash state, policy, seed, faults, second cut
//   violations.json / .txt    the violated checks and their messages (empty for a harness error)
//   harness-error.txt         only when the tool itself failed: what happened, the daemon's exit status and stderr
//   outcomes/run-K-ROLE.jsonl each driver's outcome lines (run 0 = workload, last = final drain)
//   trace-cut-K.json / .txt   the mutating requests up to cut K (the .txt marks the cut)
//   images/cut-K-durable, images/cut-K-live   the filesystem at cut K, as ordinary files
//   images/cut-K-after-crash  what recovery started from (after the policy was applied)
//   images/NAME.dirs.json     every folder of image NAME: git keeps no empty folder, and an empty
//                             folder (a stream's msgs/, a whole empty disk) is part of a crash state
//   stderr/run-K.txt          driver diagnostics, when there were any
//   cause.json                why it failed (exhaustive mode): the cause search's finding, its probes, proof and reach
//   recording/                a cluster's crash state: the daemon's recording of the run (calls.json.gz:
//                             every node's filesystem calls with their data) and the workload run whole
//                             (run.json), so explain searches the state itself, exactly, not a re-run
//   replay.sh                 the one command that replays it, from any checkout
//   written-at.txt            when it was written (the folder's name holds no time: the same case
//                             gets the same name on any machine, so runs and people can compare them)
// A cluster's artifact (writeClusterArtifact) has the same layout: case.json adds `nodes` and, for a
// live cut, `nodesCut`; the trace's entries carry `node`; images/cut-0-after-crash/nodeK is node k's
// disk in a crash state, or, for a live cut, the durable disk of each node the cut took, as it was
// at the cut (before the node restarted on it).
import { cp, mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import path from 'node:path';
import type { Cause } from './cause/cause.js';
import type { CaseResult, CrashCase, CutRecord } from './crash-case.js';
import { emptyCoverage } from './coverage.js';
import type { HarnessError } from './harness-error.js';
import type { Mark } from '../../fusefs/crash-states.js';
import { nodeImageDir, type TraceEntry } from '../../fusefs/protocol.js';
import type { DriverRun } from './driver-process.js';
import type { RunRecord, Violation } from './oracle.js';
import { parseOutcomes } from './outcome.js';
import { formatTrace } from './trace-format.js';
import { parseWorkload } from './workload.js';

/** The environment variable naming the one artifacts root of the gate, the suites and the scenarios. */
export const ARTIFACTS_ENV = 'POWERCUT_ARTIFACTS';
export const DEFAULT_ARTIFACTS_DIR = 'powercut-artifacts';

/** Where failure artifacts go unless a command says otherwise: $POWERCUT_ARTIFACTS, else ./powercut-artifacts. */
export function defaultArtifactRoot(): string {
  return path.resolve(process.env[ARTIFACTS_ENV] || DEFAULT_ARTIFACTS_DIR);
}

export interface StoredArtifact {
  dir: string;
  case: CrashCase;
  runs: RunRecord[];
  cuts: CutRecord[];
  violations: Violation[];
  /** What each run printed on stderr (stderr/run-K.txt; '' when it printed nothing). */
  stderr: string[];
  /** Set when the artifact records a failure of the tool, not a violation. */
  harnessError?: string;
  /** Why it failed, when a cause search ran (cause.json). */
  cause?: Cause;
  /** The recorded run its crash state is one of (a cluster's state, recording/). */
  recording?: StoredRecording;
}

/** An artifact's recorded run: the daemon's file of it (load-recording) and the workload run as it was recorded. */
export interface StoredRecording {
  callsFile: string;
  run: DriverRun;
}

/** The folder of an artifact holding its recorded run, and its files. */
const RECORDING_DIR = 'recording';
const RECORDING_CALLS = 'calls.json.gz';
const RECORDING_RUN = 'run.json';

/**
 * Keeps the recorded run a cluster's crash state is one of in its artifact: `saveCalls` has the
 * daemon that holds it write its calls to the file it is given; `run` is the workload run whole.
 */
export async function writeRecording(dir: string, saveCalls: (file: string) => Promise<void>, run: DriverRun): Promise<void> {
  await mkdir(path.join(dir, RECORDING_DIR), { recursive: true });
  await saveCalls(path.join(dir, RECORDING_DIR, RECORDING_CALLS));
  await writeFile(path.join(dir, RECORDING_DIR, RECORDING_RUN), json(run));
}

function readRecording(dir: string): StoredRecording | undefined {
  const callsFile = path.join(dir, RECORDING_DIR, RECORDING_CALLS);
  if (!existsSync(callsFile)) return undefined;
  const runFile = path.join(dir, RECORDING_DIR, RECORDING_RUN);
  const run = readJson(runFile) as DriverRun;
  if (typeof run !== 'object' || run === null || !Array.isArray(run.record?.outcomes) || typeof run.stderr !== 'string') {
    throw new Error(`${runFile}: must be the recorded workload run {record: {outcomes: [...], ...}, stderr, frozenAt}`);
  }
  return { callsFile, run };
}

/** The file of an artifact that holds its cause. */
export const CAUSE_FILE = 'cause.json';

/** How a user replays an artifact folder: `powercut replay DIR`. */
export function replayCommand(dir: string): string {
  return `powercut replay ${dir}`;
}

/**
 * How `powercut replay` re-runs an artifact's case. 'exact': the re-run repeats the recorded run (one
 * process issuing its requests in one order), so its verdict is the verdict. 'sample': concurrent
 * requests (several nodes, or concurrent producers on one disk) interleave anew in every run, so a
 * re-run is one draw among many; replay re-runs it several times and says how often it reproduced.
 * Stored images (a crash state's, a coordinated live cut's) are recovered exactly in both modes.
 */
export type ReplayMode = 'exact' | 'sample';

/** Re-runs of a sampled replay unless `--reruns` says otherwise: enough to tell a rare reproduction from a common one, few enough for a cluster's minute. */
export const DEFAULT_REPLAY_RERUNS = 5;

/** The artifact's replay mode and why, read off its case alone (what replay and the gate's summary both say). */
export function replayModeOf(c: CrashCase): { mode: ReplayMode; why: string } {
  if (isClusterCase(c)) return { mode: 'sample', why: `its ${c.nodes} nodes run concurrently${c.state ? '' : ' and the live cut lands among their requests'}` };
  if (c.workload.steps.some((s) => s.op === 'concurrently')) return { mode: 'sample', why: 'its workload has a concurrently step' };
  return { mode: 'exact', why: 'one process issues its requests in one order' };
}

/**
 * Whether `powercut replay` recovers the artifact in `dir` from stored disks, exactly as the failure
 * saw them: it holds the disk after its last cut (a cluster's: every node's, or their folder lists)
 * and a run after the cut to replay its recovery against. A live cut of some nodes keeps only the cut
 * nodes' disks (the others ran on), so only its re-runs judge it.
 */
export function storesDisksAfterCut(dir: string, c: CrashCase): boolean {
  const outcomes = path.join(dir, 'outcomes');
  const runs = existsSync(outcomes) ? readdirSync(outcomes).filter((f) => f.endsWith('.jsonl')).length : 0;
  if (runs < 2) return false;
  let last = -1;
  while (existsSync(path.join(dir, `trace-cut-${last + 1}.json`))) last++;
  if (last < 0) return false;
  const name = `cut-${last}-after-crash`;
  const image = path.join(dir, 'images', name);
  if (!isClusterCase(c)) return existsSync(image) || existsSync(image + FOLDER_LIST_SUFFIX);
  if (!c.state && c.nodesCut !== 'all') return false;
  const listed = storedImageFolders(dir, name);
  return Array.from({ length: c.nodes }, (_, k) => nodeImageDir(k)).every((n) => existsSync(path.join(image, n)) || listed.includes(n));
}

/** What a gate's failure says of replaying its artifact: whether the re-runs are exact or a sample, and whether stored disks replay exactly. */
export interface ReplayFacts {
  replayMode: ReplayMode;
  /** replay recovers the stored disks after the cut, exactly the state the failure saw (storesDisksAfterCut). */
  replayStoredImages: boolean;
}

/** What a gate's failure links to its artifact: the folder, the command that replays it, and how that replay reproduces it. */
export function replayOf(dir: string, c: CrashCase): { artifactDir: string; replay: string } & ReplayFacts {
  return { artifactDir: dir, replay: replayCommand(dir), replayMode: replayModeOf(c).mode, replayStoredImages: storesDisksAfterCut(dir, c) };
}

// Works from any folder and any checkout: the artifact names no path of the machine that wrote it.
const REPLAY_SH = `#!/bin/sh
# Re-runs this crash case on a fresh mount and says whether the failure reproduces
# (exit 1), shows a different violation (3), or passes now (0); 2 = usage error or
# unreadable artifact, 4 = the tool itself failed. Needs powercut: on the PATH (npm link
# in a checkout), in ./node_modules/.bin of a project that installed it, or a built
# checkout named by POWERCUT_HOME=/path/to/powercut.
here=$(cd "$(dirname "$0")" && pwd)
if [ -n "$POWERCUT_HOME" ]; then exec node "$POWERCUT_HOME/dist/src/cli.js" replay "$here" "$@"; fi
if command -v powercut >/dev/null 2>&1; then exec powercut replay "$here" "$@"; fi
if [ -x ./node_modules/.bin/powercut ]; then exec ./node_modules/.bin/powercut replay "$here" "$@"; fi
echo "replay.sh: powercut not found: put it on the PATH, or set POWERCUT_HOME to a built checkout" >&2
exit 2
`;

/**
 * An artifact's folder name: the target, the variant, what failed and a digest of the case (its
 * driver's folder left out), so the same case gets the same name on any machine and in any run;
 * no clock in it (written-at.txt keeps the time).
 */
export function folderName(targetName: string, c: CrashCase, what: string): string {
  // An external driver's known-bad behaviour lives in its command, not in a variant name.
  const queue = c.variant ?? (c.driver ? 'driver' : 'correct');
  const { cwd: _, ...driver } = c.driver ?? { cwd: '' };
  const digest = createHash('sha256').update(JSON.stringify({ ...c, driver: c.driver ? driver : null })).digest('hex').slice(0, 12);
  return `${targetName}-${queue}-${what}-${digest}`;
}

/** More artifacts of one case under one root than any run writes: a name past this is a bug. */
const MAX_SAME_NAME = 1_000;

const json = (x: unknown) => JSON.stringify(x, null, 2) + '\n';

async function startArtifact(root: string, targetName: string, c: CrashCase, what: string): Promise<string> {
  const name = path.resolve(root, folderName(targetName, c, what));
  await mkdir(path.dirname(name), { recursive: true });
  // The same case written again under this root (another run, a shrink's candidate) gets -2, -3...: a folder is never shared.
  let dir = name;
  for (let k = 2; ; k++) {
    try {
      await mkdir(dir);
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      if (k > MAX_SAME_NAME) throw new Error(`invariant: more than ${MAX_SAME_NAME} artifacts named ${path.basename(name)} under ${root}`);
      dir = `${name}-${k}`;
    }
  }
  await mkdir(path.join(dir, 'outcomes'));
  await writeFile(path.join(dir, 'written-at.txt'), `${new Date().toISOString()}\n`);
  await writeFile(path.join(dir, 'case.json'), json(c));
  await writeFile(path.join(dir, 'replay.sh'), REPLAY_SH, { mode: 0o755 });
  return dir;
}

/**
 * Writes the artifact folder of a judged case of target `targetName` under `root` and returns its
 * path. `imagesDir` holds the images captured at the cuts. Its report.html is the report module's
 * to draw (src/report), by whoever asked for the case.
 */
export async function writeArtifact(root: string, targetName: string, result: CaseResult, imagesDir?: string): Promise<string> {
  const dir = await startArtifact(root, targetName, result.case, `${isClusterCase(result.case) ? 'cluster-' : ''}${result.violations[0]?.check ?? 'none'}`);
  await writeFile(path.join(dir, 'violations.json'), json(result.violations));
  if (result.cause) await writeFile(path.join(dir, CAUSE_FILE), json(result.cause));
  await writeFile(path.join(dir, 'violations.txt'), result.violations.map((v) => v.message).join('\n') + '\n');
  for (const [k, run] of result.runs.entries()) {
    const meta = { exitCode: run.exitCode, killed: run.killed, hung: run.hung, failedRequests: run.failedRequests };
    await writeFile(path.join(dir, 'outcomes', `run-${k}-${run.role}.jsonl`), run.outcomes.map((o) => JSON.stringify(o) + '\n').join(''));
    await writeFile(path.join(dir, 'outcomes', `run-${k}-${run.role}.meta.json`), json(meta));
    if (result.stderr[k]) {
      await mkdir(path.join(dir, 'stderr'), { recursive: true });
      await writeFile(path.join(dir, 'stderr', `run-${k}.txt`), result.stderr[k]);
    }
  }
  for (const [k, cut] of result.cuts.entries()) {
    const timing = k === 0 ? result.case.cut?.timing : result.case.recoveryCut?.cut.timing;
    await writeFile(path.join(dir, `trace-cut-${k}.json`), json({ frozenAt: cut.frozenAt, trace: cut.trace, marks: cut.marks ?? [] }));
    await writeFile(path.join(dir, `trace-cut-${k}.txt`), formatTrace(cut.trace, cut.frozenAt, timing) + '\n');
  }
  if (imagesDir && existsSync(imagesDir)) {
    await cp(imagesDir, path.join(dir, 'images'), { recursive: true });
    await writeImageFolderLists(path.join(dir, 'images'));
  }
  return dir;
}

/**
 * A cluster's case (case.json): the crash case, how many nodes the cluster has, and for a live cut
 * whose power it took: 'all' (a coordinated cut) or these nodes, restarted while the run went on.
 * An offline crash state names its cut nodes in `state.nodes` (absent: every node).
 */
export interface ClusterArtifactCase extends CrashCase {
  nodes: number;
  nodesCut?: 'all' | readonly number[];
  /** A live cut: a node's processes stopped (SIGSTOP) at request atOp for durationMs before the cut. */
  pause?: { node: number; atOp: number; durationMs: number };
}

export function isClusterCase(c: CrashCase): c is ClusterArtifactCase {
  return (c as Partial<ClusterArtifactCase>).nodes !== undefined;
}

/** A judged cluster case or crash state, as an artifact keeps it. */
export interface ClusterArtifactInput {
  case: ClusterArtifactCase;
  /** The workload run (as of the cut) and the drain. */
  runs: RunRecord[];
  violations: Violation[];
  /** Every node's requests of the workload run (each entry names its node), where the cut froze, the confirmation markers. */
  trace: TraceEntry[];
  frozenAt: number | null;
  marks?: Mark[];
  stderr: string[];
}

/** Writes the artifact folder of a failing cluster case; `imagesDir` holds cut-0-after-crash/nodeK for a crash state. */
export async function writeClusterArtifact(root: string, targetName: string, r: ClusterArtifactInput, imagesDir?: string): Promise<string> {
  const result: CaseResult = {
    case: r.case, runs: r.runs, violations: r.violations, verdict: 'fail', coverage: emptyCoverage(), durationMs: 0, stderr: r.stderr,
    cuts: [{ frozenAt: r.frozenAt, trace: r.trace, ...(r.marks ? { marks: r.marks } : {}) }],
  };
  return writeArtifact(root, targetName, result, imagesDir);
}

/** Throws, naming case.json, when a cluster case's node fields are not what writeClusterArtifact writes. */
function checkClusterCase(c: ClusterArtifactCase, casePath: string): void {
  if (!Number.isInteger(c.nodes) || c.nodes < 2) throw new Error(`${casePath}: nodes must be the cluster's node count, an integer >= 2, got ${JSON.stringify(c.nodes)}`);
  const nodeList = (x: unknown, what: string) => {
    if (!Array.isArray(x) || x.length === 0 || !x.every((k) => Number.isInteger(k) && k >= 0 && k < c.nodes)) {
      throw new Error(`${casePath}: ${what} must be a non-empty list of nodes in 0..${c.nodes - 1}, got ${JSON.stringify(x)}`);
    }
  };
  if (c.state) {
    if (c.state.nodes !== undefined) nodeList(c.state.nodes, 'state.nodes');
  } else {
    if (c.nodesCut === undefined) throw new Error(`${casePath}: a cluster case names a crash state (state) or a live cut's nodes (nodesCut: "all" or a list of nodes)`);
    if (c.nodesCut !== 'all') nodeList(c.nodesCut, 'nodesCut');
    const p = c.pause;
    if (p !== undefined && !(typeof p === 'object' && p !== null && Number.isInteger(p.node) && p.node >= 0 && p.node < c.nodes && Number.isInteger(p.atOp) && p.atOp >= 1 && p.durationMs > 0)) {
      throw new Error(`${casePath}: pause must be {"node": a node in 0..${c.nodes - 1}, "atOp": a request >= 1, "durationMs": > 0}, got ${JSON.stringify(p)}`);
    }
  }
}

/** Adds (or replaces) an artifact's cause.json: a cause found after the artifact was written (a random cut's, or `powercut explain`'s). */
export async function writeCause(dir: string, cause: Cause): Promise<void> {
  await writeFile(path.join(dir, CAUSE_FILE), json(cause));
}

const FOLDER_LIST_SUFFIX = '.dirs.json';

/** Folders under `dir`, relative to it, parents first. */
async function foldersUnder(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries.filter((e) => e.isDirectory()).map((e) => path.relative(dir, path.join(e.parentPath ?? e.path, e.name))).sort();
}

/** Writes NAME.dirs.json beside every image folder NAME under `imagesDir`. */
export async function writeImageFolderLists(imagesDir: string): Promise<void> {
  for (const e of await readdir(imagesDir, { withFileTypes: true })) {
    if (e.isDirectory()) await writeFile(path.join(imagesDir, e.name + FOLDER_LIST_SUFFIX), json(await foldersUnder(path.join(imagesDir, e.name))));
  }
}

/** The folders image `name` of the artifact in `dir` had (its NAME.dirs.json; none when it has no list), relative to the image. */
export function storedImageFolders(dir: string, name: string): string[] {
  const listFile = path.join(dir, 'images', name + FOLDER_LIST_SUFFIX);
  if (!existsSync(listFile)) return [];
  const folders = readJson(listFile);
  if (!Array.isArray(folders) || !folders.every((f) => typeof f === 'string' && !path.isAbsolute(f) && !f.split(path.sep).includes('..'))) {
    throw new Error(`${listFile}: expected a list of relative folder paths`);
  }
  return folders as string[];
}

/**
 * Copies image `name` of the artifact in `dir` to `dest` with every folder it had, empty ones
 * included (as a clone of a committed artifact lacks them); false when the artifact has no such image.
 */
export async function copyStoredImage(dir: string, name: string, dest: string): Promise<boolean> {
  const image = path.join(dir, 'images', name);
  if (!existsSync(image) && !existsSync(image + FOLDER_LIST_SUFFIX)) return false;
  await mkdir(dest, { recursive: true });
  if (existsSync(image)) await cp(image, dest, { recursive: true, preserveTimestamps: true });
  for (const f of storedImageFolders(dir, name)) await mkdir(path.join(dest, f), { recursive: true });
  return true;
}

/** The artifact of a case the tool failed to run: the case, what failed, the daemon's death if it died. */
export async function writeHarnessErrorArtifact(root: string, targetName: string, c: CrashCase, err: HarnessError): Promise<string> {
  const dir = await startArtifact(root, targetName, c, 'harness-error');
  await writeFile(path.join(dir, 'violations.json'), json([]));
  await writeFile(path.join(dir, 'violations.txt'), '(none: the tool failed before a verdict; see harness-error.txt)\n');
  await writeFile(path.join(dir, 'harness-error.txt'), `harness error (not a verdict on the queue):\n${err.message}\n`);
  return dir;
}

/** Synchronous, as storesDisksAfterCut (the gate linking an artifact) reads a folder list with it. */
function readJson(file: string): unknown {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new Error(`${file}: cannot read (${(err as NodeJS.ErrnoException).code ?? (err as Error).message}); is this an artifact folder?`);
  }
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new Error(`${file}: not valid JSON (${(err as Error).message})`);
  }
}

/** Reads an artifact folder back; every error names the file that is wrong. */
export async function readArtifact(dir: string): Promise<StoredArtifact> {
  const casePath = path.join(dir, 'case.json');
  const c = readJson(casePath) as CrashCase;
  if (typeof c !== 'object' || c === null) throw new Error(`${casePath}: expected an object`);
  c.workload = parseWorkload(c.workload, `${casePath}: workload`);
  if (typeof c.settings !== 'object' || c.settings === null) throw new Error(`${casePath}: settings must be an object`);
  if (typeof c.policy !== 'string') throw new Error(`${casePath}: policy is missing`);
  if (!Number.isInteger(c.seed)) throw new Error(`${casePath}: seed must be an integer`);
  if (c.target !== undefined && typeof c.target !== 'string') throw new Error(`${casePath}: target must be a target's name`);
  if (c.variant !== undefined && typeof c.variant !== 'string') throw new Error(`${casePath}: variant must be a variant's name`);
  if (c.stateCaps !== undefined && (typeof c.stateCaps !== 'object' || c.stateCaps === null || !Object.values(c.stateCaps).every((n) => Number.isInteger(n) && (n as number) >= 0))) {
    throw new Error(`${casePath}: stateCaps must be an object of integer caps, got ${JSON.stringify(c.stateCaps)}`);
  }
  const holds = c.fsyncHolds as unknown as Record<string, unknown> | undefined;
  if (holds !== undefined && (typeof holds !== 'object' || holds === null || !Number.isInteger(holds.seed) || !Number.isInteger(holds.maxHoldMs))) {
    throw new Error(`${casePath}: fsyncHolds must be {"seed": integer, "maxHoldMs": integer}, got ${JSON.stringify(c.fsyncHolds)}`);
  }
  if (isClusterCase(c)) checkClusterCase(c, casePath);
  const violations = readJson(path.join(dir, 'violations.json')) as Violation[];
  const runFiles = (await readdir(path.join(dir, 'outcomes'))).filter((f) => f.endsWith('.jsonl')).sort((a, b) => parseInt(a.slice(4)) - parseInt(b.slice(4)));
  const runs: RunRecord[] = [];
  for (const f of runFiles) {
    const role = f.replace(/^run-\d+-/, '').replace('.jsonl', '') as RunRecord['role'];
    const text = await readFile(path.join(dir, 'outcomes', f), 'utf8');
    const meta = readJson(path.join(dir, 'outcomes', f.replace('.jsonl', '.meta.json'))) as Omit<RunRecord, 'role' | 'outcomes'>;
    runs.push({ role, outcomes: parseOutcomes(text, path.join(dir, 'outcomes', f)), ...meta });
  }
  const cuts: CutRecord[] = [];
  for (let k = 0; existsSync(path.join(dir, `trace-cut-${k}.json`)); k++) {
    cuts.push(readJson(path.join(dir, `trace-cut-${k}.json`)) as CutRecord);
  }
  const stderr = await Promise.all(runs.map(async (_, k) => {
    const file = path.join(dir, 'stderr', `run-${k}.txt`);
    return existsSync(file) ? readFile(file, 'utf8') : '';
  }));
  const errorFile = path.join(dir, 'harness-error.txt');
  const harnessError = existsSync(errorFile) ? await readFile(errorFile, 'utf8') : undefined;
  const causeFile = path.join(dir, CAUSE_FILE);
  const cause = existsSync(causeFile) ? readJson(causeFile) as Cause : undefined;
  const recording = readRecording(dir);
  return { dir, case: c, runs, cuts, violations, stderr, ...(harnessError !== undefined ? { harnessError } : {}), ...(cause ? { cause } : {}), ...(recording ? { recording } : {}) };
}
