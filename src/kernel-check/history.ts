// The syscall histories kernel-check runs on real ext4 and feeds to the model: their steps, how
// fast-check draws them (valid by construction: each drawn intent is resolved against the live
// model, so every step succeeds), the guest runner's spec lines, and the model run. Pure.
import fc from 'fast-check';
import { FsModel } from '../../fusefs/model/fs-model.js';

/** Paths are relative to the filesystem's root ('.' is the root itself). */
export type Step =
  | { op: 'mkdir'; path: string }
  | { op: 'create'; path: string }
  | { op: 'write'; path: string; offset: number; length: number; byte: number; kind: 'append' | 'overwrite' }
  | { op: 'truncate'; path: string; size: number }
  | { op: 'rename'; from: string; to: string }
  | { op: 'link'; from: string; to: string }
  | { op: 'unlink'; path: string }
  | { op: 'fsync' | 'fdatasync' | 'fsyncdir'; path: string }
  | { op: 'pause'; ms: number };

export type History = Step[];

export const DIR_NAMES = ['d0', 'd1'] as const;
export const FILE_NAMES = ['f0', 'f1', 'f2', 'f3'] as const;

/** The line the guest runner (guest-runner.c) reads for a step. */
export function specLine(s: Step): string {
  switch (s.op) {
    case 'write': return `write ${s.path} ${s.offset} ${s.length} ${s.byte}`;
    case 'truncate': return `truncate ${s.path} ${s.size}`;
    case 'rename': case 'link': return `${s.op} ${s.from} ${s.to}`;
    case 'pause': return `pause ${s.ms}`;
    default: return `${s.op} ${s.path}`;
  }
}

export function specText(h: History): string {
  return h.map((s) => `${specLine(s)}\n`).join('');
}

/** A step in words, for reports ("append 4096 bytes of 0x07 at 5000 to d0/f1"). */
export function describeStep(s: Step): string {
  switch (s.op) {
    case 'write': return `${s.kind} ${s.length} bytes of 0x${s.byte.toString(16).padStart(2, '0')} at ${s.offset} to ${s.path}`;
    case 'truncate': return `truncate ${s.path} to ${s.size}`;
    case 'rename': return `rename ${s.from} -> ${s.to}`;
    case 'link': return `link ${s.from} -> ${s.to}`;
    case 'pause': return `pause ${s.ms} ms`;
    case 'fsyncdir': return `fsync directory ${s.path === '.' ? '/' : s.path}`;
    default: return `${s.op} ${s.path}`;
  }
}

const abs = (p: string) => (p === '.' ? '/' : `/${p}`);

/** Applies one step to the model (a step the model refuses is a bug in the history: it throws). */
export function applyStep(m: FsModel, s: Step): void {
  switch (s.op) {
    case 'mkdir': m.mkdir(abs(s.path), 0o755); return;
    case 'create': m.create(abs(s.path), 0o644); return;
    case 'write': m.write(m.resolve(abs(s.path)), s.offset, Buffer.alloc(s.length, s.byte)); return;
    case 'truncate': m.truncate(m.resolve(abs(s.path)), s.size); return;
    case 'rename': m.rename(abs(s.from), abs(s.to)); return;
    case 'link': m.link(abs(s.from), abs(s.to)); return;
    case 'unlink': m.unlink(abs(s.path)); return;
    case 'fsync': case 'fsyncdir': m.fsync(m.resolve(abs(s.path))); return;
    case 'fdatasync': m.fdatasync(m.resolve(abs(s.path))); return;
    case 'pause': return;
  }
}

/** The model after each number of steps: index k is the model with steps 1..k applied (0: empty). */
export function modelsAfterEachStep(h: History): FsModel[] {
  const m = new FsModel(() => 0, { uid: 0, gid: 0 });
  const out = [m.clone()];
  for (const s of h) {
    applyStep(m, s);
    out.push(m.clone());
  }
  return out;
}

// ---- drawing histories ----

type IntentKind = 'mkdir' | 'create' | 'append' | 'overwrite' | 'truncate' | 'rename-new' | 'rename-over' | 'link' | 'unlink' | 'fsync' | 'fdatasync' | 'fsyncdir' | 'pause';

interface Intent {
  kind: IntentKind;
  /** Picks among the candidates (modulo their count). */
  a: number;
  b: number;
  /** A size class and a raw number for lengths, offsets and pauses. */
  size: number;
  n: number;
}

const INTENT_WEIGHTS: [IntentKind, number][] = [
  ['mkdir', 1], ['create', 4], ['append', 5], ['overwrite', 2], ['truncate', 1], ['rename-new', 2], ['rename-over', 2],
  ['link', 1], ['unlink', 1], ['fsync', 3], ['fdatasync', 2], ['fsyncdir', 2], ['pause', 3],
];

const intentArb: fc.Arbitrary<Intent> = fc.record({
  kind: fc.oneof(...INTENT_WEIGHTS.map(([k, w]) => ({ arbitrary: fc.constant(k), weight: w }))),
  a: fc.nat(1000),
  b: fc.nat(1000),
  size: fc.nat(3),
  n: fc.nat(1_000_000),
});

