// Folders a driver's processes run in: the mounts' folder, the recovery slots' copies of a disk, a
// replay's. mkdtemp makes them 0700, which only their owner may pass through; a server that runs as
// a user of its own (PostgreSQL refuses root) could then not reach the `dir` it is given below
// them. 0711: every user may pass through to a path it knows, none may list the folder; what lies
// below keeps its own modes (a mount: default_permissions; a copy: the disk's modes and owners).
import { chmod, mkdtemp } from 'node:fs/promises';

/** A new folder `prefix`XXXXXX that every user may pass through (0711). */
export async function runFolder(prefix: string): Promise<string> {
  const dir = await mkdtemp(prefix);
  await chmod(dir, 0o711);
  return dir;
}
