// A cause's fix applied to a recorded run (pure): an fsync inserted after every request like the
// one the cause names (a request of its own: the requests and markers after it move up by one), a
// confirmation withheld until the fsync it needed completed, or a persistence point moved after the
// first one past the cut; with the hypothesis the daemon lists the fixed run's states under, and how
// a cut of the fixed run maps to a cut of the run (what a proof compares).
import type { Hypothesis } from '../../../fusefs/crash-states.js';
import type { TraceEntry } from '../../../fusefs/protocol.js';
import { requestsInWords, type Cause, type FixStep } from '../cause/cause.js';
import { parentOf, pathPattern } from '../path-pattern.js';
import type { Recorded } from './judge-states.js';

/** The run with a fix applied: its recording, the hypothesis the daemon lists its states under, and how its cuts map to the run's. */
export interface FixedRun {
  recorded: Recorded;
  hypothesis?: Hypothesis;
  words: string;
  /** The request of the run a cut of the fixed run falls after (inserted requests belong to the one before them). */
  runOpOf: (fixedOp: number) => number;
  /** The cuts of the fixed run that fall after request `op` of the run: right after it, and after each fsync inserted there. */
  fixedOpsOf: (op: number) => number[];
  /** Whether a cut of the fixed run falls right after an inserted fsync: a state the run never had (new, not one that passed). */
  isNew: (fixedOp: number) => boolean;
  /** Whether every state cut after `fixedOp` is the run's own, the same image judged against the same lines (its verdict carries over). */
  unchanged: (fixedOp: number) => boolean;
}

/**
 * The cause's fix as a change to the recorded run: an fsync inserted after each request like the one
 * it names (a request of its own; the requests and markers after it move up by one), or a
 * confirmation printed only once the fsync it needed completed.
 */
export function fixedRun(recorded: Recorded, cause: Cause): FixedRun | undefined {
  const step = cause.step;
  if (!step) return undefined;
  if (step.kind === 'fsync-after') {
    // The fix is the program's: after every request like this one (its kind, its path pattern), not
    // only this one; and the same for each other unit the cause needed made durable with it.
    const steps = [step, ...(cause.alsoSteps ?? [])].filter((x): x is Extract<FixStep, { kind: 'fsync-after' }> => x.kind === 'fsync-after');
    const inserted: { after: number; path: string; dir: boolean }[] = [];
    const described: string[] = [];
    for (const st of steps) {
      const like = recorded.trace.find((e) => e.op === st.afterOp);
      const same = (e: TraceEntry) => like !== undefined && e.result === 0 && e.kind === like.kind && pathPattern(e.path) === pathPattern(like.path) && pathPattern(e.path2 ?? '') === pathPattern(like.path2 ?? '');
      const after = like ? recorded.trace.filter(same).map((e) => e.op) : [st.afterOp];
      // What to fsync after each such request, by the path it has then: the file, or the directory holding the changed entry.
      const toDest = like?.path2 !== undefined && parentOf(like.path2) === st.path;
      const target = (op: number) => {
        const e = recorded.trace.find((x) => x.op === op);
        if (!e) return st.path;
        if (st.dir) return parentOf(toDest && e.path2 !== undefined ? e.path2 : e.path);
        // A file a rename moved has its new name right after the request (its old one names nothing).
        return pathAfter(recorded.trace, e.path, op - 1, op);
      };
      for (const op of after) {
        const path = target(op);
        if (!inserted.some((x) => x.after === op && x.path === path)) inserted.push({ after: op, dir: st.dir, path });
      }
      const of = st.dir ? `the directory ${st.path}` : (like ? `the file, ${pathPattern(like.path)},` : st.path);
      described.push(`${of} after ${after.length === 1 ? `request ${after[0]}` : `every ${like?.kind} of ${pathPattern(like?.path ?? '')} (${requestsInWords(after)})`}`);
    }
    return withFsyncsInserted(recorded, inserted, [], `an fsync of ${described[0]}${described.length > 1 ? `, and of ${described.slice(1).join('; ')}` : ''}`);
  }
  if (step.kind === 'move') {
    // The persistence point moved after what depends on its absence: left out where it was, done
    // right after the next persistence point instead (what it made durable becomes durable then).
    const sync = recorded.trace.find((e) => e.op === step.op);
    const next = recorded.trace.find((e) => e.op === step.afterOp);
    const what = (e: TraceEntry | undefined) => `the ${e?.kind === 'fsyncdir' ? 'directory fsync' : 'fsync'} of ${e?.path ?? '?'}`;
    return withFsyncsInserted(recorded, [{ after: step.afterOp, path: pathAfter(recorded.trace, sync?.path ?? '/', step.op, step.afterOp), dir: sync?.kind === 'fsyncdir' }], [step.op],
      `${what(sync)} at request ${step.op} moved after ${what(next)} at request ${step.afterOp}`);
  }
  // The program waits at that line, and at every later line claiming the same (records, or acks) for the next fsync like
  // that one (of a path of the same pattern) to complete: those lines are withheld from the states
  // cut before. Only confirmations are: the program's other lines, and the requests they follow, stay
  // where the recording has them (a write's intent held back past its write would make its bytes on disk look like nobody's).
  const kind = recorded.run.record.outcomes[step.line - 1]?.t;
  const sync = recorded.trace.find((e) => e.op === step.untilOp);
  const syncs = recorded.trace.filter((e) => sync !== undefined && e.kind === sync.kind && e.result === 0 && pathPattern(e.path) === pathPattern(sync.path)).map((e) => e.op);
  // A confirmation printed after the line (a "durable" report of the same acks) cannot come before the wait ends either.
  const confirms = (t: string | undefined) => t === 'durable' || t === 'waited' || t === 'acked';
  // "durable" and "waited" both claim written records; "acked" claims acks (a checkpoint's fsync, not a page's).
  const claimOf = (t: string | undefined) => (t === 'acked' ? 'acks' : 'records');
  const sameClaim = (t: string | undefined) => claimOf(t) === claimOf(kind);
  const withheld = new Map<number, number>([[step.line, step.untilOp]]);
  for (const m of recorded.marks) {
    const t = recorded.run.record.outcomes[m.n - 1]?.t;
    if (m.n <= step.line || !confirms(t)) continue;
    const until = Math.max(step.untilOp, sameClaim(t) ? (syncs.find((op) => op > m.afterOp) ?? 0) : 0);
    if (until > m.afterOp) withheld.set(m.n, until);
  }
  const moved = withheld.size - 1;
  return {
    recorded: { ...recorded, withheld },
    words: `line ${step.line} ${quoteLine(recorded, step.line)} printed only after request ${step.untilOp} completed${moved ? `, and each later confirmation after it (a ${kind === 'acked' ? '"acked"' : '"durable" or "waited"'} line after the next ${sync?.kind ?? 'fsync'} of ${pathPattern(sync?.path ?? '')}; ${moved} moved)` : ''}`,
    runOpOf: (op) => op,
    fixedOpsOf: (op) => [op],
    isNew: () => false,
    unchanged: (op) => ![...withheld].some(([n, until]) => {
      const at = recorded.marks.find((m) => m.n === n)?.afterOp ?? 0;
      return at <= op && op < until;
    }),
  };
}

