// The cause of a failing crash state, by probing (docs/design.md, "Why it failed"). What the cut
// lost decomposes into units (a file's unsynced changes, a directory's unsynced entries, an inode's
// attributes); a probe recovers the state with some of them made durable anyway and judges it.
// Delta debugging finds a 1-minimal set of units whose persistence makes the recovery pass the
// checks the state failed, then the one change inside the unit that matters; what that change had
// to come before (the confirmation it broke, or the next persistence point the recovery relied on)
// makes it a fix in the program's terms. When persisting what was lost cannot help, a confirmation
// came too soon (a later state passes), or the disk held a legal state and recovery mishandled it; a
// lost change nothing later relied on means a persistence point came too early. Probes tell which.
// Bounded by probes and time; a cause not isolated within the bound is reported as such.
import type { CrashStateId, CrashStateInfo, Hypothesis, LostUnit, Mark, ProbeUnit, UnitChange } from '../../../fusefs/crash-states.js';
import { keepsNoUnsynced } from '../../../fusefs/model/policies/index.js';
import type { TraceEntry } from '../../../fusefs/protocol.js';
import type { Outcome } from '../outcome.js';
import type { RunRecord, Violation } from '../oracle.js';
import { parentOf, pathPattern, pathsNamedIn } from '../path-pattern.js';
import { BudgetSpent, ddmin, ddminByGroup, smallestPrefix, type DdminOptions } from './ddmin.js';
import { reachableUnits } from './reachable.js';
import { changedPath, changeInWords, DEFAULT_SEARCH_BOUND, persistenceKey, persistenceTitle, requestsInWords, type Cause, type SearchBound } from './cause.js';

/** One probe: a state of the recorded run (or of a hypothesis about it), with units made durable; judged against the state's confirmations. */
export interface ProbeRequest {
  state: CrashStateId;
  persist?: ProbeUnit[];
  hypothesis?: Hypothesis;
  /** Judge against the lines marked by this request (default: the state's own cut): a later state with the failing state's confirmations. */
  linesAsOf?: number;
  /** Every unit the state lost made durable (the disk a process crash leaves there). */
  persistAll?: boolean;
}
export type ProbeFn = (req: ProbeRequest) => Promise<Violation[]>;

/** A failing state and what the recorded run says around it. */
export interface FailingState {
  state: CrashStateInfo;
  violations: Violation[];
  /** What it lost (the daemon's `units`). */
  units: LostUnit[];
  /** The recorded run: its requests, where each line was marked, the workload's lines. */
  trace: readonly TraceEntry[];
  marks: readonly Mark[];
  workload: RunRecord;
}

/** A line the program printed, in words: `line 12 of run 0 ("waited" seq 5)`. */
export function lineInWords(workload: { readonly outcomes: readonly Outcome[] }, run: number, line: number): string {
  const o: Outcome | undefined = run === 0 ? workload.outcomes[line - 1] : undefined;
  if (!o) return `line ${line} of run ${run}`;
  const what = o.t === 'waited' ? ` seq ${o.seq}` : o.t === 'durable' || o.t === 'open' ? ` durableSeq ${o.durableSeq}, first unacked ${o.durableFirstUnackedSeq}` : o.t === 'acked' ? ` seqs ${o.seqs.join(', ')}` : '';
  return `line ${line} of run ${run} ("${o.t}"${what})`;
}

/** A lost unit as a probe makes it durable (on its node, for a cluster's state). */
const persistUnit = (u: LostUnit, change?: { upTo?: number; seqs?: number[] }): ProbeUnit => ({
  ...(u.kind === 'file' ? { kind: 'file' as const, ino: u.ino, ...(change?.upTo !== undefined ? { upTo: change.upTo } : {}) }
    : u.kind === 'dir' ? { kind: 'dir' as const, ino: u.ino, ...(change?.seqs ? { seqs: change.seqs } : {}) }
      : { kind: 'meta' as const, ino: u.ino }),
  ...(u.node !== undefined ? { node: u.node } : {}),
});

/** " on node k" for a cluster's unit or request, "" on one disk. */
const onNode = (x: { node?: number }): string => (x.node !== undefined ? ` on node ${x.node}` : '');

