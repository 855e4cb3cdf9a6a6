import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { GrowBuffer } from '../../fusefs/model/grow-buffer.js';
import type { PendingFileOp } from '../../fusefs/model/nodes.js';
import { modelState, stateKey, type FileState } from './file-state.js';
import { historyArb, modelsAfterEachStep, type History } from './history.js';
import { enumeratedStates, fileCanBe, isModelState } from './model-states.js';

const w = (offset: number, length: number, byte: number, seq: number): PendingFileOp => ({ type: 'write', offset, data: Buffer.alloc(length, byte), seq });
const bytes = (...runs: [number, number][]) => Buffer.concat(runs.map(([n, b]) => Buffer.alloc(n, b)));

describe('fileCanBe: the torn rule for one file', () => {
  const empty = new GrowBuffer();

  it('lets a new file come back empty, whole, at full size reading zeros, or with a prefix of its sectors, never at a size no change had', () => {
    const pending = [w(0, 5000, 7, 1)];
    expect(fileCanBe(empty, pending, bytes())).toBeUndefined();
    expect(fileCanBe(empty, pending, bytes([5000, 7]))).toBeUndefined();
    expect(fileCanBe(empty, pending, bytes([5000, 0]))).toBeUndefined();
    expect(fileCanBe(empty, pending, bytes([512, 7], [4488, 0]))).toBeUndefined();
    expect(fileCanBe(empty, pending, bytes([4096, 7]))).toMatch(/size 4096; the model allows sizes 0, 5000/);
  });

  it('never lets a sector hold a later write without an earlier one', () => {
    const pending = [w(0, 512, 1, 1), w(0, 100, 2, 2)];
    expect(fileCanBe(empty, pending, bytes([100, 2], [412, 1]))).toBeUndefined();
    expect(fileCanBe(empty, pending, bytes([512, 1]))).toBeUndefined();
    expect(fileCanBe(empty, pending, bytes([100, 2], [412, 0]))).toMatch(/bytes 0\.\.511 read 100x0x02 412x0x00/);
  });

  it('keeps durable bytes under a lost overwrite and refuses bytes no write had', () => {
    const durable = new GrowBuffer(bytes([1024, 1]));
    const pending = [w(0, 1024, 2, 1)];
    expect(fileCanBe(durable, pending, bytes([512, 2], [512, 1]))).toBeUndefined();
    expect(fileCanBe(durable, pending, bytes([1024, 3]))).toMatch(/bytes 0\.\.511/);
  });

  it('lets a truncate persist its size or its zeroing, each on its own, but never bytes it never held', () => {
    const durable = new GrowBuffer(bytes([1024, 1]));
    const pending: PendingFileOp[] = [{ type: 'truncate', sizeBytes: 100, seq: 1 }, { type: 'truncate', sizeBytes: 1024, seq: 2 }];
    expect(fileCanBe(durable, pending, bytes([100, 1], [924, 0]))).toBeUndefined();
    expect(fileCanBe(durable, pending, bytes([1024, 1]))).toBeUndefined();
    expect(fileCanBe(durable, pending, bytes([100, 1]))).toBeUndefined();
    expect(fileCanBe(durable, pending, bytes([100, 1], [412, 2], [512, 1]))).toMatch(/^bytes 0\.\.511 read 100x0x01 412x0x02; the model allows 512x0x01 \| 100x0x01 412x0x00$/);
    expect(fileCanBe(durable, pending, bytes([200, 1]))).toMatch(/size 200; the model allows sizes 100, 1024/);
  });
});

describe('isModelState', () => {
  const h: History = [
    { op: 'create', path: 'f0' }, { op: 'write', path: 'f0', offset: 0, length: 100, byte: 1, kind: 'append' },
    { op: 'fsync', path: 'f0' }, { op: 'create', path: 'f1' },
  ];
  const models = modelsAfterEachStep(h);
  const state = (files: [string, number, Buffer][]): FileState => ({ dirs: [], files: files.map(([path, inode, data]) => ({ path, inode, data })) });

  it('holds a file fsynced with its name: after the fsync it is there whatever else is lost', () => {
    expect(isModelState(models[4], state([['f0', 12, bytes([100, 1])]]), 'journaled').member).toBe(true);
    expect(isModelState(models[4], state([['f0', 12, bytes([100, 1])], ['f1', 13, bytes()]]), 'journaled').member).toBe(true);
    const lost = isModelState(models[4], state([]), 'journaled');
    expect(lost.member).toBe(false);
    expect(lost.reasons.join('\n')).toMatch(/model files \[f0\], real \[\]/);
    // torn does not commit: the name may be lost.
    expect(isModelState(models[4], state([]), 'torn').member).toBe(true);
  });

  it('compares hard links by which names share an inode', () => {
    const l = modelsAfterEachStep([{ op: 'create', path: 'f0' }, { op: 'link', from: 'f0', to: 'f1' }, { op: 'fsyncdir', path: '.' }]);
    expect(isModelState(l[3], state([['f0', 5, bytes()], ['f1', 5, bytes()]]), 'journaled').member).toBe(true);
    expect(isModelState(l[3], state([['f0', 5, bytes()], ['f1', 6, bytes()]]), 'journaled').reasons.join()).toMatch(/hard links/);
  });

  it('finds every state the journaled and torn enumerations list (drawn histories, every cut)', () => {
    fc.assert(fc.property(historyArb, (history) => {
      for (const m of modelsAfterEachStep(history)) {
        for (const policy of ['journaled', 'torn'] as const) {
          for (const s of enumeratedStates(m, policy, 2).values()) {
            const v = isModelState(m, s, policy);
            if (!v.member) throw new Error(`enumerated ${policy} state not found: ${stateKey(s)}: ${v.reasons.join('; ')}`);
          }
        }
        const strict = m.clone();
        strict.crash('lose-unsynced');
        expect(isModelState(m, modelState(strict), 'lose-unsynced').member).toBe(true);
      }
    }), { numRuns: 40 });
  });
});
