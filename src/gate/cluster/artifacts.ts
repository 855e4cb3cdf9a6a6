// A cluster gate's artifacts: what a failing crash state's or live cut's artifact keeps (its case,
// what was judged, its nodes' images, its cause, its recorded run, report.html), written within the
// artifacts' share; and a group's artifact replaced by a smaller case's once shrinking found one.
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { replayOf, writeCause, writeClusterArtifact, writeRecording, type ClusterArtifactCase } from '../../harness/artifacts.js';
import type { Cause } from '../../harness/cause/cause.js';
import type { ClusterStateVerdict } from '../../harness/cluster/cluster-pool.js';
import type { runClusterCase } from '../../harness/cluster/cluster-run.js';
import type { TempDaemon } from '../../harness/daemon-process.js';
import type { DriverRun } from '../../harness/driver-process.js';
import { keepStartingState } from '../../harness/starting-state.js';
import { within } from '../../harness/time-share.js';
import { drawArtifactReport } from '../../report/index.js';
import type { GateRow } from '../../report/gate-results.js';
import type { ClusterJudged, ClusterRecording } from '../cluster-cases.js';
import type { ClusterRun } from './run.js';

/** A crash state's recorded run, for its artifact: the daemon writes its calls, the run as recorded. */
export interface RecordingKept {
  saveCalls: (file: string) => Promise<void>;
  run: DriverRun;
}

/** A failing case's images: written by a state into the folder it is given, or the folder of a live cut's images, already written. */
export type Images = ((dir: string) => Promise<void>) | string | undefined;

/** What an artifact keeps of a live run. */
export const liveJudged = (r: Awaited<ReturnType<typeof runClusterCase>>): ClusterJudged => ({ violations: r.violations, runs: r.runs, trace: r.trace, frozenAt: r.frozenAt, stderr: r.stderr });

/** A judged state of a recording as its artifact keeps it: its case and what was judged. */
export function stateArtifact(run: ClusterRun, rec: ClusterRecording, v: ClusterStateVerdict): { c: ClusterArtifactCase; judged: ClusterJudged } {
  const { id } = v.state;
  const { trace, marks } = rec.recorded;
  return {
    c: { ...run.ref, ...rec.input, policy: id.policy, seed: 0, nodes: run.nodes, state: id, stateCaps: rec.caps, recoveredOn: 'native' },
    judged: { violations: v.violations, runs: v.runs, trace, marks, frozenAt: id.afterOp + 1 <= trace.length ? id.afterOp + 1 : null, stderr: [rec.recorded.run.stderr, v.drainStderr] },
  };
}

/** A state's recorded run, kept with its artifact (the daemon still holds it when the artifact is written). */
export function recordingOf(rec: ClusterRecording, daemon: TempDaemon): RecordingKept {
  return { saveCalls: (file) => daemon.daemon.client.saveRecording(file), run: rec.recorded.run };
}

/**
 * Writes a failing case's artifact (with its cause and report.html) within the artifacts' share;
 * undefined when that failed (the row says why; the failure stands).
 */
export async function keepArtifact(run: ClusterRun, row: GateRow, key: string, c: ClusterArtifactCase, judged: ClusterJudged, images: Images, cause: Cause | undefined, recording?: RecordingKept): Promise<string | undefined> {
  let artifactDir: string | undefined;
  let imagesDir: string | undefined;
  try {
    await within(run.phases.share('artifacts'), async () => {
      if (typeof images === 'function') {
        imagesDir = await mkdtemp(path.join(os.tmpdir(), 'powercut-cluster-images-'));
        await images(path.join(imagesDir, 'cut-0-after-crash'));
      }
      const kept = typeof images === 'string' ? images : imagesDir;
      if (kept) await keepStartingState(run.daemons.current.daemon, kept);
      artifactDir = await writeClusterArtifact(run.o.artifactRoot, run.target.name, { ...judged, case: c }, typeof images === 'string' ? images : imagesDir);
      if (cause) await writeCause(artifactDir, cause);
      if (recording) await writeRecording(artifactDir, recording.saveCalls, recording.run);
      await drawArtifactReport(artifactDir);
    });
  } catch (err) {
    row.errors.push(`writing the artifact of "${key}" failed (the failure stands): ${err instanceof Error ? err.message : String(err)}`);
  } finally {
    if (imagesDir) await rm(imagesDir, { recursive: true, force: true });
  }
  return artifactDir;
}

/** The group's artifact replaced by a smaller case's (the first case's removed); false when it could not be written. */
export async function replaceArtifact(run: ClusterRun, key: string, row: GateRow, c: ClusterArtifactCase, judged: ClusterJudged, images: Images, cause: Cause | undefined, recording?: RecordingKept): Promise<boolean> {
  const group = run.failures.get(key)!;
  const artifactDir = await keepArtifact(run, row, key, c, judged, images, cause, recording);
  if (!artifactDir) return false;
  if (group.artifactDir) await rm(group.artifactDir, { recursive: true, force: true });
  const link = replayOf(artifactDir, c);
  const messages = judged.violations.map((x) => x.message);
  if (row.failure?.key === key) row.failure = { ...row.failure, messages, ...link };
  Object.assign(group, { messages, ...link, ...(cause ? { cause } : {}) });
  return true;
}
