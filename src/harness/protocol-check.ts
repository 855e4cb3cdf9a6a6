// Checks one driver run's output against the driver protocol (docs/driver-protocol.md), line by
// line, before the oracle ever sees it: a driver author learns which line is wrong and why. Pure.
import { DRIVER_EXIT, DRIVER_PROTOCOL_VERSION, contractOf, outcomeProblems, type Outcome } from './outcome.js';

export interface ProtocolProblem {
  /** 1-based line of the driver's stdout, or 0 for the run as a whole. */
  line: number;
  message: string;
}

export interface RunOutput {
  stdout: string;
  exitCode: number | undefined;
  /** How many markers the daemon recorded, when the spec asked for them. */
  marks?: number;
  /**
   * The run's steps wrote events one after another (no concurrency): their seqs must increase.
   * Writes made at once (concurrent write steps, a drain's liveness writes) may return in any
   * order; their seqs must only differ.
   */
  sequential: boolean;
}

/** Every protocol problem of one run, in line order. */
export function checkDriverRun(run: RunOutput): ProtocolProblem[] {
  const problems: ProtocolProblem[] = [];
  const lines = run.stdout.split('\n');
  const unterminated = lines.pop();
  if (unterminated) problems.push({ line: lines.length + 1, message: `the last line has no newline (a line must be flushed whole before the next filesystem call): ${unterminated.slice(0, 120)}` });
  const outcomes: (Outcome | null)[] = lines.map((text, i) => {
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      problems.push({ line: i + 1, message: `not JSON: ${text.slice(0, 120)}` });
      return null;
    }
    const p = outcomeProblems(value);
    for (const m of p) problems.push({ line: i + 1, message: m });
    return p.length ? null : (value as Outcome);
  });

  const first = outcomes[0];
  if (lines.length === 0) problems.push({ line: 0, message: 'the driver printed nothing; the first line must be {"t":"hello",...}' });
  else if (first && first.t !== 'hello') problems.push({ line: 1, message: `the first line must be the hello line, got "${first.t}"` });
  else if (first && first.t === 'hello' && first.protocol !== DRIVER_PROTOCOL_VERSION) problems.push({ line: 1, message: `hello.protocol is ${first.protocol}; this powercut speaks protocol ${DRIVER_PROTOCOL_VERSION}` });

  // What the hello line declared decides what goes backwards (contract.ts).
  const contract = first?.t === 'hello' ? contractOf([first]) : undefined;
  const perSession = contract?.seqScope === 'session';
  const anyOrder = contract?.deliveryOrder === 'any';
  let durableSeq = 0;
  let firstUnacked = 0;
  let lastWritten = 0;
  let written = new Set<number>(); // this session's seqs
  let lastDelivered = 0;
  let endedAt = 0;
  const pendingAcks: string[] = [];
  outcomes.forEach((o, i) => {
    const line = i + 1;
    if (!o) return;
    if (endedAt > 0) problems.push({ line, message: `output after the run ended with its ${outcomes[endedAt - 1]?.t} line at line ${endedAt}` });
    switch (o.t) {
      case 'hello':
        if (i > 0) problems.push({ line, message: 'a second hello line' });
        break;
      case 'open':
        lastDelivered = 0;
        written = new Set();
        // Seqs of a session of their own: its counters start afresh.
        if (perSession) [durableSeq, firstUnacked, lastWritten] = [0, 0, 0];
        // fall through: open reports the durable state too
      case 'durable':
        if (o.durableSeq < durableSeq) problems.push({ line, message: `durableSeq goes backwards: ${o.durableSeq} after ${durableSeq}` });
        if (o.durableFirstUnackedSeq < firstUnacked) problems.push({ line, message: `durableFirstUnackedSeq goes backwards: ${o.durableFirstUnackedSeq} after ${firstUnacked}` });
        durableSeq = Math.max(durableSeq, o.durableSeq);
        firstUnacked = Math.max(firstUnacked, o.durableFirstUnackedSeq);
        break;
      case 'written':
        if (run.sequential && o.seq <= lastWritten) problems.push({ line, message: `seq goes backwards: write returned seq ${o.seq} after seq ${lastWritten} (one writer at a time)` });
        else if (written.has(o.seq)) problems.push({ line, message: `write returned seq ${o.seq} twice in one session` });
        written.add(o.seq);
        lastWritten = Math.max(lastWritten, o.seq);
        break;
      case 'delivered':
        if (!anyOrder && o.seq <= lastDelivered) problems.push({ line, message: `delivered seq ${o.seq} after seq ${lastDelivered}: delivery must follow seq order (unless the contract declares "deliveryOrder": "any")` });
        lastDelivered = o.seq;
        break;
      case 'ack-intent':
        pendingAcks.push(JSON.stringify(o.seqs));
        break;
      case 'acked': {
        const at = pendingAcks.indexOf(JSON.stringify(o.seqs));
        if (at < 0) problems.push({ line, message: `acked ${JSON.stringify(o.seqs)} without an ack-intent line for the same seqs before it` });
        else pendingAcks.splice(at, 1);
        break;
      }
      case 'done':
      case 'error':
        endedAt = line;
        break;
    }
  });
  const last = outcomes[outcomes.length - 1];
  const expectedExit = last?.t === 'done' ? DRIVER_EXIT.ok : last?.t === 'error' ? DRIVER_EXIT.queueError : undefined;
  if (lines.length > 0 && expectedExit === undefined) problems.push({ line: lines.length, message: 'the run must end with a "done" line (exit 0) or an "error" line (exit 3)' });
  else if (expectedExit !== undefined && run.exitCode !== expectedExit) problems.push({ line: 0, message: `exit code ${run.exitCode} after a "${last!.t}" line; expected ${expectedExit}` });
  if (run.marks !== undefined && run.marks !== lines.length) {
    problems.push({ line: 0, message: `${lines.length} lines printed but ${run.marks} markers in the request trace: stat <mark>/<N> right after printing line N (docs/driver-protocol.md, "Markers")` });
  }
  return problems;
}
