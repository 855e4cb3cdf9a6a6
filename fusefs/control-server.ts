// The control socket: one JSON object per line each way; every line gets exactly one answer, and
// malformed input gets {"ok":false,"error":...} without taking the daemon down.
import { createServer, type Server, type Socket } from 'node:net';
import { chmod, rm } from 'node:fs/promises';
import { parseRequest } from './control-validate.js';
import type { ControlAnswer, ControlRequest } from './protocol.js';

const MAX_LINE_BYTES = 1 << 20;

export type Handler = (req: ControlRequest) => Promise<ControlAnswer>;

export async function listenControl(socketPath: string, handler: Handler): Promise<Server> {
  await rm(socketPath, { force: true }); // a socket file left by a killed daemon
  const server = createServer((sock) => serveConnection(sock, handler));
  await new Promise<void>((resolve, reject) => {
    server.once('error', (e: NodeJS.ErrnoException) => reject(new Error(`cannot listen on control socket ${socketPath}: ${e.code ?? e.message}`)));
    server.listen(socketPath, () => resolve());
  });
  await chmod(socketPath, 0o600);
  return server;
}

async function answer(line: string, handler: Handler): Promise<ControlAnswer> {
  let req: ControlRequest;
  try {
    req = parseRequest(line);
  } catch (e) {
    return { ok: false, error: (e as Error).message };
  }
  try {
    return await handler(req);
  } catch (e) {
    return { ok: false, error: `${req.cmd}: ${(e as Error).message}` };
  }
}

function serveConnection(sock: Socket, handler: Handler): void {
  let pending = '';
  // Answers go out in request order, one request at a time per connection.
  let queue: Promise<void> = Promise.resolve();
  sock.setEncoding('utf8');
  sock.on('error', () => sock.destroy());
  sock.on('data', (chunk: string) => {
    pending += chunk;
    if (pending.length > MAX_LINE_BYTES && !pending.includes('\n')) {
      pending = '';
      sock.end(JSON.stringify({ ok: false, error: `request line longer than ${MAX_LINE_BYTES} bytes` }) + '\n');
      return;
    }
    let nl: number;
    while ((nl = pending.indexOf('\n')) >= 0) {
      const line = pending.slice(0, nl).trim();
      pending = pending.slice(nl + 1);
      if (line === '') continue;
      queue = queue.then(async () => {
        const a = await answer(line, handler);
        if (!sock.destroyed) sock.write(JSON.stringify(a) + '\n');
      });
    }
  });
}
