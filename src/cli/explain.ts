// `powercut explain DIR`: why a failure artifact failed, in a terminal: the cause, the fix, its proof
// over the whole recorded run and its reach (ext4's default mode or only a strict POSIX disk). The
// artifact's cause.json when it has one; else (or with --again) the case is recorded again on a
// fresh mount, its state explained, and cause.json written into the artifact.
import path from 'node:path';
import { isClusterCase, writeCause, type ClusterArtifactCase, type StoredArtifact } from '../harness/artifacts.js';
import { causeFacts, type Cause, type SearchBound } from '../harness/cause/cause.js';
import { explainClusterStateAgain, type ExplainedAgain } from '../harness/cluster/explain-again.js';
import { explainStoredClusterState, storedClusterState, type ExplainedStored, type StoredClusterState } from '../harness/cluster/explain-stored.js';
import { violatedChecks } from '../harness/oracle.js';
import { mergeTimeouts } from '../harness/driver-process.js';
import { EXPLAIN_BOUNDS } from '../harness/exhaustive/explain.js';
import { HarnessError } from '../harness/harness-error.js';
import { writeArtifactReport } from '../report/index.js';
import { targetName } from '../targets/index.js';
import { artifactTarget, causeOfFailed, readArtifactOrUsage } from './replay.js';
import { parseCommandArgs, usageFail, type Command } from './usage.js';

export const EXPLAIN_EXIT = { explained: 0, notIsolated: 1, usage: 2, noLongerFails: 3, toolFailed: 4 } as const;
export const TOOL_FAILED_EXIT = EXPLAIN_EXIT.toolFailed;

export const help = `usage: powercut explain DIR [--again] [--max-probes N] [--max-seconds S]

Says why the failure stored in the artifact folder DIR happened: the step the program missed (which
fsync, of what, after which request, before which confirmation) or what its recovery mishandled, the
fix in the program's terms, the proof (the recorded run re-checked with that step added) and the
reach (whether it bites a journaling filesystem like ext4 in its default mode, or only a disk as
strict as POSIX allows). The gate stores this in the artifact (cause.json); when it is absent, the
case is recorded again on a fresh mount and its crash state searched, and cause.json is written.
A cluster's crash state whose artifact keeps its recorded run (recording/, written by the gate) and
no named cause is searched on that run: its own state, units and request numbers, exactly; each
recovery of its nodes is a sample, so the state is recovered first and searched only if it fails
the same checks again, and cause.json is written. --again, or an artifact without recording/,
records the case again on fresh mounts instead, a sample since the nodes interleave anew, and names
the cause of that run's state of the same cut kind failing the same checks (cause.json is left as
it is); the whole is bounded by three times --max-seconds. A live cut's artifact has no cause search.

options:
  --again           search again even if the artifact has a cause (after changing the code)
  --max-probes N    the search's bound: hypothetical images recovered (default ${EXPLAIN_BOUNDS.bound.maxProbes})
  --max-seconds S   the search's bound in seconds (default ${EXPLAIN_BOUNDS.bound.maxMs / 1000})
  -h, --help        this text

exit status:
  ${EXPLAIN_EXIT.explained}  a cause was named
  ${EXPLAIN_EXIT.notIsolated}  no cause was isolated within the bound (said why)
  ${EXPLAIN_EXIT.usage}  usage error or unreadable artifact
  ${EXPLAIN_EXIT.noLongerFails}  recorded again, the case no longer fails the same way (fixed, or another interleaving);
     or a cluster's state, recovered from its stored run, did not fail alike this time (a sample)
  ${EXPLAIN_EXIT.toolFailed}  the tool itself failed (harness error)`;

/** A cause as the terminal shows it: its heading, then one labelled line per fact, then the search's evidence. */
export function formatCause(c: Cause): string {
  const facts = causeFacts(c);
  const width = Math.max(...facts.map((f) => f.label.length)) + 1;
  return [
    ...facts.map((f) => `${`${f.label}:`.padEnd(width)} ${f.text}`),
    ...(c.evidence.length ? ['evidence:', ...c.evidence.map((e) => `  - ${e}`)] : []),
  ].join('\n');
}

