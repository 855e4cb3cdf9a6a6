// The gate alone, no mount: a point armed at a release (a pause's end) may fall on a request that
// came, and was numbered, while the gate was frozen.
import { describe, expect, it } from 'vitest';
import { EIO } from './model/errno.js';
import type { TraceEntry } from './protocol.js';
import { RequestGate } from './request-gate.js';

/** A write request on `node`; its answers are collected in `answers` as [op, result]. */
function write(gate: RequestGate, node: number, answers: [number, number][], applied: number[]): TraceEntry {
  const entry: TraceEntry = { op: 0, kind: 'write', path: `/f${node}`, state: 'held' };
  gate.mutate(entry, () => (applied.push(entry.op), 0), (r) => answers.push([entry.op, r]), node);
  return entry;
}

describe('RequestGate.releaseAll', () => {
  it('freezes again at a point that came while frozen: the requests before it run, it and the later ones stay held', () => {
    const gate = new RequestGate(null, true);
    const answers: [number, number][] = [];
    const applied: number[] = [];
    gate.arm({ atOp: 2, timing: 'before' });
    for (const node of [0, 1, 2, 0]) write(gate, node, answers, applied);
    expect(gate.frozenAt).toBe(2);
    expect(answers).toEqual([[1, 0]]);
    gate.releaseAll({ atOp: 3, timing: 'before' });
    expect(gate.frozenAt, 'request 3 came while frozen and is the point').toBe(3);
    expect(answers).toEqual([[1, 0], [2, 0]]);
    expect(gate.heldCount).toBe(2);
    gate.disposeHeld();
    expect(answers.slice(2)).toEqual([[3, EIO], [4, EIO]]);
    expect(applied).toEqual([1, 2]);
  });

  it('with timing after, applies the point\'s request and holds its answer', () => {
    const gate = new RequestGate(null, true);
    const answers: [number, number][] = [];
    const applied: number[] = [];
    gate.arm({ atOp: 1, timing: 'before' });
    for (const node of [0, 1, 2]) write(gate, node, answers, applied);
    gate.releaseAll({ atOp: 2, timing: 'after' });
    expect(gate.frozenAt).toBe(2);
    expect(applied).toEqual([1, 2]);
    expect(answers).toEqual([[1, 0]]);
    gate.releaseAll();
    expect(answers).toEqual([[1, 0], [2, 0], [3, 0]]);
    expect(gate.frozenAt).toBeNull();
  });

  it('arms a point past every held request as arm would, and refuses the frozen request itself, changing nothing', () => {
    const gate = new RequestGate(null, true);
    const answers: [number, number][] = [];
    gate.arm({ atOp: 1, timing: 'before' });
    write(gate, 0, answers, []);
    write(gate, 1, answers, []);
    expect(() => gate.releaseAll({ atOp: 1, timing: 'before' })).toThrow(/already passed/);
    expect([gate.frozenAt, gate.heldCount]).toEqual([1, 2]);
    gate.releaseAll({ atOp: 2, kind: 'write', node: 2, timing: 'before' });
    expect(gate.frozenAt).toBeNull();
    expect(gate.armed).toEqual({ atOp: 2, kind: 'write', node: 2, timing: 'before' });
    expect(answers).toEqual([[1, 0], [2, 0]]);
  });
});
