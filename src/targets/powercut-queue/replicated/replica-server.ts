// One node of the replicated queue: node dist/src/targets/powercut-queue/replicated/replica-server.js DIR
// SETTINGS_JSON. The built-in queue opened (recovered) in DIR, served to the driver over this
// process's stdin and stdout, one JSON object per line (replica-protocol.ts). Its own process (and
// process group), so the harness can cut one node's power while the others run. It waits for the
// driver's 'start' line before it touches DIR: the driver sends it once the node's line is printed.
import { createInterface } from 'node:readline';
import { openQueue } from '../../../queue/index.js';
import type { QueueSettings } from '../../../queue/types.js';
import { parseReplicaRequest, START_LINE, type ReplicaMessage, type ReplicaRequest } from './replica-protocol.js';

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
  const queue = await openQueue(dir, JSON.parse(settingsJson) as Partial<QueueSettings>);
  send({ t: 'ready', ...queue.durability() });
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
    // Requests run as they come (a write waits for space while an ack frees it); the queue orders them.
    serve(req).then(
      (m) => {
        send(m);
        if (req.op === 'close') process.exit(0);
      },
      (err: unknown) => {
        const e = err as NodeJS.ErrnoException;
        send({ t: 'reply', id: req.id, error: e?.message ?? String(err), ...(e?.code ? { code: String(e.code) } : {}) });
      },
    );
  }
  // The driver is gone (killed at a cut): so is this node's program.
  process.exit(0);
}

main().catch((err: unknown) => {
  process.stderr.write(`replica-server: ${err instanceof Error ? err.message : String(err)}\n`);
  send({ t: 'failed', message: err instanceof Error ? err.message : String(err) });
  process.exit(1);
});