function unitInWords(u: LostUnit): string {
  return `${u.kind === 'dir' ? `the entries of directory ${u.path}` : u.kind === 'file' ? `the data of ${u.path}` : `the attributes of ${u.path}`}${onNode(u)}`;
}

/** Units listed one by one up to a handful; past that, the first few and the rest counted by kind. */
export function unitsInWords(units: readonly LostUnit[]): string {
  const SHOWN = 6;
  if (units.length <= SHOWN + 2) return units.map(unitInWords).join('; ');
  const rest = units.slice(SHOWN);
  const kinds = ([['file', 'files\' data'], ['dir', 'directories\' entries'], ['meta', 'attributes']] as const)
    .map(([kind, word]) => [rest.filter((u) => u.kind === kind).length, word] as const)
    .filter(([n]) => n > 0).map(([n, word]) => `${n} ${word}`).join(', ');
  return `${units.slice(0, SHOWN).map(unitInWords).join('; ')}; and ${rest.length} more: ${kinds}`;
}

/**
 * How a cluster's lost units are narrowed before ddmin over units: by node (a majority of amnesiac
 * nodes fails however much else is kept), then by directory, then by path (a file's data and
 * attributes), each across the nodes kept: they run the same program, so what one needs the others
 * of a majority need too. On one disk: none.
 */
function clusterGroupings(units: readonly LostUnit[]): [string, (u: LostUnit) => string][] {
  if (!units.some((u) => u.node !== undefined)) return [];
  const named = (u: LostUnit) => u.path.startsWith('/');
  const dirOf = (u: LostUnit) => (u.kind === 'dir' ? u.path : named(u) ? parentOf(u.path) : '(unnamed)');
  return [['node', (u) => `${u.node}`], ['directory', dirOf], ['path', (u) => (named(u) ? u.path : `${u.node} ${u.ino}`)]];
}

/**
 * Searches the cause of one failing state within `bound`; never throws for the bound (the cause
 * then says it was reached). `probesAtOnce` > 1 runs that many probes at once (a cluster's, which
 * mostly wait on elections), each item left out of the others first (DdminOptions.leaveOneOutFirst).
 */
