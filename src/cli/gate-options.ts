// What `powercut gate` was asked (its options: the help text below), read and checked once, in the
// order a reader meets them: the budget, the queue under test, how it is judged, a cluster's cuts,
// then whether the budget holds a case of every suite. A misuse is a usage error naming the option.
import path from 'node:path';
import { randomInt } from 'node:crypto';
import { parseCommandArgs, parseSettingsOption, usageFail } from './usage.js';
import { ARTIFACTS_ENV, defaultArtifactRoot, DEFAULT_ARTIFACTS_DIR } from '../harness/artifacts.js';
import { assertFuseAvailable } from '../../fusefs/fuse-requirements.js';
import { DEFAULT_STATE_CAPS, DEFAULT_STATE_POLICIES, STATE_POLICIES, type StateCaps, type StatePolicy } from '../../fusefs/crash-states.js';
import { clusterNodes, minimumBudgetMs } from '../gate/gate.js';
import { GATE_EXIT, GROUP_BYS, type GroupBy } from '../gate/gate-report.js';
import type { GateResultOptions } from '../gate/result-json.js';
import type { WorkBudget } from '../gate/budget.js';
import { DEFAULT_RECOVERY_WORKERS } from '../harness/exhaustive/exhaustive-run.js';
import { DEFAULT_GATE_MODE, GATE_MODES, gateSuites, type GateMode } from '../gate/suites.js';
import { checkVariant, DEFAULT_TARGET, resolveTarget, TARGET_NAMES } from '../targets/index.js';
import { MAX_DRIVER_NODES } from '../targets/external.js';
import type { ExternalDriver, Target } from '../harness/target.js';
import { DEFAULT_LIVE_CUTS } from '../gate/cluster-source.js';
import { DRIVER_NETWORK_CHOICES } from '../harness/driver-network.js';
import { DEFAULT_NODES_CUT, isNodesCutChoice, kindsAsked, NODES_CUT_CHOICES, type NodesCutChoice } from '../faults/cut-kinds.js';

export const DEFAULT_TIME_BUDGET_S = 180;

