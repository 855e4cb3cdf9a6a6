// Choosing a bounded sample of a list, pure: evenly over its length, and a cap shared fairly by several lists.

/** At most `n` of `items`, spread evenly from the first to the last (in their order). */
export function spreadEvenly<T>(items: readonly T[], n: number): T[] {
  if (items.length <= n) return [...items];
  if (n <= 0) return [];
  return Array.from({ length: n }, (_, i) => items[Math.round((i * (items.length - 1)) / Math.max(1, n - 1))]);
}

/**
 * How many of each list to keep so that at most `cap` are kept in all, fairly: a list smaller than
 * its even share keeps all of it, and what it leaves goes to the others (water-filling). Shares
 * differ by at most one between lists that are cut; the remainder goes to the first ones.
 */
export function fairShares(sizes: readonly number[], cap: number): number[] {
  const shares = sizes.map(() => 0);
  let left = Math.max(0, cap);
  let open = sizes.map((_, i) => i).filter((i) => sizes[i] > 0);
  while (left > 0 && open.length > 0) {
    const even = Math.floor(left / open.length);
    if (even === 0) {
      for (const i of open.slice(0, left)) shares[i]++;
      break;
    }
    for (const i of open) {
      const take = Math.min(even, sizes[i] - shares[i]);
      shares[i] += take;
      left -= take;
    }
    open = open.filter((i) => shares[i] < sizes[i]);
  }
  return shares;
}
