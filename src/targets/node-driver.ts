// The driver side of the driver protocol (docs/driver-protocol.md) for targets written in Node:
// reads specs from stdin (one JSON line each; a driver serves them in turn until stdin closes),
// runs the workload or the drain against a queue, and prints one outcome line per confirmation,
// synchronously, BEFORE its next queue call. With `mark` in the spec it also stats
// `<mark>/<line number>` right after printing each line, so the filesystem's request trace shows
// where each confirmation happened. A target supplies only how to open its queue and its contract.
import { statSync, writeSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { DRAIN_BATCH_EVENTS, LIVENESS_READ_TIMEOUT_MS, LIVENESS_SIZES_BYTES, parseDriverSpec, type DriverSpec, type RestartCommand } from '../harness/driver-spec.js';
import { DRIVER_EXIT, DRIVER_PROTOCOL_VERSION, type ContractDeclaration, type Outcome } from '../harness/outcome.js';
import { payload, summarizePayload } from '../harness/payload.js';
import { selectAcks, type Step } from '../harness/workload.js';

/** What the driver needs of a queue: the shape of the built-in queue's API. */
export interface DrivenQueue {
  write(data: Buffer): Promise<number>;
  waitDurable(seq: number): Promise<void>;
  readBatch(maxEvents: number, timeoutMs: number): Promise<{ seq: number; data: Buffer }[]>;
  ack(seqs: readonly number[]): Promise<void>;
  checkpoint(): Promise<void>;
  durability(): { durableSeq: number; durableFirstUnackedSeq: number };
  onDurable(listener: (state: { durableSeq: number; durableFirstUnackedSeq: number }) => void): () => void;
  close(): Promise<void>;
  /** A cluster's queue: restart node k's server on its crashed disk (the harness cut its power), then print its node line. */
  restartNode?(node: number): Promise<void>;
}

export interface NodeTargetDriver {
  target: string;
  /**
   * Opens (or recovers) the queue in spec.dir (a cluster's: spec.nodes) with spec.settings (and
   * spec.variant, if the target has variants); `emit` prints a line (a cluster's node lines).
   */
  open(spec: DriverSpec, emit: (o: Outcome) => void): Promise<DrivenQueue>;
  /** What the queue promises with these settings (docs/driver-protocol.md, "The contract"), for the hello line. */
  contract(settings: Record<string, unknown>): ContractDeclaration;
  /** The largest event the queue accepts with these settings (liveness writes are cut to fit). */
  maxEventBytes(settings: Record<string, unknown>): number;
}

class Emitter {
  private lines = 0;
  constructor(private readonly mark: string | undefined) {}

  emit(outcome: Outcome): void {
    const line = Buffer.from(JSON.stringify(outcome) + '\n');
    let written = 0;
    while (written < line.length) {
      try {
        written += writeSync(1, line, written);
      } catch (err) {
        // A non-blocking stdout pipe that is full: wait for the reader rather than lose a line.
        if ((err as NodeJS.ErrnoException).code !== 'EAGAIN') throw err;
      }
    }
    this.lines++;
    // The marker: a lookup the daemon records in its trace and answers ENOENT; it never changes the filesystem.
    if (this.mark !== undefined) statSync(`${this.mark}/${this.lines}`, { throwIfNoEntry: false });
  }
}

class Run {
  queue: DrivenQueue | null = null;
  private unsubscribe: () => void = () => {};
  private nextId: number;
  private lastSeq = 0;
  /** Delivered in this session and not acked, ascending. */
  private unacked: number[] = [];
  where = 'open';

  constructor(private readonly t: NodeTargetDriver, private readonly spec: DriverSpec, private readonly out: Emitter) {
    this.nextId = spec.idBase;
  }

  private emit(o: Outcome): void {
    this.out.emit(o);
  }

  /** Restarts asked for while the queue opened (a node cut during its open): carried out once it is open. */
  private pendingRestarts: number[] = [];
  private opening = false;

  async open(): Promise<void> {
    this.where = 'open';
    this.opening = true;
    try {
      this.queue = await this.t.open(this.spec, (o) => this.emit(o));
    } finally {
      this.opening = false;
    }
    this.emit({ t: 'open', ...this.queue!.durability() });
    this.unsubscribe = this.queue!.onDurable((state) => this.emit({ t: 'durable', ...state }));
    this.unacked = [];
    for (const node of this.pendingRestarts.splice(0)) this.restart(node);
  }

  async close(): Promise<void> {
    this.where = 'close';
    this.emit({ t: 'close-intent' });
    this.unsubscribe();
    await this.queue!.close();
    this.queue = null;
    this.emit({ t: 'closed' });
  }

  /**
   * The harness's {"cmd":"restart","node":k}: the queue restarts node k and prints its node line.
   * A failed restart is an error line and exit 3, like any failure of the queue.
   */
  restart(node: number): void {
    if (this.opening) {
      this.pendingRestarts.push(node);
      return;
    }
    const queue = this.queue;
    // The run it was meant for is closed (the queue waits for restarts before it closes, so only a harness that asked too late gets here).
    if (!queue) {
      process.stderr.write(`driver: restart of node ${node} asked for while no queue is open; ignored\n`);
      return;
    }
    if (!queue.restartNode) throw new UsageError(`restart of node ${node} asked for, but this target does not run a cluster`);
    queue.restartNode(node).catch((err: unknown) => {
      this.emit(errorLine(`restart of node ${node}`, err));
      process.exit(DRIVER_EXIT.queueError);
    });
  }

  private async writeOne(sizeBytes: number, waitDurable: boolean): Promise<number> {
    const id = ++this.nextId;
    const data = payload(id, sizeBytes);
    this.emit({ t: 'write-intent', id, size: sizeBytes });
    const seq = await this.queue!.write(data);
    this.emit({ t: 'written', id, seq });
    this.lastSeq = Math.max(this.lastSeq, seq);
    if (waitDurable) {
      await this.queue!.waitDurable(seq);
      this.emit({ t: 'waited', seq });
    }
    return seq;
  }

  async writeConcurrently(sizesBytes: readonly number[], waitDurable: boolean): Promise<number[]> {
    // All calls are issued before any resolves: concurrent writers sharing one queue.
    return Promise.all(sizesBytes.map((size) => this.writeOne(size, waitDurable)));
  }

  async read(maxEvents: number, timeoutMs: number): Promise<number> {
    const events = await this.queue!.readBatch(maxEvents, timeoutMs);
    for (const e of events) {
      const s = summarizePayload(e.data);
      this.emit({ t: 'delivered', seq: e.seq, id: s.id, size: s.sizeBytes, crc: s.crc });
      this.unacked.push(e.seq);
    }
    this.unacked.sort((a, b) => a - b);
    return events.length;
  }

  async ack(seqs: number[]): Promise<void> {
    if (seqs.length === 0) return;
    // Taken off before the call: a concurrent ack step must not ack the same seqs again.
    const picked = new Set(seqs);
    this.unacked = this.unacked.filter((s) => !picked.has(s));
    this.emit({ t: 'ack-intent', seqs });
    await this.queue!.ack(seqs);
    this.emit({ t: 'acked', seqs });
  }

  async steps(steps: readonly Step[], where: string): Promise<void> {
    for (let i = 0; i < steps.length; i++) {
      this.where = `${where}[${i}] (${steps[i].op})`;
      await this.step(steps[i], `${where}[${i}]`);
    }
  }

  async step(step: Step, where: string): Promise<void> {
    switch (step.op) {
      case 'write':
        await this.writeConcurrently(step.sizesBytes, step.waitDurable);
        return;
      case 'waitDurable': {
        if (this.lastSeq === 0) return;
        const seq = this.lastSeq;
        await this.queue!.waitDurable(seq);
        this.emit({ t: 'waited', seq });
        return;
      }
      case 'read':
        await this.read(step.maxEvents, step.waitMs ?? 0);
        return;
      case 'ack':
        await this.ack(selectAcks(this.unacked, step.count, step.order));
        return;
      case 'checkpoint':
        this.emit({ t: 'checkpoint-intent' });
        await this.queue!.checkpoint();
        this.emit({ t: 'checkpointed' });
        return;
      case 'reopen':
        await this.close();
        await this.open();
        return;
      case 'concurrently':
        // Producers and a consumer at once: writes wait for durability while reads, acks and
        // checkpoints run, and fsyncs are in flight while other writers' records land.
        await Promise.all(step.branches.map((b, j) => this.steps(b, `${where}.branches[${j}]`)));
        return;
    }
  }

  async workload(): Promise<void> {
    await this.open();
    await this.steps(this.spec.workload?.steps ?? [], 'steps');
    await this.close();
  }

  async drain(): Promise<void> {
    await this.open();
    this.where = 'drain';
    let count = 0;
    for (;;) {
      const n = await this.read(DRAIN_BATCH_EVENTS, 0);
      if (n === 0) break;
      count += n;
      await this.ack([...this.unacked]);
    }
    this.emit({ t: 'drained', count });
    // Liveness: the recovered queue accepts new writes and delivers them.
    this.where = 'liveness write';
    const fit = this.t.maxEventBytes(this.spec.settings);
    const seqs = await this.writeConcurrently(LIVENESS_SIZES_BYTES.map((n) => Math.min(n, fit)), false);
    await this.queue!.waitDurable(Math.max(...seqs));
    this.emit({ t: 'waited', seq: Math.max(...seqs) });
    this.where = 'liveness read';
    const deadline = Date.now() + LIVENESS_READ_TIMEOUT_MS;
    let got = 0;
    while (got < seqs.length && Date.now() < deadline) got += await this.read(DRAIN_BATCH_EVENTS, Math.max(1, deadline - Date.now()));
    await this.ack([...this.unacked]);
    await this.close();
  }
}

/** A command the driver cannot carry out (exit 2). */
class UsageError extends Error {}

/** The error line of a failure at `where`. */
function errorLine(where: string, err: unknown): Outcome {
  const e = err as NodeJS.ErrnoException;
  return { t: 'error', where, message: e?.message ?? String(err), ...(e?.code ? { code: String(e.code) } : {}) };
}

/** Runs one spec; true if it ended with `done`, false with an `error` line. `current` is the run, for commands arriving meanwhile. */
async function runSpec(t: NodeTargetDriver, spec: DriverSpec, current: { run: Run | null; out: Emitter | null }): Promise<boolean> {
  const out = new Emitter(spec.mark);
  out.emit({ t: 'hello', protocol: DRIVER_PROTOCOL_VERSION, target: t.target, contract: t.contract(spec.settings), serves: true });
  const run = new Run(t, spec, out);
  Object.assign(current, { run, out });
  try {
    if (spec.mode === 'workload') await run.workload();
    else await run.drain();
  } catch (err) {
    out.emit(errorLine(run.where, err));
    return false;
  } finally {
    Object.assign(current, { run: null, out: null });
  }
  out.emit({ t: 'done' });
  return true;
}

/**
 * The driver's main loop: one spec per stdin line, served in turn, and a cluster's commands
 * ({"cmd":"restart","node":k}) carried out as they come, during the spec they belong to. Exits 0
 * when stdin closes after only successful specs, 3 right after an error line (in-flight calls must
 * not print more), 2 for a line it cannot read.
 */
export function runNodeDriver(t: NodeTargetDriver): void {
  const main = async (): Promise<number> => {
    const current: { run: Run | null; out: Emitter | null } = { run: null, out: null };
    let failed: number | null = null;
    const specs: DriverSpec[] = [];
    let closed = false;
    let wake: () => void = () => {};
    const fail = (code: number, message: string) => {
      process.stderr.write(`driver: ${message}\n`);
      failed ??= code;
      wake();
    };
    const lines = createInterface({ input: process.stdin, crlfDelay: Infinity });
    lines.on('line', (line) => {
      if (line.trim() === '') return;
      if (/^\s*\{\s*"cmd"/.test(line)) {
        let cmd: RestartCommand;
        try {
          cmd = JSON.parse(line) as RestartCommand;
          if (cmd.cmd !== 'restart' || !Number.isInteger(cmd.node)) throw new Error(`unknown command ${line.slice(0, 200)} (known: {"cmd":"restart","node":k})`);
        } catch (err) {
          return fail(DRIVER_EXIT.usage, `command on stdin: ${(err as Error).message}`);
        }
        // Between specs: the run it was meant for ended (the next run opens every node anyway).
        if (!current.run) {
          process.stderr.write(`driver: restart of node ${cmd.node} asked for between specs; ignored\n`);
          return;
        }
        try {
          current.run.restart(cmd.node);
        } catch (err) {
          if (!(err instanceof UsageError)) throw err;
          return fail(DRIVER_EXIT.usage, err.message);
        }
        return;
      }
      try {
        specs.push(parseDriverSpec(line, 'driver spec on stdin'));
      } catch (err) {
        return fail(DRIVER_EXIT.usage, (err as Error).message);
      }
      wake();
    });
    lines.on('close', () => {
      closed = true;
      wake();
    });
    for (;;) {
      if (failed !== null) return failed;
      const spec = specs.shift();
      if (spec) {
        if (!(await runSpec(t, spec, current))) return DRIVER_EXIT.queueError;
        continue;
      }
      if (closed) return DRIVER_EXIT.ok;
      await new Promise<void>((r) => (wake = r));
    }
  };
  main().then(
    (code) => process.exit(code),
    (err: unknown) => {
      process.stderr.write(`driver: internal error: ${err instanceof Error ? err.stack : String(err)}\n`);
      process.exit(1);
    },
  );
}
