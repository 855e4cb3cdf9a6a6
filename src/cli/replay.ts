// `powercut replay DIR`: re-runs a failure artifact exactly and says whether it reproduces.
import path from 'node:path';
import { DEFAULT_REPLAY_RERUNS, isClusterCase, readArtifact, replayModeOf, type ClusterArtifactCase, type StoredArtifact } from '../harness/artifacts.js';
import { MAX_STATES_PER_RERUN, replayCluster } from './replay-cluster.js';
import { HarnessError } from '../harness/harness-error.js';
import { explainCase } from '../harness/exhaustive/exhaustive-run.js';
import { formatOpenResult, openArtifactReport } from '../report/index.js';
import { proofHolds, type Cause, type CauseProof } from '../harness/cause/cause.js';
import { reproveStoredCause, storedClusterState } from '../harness/cluster/explain-stored.js';
import { causeOfCase } from '../harness/cause/of-case.js';
import { EXPLAIN_BOUNDS, type ExplainOptions } from '../harness/exhaustive/explain.js';
import { mergeTimeouts } from '../harness/driver-process.js';
import { useStoredStartingState } from '../harness/starting-state.js';
import type { Violation } from '../harness/oracle.js';
import type { FailedCase } from '../harness/failure-signature.js';
import type { Target } from '../harness/target.js';
import { assertSingleDisk, checkVariant, nodeCountOf, resolveTarget, targetName } from '../targets/index.js';
import { parseCommandArgs, usageFail, type Command } from './usage.js';
import { compareRerun, describeImagesVerdict, formatSample, MAX_REPLAY_RERUNS, REPLAY_EXIT, sampleExit, tallySample, verdictOf, type RerunVerdict } from './replay-verdict.js';
import { indent, printRecorded, recoverStoredImage, rerunWhole, withReplayDaemon, type Rerun } from './replay-disk.js';

export { compareRerun, REPLAY_EXIT } from './replay-verdict.js';
export { withReplayDaemon } from './replay-disk.js';

export const TOOL_FAILED_EXIT = REPLAY_EXIT.toolFailed;

export const help = `usage: powercut replay DIR [--reruns K] [--open] [--trace-lines N] [--driver 'CMD ARGS']

Re-runs the crash case stored in the artifact folder DIR (written by the suites, the scenarios or
the gate when a check failed) on a fresh mount: same target, workload, settings, variant, crash
point, policy, seed and faults. Prints the recorded violation, the trace with the power cut
marked, the files that differ between the live and the durable image at the cut, then what the
re-run found. It also replays the recovery alone from the stored post-crash image (the exact disk
state the failed recovery saw): that tells whether the recovery code still fails on the damaged
disk, which it may even after a fix of the code that wrote it.

Exact or a sample. A case whose requests one process issues in one order re-runs exactly: one
re-run, whose verdict is the verdict. A case whose requests run concurrently (a cluster's nodes, or
a workload with a concurrently step) interleaves them anew in every run, so a re-run is a sample:
replay re-runs it K times (--reruns, default ${DEFAULT_REPLAY_RERUNS}) and says "reproduced in k of K re-runs", never
that one re-run must repeat the recorded verdict. Stored images are recovered exactly either way.

A cluster's artifact (its case.json names "nodes") re-runs on a fresh daemon serving one mount per
node. Stored images of every node (a crash state's, or a coordinated live cut's:
images/cut-0-after-crash/node0, node1, ...) are recovered alone first, natively. Then each re-run
records the workload again and judges the same state (else the states cutting the same nodes,
nearest the recorded request first, to the first that fails; at most ${MAX_STATES_PER_RERUN} a re-run), or runs a live cut again: the same request, the same nodes cut,
restarted while the run goes on (a live cut of some nodes stores each cut node's disk at the cut,
to look at: the other nodes ran on, so only a re-run judges it).

options:
  --reruns K        re-runs of a sampled case, 1..${MAX_REPLAY_RERUNS} (default ${DEFAULT_REPLAY_RERUNS}); an exact case re-runs once
  --open            write the artifact's report.html, print its path, and open it in a browser
                    where one is available (a display and xdg-open); then replay as usual
  --trace-lines N   print at most N trace lines before the cut (default 40; 0 = all)
  --driver 'CMD ARGS'
                    for an artifact of an external driver: run this command (from this folder)
                    instead of the one stored in case.json (e.g. the folder came from another machine)
  -h, --help        this text

exit status: of an exact case, from its one full re-run (the current code end to end); of a sample,
from the stored images and the K re-runs together:
  ${REPLAY_EXIT.reproduced}  reproduced: the re-run (a sample: the stored images or any re-run) fails only checks
     the artifact recorded
  ${REPLAY_EXIT.passesNow}  passes now: the re-run (a sample: the stored images and every re-run) found no violation
     (fixed; a sample that never reproduced may also need another interleaving)
  ${REPLAY_EXIT.different}  a different violation (a check the artifact did not record), and nothing reproduced
  ${REPLAY_EXIT.usage}  usage error or unreadable artifact
  ${REPLAY_EXIT.toolFailed}  the tool itself failed during a re-run (harness error)`;


