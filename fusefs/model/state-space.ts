// The crash states of a recorded run (exhaustive mode), pure. Under lose-unsynced the durable image
// changes only when an fsync, fdatasync or directory fsync completes, so one state per persistence
// interval (the power going just before the next persistence point) covers every cut. Under torn,
// each interval's end is crossed with every prefix of the unsynced directory operations and a
// bounded set of data outcomes. Identical images within an interval are one state; the caps bound
// the rest, breadth first over the run, and what they leave out is counted.
import { createHash } from 'node:crypto';
import { DEFAULT_STATE_CAPS, type CrashStateId, type StatePolicy, type CrashStateInfo, type DataOutcome, type StateCaps, type StatesAnswer } from '../crash-states.js';
import type { FsModel } from './fs-model.js';
import type { FsTree } from './nodes.js';
import { replay, type Recording } from './recording.js';

/** A canonical hash of an image: names, kinds, modes, owners, contents (not times). */
export function hashTree(tree: FsTree): string {
  const h = createHash('sha1');
  const visit = (t: FsTree): void => {
    h.update(`${t.type} ${t.mode ?? ''} ${t.uid ?? ''} ${t.gid ?? ''}\n`);
    if (t.type === 'file') {
      h.update(`${t.data.length}\n`);
      h.update(t.data);
    } else if (t.type === 'symlink') h.update(`${t.target}\n`);
    else if (t.type === 'dir') {
      for (const [name, child] of t.entries) {
        h.update(`${name}/\n`);
        visit(child);
      }
      h.update('..\n');
    } else h.update(`${t.rdev}\n`);
  };
  visit(tree);
  return h.digest('hex');
}

/**
 * The torn data outcomes of an interval with `changes` unsynced file changes, most telling first:
 * all kept, none kept, then only and except each change in order (`only k`: k's sectors as just
 * after k, the rest durable; `except k`: k's sectors as just before k, the rest whole), then the
 * seeded sector patterns. Each is legal under torn's rule (fusefs/model/torn.ts): between them,
 * every prefix of every sector appears. Their count, and the k-th of them (0-based), so that only
 * the outcomes kept are made.
 */
function dataOutcomeCount(changes: number, sectorPatterns: number): number {
  return 2 + 2 * changes + sectorPatterns;
}
/**
 * The first `count` cells of a `rows` x `cols` grid, diagonal by diagonal ((0,0), (0,1), (1,0), ...):
 * a cap on torn candidates then keeps both the first data outcomes and the longest directory
 * prefixes, whichever axis is longer.
 */
export function diagonalCells(rows: number, cols: number, count: number): [row: number, col: number][] {
  const cells: [number, number][] = [];
  for (let sum = 0; cells.length < count && sum <= rows + cols - 2; sum++) {
    for (let row = Math.max(0, sum - cols + 1); row <= Math.min(sum, rows - 1) && cells.length < count; row++) cells.push([row, sum - row]);
  }
  return cells;
}

function dataOutcome(k: number, changes: number, intervalIndex: number): DataOutcome {
  if (k === 0) return { kind: 'all' };
  if (k === 1) return { kind: 'none' };
  const w = k - 2;
  if (w < 2 * changes) return { kind: w % 2 === 0 ? 'only' : 'except', write: Math.floor(w / 2) + 1 };
  return { kind: 'sectors', seed: intervalIndex * 1_000 + (w - 2 * changes) + 1 };
}

function imageOf(model: FsModel, dirPrefix: number | null, data?: DataOutcome): { image: FsModel; partialWrites: number } {
  const image = model.clone();
  const stats = dirPrefix === null ? image.crash('lose-unsynced') : image.crashWith(dirPrefix, data!);
  return { image, partialWrites: stats.partialWrites };
}

export class StateSpace {
  /** Persistence points: requests whose calls include an fsync or fdatasync. */
  readonly persistenceOps: number[];
  /** Replay cursor: loading states in request order replays the run once. */
  private cursor: { model: FsModel; next: number; afterOp: number } | null = null;

  constructor(private readonly recording: Recording, readonly opCount: number) {
    if (recording.overflow) throw new Error(recording.overflow);
    const ops = new Set<number>();
    for (const c of recording.calls) if (c.method === 'fsync' || c.method === 'fdatasync') ops.add(c.op);
    this.persistenceOps = [...ops].sort((a, b) => a - b);
  }

  /** The last request before each persistence point, then the run's end: where each interval's cut goes. */
  intervalEnds(): number[] {
    const ends = this.persistenceOps.map((p) => p - 1);
    ends.push(this.opCount);
    return ends;
  }