/**
 * The name `path` (as of request `fromOp`) has right after request `toOp`: each successful rename
 * in between of it, or of a directory above it, moves it (a checkpoint written as a temporary file
 * and renamed into place is fsynced under its final name).
 */
export function pathAfter(trace: readonly TraceEntry[], path: string, fromOp: number, toOp: number): string {
  let at = path;
  for (const e of trace) {
    if (e.op <= fromOp || e.op > toOp || e.kind !== 'rename' || e.result !== 0 || e.path2 === undefined) continue;
    if (at === e.path) at = e.path2;
    else if (at.startsWith(`${e.path}/`)) at = `${e.path2}${at.slice(e.path.length)}`;
  }
  return at;
}

/** An fsync a fix inserts: after request `after` (of the run), of `path` as named then; on a cluster, made by `node`'s program. */
export interface InsertedFsync {
  after: number;
  path: string;
  dir: boolean;
  node?: number;
}

/**
 * The recorded run with fsyncs inserted after some requests (each a request of its own: the
 * requests and markers after it move up by one) and some left out. A cluster's run has one
 * numbering for every node: an fsync inserted on one node moves every node's later requests; two
 * after one request are ordered by node (as the daemon's ClusterStateSpace.withHypothesis orders them).
 */
export function withFsyncsInserted(recorded: Recorded, unsorted: readonly InsertedFsync[], skip: readonly number[], words: string): FixedRun {
  const inserted = [...unsorted].sort((a, b) => a.after - b.after || (a.node ?? 0) - (b.node ?? 0));
  const before = (op: number, inclusive: boolean) => inserted.filter((x) => (inclusive ? x.after <= op : x.after < op)).length;
  const insertedOps = inserted.map((x, k) => x.after + k + 1);
  // Before the first fsync inserted or left out, the fixed run is the run.
  const firstChanged = [...insertedOps, ...skip.map((op) => op + before(op, false))].reduce((n, op) => Math.min(n, op), Infinity);
  return {
    hypothesis: { fsyncAfter: inserted.map((x) => ({ afterOp: x.after, path: x.path, ...(x.node !== undefined ? { node: x.node } : {}) })), ...(skip.length ? { fsyncSkip: [...skip] } : {}) },
    recorded: {
      ...recorded,
      trace: [
        ...recorded.trace.map((e) => ({ ...e, op: e.op + before(e.op, false) })),
        ...inserted.map((x, k) => ({ op: insertedOps[k], kind: x.dir ? 'fsyncdir' as const : 'fsync' as const, path: x.path, state: 'applied' as const, result: 0, ...(x.node !== undefined ? { node: x.node } : {}) })),
      ].sort((a, b) => a.op - b.op),
      // Each fsync comes right after its request: before every line marked after it.
      marks: recorded.marks.map((m) => ({ ...m, afterOp: m.afterOp + before(m.afterOp, true) })),
    },
    words,
    runOpOf: (fixedOp) => fixedOp - insertedOps.filter((op) => op <= fixedOp).length,
    fixedOpsOf: (op) => [op + before(op, false), ...insertedOps.filter((_, k) => inserted[k].after === op)],
    isNew: (fixedOp) => insertedOps.includes(fixedOp),
    unchanged: (fixedOp) => fixedOp < firstChanged,
  };
}

/** A line the workload printed, quoted: `("waited" seq 5)`. */
function quoteLine(recorded: Recorded, line: number): string {
  const o = recorded.run.record.outcomes[line - 1];
  return o ? `(${JSON.stringify(o)})` : '';
}
