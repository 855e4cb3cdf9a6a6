import { describe, expect, it } from 'vitest';
import { CrashPointMatcher, type RequestInfo } from './crash-point.js';

const reqs: RequestInfo[] = [
  { kind: 'create', path: '/q/page.1' },
  { kind: 'write', path: '/q/page.1' },
  { kind: 'fsync', path: '/q/page.1' },
  { kind: 'write', path: '/q/checkpoint.head' },
  { kind: 'rename', path: '/q/cp.tmp', path2: '/q/checkpoint.head' },
  { kind: 'write', path: '/q/page.1' },
];

function firstHit(m: CrashPointMatcher, list: RequestInfo[]): number {
  return list.findIndex((r) => m.offer(r)) + 1;
}

describe('CrashPointMatcher', () => {
  it('picks the Nth request overall', () => {
    expect(firstHit(new CrashPointMatcher({ atOp: 4, timing: 'before' }, []), reqs)).toBe(4);
  });
  it('picks the Nth of a kind', () => {
    expect(firstHit(new CrashPointMatcher({ atOp: 2, kind: 'write', timing: 'before' }, []), reqs)).toBe(4);
  });
  it('picks the Nth touching a glob, on either path, with or without leading slash', () => {
    expect(firstHit(new CrashPointMatcher({ atOp: 2, path: 'q/checkpoint.*', timing: 'after' }, []), reqs)).toBe(5);
    expect(firstHit(new CrashPointMatcher({ atOp: 3, path: '/q/page.*', timing: 'after' }, []), reqs)).toBe(3);
  });
  it('combines kind and glob', () => {
    expect(firstHit(new CrashPointMatcher({ atOp: 2, kind: 'write', path: '**/page.1', timing: 'after' }, []), reqs)).toBe(6);
  });
  it('counts from mount: requests before arming count, and a passed point is refused', () => {
    expect(firstHit(new CrashPointMatcher({ atOp: 3, kind: 'write', timing: 'before' }, reqs.slice(0, 4)), reqs.slice(4))).toBe(2);
    expect(() => new CrashPointMatcher({ atOp: 2, timing: 'before' }, reqs.slice(0, 3))).toThrow(/already passed/);
  });
  it('tells how many requests of a kind in a row surely are not the point (what the binding may answer itself)', () => {
    const writes = (n: number, path = '/x') => Array.from({ length: n }, (): RequestInfo => ({ kind: 'write', path }));
    expect(new CrashPointMatcher({ atOp: 3, kind: 'fsync', timing: 'before' }, []).requestsBefore('write')).toBe(Infinity);
    // Counted over every request, whatever its path or node: the writes before the point, then the point.
    // History: a create and a write of /q/page.1 (node 0); `seen` of them match each point.
    const cases = [
      { point: { atOp: 7 }, seen: 2 },
      { point: { atOp: 5, kind: 'write' as const }, seen: 1 },
      { point: { atOp: 5, kind: 'write' as const, path: '/x' }, seen: 0 },
      { point: { atOp: 6, node: 1 }, seen: 0 },
    ];
    for (const { point, seen } of cases) {
      const m = new CrashPointMatcher({ ...point, timing: 'before' }, reqs.slice(0, 2));
      const n = m.requestsBefore('write');
      expect(n).toBe(point.atOp - seen - 1);
      expect(firstHit(m, writes(n))).toBe(0);
      if (point.node === undefined) expect(firstHit(m, writes(1))).toBe(1); // the point itself, next
    }
  });
  it('rejects a non-positive atOp', () => {
    expect(() => new CrashPointMatcher({ atOp: 0, timing: 'before' }, [])).toThrow(/atOp/);
  });
});
