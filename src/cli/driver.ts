// powercut driver check [--settings JSON] -- CMD ARGS...: runs a short sequence against a driver on a
// real mount and reports every protocol violation by run and line, before the oracle sees anything.
import { execa } from 'execa';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { majorityOf } from '../faults/cut-kinds.js';
import { ARTIFACTS_ENV, defaultArtifactRoot, DEFAULT_ARTIFACTS_DIR } from '../harness/artifacts.js';
import { killGroup, OWN_PROCESS_GROUP, trackGroup } from '../harness/process-group.js';
import { parseCommandArgs, parseSettingsOption, usageFail, type Command } from './usage.js';
import { startTempDaemon, type DaemonHandle } from '../harness/daemon-process.js';
import { markDir } from '../harness/crash-run.js';
import { withScratch, type DriverCommand } from '../harness/driver-process.js';
import { describeStartingState, prepareStartingState, type StartingState } from '../harness/starting-state.js';
import { describeDriverNetwork, DRIVER_NETWORK_CHOICES, driverNetwork, inDriverNetwork, type DriverNetworkChoice } from '../harness/driver-network.js';
import { checkDriverRun, type ProtocolProblem } from '../harness/protocol-check.js';
import { judge, type RunRecord } from '../harness/oracle.js';
import { contractOf, helloOf, parseOutcomes, type Outcome } from '../harness/outcome.js';
import { describeContract } from '../harness/contract.js';
import { readFileSync } from 'node:fs';
import { HarnessError } from '../harness/harness-error.js';
import { mergeTimeouts, runDriverProcess, type DriverProcessRun } from '../harness/driver-process.js';
import { NODE_EXIT_GRACE_MS, RESTART_TIMEOUT_MS } from '../harness/cluster/node-control.js';
import { checkNodeLines } from '../harness/protocol-check.js';
import type { TraceEntry } from '../../fusefs/protocol.js';
import type { DriverSpec } from '../harness/driver-spec.js';
import type { Workload } from '../harness/workload.js';
import { MAX_DRIVER_NODES } from '../targets/external.js';

export const help = `usage: powercut driver check [--settings JSON] [--nodes N] [--network host] [--out DIR] -- CMD ARGS...

Runs a short sequence against the driver CMD ARGS on a fresh powercut mount (no power cut): its
setup run first (a spec of mode setup: a driver whose engine needs a prepared directory makes its
starting state there, and every run below starts from it; one without exits 2), a
workload run and a drain run with confirmation markers, a malformed spec, and (if its hello line
says it serves) two specs in one process. Reports every violation of the driver protocol
(docs/driver-protocol.md) by run and line: unknown line kinds, missing or ill-typed fields, a first
line that is not hello, seqs or durable counters that go backwards (seqs: in the workload, whose
writes are one at a time; the drain's liveness writes are at once, so their seqs need only differ),
acks without their intent, output after the done or error line, wrong exit codes, markers missing
from the request trace. Then the oracle judges the two runs: an uncut history must pass every check,
judged by the contract the hello line declared (printed: "checked against: ..."). Each run's stdout
and stderr are kept in a folder (printed), and the end of the stderr of a run with problems is
shown.

With --nodes N (2 or more) it checks a cluster driver on N mounts instead (docs/driver-protocol.md,
"Clusters"): a workload run whose spec lists the nodes (one node line per node, naming a process
group of its own that leads a live group, printed before that node's first request and before the
open line), the same workload with node 1 cut in the middle of its requests after the open line
(its group killed, its disk cut) and the driver asked to restart it (its restarted line within
${RESTART_TIMEOUT_MS / 1000} s, the run going on to its done line and exit 0, no node's process left running after
the driver exits), and a drain that the oracle judges with the cut run as one queue; then, with 3
nodes or more, the same with a majority cut at once (the last nodes, node 0 up) and restarted one
by one, each restart answered within ${RESTART_TIMEOUT_MS / 1000} s, and its own drain.

options:
  --settings JSON   the settings the specs carry (default {})
  --nodes N         check a cluster driver on N nodes (N >= 2; default 1, a single-disk driver)
  --network N       isolated (default): each driver process in a network namespace of its own,
                    with only a loopback, as the gate runs it; host: the machine's network (a
                    driver that must reach a server outside its own processes)
  --out DIR         where each run's output is kept (default $${ARTIFACTS_ENV}, else
                    ./${DEFAULT_ARTIFACTS_DIR}, in a driver-check-<time> folder)
  -h, --help

exit codes: 0 the driver follows the protocol, 1 violations found, 2 usage error, 3 the tool itself failed`;

