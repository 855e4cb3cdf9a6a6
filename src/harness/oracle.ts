// The oracle (pure): judges one crash history (docs/design.md, "The oracle"). A history is the list
// of driver runs on one queue: every run but the last ended in a power cut; the last is the final
// drain. Each violation names its check, the target, the seqs/event ids involved and what was expected.
// The checks are the same for every target; what a queue promises is its own, declared in each
// run's hello line as its contract (contract.ts), and every check judges by exactly that.
import type { Contract } from './contract.js';
import { contractOf, helloOf, TIMED_OUT, type Outcome } from './outcome.js';
import { payloadCrc } from './payload.js';

export const CHECKS = ['at-least-once', 'bounded-replay', 'integrity', 'order', 'monotonic-seqs', 'liveness', 'fail-loudly'] as const;
export type CheckName = (typeof CHECKS)[number];

export interface RunRecord {
  /** 'setup': a driver's setup run (starting-state.ts), never judged. */
  role: 'workload' | 'drain' | 'setup';
  outcomes: Outcome[];
  exitCode: number | null;
  /** SIGKILLed at a crash point (rather than exiting on its own). */
  killed: boolean;
  /** It neither reached the crash point nor exited within its time bound. */
  hung: boolean;
  /** Requests the filesystem failed during this run (negative results in its trace). */
  failedRequests: { op: number; kind: string; path: string; result: number }[];
}

export interface History {
  /** The target's name, for the messages. */
  target: string;
  /** Faults were armed: errors are expected, and must be loud. */
  faultsInjected: boolean;
  /**
   * Read faults damaged the disk the recoveries read: a recovery that reports an error (its error
   * line) did what it must; one that goes on must still lose and corrupt nothing it confirmed.
   */
  damagedDisk?: boolean;
  runs: RunRecord[];
}

export interface Violation {
  check: CheckName;
  message: string;
  seqs?: number[];
  ids?: number[];
  /** A run hung: reported under liveness, but never proof that a known-bad variant was caught. */
  hang?: true;
  /** The line whose promise the violation broke (1-based, of run `run`): a confirmation, or an ack's. */
  promise?: { run: number; line: number };
}

/** The checks `violations` broke, each once, sorted: what groups a failure, and what "fails alike" compares. */
export function violatedChecks(violations: readonly Violation[]): CheckName[] {
  return [...new Set(violations.map((v) => v.check))].sort();
}

/** The first line of runs [0, upTo) that confirmed `seq` durable (or, with `id`, in the session that knew it by that seq). */
function confirmingLine(history: History, upTo: number, seq: number, run?: number): { run: number; line: number } | undefined {
  for (let k = run ?? 0; k < (run === undefined ? upTo : run + 1); k++) {
    const i = history.runs[k].outcomes.findIndex((o) => confirmedSeq(o) >= seq);
    if (i >= 0) return { run: k, line: i + 1 };
  }
  return undefined;
}

const MAX_LISTED = 12;
/** Seqs a violation carries at most: a recovered queue may claim any range (a flipped bit made one 2^43 long). */
const MAX_SEQS_KEPT = 1000;
/** The first seqs of `xs`, and how many there are in all (`total`, when `xs` is the start of a longer list). */
function list(xs: readonly number[], total = xs.length): string {
  return total <= MAX_LISTED ? xs.join(', ') : `${xs.slice(0, MAX_LISTED).join(', ')} ... (${total} in all)`;
}

/**
 * The seqs of [from, to] that are not `present`, as the first MAX_SEQS_KEPT of them and their count,
 * in time bounded by the count of `candidates` (the only seqs `present` may hold), not by the range.
 */
function absentSeqs(from: number, to: number, present: (s: number) => boolean, candidates: Iterable<number>): { first: number[]; count: number } {
  if (to < from) return { first: [], count: 0 };
  let presentCount = 0;
  for (const c of new Set(candidates)) if (c >= from && c <= to && present(c)) presentCount++;
  const first: number[] = [];
  for (let s = from; s <= to && first.length < MAX_SEQS_KEPT; s++) if (!present(s)) first.push(s);
  const count = to - from + 1 - presentCount;
  if (count < first.length) throw new Error(`oracle invariant broken: a seq in [${from}, ${to}] is present but not among the candidates`);
  return { first, count };
}
function runName(history: History, k: number): string {
  return `run ${k} (${history.runs[k].role}${k === history.runs.length - 1 ? ', final' : ''})`;
}

/**
 * How seqs and lost writes behave across the whole history: the first run's declaration (a run
 * without a hello line declared nothing). A queue cannot change either between its runs.
 */
