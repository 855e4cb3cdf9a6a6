// Seq ranges that `repair` dropped: recovery accepts exactly these holes between pages.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { DamagedQueueError } from './errors.js';

export const GAPS_FILE = 'repaired-gaps.json';
export type SeqGap = [fromSeq: number, toSeq: number];

export async function readGaps(dir: string): Promise<SeqGap[]> {
  const file = join(dir, GAPS_FILE);
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
  try {
    const gaps = JSON.parse(text) as unknown;
    if (Array.isArray(gaps) && gaps.every((g) => Array.isArray(g) && g.length === 2 && g.every(Number.isSafeInteger) && g[0] <= g[1])) {
      return gaps as SeqGap[];
    }
  } catch {
    // reported below
  }
  throw new DamagedQueueError(file, 0, 'not a JSON list of [fromSeq, toSeq] pairs');
}

export function isGap(gaps: readonly SeqGap[], fromSeq: number, toSeq: number): boolean {
  return gaps.some(([a, b]) => a === fromSeq && b === toSeq);
}
