// What this machine needs for the nats-jetstream target: nats-server on the PATH (Debian's package
// nats-server is 2.9.10). Kept apart from the driver's code so the CLI never loads the NATS client.
import { accessSync, constants } from 'node:fs';
import path from 'node:path';

export const NATS_SERVER_BINARY = 'nats-server';

/** The executable `name` on the PATH, or undefined. */
export function onPath(name: string): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    if (dir === '') continue;
    const file = path.join(dir, name);
    try {
      accessSync(file, constants.X_OK);
      return file;
    } catch {
      /* not here */
    }
  }
  return undefined;
}

/** Throws, naming the package and the command that installs it, when nats-server is not on the PATH. */
export function checkNatsEnvironment(): void {
  if (onPath(NATS_SERVER_BINARY)) return;
  const sudo = process.getuid?.() === 0 ? '' : 'sudo ';
  throw new Error(`${NATS_SERVER_BINARY} is missing (package nats-server): ${sudo}apt-get install -y nats-server`);
}