function historyContract(history: History): Pick<Contract, 'seqScope' | 'unconfirmedWrites'> {
  let first: { c: Contract; k: number } | undefined;
  history.runs.forEach((run, k) => {
    const c = contractOf(run.outcomes);
    if (!c) return;
    if (!first) first = { c, k };
    for (const key of ['seqScope', 'unconfirmedWrites'] as const) {
      if (c[key] !== first.c[key]) throw new Error(`oracle: ${runName(history, k)} declared "${key}": "${c[key]}" but ${runName(history, first.k)} "${first.c[key]}": a queue cannot change it between runs`);
    }
  });
  return first?.c ?? { seqScope: 'forever', unconfirmedWrites: 'suffix' };
}

/**
 * A hint naming the declaration that would change a verdict, for a run whose hello line left that
 * field to its default: a queue that declared it meant it, and a hint would only mislead.
 */
function undeclaredHint(history: History, k: number, field: keyof Contract, hint: string): string {
  const hello = helloOf(history.runs[k]?.outcomes ?? []);
  return hello && !(hello.contract && field in hello.contract) ? `; ${hint}` : '';
}

/** What a queue that reuses seqs across sessions lacks, named where a check fails by such a reuse. */
const SESSION_SEQS_HINT = 'a queue that numbers its seqs per session, e.g. from 1 again after a restart that found no records, declares "seqScope": "session" in its contract';

/** Seqs name events only within one session (from an open line to the next): seqScope "session". */
const perSession = (history: History) => historyContract(history).seqScope === 'session';

/** Deliveries of the final drain before its 'drained' line: the events recovered (R). */
function recovered(final: RunRecord): Extract<Outcome, { t: 'delivered' }>[] {
  const r: Extract<Outcome, { t: 'delivered' }>[] = [];
  for (const o of final.outcomes) {
    if (o.t === 'drained') break;
    if (o.t === 'delivered') r.push(o);
  }
  return r;
}

interface Confirmed {
  durableSeq: number;
  durableSeqRun: number;
  firstUnacked: number;
  firstUnackedRun: number;
}

/** The seq an outcome confirms durable (everything up to it), or 0. */
function confirmedSeq(o: Outcome): number {
  return o.t === 'durable' || o.t === 'open' ? o.durableSeq : o.t === 'waited' ? o.seq : 0;
}

/** The strongest durability the queue confirmed in runs [0, upTo). */
function confirmedBefore(history: History, upTo: number): Confirmed {
  const c: Confirmed = { durableSeq: 0, durableSeqRun: -1, firstUnacked: 1, firstUnackedRun: -1 };
  for (let k = 0; k < upTo; k++) {
    for (const o of history.runs[k].outcomes) {
      const seq = confirmedSeq(o);
      if (seq > c.durableSeq) Object.assign(c, { durableSeq: seq, durableSeqRun: k });
      if ((o.t === 'durable' || o.t === 'open') && o.durableFirstUnackedSeq > c.firstUnacked) {
        Object.assign(c, { firstUnacked: o.durableFirstUnackedSeq, firstUnackedRun: k });
      }
    }
  }
  return c;
}

/** One returned or in-flight ack of an event in a run ended by a cut, with what the run's lines say about it. */
interface AckRecord {
  run: number;
  seq: number;
  /** 1-based line of the run's ack-intent and acked lines (no acked line: the call was in flight at the cut). */
  intentLine: number;
  ackedLine?: number;
  /**
   * Where the ack joined the in-order acks: the acked line after which every lower seq delivered in
   * its session had been acked (its own line, or the later one that closed the gap below it).
   * Undefined when a gap was still open at the cut (an out-of-order ack).
   */
  inOrderAt?: number;
}

interface Ledger {
  /** seq -> event id the queue holds there, as the runs so far knew it (seqScope session: as the last session knew it); absent if unknown. */
  idAt: Map<number, number>;
  /** Events confirmed durable -> the seq they were confirmed under (their session's) and the run that confirmed them. */
  confirmed: Map<number, { seq: number; run: number }>;
  /**
   * seqScope forever: the seq ranges confirmed durable, disjoint and in order. Seqs are gapless then,
   * so a seq in them whose event is not in `confirmed` holds an event whose written line was cut off
   * and that no later run delivered.
   */
  confirmedRanges: [number, number][];
  /**
   * Event ids the consumer tried to ack, each with its last ack: a later ack of the same event (it
   * was delivered again after a cut) replaces the earlier one, as that run's cut is the one that could lose it.
   */
  acks: Map<number, AckRecord>;
  /** seqScope session: events below a confirmed durableFirstUnackedSeq of their session (seqs of other sessions cannot be compared). */
  durablyAcked: Map<number, { run: number; firstUnacked: number; seq: number }>;
}

/**
 * W and A by event id, as runs [0, upTo) saw them. A seq is not an identity across runs: a seq never
 * confirmed durable can be lost at a cut and given to another event later (and with seqScope
 * session any seq can be), so an ack or confirmation of seq s means the event *that run* held as s.
 * Event ids are unique per case (idBase), so keying by id is exact. (Dropping at each cut the acks
 * above its confirmed durableSeq would not be: an unconfirmed event can survive a cut, and then its
 * ack still counts for it.)
 */