export async function searchCause(f: FailingState, probe: ProbeFn, bound: SearchBound = DEFAULT_SEARCH_BOUND, probesAtOnce = 1): Promise<Cause> {
  const reduce: DdminOptions = { parallel: probesAtOnce, leaveOneOutFirst: probesAtOnce > 1 };
  const started = Date.now();
  let probes = 0;
  const targets = new Set(f.violations.filter((v) => !v.hang).map((v) => v.check));
  const evidence: string[] = [];
  // A probe is not started when the longest so far would end past the bound (a cluster's take seconds).
  let longestProbeMs = 0;
  const passes = async (req: ProbeRequest): Promise<boolean> => {
    if (probes >= bound.maxProbes) throw new BudgetSpent(`${bound.maxProbes} probes`);
    const elapsedMs = Date.now() - started;
    if (bound.maxMs !== undefined && elapsedMs + longestProbeMs > bound.maxMs) throw new BudgetSpent(`${bound.maxMs / 1000} s${elapsedMs <= bound.maxMs ? ` (${(elapsedMs / 1000).toFixed(1)} s spent, and a probe takes up to ${(longestProbeMs / 1000).toFixed(1)} s)` : ''}`);
    probes++;
    const t0 = Date.now();
    const r = !(await probe(req)).some((v) => !v.hang && targets.has(v.check));
    longestProbeMs = Math.max(longestProbeMs, Date.now() - t0);
    return r;
  };
  const id = f.state.id;
  const done = (c: Omit<Cause, 'search' | 'evidence'>, boundReached = false): Cause => ({
    ...c, evidence, search: { probes, ms: Date.now() - started, bound, boundReached },
  });
  try {
    // A replayed ack cannot be fixed by a deletion becoming durable (it only destroys the evidence): no removal is a candidate then.
    const removals = targets.has('bounded-replay');
    const units = f.units
      .map((u) => (removals && u.kind === 'dir' ? { ...u, changes: u.changes.filter((c) => !c.entries?.every((e) => e.target === null)) } : u))
      .filter((u) => u.kind !== 'dir' || u.changes.length > 0);
    if (units.length > 0 && (await passes({ state: id, persist: units.map((u) => persistUnit(u, u.kind === 'dir' && removals ? { seqs: u.changes.map((c) => c.seq) } : undefined)) }))) {
      evidence.push(`with every lost unit made durable (${units.length}: ${unitsInWords(units)}) the recovery passes`);
      const torn = await tornWrite(f, passes, evidence);
      if (torn) return done(torn);
      const persisting = (s: readonly LostUnit[]) => passes({ state: id, persist: s.map((u) => persistUnit(u, u.kind === 'dir' && removals ? { seqs: u.changes.map((c) => c.seq) } : undefined)) });
      let narrowed = units;
      for (const [by, keyOf] of clusterGroupings(units)) {
        const kept = await ddminByGroup(narrowed, keyOf, persisting, reduce);
        if (kept.length < narrowed.length) evidence.push(`narrowed by ${by} to ${kept.length} of ${narrowed.length} lost units (${probes} probes, ${((Date.now() - started) / 1000).toFixed(1)} s so far): ${unitsInWords(kept)}`);
        narrowed = kept;
      }
      const kept = await ddmin(narrowed, persisting, reduce);
      // One disk's probes repeat exactly, so its ddmin keeps no unit that changes nothing: only a cluster's are filtered.
      const minimal = kept.some((u) => u.node !== undefined) ? reachableUnits(kept, f.units) : kept;
      if (minimal.length < kept.length) {
        evidence.push(`left out of the 1-minimal set, ${kept.length - minimal.length} of its ${kept.length} units no path reaches with it durable (under a directory entry it leaves lost; a probe's chance kept them): ${unitsInWords(kept.filter((u) => !minimal.includes(u)))}`);
      }
      if (minimal.length === 0) {
        return done({ kind: 'not-isolated', key: 'not-isolated', title: 'cause not isolated: the recovery passed by chance', fix: 'not isolated: no unit of the set whose persistence made the recovery pass is reachable, so it passed by chance (a recovery of several nodes is a sample); what the probes showed is listed' });
      }
      // Data the program never fsynced at all first (the step it skipped outright), then a directory's
      // entries (a new file needs its name before its bytes matter), then the rest.
      const neverSynced = (u: LostUnit) => u.kind === 'file' && !u.syncedLater.some((x) => x.covers >= (u.changes.at(-1)?.seq ?? 0));
      const rank = (u: LostUnit) => (neverSynced(u) ? 0 : u.kind === 'dir' ? 1 : 2);
      minimal.sort((a, b) => rank(a) - rank(b));
      const unit = minimal[0];
      const others = minimal.slice(1);
      evidence.push(`a 1-minimal set of lost units whose persistence makes it pass: ${unitsInWords(minimal)}`);
      const change = await theChange(unit, others, id, passes, reduce);
      evidence.push(`the change inside ${unitInWords(unit)} that matters: ${changeInWords(unit, change)}`);
      const nonAtomic = await nonAtomicUpdate(f, unit, change, passes, evidence);
      if (nonAtomic) return done(nonAtomic);
      if (!brokenPromise(f) && !reliedOn(f, unit, change)) {
        // Nothing after the change relied on it (no confirmation, no later persistence point or kept
        // write): what relied on it was made durable before it was even made. An order to fix, not a fsync to add.
        evidence.push(`nothing the program did after ${changeInWords(unit, change)} relied on it: the failing state relies on something made durable before it`);
        const early = await earlyPersistence(f, passes, evidence);
        if (early) return done(early);
      }
      return done(persistenceCause(f, unit, change, others));
    }
    evidence.push(units.length === 0 ? 'the cut lost nothing: the state is every change the program made' : 'even with every lost unit made durable the recovery fails');
    // A confirmation came too soon only if what it promised exists by the end of the run (or was
    // acked by then): a disk with every change of the whole run passes, judged against the same
    // lines, or else against the whole run's (its later acks excuse what the cut's lines still owe:
    // seen on async replication, whose end-of-run disk lacked an event acked after the cut). If both
    // fail, the program's logic fails it, and a later state that passes only hides the symptom.
    const lastOp = f.trace.reduce((n, e) => Math.max(n, e.op), id.afterOp);
    const endOfRun = { afterOp: lastOp, policy: 'lose-unsynced' as const };
    const logicFails = lastOp > id.afterOp && !(await passes({ state: endOfRun, persistAll: true, linesAsOf: id.afterOp })) &&
      !(await passes({ state: endOfRun, persistAll: true, linesAsOf: lastOp }));
    if (logicFails) evidence.push(`the disk a process crash leaves at the end of the run (request ${lastOp}) fails too, judged against the same lines and against the whole run's: no confirmation came too soon`);
    const waited = logicFails ? undefined : await confirmedTooSoon(f, passes, evidence);
    if (waited) return done(waited);
    // No persistence point is to blame here: a process crash, which keeps every change, fails as well.
    // What recovery choked on: the first file of the run its error names.
    const failed = f.violations.find((v) => !v.hang)?.message ?? '';
    const checks = [...targets].sort();
    // The file it chokes on was removed just before (a page deleted while a checkpoint still names
    // it): the removal came before what stops depending on the file, which a process crash already shows.
    const removed = removalBlamed(f);
    if (removed) {
      evidence.push(`${removed.last.kind} ${removed.named} (request ${removed.last.op}) is the last request on the file recovery fails at, and a process crash right after it fails already`);
      return done(removalTooEarly(removed, 'a process crash right after it already leaves a disk recovery cannot open', failed));
    }
    const named = pathsNamedIn(failed, f.trace.flatMap((e) => (e.path2 !== undefined ? [e.path, e.path2] : [e.path])))[0];
    return done({
      kind: 'recovery-fails-on-legal-disk',
      key: `recovery-fails-on-legal-disk ${checks.join(',')}${named ? ` ${pathPattern(named)}` : ''}`,
      title: `recovery fails on a disk holding every change the program made (${checks.join(', ')}${named ? `, at ${pathPattern(named)}` : ''})`,
      fix: `recover the disk a process crash leaves after request ${id.afterOp}: ${named ? withoutRecoveryDir(failed.split(' [target')[0], named) : failed.split(' [target')[0]}`,
    });
  } catch (err) {
    if (!(err instanceof BudgetSpent)) throw err;
    evidence.push(err.message);
    return done({ kind: 'not-isolated', key: 'not-isolated', title: 'cause not isolated within the search bound', fix: `not isolated within the search bound (${err.what}); what the probes showed is listed` }, true);
  }
}