/** Write lengths by size class: within one sector, a few sectors, one 4 KiB block, several blocks. */
const LENGTHS = [(n: number) => 1 + (n % 300), (n: number) => 513 + (n % 1500), () => 4096, (n: number) => 4097 + (n % 8000)];
const PAUSES_MS = [300, 1500, 3500, 6500];

interface Live {
  dirs: string[];
  files: string[];
}

function liveNames(m: FsModel): Live {
  const dirs = ['.', ...DIR_NAMES.filter((d) => m.readdir('/').includes(d))];
  const files: string[] = [];
  for (const d of dirs) for (const name of m.readdir(abs(d))) if (!(DIR_NAMES as readonly string[]).includes(name)) files.push(d === '.' ? name : `${d}/${name}`);
  return { dirs, files };
}

const pick = <T>(xs: readonly T[], i: number): T => xs[i % xs.length];

/** The step an intent becomes on the live model, or none when it cannot apply (no file yet, ...). */
function resolveIntent(m: FsModel, it: Intent, writes: number): Step | undefined {
  const live = liveNames(m);
  const inDir = (d: string, name: string) => (d === '.' ? name : `${d}/${name}`);
  const freeNames = live.dirs.flatMap((d) => FILE_NAMES.map((f) => inDir(d, f))).filter((p) => !live.files.includes(p));
  const size = (p: string) => m.stat(m.resolve(abs(p))).sizeBytes;
  const byte = 1 + (writes % 255);
  switch (it.kind) {
    case 'mkdir': {
      const d = DIR_NAMES.find((x) => !live.dirs.includes(x));
      return d ? { op: 'mkdir', path: d } : undefined;
    }
    case 'create':
      // At most 4 files: a history stays small.
      return freeNames.length > 0 && live.files.length < 4 ? { op: 'create', path: pick(freeNames, it.a) } : undefined;
    case 'append': case 'overwrite': {
      if (live.files.length === 0) return undefined;
      const path = pick(live.files, it.a);
      const length = LENGTHS[it.size](it.n);
      const end = size(path);
      if (it.kind === 'append' || end === 0) return { op: 'write', path, offset: end, length, byte, kind: 'append' };
      return { op: 'write', path, offset: it.n % end, length: Math.min(length, 6000), byte, kind: 'overwrite' };
    }
    case 'truncate': {
      if (live.files.length === 0) return undefined;
      const path = pick(live.files, it.a);
      const now = size(path);
      const sizes = [0, Math.floor(now / 2), now + 1 + (it.n % 5000)];
      return { op: 'truncate', path, size: sizes[it.size % 3] };
    }
    case 'rename-new':
      if (live.files.length === 0 || freeNames.length === 0) return undefined;
      return { op: 'rename', from: pick(live.files, it.a), to: pick(freeNames, it.b) };
    case 'rename-over': {
      if (live.files.length < 2) return undefined;
      const from = pick(live.files, it.a);
      const others = live.files.filter((f) => f !== from && m.resolve(abs(f)) !== m.resolve(abs(from)));
      return others.length > 0 ? { op: 'rename', from, to: pick(others, it.b) } : undefined;
    }
    case 'link':
      if (live.files.length === 0 || freeNames.length === 0 || live.files.length >= 4) return undefined;
      return { op: 'link', from: pick(live.files, it.a), to: pick(freeNames, it.b) };
    case 'unlink':
      return live.files.length > 0 ? { op: 'unlink', path: pick(live.files, it.a) } : undefined;
    case 'fsync': case 'fdatasync':
      return live.files.length > 0 ? { op: it.kind, path: pick(live.files, it.a) } : undefined;
    case 'fsyncdir':
      return { op: 'fsyncdir', path: pick(live.dirs, it.a) };
    case 'pause':
      return { op: 'pause', ms: PAUSES_MS[it.size] };
  }
}

/** The history a list of intents becomes: each resolved on the model so far, those that cannot apply dropped. */
export function historyOf(intents: readonly Intent[], maxSteps: number): History {
  const m = new FsModel(() => 0, { uid: 0, gid: 0 });
  const h: History = [];
  let writes = 0;
  for (const it of intents) {
    if (h.length >= maxSteps) break;
    const s = resolveIntent(m, it, writes);
    if (!s) continue;
    if (s.op === 'write') writes++;
    applyStep(m, s);
    h.push(s);
  }
  return h;
}

export const MAX_STEPS = 15;

/** Histories of 1..MAX_STEPS steps over 1-4 files in the root and up to 2 directories. */
export const historyArb: fc.Arbitrary<History> = fc
  .array(intentArb, { minLength: 4, maxLength: 30 })
  .map((intents) => historyOf([{ kind: 'create', a: 0, b: 0, size: 0, n: 0 }, ...intents], MAX_STEPS));

/** `count` histories drawn from `seed` (the same seed, the same histories). */
export function drawHistories(seed: number, count: number): History[] {
  return fc.sample(historyArb, { seed, numRuns: count });
}
