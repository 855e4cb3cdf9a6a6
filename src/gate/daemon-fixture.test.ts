// The gate's daemon fixture without a mount: a restart after each failure of the tool, the run given
// up when no daemon starts or at the failure that reaches the cap, and every daemon stopped once.
import { describe, expect, it } from 'vitest';
import type { TempDaemon } from '../harness/daemon-process.js';
import { newRow } from '../report/gate-results.js';
import { DaemonFixture } from './daemon-fixture.js';

/** Daemons that count their stops; `failStart` makes the n-th start (1-based) throw. */
function fakes(failStart?: number) {
  const stopped: number[] = [];
  let started = 0;
  const start = async (): Promise<TempDaemon> => {
    const n = ++started;
    if (n === failStart) throw new Error('no /dev/fuse');
    return { stop: async () => { stopped.push(n); } } as unknown as TempDaemon;
  };
  return { start, stopped, started: () => started };
}

describe('DaemonFixture', () => {
  it('restarts after each failure of the tool, stopping the old daemon (and what runs on it) first', async () => {
    const f = fakes();
    const before: number[] = [];
    const d = new DaemonFixture(f.start, async () => { before.push(f.stopped.length); });
    await d.open();
    expect(await d.restart(newRow('s', 'suite'))).toBe(true);
    expect(await d.restart(newRow('s', 'suite'))).toBe(true);
    await d.stop();
    expect(f.stopped).toEqual([1, 2, 3]);
    expect(before).toEqual([0, 1, 2]);
    expect(d.lost).toBe(false);
    expect(d.running).toBeUndefined();
  });

  it('is lost when no daemon starts after a failure, the row saying why', async () => {
    const f = fakes(2);
    const d = new DaemonFixture(f.start);
    await d.open();
    const row = newRow('s', 'suite');
    expect(await d.restart(row)).toBe(false);
    expect(d.lost).toBe(true);
    expect(row.errors).toEqual(['the filesystem daemon could not be restarted, so the gate stopped here: no /dev/fuse']);
    expect(() => d.current).toThrow(/invariant/);
  });

  it('ends the run at the failure that reaches its cap, without another start or another error on the row', async () => {
    const f = fakes();
    const d = new DaemonFixture(f.start, undefined, undefined, () => 3);
    await d.open();
    const row = newRow('cluster coordinated', 'suite');
    expect([await d.restart(row), await d.restart(row), await d.restart(row)]).toEqual([true, true, false]);
    expect(d.lost).toBe(true);
    expect(f.started()).toBe(3);
    expect(f.stopped).toEqual([1, 2, 3]);
    expect(row.errors).toEqual([]);
  });
});
