// The driver's stdout protocol: one JSON object per line, each printed before the driver's next
// filesystem call, so that at a power cut the lines are exactly what the queue had confirmed.
// Intent lines come before the call they announce. docs/driver-protocol.md is the reference.

import { completeContract, contractProblems, type Contract, type ReplayBound } from './contract.js';

export type { ReplayBound } from './contract.js';

export const DRIVER_PROTOCOL_VERSION = 1;

/** What a hello line declares: the whole contract (its omitted fields take their defaults), or only the replay bound (the older form). */
export type ContractDeclaration = Pick<Contract, 'replayBound'> & Partial<Contract>;

export type Outcome =
  /** First line of every run: protocol version, target name, the contract it promises (or, older form, only its replay bound). */
  | { t: 'hello'; protocol: number; target: string; contract?: ContractDeclaration; replayBound?: ReplayBound; serves?: boolean; setup?: boolean }
  /** The queue opened (after recovery), with the durability state it reports. */
  | { t: 'open'; durableSeq: number; durableFirstUnackedSeq: number }
  | { t: 'write-intent'; id: number; size: number }
  | { t: 'written'; id: number; seq: number }
  /** durableSeq or durableFirstUnackedSeq advanced. */
  | { t: 'durable'; durableSeq: number; durableFirstUnackedSeq: number }
  /** waitDurable(seq) resolved. */
  | { t: 'waited'; seq: number }
  /** One delivered event: what its bytes say (id from the header, size, crc32 of all bytes). */
  | { t: 'delivered'; seq: number; id: number | null; size: number; crc: number }
  | { t: 'ack-intent'; seqs: number[] }
  | { t: 'acked'; seqs: number[] }
  | { t: 'checkpoint-intent' }
  | { t: 'checkpointed' }
  | { t: 'close-intent' }
  | { t: 'closed' }
  /** Drain mode: everything recovered was read and acked; liveness writes follow. */
  | { t: 'drained'; count: number }
  | { t: 'done' }
  /**
   * A cluster driver: node k's server runs in process group pgid (the harness kills exactly that
   * group at the node's cut); `restarted`: it was restarted on its crashed disk, as the harness asked.
   */
  | { t: 'node'; node: number; pgid: number; restarted?: boolean }
  /** The queue (or the driver) failed: where, the message, and the errno code if any. */
  | { t: 'error'; where: string; message: string; code?: string };

export type OutcomeKind = Outcome['t'];

/** Driver exit codes: distinct, so a harness never mistakes a failure for a finished workload. */
export const DRIVER_EXIT = { ok: 0, usage: 2, queueError: 3 } as const;

type FieldType = 'int' | 'nat' | 'string' | 'bool' | 'seqs' | 'id';
const FIELDS: Record<OutcomeKind, Record<string, FieldType>> = {
  hello: { protocol: 'nat', target: 'string' },
  open: { durableSeq: 'nat', durableFirstUnackedSeq: 'int' },
  'write-intent': { id: 'int', size: 'nat' },
  written: { id: 'int', seq: 'int' },
  durable: { durableSeq: 'nat', durableFirstUnackedSeq: 'int' },
  waited: { seq: 'int' },
  delivered: { seq: 'int', id: 'id', size: 'nat', crc: 'nat' },
  'ack-intent': { seqs: 'seqs' },
  acked: { seqs: 'seqs' },
  'checkpoint-intent': {},
  checkpointed: {},
  'close-intent': {},
  closed: {},
  drained: { count: 'nat' },
  done: {},
  node: { node: 'nat', pgid: 'int' },
  error: { where: 'string', message: 'string' },
};
const OPTIONAL: Partial<Record<OutcomeKind, Record<string, FieldType>>> = { hello: { serves: 'bool', setup: 'bool' }, node: { restarted: 'bool' }, error: { code: 'string' } };
export const OUTCOME_KINDS = Object.keys(FIELDS) as OutcomeKind[];

