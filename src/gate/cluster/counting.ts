// What a cluster gate counts of each judged crash state and live cut: on its cut kind's row (cases,
// states per policy, cuts requested and landed, the contract its run reached) and in the cluster's
// coverage (per kind, per node).
import type { CutKind } from '../../faults/cut-kinds.js';
import type { ClusterStateVerdict } from '../../harness/cluster/cluster-pool.js';
import type { runClusterCase } from '../../harness/cluster/cluster-run.js';
import { countContract, policyCoverage } from '../../harness/coverage.js';
import { contractOf } from '../../harness/outcome.js';
import { countCut, countRequests } from '../cluster-coverage.js';
import type { ClusterRun } from './run.js';

/** Counts a judged state in its row and the cluster's coverage. */
export function countState(run: ClusterRun, v: ClusterStateVerdict, kind: CutKind): void {
  const row = run.row(kind);
  const s = v.state;
  // The slot's time over the slots at once: the rows add up to the wall time the states took.
  row.durationMs += v.recoverMs / run.pool.size;
  row.cases++;
  row.coverage.cases++;
  row.coverage.states++;
  policyCoverage(row.coverage, s.id.policy).states++;
  countContract(row.coverage, contractOf(v.runs[0]?.outcomes ?? []));
  run.cov.perKind[kind]!.states++;
  if (v.shared) run.cov.statesShared++;
  countCut(run.cov, s.id.nodes, 'state');
}

/** Counts a live cut in its row and the cluster's coverage: requested, landed, paused, its contract. */
export function countLiveCut(run: ClusterRun, kind: CutKind, nodesCut: readonly number[] | 'all', r: Awaited<ReturnType<typeof runClusterCase>>): void {
  const row = run.row(kind);
  const cov = run.cov;
  countRequests(cov, r.trace);
  const landed = r.frozenAt !== null;
  row.coverage.cutsRequested++;
  const pc = policyCoverage(row.coverage, 'lose-unsynced');
  pc.cuts++;
  cov.perKind[kind]!.liveCuts++;
  if (r.pausedAt !== null) cov.perKind[kind]!.livePaused++;
  if (landed) {
    row.cases++;
    row.coverage.cases++;
    row.coverage.cutsLanded++;
    pc.landed++;
    cov.perKind[kind]!.liveLanded++;
    countCut(cov, nodesCut, 'live');
  }
  countContract(row.coverage, contractOf(r.runs[0]?.outcomes ?? []));
}
