import { describe, expect, it } from 'vitest';
import { applyWrites, blockStates, epochSubsets, FLAG_FLUSH, LOG_MAGIC, markerSteps, parseBlockLog } from './block-log.js';

const SS = 512;

/** A dm-log-writes log of the given entries (data: one sector per entry, filled with `fill`). */
function logOf(entries: { sector: number; sectors?: number; flags?: number; fill?: number; text?: string }[], trailing = 0): Buffer {
  const header = Buffer.alloc(SS);
  header.writeBigUInt64LE(LOG_MAGIC, 0);
  header.writeBigUInt64LE(1n, 8);
  header.writeBigUInt64LE(0n, 16); // nr_entries is stale: the parser must read to the end
  header.writeUInt32LE(SS, 24);
  const parts = [header];
  for (const e of entries) {
    const h = Buffer.alloc(SS);
    const n = e.flags === FLAG_FLUSH ? 0 : (e.sectors ?? 1);
    h.writeBigUInt64LE(BigInt(e.sector), 0);
    h.writeBigUInt64LE(BigInt(n), 8);
    h.writeBigUInt64LE(BigInt(e.flags ?? 0), 16);
    parts.push(h);
    const d = Buffer.alloc(n * SS, e.fill ?? 0);
    if (e.text) d.write(e.text);
    parts.push(d);
  }
  parts.push(Buffer.alloc(trailing));
  return Buffer.concat(parts);
}

const MARK = 100; // marker region from sector 100

describe('parseBlockLog', () => {
  it('reads every entry to the end of the file, past a stale entry count, and stops at a truncated one', () => {
    const buf = logOf([{ sector: 1, fill: 7 }, { sector: 0, flags: FLAG_FLUSH }, { sector: 2, sectors: 2, fill: 9 }]);
    const log = parseBlockLog(Buffer.concat([buf, Buffer.alloc(SS + 10, 1).fill(0, 0, 8).fill(0, 16)]));
    expect(log.sectorSize).toBe(SS);
    expect(log.entries.map((e) => [e.sector, e.sectors, e.flags, e.data.length])).toEqual([[1, 1, 0, SS], [0, 0, 1, 0], [2, 2, 0, 2 * SS]]);
    expect(log.entries[2].data[SS + 3]).toBe(9);
  });

  it('refuses a file that is not a dm-log-writes log', () => {
    expect(() => parseBlockLog(Buffer.alloc(SS))).toThrow(/magic/);
  });
});

describe('blockStates', () => {
  // w1 m1 FLUSH w2 w3 m2 FLUSH w4 (markers at sector >= 100)
  const log = parseBlockLog(logOf([
    { sector: 1, fill: 1 }, { sector: MARK, text: 'KCMARK 1' }, { sector: 0, flags: FLAG_FLUSH },
    { sector: 2, fill: 2 }, { sector: 3, fill: 3 }, { sector: MARK + 8, text: 'KCMARK 2' }, { sector: 0, flags: FLAG_FLUSH },
    { sector: 1, fill: 4 },
  ]));

  it('keeps everything before a flush and a subset of the writes after it, never a marker', () => {
    const states = blockStates(log, MARK, 2, { allSubsetsUpTo: 3 });
    const writes = states.map((s) => s.writes.join(','));
    expect(writes).toEqual(['', '0', '0', '0,3', '0,4', '0,3,4', '0,3,4', '0,3,4,7']);
    for (const s of states) expect(s.writes.every((i) => log.entries[i].sector < MARK)).toBe(true);
  });

  it('bounds each state by the steps that may have completed: at least the markers before its last write, at most those before the next flush plus one', () => {
    // Three steps: the third had not finished when the log ends.
    const states = blockStates(log, MARK, 3, { allSubsetsUpTo: 3 });
    expect(states.map((s) => s.steps)).toEqual([[0, 2], [0, 2], [1, 3], [1, 3], [1, 3], [1, 3], [2, 3], [2, 3]]);
    expect(blockStates(log, MARK, 2, { allSubsetsUpTo: 3 }).map((s) => s.steps[1])).toEqual([2, 2, 2, 2, 2, 2, 2, 2]);
  });

  it('takes prefixes and all-but-one past the bound', () => {
    expect(epochSubsets([5, 6, 7], { allSubsetsUpTo: 2 })).toEqual([[], [5], [5, 6], [5, 6, 7], [6, 7], [5, 7]]);
    expect(epochSubsets([5, 6], { allSubsetsUpTo: 2 })).toEqual([[], [5], [6], [5, 6]]);
  });

  it('applies the chosen writes in log order onto a copy of the image', () => {
    const base = Buffer.alloc(4 * SS, 0xee);
    const img = applyWrites(base, log, [0, 3, 7]);
    expect([img[SS], img[2 * SS], img[3 * SS], img[0]]).toEqual([4, 2, 0xee, 0xee]);
    expect(base[SS]).toBe(0xee);
    expect(() => applyWrites(Buffer.alloc(SS), log, [0])).toThrow(/past the image/);
  });

  it('reads the step numbers of the markers', () => {
    expect(markerSteps(log, MARK)).toEqual([{ index: 1, step: 1 }, { index: 5, step: 2 }]);
  });
});
