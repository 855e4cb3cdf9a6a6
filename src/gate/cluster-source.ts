// The cases of a cluster target (target.nodeCount(settings) > 1), as a case source of the gate loop
// (case-source.ts): seeded generated workloads, each a unit, recorded once on one daemon serving a
// mount per node; per workload, its coordinated and mixed crash states of the kinds asked (spread
// over the run, the kinds in turn, recovered in the parallel slots of the ClusterStatePool, within
// the budget; under a work budget every state within the caps), then a live cut of each kind at a
// seeded request and seeded nodes, restarted while the run goes on. A work budget (--cases N) runs
// N workloads, each in full, with no time bound anywhere: the same work on any machine; what it
// finds is a sample, since each recording of several nodes interleaves anew. One row per cut kind; the floor asks each kind for a judged case. A workload's
// failing states get their causes searched once all its states are judged (cluster-cause.ts, within
// the causes' share; a cause is named only when its proof holds on them), and group by cause; the
// rest, and live cuts, by check, cut kind and nodes. Each group gets an artifact: a state's with its
// nodes' images (replay recovers them exactly), a live cut's with each cut node's disk at the cut
// (replay re-runs it, a sample). The run's shared state is a ClusterRun (cluster/run.ts); its stages
// are the modules beside it under cluster/.
import type { CaseSource, GateContext } from './case-source.js';
import { MIN_STATE_MS } from './cluster/costs.js';
import { ClusterRun } from './cluster/run.js';
import { runWorkload } from './cluster/workload.js';
import { startTempDaemon } from '../harness/daemon-process.js';
import { nextWorkload } from './scheduler.js';

export { MAX_STATES_SLICE_MS } from './cluster/costs.js';
export { DEFAULT_CLUSTER_POLICIES, DEFAULT_LIVE_CUTS, LIVE_KINDS } from './cluster/run.js';

/** The tool failing this often ends the run: it is broken, not the queue. */
const MAX_ERRORS = 3;

/** The cut kinds of a cluster of `nodes` nodes. */
export function clusterSource(ctx: GateContext, nodes: number): CaseSource {
  const run = new ClusterRun(ctx, nodes);
  const { o } = ctx;
  let inputs = 0;
  let overtime = false;
  return {
    unit: 'cluster cuts',
    mode: 'exhaustive',
    startDaemon: () => startTempDaemon('gate-cluster', nodes),
    beforeDaemonStop: async () => {},
    maxToolFailures: MAX_ERRORS,
    rows: () => [...run.rows.values()],
    floorOf: (row) => run.floors.get(row) ?? [],
    next() {
      if (run.stopped) return undefined;
      if (o.cases) {
        // A work budget: its workloads, each in full, whatever the time.
        if (!('total' in o.cases)) throw new Error('invariant: a cluster gate\'s work budget is a number of workloads');
        if (inputs >= o.cases.total) return undefined;
        const input = inputs++;
        return () => runWorkload(run, input);
      }
      // Past the budget, one more workload runs only for kinds still owed a case (the floor); never a second.
      // A workload fits while judging's time (the budget less what the causes of its failures and
      // the artifacts keep back) holds its recording (the longest so far) and a state; its states and
      // live cuts then keep to what is left. (A fixed 6 s of the whole budget stopped a 20 s gate of
      // the replicated queue, whose recordings take 0.3 s, at 14 s.)
      const starts = nextWorkload(ctx.phases.leftMs('record+judge'), run.longestRecordMs + MIN_STATE_MS, overtime, run.asked.some((k) => run.owesAny(k)));
      if (starts === 'none') return undefined;
      if (starts === 'overtime') overtime = true;
      const input = inputs++;
      return () => runWorkload(run, input);
    },
    stop: () => run.pool.stop(),
    steered: () => ({ inputs: run.steering.steered, of: run.recordings }),
    // Every recording of several nodes interleaves anew: all of them are a sample.
    work: () => ({ inputs, interleaved: inputs, repeat: o.cases ?? { total: inputs }, ...(o.cases && 'total' in o.cases ? { of: o.cases.total } : {}) }),
    clusterCoverage() {
      // Each kind's listed states are counted on its row: the coverage (summary, --json, index.html) says them per kind too.
      for (const [kind, row] of run.rows) run.cov.perKind[kind]!.listed = row.coverage.policies['lose-unsynced']?.listed ?? 0;
      return run.cov;
    },
  };
}