export const TOOL_FAILED_EXIT = 3;

/** The most nodes driver check mounts: as many as the gate runs a driver on. */
const MAX_CHECK_NODES = MAX_DRIVER_NODES;

/** One writer at a time on purpose (a write step of one size): seqs must increase line by line. */
const CHECK_WORKLOAD: Workload = {
  steps: [
    { op: 'write', sizesBytes: [64], waitDurable: true },
    { op: 'write', sizesBytes: [300], waitDurable: true },
    { op: 'write', sizesBytes: [1500], waitDurable: false },
    { op: 'waitDurable' },
    { op: 'read', maxEvents: 2 },
    { op: 'ack', count: 1, order: 'oldest' },
    { op: 'checkpoint' },
    { op: 'reopen' },
    { op: 'read', maxEvents: 5 },
    { op: 'ack', count: 5, order: 'oldest' },
  ],
};
const RUN_TIMEOUT_MS = 30_000;

interface Checked {
  name: string;
  /** 'oracle': the oracle's verdict on the uncut history, not a protocol violation. */
  kind?: 'oracle';
  problems: ProtocolProblem[];
  record?: RunRecord;
  serves?: boolean;
  stdout?: string;
  stderr?: string;
}

const ORACLE_RUN = 'oracle on the uncut history';
const CLUSTER_ORACLE_RUN = 'oracle on the cut run and its drain';

/** Lines of a run's stderr shown with its problems (all of it is in the output folder). */
const STDERR_LINES_SHOWN = 20;

/** The driver `argv` as a command, in the network it gets (a namespace of its own unless `network` is 'host'). */
function commandOf(argv: string[], network: DriverNetworkChoice): DriverCommand {
  return { file: argv[0], args: argv.slice(1), network };
}

/** Starts the driver `argv` with `input` on its stdin, in its network and a process group of its own. */
function startDriver(argv: string[], network: DriverNetworkChoice, input: string) {
  const c = inDriverNetwork(commandOf(argv, network));
  return execa(c.file, c.args, { input, reject: false, stripFinalNewline: false, timeout: RUN_TIMEOUT_MS, ...OWN_PROCESS_GROUP });
}

/** A driver run in a process group of its own: whatever it started (a server) dies with it, as at a cut. */
async function inItsGroup<T>(proc: Promise<T> & { pid?: number }): Promise<T> {
  trackGroup(proc.pid);
  try {
    return await proc;
  } finally {
    await killGroup(proc.pid, RUN_TIMEOUT_MS);
  }
}

/** One run of the driver on `spec` (with a scratch folder, as the harness gives every run); `reset: false` keeps the files of the run before (a drain recovers them). */
async function runOnce(daemon: DaemonHandle, argv: string[], network: DriverNetworkChoice, spec: DriverSpec | string, name: string, reset = true): Promise<Checked> {
  return typeof spec === 'string' ? runOnceWith(daemon, argv, network, spec, name, reset) : withScratch(spec, (s) => runOnceWith(daemon, argv, network, s, name, reset));
}

async function runOnceWith(daemon: DaemonHandle, argv: string[], network: DriverNetworkChoice, spec: DriverSpec | string, name: string, reset: boolean): Promise<Checked> {
  if (reset) await daemon.client.reset();
  const marksBefore = reset ? 0 : (await daemon.client.traceWithMarks()).marks.length;
  const input = typeof spec === 'string' ? spec : JSON.stringify(spec) + '\n';
  const r = await inItsGroup(startDriver(argv, network, input));
  const stdout = typeof r.stdout === 'string' ? r.stdout : '';
  const stderr = typeof r.stderr === 'string' ? r.stderr : '';
  const out = { name, stdout, stderr };
  if (r.failed && r.exitCode === undefined) {
    const why = r.timedOut ? `did not finish within ${RUN_TIMEOUT_MS} ms` : r.message;
    return { ...out, problems: [{ line: 0, message: `the driver ${why}` }] };
  }
  if (typeof spec === 'string') {
    // A spec it cannot read: exit 2, nothing on stdout, the reason on stderr.
    const problems: ProtocolProblem[] = [];
    if (r.exitCode !== 2) problems.push({ line: 0, message: `a malformed spec must exit 2 (usage), got exit ${r.exitCode}` });
    if (stdout.trim() !== '') problems.push({ line: 1, message: `a malformed spec must print nothing on stdout, got: ${stdout.trim().slice(0, 120)}` });
    if (stderr.trim() === '') problems.push({ line: 0, message: 'a malformed spec must say on stderr what is wrong' });
    return { ...out, problems };
  }
  const marks = spec.mark ? (await daemon.client.traceWithMarks()).marks.length - marksBefore : undefined;
  if (stdout === '') return { ...out, problems: [{ line: 0, message: `the driver printed nothing and exited with code ${r.exitCode}` }] };
  // The workload writes one event at a time; a drain's liveness writes are at once.
  const problems = checkDriverRun({ stdout, exitCode: r.exitCode, sequential: spec.mode === 'workload', ...(marks !== undefined ? { marks } : {}) });
  if (problems.length > 0) return { ...out, problems };
  const outcomes = parseOutcomes(stdout, name);
  return {
    ...out,
    problems,
    serves: helloOf(outcomes)?.serves === true,
    record: { role: spec.mode, outcomes, exitCode: r.exitCode ?? null, killed: false, hung: false, failedRequests: [] },
  };
}