function fieldProblem(value: unknown, type: FieldType): string | null {
  const isInt = (x: unknown, min: number) => Number.isSafeInteger(x) && (x as number) >= min;
  switch (type) {
    case 'int': return isInt(value, 1) ? null : 'an integer >= 1';
    case 'nat': return isInt(value, 0) ? null : 'an integer >= 0';
    case 'string': return typeof value === 'string' ? null : 'a string';
    case 'bool': return typeof value === 'boolean' ? null : 'true or false';
    case 'id': return value === null || isInt(value, 1) ? null : 'an integer >= 1 or null';
    case 'seqs': return Array.isArray(value) && value.length > 0 && value.every((s) => isInt(s, 1)) ? null : 'a non-empty array of integers >= 1';
  }
}

/** The hello line's contract: "contract" (the whole declaration) or "replayBound" alone, exactly one of them. */
function helloContractProblems(o: Record<string, unknown>): string[] {
  if ('contract' in o && 'replayBound' in o) return ['"hello" declares both "contract" and "replayBound": put the replay bound inside the contract'];
  if ('contract' in o) return contractProblems(o.contract, '"hello".contract');
  if ('replayBound' in o) return contractProblems({ replayBound: o.replayBound }, '"hello"');
  return ['"hello" line without its "contract" field (what the queue promises; at least {"replayBound": {"ackBatchSize": n, "outOfOrderAcksDurable": b}})'];
}

/** Every problem of one parsed line against the protocol: unknown kind, missing or ill-typed fields. */
export function outcomeProblems(value: unknown): string[] {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return ['not a JSON object'];
  const o = value as Record<string, unknown>;
  if (typeof o.t !== 'string') return ['no "t" field naming the line kind'];
  const fields = FIELDS[o.t as OutcomeKind];
  if (!fields) return [`unknown kind "${o.t}" (known: ${OUTCOME_KINDS.join(', ')})`];
  const problems: string[] = [];
  for (const [name, type] of Object.entries(fields)) {
    if (!(name in o)) problems.push(`"${o.t}" line without its "${name}" field`);
    else {
      const p = fieldProblem(o[name], type);
      if (p) problems.push(`"${o.t}".${name} must be ${p}, got ${JSON.stringify(o[name])}`);
    }
  }
  for (const [name, type] of Object.entries(OPTIONAL[o.t as OutcomeKind] ?? {})) {
    const p = name in o ? fieldProblem(o[name], type) : null;
    if (p) problems.push(`"${o.t}".${name} must be ${p}, got ${JSON.stringify(o[name])}`);
  }
  if (o.t === 'hello') problems.push(...helloContractProblems(o));
  return problems;
}

/** One line of driver output; an error names the line number and what is wrong with it. */
export function parseOutcomeLine(line: string, lineNumber: number, where: string): Outcome {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    throw new Error(`${where}: line ${lineNumber} is not JSON: ${line.slice(0, 200)}`);
  }
  const problems = outcomeProblems(value);
  if (problems.length > 0) throw new Error(`${where}: line ${lineNumber} breaks the driver protocol: ${problems.join('; ')}: ${line.slice(0, 200)}`);
  return value as Outcome;
}

/**
 * Parses a driver's stdout. A last line without its newline was cut mid-print by SIGKILL: it was
 * never fully confirmed, so it is dropped. Any other unreadable line is an error naming its number.
 */
export function parseOutcomes(stdout: string, where: string): Outcome[] {
  const lines = stdout.split('\n');
  lines.pop(); // '' after the last newline, or an unfinished line
  return lines.map((line, i) => parseOutcomeLine(line, i + 1, where));
}

/** The run's hello line (the first line), if it printed one. */
export function helloOf(outcomes: readonly Outcome[]): Extract<Outcome, { t: 'hello' }> | undefined {
  const first = outcomes[0];
  return first?.t === 'hello' ? first : undefined;
}

/** The contract a run declared in its hello line, with defaults filled in; undefined without a hello line. */
export function contractOf(outcomes: readonly Outcome[]): Contract | undefined {
  const hello = helloOf(outcomes);
  if (!hello) return undefined;
  const declared = hello.contract ?? (hello.replayBound ? { replayBound: hello.replayBound } : undefined);
  if (!declared) throw new Error('invariant: a parsed hello line declares a contract or a replay bound');
  return completeContract(declared);
}

/**
 * The error code of a driver that gave up waiting on something outside the queue's logic (a replica
 * starting, a server answering): how long that takes depends on the machine's load, so the oracle
 * judges it like a hang, never as proof that the queue failed.
 */
export const TIMED_OUT = 'ETIMEDOUT';
