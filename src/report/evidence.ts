// For each violated check, the events involved: the driver lines that claimed the seqs durable
// (or acked, or delivered them), the request that should have made each one durable, the
// requests that were not persisted yet or that removed the data, and where they were at the cut.
// Every item names a request of a cut or a line of a run, so the timeline and the log can mark it.
import type { TraceEntry } from '../../fusefs/protocol.js';
import type { Outcome } from '../harness/outcome.js';
import { changedPath, changeInWords, type Cause } from '../harness/cause/cause.js';
import { pathsNamedIn } from '../harness/path-pattern.js';
import { list } from './html.js';
import { lastPersistBefore, unsyncedAfter, type CutView } from './trace-model.js';
import type { ReportArtifact } from './types.js';
import type { Violation } from '../harness/oracle.js';

export type Role = 'cause' | 'claim' | 'persist' | 'unsynced' | 'lost' | 'cut' | 'removed' | 'failed' | 'error' | 'event' | 'drain';

export const ROLE_NAMES: Record<Role, string> = {
  cause: 'the cause: never made durable',
  claim: 'claim',
  persist: 'should have made it durable',
  unsynced: 'not persisted at the claim',
  lost: 'not persisted at the cut',
  cut: 'unsynced at the cut',
  removed: 'removed the data',
  failed: 'failed request',
  error: 'error',
  event: 'the event',
  drain: 'after recovery',
};

export type Ref = { kind: 'op'; cut: number; op: number } | { kind: 'line'; run: number; line: number };

export interface Evidence {
  /** Badge number, 1-based over the whole report. */
  n: number;
  violation: number;
  ref: Ref;
  role: Role;
  text: string;
}

export const refKey = (r: Ref): string => (r.kind === 'op' ? `c${r.cut}-op${r.op}` : `r${r.run}-l${r.line}`);

/** Seqs of one violation given evidence; the rest are named in the oracle's message. */
const MAX_EVIDENCE_SEQS = 3;
/** Requests of one kind listed per seq (e.g. unsynced writes); enough to see the pattern. */
const MAX_OPS_PER_ITEM = 4;
const MAX_EVIDENCE_VIOLATIONS = 5;

export function describeLine(o: Outcome): string {
  switch (o.t) {
    case 'hello': return `hello (target ${o.target})`;
    case 'open': return `open: durableSeq ${o.durableSeq}, first unacked ${o.durableFirstUnackedSeq}`;
    case 'write-intent': return `write-intent: event id ${o.id}, ${o.size} bytes`;
    case 'written': return `written: event id ${o.id} got seq ${o.seq}`;
    case 'durable': return `durable: durableSeq ${o.durableSeq}, first unacked ${o.durableFirstUnackedSeq}`;
    case 'waited': return `waited: seq ${o.seq} is durable`;
    case 'delivered': return `delivered seq ${o.seq} (event id ${o.id ?? 'unreadable'}, ${o.size} bytes, crc32 ${o.crc})`;
    case 'ack-intent': return `ack-intent: seqs ${list(o.seqs)}`;
    case 'acked': return `acked: seqs ${list(o.seqs)}`;
    case 'drained': return `drained ${o.count} events`;
    case 'error': return `error at ${o.where}: ${o.message}${o.code ? ` (${o.code})` : ''}`;
    case 'node': return `node ${o.node} ${o.restarted ? 'restarted on its crashed disk' : 'started'} (process group ${o.pgid})`;
    default: return o.t;
  }
}

/** The line's family, for its colour: an intent, a confirmation of durability, an ack, a read, an error, or bookkeeping. */
export function lineClass(o: Outcome): string {
  switch (o.t) {
    case 'write-intent': case 'ack-intent': case 'checkpoint-intent': case 'close-intent': return 'intent';
    case 'written': return 'written';
    case 'durable': case 'waited': case 'checkpointed': case 'closed': return 'durable';
    case 'acked': return 'acked';
    case 'delivered': return 'delivered';
    case 'error': return 'error';
    case 'node': return 'node';
    default: return 'info';
  }
}