export const help = `usage: powercut gate [options]

The durability gate: runs every crash scenario of the target, then its suites' inputs in turns
until the budget is spent: a time budget, or a work budget (--cases). By default each suite
records generated workloads once and checks every distinct crash state they can produce
(exhaustive mode); --mode random cuts the power at random requests instead. Needs Linux with FUSE
(/dev/fuse, Debian's fuse and libfuse2). See docs/gate.md.

  --time-budget SECONDS  total time (default ${DEFAULT_TIME_BUDGET_S}), held to 10 % (or 10 s) over; the
                         scenarios always run in full, the suites share what is left, each suite its
                         share of the judging time whatever its inputs cost; cause proofs, shrinking
                         and artifacts each stop at their share (docs/gate.md). The summary prints the
                         work budget that runs the same inputs again on any machine
  --cases N              a work budget instead: the scenarios, then exactly N suite inputs in the
                         seeded order (a round gives each suite one), each judged in full within the
                         state caps; causes bounded by probes, shrinking by candidates, never by
                         time, so the same seed gives the same work on any machine, and on one disk
                         the same verdict (a workload with concurrent steps interleaves anew: its
                         states are a sample, and the summary says how many did). A cluster: N
                         workloads. Also --cases SUITE=N,SUITE=N,... (each suite its own count, as a
                         time-budgeted run's summary prints it; a suite left out runs none)
  --slots N              crash states recovered at once (default ${DEFAULT_RECOVERY_WORKERS} on one disk; a cluster: the
                         target's); the verdict under --cases does not depend on it
  --seed N               base seed of the suites (default: random, printed); CI shards give each
                         job its own seed
  --target T             the queue under test: ${TARGET_NAMES.join(', ')} (default ${DEFAULT_TARGET})
  --driver 'CMD ARGS'    put your own queue under test: a driver speaking the driver protocol
                         (docs/driver-protocol.md), run with /bin/sh from this folder
  --nodes N              with --driver: the driver runs a cluster of N nodes (2 to ${MAX_DRIVER_NODES}), one disk
                         each (docs/driver-protocol.md, "Clusters"); the gate then runs it as a
                         cluster target (--nodes-cut, --live-cuts), as replicated-queue
  --network N            with --driver: isolated (default): each driver process (the recording, each
                         recovery slot, each live cut) in a network namespace of its own with only a
                         loopback, where the machine allows one (said at the start and in the summary);
                         host: every driver process on the machine's network (a driver that must reach
                         a server outside its own processes)
  --mode M               ${GATE_MODES.join(' or ')} (default ${DEFAULT_GATE_MODE})
  --variant V            run everything on a known-bad variant of the target, to see the gate catch it
  --settings JSON        target settings forced on every suite input, e.g. '{"checkpointAcks":1}'
  --max-states N         exhaustive mode: crash states checked per recorded run (default ${DEFAULT_STATE_CAPS.maxStates})
  --max-states-per-interval N
                         exhaustive mode: torn states per persistence interval (default ${DEFAULT_STATE_CAPS.maxStatesPerInterval})
  --sector-patterns N    exhaustive mode: seeded torn sector patterns per interval (default ${DEFAULT_STATE_CAPS.sectorPatterns})
                         (a cap that leaves states out is printed in the summary)
  --policy P[,P...]      the crash policies the suites use: ${STATE_POLICIES.join(', ')}, or all of them
                         (default ${DEFAULT_STATE_POLICIES.join(',')}; journaled: an ext4-like journal, docs/fs.md)
  --generation G         steered (default): most of the suites' inputs are small mutations of inputs
                         whose runs reached the features seen least (a page unlinked, a checkpoint
                         renamed...); plain: every input drawn afresh
  --group-by G           cause (default): distinct failures are causes, each the step the program
                         missed (a cause search in exhaustive mode), with its fix, its proof over the
                         recorded run and its reach on ext4 (docs/gate.md); signature: the check,
                         policy and request at the cut, as before causes
  --stop-on-first        each suite stops at its first failure, unshrunk (a quick local loop); by
                         default the gate explores the whole budget, shrinks each new failure and
                         lists every distinct failure (check, policy, request at the cut) with its
                         count and one artifact
  --junit FILE           also write a JUnit XML report to FILE (coverage counts as properties)
  --report DIR           also write an HTML page of the run to DIR/index.html, linking each failure's
                         report.html (docs/report.md)
  --json FILE            also write the whole result as one JSON document to FILE (its schema:
                         docs/gate-result.schema.json; docs/gate.md)
  --nodes-cut K          a cluster target (several nodes, e.g. replicated-queue, nats-jetstream with
                         '{"replicas":3}', or --driver with --nodes): which cuts to check: ${NODES_CUT_CHOICES.join(', ')}
                         (default ${DEFAULT_NODES_CUT}); coordinated: every node at once; one: a single node,
                         the others running on; minority: fewer nodes than a majority (docs/gate.md)
  --live-cuts N          a cluster target: live cuts of each kind per workload, beside its offline
                         crash states (default ${DEFAULT_LIVE_CUTS}; 0: crash states only); its states are
                         lose-unsynced unless --policy adds torn or journaled (each cut node's own outcome)
  --artifacts DIR        where failure artifacts go (default $${ARTIFACTS_ENV}, else ./${DEFAULT_ARTIFACTS_DIR});
                         replay one with 'powercut replay DIR/<artifact>'

Prints a live progress line on a terminal (plain lines every few seconds otherwise) and, at the
end, a summary table with the coverage counts and the floor: what every suite must have reached
(a case judged, a crash state or a landed cut under each policy, a quarter of the lose-unsynced crash
states listed, a fault fired) for a pass, and each phase's share of the budget and time used.

exit codes: ${GATE_EXIT.passed} nothing was violated and the floor was met, ${GATE_EXIT.violation} a violation was found,
            ${GATE_EXIT.usage} usage error (also a --time-budget or --cases too small for a case of every suite),
            ${GATE_EXIT.toolFailed} the tool itself failed (harness errors, no violation),
            ${GATE_EXIT.belowFloor} no violation, but the gate checked too little to pass (the floor names what and the option that raises it)`;

/** The most states a gate recovers at once (--slots). */
const MAX_SLOTS = 256;

/** What `powercut gate` was asked, checked: the gate's inputs and where its outputs go. */
export interface GateCommand {
  /** The run's options, as the --json result records them (the gate runs on them too). */
  readonly options: GateResultOptions;
  readonly seed: number;
  readonly artifactRoot: string;
  readonly target: Target;
  /** Its node count: 1 on one disk. */
  readonly nodes: number;
  /** One disk: its suites' names (a cluster runs none). */
  readonly suites: readonly string[];
  /** Where the outputs besides the terminal go (--junit, --report, --json), as given. */
  readonly junitFile?: string;
  readonly reportDir?: string;
  readonly jsonFile?: string;
}

