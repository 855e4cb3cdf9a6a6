// The one gate loop on a case source made here, without a mount: it asks the source for units until
// it has none (or the daemon is lost), stops the source and then the daemon on every path, and makes
// the one report: floor, verdict, exit code, JUnit file, summary with the phases line.
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { TempDaemon } from '../harness/daemon-process.js';
import type { Target } from '../harness/target.js';
import { newRow, type GateRow } from '../report/gate-results.js';
import type { CaseSource, GateContext, GateUnit } from './case-source.js';
import { CASES_JUDGED } from './floor.js';
import { GATE_EXIT, type GateOptions } from './gate-report.js';
import { runCases } from './gate.js';

const dirs: string[] = [];
afterAll(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

/** What happened, in order: daemon starts and stops, source stop, units run. */
type Event = string;

/** A source of two suites whose units are `units` (each given the context), in order. */
function fakeSource(events: Event[], units: ((ctx: GateContext, rows: GateRow[]) => Promise<void>)[]) {
  return (ctx: GateContext): CaseSource => {
    const rows = [newRow('a', 'suite'), newRow('b', 'suite')];
    let given = 0;
    return {
      unit: 'crash states',
      mode: 'exhaustive',
      startDaemon: async () => { throw new Error('the options give the daemon'); },
      beforeDaemonStop: async () => { events.push('before daemon stop'); },
      maxToolFailures: Infinity,
      rows: () => rows,
      floorOf: () => [CASES_JUDGED],
      next(): GateUnit | undefined {
        if (given === units.length) {
          events.push('no more');
          return undefined;
        }
        const u = units[given++];
        events.push(`unit ${given}`);
        return () => u(ctx, rows);
      },
      stop: async () => { events.push('source stop'); },
      steered: () => ({ inputs: 0, of: 0 }),
      clusterCoverage: () => undefined,
      work: () => ({ inputs: given, interleaved: 0, repeat: { total: given } }),
    };
  };
}

async function options(events: Event[], startFails?: number): Promise<GateOptions> {
  const root = await mkdtemp(path.join(os.tmpdir(), 'powercut-gate-loop-test-'));
  dirs.push(root);
  let started = 0;
  return {
    timeBudgetMs: 10_000, seed: 1, artifactRoot: path.join(root, 'arts'), junitFile: path.join(root, 'out/junit.xml'), out: { write: () => true },
    startDaemon: async () => {
      const n = ++started;
      if (n === startFails) throw new Error('no /dev/fuse');
      events.push(`daemon ${n} start`);
      return { daemon: {}, stop: async () => { events.push(`daemon ${n} stop`); } } as unknown as TempDaemon;
    },
  };
}

const target = { name: 'fake' } as unknown as Target;
const judge = (row: number) => async (_: GateContext, rows: GateRow[]) => { rows[row].cases++; };

describe('the gate loop (runCases)', () => {
  it('runs the units until the source has none, stops it and then its daemon, and reports a pass with its phases and JUnit file', async () => {
    const events: Event[] = [];
    const o = await options(events);
    const report = await runCases(o, target, fakeSource(events, [judge(0), judge(1), judge(0)]));
    expect(events).toEqual(['daemon 1 start', 'unit 1', 'unit 2', 'unit 3', 'no more', 'source stop', 'before daemon stop', 'daemon 1 stop']);
    expect([report.verdict, report.exitCode, report.rows.map((r) => r.cases)]).toEqual(['passed', GATE_EXIT.passed, [2, 1]]);
    expect(report.text).toMatch(/^floor: met \(2 requirements\)/m);
    expect(report.text).toMatch(/^phases: record\+judge \d+\.\d s, causes 0\.0 s of 2\.0 s, shrink 0\.0 s of 1\.5 s, artifacts \d+\.\d s of 0\.5 s \(budget 10\.0 s\)$/m);
    expect(report.phases?.map((p) => p.phase)).toEqual(['record+judge', 'causes', 'shrink', 'artifacts']);
    expect(report.cluster).toBeUndefined();
    expect(await readFile(o.junitFile!, 'utf8')).toMatch(/name="b"/);
    // What runs the same inputs again on any machine.
    expect(report.text).toMatch(/^same verdict on any machine: --seed 1 --cases 3 \(the 3 inputs this run started, each judged in full\)$/m);
  });

  it('under a work budget has no time shares and says so, and the floor names --cases as what raises it', async () => {
    const events: Event[] = [];
    const { timeBudgetMs: _, ...o } = await options(events);
    const report = await runCases({ ...o, cases: { total: 1 } }, target, fakeSource(events, [judge(0)]));
    expect(report.text).toMatch(/^phases: record\+judge \d+\.\d s, causes 0\.0 s, shrink 0\.0 s, artifacts \d+\.\d s \(a work budget: no time shares, each phase bounded by counts\)$/m);
    expect(report.phases?.every((p) => p.shareMs === undefined)).toBe(true);
    expect(report.floor.filter((c) => !c.met).map((c) => c.raise)).toEqual(['raise --cases']);
    expect(report.text).toMatch(/^same verdict on any machine: --seed 1 --cases 1 \(this work budget\)$/m);
    await expect(runCases({ ...o, cases: { total: 1 }, timeBudgetMs: 1_000 }, target, fakeSource([], []))).rejects.toThrow(/invariant: a gate has a time budget or a work budget, not both/);
  });

  it('is below the floor (exit 4) when a row judged nothing, naming it', async () => {
    const events: Event[] = [];
    const report = await runCases(await options(events), target, fakeSource(events, [judge(0)]));
    expect([report.verdict, report.exitCode]).toEqual(['below-floor', GATE_EXIT.belowFloor]);
    expect(report.floor.filter((c) => !c.met).map((c) => c.row)).toEqual(['b']);
  });

  it('asks for no unit once the daemon is lost (none restarts), and the tool failure is the verdict (exit 3)', async () => {
    const events: Event[] = [];
    const lose = async (ctx: GateContext, rows: GateRow[]) => { rows[0].cases++; expect(await ctx.daemons.restart(rows[0])).toBe(false); };
    const report = await runCases(await options(events, 2), target, fakeSource(events, [lose, judge(1)]));
    expect(events).toEqual(['daemon 1 start', 'unit 1', 'before daemon stop', 'daemon 1 stop', 'source stop', 'before daemon stop']);
    expect([report.verdict, report.exitCode]).toEqual(['tool-failed', GATE_EXIT.toolFailed]);
    expect(report.rows[0].errors[0]).toMatch(/^the filesystem daemon could not be restarted, so the gate stopped here: no \/dev\/fuse/);
  });

  it('stops the source and the daemon when a unit throws, and throws on', async () => {
    const events: Event[] = [];
    const broken = async () => { throw new Error('invariant: broken unit'); };
    await expect(runCases(await options(events), target, fakeSource(events, [broken]))).rejects.toThrow('invariant: broken unit');
    expect(events).toEqual(['daemon 1 start', 'unit 1', 'source stop', 'before daemon stop', 'daemon 1 stop']);
  });
});