function ledgerBefore(history: History, upTo: number): Ledger {
  const session = perSession(history);
  // With holes, a recovered queue's open names the highest seq it holds, not a gapless range: it
  // claims only the events it then delivers, and seqs below it that no one confirmed may be gone.
  const holes = historyContract(history).unconfirmedWrites === 'holes';
  let idAt = new Map<number, number>();
  const confirmedSeqs = new Map<number, number>(); // forever: confirmed seq -> its event
  const confirmed = new Map<number, { seq: number; run: number }>();
  const confirmedRanges: [number, number][] = [];
  const confirmedUnknown = (seq: number) => !confirmedSeqs.has(seq) && confirmedRanges.some(([lo, hi]) => seq >= lo && seq <= hi);
  const acks = new Map<number, AckRecord>();
  const durablyAcked = new Map<number, { run: number; firstUnacked: number; seq: number }>();
  const confirm = (seq: number, id: number, run: number) => {
    if (!session) confirmedSeqs.set(seq, id);
    confirmed.set(id, { seq, run });
  };
  let durableSeq = 0;
  for (let k = 0; k < upTo; k++) {
    let runDurableSeq = durableSeq;
    let openClaim = 0; // holes: the highest seq this run's open lines said they hold
    // seqScope session: what the current session confirmed, resolved when it ends (as runDurableSeq at a run's end).
    let sessionDurableSeq = 0;
    let sessionFirstUnacked = 1;
    const endSession = () => {
      for (const [seq, id] of idAt) {
        if (seq <= sessionDurableSeq) confirm(seq, id, k);
        if (seq < sessionFirstUnacked && !durablyAcked.has(id)) durablyAcked.set(id, { run: k, firstUnacked: sessionFirstUnacked, seq });
      }
      idAt = new Map();
      sessionDurableSeq = 0;
      sessionFirstUnacked = 1;
    };
    if (session) idAt = new Map();
    let unacked = new Set<number>(); // delivered in this session, no acked line yet
    const aboveGap = new Map<number, AckRecord>(); // returned acks with a lower delivered seq still unacked
    let ofSeq = new Map<number, AckRecord>(); // this session's acks by seq
    history.runs[k].outcomes.forEach((o, i) => {
      const line = i + 1;
      if (o.t === 'open') {
        if (session) {
          endSession();
          ofSeq = new Map();
        } else {
          // The queue reopened holding exactly seqs <= durableSeq (recovery reports its last seq as durable):
          // what was known above it was lost, and the seqs may be reused by writes whose line a cut swallows.
          // With holes, an unconfirmed seq below it may be gone too: only confirmed events stay known.
          for (const seq of idAt.keys()) if (seq > o.durableSeq || (holes && !confirmedSeqs.has(seq))) idAt.delete(seq);
          if (holes) openClaim = Math.max(openClaim, o.durableSeq);
        }
        unacked = new Set();
        aboveGap.clear();
      }
      if (o.t === 'written') idAt.set(o.seq, o.id);
      if (o.t === 'delivered') {
        if (o.id === null) idAt.delete(o.seq);
        else idAt.set(o.seq, o.id);
        unacked.add(o.seq);
        // A seq confirmed while its written line was cut off holds the same event forever (confirmed
        // seqs are never reused): a later run that delivers it names the event, whose ack then counts.
        if (!session && o.id !== null && confirmedUnknown(o.seq)) confirm(o.seq, o.id, k);
      }
      if (o.t === 'ack-intent') {
        for (const seq of o.seqs) {
          const id = idAt.get(seq);
          if (id === undefined) continue;
          const rec: AckRecord = { run: k, seq, intentLine: line };
          ofSeq.set(seq, rec);
          acks.set(id, rec);
        }
      }
      if (o.t === 'acked') {
        for (const seq of o.seqs) {
          unacked.delete(seq);
          const rec = ofSeq.get(seq);
          if (rec === undefined) continue;
          rec.ackedLine = line;
          aboveGap.set(seq, rec);
        }
        let lowest = Infinity; // a loop, not Math.min(...): a drain may hold more seqs than a call takes arguments
        for (const seq of unacked) if (seq < lowest) lowest = seq;
        for (const [seq, rec] of aboveGap) {
          if (seq > lowest) continue;
          rec.inOrderAt = line;
          aboveGap.delete(seq);
        }
      }
      if (session) {
        sessionDurableSeq = Math.max(sessionDurableSeq, confirmedSeq(o));
        if (o.t === 'durable' || o.t === 'open') sessionFirstUnacked = Math.max(sessionFirstUnacked, o.durableFirstUnackedSeq);
      } else if (!(holes && o.t === 'open')) runDurableSeq = Math.max(runDurableSeq, confirmedSeq(o));
    });
    if (session) {
      endSession();
      continue;
    }
    // Resolved at the end of the run: with concurrent writers a 'durable' line can precede the
    // 'written' line of a seq it covers. Confirmed seqs are never reused, so later runs agree.
    // With holes, the gapless claim of a confirmation starts above what the run's open held (the seqs it hands out).
    const rangeFrom = Math.max(durableSeq, openClaim);
    if (runDurableSeq > rangeFrom) confirmedRanges.push([rangeFrom + 1, runDurableSeq]);
    for (const [seq, id] of idAt) if ((seq > durableSeq && seq <= runDurableSeq) || seq <= openClaim) confirm(seq, id, k);
    durableSeq = Math.max(runDurableSeq, openClaim);
  }
  return { idAt, confirmed, confirmedRanges, acks, durablyAcked };
}

