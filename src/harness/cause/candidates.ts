// Candidate causes read off a recording (pure), before any probe: most durability bugs are one of a
// few shapes the requests show directly (as ALICE lists persistence points from a system-call
// trace). A name created, renamed or removed whose directory is not fsynced before something relies
// on it; a write not fsynced before something relies on it; a confirmation printed before the fsync
// that makes it true; a removal or truncation made durable before what stops depending on it. Each
// candidate is a fix (a step added to the recording, as cause.ts's FixStep) with the cuts where it
// bites, so the failing states it may explain can be counted before it is proven. A candidate is
// never a cause until its proof holds (explain.ts, cluster-cause.ts).
import type { Mark } from '../../../fusefs/crash-states.js';
import type { TraceEntry } from '../../../fusefs/protocol.js';
import type { Outcome } from '../outcome.js';
import { parentOf, pathPattern } from '../path-pattern.js';
import { persistenceKey, persistenceTitle, type Cause, type FixStep } from './cause.js';
import { lineInWords, syncInWords } from './search.js';

/** What a candidate needs of a recording. */
export interface RecordingView {
  trace: readonly TraceEntry[];
  marks: readonly Mark[];
  outcomes: readonly Outcome[];
}

/** The cuts in which a candidate bites: after a request in [fromOp, toOp), on `node` (a cluster's) or on the one disk. */
export interface BiteWindow {
  fromOp: number;
  toOp: number;
  node?: number;
}

export interface CandidateFix {
  /** The cause it would be, once proven: kind, key, title, fix, step; `route: 'candidate'`. */
  cause: Cause;
  windows: BiteWindow[];
  /** A cluster's: the nodes whose programs get the step (each made such requests unsynced). */
  nodes?: number[];
}

/** A cut to rank candidates by: where the power went, and on which nodes (absent: every node). */
export interface FailingCut {
  afterOp: number;
  nodes?: readonly number[];
}

export const DIR_OPS: ReadonlySet<string> = new Set(['create', 'mkdir', 'mknod', 'symlink', 'link', 'unlink', 'rmdir', 'rename']);
const DATA_OPS: ReadonlySet<string> = new Set(['write', 'truncate', 'fallocate']);
const CONFIRMATIONS: ReadonlySet<string> = new Set(['durable', 'waited', 'acked']);
const ok = (e: TraceEntry) => e.result === 0;
const isSync = (e: TraceEntry) => ok(e) && (e.kind === 'fsync' || e.kind === 'fsyncdir');
const sameNode = (a: TraceEntry, b: TraceEntry) => (a.node ?? 0) === (b.node ?? 0);
const NO_SEARCH = { probes: 0, ms: 0, bound: { maxProbes: 0, maxMs: 0 }, boundReached: false };
/** The persistence points after a line or a removal that a candidate may wait for or move after: the next few, one per kind of file. */
const NEXT_POINTS = 3;

/** The directories whose entries a directory operation changes: its parent, and a rename's or link's target's. */
export function dirsChangedBy(e: TraceEntry): string[] {
  if (!DIR_OPS.has(e.kind)) return [];
  const dirs = [parentOf(e.path)];
  if ((e.kind === 'rename' || e.kind === 'link') && e.path2 !== undefined && !dirs.includes(parentOf(e.path2))) dirs.push(parentOf(e.path2));
  return dirs;
}

/**
 * What a persistence point made durable: the changes to its path since that path's previous
 * persistence point (a directory fsync: its entries; a file's fsync: its data and size), on its node.
 */
export function madeDurableBy(trace: readonly TraceEntry[], p: TraceEntry): TraceEntry[] {
  const previous = trace.filter((e) => isSync(e) && e.op < p.op && e.path === p.path && sameNode(e, p)).at(-1)?.op ?? 0;
  return trace.filter((e) => e.op > previous && e.op < p.op && ok(e) && sameNode(e, p) && (p.kind === 'fsyncdir'
    ? dirsChangedBy(e).includes(p.path)
    : DATA_OPS.has(e.kind) && e.path === p.path));
}

/**
 * The first thing after `from` (on the same node) that relies on what came before: a confirmation's
 * mark, or a persistence point of something else; with where it is, and in words.
 */
