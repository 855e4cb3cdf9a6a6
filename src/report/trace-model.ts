// What the requests of one cut did to durability: which were applied, which persistence request
// saved which change, and which changes were still unsynced at a given moment (a confirmation, the
// power cut). It follows the filesystem's rules (README, "What survives a power cut"): file data
// and size persist on fsync/fdatasync of the file, attributes on fsync only, directory entries on
// fsync of their directory, and a failed fsync dooms what it should have saved.
import path from 'node:path';
import type { Mark } from '../../fusefs/crash-states.js';
import { policyModule } from '../../fusefs/model/policies/index.js';
import { dataInWords } from '../../fusefs/model/policies/write-back.js';
import type { CrashTiming, MutatingKind, TraceEntry } from '../../fusefs/protocol.js';
import type { CrashCase, CutRecord } from '../harness/crash-case.js';

export const DIR_KINDS: ReadonlySet<MutatingKind> = new Set(['create', 'mkdir', 'mknod', 'symlink', 'link', 'unlink', 'rmdir', 'rename', 'fsyncdir']);
export const PERSIST_KINDS: ReadonlySet<MutatingKind> = new Set(['fsync', 'fsyncdir']);

/** What the power cut did to a change that was not persisted yet. */
export type Fate = 'lost' | 'kept' | 'maybe';

export interface PendingChange {
  op: number;
  /** data: bytes or size of a file; meta: attributes; dir: a directory entry. */
  what: 'data' | 'meta' | 'dir';
  fate: Fate;
  /** Why the fate is what it is, in words ("torn policy, seed 7", "a failed fsync dropped it"). */
  because: string;
}

export interface CutView {
  index: number;
  trace: TraceEntry[];
  byOp: Map<number, TraceEntry>;
  /** The highest request number in the trace. */
  maxOp: number;
  /** Requests up to this number had happened when the power went; the cut line is drawn after it. */
  boundary: number;
  /** Exhaustive mode: the trace goes on past the crash state (the recorded run); this case never saw those requests. */
  recordedBeyond: boolean;
  frozenAt: number | null;
  timing?: CrashTiming;
  /** "power cut after request 17 (applied, never answered)", for headings and the log. */
  cutLabel: string;
  policyLabel: string;
  marks: Mark[];
  /** Requests the filesystem applied (a held request is applied only when the cut came after it). */
  applied(op: number): boolean;
  /** Changes not persisted at the cut, by request number, with what the cut did to them. */
  atCut: Map<number, PendingChange>;
  /** Sizes the running program saw at the cut, by path (undefined: the file predates the trace). */
  liveSizes: Map<string, number | undefined>;
  /** Names the program had removed by the cut, with the request that removed each. */
  removedNames: Map<string, number>;
}

interface Inode {
  id: number;
  dir: boolean;
  size?: number;
  data: number[];
  meta: number[];
}

/** Replays trace entries into "what is not durable yet"; one instance per question asked. */
class SyncModel {
  private names = new Map<string, Inode>();
  private nextId = 1;
  private inodes: Inode[] = [];
  private journal: { op: number; dirs: Set<string> }[] = [];
  /** Changes a failed fsync dropped: they can never become durable. */
  private doomed: PendingChange[] = [];
  /** Names the program removed (unlink, rename away), by the request that removed them. */
  readonly removed = new Map<string, number>();

  private inode(p: string, dir = false): Inode {
    let n = this.names.get(p);
    if (!n) {
      n = { id: this.nextId++, dir, data: [], meta: [] };
      this.inodes.push(n);
      this.names.set(p, n);
    }
    return n;
  }

  private fresh(p: string, dir: boolean, size?: number): Inode {
    const n: Inode = { id: this.nextId++, dir, size, data: [], meta: [] };
    this.inodes.push(n);
    this.names.set(p, n);
    return n;
  }

  private journalDirs(op: number, ...dirs: string[]): void {
    this.journal.push({ op, dirs: new Set(dirs) });
  }

