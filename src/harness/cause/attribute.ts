// Which proven cause explains which failing state of a run (pure): a greedy set cover over the
// states each candidate's fix (or proof of another kind) cures. A logic error goes first: a state
// that fails even with every change durable gets no persistence or error-handling cause on top.
// Then, repeatedly, the candidate that explains the most states not yet explained; what no
// candidate explains is left unexplained, never given a cause whose fix does not cure it.
import type { CauseKind } from './cause.js';

export interface Candidate {
  kind: CauseKind;
  /** Indexes of the run's failing states this candidate's proof cures. */
  cures: ReadonlySet<number>;
}

/** Kinds whose states take no other cause: the program's logic fails on a disk holding every change. */
const LOGIC_ERRORS: readonly CauseKind[] = ['recovery-fails-on-legal-disk'];

export const isLogicError = (kind: CauseKind): boolean => LOGIC_ERRORS.includes(kind);

/** The fewest candidates, chosen greedily, that explain the most of `failing` states; each with the states it is given. */
export function coverStates<T extends Candidate>(failing: number, candidates: readonly T[]): { chosen: { candidate: T; states: number[] }[]; unexplained: number[] } {
  for (const c of candidates) {
    for (const i of c.cures) if (!Number.isInteger(i) || i < 0 || i >= failing) throw new Error(`invariant broken: a candidate cures state ${i}, not one of the run's ${failing} failing states`);
  }
  const left = new Set(Array.from({ length: failing }, (_, i) => i));
  const chosen: { candidate: T; states: number[] }[] = [];
  const unused = [...candidates];
  const take = (pick: (c: T) => boolean) => {
    for (;;) {
      let best = -1;
      let bestGain = 0;
      unused.forEach((c, k) => {
        if (!pick(c)) return;
        const gain = [...c.cures].filter((i) => left.has(i)).length;
        if (gain > bestGain) [best, bestGain] = [k, gain];
      });
      if (best < 0) return;
      const [candidate] = unused.splice(best, 1);
      const states = [...candidate.cures].filter((i) => left.has(i)).sort((a, b) => a - b);
      for (const i of states) left.delete(i);
      chosen.push({ candidate, states });
    }
  };
  take((c) => isLogicError(c.kind));
  take(() => true);
  return { chosen, unexplained: [...left].sort((a, b) => a - b) };
}