function idsOf(ids: readonly (number | undefined)[]): string {
  return ids.every((id) => id === undefined) ? '' : ` (event ids ${ids.map((id) => id ?? '?').join(', ')})`;
}

/** A loss in a case with a fault that fired is the fault's as much as the cut's: say so, whatever the policy. */
function faultNote(history: History): string {
  return history.faultsInjected && history.runs.some((r) => r.failedRequests.length > 0)
    ? '; a fault injected in this case failed requests, and what a failed fsync or write did not persist is lost under every policy, keep-all included: a confirmation after it claimed what the queue never had'
    : '';
}

function checkAtLeastOnce(history: History): Violation[] {
  const last = history.runs.length - 1;
  const { confirmed, confirmedRanges, acks } = ledgerBefore(history, last);
  const r = recovered(history.runs[last]);
  const rIds = new Set(r.map((o) => o.id));
  const rSeqs = new Set(r.map((o) => o.seq));
  const known = [...confirmed].filter(([id]) => !acks.has(id) && !rIds.has(id)).map(([id, c]): [number, number | undefined] => [c.seq, id]);
  if (perSession(history)) {
    // Seqs name nothing across sessions: every event confirmed durable is judged by its id alone.
    if (known.length === 0) return [];
    const ids = known.map(([, id]) => id!).sort((a, b) => a - b);
    const runs = [...new Set(ids.map((id) => confirmed.get(id)!.run))].sort((a, b) => a - b);
    const first = confirmed.get(ids[0])!;
    const promise = confirmingLine(history, last, first.seq, first.run);
    return [{
      check: 'at-least-once',
      ids: ids.slice(0, MAX_SEQS_KEPT),
      ...(promise ? { promise } : {}),
      message: `at-least-once: event ids ${list(ids)} (seqs ${list(ids.map((id) => confirmed.get(id)!.seq))} of their sessions) were confirmed durable ` +
        `(in ${runs.map((k) => runName(history, k)).join(', ')}) and never acked, but were not delivered after recovery ` +
        `(expected every unacked event confirmed durable in the final drain)${faultNote(history)}`,
    }];
  }
  const c = confirmedBefore(history, last);
  // An id still unknown was never delivered before the final drain, so never acked: its seq must come back.
  const confirmedSeqs = new Set([...confirmed.values()].map((x) => x.seq));
  const candidates = [...confirmedSeqs, ...rSeqs];
  const unknown = confirmedRanges.map(([lo, hi]) => absentSeqs(lo, hi, (s) => confirmedSeqs.has(s) || rSeqs.has(s), candidates));
  const unknownCount = unknown.reduce((n, u) => n + u.count, 0);
  const count = known.length + unknownCount;
  if (count === 0) return [];
  const missing: [number, number | undefined][] = [...known, ...unknown.flatMap((u) => u.first.map((s): [number, undefined] => [s, undefined]))]
    .sort(([a], [b]) => a - b)
    .slice(0, MAX_SEQS_KEPT);
  const seqs = missing.map(([seq]) => seq);
  // The gapless rule claimed the seqs no line named: say so, since a queue whose seqs skip would read this as a false alarm.
  const gapless = unknownCount > 0
    ? ` (${unknownCount} of them no line named: under "seqScope": "forever" seqs are gapless, so every seq up to a confirmed durableSeq holds an event the driver wrote)`
    : '';
  const promise = confirmingLine(history, last, seqs[0]);
  return [{
    check: 'at-least-once',
    seqs,
    ids: missing.flatMap(([, id]) => (id === undefined ? [] : [id])),
    ...(promise ? { promise } : {}),
    message: `at-least-once: seqs ${list(seqs, count)}${idsOf(missing.slice(0, MAX_LISTED).map(([, id]) => id))} were confirmed durable ` +
      `(durableSeq reached ${c.durableSeq} in ${runName(history, c.durableSeqRun)}) and never acked, ` +
      `but were not delivered after recovery (expected every unacked event confirmed up to seq ${c.durableSeq} in the final drain)${gapless}${faultNote(history)}`,
  }];
}

/**
 * Whether a power cut at the end of `rec`'s run may lose the ack, by the run's declared bound, and
 * why not if it may not. Exact, from the lines: an ack in flight may be lost; an out-of-order ack
 * (a lower delivered seq still unacked at the cut) may be lost unless the target makes those durable;
 * otherwise only the last ackBatchSize - 1 acks to join the in-order acks may be.
 */
