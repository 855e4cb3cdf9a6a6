// The crash states of a recorded run (exhaustive mode), pure. Under lose-unsynced the durable image
// changes only when an fsync, fdatasync or directory fsync completes, so one state per persistence
// interval (the power going just before the next persistence point) covers every cut. Under torn,
// each interval's end is crossed with every prefix of the unsynced directory operations and a
// bounded set of data outcomes. Identical images within an interval are one state; the caps bound
// the rest, breadth first over the run, and what they leave out is counted.
import { DEFAULT_STATE_CAPS, STATE_POLICIES, type CrashStateId, type Hypothesis, type LostUnit, type ProbeUnit, type UnitChange, type StatePolicy, type CrashStateInfo, type StateCaps, type StatesAnswer } from '../crash-states.js';
import { chosenFile, type TornStats } from './torn.js';
import { keepsNoUnsynced, stateEnumerator } from './policies/index.js';
import type { FsModel } from './fs-model.js';
import type { FsTree, JournalOp, Unsynced } from './nodes.js';
import { Recording, replay } from './recording.js';

export { hashTree } from './tree-hash.js';

export { diagonalCells } from './policies/write-back.js';

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
   * The distinct states under `policies`, within `caps`, breadth first: round by round, each policy's
   * next state of every interval (so every interval's lose-unsynced state comes first, then the first
   * torn and journaled state of every interval, then the second of each, and so on), except that the
   * first state of each other policy follows the first lose-unsynced one; a cap (or a time
   * budget cutting the list short) leaves out the deepest states of the run, never its last intervals.
   * Counted first, then only the states kept are built.
   */
  enumerate(policies: readonly StatePolicy[], caps: StateCaps = DEFAULT_STATE_CAPS, onlyIntervals?: readonly number[]): StatesAnswer {
    const ends = this.intervalEnds();
    const enumerators = STATE_POLICIES.filter((p) => policies.includes(p)).map(stateEnumerator);
    const capsHit = new Set<string>();
    const incomplete = new Map<StatePolicy, Set<number>>(enumerators.map((e) => [e.policy, new Set<number>()]));
    let capped = 0;

    // 1. What each interval offers under each policy.
    let replayed: { model: FsModel; next: number } | undefined;
    // Intervals not asked for offer nothing (and are not counted as capped).
    const asked = onlyIntervals ? new Set(onlyIntervals) : undefined;
    const offers = ends.map((afterOp, i) => {
      if (asked && !asked.has(i)) return enumerators.map(() => 0);
      replayed = replay(this.recording, afterOp, replayed);
      const u = replayed.model.unsynced();
      return enumerators.map((e) => e.count(u, caps));
    });

    // 2. Which of them fit the caps: per interval (maxStatesPerInterval), then breadth first over the run (maxStates).
    const perInterval = offers.map((counts, i) => counts.map((n, p) => {
      const e = enumerators[p];
      const kept = e.capped ? Math.min(n, caps.maxStatesPerInterval) : n;
      if (n > kept) {
        capsHit.add(`maxStatesPerInterval ${caps.maxStatesPerInterval}`);
        capped += n - kept;
        incomplete.get(e.policy)!.add(i);
      }
      return kept;
    }));
    const take = perInterval.map((counts) => counts.map(() => 0));
    let left = caps.maxStates;
    // One state of every other policy is taken (and listed) right after the first lose-unsynced
    // state, so a budget or a cap that allows a few states checks every policy.
    const early = enumerators.map((_, p) => (p === 0 ? -1 : perInterval.findIndex((counts) => counts[p] > 0)));
    early.forEach((i, p) => {
      if (i >= 0 && left > 1) {
        take[i][p] = 1;
        left--;
      }
    });
    const rounds = Math.max(0, ...perInterval.flat());
    for (let round = 0; round < rounds && left > 0; round++) {
      for (let p = 0; p < enumerators.length && left > 0; p++) {
        for (let i = 0; i < ends.length && left > 0; i++) {
          if (round < perInterval[i][p] && take[i][p] <= round) {
            take[i][p]++;
            left--;
          }
        }
      }
    }
    perInterval.forEach((counts, i) => counts.forEach((n, p) => {
      if (take[i][p] >= n) return;
      capsHit.add(`maxStates ${caps.maxStates}`);
      capped += n - take[i][p];
      incomplete.get(enumerators[p].policy)!.add(i);
    }));

    // 3. Build and hash what was taken; identical images within an interval and policy are one
    //    state (a write-back state equal to the interval's lose-unsynced state is that state).
    replayed = undefined;
    const built: CrashStateInfo[][][] = ends.map(() => enumerators.map(() => []));
    ends.forEach((afterOp, interval) => {
      if (asked && !asked.has(interval)) return;
      replayed = replay(this.recording, afterOp, replayed);
      const u = replayed.model.unsynced();
      const loseHashes = new Set<string>();
      enumerators.forEach((e, p) => {
        const seen = new Set(loseHashes);
        for (const id of e.candidates(u, afterOp, interval, caps, take[interval][p])) {
          // A lose-unsynced cut leaves exactly the durable state: no copy of the model to cut.
          let stats = { partialWrites: 0 };
          let image = replayed!.model;
          if (!keepsNoUnsynced(e.policy)) {
            image = image.clone();
            stats = e.settle(image, id);
          }
          const hash = image.imageHash('durable');
          if (seen.has(hash)) continue;
          seen.add(hash);
          if (keepsNoUnsynced(e.policy)) loseHashes.add(hash);
          built[interval][p].push({ id, interval, hash, ...(stats.partialWrites > 0 ? { partialWrites: stats.partialWrites } : {}) });
        }
      });
    });
    const ordered: CrashStateInfo[] = [];
    for (let round = 0; round < rounds; round++) {
      for (let p = 0; p < enumerators.length; p++) for (const perPolicy of built) if (round < perPolicy[p].length) ordered.push(perPolicy[p][round]);
    }
    // The reserved state may have been one image with its interval's lose-unsynced state: then the next one built.
    const firsts = enumerators.flatMap((_, p) => (p === 0 ? [] : built.find((perPolicy) => perPolicy[p].length > 0)?.[p].slice(0, 1) ?? []));
    const states = [...ordered.slice(0, 1), ...firsts, ...ordered.slice(1).filter((s) => !firsts.includes(s))];
    const intervalsComplete = ends.filter((_, i) => enumerators.every((e) => !incomplete.get(e.policy)!.has(i))).length;
    return {
      intervals: ends.length,
      intervalsComplete,
      states,
      capped: { states: capped, caps: [...capsHit] },
      incomplete: Object.fromEntries([...incomplete].map(([p, set]) => [p, [...set].sort((a, b) => a - b)])),
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
    const image = r.model.clone();
    this.lastBuildStats = image.crashInto(id);
    return image;
  }
  /** The last build's tear: writes it kept only in part (torn, journaled). */
  lastBuildStats: TornStats = { partialWrites: 0 };

  /** The durable or live image right after request `afterOp` (a cluster's node that lost only its process keeps its live one). */
  treeAt(afterOp: number, which: 'durable' | 'live'): FsTree {
    return this.replayTo(afterOp).exportTree(which);
  }

  /** hashTree of treeAt(afterOp, which), from the chunks' digests (FsModel.imageHash): no bytes copied. */
  hashAt(afterOp: number, which: 'durable' | 'live'): string {
    return this.replayTo(afterOp).imageHash(which);
  }

  /** What a cut right after request `afterOp` could keep or lose (a cluster draws each node's torn outcomes from it). */
  unsyncedAt(afterOp: number): Unsynced {
    return this.replayTo(afterOp).unsynced();
  }

  /** The image state `id` leaves with the probe's units made durable too (FsModel.probe). */
  buildProbe(id: CrashStateId, units: readonly ProbeUnit[]): FsModel {
    const r = this.replayTo(id.afterOp);
    const image = r.clone();
    image.probe(units);
    image.crashInto(id);
    return image;
  }

  /**
   * What state `id` lost, unit by unit: each file whose unsynced changes it did not keep whole, each
   * directory with unsynced entry changes past its prefix, each inode whose unsynced attributes it
   * dropped; with the request of each change (for the cause search's words and its second pass).
   */
  lostUnits(id: CrashStateId): LostUnit[] {
    const model = this.replayTo(id.afterOp);
    const image = model.clone();
    image.crashInto(id);
    const kept = image.exportTree('durable');
    const u = model.unsynced();
    const opOf = this.opOfSeq();
    const out: LostUnit[] = [];
    const pathOf = (ino: number) => model.pathOf(ino) ?? `(inode ${ino}, no longer named)`;
    const syncedLater = (ino: number) => this.recording.calls
      .filter((c) => c.op > id.afterOp && (c.method === 'fsync' || c.method === 'fdatasync') && c.args[0] === ino)
      .map((c) => ({ op: c.op, covers: typeof c.args[1] === 'number' ? c.args[1] : this.changesBefore(c.op) }));
    for (const f of u.files) {
      if (f.pending.length === 0) continue;
      const path = model.pathOf(f.ino);
      const whole = chosenFile(f.durable, f.pending, { kind: 'all' }).toBuffer();
      const there = path === undefined ? undefined : fileAt(kept, path);
      if (there !== undefined && there.equals(whole)) continue;
      out.push({
        kind: 'file', ino: f.ino, path: pathOf(f.ino),
        changes: f.pending.map((p) => (p.type === 'write'
          ? { seq: p.seq, op: opOf(p.seq), kind: 'write', offset: p.offset, length: p.data.length }
          : p.type === 'truncate'
            ? { seq: p.seq, op: opOf(p.seq), kind: 'truncate', length: p.sizeBytes }
            : { seq: p.seq, op: opOf(p.seq), kind: `fallocate ${p.kind}`, offset: p.offset, length: p.length })),
        syncedLater: syncedLater(f.ino),
      });
    }
    const prefix = keepsNoUnsynced(id.policy) ? 0 : (id.dirPrefix ?? 0);
    const lostOps = u.journal.slice(prefix);
    const dirs = [...new Set(lostOps.flatMap((op) => op.changes.map((c) => c.dir)))].sort((a, b) => a - b);
    const ofDir = (ops: readonly JournalOp[], dir: number): UnitChange[] => ops.filter((op) => op.changes.some((c) => c.dir === dir)).map((op) => ({
      seq: op.seq, op: opOf(op.seq), kind: this.methodOf(opOf(op.seq)),
      entries: op.changes.filter((c) => c.dir === dir).map((c) => ({ name: c.name, target: c.ino === null ? null : pathOf(c.ino) })),
    }));
    for (const dir of dirs) {
      const kept = ofDir(u.journal.slice(0, prefix), dir);
      out.push({ kind: 'dir', ino: dir, path: pathOf(dir), changes: ofDir(lostOps, dir), ...(kept.length ? { kept } : {}), syncedLater: syncedLater(dir) });
    }
    if (!(id.data?.kind === 'all')) for (const ino of u.metaDirty) out.push({ kind: 'meta', ino, path: pathOf(ino), changes: [], syncedLater: syncedLater(ino) });
    return out;
  }

  /** A state space of the same run with the hypothesis's fsyncs inserted (a request each: later requests move up) and skipped ones left out. */
  withHypothesis(h: Hypothesis): StateSpace {
    h.fsyncAfter.forEach((x, i) => {
      if (x.node !== undefined) throw new Error(`hypothesis.fsyncAfter[${i}].node is ${x.node}, but the recorded run is one disk's (no nodes): leave 'node' out`);
    });
    // Stable: two fsyncs after one request keep the hypothesis's order.
    const sorted = [...h.fsyncAfter].sort((a, b) => a.afterOp - b.afterOp);
    return this.withInserted(sorted.map((x) => ({ afterOp: x.afterOp, ino: 'ino' in x ? x.ino : this.inoAt(x.afterOp, x.path) })), h.fsyncSkip ?? []);
  }

  /**
   * The same run with fsyncs inserted, `inserts` in the order they come (by afterOp; ties in the
   * given order): each is a request of its own, so every later request moves up by one. An insert
   * whose ino is null is another node's (a cluster's one numbering): it moves the later requests up
   * but adds no call here. The fsyncs of the requests in `skip` (the run's numbers) are left out.
   */
  withInserted(inserts: readonly { afterOp: number; ino: number | null }[], skip: readonly number[]): StateSpace {
    for (let i = 1; i < inserts.length; i++) {
      if (inserts[i].afterOp < inserts[i - 1].afterOp) throw new Error(`invariant: inserted fsyncs come in request order (after ${inserts[i - 1].afterOp}, then after ${inserts[i].afterOp})`);
    }
    for (const x of inserts) if (!Number.isInteger(x.afterOp) || x.afterOp < 0 || x.afterOp > this.opCount) throw new Error(`hypothesis.fsyncAfter: afterOp ${x.afterOp} is not in 0..${this.opCount} (the requests of the recorded run)`);
    const pending = [...inserts];
    const derived = new Recording(this.recording.owner, this.recording.maxBytes, this.recording.base);
    derived.startTime = this.recording.startTime;
    let added = 0;
    // An fsync inserted after request N comes right after N's calls, before any later request's.
    const emitUpTo = (op: number) => {
      while (pending.length > 0 && pending[0].afterOp < op) {
        const x = pending.shift()!;
        if (x.ino !== null) derived.calls.push({ op: x.afterOp + added + 1, method: 'fsync', args: [x.ino], times: [] });
        added++;
      }
    };
    const skipped = new Set(skip);
    for (const c of this.recording.calls) {
      emitUpTo(c.op);
      if (skipped.has(c.op) && (c.method === 'fsync' || c.method === 'fdatasync')) continue;
      derived.calls.push({ ...c, op: c.op + added });
    }
    emitUpTo(Infinity);
    derived.close();
    return new StateSpace(derived, this.opCount + added);
  }

  /** The inode `path` names right after request `afterOp` (what a hypothesis's path fsyncs). */
  inoAt(afterOp: number, path: string): number {
    return this.replayTo(afterOp).resolve(path);
  }

  private replayTo(afterOp: number): FsModel {
    if (!Number.isInteger(afterOp) || afterOp < 0 || afterOp > this.opCount) throw new Error(`afterOp ${afterOp} is not in 0..${this.opCount} (the requests of the recorded run)`);
    if (!this.cursor || this.cursor.afterOp > afterOp) this.cursor = null;
    const r = replay(this.recording, afterOp, this.cursor ?? undefined);
    this.cursor = { ...r, afterOp };
    return r.model;
  }

  /** The request that made each change (by change seq): replaying the run and watching the model's change count. */
  private opOfSeq(): (seq: number) => number {
    const ops = this.changeIndex().opOfSeq;
    return (seq) => ops[seq] ?? 0;
  }

  /** How many changes the run had made before request `op`'s calls (what an fsync at op, not held, covers). */
  private changesBefore(op: number): number {
    const { countAfterOp } = this.changeIndex();
    let n = 0;
    for (const [o, count] of countAfterOp) if (o < op) n = count;
    return n;
  }

  private changeIndex(): { opOfSeq: number[]; countAfterOp: [number, number][] } {
    if (!this.index) {
      const opOfSeq: number[] = [];
      const countAfterOp: [number, number][] = [];
      const calls = this.recording.calls;
      let replayed: { model: FsModel; next: number } | undefined;
      for (let i = 0; i < calls.length; i++) {
        const op = calls[i].op;
        if (i + 1 < calls.length && calls[i + 1].op === op) continue;
        const before = replayed?.model.changeCount ?? 0;
        replayed = replay(this.recording, op, replayed);
        for (let s = before + 1; s <= replayed.model.changeCount; s++) opOfSeq[s] = op;
        countAfterOp.push([op, replayed.model.changeCount]);
      }
      this.index = { opOfSeq, countAfterOp };
    }
    return this.index;
  }
  private index: { opOfSeq: number[]; countAfterOp: [number, number][] } | undefined;

  /** The model method the first call of request `op` ran (for naming a directory operation). */
  private methodOf(op: number): string {
    return this.recording.calls.find((c) => c.op === op)?.method ?? 'change';
  }
}

/** A file's bytes at `path` of an image tree, or undefined when no such file. */
function fileAt(tree: FsTree, path: string): Buffer | undefined {
  let t: FsTree | undefined = tree;
  for (const name of path.split('/').filter((x) => x)) t = t?.type === 'dir' ? t.entries.get(name) : undefined;
  return t?.type === 'file' ? t.data : undefined;
}
