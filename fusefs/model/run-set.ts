// Sets of integers (sector or block numbers) as sorted, disjoint, non-adjacent runs: torn's sectors
// that missed a change, and a file's allocated blocks (GrowBuffer). A file written front to back is
// one run, so the common change (an append) extends the last run in O(1).
//
// Invariant: runs[i][0] <= runs[i][1] and runs[i][1] + 1 < runs[i + 1][0]; `members` is their total length.

/** Numbers first..last (inclusive); empty when first > last. */
export type Run = [first: number, last: number];

export class RunSet {
  private runs: Run[] = [];
  private members = 0;

  /** How many numbers the set holds. */
  get count(): number {
    return this.members;
  }

  /** The index of the first run ending at or after `n`. */
  private from(n: number): number {
    let lo = 0;
    let hi = this.runs.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.runs[mid][1] < n) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  has(n: number): boolean {
    const r = this.runs[this.from(n)];
    return r !== undefined && r[0] <= n;
  }

  add(a: number, b: number): void {
    if (a > b) return;
    const runs = this.runs;
    const top = runs[runs.length - 1];
    // Appending (or rewriting the end): extend the last run without a search.
    if (top !== undefined && a >= top[0] && a <= top[1] + 1) {
      if (b > top[1]) {
        this.members += b - top[1];
        top[1] = b;
      }
      return;
    }
    // Runs that overlap or touch [a, b] merge with it.
    const lo = this.from(a - 1);
    let hi = lo;
    let lost = 0;
    while (hi < runs.length && runs[hi][0] <= b + 1) {
      a = Math.min(a, runs[hi][0]);
      b = Math.max(b, runs[hi][1]);
      lost += runs[hi][1] - runs[hi][0] + 1;
      hi++;
    }
    runs.splice(lo, hi - lo, [a, b]);
    this.members += b - a + 1 - lost;
  }

  /** Removes [a, b] (what the set holds of it). */
  remove(a: number, b: number): void {
    if (a > b) return;
    const runs = this.runs;
    const lo = this.from(a);
    const kept: Run[] = [];
    let hi = lo;
    for (; hi < runs.length && runs[hi][0] <= b; hi++) {
      const [x, y] = runs[hi];
      if (x < a) kept.push([x, a - 1]);
      if (y > b) kept.push([b + 1, y]);
      this.members -= Math.min(y, b) - Math.max(x, a) + 1;
    }
    if (hi > lo) runs.splice(lo, hi - lo, ...kept);
  }

  /** Removes every number from `n` on. */
  removeFrom(n: number): void {
    const top = this.runs[this.runs.length - 1];
    if (top === undefined || top[1] < n) return;
    this.remove(n, top[1]);
  }

  /** The runs of [a, b] not in the set. */
  outside(a: number, b: number): Run[] {
    const out: Run[] = [];
    let next = a;
    for (let i = this.from(a); i < this.runs.length && next <= b; i++) {
      const [x, y] = this.runs[i];
      if (x > b) break;
      if (x > next) out.push([next, x - 1]);
      next = y + 1;
    }
    if (next <= b) out.push([next, b]);
    return out;
  }

  /** How many of [a, b] are not in the set. */
  countOutside(a: number, b: number): number {
    return this.outside(a, b).reduce((n, [x, y]) => n + y - x + 1, 0);
  }

  /** Numbers from `n` on move by `delta` (negative: down; the caller removed what they would land on). */
  shiftFrom(n: number, delta: number): void {
    const i = this.from(n);
    const r = this.runs[i];
    if (r !== undefined && r[0] < n) {
      // Split the run holding n: its part from n on moves.
      this.runs.splice(i, 1, [r[0], n - 1], [n, r[1]]);
      this.shiftFrom(n, delta);
      return;
    }
    const moved = this.runs.splice(i).map(([x, y]): Run => [x + delta, y + delta]);
    if (moved.length > 0 && moved[0][0] < 0) throw new Error(`invariant: RunSet.shiftFrom(${n}, ${delta}) moves numbers below 0`);
    this.members -= moved.reduce((k, [x, y]) => k + y - x + 1, 0);
    for (const [x, y] of moved) this.add(x, y);
  }

  clone(): RunSet {
    const s = new RunSet();
    s.runs = this.runs.map(([x, y]): Run => [x, y]);
    s.members = this.members;
    return s;
  }

  /** The runs, for tests and invariant checks. */
  toArray(): readonly Run[] {
    return this.runs;
  }
}