/**
 * The file a failing state's recovery chokes on (the first its error names), when the last request
 * on it by the cut removed it (unlink, rmdir, truncate, or a rename away): what a persistence point
 * too early made durable, as a process crash already shows.
 */
export function removalBlamed(f: Pick<FailingState, 'violations' | 'trace' | 'state'>): { named: string; last: TraceEntry } | undefined {
  const failed = f.violations.find((v) => !v.hang)?.message ?? '';
  const named = pathsNamedIn(failed, f.trace.flatMap((e) => (e.path2 !== undefined ? [e.path, e.path2] : [e.path])))[0];
  const last = named ? [...f.trace].reverse().find((e) => e.op <= f.state.id.afterOp && e.result === 0 && (e.path === named || e.path2 === named) && e.kind !== 'fsync') : undefined;
  return last && named && (last.kind === 'unlink' || last.kind === 'rmdir' || last.kind === 'truncate' || (last.kind === 'rename' && last.path === named)) ? { named, last } : undefined;
}

/** A removal made durable too early, as a cause without a step (the program's fix is to remove later): `why` says what shows it. */
export function removalTooEarly({ named, last }: { named: string; last: TraceEntry }, why: string, failed: string): Omit<Cause, 'search' | 'evidence'> {
  const kinds = `${last.kind} ${pathPattern(named)}`;
  return {
    kind: 'early-persistence',
    key: `early-persistence ${kinds}`,
    title: `${kinds} made durable too early`,
    fix: `${last.kind} ${named} (request ${last.op}) comes before what stops depending on it: ${why}; do it only once nothing durable refers to ${named} (${withoutRecoveryDir(failed.split(' [target')[0], named)})`,
  };
}

/**
 * A violation's message with the directory its recovery ran in left out of its paths (a slot's copy
 * of the disk, a temporary folder: it differs from run to run), found where `named` (a path on the
 * mount, such as /page.1) is written after it.
 */