/** Two specs on one stdin: a serving driver runs both and ends each with its done line. */
async function checkServes(argv: string[], network: DriverNetworkChoice, spec: DriverSpec): Promise<Checked> {
  const input = `${JSON.stringify(spec)}\n${JSON.stringify({ ...spec, idBase: spec.idBase + 1000 })}\n`;
  const r = await inItsGroup(startDriver(argv, network, input));
  const ends = String(r.stdout).split('\n').filter((l) => /"t"\s*:\s*"(done|error)"/.test(l)).length;
  const problems = ends === 2 && r.exitCode === 0 ? [] : [{ line: 0, message: `its hello says "serves": true, but two specs on one stdin gave ${ends} done/error lines and exit ${r.exitCode} (expected 2 and exit 0)` }];
  return { name: 'serving two specs', problems, stdout: String(r.stdout), stderr: String(r.stderr) };
}

/** The driver check's sequence on a running daemon: each run's problems and output. */
export async function checkDriver(daemon: DaemonHandle, cmd: string[], settings: Record<string, unknown>, network: DriverNetworkChoice = 'isolated'): Promise<Checked[]> {
  const results: Checked[] = [];
  const base = { dir: daemon.mountpoint, settings, mark: markDir(daemon) };
  const workload = await runOnce(daemon, cmd, network, { ...base, mode: 'workload', workload: CHECK_WORKLOAD, idBase: 0 }, 'workload run');
  results.push(workload);
  // The drain recovers what the workload left on the mount.
  const drain = await runOnce(daemon, cmd, network, { ...base, mode: 'drain', idBase: 1_000_000 }, 'drain run', false);
  results.push(drain);
  results.push(await runOnce(daemon, cmd, network, '{"mode":"fly"}\n', 'malformed spec'));
  if (workload.serves) results.push(await checkServes(cmd, network, { dir: daemon.mountpoint, settings, mode: 'drain', idBase: 2_000_000 }));
  if (workload.record && drain.record) {
    const violations = judge({ target: 'external', faultsInjected: false, runs: [{ ...workload.record, killed: true }, drain.record] });
    results.push({ name: ORACLE_RUN, kind: 'oracle', problems: violations.map((v) => ({ line: 0, message: v.message })) });
  }
  return results;
}

/** The cluster check's workload: short, with writes enough that node 1's cut comes in the middle of it. */
const CLUSTER_WORKLOAD: Workload = {
  steps: [
    { op: 'write', sizesBytes: [64], waitDurable: true },
    { op: 'write', sizesBytes: [300], waitDurable: true },
    { op: 'read', maxEvents: 2 },
    { op: 'ack', count: 1, order: 'oldest' },
    { op: 'write', sizesBytes: [200], waitDurable: true },
    { op: 'read', maxEvents: 2 },
    { op: 'ack', count: 2, order: 'oldest' },
    { op: 'write', sizesBytes: [100], waitDurable: true },
  ],
};
/** The node the cluster check cuts and asks to restart. */
const CUT_NODE = 1;