/** The artifact stored in `dir`; an unreadable one is a usage error naming what is wrong. */
export async function readArtifactOrUsage(dir: string, help: string): Promise<StoredArtifact> {
  try {
    return await readArtifact(dir);
  } catch (err) {
    usageFail((err as Error).message, help);
  }
}

/**
 * The target an artifact's case names, checked (a usage error naming case.json if it is unknown) and
 * its environment too. A cluster's artifact only where `cluster` is 'allow' (replay): single-disk
 * machinery (explain's cause search) refuses it, saying so.
 */
export function artifactTarget(artifact: StoredArtifact, dir: string, help: string, cluster: 'allow' | 'refuse' = 'refuse'): Target {
  let target: Target;
  try {
    const c = artifact.case;
    // A cluster driver's node count is the case's (a case.json written by hand may give it only there).
    if (c.driver && isClusterCase(c) && c.driver.nodes === undefined) c.driver = { ...c.driver, nodes: c.nodes };
    target = resolveTarget(c, c.settings);
    if (artifact.case.variant !== undefined) checkVariant(target, artifact.case.variant);
    const settings = { ...(artifact.case.variant !== undefined ? target.knownBad[artifact.case.variant].settings : {}), ...artifact.case.settings };
    if (isClusterCase(artifact.case)) {
      if (cluster === 'refuse') throw new Error(`a cluster's artifact (${artifact.case.nodes} nodes): this command re-records on one disk; a cluster's run is not stored in its artifact, so its cause is the one the gate searched (cause.json, which 'powercut explain' prints; --again searches a new recording), and 'powercut replay' re-runs it`);
      if (nodeCountOf(target, settings) !== artifact.case.nodes) throw new Error(`nodes is ${artifact.case.nodes}, but target ${target.name} runs ${nodeCountOf(target, settings)} node(s) with these settings`);
    } else assertSingleDisk(target, settings, 'this artifact (it names no nodes)');
  } catch (err) {
    usageFail(`${path.join(dir, 'case.json')}: ${(err as Error).message}`, help);
  }
  target.checkEnvironment?.();
  return target;
}

/**
 * A failed case's cause: a fault's that fired, or damage's read at recovery, as the case records it;
 * else its crash state searched in a recording made again on a fresh mount.
 */
export async function causeOfFailed(failed: FailedCase & { dir?: string }, target: Target, explain: ExplainOptions): Promise<Cause | undefined> {
  if (failed.case.recoveryFaults?.length || failed.runs.some((r) => r.failedRequests.length > 0)) return causeOfCase(failed);
  return withReplayDaemon(undefined, async (d) => {
    // Recorded again from the starting state its case started from (its artifact's), as the gate did.
    if (failed.dir) await useStoredStartingState(d, failed.dir);
    return explainCase(d, target, failed, explain);
  });
}

/** Whether the artifact's cause still holds: the recorded state explained again (a fault's cause read off the re-run). */
async function causeNow(artifact: StoredArtifact, was: Cause, target: Target, rerun: Rerun): Promise<string> {
  let now: Cause | undefined;
  try {
    // A crash state's re-run keeps only its violations: the recorded case stands for it.
    const failed = rerun.case && rerun.runs && rerun.cuts ? { case: rerun.case, runs: rerun.runs, cuts: rerun.cuts, violations: rerun.violations }
      : { case: artifact.case, runs: artifact.runs, cuts: artifact.cuts, violations: rerun.violations };
    now = await causeOfFailed(failed, target, { ...EXPLAIN_BOUNDS, checkReach: () => false });
  } catch (err) {
    return `  could not check the cause (the tool failed): ${err instanceof HarnessError ? err.message : String(err)}`;
  }
  if (!now) return `  the cause recorded (${was.title}): not checked, the recorded state does not fail the same way when recorded again`;
  return now.key === was.key ? `  the cause still holds: ${was.title}\n  fix: ${now.fix}` : `  the cause has changed: it was ${was.title}, it is now ${now.title}\n  fix: ${now.fix}`;
}

