// One node of the replicated queue: node dist/src/targets/powercut-queue/replicated/replica-server.js DIR
// SETTINGS_JSON. The built-in queue opened (recovered) in DIR, served to the driver over this
// process's stdin and stdout, one JSON object per line (replica-protocol.ts). Its own process (and
// process group), so the harness can cut one node's power while the others run. It waits for the
// driver's 'start' line before it touches DIR: the driver sends it once the node's line is printed.
// It applies requests one at a time, in the order they arrive: the primary's order. Backpressure is
// off here (the primary admits a write only when it fits), so no request waits for a later one.
import { createInterface } from 'node:readline';
import { parseReplicaRequest, START_LINE, type ReplicaMessage } from './replica-protocol.js';
import { openReplicaQueue, serveReplicaRequest } from './replica-service.js';

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
  const queue = await openReplicaQueue(dir, JSON.parse(settingsJson) as Record<string, unknown>);
  send({ t: 'ready', ...queue.durability(), ...queue.backlog() });
  queue.onDurable((state) => send({ t: 'durable', ...state }));
  const warn = (message: string) => process.stderr.write(`replica-server: ${message}\n`);
  for (let next = await lines.next(); !next.done; next = await lines.next()) {
    const line = next.value;
    if (line.trim() === '') continue;
    const req = parseReplicaRequest(line);
    // One at a time, in the primary's order: every node orders a read against a write the same way.
    send(await serveReplicaRequest(queue, req, warn));
    if (req.op === 'close') process.exit(0);
  }
  // The driver is gone (killed at a cut): so is this node's program.
  process.exit(0);
}

main().catch((err: unknown) => {
  process.stderr.write(`replica-server: ${err instanceof Error ? err.message : String(err)}\n`);
  send({ t: 'failed', message: err instanceof Error ? err.message : String(err) });
  process.exit(1);
});
