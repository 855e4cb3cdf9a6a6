// Which crash state of a recording the pool's next free slot judges, under a cluster gate's floor:
// the kinds in turn (StateTurns), for the workload's slice of the budget; past the slice only a
// kind still owed something goes on (a judged case, its share of the lose-unsynced states it
// listed, a state under each policy asked), counting the states in slots as what the floor will
// have once they are judged (it asks one judged case, not one per slot).
import type { CrashStateInfo, StatePolicy } from '../../../fusefs/crash-states.js';
import { keepsNoUnsynced } from '../../../fusefs/model/policies/index.js';
import { KIND_ROW, type CutKind } from '../../faults/cut-kinds.js';
import type { ClusterStateVerdict } from '../../harness/cluster/cluster-pool.js';
import { StateTurns } from '../../harness/cluster/state-turns.js';
import type { TempDaemon } from '../../harness/daemon-process.js';
import { CLUSTER_LOSE_UNSYNCED_SHARE } from '../cluster-coverage.js';
import { MIN_STATE_MS } from './costs.js';
import type { ClusterRun } from './run.js';

export class StateHandout {
  private readonly turns: StateTurns<CrashStateInfo>;
  /** States in slots, per kind (its index in the kinds asked) and per kind and policy. */
  private readonly inFlight: number[];
  private readonly inFlightUnder: Map<StatePolicy, number>[];
  private readonly kindOfState = new Map<CrashStateInfo, number>();
  /** Each state handed out, by its place in the turns: the order its verdict is counted and kept in. */
  private readonly handedOut = new Map<CrashStateInfo, number>();

  /**
   * `byKind[j]`: the states of the j-th kind asked, in the order they are to be judged; they were
   * recorded on `recordedOn` (after a failure of the tool, a fresh daemon, they are gone).
   * `input`: the workload's index, for the progress line.
   */
  constructor(private readonly run: ClusterRun, byKind: readonly (readonly CrashStateInfo[])[], private readonly recordedOn: TempDaemon, private readonly sliceEndsMs: number, private readonly input: number) {
    this.turns = new StateTurns(byKind);
    this.inFlight = run.asked.map(() => 0);
    this.inFlightUnder = run.asked.map(() => new Map<StatePolicy, number>());
  }

  /** The next state to judge, or undefined: the run stopped, its daemon was replaced, or no state is due. */
  next(): CrashStateInfo | undefined {
    const { run } = this;
    if (run.stopped || run.daemons.running !== this.recordedOn) return undefined;
    // Past the slice only a kind still owed a case, or a state under a policy, goes on (the floor).
    const t = this.turns.next((j, st) => !this.pastSlice() || this.owedNow(j, st.id.policy), () => Date.now() >= this.sliceEndsMs && !run.asked.some((_, j) => this.owedNow(j)));
    if (!t) return undefined;
    this.inFlight[t.kind]++;
    this.inFlightUnder[t.kind].set(t.state.id.policy, (this.inFlightUnder[t.kind].get(t.state.id.policy) ?? 0) + 1);
    this.kindOfState.set(t.state, t.kind);
    this.handedOut.set(t.state, this.handedOut.size);
    run.ctx.doing(`${KIND_ROW[run.asked[t.kind]]}: crash state after request ${t.state.id.afterOp} of workload ${this.input + 1} (${run.pool.size} slots)`);
    return t.state;
  }

  /** The index (in the kinds asked) of a handed-out state's kind; undefined for a state not handed out here. */
  kindIndexOf(state: CrashStateInfo): number | undefined {
    return this.kindOfState.get(state);
  }

  /** Sorts `verdicts` in the order their states were handed out (never the order the slots finished in). */
  sortHandedOut(verdicts: ClusterStateVerdict[]): void {
    verdicts.sort((a, b) => this.handedOut.get(a.state)! - this.handedOut.get(b.state)!);
  }

  /** A verdict counted on its row: its state is no longer in flight for the floor. Its kind. */
  counted(state: CrashStateInfo): CutKind {
    const j = this.kindOfState.get(state)!;
    this.inFlight[j]--;
    this.inFlightUnder[j].set(state.id.policy, this.inFlightUnder[j].get(state.id.policy)! - 1);
    return this.run.asked[j];
  }

  private pastSlice(): boolean {
    return Date.now() >= this.sliceEndsMs || this.run.budget.leftMs() < MIN_STATE_MS;
  }

  /** Owed and nothing in a slot that pays it: the j-th kind's state under policy p. */
  private owedUnderNow(j: number, p: StatePolicy): boolean {
    return this.run.owedUnder(this.run.asked[j], p) && (this.inFlightUnder[j].get(p) ?? 0) === 0;
  }

  /** The share of its lose-unsynced states a kind must judge (the floor), less those judged and in slots. */
  private shareOwedNow(j: number): boolean {
    const c = this.run.row(this.run.asked[j]).coverage.policies['lose-unsynced'];
    return Math.ceil(CLUSTER_LOSE_UNSYNCED_SHARE * (c?.listed ?? 0)) - (c?.states ?? 0) - (this.inFlightUnder[j].get('lose-unsynced') ?? 0) > 0;
  }

  /** Owed and nothing in a slot that pays it: the j-th kind's case, or its state under policy p (any policy when p is not given). */
  private owedNow(j: number, p?: StatePolicy): boolean {
    const { run } = this;
    return (run.owed(run.asked[j]) && this.inFlight[j] === 0) || ((p === undefined || keepsNoUnsynced(p)) && this.shareOwedNow(j)) ||
      (p === undefined ? run.policies.some((q) => this.owedUnderNow(j, q)) : this.owedUnderNow(j, p));
  }
}
