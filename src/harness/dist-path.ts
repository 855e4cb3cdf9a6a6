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
