// Which seqs are acked (pure): a single first-unacked seq plus the ranges acked above a gap.
export class AckTracker {
  /** Acked ranges above firstUnacked, sorted, disjoint, not adjacent: [start, end] inclusive. */
  private ranges: Array<[number, number]> = [];

  constructor(public firstUnacked: number) {}

  /** Number of seqs acked above the first gap (out of order, not yet contiguous). */
  get pendingOutOfOrder(): number {
    return this.ranges.reduce((sum, [s, e]) => sum + e - s + 1, 0);
  }

  isAcked(seq: number): boolean {
    if (seq < this.firstUnacked) return true;
    return this.ranges.some(([s, e]) => s <= seq && seq <= e);
  }

  /** Marks [start, end] acked (a single ack is start === end). */
  add(start: number, end = start): void {
    if (end < start) throw new Error(`invariant: ack range ${start}..${end} is empty`);
    if (end < this.firstUnacked) return;
    start = Math.max(start, this.firstUnacked);
    // Insert keeping order, then merge overlapping or adjacent ranges.
    let i = 0;
    while (i < this.ranges.length && this.ranges[i][0] < start) i++;
    this.ranges.splice(i, 0, [start, end]);
    const merged: Array<[number, number]> = [];
    for (const r of this.ranges) {
      const last = merged[merged.length - 1];
      if (last && r[0] <= last[1] + 1) last[1] = Math.max(last[1], r[1]);
      else merged.push([r[0], r[1]]);
    }
    this.ranges = merged;
    if (this.ranges.length > 0 && this.ranges[0][0] === this.firstUnacked) {
      this.firstUnacked = this.ranges[0][1] + 1;
      this.ranges.shift();
    }
  }
}
