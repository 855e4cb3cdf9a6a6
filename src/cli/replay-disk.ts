// `powercut replay DIR` of a single disk's artifact: the recorded case in words (its trace up to each
// cut, the files each cut changes), then the recovery alone from the stored post-crash image (exact,
// whatever the interleaving was), then the whole case re-run with the current code: once when it is
// exact, `reruns` times when it is a sample. The caller (replay.ts) weighs the verdicts.
import { existsSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { copyStoredImage, type ReplayMode, type StoredArtifact } from '../harness/artifacts.js';
import { runExhaustive } from '../harness/exhaustive/exhaustive-run.js';
import { describeState } from '../../fusefs/model/policies/index.js';
import { replayRecovery, runCase } from '../harness/crash-run.js';
import type { CaseResult } from '../harness/crash-case.js';
import { mergeTimeouts } from '../harness/driver-process.js';
import { recoverImageNatively } from '../harness/exhaustive/recovery-pool.js';
import { startDaemon } from '../harness/daemon-process.js';
import { useStoredStartingState } from '../harness/starting-state.js';
import { diffImages } from '../harness/image-diff.js';
import { violatedChecks, type Violation } from '../harness/oracle.js';
import { formatTrace } from '../harness/trace-format.js';
import type { Target } from '../harness/target.js';
import { targetName } from '../targets/index.js';
import { describeImagesVerdict, describeRerun, verdictOf, type RerunVerdict } from './replay-verdict.js';
import { runFolder } from '../harness/run-folder.js';

/** What a re-run found: its violations, and the case, runs and cuts it ran (a crash state's re-run keeps only its violations). */
export type Rerun = { violations: Violation[] } & Partial<Pick<CaseResult, 'case' | 'runs' | 'cuts'>>;

export const indent = (vs: readonly Violation[]) => vs.map((v) => `  ${v.message}`).join('\n');

/** A fresh daemon on a temporary mount (on a copy of `imageDir` if given), stopped and removed after `f`. */
export async function withReplayDaemon<T>(imageDir: string | undefined, f: (d: Awaited<ReturnType<typeof startDaemon>>) => Promise<T>): Promise<T> {
  const dir = await runFolder(path.join(os.tmpdir(), 'powercut-replay-'));
  try {
    const daemon = await startDaemon({ mountpoint: path.join(dir, 'mnt'), socketPath: path.join(dir, 'control.sock'), ...(imageDir ? { imageDir } : {}) });
    try {
      return await f(daemon);
    } finally {
      await daemon.stop();
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** The artifact in `dir` in words: the case, how it replays, what was recorded, and each cut's trace and the files it changes. */
export async function printRecorded(artifact: StoredArtifact, dir: string, mode: { mode: ReplayMode; why: string }, reruns: number, traceLines: number): Promise<void> {
  console.log(`artifact ${dir}\n${describeCase(artifact)}\n`);
  console.log(`replay:   ${mode.mode === 'exact' ? `exact (${mode.why}): one full re-run` : `a sample (${mode.why}): ${reruns} full re-runs`}\n`);
  if (artifact.harnessError) console.log(`recorded: ${artifact.harnessError.trim()}`);
  else console.log(`recorded violation:\n${indent(artifact.violations)}`);
  for (let k = 0; k < artifact.cuts.length; k++) {
    console.log(`\ntrace up to cut ${k + 1} (${k === 0 ? 'workload' : 'during recovery'}):\n${traceExcerpt(artifact, k, traceLines)}`);
    const live = path.join(dir, 'images', `cut-${k}-live`);
    const durable = path.join(dir, 'images', `cut-${k}-durable`);
    if (existsSync(live) && existsSync(durable)) {
      const diff = await diffImages(live, durable);
      console.log(`\nfiles the cut changes (live vs durable at cut ${k + 1}):${diff.length ? '' : ' none'}`);
      for (const d of diff) console.log(`  ${d.file}: ${d.what}`);
    }
  }
}

/**
 * The stored post-crash image, recovered by the current code: exact, whatever the interleaving was.
 * Its verdict against the recorded violation (undefined without a stored image, or for a tool
 * failure's artifact, which recorded none); an exact replay says it here (`exact`), before its re-run.
 */
export async function recoverStoredImage(artifact: StoredArtifact, dir: string, target: Target, exact: boolean): Promise<RerunVerdict | undefined> {
  let images: RerunVerdict | undefined;
  const last = artifact.cuts.length - 1;
  const scratch = await runFolder(path.join(os.tmpdir(), 'powercut-replay-image-'));
  const image = path.join(scratch, 'image');
  try {
    const stored = last >= 0 && (await copyStoredImage(dir, `cut-${last}-after-crash`, image));
    if (!stored || artifact.runs.length <= 1) return undefined;
    console.log(`\nrecovery alone, from the stored post-crash image ${path.join(dir, 'images', `cut-${last}-after-crash`)}:`);
    const prior = artifact.runs.slice(0, -1);
    const verdicts: Record<string, string> = {};
    // A state checked natively (on a copy of its image, off the mount) is recovered both ways: they must agree.
    const ways: [string, () => Promise<{ violations: Violation[] }>][] = [
      ['on the mount', () => withReplayDaemon(image, (d) => replayRecovery(d, target, artifact.case, prior))],
      ...(artifact.case.recoveredOn === 'native' ? [['natively', () => recoverImageNatively(target, artifact.case, image, prior, mergeTimeouts())] as [string, () => Promise<{ violations: Violation[] }>]] : []),
    ];
    for (const [way, recover] of ways) {
      try {
        const replay = await recover();
        verdicts[way] = violatedChecks(replay.violations).join();
        // A tool failure's artifact recorded no violation to reproduce: its images have no verdict.
        if (!artifact.harnessError) images ??= verdictOf(artifact.violations, replay.violations);
        const label = ways.length > 1 ? ` (${way})` : '';
        console.log(replay.violations.length ? `  recovery of the stored disk still fails${label}:\n${indent(replay.violations)}` : `  recovery of the stored disk passes now${label}`);
      } catch (err) {
        console.log(`  could not replay the recovery ${way} (the tool failed): ${(err as Error).message}`);
      }
    }
    if (Object.keys(verdicts).length === 2 && verdicts['on the mount'] !== verdicts.natively) {
      console.log(`  NOTE: the two ways disagree (a bug of powercut, not of the queue; please report it): on the mount [${verdicts['on the mount'] || 'pass'}], natively [${verdicts.natively || 'pass'}]`);
    }
    // A sample says it beside its re-runs' tally; an exact replay here, before its re-run.
    if (images && exact) console.log(describeImagesVerdict(images, 'the stored post-crash image'));
    return images;
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}

/**
 * The full re-run with the current code. A crash state's case records the workload again and checks
 * every state (the requests, and so the states, may differ now). Exact: once, its verdict the exit
 * status. A sample: `reruns` times on one daemon, weighed with the stored image. Throws when the tool fails.
 */
export async function rerunWhole(artifact: StoredArtifact, target: Target, mode: ReplayMode, reruns: number): Promise<Rerun[]> {
  const what = artifact.case.state ? ' (recording the workload again and checking every crash state)' : '';
  const results: Rerun[] = [];
  if (mode === 'exact') {
    console.log(`\nre-running the whole case on a fresh mount${what}...`);
    results.push(await withReplayDaemon(undefined, (d) => rerunOnce(d, target, artifact)));
    return results;
  }
  console.log(`\nre-running the whole case ${reruns} time${reruns === 1 ? '' : 's'} on a fresh mount${what}...`);
  await withReplayDaemon(undefined, async (d) => {
    for (let i = 0; i < reruns; i++) {
      console.log(`re-run ${i + 1} of ${reruns}:`);
      results.push(await rerunOnce(d, target, artifact));
      console.log(`  ${describeRerun(artifact.violations, results[i].violations)}`);
    }
  });
  return results;
}

function describeCase(a: StoredArtifact): string {
  const c = a.case;
  const cut = c.state ? `crash state ${describeState(c.state)} of the recorded run (exhaustive mode)`
    : c.cut ? `request ${c.cut.atOp}${c.cut.kind ? ` (${c.cut.kind})` : ''}${c.cut.path ? ` touching ${c.cut.path}` : ''}, ${c.cut.timing}, policy ${c.policy}, seed ${c.seed}`
      : `after the workload (fault run), policy ${c.policy}`;
  return [
    `target:   ${c.driver ? `the driver '${c.driver.command}' (in ${c.driver.cwd})` : `${targetName(c)}, ${c.variant ? `known-bad variant '${c.variant}'` : 'the correct queue'}`}, settings ${JSON.stringify(c.settings)}`,
    `workload: ${c.workload.steps.length} steps`,
    `cut:      ${cut}`,
    ...(c.faults?.length ? [`faults:   ${JSON.stringify(c.faults)}`] : []),
    ...(c.recoveryFaults?.length ? [`damage:   ${JSON.stringify(c.recoveryFaults)} (armed after the cut, for every recovery)`] : []),
    ...(c.recoveryCut ? [`2nd cut:  during recovery at request ${c.recoveryCut.cut.atOp}, ${c.recoveryCut.cut.timing}, policy ${c.recoveryCut.policy}, seed ${c.recoveryCut.seed}`] : []),
  ].join('\n');
}

function traceExcerpt(a: StoredArtifact, k: number, maxBefore: number): string {
  const cut = a.cuts[k];
  const timing = k === 0 ? a.case.cut?.timing : a.case.recoveryCut?.cut.timing;
  const lines = formatTrace(cut.trace, cut.frozenAt, timing).split('\n');
  if (maxBefore === 0 || lines.length <= maxBefore + 5) return lines.join('\n');
  const at = lines.findIndex((l) => l.startsWith('----- POWER CUT'));
  const from = Math.max(0, at - maxBefore);
  return [`  ... ${from} earlier requests (full trace: ${path.join(a.dir, `trace-cut-${k}.txt`)})`, ...lines.slice(from, at + 5)].join('\n');
}

/** One full re-run of a single disk's case on daemon `d`: the case again, or a crash state's workload recorded again and every state checked. */
async function rerunOnce(d: Awaited<ReturnType<typeof startDaemon>>, target: Target, artifact: StoredArtifact): Promise<Rerun> {
  const c = artifact.case;
  await useStoredStartingState(d, artifact.dir);
  if (!c.state) return runCase(d, target, c, { writeArtifacts: false, captureImages: false });
  const r = await runExhaustive(d, target, c, {
    fsyncHolds: c.fsyncHolds ?? null, recoveryCuts: c.recoveryCut !== undefined, writeArtifacts: false, ...(c.stateCaps ? { caps: c.stateCaps } : {}) });
  if (r.failure) console.log(`  first failing state now: ${describeState(r.failure.case.state!)}`);
  console.log(`  ${r.coverage.states} crash states checked${r.failure ? '' : ', none failed'}`);
  return { violations: r.failure?.violations ?? [] };
}
