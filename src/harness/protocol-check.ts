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

/** What a cluster driver's run showed about its nodes, for checkNodeLines. */
export interface ClusterRunFacts {
  /** The nodes the spec listed. */
  nodeCount: number;
  /** Every stdout line that parsed, with its 1-based line number. */
  lines: readonly { line: number; o: Outcome }[];
  /** Line n was marked after `afterOp` requests of the merged order (the spec's mark). */
  marks: readonly { n: number; afterOp: number }[];
  /** Every node's requests, in their one order. */
  trace: readonly { op: number; node?: number; kind: string; path: string }[];
  /** The driver's own process group. */
  driverPgid: number;
  /** The nodes the harness cut and asked to restart, if it did; each one's restarted line is checked for. */
  restartsAsked?: readonly number[];
}

/**
 * The cluster part of the driver protocol (docs/driver-protocol.md, "Clusters"): one node line
 * per node before the run's open line, each naming a process group that is not the driver's and
 * printed (marked) before that node's first request; a restarted line for a node only when the
 * harness asked, and one when it did. Pure.
 */
export function checkNodeLines(f: ClusterRunFacts): ProtocolProblem[] {
  const problems: ProtocolProblem[] = [];
  const openLine = f.lines.find((l) => l.o.t === 'open')?.line ?? Infinity;
  const started = new Map<number, number>(); // node -> line of its first node line
  const markOf = new Map(f.marks.map((m) => [m.n, m.afterOp]));
  for (const { line, o } of f.lines) {
    if (o.t !== 'node') continue;
    if (o.node >= f.nodeCount) {
      problems.push({ line, message: `a node line for node ${o.node}, but the spec lists nodes 0..${f.nodeCount - 1}` });
      continue;
    }
    if (o.pgid === f.driverPgid) problems.push({ line, message: `node ${o.node}'s pgid ${o.pgid} is the driver's own process group: start each node's server in a group of its own (setsid, or spawn with detached), or a cut of that node kills the driver too` });
    if (o.restarted) {
      if (!f.restartsAsked?.includes(o.node)) problems.push({ line, message: `a restarted line for node ${o.node}, which the harness did not ask to restart` });
      continue;
    }
    if (started.has(o.node)) {
      problems.push({ line, message: `a second node line for node ${o.node} (the first at line ${started.get(o.node)}) without "restarted": true` });
      continue;
    }
    started.set(o.node, line);
    if (line > openLine) problems.push({ line, message: `node ${o.node}'s node line comes after the open line (line ${openLine}): print every node's line as its server starts, before the cluster opens` });
    const afterOp = markOf.get(line);
    const first = f.trace.find((e) => (e.node ?? 0) === o.node);
    if (afterOp !== undefined && first && first.op <= afterOp) {
      problems.push({ line, message: `node ${o.node}'s disk was touched (request ${first.op}, ${first.kind} ${first.path}) before its node line was printed (marked after request ${afterOp}): print the line before the server touches its data directory, or the harness cannot cut that node at its first requests` });
    }
  }
  for (let k = 0; k < f.nodeCount; k++) if (!started.has(k)) problems.push({ line: 0, message: `no node line for node ${k}: a cluster driver prints {"t":"node","node":${k},"pgid":P} for each node of the spec as it starts its server` });
  for (const k of f.restartsAsked ?? []) {
    if (!f.lines.some(({ o }) => o.t === 'node' && o.node === k && o.restarted === true)) {
      problems.push({ line: 0, message: `the harness asked to restart node ${k} ({"cmd":"restart","node":${k}} on stdin), but no {"t":"node","node":${k},"pgid":P,"restarted":true} line came` });
    }
  }
  return problems;
}
