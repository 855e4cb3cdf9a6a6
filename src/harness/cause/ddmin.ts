// Delta debugging (Zeller and Hildebrandt's ddmin), pure: a 1-minimal subset of `items` for which
// `works` holds, given that it holds for all of them. Here `works` is "the recovery passes once
// these lost units are made durable": each call is a probe (a recovery), so results are cached and
// the number of calls is bounded by the caller's budget, which ends the search early when spent.
// A cluster's probe recovers several servers and waits on their elections (seconds each), so its
// search tests several subsets at once and first narrows by group (a node, a directory).

/** Thrown by a budgeted test when the search's bound (probes or time) is reached. */
export class BudgetSpent extends Error {
  constructor(readonly what: string) {
    super(`the search's bound was reached: ${what}`);
  }
}

/** Every test of a round awaited before the first failure is rethrown: none runs on once the search returns. */
async function allSettledOrThrow<T>(tests: readonly Promise<T>[]): Promise<T[]> {
  const settled = await Promise.allSettled(tests);
  const failed = settled.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed) throw failed.reason;
  return settled.map((r) => (r as PromiseFulfilledResult<T>).value);
}

export interface DdminOptions {
  /** Tests run at once (1: one after another, as ddmin is written). The result is the same for any value. */
  parallel?: number;
  /**
   * Before ddmin, try leaving each item out of all the others (one round of tests at once): the
   * items whose absence fails, if they work together, are the answer. ddmin removes the items not
   * needed one at a time when most are needed; this takes one round. Its answer is 1-minimal when
   * `works` is monotone (more items never break it). If they do not work together, the shortest
   * prefix of the others that works with them is kept and the round repeated; ddmin runs on what
   * is left once a round narrows nothing.
   */
  leaveOneOutFirst?: boolean;
}

/**
 * A 1-minimal subset of `items` (no single item can be left out) for which `works` holds, by ddmin
 * over complements and subsets. `works(items)` must hold (the caller checked it); `works([])` must not.
 */
export async function ddmin<T>(items: readonly T[], works: (subset: readonly T[]) => Promise<boolean>, opts: DdminOptions = {}): Promise<T[]> {
  const parallel = Math.max(1, opts.parallel ?? 1);
  const cache = new Map<string, Promise<boolean>>();
  const test = (idx: readonly number[]): Promise<boolean> => {
    const key = idx.join(',');
    let r = cache.get(key);
    if (!r) cache.set(key, (r = works(idx.map((i) => items[i]))));
    return r;
  };
  const results = (candidates: readonly (readonly number[])[]): Promise<boolean[]> => allSettledOrThrow(candidates.map(test));
  /** The index of the first candidate (in order) that works, testing `parallel` at a time. */
  const firstWorking = async (candidates: readonly (readonly number[])[]): Promise<number> => {
    for (let i = 0; i < candidates.length; i += parallel) {
      const k = (await results(candidates.slice(i, i + parallel))).indexOf(true);
      if (k >= 0) return i + k;
    }
    return -1;
  };
  let current = items.map((_, i) => i);
  while (opts.leaveOneOutFirst && current.length > 2) {
    const without = current.map((i) => current.filter((j) => j !== i));
    const fails: boolean[] = [];
    for (let i = 0; i < without.length; i += parallel) fails.push(...(await results(without.slice(i, i + parallel))).map((ok) => !ok));
    const needed = current.filter((_, k) => fails[k]);
    // Each item's absence fails: 1-minimal already.
    if (needed.length === current.length) return current.map((i) => items[i]);
    if (needed.length > 0 && (await test(needed))) return needed.map((i) => items[i]);
    // Some items stand in for each other (a snapshot or the log it replaces): the needed ones with
    // the shortest prefix of the others that works, then again from there.
    const others = current.filter((_, k) => !fails[k]);
    const withFirst = (k: number) => [...needed, ...others.slice(0, k)].sort((a, b) => a - b);
    const next = withFirst(await smallestPrefix(others.length, (k) => test(withFirst(k)), parallel));
    if (next.length === current.length) break;
    current = next;
  }
  let n = 2;
  while (current.length >= 2) {
    const size = Math.ceil(current.length / n);
    const chunks: number[][] = [];
    for (let i = 0; i < current.length; i += size) chunks.push(current.slice(i, i + size));
    // Subsets first, then (with more than two chunks) complements: the first that works, in that order.
    const complements = chunks.length > 2 ? chunks.map((chunk) => current.filter((i) => !chunk.includes(i))) : [];
    const k = await firstWorking([...chunks, ...complements]);
    if (k >= 0 && k < chunks.length) {
      current = chunks[k];
      n = 2;
      continue;
    }
    if (k >= chunks.length) {
      current = complements[k - chunks.length];
      n = Math.max(n - 1, 2);
      continue;
    }
    if (n >= current.length) break;
    n = Math.min(n * 2, current.length);
  }
  return current.map((i) => items[i]);
}

/** A 1-minimal set of `items`' groups (ddmin over the groups `keyOf` makes), as the items of the groups kept. */
export async function ddminByGroup<T>(items: readonly T[], keyOf: (item: T) => string, works: (subset: readonly T[]) => Promise<boolean>, opts: DdminOptions = {}): Promise<T[]> {
  const groups = new Map<string, T[]>();
  for (const item of items) {
    const key = keyOf(item);
    const g = groups.get(key);
    if (g) g.push(item);
    else groups.set(key, [item]);
  }
  if (groups.size < 2) return [...items];
  return (await ddmin([...groups.values()], (gs) => works(gs.flat()), opts)).flat();
}

/** The smallest k in [1, n] with works(k), given works(n) and that works is monotone in k (a search testing `parallel` points at once). */
export async function smallestPrefix(n: number, works: (k: number) => Promise<boolean>, parallel = 1): Promise<number> {
  let lo = 1;
  let hi = n;
  while (lo < hi) {
    // m points splitting [lo, hi) evenly (one: the midpoint, a binary search).
    const m = Math.min(Math.max(1, parallel), hi - lo);
    const points = [...new Set(Array.from({ length: m }, (_, i) => lo + Math.floor(((hi - lo) * (i + 1)) / (m + 1))))];
    const ok = await allSettledOrThrow(points.map(works));
    const first = ok.indexOf(true);
    if (first >= 0) hi = points[first];
    lo = first > 0 ? points[first - 1] + 1 : first === 0 ? lo : points[points.length - 1] + 1;
  }
  return lo;
}
