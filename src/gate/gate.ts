// The durability gate's one loop, whatever the target: one daemon for the whole run (reset between
// cases, restarted after a failure of the tool, stopped on every path), one registry of distinct
// failures, the budget and its phases; it asks a case source (case-source.ts) for units of work until
// the source has none for the budget left (time, or work: budget.ts): the scenarios and suites of one disk
// (single-disk-source.ts), or the cut kinds of a cluster (cluster-source.ts). Then the one report:
// the floor, the verdict, the JUnit file, the summary and the phases.
import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { within } from '../harness/time-share.js';
import { describeDriverNetwork, driverNetwork } from '../harness/driver-network.js';
import { describeStartingState, prepareStartingState, type StartingState } from '../harness/starting-state.js';
import type { TempDaemon } from '../harness/daemon-process.js';
import type { Target, TargetRef } from '../harness/target.js';
import { DEFAULT_TARGET, nodeCountOf, resolveTarget } from '../targets/index.js';
import { artifactLinkOf, dropArtifactLink, totals, type GateRow } from '../report/gate-results.js';
import { Budget, workBudgetOption, type WorkBudget } from './budget.js';
import type { CaseSource, GateContext } from './case-source.js';
import { clusterSource } from './cluster-source.js';
import { DaemonFixture } from './daemon-fixture.js';
import { FailureRegistry } from './failure-registry.js';
import { checkFloor } from './floor.js';
import { exitCodeOf, timeBudgetOf, verdictOf, type GateOptions, type GateReport } from './gate-report.js';
import { toJunitXml } from './junit.js';
import { formatPhases, Phases } from './phases.js';
import { ProgressReporter } from './progress.js';
import { singleDiskSource } from './single-disk-source.js';
import { formatGateText, formatJudgingShares } from './summary.js';

export { MAX_ERRORS_PER_SUITE, minimumBudgetMs, scenariosOf } from './single-disk-source.js';
export { MAX_SHRINK_MS, MIN_SHRINK_MS } from './phases.js';

export async function runGate(o: GateOptions): Promise<GateReport> {
  // The budget counts from the start: resolving the target and checking its environment included.
  const budget = new Budget(timeBudgetOf(o));
  const ref: TargetRef = o.driver ? { driver: o.driver } : { target: o.target ?? DEFAULT_TARGET };
  const target = resolveTarget(ref, o.settings);
  target.checkEnvironment?.();
  // A cluster runs cluster cases (cut kinds, live cuts), not the single-disk scenarios and suites.
  const nodes = clusterNodes(target, o.variant, o.settings);
  return runCases(o, target, (ctx) => (nodes > 1 ? clusterSource(ctx, nodes) : singleDiskSource(ctx, ref)), budget);
}