export function withoutRecoveryDir(message: string, named: string): string {
  const at = message.indexOf(named);
  if (at <= 0) return message;
  const dir = message.slice(message.lastIndexOf(' ', at) + 1, at);
  return dir.startsWith('/') ? message.split(`${dir}/`).join('/').split(dir).join('DIR') : message;
}

/** The one change inside `unit` that the recovery needs (with the other units of the minimal set kept durable). */
async function theChange(unit: LostUnit, others: LostUnit[], id: CrashStateId, passes: (r: ProbeRequest) => Promise<boolean>, reduce: DdminOptions): Promise<UnitChange> {
  const rest = others.map((u) => persistUnit(u));
  if (unit.changes.length <= 1) return unit.changes[0] ?? { seq: 0, op: 0, kind: 'attributes' };
  if (unit.kind === 'file') {
    // A sector holds a prefix of its writes: the first k changes, the smallest k that works.
    const k = await smallestPrefix(unit.changes.length, (n) => passes({ state: id, persist: [persistUnit(unit, { upTo: n }), ...rest] }), reduce.parallel);
    return unit.changes[k - 1];
  }
  // A directory may hold hundreds of unsynced operations, most of one kind on one kind of name (a
  // lock file made again and again): first the kinds that matter (operation and name pattern), then
  // the operations of the first of them.
  const kindOf = (c: UnitChange) => `${c.kind} ${pathPattern(changedPath(unit, c))}`;
  const kinds = [...new Set(unit.changes.map(kindOf))];
  const ofKinds = (ks: readonly string[]) => unit.changes.filter((c) => ks.includes(kindOf(c)));
  const needed = kinds.length === 1 ? kinds : await ddmin(kinds, (ks) => passes({ state: id, persist: [persistUnit(unit, { seqs: ofKinds(ks).map((c) => c.seq) }), ...rest] }), reduce);
  const alsoNeeded = ofKinds(needed.slice(1)).map((c) => c.seq);
  const candidates = ofKinds(needed.slice(0, 1));
  const ops = candidates.length === 1 ? candidates : await ddmin(candidates, (s) => passes({ state: id, persist: [persistUnit(unit, { seqs: [...s.map((c) => c.seq), ...alsoNeeded] }), ...rest] }), reduce);
  return ops[0];
}

/** The requests in the recorded trace that made something durable (fsync, fdatasync, directory fsync). */
function persistencePoints(trace: readonly TraceEntry[]): TraceEntry[] {
  return trace.filter((e) => (e.kind === 'fsync' || e.kind === 'fsyncdir') && e.result === 0);
}

export const syncInWords = (e: TraceEntry) => `the ${e.kind === 'fsyncdir' ? 'directory fsync' : e.datasync ? 'fdatasync' : 'fsync'} of ${e.path}${onNode(e)} at request ${e.op}`;

/** The confirmation the failure broke, if a line of the recorded run made the promise. */
function brokenPromise(f: FailingState): { line: number; words: string; markedAfter: number } | undefined {
  const v = f.violations.find((x) => x.promise?.run === 0);
  if (!v?.promise) return undefined;
  const mark = f.marks.find((m) => m.n === v.promise!.line);
  return { line: v.promise.line, words: lineInWords(f.workload, 0, v.promise.line), markedAfter: mark?.afterOp ?? 0 };
}

