// The recovery of one crash state, recorded like a run: the state's image put on a daemon of its
// own (copied onto its mount, every file and directory fsynced), then the recovery run there as the
// drain it was. A cut during that recovery is a crash state of this recording, whose lost units are
// what the recovery wrote and had not made durable before the cut: the cause search probes and
// proves on it as on any run. The run's own daemon keeps its recording (its artifacts need it).
import { cp, mkdtemp, open, readdir, rm } from 'node:fs/promises';
import path from 'node:path';
import type { CrashStateInfo, StateCaps, StatesAnswer } from '../../../fusefs/crash-states.js';
import { emptyCoverage } from '../coverage.js';
import { markDir, specFor } from '../crash-run.js';
import type { CutSpec } from '../crash-case.js';
import { startTempDaemon } from '../daemon-process.js';
import { mergeTimeouts, runDriver } from '../driver-process.js';
import { HarnessError } from '../harness-error.js';
import { intervalHolding, truncateAtCut, type JudgeContext, type Recorded } from './judge-states.js';
import { scratchRoot } from './recovery-pool.js';

export interface RecordedRecovery {
  /** Judges states of this recording (on its own daemon and pool). */
  ctx: JudgeContext;
  /** The recovery run, its trace and marks; the workload's lines as of the state's cut come before it. */
  recorded: Recorded;
  /** Its lose-unsynced states after the state was in place. */
  answer: StatesAnswer;
  /** Requests that put the state in place: the recovery's request r is request placedOps + r here. */
  placedOps: number;
  /** The state the cut during recovery left. */
  cutState: CrashStateInfo;
  stop(): Promise<void>;
}

/**
 * Records the recovery of `state` of `recorded` (judged by `ctx`, which has no recovery cuts) and
 * finds the state `cut` left in it. Undefined, with why, when the recovery did not run to its end.
 */
export async function recordRecovery(ctx: JudgeContext, recorded: Recorded, state: CrashStateInfo, cut: CutSpec, caps: StateCaps): Promise<RecordedRecovery | { why: string }> {
  const scratch = await mkdtemp(path.join(scratchRoot(), 'powercut-recovery-image-'));
  const second = await startTempDaemon('recovery-recording');
  const pool = ctx.pool.onDaemon(second.daemon);
  const stop = async () => {
    await pool.stop();
    await second.stop();
    await rm(scratch, { recursive: true, force: true });
  };
  try {
    const image = path.join(scratch, 'image');
    await ctx.daemon.client.stateImage(state.id, image);
    const mountpoint = second.daemon.mountpoint;
    await second.daemon.client.reset(true);
    await cp(image, mountpoint, { recursive: true });
    await fsyncTree(mountpoint);
    const placedOps = (await second.daemon.client.trace()).length;
    const c = ctx.caseOf(state);
    const run = await runDriver(second.daemon, ctx.target.driver, { ...specFor(mountpoint, c, 'drain', 1), mark: markDir(second.daemon) }, false, mergeTimeouts(ctx.o.timeouts));
    if (run.record.hung || run.record.exitCode !== 0) {
      await stop();
      return { why: `its recovery, recorded again without the cut, ${run.record.hung ? 'hung' : `exited with ${run.record.exitCode}`}` };
    }
    const { trace, marks } = await second.daemon.client.traceWithMarks();
    const listed = await second.daemon.client.states(['lose-unsynced'], caps);
    const answer = { ...listed, states: listed.states.filter((s) => s.id.afterOp >= placedOps) };
    const afterOp = placedOps + (cut.cut.timing === 'before' ? cut.cut.atOp - 1 : cut.cut.atOp);
    if (afterOp > trace.length) {
      await stop();
      return { why: `its recovery, recorded again, made ${trace.length - placedOps} requests, fewer than the cut's ${cut.cut.atOp}` };
    }
    const interval = intervalHolding(answer, afterOp) ?? Math.max(0, listed.intervals - 1);
    return {
      ctx: { ...ctx, daemon: second.daemon, pool, timings: { recordMs: 0, enumerateMs: 0, loadMs: 0, recoverMs: 0, judgeMs: 0, recoveries: 0, driverStarts: 0 }, coverage: emptyCoverage(), o: { ...ctx.o, onState: undefined, verifyOnMount: false } },
      recorded: { run, trace, marks, before: [truncateAtCut(recorded, state.id.afterOp)] },
      answer,
      placedOps,
      cutState: { id: { afterOp, policy: 'lose-unsynced' }, interval, hash: `recovery-cut-${afterOp}` },
      stop,
    };
  } catch (err) {
    await stop();
    throw err instanceof HarnessError ? err : new HarnessError(`recording the recovery of a crash state: ${(err as Error).message}`);
  }
}

/** fsyncs every file and directory under `dir` (the state put in place is durable before its recovery starts). */
async function fsyncTree(dir: string): Promise<void> {
  for (const e of await readdir(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) await fsyncTree(p);
    else if (!e.isFile()) continue;
    else await fsyncPath(p);
  }
  await fsyncPath(dir);
}

async function fsyncPath(p: string): Promise<void> {
  const fh = await open(p, 'r');
  try {
    await fh.sync();
  } finally {
    await fh.close();
  }
}
