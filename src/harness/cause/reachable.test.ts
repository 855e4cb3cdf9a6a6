// reachableUnits: a unit under a directory entry the state lost (and the set leaves lost) is
// unreachable, on its own node only; one the set makes durable, or that was durable, is not hidden.
import { describe, expect, it } from 'vitest';
import type { LostUnit } from '../../../fusefs/crash-states.js';
import { reachableUnits } from './reachable.js';

const dir = (node: number, path: string, created: string[]): LostUnit => ({
  kind: 'dir', node, ino: 1, path, syncedLater: [],
  changes: created.map((name, k) => ({ seq: k + 1, op: k + 1, kind: 'create', entries: [{ name, target: `${path === '/' ? '' : path}/${name}` }] })),
});
const data = (node: number, path: string): LostUnit => ({ kind: 'file', node, ino: 2, path, syncedLater: [], changes: [{ seq: 1, op: 9, kind: 'write', offset: 0, length: 10 }] });

describe('reachableUnits', () => {
  it('drops a unit under an entry the state lost and the set does not keep, on that node only', () => {
    const sys = dir(0, '/js', ['meta']);
    const tav = data(0, '/js/meta/tav');
    const tavOn1 = data(1, '/js/meta/tav');
    const blk = data(0, '/s/blk');
    const lost = [sys, tav, tavOn1, blk];
    // node 0's /js lost its entry "meta": its tav is unreachable; node 1 lost no entry on the way.
    expect(reachableUnits([tav, tavOn1, blk], lost)).toEqual([tavOn1, blk]);
    // With /js's entries durable, node 0's tav is reachable too.
    expect(reachableUnits([sys, tav, blk], lost)).toEqual([sys, tav, blk]);
  });

  it('hides a directory\'s own entries unit under a lost entry, and never a removal', () => {
    const root = dir(0, '/', ['a']);
    const a = dir(0, '/a', ['b']);
    const removed: LostUnit = { ...dir(0, '/', []), changes: [{ seq: 1, op: 1, kind: 'unlink', entries: [{ name: 'c', target: null }] }] };
    expect(reachableUnits([a], [root, a])).toEqual([]);
    expect(reachableUnits([data(0, '/c/x')], [removed])).toHaveLength(1);
  });

  it('never hides under an entry a rename added: the file may keep its older name', () => {
    const renamed: LostUnit = { ...dir(0, '/', []), changes: [{ seq: 1, op: 1, kind: 'rename', entries: [{ name: 'head.tmp', target: null }, { name: 'head', target: '/head' }] }] };
    expect(reachableUnits([data(0, '/head')], [renamed])).toHaveLength(1);
  });
});