/** A request's arguments after its path: the second path, offset, length (size for a truncate), fdatasync. `n` formats the numbers. */
export function requestArgs(e: TraceEntry, n: (x: number) => string = String): string {
  return [
    e.path2 !== undefined ? `→ ${e.path2}` : '',
    e.offset !== undefined ? `offset ${n(e.offset)}` : '',
    e.length !== undefined ? `${e.kind === 'truncate' ? 'size' : 'length'} ${n(e.length)}` : '',
    e.kind === 'fsync' && e.datasync ? '(fdatasync)' : '',
  ].filter(Boolean).join(' ');
}

export function describeRequest(e: TraceEntry): string {
  const args = requestArgs(e);
  return `request ${e.op} ${e.kind} ${e.path}${args ? ' ' + args : ''}`;
}

export function requestResult(e: TraceEntry): string {
  if (e.state === 'held') return 'held (never answered)';
  return e.result === undefined || e.result === 0 ? 'ok' : `errno ${-e.result}`;
}

interface LineHit {
  run: number;
  line: number;
  o: Outcome;
}

/** Builds the evidence of every violation (the first few in full). */
export function buildEvidence(a: ReportArtifact, views: CutView[]): Evidence[][] {
  const range = (from: number, to: number) => Array.from({ length: Math.max(0, to - from) }, (_, i) => from + i);
  const sources: EvidenceSources = {
    a,
    views,
    cutRuns: range(0, Math.min(views.length, a.runs.length)),
    finalRun: a.runs.length > views.length ? a.runs.length - 1 : -1,
    allRuns: range(0, a.runs.length),
    marks: views.map((v) => new Map(v.marks.map((m) => [m.n, m.afterOp]))),
    causeAt: a.cause ? causeRequest(a.cause, views) : undefined,
  };
  const numbering = { next: 1 };
  return a.violations.slice(0, MAX_EVIDENCE_VIOLATIONS).map((v, vi) => new ViolationEvidence(sources, vi, numbering).collect(v));
}

/** What every violation's evidence is found in. */
interface EvidenceSources {
  a: ReportArtifact;
  views: CutView[];
  /** The runs that were cut (each has its cut's view). */
  cutRuns: number[];
  /** The run after the last cut (recovery), or -1. */
  finalRun: number;
  allRuns: number[];
  /** Per cut: each line's mark (the request it followed). */
  marks: Map<number, number>[];
  /** The cause's request, when the artifact has a cause. */
  causeAt: ReturnType<typeof causeRequest>;
}

/** One violation's evidence, numbered on from `numbering.next` (badge numbers run over the whole report). */
class ViolationEvidence {
  private readonly items: Evidence[] = [];
  private readonly seen = new Set<string>();

  constructor(private readonly s: EvidenceSources, private readonly vi: number, private readonly numbering: { next: number }) {}

  /** The cause first, then what the check points at, then (if nothing points at a request) the usual suspects. */
  collect(v: Violation): Evidence[] {
    const causeAt = this.s.causeAt;
    if (causeAt) {
      const { view, entry, cause } = causeAt;
      const what = cause.unit && cause.change ? changeInWords(cause.unit, cause.change) : 'this request';
      this.add({ kind: 'op', cut: view.index, op: entry.op }, 'cause', `${describeRequest(entry)}: ${cause.step?.kind === 'wait' ? `the fsync line ${cause.step.line} did not wait for` : `${what}, lost at the cut`}; the fix: ${cause.fix}`);
    }
    const seqs = (v.seqs ?? []).slice(0, MAX_EVIDENCE_SEQS);
    switch (v.check) {
      case 'at-least-once':
        this.atLeastOnce(v, seqs);
        break;
      case 'bounded-replay':
        this.boundedReplay(seqs);
        break;
      case 'integrity':
        this.integrity(v, seqs);
        break;
      case 'order':
        this.order(v, seqs);
        break;
      case 'monotonic-seqs':
        this.monotonicSeqs(seqs);
        break;
      case 'liveness':
        this.liveness(v);
        break;
      case 'fail-loudly':
        this.failLoudly();
        break;
    }
    this.usualSuspects();
    return this.items;
  }