/** The command line's options, parsed (a misuse of one: a usage error). */
function parseGateArgs(argv: string[]) {
  return parseCommandArgs(
    {
      args: argv,
      options: {
        'time-budget': { type: 'string' },
        cases: { type: 'string' },
        slots: { type: 'string' },
        seed: { type: 'string' },
        target: { type: 'string' },
        driver: { type: 'string' },
        nodes: { type: 'string' },
        network: { type: 'string' },
        mode: { type: 'string' },
        variant: { type: 'string' },
        settings: { type: 'string' },
        'max-states': { type: 'string' },
        'max-states-per-interval': { type: 'string' },
        'sector-patterns': { type: 'string' },
        policy: { type: 'string' },
        generation: { type: 'string' },
        'group-by': { type: 'string' },
        'stop-on-first': { type: 'boolean' },
        junit: { type: 'string' },
        report: { type: 'string' },
        json: { type: 'string' },
        artifacts: { type: 'string' },
        'nodes-cut': { type: 'string' },
        'live-cuts': { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    },
    help,
  ).values;
}

type GateArgs = ReturnType<typeof parseGateArgs>;

/** What `argv` asks, checked; 'help' when it asks for the help text. */
export function gateCommandOf(argv: string[]): GateCommand | 'help' {
  const values = parseGateArgs(argv);
  if (values.help) return 'help';
  const { cases, budgetS } = budgetOf(values);
  const slots = values.slots !== undefined ? integer(values.slots, 'slots', 1, MAX_SLOTS) : undefined;
  const seed = values.seed !== undefined ? integer(values.seed, 'seed', -0x8000_0000, 0x7fff_ffff) : randomInt(0x7fff_ffff);
  const { target, driver, settings } = queueOf(values);
  const judging = judgingOf(values);
  const artifactRoot = values.artifacts !== undefined ? path.resolve(values.artifacts) : defaultArtifactRoot();
  const nodes = clusterNodes(target, values.variant, settings);
  const cuts = clusterCutsOf(values, target, nodes, driver !== undefined, cases);
  assertFuseAvailable();
  const suites = nodes > 1 ? [] : gateSuites(target, judging.mode, undefined, {}, undefined, judging.policies).map((s) => s.name);
  if (nodes === 1) checkBudgetFits(budgetS, cases, suites, values.cases);
  const options: GateResultOptions = {
    ...(driver ? { driver } : { target: target.name }),
    mode: judging.mode,
    ...(values.variant !== undefined ? { variant: values.variant } : {}),
    ...(settings ? { settings } : {}),
    caps: judging.caps,
    ...(judging.policies ? { policies: judging.policies } : {}),
    ...(budgetS !== undefined ? { timeBudgetMs: budgetS * 1000 } : {}),
    ...(cases ? { cases } : {}),
    ...(slots !== undefined ? { slots } : {}),
    stopOnFirst: values['stop-on-first'] === true,
    generation: judging.generation,
    groupBy: judging.groupBy,
    ...(cuts.nodesCut !== undefined ? { nodesCut: cuts.nodesCut } : {}),
    ...(cuts.liveCuts !== undefined ? { liveCuts: cuts.liveCuts } : {}),
  };
  return {
    options, seed, artifactRoot, target, nodes, suites,
    ...(values.junit !== undefined ? { junitFile: values.junit } : {}),
    ...(values.report !== undefined ? { reportDir: values.report } : {}),
    ...(values.json !== undefined ? { jsonFile: values.json } : {}),
  };
}

/** The budget: a work budget (--cases), or a time budget in seconds (--time-budget, default DEFAULT_TIME_BUDGET_S). */
function budgetOf(values: GateArgs): { cases?: WorkBudget; budgetS?: number } {
  if (values.cases !== undefined && values['time-budget'] !== undefined) usageFail('--cases and --time-budget are two budgets; give one (--cases: the same work on any machine; --time-budget: as much as the time allows)', help);
  const cases = values.cases !== undefined ? parseCases(values.cases) : undefined;
  if (cases) return { cases };
  return { budgetS: values['time-budget'] !== undefined ? integer(values['time-budget'], 'time-budget', 1, 7 * 24 * 3600) : DEFAULT_TIME_BUDGET_S };
}

/** The queue under test: a built-in target (--target, --variant) or a driver (--driver, --nodes, --network), with the settings forced on it. */
function queueOf(values: GateArgs): { target: Target; driver?: ExternalDriver; settings?: Record<string, unknown> } {
  if (values.driver !== undefined && values.target !== undefined) usageFail('--driver and --target name the queue under test twice; give one', help);
  if (values.driver !== undefined && values.variant !== undefined) usageFail('--variant names a known-bad variant of a built-in target; for your driver, put the bad behaviour in the command itself', help);
  if (values.nodes !== undefined && values.driver === undefined) usageFail(`--nodes is for a cluster driver (--driver 'CMD ARGS'); a built-in target's node count comes from its settings, e.g. nats-jetstream with --settings '{"replicas":3}'`, help);
  const driverNodes = values.nodes !== undefined ? integer(values.nodes, 'nodes', 2, MAX_DRIVER_NODES) : undefined;
  if (values.network !== undefined && values.driver === undefined) usageFail('--network is for a driver (--driver \'CMD ARGS\'); a built-in target\'s drivers always get a network namespace of their own where the machine allows one', help);
  if (values.network !== undefined && !(DRIVER_NETWORK_CHOICES as readonly string[]).includes(values.network)) usageFail(`--network must be ${DRIVER_NETWORK_CHOICES.join(' or ')}, got '${values.network}'`, help);
  const settings = parseSettingsOption(values.settings, help);
  const driver = values.driver !== undefined ? { command: values.driver, cwd: process.cwd(), ...(driverNodes !== undefined ? { nodes: driverNodes } : {}), ...(values.network === 'host' ? { network: 'host' as const } : {}) } : undefined;
  const target = orUsage(driver ? 'driver' : 'target', () => resolveTarget(driver ? { driver } : { target: values.target ?? DEFAULT_TARGET }, settings));
  if (values.variant !== undefined) orUsage('variant', () => checkVariant(target, values.variant!));
  if (settings) orUsage('settings', () => target.checkSettings({ ...(values.variant !== undefined ? target.knownBad[values.variant].settings : {}), ...settings }));
  return { target, ...(driver ? { driver } : {}), ...(settings ? { settings } : {}) };
}

/** How the cases are made and judged: the mode, the state caps, the crash policies, the inputs' generation, and what makes two failures one. */
function judgingOf(values: GateArgs): { mode: GateMode; caps: Partial<StateCaps>; policies?: StatePolicy[]; generation: 'steered' | 'plain'; groupBy: GroupBy } {
  const mode = (values.mode ?? DEFAULT_GATE_MODE) as GateMode;
  if (!GATE_MODES.includes(mode)) usageFail(`--mode must be one of ${GATE_MODES.join(', ')}, got '${values.mode}'`, help);
  const caps: Partial<StateCaps> = {
    ...(values['max-states'] !== undefined ? { maxStates: integer(values['max-states'], 'max-states', 1, 1_000_000) } : {}),
    ...(values['max-states-per-interval'] !== undefined ? { maxStatesPerInterval: integer(values['max-states-per-interval'], 'max-states-per-interval', 1, 100_000) } : {}),
    ...(values['sector-patterns'] !== undefined ? { sectorPatterns: integer(values['sector-patterns'], 'sector-patterns', 0, 1_000) } : {}),
  };
  const asked = values.policy === undefined ? undefined : values.policy === 'all' ? [...STATE_POLICIES] : values.policy.split(',').map((p) => p.trim());
  for (const p of asked ?? []) if (!(STATE_POLICIES as readonly string[]).includes(p)) usageFail(`--policy takes ${STATE_POLICIES.join(', ')} (several with commas) or all, got '${p}'`, help);
  const policies = asked as StatePolicy[] | undefined;
  const generation = (values.generation ?? 'steered') as 'steered' | 'plain';
  if (generation !== 'steered' && generation !== 'plain') usageFail(`--generation must be steered or plain, got '${generation}'`, help);
  const groupBy = (values['group-by'] ?? 'cause') as GroupBy;
  if (!GROUP_BYS.includes(groupBy)) usageFail(`--group-by must be ${GROUP_BYS.join(' or ')}, got '${values['group-by']}'`, help);
  return { mode, caps, ...(policies ? { policies } : {}), generation, groupBy };
}

/**
 * A cluster's cuts (--nodes-cut, --live-cuts), which only a cluster of `nodes` takes; a cluster takes
 * none of the single-disk options, and a work budget only as a number of workloads.
 */
function clusterCutsOf(values: GateArgs, target: Target, nodes: number, isDriver: boolean, cases: WorkBudget | undefined): { nodesCut?: NodesCutChoice; liveCuts?: number } {
  const nodesCutValue = values['nodes-cut'];
  if (nodesCutValue !== undefined && !isNodesCutChoice(nodesCutValue)) usageFail(`--nodes-cut must be one of ${NODES_CUT_CHOICES.join(', ')}, got '${nodesCutValue}'`, help);
  const nodesCut = nodesCutValue as NodesCutChoice | undefined;
  const liveCuts = values['live-cuts'] !== undefined ? integer(values['live-cuts'], 'live-cuts', 0, 100) : undefined;
  if (nodes === 1 && (nodesCut !== undefined || liveCuts !== undefined)) {
    usageFail(`--${nodesCut !== undefined ? 'nodes-cut' : 'live-cuts'} is for a cluster target; ${isDriver ? 'the driver runs on one disk unless --nodes N says it runs a cluster of N nodes' : `${target.name} runs on one disk with these settings`}`, help);
  }
  if (nodes > 1 && cases && !('total' in cases)) usageFail(`--cases ${values.cases}: a cluster target's work budget is a number of workloads (--cases N), not per suite`, help);
  if (nodes > 1) {
    // A cluster gate judges lose-unsynced crash states and live cuts; the single-disk options do not apply.
    const single = (['mode', 'max-states-per-interval', 'sector-patterns', 'group-by'] as const).find((f) => values[f] !== undefined);
    if (single) usageFail(`--${single} does not apply to a cluster target (${target.name}, ${nodes} nodes): its gate judges offline lose-unsynced crash states and live cuts of each kind (--nodes-cut, --live-cuts)`, help);
    if (kindsAsked(nodesCut ?? DEFAULT_NODES_CUT, nodes).length === 0) usageFail(`--nodes-cut ${nodesCut}: a cluster of ${nodes} nodes has no such cut`, help);
  }
  return { ...(nodesCut !== undefined ? { nodesCut } : {}), ...(liveCuts !== undefined ? { liveCuts } : {}) };
}

/** One disk: a time budget must hold a slice of every suite (`suites`), a work budget an input of each (casesValue: --cases as given). */
function checkBudgetFits(budgetS: number | undefined, cases: WorkBudget | undefined, suites: readonly string[], casesValue: string | undefined): void {
  const leastMs = minimumBudgetMs(suites.length);
  if (budgetS !== undefined && budgetS * 1000 < leastMs) {
    usageFail(`--time-budget ${budgetS} is too small for the gate to judge a case of every suite: its ${suites.length} suites need at least ` +
      `${leastMs / 1000} s (a slice each), besides the scenarios; give --time-budget ${Math.ceil(leastMs / 1000)} or more`, help);
  }
  if (cases) checkCases(cases, suites, casesValue!);
}

/** --cases N, or --cases SUITE=N,SUITE=N,... (a suite's name may hold '/', never ',' or '='). */
function parseCases(value: string): WorkBudget {
  if (/^\d+$/.test(value)) return { total: integer(value, 'cases', 1, 1_000_000) };
  const perSuite: Record<string, number> = {};
  for (const part of value.split(',')) {
    const m = /^([^=]+)=(\d+)$/.exec(part.trim());
    if (!m) usageFail(`--cases takes a number of inputs (--cases 12) or each suite's count (--cases atomic-file/sync=3,faults=5), got '${value}': '${part}' is neither`, help);
    if (perSuite[m[1]] !== undefined) usageFail(`--cases names suite '${m[1]}' twice`, help);
    perSuite[m[1]] = integer(m[2], 'cases', 0, 1_000_000);
  }
  return { perSuite };
}

/**
 * A work budget of N inputs must give every suite one, as a time budget must hold a slice each; a
 * per-suite budget names only suites of this gate (one it leaves out runs no input, and the floor says so).
 */
function checkCases(cases: WorkBudget, suites: readonly string[], value: string): void {
  if ('total' in cases) {
    if (cases.total < suites.length) usageFail(`--cases ${cases.total} is too small for the gate to judge a case of every suite: its ${suites.length} suites (${suites.join(', ')}) need at least one input each; give --cases ${suites.length} or more`, help);
    return;
  }
  const unknown = Object.keys(cases.perSuite).filter((n) => !suites.includes(n));
  if (unknown.length) usageFail(`--cases ${value}: ${unknown.map((n) => `'${n}'`).join(', ')} is not a suite of this gate; its suites: ${suites.join(', ')}`, help);
}

function integer(value: string, flag: string, min: number, max: number): number {
  if (!/^-?\d+$/.test(value) || Number(value) < min || Number(value) > max) usageFail(`--${flag} must be an integer in ${min}..${max}, got '${value}'`, help);
  return Number(value);
}

/** Runs `f`; its error becomes a usage error naming the option. */
function orUsage<T>(flag: string, f: () => T): T {
  try {
    return f();
  } catch (err) {
    usageFail(`--${flag}: ${(err as Error).message}`, help);
  }
}
