// The workload driver: its own process, so the harness can SIGKILL it at a power cut.
//   node dist/src/harness/driver.js < spec.json      (spec: see driver-spec.ts)
// Every outcome is one JSON line written with fs.writeSync BEFORE the next queue call, so at a
// cut the printed lines are exactly what the queue had confirmed (see outcome.ts).
import { readFileSync, writeSync } from 'node:fs';
import { openQueue } from '../queue/index.js';
import type { PersistentQueue, QueueSettings } from '../queue/types.js';
import { DRAIN_BATCH_EVENTS, LIVENESS_READ_TIMEOUT_MS, LIVENESS_SIZES_BYTES, parseDriverSpec, type DriverSpec } from './driver-spec.js';
import { DRIVER_EXIT, type Outcome } from './outcome.js';
import { payload, summarizePayload } from './payload.js';
import { maxEventBytes, selectAcks, type Step } from './workload.js';

function emit(outcome: Outcome): void {
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
}

async function openFor(spec: DriverSpec): Promise<PersistentQueue> {
  const settings = spec.settings as Partial<QueueSettings>;
  if (spec.variant === undefined) return openQueue(spec.dir, settings);
  // Loaded only when asked for: production runs never import the known-bad variants.
  const variants = await import('../../properties/variants/index.js');
  return variants.openQueueVariant(spec.variant, spec.dir, settings);
}

class Driver {
  private queue!: PersistentQueue;
  private unsubscribe: () => void = () => {};
  private nextId: number;
  private lastSeq = 0;
  /** Delivered in this session and not acked, ascending. */
  private unacked: number[] = [];
  where = 'open';

  constructor(private readonly spec: DriverSpec) {
    this.nextId = spec.idBase;
  }

  async open(): Promise<void> {
    this.where = 'open';
    this.queue = await openFor(this.spec);
    emit({ t: 'open', ...this.queue.durability() });
    this.unsubscribe = this.queue.onDurable((state) => emit({ t: 'durable', ...state }));
    this.unacked = [];
  }

  async close(): Promise<void> {
    this.where = 'close';
    emit({ t: 'close-intent' });
    this.unsubscribe();
    await this.queue.close();
    emit({ t: 'closed' });
  }

  private async writeOne(sizeBytes: number, waitDurable: boolean): Promise<number> {
    const id = ++this.nextId;
    const data = payload(id, sizeBytes);
    emit({ t: 'write-intent', id, size: sizeBytes });
    const seq = await this.queue.write(data);
    emit({ t: 'written', id, seq });
    this.lastSeq = Math.max(this.lastSeq, seq);
    if (waitDurable) {
      await this.queue.waitDurable(seq);
      emit({ t: 'waited', seq });
    }
    return seq;
  }

  async writeConcurrently(sizesBytes: readonly number[], waitDurable: boolean): Promise<number[]> {
    // All calls are issued before any resolves: concurrent writers sharing one queue.
    return Promise.all(sizesBytes.map((size) => this.writeOne(size, waitDurable)));
  }

  async read(maxEvents: number, timeoutMs: number): Promise<number> {
    const events = await this.queue.readBatch(maxEvents, timeoutMs);
    for (const e of events) {
      const s = summarizePayload(e.data);
      emit({ t: 'delivered', seq: e.seq, id: s.id, size: s.sizeBytes, crc: s.crc });
      this.unacked.push(e.seq);
    }
    this.unacked.sort((a, b) => a - b);
    return events.length;
  }

  async ack(seqs: number[]): Promise<void> {
    if (seqs.length === 0) return;
    emit({ t: 'ack-intent', seqs });
    await this.queue.ack(seqs);
    emit({ t: 'acked', seqs });
    const done = new Set(seqs);
    this.unacked = this.unacked.filter((s) => !done.has(s));
  }

  async step(step: Step): Promise<void> {
    switch (step.op) {
      case 'write':
        await this.writeConcurrently(step.sizesBytes, step.waitDurable);
        return;
      case 'waitDurable':
        if (this.lastSeq === 0) return;
        await this.queue.waitDurable(this.lastSeq);
        emit({ t: 'waited', seq: this.lastSeq });
        return;
      case 'read':
        await this.read(step.maxEvents, 0);
        return;
      case 'ack':
        await this.ack(selectAcks(this.unacked, step.count, step.order));
        return;
      case 'checkpoint':
        emit({ t: 'checkpoint-intent' });
        await this.queue.checkpoint();
        emit({ t: 'checkpointed' });
        return;
      case 'reopen':
        await this.close();
        await this.open();
        return;
    }
  }

  async runWorkload(): Promise<void> {
    await this.open();
    const steps = this.spec.workload?.steps ?? [];
    for (let i = 0; i < steps.length; i++) {
      this.where = `steps[${i}] (${steps[i].op})`;
      await this.step(steps[i]);
    }
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
    emit({ t: 'drained', count });
    // Liveness: the recovered queue accepts new writes and delivers them.
    this.where = 'liveness write';
    const fit = maxEventBytes(this.queue.settings.pageCapacityBytes);
    const seqs = await this.writeConcurrently(LIVENESS_SIZES_BYTES.map((n) => Math.min(n, fit)), false);
    await this.queue.waitDurable(Math.max(...seqs));
    emit({ t: 'waited', seq: Math.max(...seqs) });
    this.where = 'liveness read';
    const deadline = Date.now() + LIVENESS_READ_TIMEOUT_MS;
    let got = 0;
    while (got < seqs.length && Date.now() < deadline) got += await this.read(DRAIN_BATCH_EVENTS, Math.max(1, deadline - Date.now()));
    await this.ack([...this.unacked]);
    await this.close();
  }
}

async function main(): Promise<number> {
  let spec: DriverSpec;
  try {
    spec = parseDriverSpec(readFileSync(0, 'utf8'), 'driver spec on stdin');
  } catch (err) {
    process.stderr.write(`driver: ${(err as Error).message}\n`);
    return DRIVER_EXIT.usage;
  }
  const driver = new Driver(spec);
  try {
    if (spec.mode === 'workload') await driver.runWorkload();
    else await driver.drain();
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    emit({ t: 'error', where: driver.where, message: e?.message ?? String(err), ...(e?.code ? { code: String(e.code) } : {}) });
    return DRIVER_EXIT.queueError;
  }
  emit({ t: 'done' });
  return DRIVER_EXIT.ok;
}

main().then(
  (code) => process.exit(code), // exit at once: in-flight concurrent calls after an error must not print more
  (err: unknown) => {
    process.stderr.write(`driver: internal error: ${err instanceof Error ? err.stack : String(err)}\n`);
    process.exit(1);
  },
);