const positiveNumber = (name: string, v: string | undefined, fallback: number): number => {
  if (v === undefined) return fallback;
  const n = Number(v);
  if (!Number.isFinite(n) || n <= 0) usageFail(`--${name} must be a number > 0, got ${v}`, help);
  return n;
};

export const run: Command = async (argv) => {
  const parsed = parseCommandArgs({ args: argv, allowPositionals: true, options: { again: { type: 'boolean' }, 'max-probes': { type: 'string' }, 'max-seconds': { type: 'string' }, help: { type: 'boolean', short: 'h' } } }, help);
  if (parsed.values.help) {
    console.log(help);
    return 0;
  }
  if (parsed.positionals.length !== 1) usageFail('explain needs exactly one artifact folder', help);
  const bound = {
    maxProbes: Math.round(positiveNumber('max-probes', parsed.values['max-probes'], EXPLAIN_BOUNDS.bound.maxProbes)),
    maxMs: positiveNumber('max-seconds', parsed.values['max-seconds'], EXPLAIN_BOUNDS.bound.maxMs / 1000) * 1000,
  };
  const dir = path.resolve(parsed.positionals[0]);
  const artifact = await readArtifactOrUsage(dir, help);
  if (artifact.harnessError !== undefined || artifact.violations.length === 0) usageFail(`${dir} records ${artifact.harnessError !== undefined ? 'a harness error (the tool failed, not the queue)' : 'no violation'}: there is no failure to explain`, help);
  console.log(`artifact ${dir}\n${targetName(artifact.case)}${artifact.case.variant ? ` (variant ${artifact.case.variant})` : ''}: ${artifact.violations.map((v) => v.check).join(', ')}\n`);

  let cause = parsed.values.again ? undefined : artifact.cause;
  // A cluster state's stored run is searched, exactly, unless a cause is named already (an unexplained one may have run out of the gate's time).
  const stored = storedClusterState(artifact);
  if (stored && !parsed.values.again && (!cause || cause.kind === 'not-isolated')) return explainClusterStored(artifact, stored, dir, bound);
  if (cause) console.log('(the cause stored with the artifact, cause.json; --again searches anew)');
  else if (isClusterCase(artifact.case)) return explainClusterAgain(artifact, artifact.case, dir, bound);
  else {
    const target = artifactTarget(artifact, dir, help);
    console.log(`searching the cause: recording the case again on a fresh mount (bound ${bound.maxProbes} probes, ${bound.maxMs / 1000} s)...`);
    try {
      cause = await causeOfFailed(artifact, target, { ...EXPLAIN_BOUNDS, bound, checkReach: () => true });
    } catch (err) {
      console.log(`TOOL FAILED while explaining (not a verdict on the queue): ${err instanceof HarnessError ? err.message : String(err)}`);
      return EXPLAIN_EXIT.toolFailed;
    }
    if (!cause) {
      console.log(artifact.case.recoveryCut || artifact.case.recoverySettings
        ? 'not explained: a case with a second cut during recovery, or settings changed after the cut, is not searched; replay it to see it fail'
        : 'recorded again, the crash state no longer fails the same checks (fixed, or it needs another interleaving): nothing to explain; powercut replay tells more');
      return EXPLAIN_EXIT.noLongerFails;
    }
    await writeCauseAndReport(dir, cause);
    console.log(`(written to ${path.join(dir, 'cause.json')}; report.html redrawn)`);
  }
  console.log(`\n${formatCause(cause)}`);
  return cause.kind === 'not-isolated' ? EXPLAIN_EXIT.notIsolated : EXPLAIN_EXIT.explained;
};