/**
 * Whether a cluster state's named cause still holds: its fix applied to the run the artifact keeps
 * and the state recovered under it (a re-recording interleaves anew and has other request numbers).
 */
async function clusterCauseNow(artifact: StoredArtifact, was: Cause, target: Target): Promise<string> {
  if (was.kind === 'not-isolated') return `  no cause was named (${was.title}): powercut explain searches the state again on its stored run`;
  if (!was.step) return `  the cause recorded (${was.title}) was proven by the search's probes, with no fix to apply again: powercut explain searches the state again on its stored run`;
  const stored = storedClusterState(artifact);
  if (!stored) return `  the cause recorded (${was.title}): not checked (a cluster's cause is checked on the run its artifact keeps, recording/, and this one keeps none)`;
  let proof: CauseProof | undefined;
  try {
    proof = await reproveStoredCause(target, stored, was, mergeTimeouts(), Date.now() + EXPLAIN_BOUNDS.bound.maxMs);
  } catch (err) {
    return `  could not check the cause (the tool failed): ${err instanceof HarnessError ? err.message : String(err)}`;
  }
  if (!proof) return `  the cause recorded (${was.title}): not checked (its fix is not one a cluster's proof applies to this state)`;
  return proofHolds(proof) && proof.curesOwnState
    ? `  the cause still holds on the stored run: ${was.title} (its fix, applied to the recording, makes the state pass; the recovery is a sample)\n  fix: ${was.fix}`
    : `  the cause no longer holds on the stored run: with its fix the state still fails (${proof.stillFailing.join('; ') || 'or a state that passed fails'}); powercut explain searches it again`;
}

/** Parses --reruns: a count of re-runs in 1..MAX_REPLAY_RERUNS. */
function rerunsOf(value: string | undefined): number {
  if (value === undefined) return DEFAULT_REPLAY_RERUNS;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > MAX_REPLAY_RERUNS) usageFail(`--reruns must be an integer from 1 to ${MAX_REPLAY_RERUNS}, got ${value}`, help);
  return n;
}

/** What the command line asks: the artifact folder, and how to replay it; 'help' for the help text. */
function replayArgsOf(argv: string[]): { dir: string; traceLines: number; reruns: number; open: boolean; driver?: string } | 'help' {
  const parsed = parseCommandArgs({ args: argv, allowPositionals: true, options: { reruns: { type: 'string' }, open: { type: 'boolean' }, 'trace-lines': { type: 'string' }, driver: { type: 'string' }, help: { type: 'boolean', short: 'h' } } }, help);
  if (parsed.values.help) return 'help';
  if (parsed.positionals.length !== 1) usageFail('replay needs exactly one artifact folder', help);
  const traceLines = parsed.values['trace-lines'] === undefined ? 40 : Number(parsed.values['trace-lines']);
  if (!Number.isInteger(traceLines) || traceLines < 0) usageFail(`--trace-lines must be an integer >= 0, got ${parsed.values['trace-lines']}`, help);
  const reruns = rerunsOf(parsed.values.reruns);
  const driver = parsed.values.driver;
  return { dir: path.resolve(parsed.positionals[0]), traceLines, reruns, open: parsed.values.open === true, ...(driver !== undefined ? { driver } : {}) };
}

/** --driver: an external driver's artifact re-runs this command instead of the one its case.json stores. */
function useDriver(artifact: StoredArtifact, dir: string, command: string): void {
  if (!artifact.case.driver) usageFail(`--driver: ${dir} is an artifact of target ${targetName(artifact.case)}, not of an external driver`, help);
  // The command changes, the cluster it runs and its network do not.
  const { nodes, network } = artifact.case.driver;
  artifact.case.driver = { command, cwd: process.cwd(), ...(nodes !== undefined ? { nodes } : {}), ...(network !== undefined ? { network } : {}) };
}

