// What write-back can leave of unsynced changes, shared by the torn and journaled policies: each
// file's data under torn's sector rule (fusefs/model/torn.ts) and a prefix of the unsynced directory
// operations, drawn at random or spelled out as exhaustive mode's candidates.
import type { CrashStateId, DataOutcome, StateCaps, StatePolicy } from '../../crash-states.js';
import type { GrowBuffer } from '../grow-buffer.js';
import type { Unsynced } from '../nodes.js';
import type { Prng } from '../prng.js';
import { chosenFile, tornFile, type FileChoice, type TornStats } from '../torn.js';

/**
 * The data outcomes of an interval with `changes` unsynced file changes, most telling first: all
 * kept, none kept, then only and except each change in order (`only k`: k's sectors as just after
 * k, the rest durable; `except k`: k's sectors as just before k, the rest whole), then the seeded
 * sector patterns. Between them, every prefix of every sector appears. Their count, and the k-th (0-based).
 */
export function dataOutcomeCount(changes: number, sectorPatterns: number): number {
  return 2 + 2 * changes + sectorPatterns;
}

export function dataOutcome(k: number, changes: number, interval: number): DataOutcome {
  if (k === 0) return { kind: 'all' };
  if (k === 1) return { kind: 'none' };
  const w = k - 2;
  if (w < 2 * changes) return { kind: w % 2 === 0 ? 'only' : 'except', write: Math.floor(w / 2) + 1 };
  return { kind: 'sectors', seed: interval * 1_000 + (w - 2 * changes) + 1 };
}

/**
 * The first `count` cells of a `rows` x `cols` grid, diagonal by diagonal ((0,0), (0,1), (1,0), ...):
 * a cap on candidates then keeps both the first data outcomes and the longest directory prefixes,
 * whichever axis is longer.
 */
export function diagonalCells(rows: number, cols: number, count: number): [row: number, col: number][] {
  const cells: [number, number][] = [];
  for (let sum = 0; cells.length < count && sum <= rows + cols - 2; sum++) {
    for (let row = Math.max(0, sum - cols + 1); row <= Math.min(sum, rows - 1) && cells.length < count; row++) cells.push([row, sum - row]);
  }
  return cells;
}

/** How many candidates an interval offers when at least `minPrefix` directory operations persist: data outcomes x prefixes. */
export function writeBackCount(u: Unsynced, caps: StateCaps, minPrefix: number): number {
  return dataOutcomeCount(u.fileChanges, caps.sectorPatterns) * (u.dirOps - minPrefix + 1);
}

/** The first `n` candidates, taken diagonally over (data outcome, prefix), whole-run outcomes and longest prefixes first. */
export function writeBackCandidates(policy: StatePolicy, u: Unsynced, afterOp: number, interval: number, caps: StateCaps, n: number, minPrefix: number): CrashStateId[] {
  return diagonalCells(dataOutcomeCount(u.fileChanges, caps.sectorPatterns), u.dirOps - minPrefix + 1, n)
    .map(([d, j]) => ({ afterOp, policy, dirPrefix: u.dirOps - j, data: dataOutcome(d, u.fileChanges, interval) }));
}

/** The durable version of every file under a spelled-out data outcome (torn's rule per sector and size). */
export function chosenDurables(u: Unsynced, data: DataOutcome, stats: TornStats, prng: (seed: number) => Prng): Map<number, GrowBuffer> {
  const out = new Map<number, GrowBuffer>();
  if (data.kind === 'sectors') {
    const r = prng(data.seed);
    for (const f of u.files) out.set(f.ino, tornFile(f.durable, f.pending, r, stats));
    return out;
  }
  // Changes are numbered 1..fileChanges in the order they happened; `only` and `except` name one by its seq.
  let choice: FileChoice = data.kind === 'all' ? { kind: 'all' } : { kind: 'none' };
  if (data.kind === 'only' || data.kind === 'except') {
    if (!(Number.isInteger(data.write) && data.write >= 1 && data.write <= u.fileChanges)) throw new Error(`a state's write ${data.write} is not in 1..${u.fileChanges}`);
    const seqs = u.files.flatMap((f) => f.pending.map((op) => op.seq)).sort((a, b) => a - b);
    choice = { kind: data.kind, seq: seqs[data.write - 1] };
  }
  for (const f of u.files) out.set(f.ino, chosenFile(f.durable, f.pending, choice, stats));
  return out;
}

/** A random cut's durable files: each file's changes drawn in order (torn.ts), files in inode order. */
export function randomDurables(u: Unsynced, prng: Prng, stats: TornStats): Map<number, GrowBuffer> {
  return new Map(u.files.map((f) => [f.ino, tornFile(f.durable, f.pending, prng, stats)]));
}

/** What a write-back state keeps of the unsynced writes, in words (trace pages say the same). */
export function dataInWords(d: DataOutcome): string {
  switch (d.kind) {
    case 'all': return 'all unsynced writes kept';
    case 'none': return 'no unsynced write kept';
    case 'only': return `only unsynced write ${d.write} kept, with the earlier writes in its 512-byte sectors; its file at its size just after it`;
    case 'except': return `unsynced write ${d.write} lost, with the later writes in its 512-byte sectors; the rest kept; its file at its final size, or at its size before write ${d.write} if that was the file's last size change`;
    case 'sectors': return `sectors drawn from seed ${d.seed}`;
  }
}
