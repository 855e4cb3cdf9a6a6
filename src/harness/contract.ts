// What a queue promises, as it declares it (docs/driver-protocol.md, "The contract"): the oracle
// judges every run by the contract its hello line declared, and nothing else. Pure.
//
// A check that fires on a behaviour the queue never promised is a false alarm; so every assumption
// the oracle makes about a queue is a field here, with its default stated, and a message that fails
// on a default names the field that would declare otherwise.

/**
 * The duplicate-replay bound: which acked events a power cut may bring back (oracle.ts judges it ack
 * by ack). ackBatchSize: in-order acks are made durable in batches of this many (1: every ack call);
 * outOfOrderAcksDurable: false when an ack above a gap is not durable until the gap closes.
 */
export interface ReplayBound {
  ackBatchSize: number;
  outOfOrderAcksDurable: boolean;
}

export interface Contract {
  replayBound: ReplayBound;
  /**
   * Whether a returned ack call promises anything (then within replayBound). false: acks are made
   * durable on the queue's own schedule, and only a `durableFirstUnackedSeq` confirms them.
   */
  acksConfirmed: boolean;
  /**
   * Which unconfirmed writes a cut may lose. 'suffix' (a log): an unconfirmed write is lost only with
   * every later seq of its stream, so a recovered queue holds a gapless prefix. 'holes': requests
   * persisted as they complete (ids assigned on arrival) may lose an unconfirmed seq while a later
   * one survives; a seq may then be missing only if it was never confirmed durable, and a recovered
   * open's durableSeq (the highest seq it holds) claims only the events it then delivers.
   */
  unconfirmedWrites: 'suffix' | 'holes';
  /**
   * 'forever': a seq names one event for the queue's whole life, and seqs are gapless (every seq up
   * to a confirmed durableSeq holds an event the driver wrote). 'session': seqs are unique within one
   * session of the queue only, from an open line to the next (a queue numbering its jobs per server
   * process, restarting at 1 after a restart that found no records): events are then matched across
   * sessions by event id alone, and what only a seq could name is not judged (driver-protocol.md).
   */
  seqScope: 'forever' | 'session';
  /**
   * 'seq': a session delivers its events in increasing seq order. 'any': in the order they become
   * ready (a job server hands out job 3 while job 2 is still being stored); each event still at
   * most once per session.
   */
  deliveryOrder: 'seq' | 'any';
}

/** The defaults of every field but replayBound, which a driver must always declare. */
export const CONTRACT_DEFAULTS: Omit<Contract, 'replayBound'> = { acksConfirmed: true, unconfirmedWrites: 'suffix', seqScope: 'forever', deliveryOrder: 'seq' };

const FIELD_RULES: Record<keyof Contract, { shape: string; ok: (v: unknown) => boolean }> = {
  replayBound: {
    shape: '{"ackBatchSize": integer >= 1, "outOfOrderAcksDurable": true|false}',
    ok: (v) => {
      const b = v as Partial<ReplayBound> | null;
      return typeof b === 'object' && b !== null && !Array.isArray(b) && Number.isSafeInteger(b.ackBatchSize) && b.ackBatchSize! >= 1 &&
        typeof b.outOfOrderAcksDurable === 'boolean' && Object.keys(b).every((k) => k === 'ackBatchSize' || k === 'outOfOrderAcksDurable');
    },
  },
  acksConfirmed: { shape: 'true or false', ok: (v) => typeof v === 'boolean' },
  unconfirmedWrites: { shape: '"suffix" or "holes"', ok: (v) => v === 'suffix' || v === 'holes' },
  seqScope: { shape: '"forever" or "session"', ok: (v) => v === 'forever' || v === 'session' },
  deliveryOrder: { shape: '"seq" or "any"', ok: (v) => v === 'seq' || v === 'any' },
};
export const CONTRACT_FIELDS = Object.keys(FIELD_RULES) as (keyof Contract)[];

/** Every problem of a declared contract object (hello's "contract"), each naming its field. */
export function contractProblems(value: unknown, where = 'contract'): string[] {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return [`${where} must be an object with the fields ${CONTRACT_FIELDS.join(', ')}`];
  const problems: string[] = [];
  const o = value as Record<string, unknown>;
  for (const key of Object.keys(o)) {
    if (!(key in FIELD_RULES)) problems.push(`${where} has an unknown field "${key}" (known: ${CONTRACT_FIELDS.join(', ')})`);
  }
  for (const [key, rule] of Object.entries(FIELD_RULES)) {
    if (!(key in o)) {
      if (key === 'replayBound') problems.push(`${where} without its "replayBound" field (${rule.shape}: it has no default)`);
      continue;
    }
    if (!rule.ok(o[key])) problems.push(`${where}.${key} must be ${rule.shape}, got ${JSON.stringify(o[key])}`);
  }
  return problems;
}

/** The whole contract from a valid declaration: the fields it left out take their defaults. */
export function completeContract(declared: Pick<Contract, 'replayBound'> & Partial<Contract>): Contract {
  return { ...CONTRACT_DEFAULTS, ...declared, replayBound: { ...declared.replayBound } };
}

/**
 * The contract in words, as summaries and reports show what a run was checked against:
 * "at-least-once; bounded replay 8 (out-of-order acks not durable); lost unconfirmed writes a suffix; seqs unique forever".
 */
export function describeContract(c: Contract): string {
  const replay = c.acksConfirmed
    ? `bounded replay ${c.replayBound.ackBatchSize} (out-of-order acks ${c.replayBound.outOfOrderAcksDurable ? 'durable' : 'not durable until the gap closes'})`
    : 'acks confirmed only by durableFirstUnackedSeq';
  return [
    'at-least-once',
    replay,
    c.unconfirmedWrites === 'holes' ? 'holes allowed among unconfirmed writes' : 'lost unconfirmed writes a suffix',
    c.seqScope === 'session' ? 'seqs unique per session' : 'seqs unique forever',
    c.deliveryOrder === 'any' ? 'delivered in any order' : 'delivered in seq order',
  ].join('; ');
}

/**
 * The contracts a gate's cases were checked against, in one line: contracts that differ only in
 * their ackBatchSize (the built-in queue's follows its settings) are one, with the range.
 */
export function describeContracts(counted: Readonly<Record<string, number>>): string {
  const groups = new Map<string, { min: number; max: number; c: Contract }>();
  for (const key of Object.keys(counted)) {
    const c = JSON.parse(key) as Contract;
    const rest = JSON.stringify({ ...c, replayBound: { ...c.replayBound, ackBatchSize: 0 } });
    const g = groups.get(rest);
    const n = c.replayBound.ackBatchSize;
    if (!g) groups.set(rest, { min: n, max: n, c });
    else [g.min, g.max] = [Math.min(g.min, n), Math.max(g.max, n)];
  }
  return [...groups.values()]
    .map((g) => describeContract(g.c).replace(/bounded replay \d+/, `bounded replay ${g.min === g.max ? g.min : `${g.min} to ${g.max} (by settings)`}`))
    .join(' | ');
}

/** A contract as a stable key (coverage counts the cases judged under each). */
export function contractKey(c: Contract): string {
  const { replayBound: { ackBatchSize, outOfOrderAcksDurable }, acksConfirmed, unconfirmedWrites, seqScope, deliveryOrder } = c;
  return JSON.stringify({ replayBound: { ackBatchSize, outOfOrderAcksDurable }, acksConfirmed, unconfirmedWrites, seqScope, deliveryOrder });
}
