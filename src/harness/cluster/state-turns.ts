// Which crash state of a cluster recording is judged next, pure (no mount, no clock: the
// caller says what is allowed now): the kinds in turn, the first state of each kind, then the second
// of each..., so every kind gets states early however short the slice. Parallel slots each ask for
// their next state; a state skipped (not allowed when its turn came) is not offered again, as in
// the one-at-a-time loop this replaces.

/** A state handed out: its kind's index in the lists given, and the state. */
export interface Turn<S> {
  kind: number;
  state: S;
}

export class StateTurns<S> {
  /** The next position: round (the i-th state of each kind) and kind within it. */
  private round = 0;
  private kind = 0;
  private readonly rounds: number;
  private ended = false;
  /** States handed out, per kind. */
  readonly taken: number[];

  /** `byKind[j]`: kind j's states in the order they are to be judged. */
  constructor(private readonly byKind: readonly (readonly S[])[]) {
    this.rounds = Math.max(0, ...byKind.map((l) => l.length));
    this.taken = byKind.map(() => 0);
  }

  /**
   * The next state whose turn it is and that `allow(kind, state)` allows, or undefined when none is
   * left. After each full round, `endAfterRound()` true ends the turns (the slice is over and no
   * kind is owed anything).
   */
  next(allow: (kind: number, state: S) => boolean, endAfterRound: () => boolean = () => false): Turn<S> | undefined {
    while (!this.ended && this.round < this.rounds) {
      if (this.kind === this.byKind.length) {
        // A round handed out (or skipped): the next starts only if the caller does not end the turns.
        this.kind = 0;
        this.round++;
        if (endAfterRound()) this.ended = true;
        continue;
      }
      const kind = this.kind++;
      const state = this.byKind[kind][this.round];
      if (state === undefined || !allow(kind, state)) continue;
      this.taken[kind]++;
      return { kind, state };
    }
    return undefined;
  }
}
