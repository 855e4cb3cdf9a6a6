// One node of the replicated queue: node dist/src/targets/powercut-queue/replicated/replica-server.js DIR
// SETTINGS_JSON. The built-in queue opened (recovered) in DIR, served to the driver over this
// process's stdin and stdout, one JSON object per line (replica-protocol.ts). Its own process (and
// process group), so the harness can cut one node's power while the others run. It waits for the
// driver's 'start' line before it touches DIR: the driver sends it once the node's line is printed.
// It applies requests one at a time, in the order they arrive: the primary's order. Backpressure is
// off here (the primary admits a write only when it fits), so no request waits for a later one.
import { createInterface } from 'node:readline';
import { Queue } from '../../../queue/index.js';
import type { QueueSettings } from '../../../queue/types.js';
import { parseReplicaRequest, START_LINE, type ReplicaMessage, type ReplicaRequest } from './replica-protocol.js';

/** The settings that turn backpressure off: admission is the primary's (replicated-queue.ts). */
const NO_BACKPRESSURE: Partial<QueueSettings> = { maxBytes: Number.MAX_SAFE_INTEGER, maxEvents: 0, writeTimeoutMs: 0 };

function send(m: ReplicaMessage): void {
  process.stdout.write(JSON.stringify(m) + '\n');
}

async function main(): Promise<void> {
  const [dir, settingsJson] = process.argv.slice(2);
  if (!dir || !settingsJson) throw new Error('usage: replica-server.js DIR SETTINGS_JSON');
  const lines = createInterface({ input: process.stdin, crlfDelay: Infinity })[Symbol.asyncIterator]();
  // Nothing touches the disk before the driver printed this node's line and said start.
  const start = await lines.next();
  if (start.done) process.exit(0);
  if (start.value.trim() !== START_LINE) throw new Error(`the first line on stdin must be '${START_LINE}', got ${JSON.stringify(start.value.slice(0, 100))}`);
  const settings = JSON.parse(settingsJson) as Partial<QueueSettings>;
  // A write never waits for space here: one waiting in line would hold the ack that frees it.
  const queue = await Queue.open(dir, { ...settings, ...NO_BACKPRESSURE });
  send({ t: 'ready', ...queue.durability(), ...queue.backlog() });
  queue.onDurable((state) => send({ t: 'durable', ...state }));
  const serve = async (req: ReplicaRequest): Promise<ReplicaMessage> => {
    switch (req.op) {
      case 'write': {
        const seq = await queue.write(Buffer.from(req.data, 'base64'));
        // Each node makes what it is given durable at once, and says so ('durable'); a sync that
        // fails leaves its durable seq behind, which the primary counts against a majority.
        queue.waitDurable(seq).catch((err: unknown) => process.stderr.write(`replica-server: waitDurable(${seq}): ${err instanceof Error ? err.message : String(err)}\n`));
        return { t: 'reply', id: req.id, seq };
      }
      case 'read': {
        const events = await queue.readBatch(req.maxEvents, 0);
        return { t: 'reply', id: req.id, events: events.map((e) => ({ seq: e.seq, data: e.data.toString('base64') })) };
      }
      case 'ack':
        await queue.ack(req.seqs);
        return { t: 'reply', id: req.id };
      case 'checkpoint':
        await queue.checkpoint();
        return { t: 'reply', id: req.id };
      case 'close':
        await queue.close();
        return { t: 'reply', id: req.id };
    }
  };
  for (let next = await lines.next(); !next.done; next = await lines.next()) {
    const line = next.value;
    if (line.trim() === '') continue;
    const req = parseReplicaRequest(line);
    // One at a time, in the primary's order: every node orders a read against a write the same way.
    try {
      send(await serve(req));
      if (req.op === 'close') process.exit(0);
    } catch (err) {
      const e = err as NodeJS.ErrnoException;
      send({ t: 'reply', id: req.id, error: e?.message ?? String(err), ...(e?.code ? { code: String(e.code) } : {}) });
    }
  }
  // The driver is gone (killed at a cut): so is this node's program.
  process.exit(0);
}

main().catch((err: unknown) => {
  process.stderr.write(`replica-server: ${err instanceof Error ? err.message : String(err)}\n`);
  send({ t: 'failed', message: err instanceof Error ? err.message : String(err) });
  process.exit(1);
});