  apply(e: TraceEntry): void {
    const failed = e.result !== undefined && e.result < 0;
    if (failed && e.kind === 'fsync') {
      const n = this.inode(e.path);
      for (const op of n.data) this.doomed.push({ op, what: 'data', fate: 'lost', because: `fsync request ${e.op} failed, so it can never be saved` });
      n.data = [];
      return;
    }
    if (failed) return;
    const dirOf = (p: string) => path.posix.dirname(p);
    if (e.kind === 'create' || e.kind === 'mknod' || e.kind === 'symlink' || e.kind === 'mkdir') this.removed.delete(e.path);
    if ((e.kind === 'link' || e.kind === 'rename') && e.path2 !== undefined) this.removed.delete(e.path2);
    if (e.kind === 'unlink' || e.kind === 'rmdir' || e.kind === 'rename') this.removed.set(e.path, e.op);
    switch (e.kind) {
      case 'write': {
        const n = this.inode(e.path);
        n.data.push(e.op);
        if (n.size !== undefined) n.size = Math.max(n.size, (e.offset ?? 0) + (e.length ?? 0));
        break;
      }
      case 'truncate': {
        const n = this.inode(e.path);
        n.data.push(e.op);
        n.size = e.length;
        break;
      }
      case 'fallocate': {
        // Its size change depends on its mode and the size before it: not tracked here.
        const n = this.inode(e.path);
        n.data.push(e.op);
        n.size = undefined;
        break;
      }
      case 'setattr':
        this.inode(e.path).meta.push(e.op);
        break;
      case 'fsync': {
        const n = this.inode(e.path);
        n.data = [];
        if (!e.datasync) n.meta = [];
        break;
      }
      case 'fsyncdir':
        for (const j of this.journal) j.dirs.delete(e.path);
        this.journal = this.journal.filter((j) => j.dirs.size > 0);
        break;
      case 'create':
      case 'mknod':
      case 'symlink':
        this.fresh(e.path, false, e.kind === 'create' ? 0 : undefined);
        this.journalDirs(e.op, dirOf(e.path));
        break;
      case 'mkdir':
        this.fresh(e.path, true);
        this.journalDirs(e.op, dirOf(e.path));
        break;
      case 'link':
        if (e.path2 !== undefined) {
          this.names.set(e.path2, this.inode(e.path));
          this.journalDirs(e.op, dirOf(e.path2));
        }
        break;
      case 'unlink':
      case 'rmdir':
        this.names.delete(e.path);
        this.journalDirs(e.op, dirOf(e.path));
        break;
      case 'rename':
        if (e.path2 !== undefined) {
          const from = e.path;
          const to = e.path2;
          const moved = this.inode(from);
          this.names.delete(from);
          this.names.set(to, moved);
          if (moved.dir) {
            // Everything below a renamed directory is now reached through the new name.
            for (const [p, n] of [...this.names]) {
              if (p.startsWith(from + '/')) {
                this.names.delete(p);
                this.names.set(to + p.slice(from.length), n);
              }
            }
          }
          this.journalDirs(e.op, dirOf(from), dirOf(to));
        }
        break;
    }
  }

  /** Unsynced changes now, in request order, each with the fate `fateOf` gives it (doomed ones are always lost). */
  pending(fateOf: (what: PendingChange['what'], index: number, all: { dataOps: number[] }) => Pick<PendingChange, 'fate' | 'because'> = () => ({ fate: 'lost', because: '' })): PendingChange[] {
    const dataOps = this.inodes.flatMap((n) => n.data).sort((a, b) => a - b);
    const metaOps = this.inodes.flatMap((n) => n.meta).sort((a, b) => a - b);
    const out: PendingChange[] = [...this.doomed];
    this.journal.forEach((j, i) => out.push({ op: j.op, what: 'dir', ...fateOf('dir', i, { dataOps }) }));
    dataOps.forEach((op, i) => out.push({ op, what: 'data', ...fateOf('data', i, { dataOps }) }));
    metaOps.forEach((op, i) => out.push({ op, what: 'meta', ...fateOf('meta', i, { dataOps }) }));
    return out.sort((a, b) => a.op - b.op);
  }

  /** Non-directory names and the sizes the program would see (undefined when the file predates the trace). */
  liveSizes(): Map<string, number | undefined> {
    const out = new Map<string, number | undefined>();
    for (const [p, n] of [...this.names].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) if (!n.dir) out.set(p, n.size);
    return out;
  }
}

/** Whether request `e` of a cut had happened by the power cut. */
function appliedAt(e: TraceEntry, boundary: number, frozenAt: number | null, timing: CrashTiming | undefined): boolean {
  if (e.op > boundary) return false;
  if (e.state === 'held') return e.op === frozenAt && timing === 'after';
  return true;
}

/** Replays the requests applied up to `boundary` (inclusive). */
function modelAt(trace: readonly TraceEntry[], boundary: number, applied: (op: number) => boolean): SyncModel {
  const m = new SyncModel();
  for (const e of trace) {
    if (e.op > boundary) break;
    if (applied(e.op)) m.apply(e);
  }
  return m;
}

