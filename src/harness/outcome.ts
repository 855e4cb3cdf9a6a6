// The driver's stdout protocol: one JSON object per line, each printed synchronously before the
// driver's next filesystem call, so that at a power cut the lines are exactly what the queue had
// confirmed. Intent lines come before the call they announce.

export type Outcome =
  /** The queue opened (after recovery), with the durability state it reports. */
  | { t: 'open'; durableSeq: number; durableFirstUnackedSeq: number }
  | { t: 'write-intent'; id: number; size: number }
  | { t: 'written'; id: number; seq: number }
  /** onDurable fired: durableSeq or durableFirstUnackedSeq advanced. */
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
  /** The queue (or the driver) failed: where, the message, and the errno code if any. */
  | { t: 'error'; where: string; message: string; code?: string };

export type OutcomeKind = Outcome['t'];

/** Driver exit codes: distinct, so a harness never mistakes a failure for a finished workload. */
export const DRIVER_EXIT = { ok: 0, usage: 2, queueError: 3 } as const;

/**
 * Parses a driver's stdout. A last line without its newline was cut mid-print by SIGKILL: it was
 * never fully confirmed, so it is dropped. Any other unreadable line is an error naming its number.
 */
export function parseOutcomes(stdout: string, where: string): Outcome[] {
  const lines = stdout.split('\n');
  lines.pop(); // '' after the last newline, or an unfinished line
  return lines.map((line, i) => {
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      throw new Error(`${where}: line ${i + 1} is not JSON: ${line.slice(0, 200)}`);
    }
    if (typeof value !== 'object' || value === null || typeof (value as { t?: unknown }).t !== 'string') {
      throw new Error(`${where}: line ${i + 1} is not an outcome (no "t"): ${line.slice(0, 200)}`);
    }
    return value as Outcome;
  });
}