/** A node line's pgid must lead a live process group of its own while the run goes on. */
function groupProblem(node: number, pgid: number): string | null {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pgid}/stat`, 'utf8');
  } catch {
    return `node ${node}'s pgid ${pgid} names no running process when its node line is read: print the pgid of the server it started (its own group's leader), while it runs`;
  }
  const pgrp = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[2]);
  return pgrp === pgid ? null : `node ${node}'s pgid ${pgid} is not a process group: process ${pgid} is in group ${pgrp}; start the server in a group of its own (setsid, or spawn with detached) and print that group's id`;
}

/** A cut of a cluster check: these nodes lose power at request `atOp` of the first of them. */
interface CheckCut {
  nodes: readonly number[];
  atOp: number;
}

/** One run of a cluster driver, its protocol and node-line problems; `cut`: its nodes are cut, then the driver is asked to restart each in turn. */
async function clusterRun(daemon: DaemonHandle, cmd: DriverCommand, spec: DriverSpec, name: string, cut: CheckCut | null, restartMs: number): Promise<Checked & { trace?: TraceEntry[]; openAfterOp?: number }> {
  await daemon.client.reset();
  if (cut !== null) await daemon.client.arm({ atOp: cut.atOp, node: cut.nodes[0], timing: 'before' });
  const problems: ProtocolProblem[] = [];
  const lines: { line: number; o: Outcome }[] = [];
  let run: DriverProcessRun;
  try {
    run = await runDriverProcess(daemon, cmd, spec, mergeTimeouts({ runMs: RUN_TIMEOUT_MS }), cut === null ? undefined : async (control) => {
      control.killNodes(cut.nodes);
      await daemon.client.crash('lose-unsynced', 0, [...cut.nodes]);
      await control.reap(cut.nodes);
      // Each restart must be answered within restartMs (the documented bound): restart() throws past it.
      for (const k of cut.nodes) await control.restart(k);
    }, {
      restartMs,
      onLine: (o, line) => {
        lines.push({ line, o });
        if (o.t !== 'node') return;
        const p = groupProblem(o.node, o.pgid);
        if (p) problems.push({ line, message: p });
      },
    });
  } catch (err) {
    if (!(err instanceof HarnessError)) throw err;
    if (cut !== null) await daemon.client.disarm().catch(() => {});
    return { name, problems: [...problems, { line: 0, message: err.message }] };
  }
  const { trace, marks } = await daemon.client.traceWithMarks();
  if (cut !== null && run.frozenAt === null) {
    await daemon.client.disarm();
    problems.push({ line: 0, message: `the run ended before node ${cut.nodes[0]}'s request ${cut.atOp}, which the uncut run reached: the cut was not made` });
  }
  problems.push(...checkDriverRun({ stdout: run.stdout, exitCode: run.record.exitCode ?? undefined, sequential: spec.mode === 'workload', marks: marks.length }));
  problems.push(...checkNodeLines({ nodeCount: spec.nodes!.length, lines, marks, trace, driverPgid: run.pgid, ...(cut !== null ? { restartsAsked: cut.nodes } : {}) }));
  for (const k of run.nodesLeft) problems.push({ line: 0, message: `node ${k}'s processes were still running ${NODE_EXIT_GRACE_MS} ms after the driver exited: stop every node's server before exiting (a server should also exit when its stdin, the driver's pipe, closes)` });
  problems.sort((a, b) => a.line - b.line);
  const openLine = lines.find(({ o }) => o.t === 'open')?.line;
  const openAfterOp = openLine === undefined ? undefined : marks.find((m) => m.n === openLine)?.afterOp;
  return { name, problems, stdout: run.stdout, stderr: run.stderr, record: run.record, trace, ...(openAfterOp !== undefined ? { openAfterOp } : {}) };
}

/**
 * Where a cut of `node` lands in the middle of the run: half way through its requests after the
 * cluster opened (a cut during startup tests only the open), counted as the daemon arms a node's
 * cut (that node's requests). Null when the node made no request after the open line.
 */
function midRunCut(trace: readonly TraceEntry[], openAfterOp: number, node: number): number | null {
  const mine = trace.filter((e) => (e.node ?? 0) === node);
  const before = mine.filter((e) => e.op <= openAfterOp).length;
  const after = mine.length - before;
  return after === 0 ? null : before + Math.ceil(after / 2);
}

/** The nodes a majority cut takes: the last majority of them (node 0 stays up when it can), or none when a majority is every node. */
function majorityCutNodes(nodeCount: number): number[] {
  const majority = majorityOf(nodeCount);
  return majority >= nodeCount ? [] : Array.from({ length: majority }, (_, i) => nodeCount - majority + i);
}