function ackMayBeLost(history: History, rec: AckRecord, all: readonly AckRecord[]): { ok: true } | { ok: false; why: string } {
  const contract = contractOf(history.runs[rec.run].outcomes);
  if (!contract) throw new Error(`oracle: ${runName(history, rec.run)} acked events but declared no contract (no hello line before its acks)`);
  // A returned ack call promises nothing when the contract says so; durableFirstUnackedSeq still does.
  if (rec.ackedLine === undefined || !contract.acksConfirmed) return { ok: true };
  const declared = contract.replayBound;
  const joinedAt = declared.outOfOrderAcksDurable ? rec.ackedLine : rec.inOrderAt;
  if (joinedAt === undefined) return { ok: true };
  const later = all.filter((r) => r.run === rec.run && r.ackedLine !== undefined && (declared.outOfOrderAcksDurable ? r.ackedLine : r.inOrderAt ?? 0) > joinedAt).length;
  if (later <= declared.ackBatchSize - 2) return { ok: true };
  const joined = joinedAt === rec.ackedLine ? '' : `, and joined the in-order acks when line ${joinedAt} acked the last lower seq`;
  return {
    ok: false,
    why: `its ack call returned at line ${rec.ackedLine} of ${runName(history, rec.run)} ("acked" after the ack-intent at line ${rec.intentLine})${joined}; ` +
      `that run declared ackBatchSize ${declared.ackBatchSize}, so only the last ${declared.ackBatchSize - 1} returned in-order acks may be lost at its cut, ` +
      `and ${later} acked events joined after it`,
  };
}

function checkBoundedReplay(history: History): Violation[] {
  const out: Violation[] = [];
  const reported = new Set<number>();
  // Every run after a cut recovers: the final drain, and any recovery cut in its turn.
  const session = perSession(history);
  for (let j = 1; j < history.runs.length; j++) {
    const deliveries = recovered(history.runs[j]);
    const { acks, durablyAcked: ackedOfSession } = ledgerBefore(history, j);
    if (session) {
      // By event id: a confirmed durableFirstUnackedSeq covers the seqs of its own session only.
      for (const o of deliveries) {
        const a = o.id === null ? undefined : ackedOfSession.get(o.id);
        if (a === undefined || reported.has(o.id!)) continue;
        reported.add(o.id!);
        out.push({
          check: 'bounded-replay',
          seqs: [o.seq],
          ids: [o.id!],
          message: `bounded-replay: ${runName(history, j)} delivered event id ${o.id} (seq ${o.seq}) again after a power cut although its ack was ` +
            `confirmed durable (${runName(history, a.run)} confirmed durableFirstUnackedSeq ${a.firstUnacked} while the event was its seq ${a.seq}; expected it never to come back)`,
        });
      }
    }
    const c = confirmedBefore(history, j);
    // By seq: a correct queue confirms acks only below its durableSeq, and durable seqs are never reused.
    const durablyAcked = session ? [] : deliveries.map((o) => o.seq).filter((s) => s < c.firstUnacked);
    if (durablyAcked.length > 0) {
      // The first line that confirmed a first unacked seq above the lowest one delivered again.
      const lowest = Math.min(...durablyAcked);
      let promise: { run: number; line: number } | undefined;
      for (let k = 0; k < j && !promise; k++) {
        const i = history.runs[k].outcomes.findIndex((o) => (o.t === 'durable' || o.t === 'open') && o.durableFirstUnackedSeq > lowest);
        if (i >= 0) promise = { run: k, line: i + 1 };
      }
      // A seq delivered for another event than the one acked under it: the queue numbered anew.
      const ackedAt = new Map([...acks].map(([id, a]) => [a.seq, id]));
      const renumbered = deliveries.some((o) => o.seq < c.firstUnacked && o.id !== null && ackedAt.has(o.seq) && ackedAt.get(o.seq) !== o.id);
      out.push({
        check: 'bounded-replay',
        seqs: durablyAcked,
        ...(promise ? { promise } : {}),
        message: `bounded-replay: ${runName(history, j)} delivered seqs ${list(durablyAcked)} again after a power cut although their acks were ` +
          `confirmed durable (durableFirstUnackedSeq reached ${c.firstUnacked} in ${runName(history, c.firstUnackedRun)}; ` +
          `expected no seq below it${renumbered ? undeclaredHint(history, j, 'seqScope', `seqs ${list(durablyAcked.filter((q) => ackedAt.has(q)))} came back under other event ids: ${SESSION_SEQS_HINT}`) : ''})`,
      });
    }
    const all = [...acks.values()];
    for (const o of deliveries) {
      const rec = o.id === null ? undefined : acks.get(o.id);
      if (rec === undefined || reported.has(o.id!) || (!session && o.seq < c.firstUnacked)) continue;
      const verdict = ackMayBeLost(history, rec, all);
      if (verdict.ok) continue;
      reported.add(o.id!);
      out.push({
        check: 'bounded-replay',
        seqs: [o.seq],
        ids: [o.id!],
        promise: { run: rec.run, line: rec.ackedLine! },
        message: `bounded-replay: ${runName(history, j)} delivered seq ${o.seq} (event id ${o.id}) again after a power cut, although ` +
          `the queue had promised its ack: ${verdict.why} (expected it never to come back)`,
      });
    }
  }
  return out;
}

