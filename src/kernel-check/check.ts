// kernel-check's run: histories drawn from the seed, run in batches on real ext4 under QEMU (one
// disk each, several per boot), each disk's block log cut into crash states, each state read back
// at file level and judged against the models. Also the replay of a saved state (no VM).
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { modelsJournalingFs } from '../../fusefs/model/policies/index.js';
import { blockStates, applyWrites, markerSteps, parseBlockLog, type SubsetBound } from './block-log.js';
import { extractState, makeExt4, runTool } from './ext4-image.js';
import { stateFromJson, stateKey, stateToJson, describeState, type FileState } from './file-state.js';
import { boot, debianKernel, guestRunner, initramfs, initScript, removeOnSignal, requireHostTools, type GuestDisk, type Kernel, type WritebackSettings } from './guest.js';
import { describeStep, drawHistories, modelsAfterEachStep, specText, type History } from './history.js';
import { CHECKED_POLICIES, enumeratedStates, isModelState, type CheckedPolicy } from './model-states.js';

/** The filesystem is 16 MiB; the marker region follows it, outside it. */
export const FS_BYTES = 16 << 20;
export const IMAGE_BYTES = FS_BYTES + (1 << 20);

export interface CheckOptions {
  histories: number;
  seed: number;
  /** Histories per boot (one disk each). */
  perBoot: number;
  bound: SubsetBound;
  /** Where real states outside journaled are saved (JSON, replayable). */
  outDir: string;
  log: (line: string) => void;
  /** Run these histories instead of drawing `histories` from the seed (saved ones run again). */
  given?: History[];
}

export interface HistoryResult {
  index: number;
  history: History;
  blockStates: number;
  /** Distinct file-level states read back. */
  realStates: number;
  /** Block states e2fsck could not bring to a clean filesystem (reported, not compared). */
  unreadable: string[];
  /** What e2fsck -fy fixed beyond its free counts, per state that needed it (compared all the same). */
  repaired: string[];
  /** Real states outside each policy. */
  outside: Record<CheckedPolicy, number>;
  /** The model's enumerated journaled states over every cut, and how many the kernel never showed. */
  modelStates: number;
  neverShown: number;
  seconds: number;
  /** Saved files of the real states outside journaled. */
  saved: string[];
}

export interface CheckSummary {
  kernel: string;
  e2fsprogs: string;
  results: HistoryResult[];
  boots: { settings: WritebackSettings; seconds: number }[];
  seconds: number;
}

/** The write-back settings of boot b: the kernel's defaults (30 s expiry, 5 s flusher) and a fast one (1 s, 1 s), alternately. */
export function writebackOf(boot: number): WritebackSettings {
  return boot % 2 === 0 ? { dirtyExpireCs: 100, dirtyWritebackCs: 100 } : { dirtyExpireCs: 3000, dirtyWritebackCs: 500 };
}

export interface SavedState {
  seed: number;
  historyIndex: number;
  history: History;
  /** The model cuts (steps completed) the state may be. */
  steps: [number, number];
  real: unknown;
  reasons: string[];
  kernel: string;
}

/** A real state judged against one policy over the cuts it may be: member of any, or the reasons of each. */
export function judge(models: ReturnType<typeof modelsAfterEachStep>, real: FileState, steps: [number, number], policy: CheckedPolicy): { member: boolean; reasons: string[] } {
  const reasons: string[] = [];
  for (let k = steps[0]; k <= steps[1]; k++) {
    const v = isModelState(models[k], real, policy);
    if (v.member) return { member: true, reasons: [] };
    reasons.push(...v.reasons.map((r) => `after step ${k}: ${r}`));
  }
  return { member: false, reasons };
}

export function formatHistory(h: History): string {
  return h.map((s, i) => `  ${String(i + 1).padStart(2)}. ${describeStep(s)}`).join('\n');
}

async function toolVersion(cmd: string, args: string[]): Promise<string> {
  const r = await runTool(cmd, args);
  return (r.stderr + r.stdout).split('\n').find((l) => /\d+\.\d+/.test(l))?.trim() ?? 'unknown';
}

/** Scratch space: tmpfs when there is one (every state is a 17 MiB image written and checked). */
function scratchRoot(): string {
  return existsSync('/dev/shm') ? '/dev/shm' : os.tmpdir();
}