/**
 * The cluster driver check on a daemon serving N nodes: an uncut workload (node lines, groups,
 * markers); the same workload with node 1 cut in the middle of its requests after the cluster
 * opened and restarted on request (its restarted line within `restartMs`, the run going on to a
 * clean end, no node left running), and a drain judged with it by the oracle as one queue; then
 * (with 3 nodes or more) the same with a majority cut at once, restarted one by one.
 */
export async function checkClusterDriver(daemon: DaemonHandle, argv: string[], settings: Record<string, unknown>, restartMs = RESTART_TIMEOUT_MS, network: DriverNetworkChoice = 'isolated'): Promise<Checked[]> {
  const cmd = commandOf(argv, network);
  const dirs = daemon.mountpoints;
  const spec = (mode: DriverSpec['mode'], idBase: number): DriverSpec => ({ dir: dirs[0], nodes: dirs.map((dir, node) => ({ node, dir })), settings, mode, idBase, mark: markDir(daemon), ...(mode === 'workload' ? { workload: CLUSTER_WORKLOAD } : {}) });
  const results: (Checked & { trace?: TraceEntry[] })[] = [];
  const uncut = await clusterRun(daemon, cmd, spec('workload', 0), 'cluster workload run', null, restartMs);
  results.push(uncut);
  const atOp = uncut.trace ? midRunCut(uncut.trace, uncut.openAfterOp ?? 0, CUT_NODE) : null;
  if (uncut.trace && atOp === null) {
    uncut.problems.push({ line: 0, message: `node ${CUT_NODE} made no request of its disk in the workload run after its open line (nothing to cut it at mid-run): does the driver start a server on every node's dir of the spec, and send it the workload's writes?` });
  }
  if (uncut.problems.length > 0 || atOp === null) return results;
  const cuts: { cut: CheckCut; run: string; drain: string; oracle: string }[] = [
    { cut: { nodes: [CUT_NODE], atOp }, run: `workload run with node ${CUT_NODE}'s cut and restart`, drain: 'cluster drain run', oracle: CLUSTER_ORACLE_RUN },
  ];
  const majority = majorityCutNodes(dirs.length);
  const majorityAt = majority.length > 0 ? midRunCut(uncut.trace ?? [], uncut.openAfterOp ?? 0, majority[0]) : null;
  if (majorityAt !== null) {
    cuts.push({ cut: { nodes: majority, atOp: majorityAt }, run: `workload run with a majority (nodes ${majority.join(', ')}) cut and restarted`, drain: 'drain after the majority cut', oracle: 'oracle on the majority cut run and its drain' });
  }
  for (const c of cuts) {
    const cut = await clusterRun(daemon, cmd, spec('workload', 0), c.run, c.cut, restartMs);
    results.push(cut);
    if (cut.problems.length > 0) return results;
    // The drain recovers what the cut run left on every node (the daemon keeps it: no reset).
    const drainProblems: ProtocolProblem[] = [];
    let drain: DriverProcessRun | null = null;
    try {
      drain = await runDriverProcess(daemon, cmd, spec('drain', 1_000_000), mergeTimeouts({ runMs: RUN_TIMEOUT_MS }));
      drainProblems.push(...checkDriverRun({ stdout: drain.stdout, exitCode: drain.record.exitCode ?? undefined, sequential: false }));
    } catch (err) {
      if (!(err instanceof HarnessError)) throw err;
      drainProblems.push({ line: 0, message: err.message });
    }
    results.push({ name: c.drain, problems: drainProblems, ...(drain ? { stdout: drain.stdout, stderr: drain.stderr } : {}) });
    if (!drain || drainProblems.length > 0 || !cut.record) return results;
    const violations = judge({ target: 'external', faultsInjected: false, runs: [cut.record, drain.record] });
    results.push({ name: c.oracle, kind: 'oracle', problems: violations.map((v) => ({ line: 0, message: v.message })) });
    if (violations.length > 0) return results;
  }
  return results;
}

/** Keeps each run's stdout and stderr under `dir`: a driver author reads what the driver said. */
async function keepOutput(dir: string, results: readonly Checked[]): Promise<void> {
  await mkdir(dir, { recursive: true });
  for (const r of results) {
    const file = r.name.replace(/[^a-z0-9]+/gi, '-');
    if (r.stdout !== undefined) await writeFile(path.join(dir, `${file}.stdout.txt`), r.stdout);
    if (r.stderr !== undefined) await writeFile(path.join(dir, `${file}.stderr.txt`), r.stderr);
  }
}