function checkIntegrity(history: History): Violation[] {
  const sizeOfId = new Map<number, number>();
  const seqOfId = new Map<number, number>();
  for (const run of history.runs) {
    for (const o of run.outcomes) {
      if (o.t === 'write-intent') sizeOfId.set(o.id, o.size);
    }
  }
  const out: Violation[] = [];
  const session = perSession(history);
  let deliveredAt = new Map<number, Set<number>>(); // id -> seqs it was delivered under
  history.runs.forEach((run, k) => {
    let writtenSeq = new Map<number, number>(); // this run's write() results: seqs may be reused across runs if never durable
    for (const o of run.outcomes) {
      // seqScope session: an event may come back under another seq in a later session; within one, its seq is its seq.
      if (session && o.t === 'open') {
        writtenSeq = new Map();
        deliveredAt = new Map();
        seqOfId.clear();
      }
      if (o.t === 'written') {
        writtenSeq.set(o.id, o.seq);
        seqOfId.set(o.id, o.seq);
      }
      if (o.t !== 'delivered') continue;
      const where = `${runName(history, k)}: seq ${o.seq}`;
      const fail = (what: string) => out.push({ check: 'integrity', seqs: [o.seq], ids: o.id === null ? [] : [o.id], message: `integrity: ${where} ${what}` });
      if (o.id === null) {
        fail(`was delivered with an unreadable payload header (${o.size} bytes); expected an event id in its first 4 bytes`);
        continue;
      }
      const size = sizeOfId.get(o.id);
      if (size === undefined) {
        fail(`carries event id ${o.id}, which was never written (nothing delivered may be invented)`);
        continue;
      }
      const expectedCrc = payloadCrc(o.id, size);
      if (o.size !== size || o.crc !== expectedCrc) {
        fail(`(event id ${o.id}) has different bytes than were written: expected ${size} bytes with crc32 ${expectedCrc}, got ${o.size} bytes with crc32 ${o.crc}`);
        continue;
      }
      const returned = writtenSeq.get(o.id) ?? seqOfId.get(o.id);
      if (returned !== undefined && returned !== o.seq) {
        fail(`carries event id ${o.id}, but write() returned seq ${returned} for that event`);
        continue;
      }
      const seqs = deliveredAt.get(o.id) ?? new Set<number>();
      seqs.add(o.seq);
      deliveredAt.set(o.id, seqs);
      if (seqs.size > 1) fail(`carries event id ${o.id}, which was also delivered as seq(s) ${[...seqs].filter((s) => s !== o.seq).join(', ')}; it was written once`);
    }
  });
  return out;
}