/** A missing fsync of the unit after its change, or a confirmation that did not wait for the fsync the program did make. */
function persistenceCause(f: FailingState, lost: LostUnit, change: UnitChange, others: LostUnit[]): Omit<Cause, 'search' | 'evidence'> {
  // A file no longer named at the cut (renamed over, unlinked) is named by the path its change was made to.
  const at = f.trace.find((e) => e.op === change.op);
  const unit = lost.kind === 'file' && !lost.path.startsWith('/') && at ? { ...lost, path: at.path } : lost;
  const promise = brokenPromise(f);
  const also = others.length ? ` (and ${unitsInWords(others)})` : '';
  const covering = unit.syncedLater.find((s) => s.covers >= change.seq);
  const sync = covering ? f.trace.find((e) => e.op === covering.op) : undefined;
  if (promise && covering && sync && promise.markedAfter < covering.op) {
    const key = `early-confirmation ${pathPattern(unit.path)} ${f.workload.outcomes[promise.line - 1]?.t ?? 'line'}`;
    return {
      kind: 'early-confirmation', key, title: `confirmation ("${f.workload.outcomes[promise.line - 1]?.t}") before the ${unit.kind === 'dir' ? 'directory fsync' : 'fsync'} of ${pathPattern(unit.path)} completed`,
      fix: `wait for ${syncInWords(sync)} to complete before ${promise.words}: it makes ${changeInWords(unit, change)} durable, and the line was printed before it did${also}`,
      unit: { kind: unit.kind, ino: unit.ino, path: unit.path }, change, before: promise.words,
      step: { kind: 'wait', line: promise.line, untilOp: covering.op },
    };
  }
  const kind = unit.kind === 'dir' ? 'missing-dir-fsync' as const : 'missing-fsync' as const;
  const before = promise?.words ?? nextRelied(f, unit, change);
  const subject = unit.kind === 'dir' ? `the directory ${unit.path}` : unit.path;
  const after = unit.kind === 'dir' ? `${changeInWords(unit, change)}` : changeInWords(unit, change);
  return {
    kind, key: persistenceKey(kind, unit, change), title: persistenceTitle(kind, unit, change),
    fix: `fsync ${subject} after ${after}, before ${before}${also}`,
    unit: { kind: unit.kind, ino: unit.ino, path: unit.path }, change, before,
    step: { kind: 'fsync-after', afterOp: change.op, ino: unit.ino, path: unit.path, dir: unit.kind === 'dir' },
    // Each other unit made durable after its last lost change (attributes follow their file's or directory's fsync).
    ...(others.length ? { alsoSteps: others.filter((u) => u.kind !== 'meta' && u.changes.length > 0).map((u) => ({ kind: 'fsync-after' as const, afterOp: u.changes.at(-1)!.op, ino: u.ino, path: u.path, dir: u.kind === 'dir' })) } : {}),
  };
}

const DIR_OPS = new Set(['create', 'mkdir', 'mknod', 'symlink', 'link', 'unlink', 'rmdir', 'rename']);

/**
 * What relied on a lost change, when no line did: the first request after it, up to the cut, that
 * the state kept and that is about something else: a persistence point, or a write (or directory
 * operation) the state kept, which a write-back may persist at any moment.
 */
function reliedOn(f: FailingState, unit: LostUnit, change: UnitChange): TraceEntry | undefined {
  const own = new Set([unit.path, unit.kind === 'dir' ? changedPath(unit, change) : unit.path]);
  const lost = new Set(f.units.flatMap((u) => u.changes.map((c) => c.op)));
  return f.trace.find((e) => e.op > change.op && e.op <= f.state.id.afterOp && e.result === 0 && !own.has(e.path) && !lost.has(e.op)
    && (e.kind === 'fsync' || e.kind === 'fsyncdir' || e.kind === 'write' || e.kind === 'truncate' || e.kind === 'fallocate' || DIR_OPS.has(e.kind)));
}

function nextRelied(f: FailingState, unit: LostUnit, change: UnitChange): string {
  const next = reliedOn(f, unit, change);
  if (!next) return `the power cut (after request ${f.state.id.afterOp})`;
  return next.kind === 'fsync' || next.kind === 'fsyncdir' ? syncInWords(next) : `the ${next.kind} of ${next.path} at request ${next.op}`;
}

/**
 * A confirmation printed before what makes it true happened at all (an ack confirmed before the
 * checkpoint recording it was written): the state just after one of the next persistence points,
 * judged against the same lines, passes. Then the line came too soon.
 */