  private add(ref: Ref, role: Role, text: string): void {
    const key = `${refKey(ref)}:${role}`;
    if (this.seen.has(key)) return;
    this.seen.add(key);
    this.items.push({ n: this.numbering.next++, violation: this.vi, ref, role, text });
  }

  private addLine(h: LineHit, role: Role, text: string): void {
    this.add({ kind: 'line', run: h.run, line: h.line }, role, `line ${h.line} of run ${h.run} (${describeLine(h.o)}): ${text}`);
  }

  private addOp(cut: number, e: TraceEntry, role: Role, text: string): void {
    // With the cause known, the request that matters is the lost change, not the last persistence request before a claim.
    if (role === 'persist' && this.s.causeAt) return;
    this.add({ kind: 'op', cut, op: e.op }, role, `${describeRequest(e)}: ${text}`);
  }

  /** The request a line followed, if its run was cut and the line has a mark. */
  private markOf(h: LineHit | undefined): number | undefined {
    return h && h.run < this.s.views.length ? this.s.marks[h.run].get(h.line) : undefined;
  }

  /** The lines of these runs that pass `pred`, in order; after `from` only, if given. */
  private lines(runs: number[], pred: (o: Outcome) => boolean, from?: LineHit): LineHit[] {
    const hits: LineHit[] = [];
    for (const run of runs) {
      if (from && run < from.run) continue;
      this.s.a.runs[run]?.outcomes.forEach((o, i) => {
        if (from && run === from.run && i + 1 <= from.line) return;
        if (pred(o)) hits.push({ run, line: i + 1, o });
      });
    }
    return hits;
  }

  /** The recovery run's open line. */
  private finalOpen(): LineHit | undefined {
    return this.s.finalRun >= 0 ? this.lines([this.s.finalRun], (o) => o.t === 'open')[0] : undefined;
  }

  /** Requests of the event's write(): from its write-intent line up to its written line (or the claim, or the cut). */
  private eventWrites(intent: LineHit | undefined, end: LineHit | undefined, claimAt?: number): { cut: number; ops: TraceEntry[] } | undefined {
    const from = this.markOf(intent);
    if (intent === undefined || from === undefined) return undefined;
    const view = this.s.views[intent.run];
    const to = (end && end.run === intent.run ? this.markOf(end) : undefined) ?? view.boundary;
    const pick = (lo: number, hi: number) => view.trace.filter((e) => e.op > lo && e.op <= hi && view.applied(e.op) && (e.kind === 'write' || e.kind === 'truncate'));
    let ops = pick(from, to);
    // Buffered designs write the bytes later, on a flush before the claim.
    if (ops.length === 0 && claimAt !== undefined) ops = pick(to, claimAt);
    return { cut: intent.run, ops };
  }

