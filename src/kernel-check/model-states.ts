// The model's side of kernel-check: whether a file-level state read back from real ext4 is one the
// model allows for a cut after a given number of steps, why not (the nearest model states), and the
// model's own enumerated states (how many the kernel never showed). Pure; no FUSE, no I/O.
//
// Membership is computed directly from the policy's rule (fusefs/model/torn.ts), not from a capped
// list: under torn and journaled a cut keeps a prefix of the unsynced directory operations
// (journaled: at least those a journal commit made durable) and, for each file on its own, each
// 512-byte sector as it was after a prefix (in time order) of the unsynced changes touching it, and
// the size as it was after a prefix of its changes, on its own (the size may persist without the
// bytes or the bytes without it); under journaled also a size inside the range a write grew the
// file by (policies/journaled.ts). Both the random cut and exhaustive mode's outcomes are in it.
import { keepsNoUnsynced, modelsJournalingFs, stateEnumerator } from '../../fusefs/model/policies/index.js';
import { sizesInsideWrites } from '../../fusefs/model/policies/journaled.js';
import type { FsModel } from '../../fusefs/model/fs-model.js';
import type { GrowBuffer } from '../../fusefs/model/grow-buffer.js';
import type { PendingFileOp } from '../../fusefs/model/nodes.js';
import { applyChange, changesOf, SECTOR_BYTES, type Change } from '../../fusefs/model/torn.js';
import { byteRuns, modelState, stateKey, type FileState } from './file-state.js';

export const CHECKED_POLICIES = ['journaled', 'torn', 'lose-unsynced'] as const;
export type CheckedPolicy = (typeof CHECKED_POLICIES)[number];

export interface Verdict {
  member: boolean;
  /** When not a member: why, per directory-operation prefix the policy allows (the nearest states). */
  reasons: string[];
}

/** Whether `real` is a state `policy` allows when the power goes with `model` as it is (a model after some steps, not settled). */
export function isModelState(model: FsModel, real: FileState, policy: CheckedPolicy): Verdict {
  if (keepsNoUnsynced(policy)) {
    const m = model.clone();
    m.crash(policy);
    const s = modelState(m);
    return stateKey(s) === stateKey(real) ? { member: true, reasons: [] } : { member: false, reasons: [`${policy}'s one state differs: ${namesDiff(s, real) ?? 'same names, other bytes'}`] };
  }
  const u = model.unsynced();
  const minPrefix = modelsJournalingFs(policy) ? u.committedDirOps : 0;
  const reasons: string[] = [];
  for (let p = u.dirOps; p >= minPrefix; p--) {
    const m = model.clone();
    m.settle(p, new Map(), new Set());
    const names = modelState(m);
    const diff = namesDiff(names, real);
    const label = `directory operations ${p} of ${u.dirOps}${minPrefix ? ` (${minPrefix} committed)` : ''}`;
    if (diff) {
      reasons.push(`${label}: ${diff}`);
      continue;
    }
    const fileReasons: string[] = [];
    const seen = new Set<number>();
    for (const f of names.files) {
      if (seen.has(f.inode)) continue;
      seen.add(f.inode);
      const uf = u.files.find((x) => x.ino === f.inode)!;
      const realData = real.files.find((x) => x.path === f.path)!.data;
      const why = fileCanBe(uf.durable, uf.pending, realData, modelsJournalingFs(policy));
      if (why) fileReasons.push(`${f.path}: ${why}`);
    }
    if (fileReasons.length === 0) return { member: true, reasons: [] };
    reasons.push(`${label}: same names; ${fileReasons.join('; ')}`);
  }
  return { member: false, reasons };
}

/** How two states' names differ (directories, files, which names share an inode), or undefined when they do not. */
export function namesDiff(model: FileState, real: FileState): string | undefined {
  const md = model.dirs.join(',');
  const rd = real.dirs.join(',');
  if (md !== rd) return `model directories [${md}], real [${rd}]`;
  const mf = model.files.map((f) => f.path).join(',');
  const rf = real.files.map((f) => f.path).join(',');
  if (mf !== rf) return `model files [${mf}], real [${rf}]`;
  const groups = (s: FileState) => s.files.map((f) => s.files.filter((g) => g.inode === f.inode).map((g) => g.path).join('=')).join(',');
  if (groups(model) !== groups(real)) return `model hard links [${groups(model)}], real [${groups(real)}]`;
  return undefined;
}

/**
 * Whether a cut can leave a file whose durable version is `durable`, with `pending` unsynced
 * changes, holding exactly `real` (see the rule at the top); undefined if so, else why not.
 */
export function fileCanBe(durable: GrowBuffer, pending: readonly PendingFileOp[], real: Buffer, insideWrites = false): string | undefined {
  const changes = changesOf(durable, pending);
  const sizes = new Set([durable.size, ...changes.map((c) => c.sizeAfter), ...(insideWrites ? sizesInsideWrites({ durable, pending }) : [])]);
  if (!sizes.has(real.length)) return `size ${real.length}; the model allows sizes ${[...sizes].sort((a, b) => a - b).join(', ')}`;
  for (let s = 0; s < Math.ceil(real.length / SECTOR_BYTES); s++) {
    const list = changes.map((c, i) => (c.sectors[0] <= s && s <= c.sectors[1] ? i : -1)).filter((i) => i >= 0);
    const from = s * SECTOR_BYTES;
    const len = Math.min(SECTOR_BYTES, real.length - from);
    const want = real.subarray(from, from + len);
    const options = list.map((_, k) => k).concat(list.length).map((k) => sectorAfter(durable, changes, list, k, s).subarray(0, len));
    if (!options.some((o) => o.equals(want))) {
      return `bytes ${from}..${from + len - 1} read ${byteRuns(want)}; the model allows ${[...new Set(options.map(byteRuns))].join(' | ')}`;
    }
  }
  return undefined;
}

/** The sector's bytes after the first `k` of the changes in `list` (durable bytes, zeros past the durable size). */
function sectorAfter(durable: GrowBuffer, changes: readonly Change[], list: readonly number[], k: number, sector: number): Buffer {
  const file = durable.clone();
  for (const i of list.slice(0, k)) applyChange(file, changes[i].op);
  const out = Buffer.alloc(SECTOR_BYTES);
  file.read(sector * SECTOR_BYTES, SECTOR_BYTES).copy(out);
  return out;
}

/**
 * The model's enumerated states of a cut (exhaustive mode's candidates for `policy`, uncapped:
 * every directory prefix crossed with all, none, only and except each change, and
 * `sectorPatterns` seeded sector patterns), by key. A subset of the states the rule allows.
 */
export function enumeratedStates(model: FsModel, policy: CheckedPolicy, sectorPatterns = 3): Map<string, FileState> {
  const out = new Map<string, FileState>();
  const e = stateEnumerator(policy);
  const u = model.unsynced();
  const caps = { maxStates: Infinity, maxStatesPerInterval: Infinity, sectorPatterns };
  for (const id of e.candidates(u, 0, 1, caps, e.count(u, caps))) {
    const m = model.clone();
    e.settle(m, id);
    const s = modelState(m);
    out.set(stateKey(s), s);
  }
  return out;
}
