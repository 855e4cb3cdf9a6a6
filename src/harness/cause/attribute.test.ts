import { describe, expect, it } from 'vitest';
import { coverStates, type Candidate } from './attribute.js';

const cand = (kind: Candidate['kind'], ...cures: number[]): Candidate & { name: string } => ({ kind, cures: new Set(cures), name: `${kind}:${cures.join(',')}` });

describe('coverStates', () => {
  it('explains the most states with the fewest candidates, greedily', () => {
    const a = cand('missing-fsync', 0, 1);
    const b = cand('missing-dir-fsync', 0, 1, 2, 3);
    const c = cand('early-confirmation', 3, 4);
    const { chosen, unexplained } = coverStates(6, [a, b, c]);
    expect(chosen.map((x) => [x.candidate.name, x.states])).toEqual([[b.name, [0, 1, 2, 3]], [c.name, [4]]]);
    expect(unexplained).toEqual([5]);
  });

  it('gives the states of a logic error no other cause, even one that cures more', () => {
    const logic = cand('recovery-fails-on-legal-disk', 1);
    const wide = cand('missing-fsync', 0, 1, 2);
    const { chosen } = coverStates(3, [wide, logic]);
    expect(chosen.map((x) => [x.candidate.name, x.states])).toEqual([[logic.name, [1]], [wide.name, [0, 2]]]);
  });

  it('names no candidate that explains nothing left, and leaves every state unexplained without candidates', () => {
    expect(coverStates(2, [cand('missing-fsync', 0), cand('missing-fsync', 0)]).chosen).toHaveLength(1);
    expect(coverStates(2, [])).toEqual({ chosen: [], unexplained: [0, 1] });
  });

  it('refuses a candidate that cures a state the run does not have', () => {
    expect(() => coverStates(1, [cand('missing-fsync', 3)])).toThrow(/invariant broken/);
  });
});
