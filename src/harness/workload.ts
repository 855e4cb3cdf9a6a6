// The workload model (pure): what a driver does to the queue, step by step, plus a reference
// model of what an uncut run must deliver. Event ids are assigned in step order (concurrent
// writers of one step in array order), so a workload always writes the same ids.
import { PAYLOAD_HEADER_BYTES } from './payload.js';

export const ACK_ORDERS = ['oldest', 'newest', 'every-other'] as const;
export type AckOrder = (typeof ACK_ORDERS)[number];

export type Step =
  /** One writer per size, all issued at once (concurrent writers); each waits for its own seq to be durable if asked. */
  | { op: 'write'; sizesBytes: number[]; waitDurable: boolean }
  /** Waits until the highest seq written so far is durable. */
  | { op: 'waitDurable' }
  /** Reads up to maxEvents; waits up to waitMs (default 0) for the first one. */
  | { op: 'read'; maxEvents: number; waitMs?: number }
  /** Acks up to `count` delivered, unacked events in one call, picked in `order`. */
  | { op: 'ack'; count: number; order: AckOrder }
  | { op: 'checkpoint' }
  /** Clean close, then open again. */
  | { op: 'reopen' }
  /**
   * Branches running their own step lists at the same time, e.g. producers and a consumer: writes
   * wait for durability while reads, acks and checkpoints run, and fsyncs are in flight while other
   * writers' records land. No reopen, no nesting.
   */
  | { op: 'concurrently'; branches: Step[][] };

/** Branches of one concurrently step. */
export const MAX_BRANCHES = 4;

/** Longest wait a read step may ask for. */
export const MAX_READ_WAIT_MS = 5_000;

export interface Workload {
  steps: Step[];
}

export const MAX_EVENT_BYTES = 1 << 20;

/** The workload with every write step's event sizes replaced by `f` of them (in every branch): how a target fits a workload to its settings. */
export function mapEventSizes(workload: Workload, f: (sizesBytes: number[]) => number[]): Workload {
  const map = (steps: Step[]): Step[] =>
    steps.map((s) => (s.op === 'write' ? { ...s, sizesBytes: f(s.sizesBytes) } : s.op === 'concurrently' ? { ...s, branches: s.branches.map(map) } : s));
  return { steps: map(workload.steps) };
}

/** Every event size the workload writes, in step order (branches one after another). */
export function eventSizes(workload: Workload): number[] {
  const sizes = (steps: Step[]): number[] => steps.flatMap((s) => (s.op === 'write' ? s.sizesBytes : s.op === 'concurrently' ? s.branches.flatMap(sizes) : []));
  return sizes(workload.steps);
}

/** Picks the seqs one ack step acks, from the delivered-unacked seqs (ascending). */
export function selectAcks(unackedSeqs: readonly number[], count: number, order: AckOrder): number[] {
  const n = Math.min(count, unackedSeqs.length);
  if (order === 'oldest') return unackedSeqs.slice(0, n);
  if (order === 'newest') return unackedSeqs.slice(unackedSeqs.length - n).reverse();
  const picked: number[] = [];
  for (let i = 0; i < unackedSeqs.length && picked.length < n; i += 2) picked.push(unackedSeqs[i]);
  return picked;
}

/** Whether the workload has a `concurrently` step (branches running at the same time). */
export function hasConcurrentSteps(workload: Workload): boolean {
  return workload.steps.some((s) => s.op === 'concurrently');
}

/** Whether the workload writes several events at once in one step (one writer per event, in any branch). */
export function writesAtOnce(workload: Workload): boolean {
  const any = (steps: Step[]): boolean => steps.some((s) => (s.op === 'write' ? s.sizesBytes.length > 1 : s.op === 'concurrently' && s.branches.some(any)));
  return any(workload.steps);
}

/** A stable key for caching per-workload facts (e.g. the request count of an uncut run). */
export function workloadKey(workload: Workload): string {
  return JSON.stringify(workload.steps);
}

