// The distinct failures of a gate run, by key (a cause, a signature, or a cluster's checks and cut):
// a case of a known key is counted under it; a new key is kept, with its first (or shrunk) case's
// artifact. The gate loop owns it and every case source counts into it, so a failure is counted the
// same way whatever found it.
import type { Cause, CauseRoute } from '../harness/cause/cause.js';
import { addAlsoCause, type DistinctFailure, type GateRow } from '../report/gate-results.js';

export class FailureRegistry {
  private readonly byKey = new Map<string, DistinctFailure>();

  constructor(private readonly log: (line: string) => void = () => {}) {}

  get size(): number {
    return this.byKey.size;
  }

  has(key: string): boolean {
    return this.byKey.has(key);
  }

  get(key: string): DistinctFailure | undefined {
    return this.byKey.get(key);
  }

  /** In the order found. */
  values(): DistinctFailure[] {
    return [...this.byKey.values()];
  }

  /**
   * Counts one more case of a known failure, found by `row`, with its signature and the crash states
   * it stands for (`route` 'known': its cause was proven on that case's run again). False when the key
   * is new (the caller then adds it). `cause`: the case's, when another proven cause than the
   * group's is counted under its key (cause.ts groupKeyOf), named in the group's alsoCauses.
   */
  countKnown(key: string, row: GateRow, signature: string, states?: number, route?: CauseRoute, cause?: Pick<Cause, 'kind' | 'key' | 'title'>): boolean {
    const known = this.byKey.get(key);
    if (!known) return false;
    known.count++;
    if (cause && cause.kind !== 'not-isolated' && known.cause && cause.key !== known.cause.key) addAlsoCause(known, cause.title);
    if (route === 'known') known.provenAgain = (known.provenAgain ?? 0) + 1;
    if (states !== undefined) known.states = (known.states ?? 0) + states;
    const s = known.signatures.find((x) => x.signature === signature);
    if (s) s.count++;
    else known.signatures.push({ signature, count: 1 });
    if (!known.foundBy.includes(row.name)) known.foundBy.push(row.name);
    return true;
  }

  /** Keeps a new distinct failure; `said` names it in the progress line. */
  add(failure: DistinctFailure, said: string): void {
    if (this.byKey.has(failure.key)) throw new Error(`invariant: distinct failure "${failure.key}" is added twice (count a known one with countKnown)`);
    this.byKey.set(failure.key, failure);
    this.log(`new distinct failure (${this.byKey.size}): ${said}, found by ${failure.foundBy.join(', ')}`);
  }
}