/** The cut K of an artifact: where the power went, under which policy, and what it took. */
export function cutView(c: CrashCase, cut: CutRecord, k: number): CutView {
  const trace = [...cut.trace].sort((a, b) => a.op - b.op);
  const byOp = new Map(trace.map((e) => [e.op, e]));
  const maxOp = trace.length ? trace[trace.length - 1].op : 0;
  const state = k === 0 ? c.state : undefined;
  const spec = k === 0 ? (c.cut ? { cut: c.cut, policy: c.policy, seed: c.seed } : undefined) : c.recoveryCut;
  const timing = spec?.cut.timing;
  let boundary: number;
  let cutLabel: string;
  if (state) {
    boundary = state.afterOp;
    cutLabel = `power cut after request ${state.afterOp} (crash state of the recorded run)`;
  } else if (cut.frozenAt === null) {
    boundary = maxOp;
    cutLabel = k === 0 && !c.cut ? 'power cut after the driver exited (fault run)' : 'power cut after the driver exited (the crash point was not reached)';
  } else if (timing === 'after') {
    boundary = cut.frozenAt;
    cutLabel = `power cut after request ${cut.frozenAt} (applied, never answered)`;
  } else {
    boundary = cut.frozenAt - 1;
    cutLabel = `power cut before request ${cut.frozenAt} (it is not applied)`;
  }
  const policy = state ? state.policy : spec?.policy ?? c.policy;
  const seed = spec?.seed ?? c.seed;
  const { keepsUnsynced, modelsJournalingFs } = policyModule(policy);
  const policyLabel = keepsUnsynced === 'none' ? `${policy}: every unsynced change is lost`
    : keepsUnsynced === 'all' ? `${policy}: nothing is lost`
      : state ? `${policy}: the first ${state.dirPrefix ?? 0} unsynced directory operations kept; ${state.data ? dataInWords(state.data) : 'no unsynced write kept'}`
        : `${policy}, seed ${seed}: each unsynced write kept fully, in part or not at all${modelsJournalingFs ? ', directory operations before the last journal commit kept' : ''}`;

  const applied = (op: number) => {
    const e = byOp.get(op);
    return e !== undefined && appliedAt(e, boundary, cut.frozenAt, timing);
  };
  const model = modelAt(trace, boundary, applied);
  const fateOf = (what: PendingChange['what'], index: number, all: { dataOps: number[] }): Pick<PendingChange, 'fate' | 'because'> => {
    if (keepsUnsynced === 'all') return { fate: 'kept', because: `${policy} policy` };
    if (keepsUnsynced === 'none') return { fate: 'lost', because: 'not persisted when the power went' };
    if (!state) return { fate: 'maybe', because: `${policy} policy, seed ${seed}: may be kept, kept in part or lost` };
    const prefix = state.dirPrefix ?? 0;
    if (what === 'dir') return index < prefix ? { fate: 'kept', because: `${policy}: unsynced directory operation ${index + 1}, within the kept prefix of ${prefix}` } : { fate: 'lost', because: `${policy}: unsynced directory operation ${index + 1}, past the kept prefix of ${prefix}` };
    const d = state.data ?? { kind: 'none' as const };
    if (what === 'meta') return d.kind === 'all' ? { fate: 'kept', because: `${policy}: every unsynced change kept` } : { fate: 'lost', because: `${policy}: attributes persist only when every change does` };
    const w = index + 1;
    const of = `unsynced write ${w} of ${all.dataOps.length}`;
    switch (d.kind) {
      case 'all': return { fate: 'kept', because: `torn: ${of}, every unsynced write kept` };
      case 'none': return { fate: 'lost', because: `torn: ${of}, no unsynced write kept` };
      case 'only': return w === d.write ? { fate: 'kept', because: `torn: ${of}, the one kept` } : w < d.write ? { fate: 'maybe', because: `torn: ${of}, kept only in the 512-byte sectors it shares with write ${d.write}, the one kept` } : { fate: 'lost', because: `torn: ${of}, after write ${d.write}, the one kept` };
      case 'except': return w === d.write ? { fate: 'lost', because: `torn: ${of}, the one lost` } : w < d.write ? { fate: 'kept', because: `torn: ${of}, before write ${d.write}, the one lost` } : { fate: 'maybe', because: `torn: ${of}, lost in the 512-byte sectors it shares with write ${d.write}, the one lost; kept elsewhere` };
      case 'sectors': return { fate: 'maybe', because: `torn: ${of}, sectors drawn from seed ${d.seed}: kept fully, in part or not at all` };
    }
  };
  const atCut = new Map(model.pending(fateOf).map((p) => [p.op, p]));
  return {
    index: k, trace, byOp, maxOp, boundary, recordedBeyond: state !== undefined && maxOp > boundary, frozenAt: cut.frozenAt, timing, cutLabel, policyLabel,
    marks: cut.marks ?? [], applied, atCut, liveSizes: model.liveSizes(), removedNames: model.removed,
  };
}

/** Changes not persisted right after request `afterOp` (e.g. when a confirmation was printed). */
export function unsyncedAfter(view: CutView, afterOp: number): Set<number> {
  return new Set(modelAt(view.trace, afterOp, view.applied).pending().map((p) => p.op));
}

/** The last persistence request that succeeded at or before `afterOp`, optionally only of these paths. */
export function lastPersistBefore(view: CutView, afterOp: number, paths?: ReadonlySet<string>): TraceEntry | undefined {
  for (let i = view.trace.length - 1; i >= 0; i--) {
    const e = view.trace[i];
    if (e.op > afterOp || !view.applied(e.op) || !PERSIST_KINDS.has(e.kind) || (e.result ?? 0) < 0) continue;
    if (paths && !paths.has(e.path)) continue;
    return e;
  }
  return undefined;
}