  /** Why a seq claimed `what` was not: its writes and their fate, the persistence request before the claim, its file's unsynced name, and what removed it after. */
  private durabilityChain(seq: number, id: number | undefined, written: LineHit | undefined, intent: LineHit | undefined, claim: LineHit | undefined, what: string): void {
    const views = this.s.views;
    const at = this.markOf(claim);
    const writes = this.eventWrites(intent, written, at);
    const view = writes ? views[writes.cut] : undefined;
    const files = new Set(writes?.ops.map((e) => e.path) ?? []);
    if (writes && view) {
      for (const e of writes.ops.slice(0, MAX_OPS_PER_ITEM)) {
        const fate = view.atCut.get(e.op);
        const pendingAtClaim = at !== undefined && claim!.run === writes.cut && unsyncedAfter(view, at).has(e.op);
        if (pendingAtClaim) this.addOp(writes.cut, e, 'unsynced', `written while seq ${seq}${id !== undefined ? ` (event id ${id})` : ''} was being written, and not persisted yet when line ${claim!.line} claimed it ${what}`);
        else if (fate && fate.fate !== 'kept') this.addOp(writes.cut, e, 'lost', `written for seq ${seq}${id !== undefined ? ` (event id ${id})` : ''}, not persisted at the power cut: ${fate.fate === 'lost' ? 'lost' : 'may be lost or torn'} (${fate.because})`);
        else this.addOp(writes.cut, e, 'event', `written for seq ${seq}${id !== undefined ? ` (event id ${id})` : ''}${fate ? ` (unsynced at the cut, ${fate.because})` : ''}`);
      }
    }
    if (claim && at !== undefined) {
      const cv = views[claim.run];
      const persist = lastPersistBefore(cv, at, files.size && claim.run === writes?.cut ? files : undefined) ?? lastPersistBefore(cv, at);
      if (persist) this.addOp(claim.run, persist, 'persist', `the last persistence request${files.size ? ` of ${[...files].join(', ')}` : ''} before line ${claim.line} claimed seq ${seq} ${what}: the one that should have made it ${what}`);
      else this.addLine(claim, 'unsynced', `no persistence request had completed when this line claimed seq ${seq} ${what}`);
      if (claim.run === writes?.cut) {
        // The file's own name must be durable too: an unsynced create or rename loses the whole file.
        const pendingDir = [...unsyncedAfter(cv, at)].map((op) => cv.byOp.get(op)!).filter((e) => (e.kind === 'create' || e.kind === 'rename' || e.kind === 'link') && (files.has(e.path) || files.has(e.path2 ?? '')));
        for (const e of pendingDir.slice(0, MAX_OPS_PER_ITEM)) this.addOp(claim.run, e, 'unsynced', `the directory entry of ${files.has(e.path2 ?? '') ? e.path2 : e.path} was not persisted yet (no fsync of its directory) when line ${claim.line} claimed seq ${seq} ${what}`);
        const removed = cv.trace.filter((e) => e.op > at && e.op <= cv.boundary && cv.applied(e.op) && ((e.kind === 'unlink' && files.has(e.path)) || (e.kind === 'truncate' && files.has(e.path)) || (e.kind === 'rename' && files.has(e.path2 ?? ''))));
        for (const e of removed.slice(0, MAX_OPS_PER_ITEM)) this.addOp(claim.run, e, 'removed', `after the claim, this request removed or cut ${e.kind === 'rename' ? e.path2 : e.path}, which held seq ${seq}`);
      }
    }
  }

  private atLeastOnce(v: Violation, seqs: number[]): void {
    const cutRuns = this.s.cutRuns;
    seqs.forEach((seq, i) => {
      const wantId = v.ids?.[i];
      const written = this.lines(cutRuns, (o) => o.t === 'written' && o.seq === seq && (wantId === undefined || o.id === wantId))[0];
      const id = wantId ?? (written?.o.t === 'written' ? written.o.id : undefined);
      const intent = id !== undefined ? this.lines(cutRuns, (o) => o.t === 'write-intent' && o.id === id)[0] : undefined;
      const claim = this.lines(cutRuns, (o) => (o.t === 'durable' && o.durableSeq >= seq) || (o.t === 'waited' && o.seq >= seq) || (o.t === 'open' && o.durableSeq >= seq), written)[0];
      if (written) this.addLine(written, 'event', `the queue gave event id ${id} seq ${seq}`);
      if (claim) this.addLine(claim, 'claim', `claimed seq ${seq}${id !== undefined ? ` (event id ${id})` : ''} durable`);
      this.durabilityChain(seq, id, written, intent, claim, 'durable');
    });
    const finalOpen = this.finalOpen();
    if (finalOpen) this.addLine(finalOpen, 'drain', `recovery started from here; ${seqs.length === 1 ? `seq ${seqs[0]} was` : `seqs ${list(seqs)} were`} not delivered`);
  }

