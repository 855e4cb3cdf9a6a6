// A broken confirmation's claim looked for on the disk recovery started from: an event's bytes found
// in a file of the artifact's last image, or not (then a swallowed error may be named).
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { RunRecord } from '../oracle.js';
import { payload } from '../payload.js';
import { claimOnDisk } from './claim-on-disk.js';

const root = await mkdtemp(path.join(os.tmpdir(), 'powercut-claim-on-disk-'));
afterAll(() => rm(root, { recursive: true, force: true }));

const run = (outcomes: RunRecord['outcomes']): RunRecord => ({ role: 'workload', outcomes, exitCode: null, killed: true, hung: false, failedRequests: [] });
const lost = (ids: number[]) => [{ check: 'at-least-once' as const, message: 'lost', ids }];

async function artifact(name: string, files: Record<string, Buffer>): Promise<string> {
  const dir = path.join(root, name);
  for (const [cut, content] of [['cut-0-after-crash', Buffer.from('old')], ['cut-1-after-crash', undefined]] as const) {
    await mkdir(path.join(dir, 'images', cut, 'sub'), { recursive: true });
    if (content) await writeFile(path.join(dir, 'images', cut, 'page.1'), content);
  }
  for (const [f, bytes] of Object.entries(files)) await writeFile(path.join(dir, 'images', 'cut-1-after-crash', f), bytes);
  return dir;
}

describe('claimOnDisk', () => {
  const runs = [run([{ t: 'write-intent', id: 7, size: 40 }, { t: 'write-intent', id: 8, size: 30 }])];

  it('finds each lost event in a file of the last image, wherever in the file, and says which are missing', async () => {
    const dir = await artifact('found', { 'sub/page.2': Buffer.concat([Buffer.from('header'), payload(7, 40), Buffer.from('tail')]) });
    expect(await claimOnDisk({ violations: lost([7, 8]), runs, artifactDir: dir })).toEqual({ found: [{ id: 7, file: '/sub/page.2' }], missing: [8] });
  });

  it('says nothing without an image, or without event ids to look for', async () => {
    expect(await claimOnDisk({ violations: lost([7]), runs })).toBeUndefined();
    const dir = await artifact('empty', {});
    expect(await claimOnDisk({ violations: [{ check: 'liveness', message: 'x' }], runs, artifactDir: dir })).toBeUndefined();
  });
});
