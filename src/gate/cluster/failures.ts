// A cluster gate's failing states and live cuts, grouped: a crash state whose cause is named (proven)
// groups by its cause whatever its cut; the rest, and live cuts, by the checks they failed, their cut
// kind and nodes. The first case of a new group keeps an artifact (artifacts.ts).
import type { CutKind } from '../../faults/cut-kinds.js';
import { replayOf, type ClusterArtifactCase } from '../../harness/artifacts.js';
import { groupKeyOf, type Cause } from '../../harness/cause/cause.js';
import type { ClusterStateVerdict } from '../../harness/cluster/cluster-pool.js';
import type { TempDaemon } from '../../harness/daemon-process.js';
import { violatedChecks } from '../../harness/oracle.js';
import type { ClusterJudged, ClusterRecording } from '../cluster-cases.js';
import { describeClusterCut } from '../cluster-kinds.js';
import { keepArtifact, recordingOf, stateArtifact, type Images, type RecordingKept } from './artifacts.js';
import type { ClusterRun } from './run.js';

/** How a failing case was cut: a crash state of a recording, or a live cut. */
export type How = 'state' | 'live';

/**
 * Counts a failing state or case under its group; a new group keeps an artifact (with report.html),
 * and its key is returned. `images`: as Images says. `cause`: a state's, when its search named one
 * (proven) or said why none is; a live cut has none.
 */
export async function found(run: ClusterRun, kind: CutKind, how: How, c: ClusterArtifactCase, judged: ClusterJudged, images?: Images, cause?: Cause, recording?: RecordingKept): Promise<string | undefined> {
  const row = run.row(kind);
  row.violations++;
  run.cov.perKind[kind]!.failing++;
  const checks = violatedChecks(judged.violations);
  const cutNodes = how === 'state' ? c.state?.nodes : c.nodesCut;
  const signature = `${checks.join(', ')} after ${describeClusterCut(how, cutNodes, c.state?.policy)}${c.pause ? ' after a pause' : ''}`;
  // A named cause groups its states whatever their cut; an unexplained state groups by what it failed and where.
  const named = cause !== undefined && cause.kind !== 'not-isolated';
  const key = named ? groupKeyOf(cause) : signature;
  // An unexplained state's cause says why (not searched, not isolated, not provable): its group is its signature's.
  const kept = cause && !named ? { ...cause, key } : cause;
  if (run.failures.countKnown(key, row, signature, undefined, undefined, kept)) return undefined;
  const artifactDir = await keepArtifact(run, row, key, c, judged, images, kept, recording);
  const messages = judged.violations.map((v) => v.message);
  run.failures.add({
    key, title: named ? cause.title : signature, count: 1, signatures: [{ signature, count: 1 }], foundBy: [row.name], checks, messages,
    ...(kept ? { cause: kept } : {}),
    ...(artifactDir ? replayOf(artifactDir, c) : {}),
  }, named ? `${cause.title} (${signature})` : signature);
  row.failure ??= { key, messages, ...(artifactDir ? replayOf(artifactDir, c) : {}) };
  if (run.o.stopOnFirst) run.stopped = true;
  return key;
}

/** A failing state of the recording (its cause searched or not), grouped and, if new, kept as an artifact; the key of a new group. */
export async function stateFailed(run: ClusterRun, rec: ClusterRecording, v: ClusterStateVerdict, kind: CutKind, daemon: TempDaemon, cause: Cause | undefined): Promise<string | undefined> {
  const { c, judged } = stateArtifact(run, rec, v);
  // The slot's folder is its next state's by now: the artifact's images are written again, from the state.
  return found(run, kind, 'state', c, judged, (dir) => daemon.daemon.client.stateImage(v.state.id, dir), cause, recordingOf(rec, daemon));
}