/** A cluster's crash state searched on the recorded run its artifact keeps (recording/): exactly its own, each recovery a sample. */
async function explainClusterStored(artifact: StoredArtifact, stored: StoredClusterState, dir: string, bound: Required<SearchBound>): Promise<number> {
  const target = artifactTarget(artifact, dir, help, 'allow');
  // Recovering the state once comes before the search.
  const budgetMs = CLUSTER_AGAIN_BOUNDS * bound.maxMs;
  console.log(`searching the cause on the stored recording (recording/: the state's own run, exactly; each recovery of its ${stored.nodes} nodes is a sample), recovering the state first (bound ${budgetMs / 1000} s)...`);
  let r: ExplainedStored;
  try {
    r = await explainStoredClusterState(target, stored, mergeTimeouts(), Date.now() + budgetMs, bound);
  } catch (err) {
    console.log(`TOOL FAILED while explaining (not a verdict on the queue): ${err instanceof Error ? err.message : String(err)}`);
    return EXPLAIN_EXIT.toolFailed;
  }
  if (!r.cause) {
    const now = violatedChecks(r.recovered).join(', ');
    if (r.recovered.length > 0 && now === violatedChecks(artifact.violations).join(', ')) {
      console.log('the time ran out before its cause was searched (raise --max-seconds)');
      return EXPLAIN_EXIT.notIsolated;
    }
    console.log(`recovered from the stored recording, the state ${r.recovered.length > 0 ? `failed other checks this time (${now})` : 'passed this time'}: a recovery of several nodes is a sample; run explain again, or powercut replay`);
    return EXPLAIN_EXIT.noLongerFails;
  }
  await writeCauseAndReport(dir, r.cause);
  console.log(`(written to ${path.join(dir, 'cause.json')}; report.html redrawn)\n\n${formatCause(r.cause)}`);
  return r.cause.kind === 'not-isolated' ? EXPLAIN_EXIT.notIsolated : EXPLAIN_EXIT.explained;
}

/**
 * A cluster's crash state, searched again: its artifact keeps no recording (or --again), so the case is recorded
 * again, a sample (its nodes interleave anew), and the cause named is that run's, for a state of the
 * same cut kind failing the same checks; cause.json is left as it is, since that cause's requests
 * are the new run's. A live cut has no cause search.
 */
async function explainClusterAgain(artifact: StoredArtifact, c: ClusterArtifactCase, dir: string, bound: Required<SearchBound>): Promise<number> {
  if (!c.state) usageFail(`${dir} is a live cut's artifact: live cuts have no cause search yet; powercut replay re-runs it`, help);
  const target = artifactTarget(artifact, dir, help, 'allow');
  // Recording and judging come before the search: the whole is bounded by three times its bound.
  const budgetMs = CLUSTER_AGAIN_BOUNDS * bound.maxMs;
  console.log(`searching the cause: recording the case again on ${c.nodes} fresh mounts, a sample since its nodes interleave anew, and judging its states of the same cut kind (bound ${budgetMs / 1000} s)...`);
  let r: ExplainedAgain;
  try {
    r = await explainClusterStateAgain(target, { input: c, nodes: c.nodes, state: c.state, violations: artifact.violations, maxStates: c.stateCaps?.maxStates ?? 1_000, artifactDir: dir }, mergeTimeouts(), Date.now() + budgetMs, bound);
  } catch (err) {
    console.log(`TOOL FAILED while explaining (not a verdict on the queue): ${err instanceof Error ? err.message : String(err)}`);
    return EXPLAIN_EXIT.toolFailed;
  }
  if (!r.state) {
    console.log(`recorded again, none of the ${r.judged} crash states of its cut kind judged failed the same checks (fixed, or it needs another interleaving): nothing to explain; powercut replay recovers the stored images`);
    return EXPLAIN_EXIT.noLongerFails;
  }
  const where = `the state after request ${r.state.afterOp} of the new recording (${r.failingAlike} of ${r.judged} states of its cut kind judged fail the same checks)`;
  if (!r.cause) {
    console.log(`${where}: the time ran out before its cause was searched (raise --max-seconds)`);
    return EXPLAIN_EXIT.notIsolated;
  }
  console.log(`${where}; cause.json is left as it is (this cause's requests are the new recording's):\n\n${formatCause(r.cause)}`);
  return r.cause.kind === 'not-isolated' ? EXPLAIN_EXIT.notIsolated : EXPLAIN_EXIT.explained;
}

/** The artifact's cause.json, and its report.html drawn again to show it. */
async function writeCauseAndReport(dir: string, cause: Cause): Promise<void> {
  await writeCause(dir, cause);
  await writeArtifactReport(dir);
}

/** A cluster's search again records, judges and searches: bounded by this many times --max-seconds. */
const CLUSTER_AGAIN_BOUNDS = 3;
