// The control client's errors: a request the daemon never answers says which request, how long it
// waited, and, for the requests whose work grows with the recorded run, why and what lowers it.
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ControlClient } from './control-client.js';

const dir = mkdtempSync(path.join(os.tmpdir(), 'powercut-control-client-'));
const servers: Server[] = [];
afterAll(() => {
  for (const s of servers) s.close();
  rmSync(dir, { recursive: true, force: true });
});

/** A daemon that takes requests and never answers. */
async function silentDaemon(): Promise<string> {
  const socketPath = path.join(dir, `s${servers.length}.sock`);
  const server = createServer((sock) => sock.on('data', () => undefined));
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(socketPath, resolve));
  return socketPath;
}

describe('ControlClient', () => {
  it('a states request without an answer names its cost and the gate options that cap it', async () => {
    const client = await ControlClient.connect(await silentDaemon());
    await expect(client.request({ cmd: 'states', policies: ['lose-unsynced'] } as never, 50)).rejects.toThrow(
      /control request 'states' got no answer within 50 ms: the daemon replays the recorded run .* --max-states, --max-states-per-interval and --sector-patterns/,
    );
  });

  it('a status request without an answer says only that', async () => {
    const client = await ControlClient.connect(await silentDaemon());
    await expect(client.request({ cmd: 'status' }, 50)).rejects.toThrow(/^control request 'status' got no answer within 50 ms$/);
  });
});