/** Checks a workload read from a file or argv; the error names the step and field that is wrong. */
export function parseWorkload(value: unknown, where: string): Workload {
  const fail = (what: string): never => {
    throw new Error(`${where}: ${what}`);
  };
  if (typeof value !== 'object' || value === null || !Array.isArray((value as Workload).steps)) {
    fail('a workload is an object {"steps": [...]}');
  }
  const isCount = (x: unknown, min: number): x is number => Number.isInteger(x) && (x as number) >= min;
  const checkSteps = (steps: unknown, at0: string, nested: boolean): void => {
    if (!Array.isArray(steps)) fail(`${at0} must be an array of steps`);
    (steps as Step[]).forEach((step: Step, i) => checkStep(step, `${at0}[${i}]`, nested));
  };
  const checkStep = (step: Step, at: string, nested: boolean): void => {
    if (typeof step !== 'object' || step === null) fail(`${at} is not an object`);
    switch (step.op) {
      case 'write':
        if (!Array.isArray(step.sizesBytes) || step.sizesBytes.length === 0) fail(`${at}.sizesBytes must be a non-empty array`);
        step.sizesBytes.forEach((size, j) => {
          if (!isCount(size, PAYLOAD_HEADER_BYTES) || size > MAX_EVENT_BYTES) {
            fail(`${at}.sizesBytes[${j}] = ${JSON.stringify(size)}: must be an integer in ${PAYLOAD_HEADER_BYTES}..${MAX_EVENT_BYTES}`);
          }
        });
        if (typeof step.waitDurable !== 'boolean') fail(`${at}.waitDurable must be true or false`);
        break;
      case 'read':
        if (!isCount(step.maxEvents, 1)) fail(`${at}.maxEvents must be an integer >= 1`);
        if (step.waitMs !== undefined && (!isCount(step.waitMs, 0) || step.waitMs > MAX_READ_WAIT_MS)) fail(`${at}.waitMs must be an integer in 0..${MAX_READ_WAIT_MS}`);
        break;
      case 'ack':
        if (!isCount(step.count, 1)) fail(`${at}.count must be an integer >= 1`);
        if (!ACK_ORDERS.includes(step.order)) fail(`${at}.order must be one of ${ACK_ORDERS.join(', ')}`);
        break;
      case 'waitDurable':
      case 'checkpoint':
        break;
      case 'reopen':
        if (nested) fail(`${at}: reopen cannot run inside concurrently (it would close the queue under the other branch)`);
        break;
      case 'concurrently':
        if (nested) fail(`${at}: concurrently cannot be nested`);
        if (!Array.isArray(step.branches) || step.branches.length < 2 || step.branches.length > MAX_BRANCHES) fail(`${at}.branches must be an array of 2 to ${MAX_BRANCHES} step lists`);
        step.branches.forEach((b, j) => checkSteps(b, `${at}.branches[${j}]`, true));
        break;
      default:
        fail(`${at}.op = ${JSON.stringify((step as { op: unknown }).op)}: must be one of write, waitDurable, read, ack, checkpoint, reopen, concurrently`);
    }
  };
  checkSteps((value as Workload).steps, 'steps', false);
  return { steps: (value as Workload).steps };
}

/** What an uncut run delivers, read by read, if seqs follow write order (reference model). */
export interface UncutExpectation {
  /** Seqs delivered by each read step, in step order. */
  reads: number[][];
  /** Seqs acked by each ack step. */
  acks: number[][];
  lastSeq: number;
}

export function expectUncut(workload: Workload): UncutExpectation {
  if (workload.steps.some((s) => s.op === 'concurrently')) throw new Error('expectUncut: a workload with concurrent steps has no single expected outcome');
  let lastSeq = 0;
  let nextUnread = 1; // next seq a read delivers
  const acked = new Set<number>();
  let delivered: number[] = []; // delivered and unacked, ascending
  const reads: number[][] = [];
  const acks: number[][] = [];
  for (const step of workload.steps) {
    if (step.op === 'write') lastSeq += step.sizesBytes.length;
    else if (step.op === 'read') {
      const got: number[] = [];
      while (got.length < step.maxEvents && nextUnread <= lastSeq) {
        if (!acked.has(nextUnread)) got.push(nextUnread);
        nextUnread++;
      }
      delivered.push(...got);
      reads.push(got);
    } else if (step.op === 'ack') {
      const picked = selectAcks(delivered, step.count, step.order);
      picked.forEach((s) => acked.add(s));
      delivered = delivered.filter((s) => !acked.has(s));
      acks.push(picked);
    } else if (step.op === 'reopen') {
      // A clean close keeps the acked prefix only (the queue persists one first-unacked seq):
      // acks above a gap are forgotten, and everything not in the prefix is delivered again.
      let firstUnacked = 1;
      while (acked.has(firstUnacked)) firstUnacked++;
      for (const s of [...acked]) if (s > firstUnacked) acked.delete(s);
      delivered = [];
      nextUnread = firstUnacked;
    }
  }
  return { reads, acks, lastSeq };
}