function firstReliance(v: RecordingView, from: TraceEntry, until: number, own: string): { at: number; words: string } | undefined {
  const mark = v.marks.find((m) => m.afterOp >= from.op && m.afterOp < until && CONFIRMATIONS.has(v.outcomes[m.n - 1]?.t ?? ''));
  const sync = v.trace.find((e) => e.op > from.op && e.op < until && isSync(e) && e.path !== own);
  if (mark && (!sync || mark.afterOp < sync.op)) return { at: mark.afterOp, words: lineInWords(v, 0, mark.n) };
  return sync ? { at: sync.op, words: syncInWords(sync) } : undefined;
}

/**
 * The name `path` (as of request `from`) has when request `op` runs: each rename of it (or of a
 * directory above it) on the same node in between moves it; undefined once it is removed.
 */
function nameAt(trace: readonly TraceEntry[], path: string, from: TraceEntry, op: number): string | undefined {
  let at: string | undefined = path;
  for (const e of trace) {
    if (e.op <= from.op || e.op >= op || !ok(e) || !sameNode(e, from) || at === undefined) continue;
    if (e.kind === 'rename' && e.path2 !== undefined) {
      if (at === e.path) at = e.path2;
      else if (at.startsWith(`${e.path}/`)) at = `${e.path2}${at.slice(e.path.length)}`;
      else if (at === e.path2) at = undefined; // renamed over: the file it named is gone
    } else if (e.kind === 'unlink' && at === e.path) at = undefined;
  }
  return at;
}

/** The next fsync of the file `e` changed (by the name it has then), on its node; Infinity when none comes before it is removed or the run ends. */
function nextFileSync(trace: readonly TraceEntry[], e: TraceEntry): number {
  for (const s of trace) {
    if (s.op <= e.op || !sameNode(s, e) || s.kind !== 'fsync' || !ok(s)) continue;
    const name = nameAt(trace, e.path, e, s.op);
    if (name === undefined) return Infinity;
    if (name === s.path) return s.op;
  }
  return Infinity;
}

const nextDirSync = (trace: readonly TraceEntry[], e: TraceEntry, dir: string): number =>
  trace.find((s) => s.op > e.op && sameNode(s, e) && s.kind === 'fsyncdir' && ok(s) && s.path === dir)?.op ?? Infinity;

/** Adds a window to the candidate of `key`, or makes the candidate with `make` (its first occurrence anchors the step). */
function collect(byKey: Map<string, CandidateFix>, key: string, window: BiteWindow, make: () => Cause): void {
  const c = byKey.get(key);
  if (c) {
    c.windows.push(window);
    if (window.node !== undefined && !c.nodes!.includes(window.node)) c.nodes!.push(window.node);
    return;
  }
  byKey.set(key, { cause: make(), windows: [window], ...(window.node !== undefined ? { nodes: [window.node] } : {}) });
}

/** Missing fsyncs: of a directory after an entry changed in it, of a file after its data changed, each relied on before the next fsync of it. */
function missingFsyncs(v: RecordingView, byKey: Map<string, CandidateFix>): void {
  const end = (v.trace.at(-1)?.op ?? 0) + 1;
  for (const e of v.trace) {
    if (!ok(e)) continue;
    if (DIR_OPS.has(e.kind)) {
      for (const dir of dirsChangedBy(e)) {
        const syncedAt = nextDirSync(v.trace, e, dir);
        const relied = firstReliance(v, e, Math.min(syncedAt, end), dir);
        if (relied === undefined) continue;
        const toDest = e.path2 !== undefined && parentOf(e.path2) === dir && dir !== parentOf(e.path);
        const name = (toDest ? e.path2! : e.path).slice(dir === '/' ? 1 : dir.length + 1);
        const change = { seq: 0, op: e.op, kind: e.kind, entries: [{ name, target: e.kind === 'unlink' || e.kind === 'rmdir' ? null : name }] };
        const unit = { kind: 'dir' as const, ino: 0, path: dir };
        const key = persistenceKey('missing-dir-fsync', unit, change);
        collect(byKey, key, { fromOp: e.op, toOp: Math.min(syncedAt, end), ...(e.node !== undefined ? { node: e.node } : {}) }, () => ({
          kind: 'missing-dir-fsync', route: 'candidate', key, title: persistenceTitle('missing-dir-fsync', unit, change),
          fix: `fsync the directory ${dir} after ${e.kind} ${toDest ? e.path2 : e.path} (request ${e.op}), before ${relied.words}`,
          unit, change, step: { kind: 'fsync-after', afterOp: e.op, ino: 0, path: dir, dir: true }, evidence: [], search: NO_SEARCH,
        }));
      }
    } else if (DATA_OPS.has(e.kind)) {
      const syncedAt = nextFileSync(v.trace, e);
      const relied = firstReliance(v, e, Math.min(syncedAt, end), e.path);
      if (relied === undefined) continue;
      const change = { seq: 0, op: e.op, kind: e.kind };
      const unit = { kind: 'file' as const, ino: 0, path: e.path };
      const key = persistenceKey('missing-fsync', unit, change);
      collect(byKey, key, { fromOp: e.op, toOp: Math.min(syncedAt, end), ...(e.node !== undefined ? { node: e.node } : {}) }, () => ({
        kind: 'missing-fsync', route: 'candidate', key, title: persistenceTitle('missing-fsync', unit, change),
        fix: `fsync ${e.path} after its ${e.kind} at request ${e.op}, before ${relied.words}`,
        unit, change, step: { kind: 'fsync-after', afterOp: e.op, ino: 0, path: e.path, dir: false }, evidence: [], search: NO_SEARCH,
      }));
    }
  }
}

