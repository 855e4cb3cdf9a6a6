// Delta debugging (Zeller and Hildebrandt's ddmin), pure: a 1-minimal subset of `items` for which
// `works` holds, given that it holds for all of them. Here `works` is "the recovery passes once
// these lost units are made durable": each call is a probe (a recovery), so results are cached and
// the number of calls is bounded by the caller's budget, which ends the search early when spent.

/** Thrown by a budgeted test when the search's bound (probes or time) is reached. */
export class BudgetSpent extends Error {
  constructor(readonly what: string) {
    super(`the search's bound was reached: ${what}`);
  }
}

/**
 * A 1-minimal subset of `items` (no single item can be left out) for which `works` holds, by ddmin
 * over complements and subsets. `works(items)` must hold (the caller checked it); `works([])` must not.
 */
export async function ddmin<T>(items: readonly T[], works: (subset: readonly T[]) => Promise<boolean>): Promise<T[]> {
  const cache = new Map<string, boolean>();
  const test = async (idx: readonly number[]): Promise<boolean> => {
    const key = idx.join(',');
    const hit = cache.get(key);
    if (hit !== undefined) return hit;
    const r = await works(idx.map((i) => items[i]));
    cache.set(key, r);
    return r;
  };
  let current = items.map((_, i) => i);
  let n = 2;
  while (current.length >= 2) {
    const size = Math.ceil(current.length / n);
    const chunks: number[][] = [];
    for (let i = 0; i < current.length; i += size) chunks.push(current.slice(i, i + size));
    let reduced = false;
    for (const chunk of chunks) {
      if (await test(chunk)) {
        current = chunk;
        n = 2;
        reduced = true;
        break;
      }
    }
    if (!reduced) {
      for (const chunk of chunks) {
        const complement = current.filter((i) => !chunk.includes(i));
        if (chunks.length > 2 && (await test(complement))) {
          current = complement;
          n = Math.max(n - 1, 2);
          reduced = true;
          break;
        }
      }
    }
    if (reduced) continue;
    if (n >= current.length) break;
    n = Math.min(n * 2, current.length);
  }
  return current.map((i) => items[i]);
}

/** The smallest k in [1, n] with works(k), given works(n) and that works is monotone in k (binary search). */
export async function smallestPrefix(n: number, works: (k: number) => Promise<boolean>): Promise<number> {
  let lo = 1;
  let hi = n;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (await works(mid)) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}