  private boundedReplay(seqs: number[]): void {
    const { cutRuns, finalRun, views } = this.s;
    seqs.forEach((seq) => {
      const acked = this.lines(cutRuns, (o) => o.t === 'acked' && o.seqs.includes(seq))[0];
      if (acked) this.addLine(acked, 'event', `the consumer acked seq ${seq}`);
      const claim = this.lines(cutRuns, (o) => (o.t === 'durable' || o.t === 'open') && o.durableFirstUnackedSeq > seq, acked)[0];
      if (claim) {
        this.addLine(claim, 'claim', `claimed the ack of seq ${seq} durable (every seq below ${claim.o.t === 'durable' || claim.o.t === 'open' ? claim.o.durableFirstUnackedSeq : '?'})`);
        const at = this.markOf(claim);
        const persist = at !== undefined ? lastPersistBefore(views[claim.run], at) : undefined;
        if (persist) this.addOp(claim.run, persist, 'persist', `the last persistence request before line ${claim.line} claimed the ack of seq ${seq} durable`);
      }
      for (const d of this.lines(finalRun >= 0 ? [finalRun] : [], (o) => o.t === 'delivered' && o.seq === seq).slice(0, 1)) this.addLine(d, 'drain', `seq ${seq} delivered again after recovery`);
    });
  }

  private integrity(v: Violation, seqs: number[]): void {
    const { cutRuns, allRuns } = this.s;
    seqs.forEach((seq, i) => {
      const id = v.ids?.[i];
      const intent = id !== undefined ? this.lines(cutRuns, (o) => o.t === 'write-intent' && o.id === id)[0] : undefined;
      const written = id !== undefined ? this.lines(cutRuns, (o) => o.t === 'written' && o.id === id)[0] : this.lines(cutRuns, (o) => o.t === 'written' && o.seq === seq)[0];
      if (intent) this.addLine(intent, 'event', `write() of event id ${id} started`);
      if (written) this.addLine(written, 'event', `write() of event id ${id ?? '?'} returned seq ${seq}`);
      const claim = written ? this.lines(cutRuns, (o) => (o.t === 'durable' && o.durableSeq >= seq) || (o.t === 'waited' && o.seq >= seq), written)[0] : undefined;
      if (claim) this.addLine(claim, 'claim', `claimed seq ${seq} durable`);
      this.durabilityChain(seq, id, written, intent, claim, 'durable');
      for (const d of this.lines(allRuns, (o) => o.t === 'delivered' && (o.seq === seq || (id !== undefined && o.id === id))).slice(0, 2)) this.addLine(d, 'drain', `delivered these bytes for seq ${seq}; they differ from what was written`);
    });
  }

  private order(v: Violation, seqs: number[]): void {
    const { cutRuns, allRuns } = this.s;
    for (const d of this.lines(allRuns, (o) => o.t === 'delivered' && (v.seqs ?? []).includes(o.seq)).slice(0, MAX_OPS_PER_ITEM)) this.addLine(d, 'claim', `delivered seq ${d.o.t === 'delivered' ? d.o.seq : '?'}`);
    for (const w of this.lines(cutRuns, (o) => o.t === 'written' && seqs.includes(o.seq)).slice(0, MAX_OPS_PER_ITEM)) this.addLine(w, 'event', 'written here');
    const finalOpen = this.finalOpen();
    if (finalOpen) this.addLine(finalOpen, 'drain', 'the range recovery reported holding');
  }

  private monotonicSeqs(seqs: number[]): void {
    const allRuns = this.s.allRuns;
    seqs.forEach((seq) => {
      const writtenLines = this.lines(allRuns, (o) => o.t === 'written' && o.seq === seq);
      for (const w of writtenLines.slice(0, 2)) this.addLine(w, 'claim', `write() returned seq ${seq}`);
      const claim = this.lines(allRuns, (o) => (o.t === 'durable' && o.durableSeq >= seq) || (o.t === 'waited' && o.seq >= seq) || (o.t === 'open' && o.durableSeq >= seq))[0];
      if (claim) this.addLine(claim, 'event', `seq ${seq} was already confirmed durable here`);
    });
  }

