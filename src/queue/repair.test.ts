import { afterEach, describe, expect, it } from 'vitest';
import { readFile, truncate, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { openQueue } from './index.js';
import { repairQueue } from './repair.js';
import { inspectQueue } from './inspect.js';
import { DamagedQueueError } from './errors.js';
import { PAGE_HEADER_BYTES } from './format.js';
import { removeTempQueueDirs, tempQueueDir } from './testing.js';

afterEach(removeTempQueueDirs);
const settings = { pageCapacityBytes: 200 };

async function queueWith(n: number, acked = 0): Promise<string> {
  const dir = await tempQueueDir();
  const q = await openQueue(dir, { ...settings, checkpointAcks: 1 });
  for (let i = 1; i <= n; i++) await q.write(Buffer.from(`ev${i}`));
  if (acked > 0) await q.ack((await q.readBatch(acked, 100)).map((e) => e.seq));
  await q.close();
  return dir;
}
async function readAll(dir: string): Promise<{ seqs: number[]; next: number }> {
  const q = await openQueue(dir, settings);
  try {
    const seqs = (await q.readBatch(1000, 50)).map((e) => e.seq);
    return { seqs, next: await q.write(Buffer.from('after repair')) };
  } finally {
    await q.close();
  }
}
const range = (a: number, b: number) => Array.from({ length: b - a + 1 }, (_, k) => a + k);

describe('repair', () => {
  it('a corrupt record in a tail page: drops the rest of that page, keeps later pages, reports file, offset and seqs', async () => {
    const dir = await queueWith(30);
    const file = join(dir, 'page.2');
    const buf = await readFile(file);
    buf[60] ^= 0xff;
    await writeFile(file, buf);
    await expect(openQueue(dir, settings)).rejects.toThrow(DamagedQueueError);
    const report = await repairQueue(dir);
    const pages = (await inspectQueue(dir)).pages;
    const page2 = pages.find((p) => p.file === 'page.2')!;
    expect(report.dropped).toEqual([
      { file, offsetBytes: page2.validBytes, bytes: buf.length - page2.validBytes, seqs: `${page2.records + 10}..${Number(pages[2].seqs.split('..')[0]) - 1}`, reason: 'record CRC mismatch' },
    ]);
    const { seqs, next } = await readAll(dir);
    expect(seqs).toEqual([...range(1, 9 + page2.records), ...range(Number(pages[2].seqs.split('..')[0]), 30)]);
    expect(next).toBe(31);
  });

  it('a head page shorter than its checkpoint: the lost seqs are skipped so none is ever reused', async () => {
    const dir = await queueWith(5);
    await truncate(join(dir, 'page.1'), PAGE_HEADER_BYTES + 3 * 19 + 5);
    const report = await repairQueue(dir);
    expect(report.dropped).toHaveLength(1);
    expect(report.dropped[0]).toMatchObject({ offsetBytes: PAGE_HEADER_BYTES + 3 * 19, seqs: '4..5' });
    const { seqs, next } = await readAll(dir);
    expect(seqs).toEqual([1, 2, 3]);
    expect(next).toBe(6);
  });

  it('a corrupt checkpoint is rebuilt from the pages, replaying from the first page (at-least-once)', async () => {
    const dir = await queueWith(12, 3);
    await writeFile(join(dir, 'checkpoint.head'), Buffer.alloc(10));
    const report = await repairQueue(dir);
    expect(report.dropped[0]).toMatchObject({ file: join(dir, 'checkpoint.head'), seqs: 'none (acks only)' });
    expect(report.checkpointRebuilt).toBe(true);
    const { seqs } = await readAll(dir);
    expect(seqs).toEqual(range(1, 12));
  });

  it('inspect describes pages and a torn tail without changing anything', async () => {
    const dir = await queueWith(3);
    await writeFile(join(dir, 'page.1'), Buffer.concat([await readFile(join(dir, 'page.1')), Buffer.alloc(7)]));
    const before = await readFile(join(dir, 'page.1'));
    const report = await inspectQueue(dir);
    expect(report.checkpointDesign).toBe('atomic-file');
    expect(report.pages).toEqual([
      expect.objectContaining({ file: 'page.1', records: 3, seqs: '1..3', tail: `record is cut short at offset ${before.length - 7}` }),
    ]);
    expect(await readFile(join(dir, 'page.1'))).toEqual(before);
  });
});