export const run: Command = async (argv) => {
  const args = replayArgsOf(argv);
  if (args === 'help') {
    console.log(help);
    return 0;
  }
  const { dir, traceLines, reruns } = args;
  const artifact = await readArtifactOrUsage(dir, help);
  if (args.driver !== undefined) useDriver(artifact, dir, args.driver);
  const target = artifactTarget(artifact, dir, help, 'allow');
  const mode = replayModeOf(artifact.case);

  if (args.open) {
    try {
      console.log(formatOpenResult(await openArtifactReport(dir)));
    } catch (err) {
      console.log(`could not write the report: ${(err as Error).message}`);
    }
  }
  if (isClusterCase(artifact.case)) {
    let replay: Awaited<ReturnType<typeof replayCluster>>;
    try {
      replay = await replayCluster(artifact as StoredArtifact & { case: ClusterArtifactCase }, target, traceLines, reruns);
    } catch (err) {
      console.log(`TOOL FAILED during the re-run (not a verdict on the queue): ${err instanceof Error ? err.message : String(err)}`);
      return REPLAY_EXIT.toolFailed;
    }
    // A tool failure's artifact recorded no violation to reproduce: its images have no verdict.
    const images = replay.images && !artifact.harnessError ? verdictOf(artifact.violations, replay.images) : undefined;
    return verdictOfSample(artifact, images, 'the stored images', replay.reruns.map((violations) => ({ violations })), mode.why, target);
  }
  await printRecorded(artifact, dir, mode, reruns, traceLines);
  const images = await recoverStoredImage(artifact, dir, target, mode.mode === 'exact');
  let results: Rerun[];
  try {
    results = await rerunWhole(artifact, target, mode.mode, reruns);
  } catch (err) {
    console.log(`TOOL FAILED during the re-run (not a verdict on the queue): ${err instanceof HarnessError ? err.message : String(err)}`);
    return REPLAY_EXIT.toolFailed;
  }
  if (mode.mode === 'sample') return verdictOfSample(artifact, images, 'the stored post-crash image', results, mode.why, target);
  const verdict = verdictOfRerun(artifact, results[0].violations);
  if (verdict === REPLAY_EXIT.reproduced && artifact.cause) console.log(await causeNow(artifact, artifact.cause, target, results[0]));
  return verdict;
};

/**
 * Says what a sample found: the stored images' exact verdict (if there were images), the re-runs
 * tallied "reproduced in k of K", the cause of the first that reproduced checked again; returns the exit status.
 */
async function verdictOfSample(artifact: StoredArtifact, images: RerunVerdict | undefined, imagesWhat: string, reruns: readonly Rerun[], why: string, target: Target): Promise<number> {
  const tally = tallySample(artifact.violations, reruns.map((r) => r.violations));
  console.log('');
  if (images) console.log(describeImagesVerdict(images, imagesWhat));
  console.log(formatSample(tally, why));
  // A cluster state's cause is checked on the run its artifact keeps, whose state its stored images are.
  if (artifact.cause && isClusterCase(artifact.case) && artifact.case.state) {
    if (images === 'reproduced') console.log(await clusterCauseNow(artifact, artifact.cause, target));
  } else if (tally.firstReproduced !== undefined && artifact.cause) console.log(await causeNow(artifact, artifact.cause, target, reruns[tally.firstReproduced]));
  return sampleExit(images, tally);
}
/** Says what the full re-run found against what the artifact recorded, and returns it as the exit status. */
function verdictOfRerun(artifact: StoredArtifact, violations: readonly Violation[]): number {
  if (violations.length === 0) {
    console.log(artifact.harnessError ? 'the re-run completed and PASSES: the tool failure did not recur' : 'PASSES NOW: the full re-run found no violation (fixed, or it needs another interleaving of concurrent requests)');
    return REPLAY_EXIT.passesNow;
  }
  const { reproduced, notRecurred } = compareRerun(artifact.violations, violations);
  if (reproduced) {
    console.log(`REPRODUCED by the full re-run:\n${indent(violations)}`);
    if (notRecurred.length) console.log(`  (recorded checks that did not fail this time: ${notRecurred.join(', ')})`);
    return REPLAY_EXIT.reproduced;
  }
  console.log(`DIFFERENT violation in the full re-run:\n${indent(violations)}`);
  return REPLAY_EXIT.different;
}