/**
 * Confirmations printed before the fsync that makes what they claim durable: each line waits for the
 * next fsync of a file or directory it had unsynced changes in, or for one of the next persistence
 * points after it (what it claims may not be written yet: an ack confirmed before its checkpoint).
 */
function earlyConfirmations(v: RecordingView, byKey: Map<string, CandidateFix>): void {
  const syncs = v.trace.filter(isSync);
  for (const m of v.marks) {
    const t = v.outcomes[m.n - 1]?.t;
    if (t === undefined || !CONFIRMATIONS.has(t)) continue;
    const untils = new Set<number>();
    for (const e of v.trace) {
      if (e.op > m.afterOp) break;
      if (!ok(e)) continue;
      const units = DATA_OPS.has(e.kind) ? [nextFileSync(v.trace, e)] : dirsChangedBy(e).map((d) => nextDirSync(v.trace, e, d));
      for (const at of units) if (at !== Infinity && at > m.afterOp) untils.add(at);
    }
    const paths = new Set<string>();
    for (const s of syncs) {
      if (s.op <= m.afterOp || paths.size >= NEXT_POINTS) continue;
      if (!paths.has(pathPattern(s.path))) untils.add(s.op);
      paths.add(pathPattern(s.path));
    }
    for (const at of [...untils].sort((a, b) => a - b)) {
      const sync = v.trace.find((x) => x.op === at)!;
      const dir = sync.kind === 'fsyncdir';
      const key = `early-confirmation ${pathPattern(sync.path)} ${t}`;

      collect(byKey, key, { fromOp: m.afterOp, toOp: at, ...(sync.node !== undefined ? { node: sync.node } : {}) }, () => ({
        kind: 'early-confirmation', route: 'candidate', key, title: `confirmation ("${t}") before the ${dir ? 'directory fsync' : 'fsync'} of ${pathPattern(sync.path)} completed`,
        fix: `wait for ${syncInWords(sync)} to complete before ${lineInWords(v, 0, m.n)}: it makes what the line claims durable`,
        unit: { kind: dir ? 'dir' : 'file', ino: 0, path: sync.path },
        before: lineInWords(v, 0, m.n), step: { kind: 'wait', line: m.n, untilOp: at }, evidence: [], search: NO_SEARCH,
      }));
    }
  }
}