/** The loop itself, on the case source `sourceOf` makes (tests give it one without a mount). */
export async function runCases(o: GateOptions, target: Target, sourceOf: (ctx: GateContext) => CaseSource, budget = new Budget(timeBudgetOf(o))): Promise<GateReport> {
  // Judging keeps room for causes only once there is a failure to explain.
  const phases = new Phases(budget, Date.now, () => failures.values().length > 0);
  let doing = 'starting the filesystem daemon';
  const sum = (f: (r: GateRow) => number) => source.rows().reduce((n, r) => n + f(r), 0);
  const workLeft = () => {
    const w = source.work();
    return w.of === undefined ? {} : { work: { started: w.inputs, of: w.of, unit: source.unit === 'cluster cuts' ? 'workload' : 'input' } };
  };
  const progress = new ProgressReporter(o.out, () => ({ phase: doing, cases: sum((r) => r.cases), unit: source.unit, violations: sum((r) => r.violations), leftMs: budget.leftMs(), ...workLeft() }));
  const log = (line: string) => progress.log(line);
  const failures = new FailureRegistry(log);
  // The driver's starting state (its setup run), made on each daemon the run starts: every case starts from it.
  let startingState: StartingState | null = null;
  const startDaemon = async (): Promise<TempDaemon> => {
    const d = await (o.startDaemon ?? (() => source.startDaemon()))();
    try {
      doing = 'running the driver\'s setup (its starting state)';
      const first = startingState === null;
      if (target.asksSetup) startingState = await prepareStartingState(d.daemon, target.driver, o.settings ?? {});
      if (startingState && first) log(`starting state: ${describeStartingState(startingState)}`);
    } catch (err) {
      await d.stop();
      throw err;
    }
    return d;
  };
  // The source says how its daemon starts (a mount per node for a cluster), what stops before it, and how many failures of the tool end the run.
  const daemons = new DaemonFixture(startDaemon, () => source.beforeDaemonStop(), log, () => source.maxToolFailures);
  const ctx: GateContext = { o, target, budget, phases, daemons, failures, log, doing: (words) => { doing = words; } };
  const source = sourceOf(ctx);
  try {
    progress.start();
    await daemons.open();
    // A unit that could not restart the daemon after a failure of the tool leaves it lost: the run ends with what it has.
    while (!daemons.lost) {
      const unit = source.next();
      if (!unit) break;
      await unit();
    }
  } finally {
    progress.stop();
    await source.stop();
    await daemons.stop();
  }
  const durationMs = budget.elapsedMs();
  const rows = [...source.rows()];
  const found = failures.values();
  linkOnlyArtifactsThatExist(rows, failures);
  const t = totals(rows, durationMs);
  const floor = checkFloor(rows.map((row) => ({ row, floor: source.floorOf(row) })), budget.untimed);
  const verdict = verdictOf(t, floor);
  const steered = source.steered();
  const cluster = source.clusterCoverage();
  if (o.junitFile) {
    const junitFile = o.junitFile;
    await within(phases.share('artifacts'), async () => {
      await mkdir(path.dirname(path.resolve(junitFile)), { recursive: true });
      await writeFile(junitFile, toJunitXml(rows, durationMs, found, floor));
    });
  }
  const uses = phases.uses();
  // (A test's stand-in target may have no driver.)
  const network = driverNetwork(target.driver?.network);
  const work = source.work();
  const text = [
    formatGateText(rows, found, floor, source.mode, steered, durationMs, cluster),
    ...[formatJudgingShares(source.judgingShares?.() ?? [])].filter((x) => x),
    formatPhases(uses, budget.totalMs),
    repeatLine(o, work, cluster !== undefined),
    `driver network: ${describeDriverNetwork(network)}`,
    ...(target.asksSetup ? [`starting state: ${describeStartingState(startingState)}`] : []),
  ].join('\n');
  return {
    rows, failures: found, steered, durationMs, passed: verdict === 'passed', violations: t.violations, harnessErrors: t.errors, floor, verdict, exitCode: exitCodeOf(verdict), text, phases: uses, driverNetwork: network,
    ...(target.asksSetup ? { startingState } : {}),
    ...(cluster ? { cluster } : {}),
    repeat: work.repeat, interleaved: work.interleaved, inputs: work.inputs,
  };
}

/**
 * What repeats this run anywhere: "same verdict on any machine: --seed S --cases N" where every
 * recording repeats exactly (one disk, no concurrent steps); else the same inputs and work, with how
 * many of them interleave anew (a cluster's nodes, a workload's concurrent steps: a sample).
 */
export function repeatLine(o: Pick<GateOptions, 'seed' | 'cases'>, work: { inputs: number; interleaved: number; repeat: WorkBudget }, cluster: boolean): string {
  const option = `--seed ${o.seed} ${workBudgetOption(work.repeat)}`;
  const how = o.cases ? 'this work budget' : `the ${work.inputs} ${cluster ? 'workload' : 'input'}${work.inputs === 1 ? '' : 's'} this run started, each judged in full`;
  if (work.interleaved === 0) return `same verdict on any machine: ${option} (${how})`;
  const sample = cluster
    ? 'its nodes run concurrently, so each recording interleaves anew and its findings are a sample'
    : `${work.interleaved} of ${work.inputs} input${work.inputs === 1 ? '' : 's'} ran concurrent steps, which interleave anew on each recording: their crash states are a sample`;
  return `same inputs and work on any machine: ${option} (${how}; ${sample})`;
}

/** How many nodes the target runs with the variant's and the forced settings (1: a single disk). */
export function clusterNodes(target: Target, variant: string | undefined, settings: Record<string, unknown> = {}): number {
  return nodeCountOf(target, { ...(variant !== undefined ? target.knownBad[variant]?.settings : {}), ...settings });
}

/**
 * A row's first failure may name an artifact the gate deleted since (a later case of a known
 * signature, or one replaced by its shrunk case): point it at its signature's kept artifact, so
 * the summary, JUnit and index.html link only folders that hold a case.
 */
function linkOnlyArtifactsThatExist(rows: GateRow[], distinct: FailureRegistry): void {
  const exists = (dir: string | undefined) => dir !== undefined && existsSync(path.join(dir, 'case.json'));
  for (const f of distinct.values()) {
    if (!exists(f.artifactDir)) dropArtifactLink(f);
  }
  for (const r of rows) {
    const f = r.failure;
    if (!f || exists(f.artifactDir)) continue;
    const kept = f.key !== undefined ? distinct.get(f.key) : undefined;
    if (kept?.artifactDir) Object.assign(f, artifactLinkOf(kept));
    else dropArtifactLink(f);
  }
}