export const run: Command = async (argv) => {
  const { values, positionals } = parseCommandArgs({ args: argv, allowPositionals: true, options: { settings: { type: 'string' }, nodes: { type: 'string' }, network: { type: 'string' }, out: { type: 'string' }, help: { type: 'boolean', short: 'h' } } }, help);
  if (values.help) {
    console.log(help);
    return 0;
  }
  const [sub, ...cmd] = positionals;
  if (sub !== 'check') usageFail(sub === undefined ? 'missing subcommand: check' : `unknown subcommand '${sub}': expected check`, help);
  if (cmd.length === 0) usageFail('driver check needs the driver command after --, e.g. powercut driver check -- python3 driver.py', help);
  const settings = parseSettingsOption(values.settings, help) ?? {};
  const outDir = path.resolve(values.out ?? path.join(defaultArtifactRoot(), `driver-check-${new Date().toISOString().replace(/[:.]/g, '-')}`));
  const nodes = values.nodes === undefined ? 1 : Number(values.nodes);
  if (!Number.isInteger(nodes) || nodes < 1 || nodes > MAX_CHECK_NODES) usageFail(`--nodes must be a whole number of nodes from 1 to ${MAX_CHECK_NODES}, got '${values.nodes}'`, help);
  const network = (values.network ?? 'isolated') as DriverNetworkChoice;
  if (!DRIVER_NETWORK_CHOICES.includes(network)) usageFail(`--network must be ${DRIVER_NETWORK_CHOICES.join(' or ')}, got '${values.network}'`, help);
  const fixture = await startTempDaemon('driver-check', nodes);
  let results: Checked[] | undefined;
  let starting: StartingState | null | undefined;
  try {
    // Its setup first (a spec of mode setup): every run below starts from the starting state it makes.
    try {
      starting = await prepareStartingState(fixture.daemon, commandOf(cmd, network), settings);
    } catch (err) {
      if (!(err instanceof HarnessError)) throw err;
      results = [{ name: 'setup run', problems: [{ line: 0, message: err.message }] }];
    }
    results ??= nodes > 1 ? await checkClusterDriver(fixture.daemon, cmd, settings, RESTART_TIMEOUT_MS, network) : await checkDriver(fixture.daemon, cmd, settings, network);
  } finally {
    await fixture.stop();
  }
  await keepOutput(outDir, results);
  let protocol = 0;
  let oracle = 0;
  for (const r of results) {
    for (const p of r.problems) {
      if (r.kind === 'oracle') oracle++;
      else protocol++;
      console.log(`${r.name}${p.line > 0 ? `, line ${p.line}` : ''}: ${p.message}`);
    }
    const tail = r.stderr?.trim().split('\n').slice(-STDERR_LINES_SHOWN);
    if (r.problems.length > 0 && tail && tail[0] !== '') console.log(`${r.name}: the end of its stderr:\n  ${tail.join('\n  ')}`);
  }
  // What the oracle judged the runs by: the contract the driver's hello line declared (docs/driver-protocol.md, "The contract").
  const contract = results.map((r) => (r.record ? contractOf(r.record.outcomes) : undefined)).find((c) => c !== undefined);
  if (contract) console.log(`checked against: ${describeContract(contract)} (the contract its hello line declared)`);
  console.log(`driver network: ${describeDriverNetwork(driverNetwork(network))}`);
  if (starting !== undefined) console.log(`starting state: ${describeStartingState(starting)}`);
  console.log(`the output of each run is kept in ${outDir}`);
  const plural = (n: number, what: string) => `${n} ${what}${n === 1 ? '' : 's'}`;
  if (protocol === 0 && oracle === 0) console.log(`ok: '${cmd.join(' ')}' follows the driver protocol (${results.map((r) => r.name).join(', ')})`);
  else {
    console.log([
      protocol > 0 ? `${plural(protocol, 'protocol violation')} found` : 'the driver follows the protocol',
      ...(oracle > 0 ? [`but the oracle failed its uncut history with ${plural(oracle, 'violation')} (no power cut: a bug of the queue, or a contract that promises more than it does; docs/driver-protocol.md, "The contract")`] : []),
    ].join(', '));
  }
  return protocol === 0 && oracle === 0 ? 0 : 1;
};
