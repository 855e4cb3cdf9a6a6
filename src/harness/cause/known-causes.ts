// Causes proven earlier in a gate run, tried first on every later failing run (pure). A proven fix
// is a hypothesis about the program, not about one recording: the same step (an fsync of the same
// kind of file after the same kind of request, a confirmation of the same kind withheld until the
// fsync that makes it true, a persistence point moved after the next one) usually cures the next
// run's failures of the same bug, for the price of one proof instead of a search. Here a proven
// cause becomes that step in another recording; explain.ts and cluster-cause.ts prove it there
// with the same rule as any cause, and the states it cures join its group (its key).
import type { TraceEntry } from '../../../fusefs/protocol.js';
import { parentOf, pathPattern } from '../path-pattern.js';
import { candidatesOf, rankCandidates, type CandidateFix, type FailingCut, type RecordingView } from './candidates.js';
import type { Cause, FixStep } from './cause.js';

/** A proven cause with the requests its fsyncs follow, as the recording it was proven on has them (what another recording matches). */
export interface KnownCause {
  cause: Cause;
  /** By request: what each fsync-after step follows, and a moved step's fsync and the one it moves after. */
  follows: ReadonlyMap<number, TraceEntry>;
}

/** The causes proven in a gate run so far, in the order proven; one per key (the first proof's words head the group). */
export class KnownCauses {
  private readonly byKey = new Map<string, KnownCause>();

  /** Keeps a proven cause found on a recording with `trace`. */
  add(cause: Cause, trace: readonly TraceEntry[]): void {
    if (cause.kind === 'not-isolated') throw new Error(`invariant: only a proven cause is known (got "${cause.key}")`);
    if (this.byKey.has(cause.key)) return;
    const follows = new Map<number, TraceEntry>();
    for (const s of [cause.step, ...(cause.alsoSteps ?? [])]) {
      const ops = s?.kind === 'fsync-after' ? [s.afterOp] : s?.kind === 'move' ? [s.op, s.afterOp] : [];
      for (const op of ops) {
        const e = trace.find((x) => x.op === op);
        if (e) follows.set(op, e);
      }
    }
    this.byKey.set(cause.key, { cause, follows });
  }

  list(): KnownCause[] {
    return [...this.byKey.values()];
  }

  get size(): number {
    return this.byKey.size;
  }
}

const samePattern = (a: TraceEntry, b: TraceEntry) =>
  a.kind === b.kind && pathPattern(a.path) === pathPattern(b.path) && pathPattern(a.path2 ?? '') === pathPattern(b.path2 ?? '');

/** One fsync-after step carried over: after the first request like the one it followed (kind and path patterns), of the same kind of unit. */
function carryFsync(step: Extract<FixStep, { kind: 'fsync-after' }>, follows: KnownCause['follows'], to: readonly TraceEntry[]): Extract<FixStep, { kind: 'fsync-after' }> | undefined {
  const like = follows.get(step.afterOp);
  if (!like) return undefined;
  const first = to.find((e) => e.result === 0 && samePattern(e, like) && (like.node === undefined || e.node !== undefined));
  if (!first) return undefined;
  if (!step.dir) return { ...step, afterOp: first.op, path: first.path };
  const toDest = like.path2 !== undefined && parentOf(like.path2) === step.path;
  return { ...step, afterOp: first.op, path: parentOf(toDest && first.path2 !== undefined ? first.path2 : first.path) };
}

/**
 * The known cause as a step of another recording (`to`), keeping its key and title: undefined when
 * that recording has no request like the one its fix follows. A withheld confirmation waits for the
 * next fsync of a file of the same pattern; where the recording makes none (another design names
 * its files otherwise) it waits for the fsync of the candidate of the same confirmation kind that
 * bites at the most failing cuts. A moved persistence point is the recording's own candidate of the
 * same key. `cuts` are the failing cuts of `to` still unexplained.
 */
export function carryOver({ cause: known, follows }: KnownCause, to: RecordingView, cuts: readonly FailingCut[]): Cause | undefined {
  const step = known.step;
  if (!step) return undefined;
  const carried = (s: FixStep, also?: FixStep[], words?: Partial<Cause>): Cause => ({
    ...known, ...words, route: 'known', step: s, ...(also?.length ? { alsoSteps: also } : {}), proof: undefined, failingStates: undefined, reach: undefined,
    evidence: [`a cause proven earlier in this gate run (${known.title}), its fix applied to this run`], search: { ...known.search, probes: 0, ms: 0, boundReached: false },
  });
  if (step.kind === 'fsync-after') {
    const main = carryFsync(step, follows, to.trace);
    if (!main) return undefined;
    const also = (known.alsoSteps ?? []).flatMap((s) => (s.kind === 'fsync-after' ? [carryFsync(s, follows, to.trace)].filter((x) => x !== undefined) : []));
    return carried(main, also);
  }
  const sameKey = (c: CandidateFix) => c.cause.key === known.key;
  if (step.kind === 'move') {
    // The same kind of fsync moved after the same kind of persistence point.
    const like = (op: number, e: TraceEntry | undefined) => { const x = to.trace.find((t) => t.op === op); return x !== undefined && e !== undefined && samePattern(x, e); };
    const c = candidatesOf(to).find((x) => sameKey(x) && x.cause.step?.kind === 'move' && like(x.cause.step.op, follows.get(step.op)) && like(x.cause.step.afterOp, follows.get(step.afterOp)));
    return c ? carried(c.cause.step!, [], { fix: c.cause.fix, before: c.cause.before }) : undefined;
  }
  const lineKind = known.key.split(' ').at(-1);
  const confirmations = candidatesOf(to).filter((c) => c.cause.kind === 'early-confirmation' && c.cause.key.split(' ').at(-1) === lineKind);
  const pick = confirmations.find(sameKey) ?? rankCandidates(confirmations, cuts, 1)[0]?.candidate;
  return pick ? carried(pick.cause.step!, [], { fix: pick.cause.fix, before: pick.cause.before }) : undefined;
}