  private liveness(v: Violation): void {
    const { a, allRuns, views } = this.s;
    const errors = this.lines(allRuns, (o) => o.t === 'error');
    for (const e of errors) this.addLine(e, 'error', 'the run failed here');
    a.runs.forEach((r, run) => {
      if (r.hung && r.outcomes.length) this.addLine({ run, line: r.outcomes.length, o: r.outcomes[r.outcomes.length - 1] }, 'error', 'the last line before the run hung');
    });
    // The files the failure names: the last request on each before the cut, and what the cut did to it.
    const failing = errors[0]?.run ?? a.runs.length - 1;
    const view = views[Math.min(Math.max(failing - 1, 0), views.length - 1)];
    if (view) {
      for (const p of mentionedPaths(v.message, view).slice(0, MAX_OPS_PER_ITEM)) {
        const touches = (e: TraceEntry) => e.path === p || e.path2 === p;
        const last = [...view.trace].reverse().find((e) => touches(e) && view.applied(e.op));
        if (last && !view.atCut.has(last.op)) this.addOp(view.index, last, 'event', `the last request on ${p} before the power cut`);
        for (const e of view.trace.filter((t) => touches(t) && view.atCut.has(t.op)).slice(-MAX_OPS_PER_ITEM)) {
          const fate = view.atCut.get(e.op)!;
          this.addOp(view.index, e, 'cut', `${e === last ? `the last request on ${p} before the power cut, not persisted: ` : ''}${fate.fate === 'kept' ? 'kept' : fate.fate === 'lost' ? 'lost' : 'may be lost'} (${fate.because})`);
        }
      }
    }
  }

  private failLoudly(): void {
    this.s.views.forEach((view) => {
      for (const e of view.trace.filter((t) => (t.result ?? 0) < 0).slice(0, MAX_OPS_PER_ITEM)) this.addOp(view.index, e, 'failed', `the filesystem failed it with errno ${-(e.result ?? 0)}, and the queue reported no error`);
    });
  }

  /** Nothing points at a request: show what the last cut left unsynced, the usual suspects. */
  private usualSuspects(): void {
    const views = this.s.views;
    const last = views[views.length - 1];
    if (last && !this.items.some((i) => i.ref.kind === 'op')) {
      for (const [op, fate] of [...last.atCut].slice(-MAX_OPS_PER_ITEM)) {
        this.addOp(last.index, last.byOp.get(op)!, 'cut', `${fate.fate === 'kept' ? 'kept' : fate.fate === 'lost' ? 'lost' : 'may be lost'} (${fate.because})`);
      }
    }
  }
}

/**
 * The request of the recorded run the cause is about: the lost change (the create whose directory
 * was never fsynced, the write never fsynced), or the fsync a confirmation did not wait for. Found
 * by request number when the recording is the artifact's own, else by its kind and path (a cause
 * found on a run recorded again).
 */
function causeRequest(cause: Cause, views: CutView[]): { view: CutView; entry: TraceEntry; cause: Cause } | undefined {
  const view = views[0];
  if (!view) return undefined;
  const want = cause.step?.kind === 'wait' ? { op: cause.step.untilOp, kind: 'fsync', path: cause.unit?.path }
    : cause.unit && cause.change ? { op: cause.change.op, kind: cause.change.kind, path: changedPath(cause.unit, cause.change) } : undefined;
  if (!want) return undefined;
  const fits = (e: TraceEntry) => e.kind === want.kind && (want.path === undefined || e.path === want.path || e.path2 === want.path);
  const byOp = view.byOp.get(want.op);
  const entry = byOp && fits(byOp) ? byOp : [...view.trace].reverse().find((e) => e.op <= view.boundary && fits(e));
  return entry ? { view, entry, cause } : undefined;
}

/** Trace paths a message names (as the tail of a host path, e.g. "/tmp/x/mnt/page.1" names "/page.1"). */
function mentionedPaths(message: string, view: CutView): string[] {
  return pathsNamedIn(message, view.trace.flatMap((e) => (e.path2 !== undefined ? [e.path, e.path2] : [e.path])));
}

/** Evidence by the request or line it marks. */
export function evidenceByRef(all: Evidence[][]): Map<string, Evidence[]> {
  const m = new Map<string, Evidence[]>();
  for (const e of all.flat()) {
    const k = refKey(e.ref);
    m.set(k, [...(m.get(k) ?? []), e]);
  }
  return m;
}
