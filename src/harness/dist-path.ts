// Spawned processes run compiled code from dist/, also when the caller is a TS source under vitest.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import path from 'node:path';

const here = path.dirname(fileURLToPath(import.meta.url));
/** The repository root, whether this module runs from src/harness or dist/src/harness. */
export const REPO_ROOT = here.includes(`${path.sep}dist${path.sep}`)
  ? path.resolve(here.slice(0, here.lastIndexOf(`${path.sep}dist${path.sep}`)))
  : path.resolve(here, '..', '..');

/** Absolute path of a compiled entry point, e.g. distPath('src/harness/driver.js'); throws if not built. */
export function distPath(relative: string): string {
  const file = path.join(REPO_ROOT, 'dist', relative);
  if (!existsSync(file)) throw new Error(`${file} is missing: build first (npm run build)`);
  return file;
}

/**
 * The environment of this project's own node processes (built-in drivers, replica servers, the
 * daemon), as changes to the inherited one. They open no TLS connection, yet NODE_EXTRA_CA_CERTS
 * makes every node process parse the CA bundle as it starts: 40 of the 67 ms a start took on the
 * 2-core machine, and a random-mode case starts two drivers. A user's driver keeps the user's
 * environment whole.
 */
export const OWN_NODE_ENV: Readonly<Record<string, string | undefined>> = { NODE_EXTRA_CA_CERTS: undefined };

/** The command that runs one of this project's compiled node entry points, in OWN_NODE_ENV. */
export function ownNodeCommand(relative: string, ...args: string[]): { file: string; args: string[]; env: Readonly<Record<string, string | undefined>> } {
  return { file: process.execPath, args: [distPath(relative), ...args], env: OWN_NODE_ENV };
}