  /**
   * The distinct states under `policies`, within `caps`, breadth first: every interval's
   * lose-unsynced state, then the first torn state of every interval, then the second of each, and
   * so on; a cap (or a time budget cutting the list short) leaves out the deepest states of the
   * run, never its last intervals. Counted first, then only the states kept are built.
   */
  enumerate(policies: readonly StatePolicy[], caps: StateCaps = DEFAULT_STATE_CAPS): StatesAnswer {
    const ends = this.intervalEnds();
    const capsHit = new Set<string>();
    const incomplete = { 'lose-unsynced': new Set<number>(), torn: new Set<number>() };
    let capped = 0;
    const lose = policies.includes('lose-unsynced');
    const torn = policies.includes('torn');

    // 1. What each interval offers: its torn candidates are every data outcome (the whole-run ones,
    //    all and none kept, first) with every prefix of the directory operations (longest first),
    //    taken diagonally (diagonalCells).
    let replayed: { model: FsModel; next: number } | undefined;
    const offers = ends.map((afterOp) => {
      replayed = replay(this.recording, afterOp, replayed);
      const { dirOps, fileChanges } = replayed.model.unsyncedCounts();
      return { dirOps, fileChanges, tornTotal: torn ? dataOutcomeCount(fileChanges, caps.sectorPatterns) * (dirOps + 1) : 0 };
    });

    // 2. Which of them fit the caps, taken breadth first.
    let left = caps.maxStates;
    const hitMaxStates = (interval: number, policy: StatePolicy, n: number) => {
      capsHit.add(`maxStates ${caps.maxStates}`);
      capped += n;
      incomplete[policy].add(interval);
    };
    const takeLose = ends.map((_, i) => {
      if (!lose) return false;
      if (left > 0) {
        left--;
        return true;
      }
      hitMaxStates(i, 'lose-unsynced', 1);
      return false;
    });
    const perInterval = offers.map((o, i) => {
      const kept = Math.min(o.tornTotal, caps.maxStatesPerInterval);
      if (o.tornTotal > kept) {
        capsHit.add(`maxStatesPerInterval ${caps.maxStatesPerInterval}`);
        capped += o.tornTotal - kept;
        incomplete.torn.add(i);
      }
      return kept;
    });
    const takeTorn = perInterval.map(() => 0);
    for (let round = 0; left > 0 && perInterval.some((n) => n > round); round++) {
      for (let i = 0; i < ends.length && left > 0; i++) {
        if (round < perInterval[i]) {
          takeTorn[i]++;
          left--;
        }
      }
    }
    perInterval.forEach((n, i) => {
      if (takeTorn[i] < n) hitMaxStates(i, 'torn', n - takeTorn[i]);
    });

    // 3. Build and hash what was taken; identical images within an interval are one state.
    replayed = undefined;
    const loseStates: (CrashStateInfo | undefined)[] = [];
    const tornStates: CrashStateInfo[][] = [];
    ends.forEach((afterOp, interval) => {
      replayed = replay(this.recording, afterOp, replayed);
      const seen = new Set<string>();
      if (takeLose[interval]) {
        // A lose-unsynced cut leaves exactly the durable state: no copy of the model to cut.
        const hash = hashTree(replayed.model.exportTree('durable'));
        seen.add(hash);
        loseStates[interval] = { id: { afterOp, policy: 'lose-unsynced' }, interval, hash };
      }
      const { dirOps, fileChanges } = offers[interval];
      tornStates[interval] = [];
      for (const [d, j] of diagonalCells(dataOutcomeCount(fileChanges, caps.sectorPatterns), dirOps + 1, takeTorn[interval])) {
        const id: CrashStateId = { afterOp, policy: 'torn', dirPrefix: dirOps - j, data: dataOutcome(d, fileChanges, interval) };
        const cut = imageOf(replayed.model, id.dirPrefix!, id.data);
        const hash = hashTree(cut.image.exportTree('durable'));
        if (seen.has(hash)) continue;
        seen.add(hash);
        tornStates[interval].push({ id, interval, hash, ...(cut.partialWrites > 0 ? { partialWrites: cut.partialWrites } : {}) });
      }
    });
    const states: CrashStateInfo[] = loseStates.filter((x): x is CrashStateInfo => x !== undefined);
    for (let round = 0; tornStates.some((list) => list.length > round); round++) {
      for (const list of tornStates) if (round < list.length) states.push(list[round]);
    }
    const intervalsComplete = ends.filter((_, i) => !incomplete['lose-unsynced'].has(i) && !incomplete.torn.has(i)).length;
    return {
      intervals: ends.length,
      intervalsComplete,
      states,
      capped: { states: capped, caps: [...capsHit] },
      incomplete: { 'lose-unsynced': [...incomplete['lose-unsynced']].sort((a, b) => a - b), torn: [...incomplete.torn].sort((a, b) => a - b) },
    };
  }

  /** The model a power cut at state `id` leaves: live = durable, ready to mount for recovery. */
  build(id: CrashStateId): FsModel {
    if (!Number.isInteger(id.afterOp) || id.afterOp < 0 || id.afterOp > this.opCount) {
      throw new Error(`load-state: afterOp ${id.afterOp} is not in 0..${this.opCount} (the requests of the recorded run)`);
    }
    if (!this.cursor || this.cursor.afterOp > id.afterOp) this.cursor = null;
    const r = replay(this.recording, id.afterOp, this.cursor ?? undefined);
    this.cursor = { ...r, afterOp: id.afterOp };
    return imageOf(r.model, id.policy === 'lose-unsynced' ? null : (id.dirPrefix ?? 0), id.data ?? { kind: 'none' }).image;
  }
}