function checkOrder(history: History): Violation[] {
  const out: Violation[] = [];
  history.runs.forEach((run, k) => {
    const anyOrder = contractOf(run.outcomes)?.deliveryOrder === 'any';
    let previous = 0;
    let seen = new Set<number>();
    for (const o of run.outcomes) {
      if (o.t === 'open') [previous, seen] = [0, new Set()]; // a reopened queue delivers its unacked events again
      if (o.t !== 'delivered') continue;
      if (anyOrder ? seen.has(o.seq) : o.seq <= previous) {
        out.push({
          check: 'order',
          seqs: [previous, o.seq],
          message: anyOrder
            ? `order: ${runName(history, k)} delivered seq ${o.seq} twice in one session (expected each event at most once per session)`
            : `order: ${runName(history, k)} delivered seq ${o.seq} after seq ${previous} (expected strictly increasing seqs, no repeats` +
              `${undeclaredHint(history, k, 'deliveryOrder', 'a queue that delivers events as they become ready declares "deliveryOrder": "any" in its contract')})`,
        });
      }
      previous = o.seq;
      seen.add(o.seq);
    }
  });
  const last = history.runs.length - 1;
  const final = history.runs[last];
  const reopened = final.outcomes.find((o): o is Extract<Outcome, { t: 'open' }> => o.t === 'open');
  // Liveness reports a queue that did not open, or a drain that stopped on an error: no recovered set to judge holes in.
  if (reopened === undefined || !final.outcomes.some((o) => o.t === 'drained')) return out;
  const { unconfirmedWrites, seqScope } = historyContract(history);
  // With seqs of its own, the recovered session's missing seqs cannot be matched to events (acked
  // ones may rightly be gone); with holes, any seq no line confirmed may be gone. Either way
  // at-least-once judges every confirmed event instead.
  if (seqScope === 'session' || unconfirmedWrites === 'holes') return out;
  const { idAt, acks, confirmed } = ledgerBefore(history, last);
  const r = recovered(final).map((o) => o.seq);
  // Holes are judged over what the recovered queue itself claims, not only between delivered seqs.
  // Its open says every seq in [F, D] is held and unacked (its durableFirstUnackedSeq F is where
  // delivery starts: acks that became durable unseen before the cut legitimately move F up, so the
  // last confirmed F would be too low). An unconfirmed event is lost only with every later seq of
  // its stream (a suffix), so a delivered seq also vouches for every unacked seq below it. Seqs
  // reused by later runs are judged by the event the ledger knows there.
  const rSeqs = new Set(r);
  const [F, D] = [reopened.durableFirstUnackedSeq, reopened.durableSeq];
  const from = Math.min(F, r[0] ?? Infinity);
  const to = Math.max(D, r[r.length - 1] ?? 0);
  const ackedAt = (s: number) => idAt.has(s) && acks.has(idAt.get(s)!);
  const { first: holes, count } = absentSeqs(from, to, (s) => rSeqs.has(s) || ackedAt(s), [...rSeqs, ...idAt.keys()]);
  if (count === 0) return out;
  // The evidence, each part only where it holds: never an empty range.
  const claimed = holes.filter((s) => s >= F && s <= D);
  const vouched = holes.filter((s) => !(s >= F && s <= D));
  const evidence = [
    ...(claimed.length ? [`its open reported seqs ${F} to ${D} held and unacked (${list(claimed)} among them)`] : []),
    ...(vouched.length ? [`it delivered seq ${r[r.length - 1]}, and under "unconfirmedWrites": "suffix" an unconfirmed write is lost only with every later seq of its stream, so that delivery vouches for seqs ${list(vouched)}`] : []),
  ];
  // Seqs no line before confirmed: a queue that persists requests as they complete loses such holes by design.
  const confirmedSeqs = new Set([...confirmed.values()].map((c) => c.seq));
  const hint = holes.every((s) => !confirmedSeqs.has(s))
    ? undeclaredHint(history, last, 'unconfirmedWrites', 'a queue that may lose an unconfirmed write while a later one survives (ids assigned on arrival, requests persisted as they complete) declares "unconfirmedWrites": "holes" in its contract')
    : '';
  out.push({
    check: 'order',
    seqs: holes,
    message: `order: after recovery the queue skipped seqs ${list(holes, count)}${idsOf(holes.slice(0, MAX_LISTED).map((s) => idAt.get(s)))}, ` +
      `which were never acked, although ${evidence.join(', and ')} (expected every one delivered except acked events: no holes${hint})`,
  });
  return out;
}

function checkMonotonicSeqs(history: History): Violation[] {
  const out: Violation[] = [];
  const session = perSession(history);
  history.runs.forEach((run, k) => {
    const c = session ? { durableSeq: 0, durableSeqRun: k } : confirmedBefore(history, k);
    let durableSeq = c.durableSeq;
    let durableSeqRun = c.durableSeqRun;
    // Opens (a reopen within the run) so far, and as of the confirmation of durableSeq: a seq reused
    // across a reopen may be a per-session numbering, which the hint names.
    let opens = 0;
    let durableSeqOpens = 0;
    // A write's seq is compared with what was confirmed before its intent line: a confirmation printed
    // later (concurrent writers) may cover it.
    const limitOf = new Map<number, { durableSeq: number; run: number; opens: number }>(); // event id -> limit at its intent
    let seen = new Map<number, { id: number; opens: number }>(); // seq -> its event in this run (this session, with seqScope session)
    const hint = (sinceRun: number, sinceOpens: number) => (sinceRun === k && sinceOpens === opens ? '' : undeclaredHint(history, k, 'seqScope', SESSION_SEQS_HINT));
    for (const o of run.outcomes) {
      if (o.t === 'open') {
        opens++;
        if (session) {
          durableSeq = 0;
          seen = new Map();
        }
      }
      const confirmed = confirmedSeq(o);
      if (confirmed > durableSeq) [durableSeq, durableSeqRun, durableSeqOpens] = [confirmed, k, opens];
      if (o.t === 'write-intent') limitOf.set(o.id, { durableSeq, run: durableSeqRun, opens: durableSeqOpens });
      if (o.t !== 'written') continue;
      const limit = limitOf.get(o.id) ?? { durableSeq: c.durableSeq, run: c.durableSeqRun, opens: 0 };
      if (o.seq <= limit.durableSeq) {
        out.push({
          check: 'monotonic-seqs',
          seqs: [o.seq],
          ids: [o.id],
          message: `monotonic-seqs: ${runName(history, k)} got seq ${o.seq} for event id ${o.id}, but seqs up to ` +
            `${limit.durableSeq} were confirmed durable in ${runName(history, limit.run)}${session ? ' earlier in its session' : ''} (a durable seq must never be reused` +
            `${hint(limit.run, limit.opens)})`,
        });
      }
      const other = seen.get(o.seq);
      if (other !== undefined) {
        out.push({
          check: 'monotonic-seqs',
          seqs: [o.seq],
          ids: [other.id, o.id],
          message: `monotonic-seqs: ${runName(history, k)} returned seq ${o.seq} twice, for event ids ${other.id} and ${o.id}${other.opens === opens ? '' : ` (across a reopen${hint(k, other.opens)})`}`,
        });
      }
      seen.set(o.seq, { id: o.id, opens });
    }
  });
  return out;
}

