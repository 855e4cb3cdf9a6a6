// A cluster gate's unit of work, one workload: drawn (most mutate one whose recording reached a
// feature seen least), recorded once on the daemon's nodes, its crash states judged for its slice of
// the budget and their causes searched (judge-recording.ts), then its live cuts (live-cut.ts).
import fc from 'fast-check';
import { mutantInputArb, type CrashInput } from '../../../properties/crash-property.js';
import type { ClusterInput } from '../../harness/cluster/cluster-run.js';
import { runFeatures } from '../../harness/coverage.js';
import { nodeCountOf } from '../../targets/index.js';
import type { ClusterRecording } from '../cluster-cases.js';
import { countRequests } from '../cluster-coverage.js';
import { roundSeed } from '../suites.js';
import { judgeRecording } from './judge-recording.js';
import { liveCuts } from './live-cut.js';
import type { ClusterRun } from './run.js';

/** Workload `input` drawn from the run's seed (a mutant of the steering's pick, unless --generation plain), and the case it runs as. */
function drawWorkload(run: ClusterRun, input: number): { drawn: CrashInput; clusterInput: ClusterInput } {
  const { o, target, nodes } = run;
  const base = o.generation === 'plain' ? undefined : run.steering.pick(0);
  const drawn = fc.sample(base ? mutantInputArb(base, run.inputOptions) : run.arb, { seed: roundSeed(o.seed, 0, input), numRuns: 1 })[0];
  const drawnNodes = nodeCountOf(target, drawn.settings);
  if (drawnNodes !== nodes) throw new Error(`invariant: every workload of a cluster gate runs on its ${nodes} nodes, but settings ${JSON.stringify(drawn.settings)} give ${drawnNodes} (force the node count with --settings)`);
  return { drawn, clusterInput: { workload: drawn.workload, settings: drawn.settings, ...(drawn.variant !== undefined ? { variant: drawn.variant } : {}) } };
}

/** A recording counted: the steering sees its features, the first row its time, the coverage its states. */
function countRecording(run: ClusterRun, drawn: CrashInput, rec: ClusterRecording, recordMs: number): void {
  const { cov, target } = run;
  run.longestRecordMs = Math.max(run.longestRecordMs, recordMs);
  run.steering.observe(0, drawn, runFeatures(rec.recorded.trace, target.workloadEvents(rec.recorded.trace)));
  run.row(run.asked[0]).durationMs += recordMs;
  run.recordings++;
  cov.recordings++;
  cov.intervals += rec.intervals;
  cov.statesListed += rec.states.length;
  cov.statesCapped += rec.capped;
  countRequests(cov, rec.recorded.trace);
  if (rec.capped > 0) for (const r of run.rows.values()) if (!r.capsHit.includes('max-states')) r.capsHit.push('max-states');
}

/** Workload `input`: recorded, its crash states judged for its slice of the budget, their causes searched, then its live cuts. */
export async function runWorkload(run: ClusterRun, input: number): Promise<void> {
  const { drawn, clusterInput } = drawWorkload(run, input);
  run.ctx.doing(`recording workload ${input + 1}`);
  let rec: ClusterRecording;
  const started = Date.now();
  try {
    rec = await run.record(run.daemons.current.daemon, clusterInput);
  } catch (err) {
    await run.toolFailed(run.row(run.asked[0]), `recording workload ${input + 1}`, err);
    return;
  }
  const recordMs = Date.now() - started;
  countRecording(run, drawn, rec, recordMs);
  const { longestRecoveryMs } = await judgeRecording(run, rec, clusterInput, input, recordMs);
  await liveCuts(run, rec, clusterInput, input, recordMs, longestRecoveryMs);
}
