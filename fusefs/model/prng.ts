// Seeded pseudo-random generator (mulberry32): the torn policy's only source of chance, so that
// the same seed always gives the same durable image.
export class Prng {
  private state: number;

  constructor(seed: number) {
    if (!Number.isSafeInteger(seed)) throw new Error(`Prng: seed must be a safe integer, got ${seed}`);
    // Fold the high bits in so seeds above 2^32 still differ.
    this.state = (seed ^ Math.floor(seed / 2 ** 32)) >>> 0;
  }

  /** Uniform in [0, 1). */
  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  /** Uniform integer in [0, n). */
  int(n: number): number {
    return Math.floor(this.next() * n);
  }

  coin(): boolean {
    return this.next() < 0.5;
  }
}
