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
  it('rejects a non-positive atOp', () => {
    expect(() => new CrashPointMatcher({ atOp: 0, timing: 'before' }, [])).toThrow(/atOp/);
  });
});