async function confirmedTooSoon(f: FailingState, passes: (r: ProbeRequest) => Promise<boolean>, evidence: string[]): Promise<Omit<Cause, 'search' | 'evidence'> | undefined> {
  const promise = brokenPromise(f);
  if (!promise) return undefined;
  const id = f.state.id;
  // A replayed ack's evidence is destroyed, not fixed, by a deletion made durable: no directory fsync counts then.
  const removals = f.violations.some((v) => v.check === 'bounded-replay');
  // The next six persistence points of each node (a cluster's interleave: a backup's fsync may come after several of the primary's).
  const nodes = new Set(f.trace.map((e) => e.node ?? 0)).size;
  for (const p of persistencePoints(f.trace).filter((e) => e.op > id.afterOp && !(removals && e.kind === 'fsyncdir')).slice(0, 6 * nodes)) {
    if (!(await passes({ state: { afterOp: p.op, policy: 'lose-unsynced' }, linesAsOf: id.afterOp }))) continue;
    evidence.push(`the state just after ${syncInWords(p)}, judged against the same lines, passes: ${promise.words} came before it`);
    const line = f.workload.outcomes[promise.line - 1]?.t ?? 'line';
    return {
      kind: 'early-confirmation',
      key: `early-confirmation ${pathPattern(p.path)} ${line}`,
      title: `confirmation ("${line}") before the ${p.kind === 'fsyncdir' ? 'directory fsync' : 'fsync'} of ${pathPattern(p.path)} completed`,
      fix: `wait for ${syncInWords(p)} to complete before ${promise.words}: the line promised what only that request made durable`,
      before: promise.words,
      step: { kind: 'wait', line: promise.line, untilOp: p.op },
    };
  }
  return undefined;
}

/**
 * A torn write recovery mishandles: in a state that kept a file's changes in part, the recovery
 * passes both with all of them and with none of them, so only the partial one fails.
 */
async function tornWrite(f: FailingState, passes: (r: ProbeRequest) => Promise<boolean>, evidence: string[]): Promise<Omit<Cause, 'search' | 'evidence'> | undefined> {
  const data = f.state.id.data;
  if (keepsNoUnsynced(f.state.id.policy) || !data || data.kind === 'all' || data.kind === 'none') return undefined;
  for (const unit of f.units.filter((u) => u.kind === 'file').slice(0, 4)) {
    if (!(await passes({ state: f.state.id, persist: [persistUnit(unit)] }))) continue;
    if (!(await passes({ state: f.state.id, persist: [persistUnit(unit, { upTo: 0 })] }))) continue;
    const first = Math.min(...unit.changes.map((c) => c.offset ?? c.length ?? 0));
    const last = Math.max(...unit.changes.map((c) => (c.offset ?? 0) + (c.kind === 'write' ? (c.length ?? 0) : 0)));
    evidence.push(`the recovery passes with ${unitInWords(unit)} kept whole and with it not kept at all: only the part this state kept fails`);
    const integrity = f.violations.some((v) => v.check === 'integrity');
    const inPlace = unit.changes.some((c) => c.kind === 'write' && (c.offset ?? 0) === 0);
    const range = `bytes ${first}-${last - 1}`;
    return {
      kind: 'torn-write',
      key: `torn-write ${pathPattern(unit.path)} ${integrity ? 'accepted' : 'unrecoverable'}`,
      title: integrity ? `recovery accepts a partially persisted write of ${pathPattern(unit.path)} as valid` : `a torn write of ${pathPattern(unit.path)} leaves it unrecoverable`,
      fix: integrity
        ? `make recovery reject the partially persisted write of ${unit.path} (${range}, ${requestsInWords(unit.changes.map((c) => c.op))}): check each record (a checksum) and stop at the first that fails`
        : `${unit.path} (${range}, ${requestsInWords(unit.changes.map((c) => c.op))}) torn by the cut: recovery found ${inPlace ? 'neither the old nor the new version (an overwrite in place); write the new version to a new file and rename it over the old one' : 'a partial record it cannot get past; make recovery drop the torn tail'}`,
      unit: { kind: unit.kind, ino: unit.ino, path: unit.path },
    };
  }
  return undefined;
}

/**
 * Two directory operations with an unrecoverable state between them: a torn or journaled state kept
 * the first and lost the second, and keeping neither (the prefix before the first) passes too.
 */