function errorOf(run: RunRecord): Extract<Outcome, { t: 'error' }> | undefined {
  return run.outcomes.find((o): o is Extract<Outcome, { t: 'error' }> => o.t === 'error');
}

function checkLiveness(history: History): Violation[] {
  const out: Violation[] = [];
  const last = history.runs.length - 1;
  const fail = (message: string, seqs?: number[]) => out.push({ check: 'liveness', message: `liveness: ${message}`, seqs });
  history.runs.forEach((run, k) => {
    if (run.hung) out.push({ check: 'liveness', hang: true, message: `liveness: ${runName(history, k)} neither reached its crash point nor finished within its time bound (a hang)` });
    const error = errorOf(run);
    if (error?.code === TIMED_OUT) {
      out.push({ check: 'liveness', hang: true, message: `liveness: ${runName(history, k)} gave up waiting at ${error.where}: ${error.message} (code ${TIMED_OUT}: judged as a hang)` });
      return;
    }
    if (k < last && error && !history.faultsInjected && !(history.damagedDisk && k > 0)) {
      fail(`${runName(history, k)} failed with no fault injected, at ${error.where}: ${error.message}`);
    }
  });
  const final = history.runs[last];
  const error = errorOf(final);
  if (error?.code === TIMED_OUT) return out;
  // On a damaged disk, reporting the damage is what a recovery must do when it cannot go on intact.
  if (history.damagedDisk && error) return out;
  if (!final.outcomes.some((o) => o.t === 'open')) {
    fail(`the queue did not open after the power cut${error ? `: ${error.message}` : ''} (expected recovery to succeed after every cut)`);
    return out;
  }
  if (error) {
    fail(`the final drain failed at ${error.where}: ${error.message}`);
    return out;
  }
  const drainedAt = final.outcomes.findIndex((o) => o.t === 'drained');
  if (drainedAt < 0 || !final.outcomes.some((o) => o.t === 'done') || final.exitCode !== 0) {
    if (!final.hung) fail(`the final drain did not finish (exit code ${final.exitCode}, ${drainedAt < 0 ? 'never drained' : 'no done line'})`);
    return out;
  }
  // New writes after recovery must be accepted and delivered back.
  const after = final.outcomes.slice(drainedAt);
  const written = after.filter((o): o is Extract<Outcome, { t: 'write-intent' }> => o.t === 'write-intent').map((o) => o.id);
  const delivered = new Set(after.filter((o): o is Extract<Outcome, { t: 'delivered' }> => o.t === 'delivered').map((o) => o.id));
  const lost = written.filter((id) => !delivered.has(id));
  if (written.length === 0 || lost.length > 0) {
    fail(`after recovery, new writes were not delivered back (event ids ${lost.join(', ') || 'none written'})`);
  }
  return out;
}

function checkFailLoudly(history: History): Violation[] {
  const out: Violation[] = [];
  history.runs.forEach((run, k) => {
    if (run.killed || run.failedRequests.length === 0 || errorOf(run)) return;
    const f = run.failedRequests[0];
    out.push({
      check: 'fail-loudly',
      message: `fail-loudly: in ${runName(history, k)} the filesystem failed request ${f.op} (${f.kind} ${f.path}: errno ${-f.result}) ` +
        `but the queue reported no error (expected the failing call, or a later one, to reject)`,
    });
  });
  return out;
}

/** All violations of one history, in the order the checks are documented; empty means it passed. */
export function judge(history: History): Violation[] {
  if (history.runs.length < 2) throw new Error(`oracle: a history needs a cut run and a final drain, got ${history.runs.length} run(s)`);
  if (history.runs[history.runs.length - 1].role !== 'drain') throw new Error('oracle: the last run of a history must be the final drain');
  // Without a complete drain there is no recovered set to judge: liveness says why.
  const final = history.runs[history.runs.length - 1];
  const drained = final.outcomes.some((o) => o.t === 'drained');
  const violations = [
    ...(drained ? checkAtLeastOnce(history) : []),
    ...(drained ? checkBoundedReplay(history) : []),
    ...checkIntegrity(history),
    ...checkOrder(history),
    ...checkMonotonicSeqs(history),
    ...checkLiveness(history),
    ...checkFailLoudly(history),
  ];
  return violations.map((v) => ({ ...v, message: `${v.message} [target ${history.target}]` }));
}