/** Removals and truncations made durable before the next persistence point: the fsync that made them durable, moved after it. */
function earlyPersistence(v: RecordingView, byKey: Map<string, CandidateFix>): void {
  const syncs = v.trace.filter(isSync);
  for (const p of syncs) {
    const made = madeDurableBy(v.trace, p);
    const removes = made.some((e) => e.kind === 'unlink' || e.kind === 'rmdir' || e.kind === 'truncate' || (e.kind === 'rename' && p.kind === 'fsyncdir' && parentOf(e.path) === p.path));
    if (!removes) continue;
    const kinds = [...new Set(made.map((e) => `${e.kind} ${pathPattern(e.path)}`))].join(', ');
    const key = `early-persistence ${kinds}`;
    // What depends on the removal's absence is one of the next persistence points of other files (a checkpoint that stops naming the page): one candidate each.
    const next: TraceEntry[] = [];
    for (const s of syncs) if (s.op > p.op && s.path !== p.path && next.length < NEXT_POINTS && !next.some((x) => pathPattern(x.path) === pathPattern(s.path))) next.push(s);
    for (const n of next) {
      const step: FixStep = { kind: 'move', op: p.op, afterOp: n.op };
      collect(byKey, `${key} -> ${pathPattern(n.path)}`, { fromOp: p.op, toOp: n.op, ...(p.node !== undefined ? { node: p.node } : {}) }, () => ({
        kind: 'early-persistence', route: 'candidate', key, title: `${kinds} made durable too early`,
        fix: `${syncInWords(p)} made ${made[0].kind} ${made[0].path} (request ${made[0].op})${made.length > 1 ? ` and ${made.length - 1} more` : ''} durable too early: make that durable only once what depends on its absence is (${syncInWords(n)})`,
        before: syncInWords(n), step, evidence: [], search: NO_SEARCH,
      }));
    }
  }
}

/** Every candidate of the recording, one per cause key and step kind (its first occurrence anchors the step; the fix covers every request like it); a moved persistence point, one per place it may move to. */
export function candidatesOf(v: RecordingView): CandidateFix[] {
  const byKey = new Map<string, CandidateFix>();
  missingFsyncs(v, byKey);
  earlyConfirmations(v, byKey);
  earlyPersistence(v, byKey);
  return [...byKey.values()];
}

/** Whether a cut falls in one of the windows (on a node it cut, for a cluster). */
export function bitesAt(c: CandidateFix, cut: FailingCut): boolean {
  return c.windows.some((w) => cut.afterOp >= w.fromOp && cut.afterOp < w.toOp && (w.node === undefined || cut.nodes === undefined || cut.nodes.includes(w.node)));
}

/** Kinds in the order a tie is broken: a directory's missing fsync first (a new file needs its name before its bytes matter). */
const KIND_ORDER = ['missing-dir-fsync', 'missing-fsync', 'early-confirmation', 'early-persistence'];

/** Where a candidate's window holding `cut` ends (the fsync it waits for), or Infinity when none holds it. */
const endAt = (c: CandidateFix, cut: FailingCut): number =>
  Math.min(...c.windows.filter((w) => cut.afterOp >= w.fromOp && cut.afterOp < w.toOp && (w.node === undefined || cut.nodes === undefined || cut.nodes.includes(w.node))).map((w) => w.toOp));

/**
 * The candidates that bite at some of the cuts, most cuts first, with the cuts (indexes) each bites
 * at; at most `max` of them. A cut a line is withheld at counts for the shortest wait that holds it
 * (the first fsync that makes the claim true), not for every later one.
 */
export function rankCandidates(candidates: readonly CandidateFix[], cuts: readonly FailingCut[], max: number): { candidate: CandidateFix; cuts: number[] }[] {
  const isWait = (c: CandidateFix) => c.cause.step?.kind === 'wait';
  const waits = candidates.filter(isWait);
  const counts = (c: CandidateFix, cut: FailingCut) => bitesAt(c, cut) && (!isWait(c) || waits.every((w) => endAt(w, cut) >= endAt(c, cut)));
  return candidates
    .map((candidate) => ({ candidate, cuts: cuts.flatMap((cut, i) => (counts(candidate, cut) ? [i] : [])) }))
    .filter((r) => r.cuts.length > 0)
    // On a tie: the kind order, then a file's before a directory's (a line claims data a file's fsync makes durable), then the earliest.
    .sort((a, b) => b.cuts.length - a.cuts.length || KIND_ORDER.indexOf(a.candidate.cause.kind) - KIND_ORDER.indexOf(b.candidate.cause.kind)
      || Number(a.candidate.cause.unit?.kind === 'dir') - Number(b.candidate.cause.unit?.kind === 'dir') || a.candidate.windows[0].fromOp - b.candidate.windows[0].fromOp)
    .slice(0, max);
}
