// Probing one crash state of a run the daemon still holds: the state's image, with some lost units
// made durable or under a hypothesis about the program, recovered in a slot of the run's pool and
// judged against the run's lines as of a cut. The cause search, the proofs and the reach all probe
// this way; a proof's probes of many states run in every slot at once (inSlots).
import type { CrashStateInfo, ProbeUnit } from '../../../fusefs/crash-states.js';
import type { ProbeFn } from '../cause/search.js';
import { judge, type Violation } from '../oracle.js';
import { historyOf, type JudgeContext, type Recorded } from './judge-states.js';

/** Whether a recovery failed a check (a hang alone is not a failure of the state). */
export const failed = (vs: readonly Violation[]) => vs.some((v) => !v.hang);

/** The checks a state failed, hangs aside. */
export const checksOf = (vs: readonly Violation[]) => new Set(vs.filter((v) => !v.hang).map((v) => v.check));

/** The recording's probes recover without a recovery cut: the lost units are those of the first cut. */
export function withoutRecoveryCuts(judging: JudgeContext): JudgeContext {
  if (!judging.o.recoveryCuts) return judging;
  return {
    ...judging,
    o: { ...judging.o, recoveryCuts: false },
    caseOf: (s, on) => {
      const { recoveryCut: _cut, ...c } = judging.caseOf(s, on);
      return c;
    },
  };
}

/** Probes of hypothetical images of one state (its hash seeds a recovery cut, if any: a probe recovers the same way). */
export function probeOf(ctx: JudgeContext, recorded: Recorded, state: CrashStateInfo, slot = 0): ProbeFn {
  return async (req) => {
    const s = { id: req.state, interval: state.interval, hash: state.hash };
    const persist = req.persistAll ? (await ctx.daemon.client.units(req.state, req.hypothesis)).map((u): ProbeUnit => ({ kind: u.kind, ino: u.ino })) : req.persist;
    const prepared = await ctx.pool.prepare(slot, s, ctx.caseOf(s), { ...(persist ? { probe: persist } : {}), ...(req.hypothesis ? { hypothesis: req.hypothesis } : {}) });
    const recovery = await ctx.pool.recover(slot, prepared);
    return judge({ target: ctx.target.name, faultsInjected: false, runs: historyOf(recorded, req.linesAsOf ?? req.state.afterOp, recovery.runs) });
  };
}

/** `work` on each item, `slots` at a time (each call given its own slot of the recovery pool); the results by item. */
export async function inSlots<T, R>(slots: number, items: readonly T[], work: (item: T, slot: number) => Promise<R>): Promise<Map<T, R>> {
  const out = new Map<T, R>();
  let next = 0;
  await Promise.all(Array.from({ length: Math.max(1, Math.min(slots, items.length)) }, async (_, slot) => {
    while (next < items.length) {
      const item = items[next++];
      out.set(item, await work(item, slot));
    }
  }));
  return out;
}