export async function kernelCheck(opts: CheckOptions): Promise<CheckSummary> {
  const started = Date.now();
  requireHostTools();
  opts.log('preparing: the Debian kernel package (apt-get download, once into the cache) and the guest runner (gcc -static)...');
  const kernel = await debianKernel();
  const runner = await guestRunner();
  const e2fsprogs = await toolVersion('e2fsck', ['-V']);
  opts.log(`kernel ${kernel.package} ${kernel.version}; ${e2fsprogs}; mkfs.ext4 -b 4096 -E lazy_itable_init=0,lazy_journal_init=0 on ${FS_BYTES >> 20} MiB`);
  const histories = opts.given ?? drawHistories(opts.seed, opts.histories);
  const work = await mkdtemp(path.join(scratchRoot(), 'powercut-kernel-check-'));
  const guard = removeOnSignal(work);
  const results: HistoryResult[] = [];
  const boots: CheckSummary['boots'] = [];
  // The next boot runs while the last one's states are read back (QEMU takes one core, e2fsck another).
  let judging: Promise<void> = Promise.resolve();
  try {
    const base = path.join(work, 'base.img');
    await makeExt4(base, FS_BYTES, IMAGE_BYTES);
    const baseBytes = await readFile(base);
    for (let first = 0; first < histories.length; first += opts.perBoot) {
      const batch = histories.slice(first, first + opts.perBoot);
      const settings = writebackOf(boots.length);
      const booted = await bootBatch(kernel, runner, work, baseBytes, batch, first, settings, opts);
      boots.push({ settings, seconds: booted.seconds });
      await judging;
      judging = judgeBatch(booted, baseBytes, opts, kernel).then((r) => {
        results.push(...r);
      });
      // A failed judging fails the run at the next await; keep it from being unhandled meanwhile.
      judging.catch(() => undefined);
    }
    await judging;
  } finally {
    await judging.catch(() => undefined);
    await rm(work, { recursive: true, force: true });
    guard.release();
  }
  return { kernel: `${kernel.package} ${kernel.version}`, e2fsprogs, results, boots, seconds: (Date.now() - started) / 1000 };
}

interface Booted {
  dir: string;
  batch: History[];
  first: number;
  disks: GuestDisk[];
  console: string;
  seconds: number;
}

async function bootBatch(kernel: Kernel, runner: string, work: string, baseBytes: Buffer, batch: History[], first: number, settings: WritebackSettings, opts: CheckOptions): Promise<Booted> {
  const dir = path.join(work, `boot-${first}`);
  await mkdir(dir, { recursive: true });
  try {
    const disks = await Promise.all(batch.map(async (h, i) => {
      const image = path.join(dir, `disk${i}.img`);
      const log = path.join(dir, `disk${i}.log`);
      await writeFile(image, baseBytes);
      await writeFile(log, '');
      return { image, log, spec: specText(h), markerOffset: FS_BYTES };
    }));
    const script = initScript(disks.length, disks.map((d) => d.markerOffset), settings, 3);
    const initrd = path.join(dir, 'initrd.cpio');
    await writeFile(initrd, await initramfs(kernel, runner, script, disks.map((d) => d.spec)));
    const longest = Math.max(...batch.map((h) => h.reduce((ms, s) => ms + (s.op === 'pause' ? s.ms : 0), 0)));
    opts.log(`boot: histories ${first + 1}-${first + batch.length} (${batch.length} disks), write-back expiry ${settings.dirtyExpireCs / 100} s, flusher every ${settings.dirtyWritebackCs / 100} s`);
    const b = await boot(kernel, initrd, disks, 120_000 + longest * 3);
    return { dir, batch, first, disks, console: b.console, seconds: b.seconds };
  } catch (err) {
    await rm(dir, { recursive: true, force: true });
    throw err;
  }
}

async function judgeBatch(b: Booted, baseBytes: Buffer, opts: CheckOptions, kernel: Kernel): Promise<HistoryResult[]> {
  try {
    const results: HistoryResult[] = [];
    for (let i = 0; i < b.batch.length; i++) {
      const t0 = Date.now();
      const r = await judgeDisk(b.batch[i], b.first + i, b.disks[i], b.console, i, baseBytes, b.dir, opts, kernel);
      r.seconds = b.seconds / b.batch.length + (Date.now() - t0) / 1000;
      results.push(r);
      opts.log(`history ${r.index + 1}: ${r.history.length} steps, ${r.blockStates} block states, ${r.realStates} real states, ${r.outside.journaled} outside journaled` +
        ` (for information: ${r.outside.torn} outside torn, ${r.outside['lose-unsynced']} outside lose-unsynced), ${r.modelStates} model states (${r.neverShown} never shown)` +
        `${r.unreadable.length ? `, ${r.unreadable.length} unreadable` : ''}, ${r.seconds.toFixed(1)} s`);
    }
    return results;
  } finally {
    await rm(b.dir, { recursive: true, force: true });
  }
}

