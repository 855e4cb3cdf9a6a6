// The crash states of a recorded run (exhaustive mode), pure. Under lose-unsynced the durable image
// changes only when an fsync, fdatasync or directory fsync completes, so one state per persistence
// interval (the power going just before the next persistence point) covers every cut. Under torn,
// each interval's end is crossed with every prefix of the unsynced directory operations and a
// bounded set of data outcomes. Identical images within an interval are one state; the caps bound
// the rest, and what they leave out is counted.
import { createHash } from 'node:crypto';
import { DEFAULT_STATE_CAPS, type CrashStateId, type CrashStateInfo, type DataOutcome, type StateCaps, type StatesAnswer } from '../crash-states.js';
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

  /** The distinct states under `policies`, within `caps`. */
  enumerate(policies: readonly CrashStateId['policy'][], caps: StateCaps = DEFAULT_STATE_CAPS): StatesAnswer {
    const ends = this.intervalEnds();
    const states: CrashStateInfo[] = [];
    const capsHit = new Set<string>();
    let capped = 0;
    let intervalsComplete = 0;
    let replayed: { model: FsModel; next: number } | undefined;
    ends.forEach((afterOp, interval) => {
      replayed = replay(this.recording, afterOp, replayed);
      const candidates: CrashStateId[] = [];
      let complete = true;
      if (policies.includes('lose-unsynced')) candidates.push({ afterOp, policy: 'lose-unsynced' });
      if (policies.includes('torn')) {
        // Every data outcome (the whole-run ones, all and none kept, first) with every prefix of the
        // directory operations, longest first. Counted, not built: only the states kept are made.
        const { dirOps, fileChanges } = replayed.model.unsyncedCounts();
        const prefixes = dirOps + 1;
        const total = dataOutcomeCount(fileChanges, caps.sectorPatterns) * prefixes;
        const kept = Math.min(total, caps.maxStatesPerInterval);
        if (total > kept) {
          capsHit.add(`maxStatesPerInterval ${caps.maxStatesPerInterval}`);
          capped += total - kept;
          complete = false;
        }
        for (let i = 0; i < kept; i++) {
          const data = dataOutcome(Math.floor(i / prefixes), fileChanges, interval);
          candidates.push({ afterOp, policy: 'torn', dirPrefix: dirOps - (i % prefixes), data });
        }
      }
      const seen = new Set<string>();
      for (const id of candidates) {
        if (states.length >= caps.maxStates) {
          capsHit.add(`maxStates ${caps.maxStates}`);
          capped++;
          complete = false;
          continue;
        }
        let hash: string;
        let partialWrites = 0;
        if (id.policy === 'lose-unsynced') {
          // A lose-unsynced cut leaves exactly the durable state: no copy of the model to cut.
          hash = hashTree(replayed.model.exportTree('durable'));
        } else {
          const cut = imageOf(replayed.model, id.dirPrefix!, id.data);
          hash = hashTree(cut.image.exportTree('durable'));
          partialWrites = cut.partialWrites;
        }
        if (seen.has(hash)) continue;
        seen.add(hash);
        states.push({ id, interval, hash, ...(partialWrites > 0 ? { partialWrites } : {}) });
      }
      if (complete) intervalsComplete++;
    });
    return { intervals: ends.length, intervalsComplete, states, capped: { states: capped, caps: [...capsHit] } };
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
