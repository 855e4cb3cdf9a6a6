// The durability gate engine: one daemon for the whole run (reset between cases, stopped on every
// path); every scenario first, then the property suites in rounds until the time budget is spent.
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { crashInputArb, runCrashSuite } from '../../properties/crash-property.js';
import { startTempDaemon } from '../harness/daemon-process.js';
import { replayCommand } from '../harness/artifacts.js';
import { SCENARIOS } from '../../scenarios/index.js';
import { Budget } from './budget.js';
import { countingDaemon } from './counting.js';
import { toJunitXml } from './junit.js';
import { ProgressReporter, type ProgressOutput } from './progress.js';
import { totals, type GateRow } from './results.js';
import { runScenario } from './scenario-run.js';
import { formatFailures, formatSummaryTable } from './summary.js';
import { gateSuites, roundSeed } from './suites.js';

export interface GateOptions {
  timeBudgetMs: number;
  seed: number;
  variant?: string;
  /** Failure artifacts go under this folder. */
  artifactRoot: string;
  junitFile?: string;
  out: ProgressOutput;
}

export interface GateReport {
  rows: GateRow[];
  durationMs: number;
  passed: boolean;
  /** The summary table and failure details, as printed. */
  text: string;
}

/** A round gives each remaining suite this long at most, so all of them get turns within the budget. */
export const MAX_ROUND_SLICE_MS = 30_000;
/** Below this much budget no new round starts (an input takes up to a few seconds). */
export const MIN_SLICE_MS = 3_000;
/** Inputs per fast-check run (one input is up to three power cuts, 1-3 s), so turns end on time. */
export const RUNS_PER_CHUNK = 1;

export async function runGate(o: GateOptions): Promise<GateReport> {
  const budget = new Budget(o.timeBudgetMs);
  const rows: GateRow[] = [];
  let phase = 'starting the filesystem daemon';
  const fixture = await startTempDaemon('gate');
  const counted = countingDaemon(fixture.daemon);
  const violationsSoFar = () => rows.reduce((n, r) => n + r.violations, 0);
  const progress = new ProgressReporter(o.out, () => ({ phase, cuts: counted.cuts(), violations: violationsSoFar(), leftMs: budget.leftMs() }));
  try {
    progress.start();
    for (const s of SCENARIOS) {
      phase = `scenario ${s.name}`;
      const { row } = await runScenario(counted.daemon, s, o.variant, o.artifactRoot);
      rows.push(row);
      const verdict = row.error !== undefined ? `ERROR ${row.error}` : row.violations > 0 ? `FAIL (${row.failure?.messages[0] ?? ''})` : 'pass';
      progress.log(`scenario ${s.name}: ${verdict} [${(row.durationMs / 1000).toFixed(1)} s]`);
    }

    const suites = gateSuites(o.variant).map((suite, index) => ({
      suite,
      index,
      row: { name: suite.name, kind: 'suite', cases: 0, cuts: 0, violations: 0, durationMs: 0 } as GateRow,
      done: false,
      chunks: 0,
    }));
    rows.push(...suites.map((s) => s.row));
    for (let round = 0; ; round++) {
      const active = suites.filter((s) => !s.done);
      if (active.length === 0 || budget.leftMs() < MIN_SLICE_MS) break;
      // Each round (and each seed, i.e. each CI shard) starts at another suite: short budgets spread over all of them.
      const first = (((o.seed + round) % active.length) + active.length) % active.length;
      active.push(...active.splice(0, first));
      for (const s of active) {
        if (budget.leftMs() < MIN_SLICE_MS) break;
        // An equal share of what is left, at least one input's worth: short budgets still reach every suite in turn.
        const sliceMs = Math.max(MIN_SLICE_MS, Math.min(MAX_ROUND_SLICE_MS, budget.leftMs() / active.length));
        phase = `suite ${s.suite.name}, round ${round + 1}`;
        const cutsBefore = counted.cuts();
        const turnEndsMs = Date.now() + sliceMs;
        try {
          // Chunks of a few inputs, each run to completion: fast-check's own time limit abandons a
          // running property, whose crash case would then race the next one on the shared daemon.
          while (!s.done && Date.now() < turnEndsMs && budget.leftMs() >= MIN_SLICE_MS) {
            const seed = roundSeed(o.seed, s.index, s.chunks++);
            const report = await runCrashSuite(counted.daemon, crashInputArb(s.suite.options), {
              numRuns: RUNS_PER_CHUNK,
              seed,
              // No shrinking: it has no time bound. The artifact replays the failing case exactly.
              endOnFailure: true,
              artifactRoot: o.artifactRoot,
            });
            s.row.cases += report.cuts;
            s.row.durationMs += report.durationMs;
            if (!report.failed) continue;
            s.done = true;
            if (report.error !== undefined) s.row.error = report.error;
            const failure = report.failure;
            if (failure) {
              s.row.violations += failure.violations.length;
              s.row.failure = {
                messages: failure.violations.map((v) => v.message),
                seed: report.seed,
                ...(report.path !== undefined ? { path: report.path } : {}),
                ...(failure.artifactDir ? { artifactDir: failure.artifactDir, replay: replayCommand(failure.artifactDir) } : {}),
              };
            }
            progress.log(`suite ${s.suite.name}: ${s.row.error !== undefined ? 'ERROR' : 'FAIL'} after ${s.row.cases} cases\n${report.summary}`);
          }
        } catch (err) {
          s.done = true;
          s.row.error = err instanceof Error ? err.message : String(err);
          progress.log(`suite ${s.suite.name}: ERROR ${s.row.error}`);
        } finally {
          s.row.cuts += counted.cuts() - cutsBefore;
        }
      }
    }
  } finally {
    progress.stop();
    await fixture.stop();
  }

  const durationMs = budget.elapsedMs();
  const t = totals(rows, durationMs);
  const failures = formatFailures(rows);
  const text = [formatSummaryTable(rows, t), ...(failures ? ['', 'failures:', failures] : [])].join('\n');
  if (o.junitFile) {
    await mkdir(path.dirname(path.resolve(o.junitFile)), { recursive: true });
    await writeFile(o.junitFile, toJunitXml(rows, durationMs));
  }
  return { rows, durationMs, passed: t.violations === 0 && t.errors === 0, text };
}