async function judgeDisk(h: History, index: number, disk: { image: string; log: string; markerOffset: number }, console: string, label: number, baseBytes: Buffer, dir: string, opts: CheckOptions, kernel: Kernel): Promise<HistoryResult> {
  const lines = console.split(/\r?\n/).filter((l) => l.startsWith(`KC ${label} `));
  const failed = lines.filter((l) => !/ ok$| end$/.test(l));
  if (failed.length > 0 || !lines.some((l) => l.endsWith(' end'))) {
    throw new Error(`history ${index + 1} did not run cleanly in the guest (${failed.join('; ') || 'no end line'}):\n${formatHistory(h)}`);
  }
  const log = parseBlockLog(await readFile(disk.log));
  const markerSector = disk.markerOffset / log.sectorSize;
  const marks = markerSteps(log, markerSector).map((m) => m.step);
  if (marks.length !== h.length || marks.some((s, i) => s !== i + 1)) throw new Error(`history ${index + 1}: the block log holds markers [${marks.join(',')}], not 1..${h.length}`);
  const states = blockStates(log, markerSector, h.length, opts.bound);
  const models = modelsAfterEachStep(h);
  const byImage = new Map<string, { ok: true; state: FileState } | { ok: false; reason: string }>();
  const real = new Map<string, { state: FileState; steps: [number, number][] }>();
  const unreadable: string[] = [];
  const repaired: string[] = [];
  const scratch = path.join(dir, `scratch${label}`);
  await mkdir(scratch, { recursive: true });
  const imgPath = path.join(scratch, 'state.img');
  for (const s of states) {
    const img = applyWrites(baseBytes, log, s.writes);
    const hash = createHash('sha1').update(img).digest('hex');
    let got = byImage.get(hash);
    if (!got) {
      await writeFile(imgPath, img);
      const x = await extractState(imgPath, scratch);
      got = x.ok ? { ok: true, state: x.state } : x;
      byImage.set(hash, got);
      if (x.ok && x.fsckNotes.length > 0) repaired.push(x.fsckNotes.slice(0, 3).join(' | '));
      if (!x.ok) unreadable.push(`after flush ${s.flush}, writes [${s.subset.join(',')}] of [${s.epoch.join(',')}]: ${x.reason}`);
    }
    if (!got.ok) continue;
    const key = stateKey(got.state);
    const entry = real.get(key) ?? { state: got.state, steps: [] };
    if (!entry.steps.some(([a, b]) => a === s.steps[0] && b === s.steps[1])) entry.steps.push(s.steps);
    real.set(key, entry);
  }
  const outside: Record<CheckedPolicy, number> = { journaled: 0, torn: 0, 'lose-unsynced': 0 };
  const saved: string[] = [];
  for (const [key, r] of real) {
    for (const policy of CHECKED_POLICIES) {
      const verdicts = r.steps.map((steps) => ({ steps, ...judge(models, r.state, steps, policy) }));
      const miss = verdicts.find((v) => !v.member);
      if (!miss) continue;
      outside[policy]++;
      // Only the journaling filesystem's model must hold every real state; the stricter ones are for information.
      if (!modelsJournalingFs(policy)) continue;
      await mkdir(opts.outDir, { recursive: true });
      const file = path.join(opts.outDir, `seed${opts.seed}-history${index + 1}-${key.length > 0 ? createHash('sha1').update(key).digest('hex').slice(0, 8) : 'x'}.json`);
      const record: SavedState = { seed: opts.seed, historyIndex: index + 1, history: h, steps: miss.steps, real: stateToJson(r.state), reasons: miss.reasons, kernel: `${kernel.package} ${kernel.version}` };
      await writeFile(file, JSON.stringify(record, null, 1));
      saved.push(file);
      opts.log(`REAL STATE OUTSIDE journaled (history ${index + 1}, after ${miss.steps[0]}..${miss.steps[1]} steps; saved ${file}):\nhistory:\n${formatHistory(h)}\nreal state:\n${describeState(r.state)}\nnearest model states:\n${miss.reasons.map((x) => `  - ${x}`).join('\n')}`);
    }
  }
  const modelKeys = new Set<string>();
  for (const m of models) for (const k of enumeratedStates(m, 'journaled').keys()) modelKeys.add(k);
  const neverShown = [...modelKeys].filter((k) => !real.has(k)).length;
  return { index, history: h, blockStates: states.length, realStates: real.size, unreadable, repaired, outside, modelStates: modelKeys.size, neverShown, seconds: 0, saved };
}

export async function readSaved(file: string): Promise<SavedState> {
  const saved = JSON.parse(await readFile(file, 'utf8')) as SavedState;
  if (!Array.isArray(saved?.history)) throw new Error(`${file} is not a saved kernel-check state or history (no history array)`);
  return saved;
}

/** Judges a saved state again (after a model change): no VM. */
export async function replaySaved(file: string): Promise<{ member: boolean; text: string }> {
  const saved = await readSaved(file);
  if (!Array.isArray(saved.steps) || saved.real === undefined) throw new Error(`${file} holds a history but no real state to judge`);
  const models = modelsAfterEachStep(saved.history);
  const real = stateFromJson(saved.real);
  const v = judge(models, real, saved.steps, 'journaled');
  const text = `history (seed ${saved.seed}, history ${saved.historyIndex}, ${saved.kernel}):\n${formatHistory(saved.history)}\nreal state after ${saved.steps[0]}..${saved.steps[1]} steps:\n${describeState(real)}\n` +
    (v.member ? 'a state of journaled now' : `still outside journaled:\n${v.reasons.map((x) => `  - ${x}`).join('\n')}`);
  return { member: v.member, text };
}
