// Whether a broken confirmation was true when the power went: the events it claimed durable and
// recovery lost, found byte for byte in the disk recovery started from. A swallowed error (an
// injected fault the queue did not report) is the cause of a loss only when the confirmation that
// followed it claimed what the disk did not hold; when the disk holds it, the fault did not cost the
// record: recovery lost it, and the cause lies there. An event's bytes are a function of its id and
// size (payload.ts), so they can be looked for in every file of the image.
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import type { CaseResult } from '../crash-case.js';
import { payload } from '../payload.js';

/** Each lost event looked for, and where its bytes were found (a path of the image), if anywhere. */
export interface ClaimOnDisk {
  found: { id: number; file: string }[];
  missing: number[];
}

async function filesUnder(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true, recursive: true }).catch(() => []);
  return entries.filter((e) => e.isFile()).map((e) => path.join(e.parentPath, e.name));
}

/**
 * The at-least-once violation's lost events, looked for in the image the final recovery started
 * from (the artifact's last `cut-K-after-crash`); undefined when the case kept no image or the
 * violation names no event id (the sizes come from the runs' write-intent lines).
 */
export async function claimOnDisk(result: Pick<CaseResult, 'violations' | 'runs' | 'artifactDir'>): Promise<ClaimOnDisk | undefined> {
  const lost = result.violations.find((v) => v.check === 'at-least-once')?.ids ?? [];
  if (!result.artifactDir || lost.length === 0) return undefined;
  const images = path.join(result.artifactDir, 'images');
  const cuts = (await readdir(images).catch(() => [] as string[])).filter((n) => /^cut-\d+-after-crash$/.test(n)).sort((a, b) => Number(a.split('-')[1]) - Number(b.split('-')[1]));
  if (cuts.length === 0) return undefined;
  const sizeOf = new Map<number, number>();
  for (const r of result.runs) for (const o of r.outcomes) if (o.t === 'write-intent') sizeOf.set(o.id, o.size);
  const root = path.join(images, cuts.at(-1)!);
  const files = await Promise.all((await filesUnder(root)).map(async (f) => ({ name: `/${path.relative(root, f)}`, bytes: await readFile(f) })));
  const out: ClaimOnDisk = { found: [], missing: [] };
  for (const id of lost) {
    const size = sizeOf.get(id);
    const file = size === undefined ? undefined : files.find((f) => f.bytes.includes(payload(id, size)));
    if (file) out.found.push({ id, file: file.name });
    else out.missing.push(id);
  }
  return out;
}