async function nonAtomicUpdate(f: FailingState, unit: LostUnit, change: UnitChange, passes: (r: ProbeRequest) => Promise<boolean>, evidence: string[]): Promise<Omit<Cause, 'search' | 'evidence'> | undefined> {
  const id = f.state.id;
  const first = unit.kept?.[unit.kept.length - 1];
  if (unit.kind !== 'dir' || keepsNoUnsynced(id.policy) || !first || (id.dirPrefix ?? 0) === 0) return undefined;
  if (unit.changes[0]?.seq !== change.seq) return undefined;
  if (!(await passes({ state: { ...id, dirPrefix: (id.dirPrefix ?? 0) - 1 } }))) return undefined;
  evidence.push(`the state with one directory operation fewer (before ${changeInWords(unit, first)}) passes, and with ${changeInWords(unit, change)} too: only the state between them fails`);
  return {
    kind: 'non-atomic-update',
    key: `non-atomic-update ${pathPattern(unit.path)} ${first.kind} ${pathPattern(changedPath(unit, first))} ${change.kind} ${pathPattern(changedPath(unit, change))}`,
    title: `${first.kind} of ${pathPattern(changedPath(unit, first))} then ${change.kind} of ${pathPattern(changedPath(unit, change))}: unrecoverable between them`,
    fix: `${changeInWords(unit, first)} and ${changeInWords(unit, change)} leave ${unit.path} unrecoverable between them, and a cut may keep the first alone: no fsync removes that state; make the change one operation (rename the new version over the old one)`,
    unit: { kind: unit.kind, ino: unit.ino, path: unit.path }, change,
  };
}

/**
 * A persistence point that came too early: with one of the last ones before the cut left out (what
 * it made durable still unsynced), the recovery passes. Probed where the state's choices do not
 * depend on how many changes are unsynced (lose-unsynced, or all or none kept), else on the same cut under lose-unsynced.
 */
async function earlyPersistence(f: FailingState, passes: (r: ProbeRequest) => Promise<boolean>, evidence: string[]): Promise<Omit<Cause, 'search' | 'evidence'> | undefined> {
  let id = f.state.id;
  if (!keepsNoUnsynced(id.policy) && !(id.data?.kind === 'all' || id.data?.kind === 'none')) {
    // A torn state's choices shift when a persistence point is left out: ask of the same cut under lose-unsynced, if it fails too.
    id = { afterOp: id.afterOp, policy: 'lose-unsynced' };
    if (await passes({ state: id })) return undefined;
  }
  const points = persistencePoints(f.trace);
  const recent = points.filter((e) => e.op <= id.afterOp).reverse().slice(0, 6);
  for (const p of recent) {
    if (!(await passes({ state: id, hypothesis: { fsyncAfter: [], fsyncSkip: [p.op] } }))) continue;
    // What depends on the absence of what it made durable comes at or after the cut: the persistence points after the cut.
    const next = points.filter((e) => e.op > id.afterOp).slice(0, 2);
    // What it made durable: the changes to its path since that path's previous persistence point.
    const previous = points.filter((e) => e.op < p.op && e.path === p.path).at(-1)?.op ?? 0;
    // A directory fsync makes its entries durable; a file's fsync its data and size.
    const made = f.trace.filter((e) => e.op > previous && e.op < p.op && e.result === 0 && (p.kind === 'fsyncdir'
      ? DIR_OPS.has(e.kind) && (parentOf(e.path) === p.path || (e.path2 !== undefined && parentOf(e.path2) === p.path))
      : (e.kind === 'write' || e.kind === 'truncate' || e.kind === 'fallocate') && e.path === p.path));
    const what = made.length === 0 ? `${p.path}'s changes` : `${made[0].kind} ${made[0].path} (request ${made[0].op})${made.length > 1 ? ` and ${made.length - 1} more` : ''}`;
    const kinds = [...new Set(made.map((e) => `${e.kind} ${pathPattern(e.path)}`))].join(', ') || pathPattern(p.path);
    evidence.push(`with ${syncInWords(p)} left out, the state recovers`);
    const after = next.length ? ` only once what depends on their absence is (the next persistence points: ${next.map(syncInWords).join(', ')})` : ' later';
    return {
      kind: 'early-persistence',
      key: `early-persistence ${kinds}`,
      title: `${kinds} made durable too early`,
      fix: `${syncInWords(p)} made ${what} durable too early: the state just before it recovers, the state after it does not; make that durable${after}`,
      before: next[0] ? syncInWords(next[0]) : undefined,
      ...(next[0] ? { step: { kind: 'move' as const, op: p.op, afterOp: next[0].op } } : {}),
    };
  }
  return undefined;
}
