// Steers a suite's generation toward the features its runs reach least (Coverage.features: kinds of
// request against kinds of file, and the target's events such as purges), as coverage-guided fuzzers
// do. Each suite counts, for every feature, the share of its inputs whose runs reached it; a feature
// reached by at most RARE_SHARE of them is rare. For each feature the suite keeps the last inputs that
// reached it; while some feature is rare, three inputs in four are small mutations of an input that
// reached one (the feature drawn the likelier the rarer), the rest fresh. A feature stops being rare
// once steering has raised its share, so steering stops by itself where there is nothing rare left.
// Seeded, each suite with its own draws: a suite's k-th input depends on the seed and its own first
// k-1 inputs only, whatever the other suites ran in between, so a gate run repeats (a work budget
// that gives each suite the inputs a time-budgeted run gave it runs the same inputs).
import { Prng } from '../../fusefs/model/prng.js';
import type { CrashInput } from '../../properties/crash-property.js';

/** A feature reached by at most this share of a suite's inputs is rare. */
export const RARE_SHARE = 0.25;
/** While a feature is rare, this share of the suite's inputs mutate one that reached it. */
export const MUTATE_SHARE = 0.75;
/** Per suite and feature, the newest inputs that reached it (the ones mutated). */
export const KEPT_PER_FEATURE = 8;

interface SuiteState {
  /** Inputs observed. */
  inputs: number;
  /** Per feature: the inputs that reached it. */
  runs: Map<string, number>;
  kept: Map<string, CrashInput[]>;
  /** The suite's own draws. */
  prng: Prng;
  /** The feature the last pick aimed at, until its input is observed. */
  aimed?: string;
}

/**
 * One gate run's steering. Each suite counts its own features (what is rare depends on the suite's
 * settings space: an append-log suite never renames a checkpoint file) and keeps its own inputs (a
 * mutation must keep the suite's settings).
 */
export class Steering {
  private readonly suites = new Map<number, SuiteState>();
  /** Inputs handed out as mutations so far. */
  steered = 0;
  /** Mutants observed, and of them those whose run reached the feature they were aimed at. */
  readonly aims = { mutants: 0, hit: 0 };

  constructor(private readonly seed: number) {}

  private state(suite: number): SuiteState {
    let st = this.suites.get(suite);
    // Each suite its own draws, seeded by the gate's seed and the suite.
    if (!st) this.suites.set(suite, (st = { inputs: 0, runs: new Map(), kept: new Map(), prng: new Prng((Math.imul(this.seed, 0x85eb_ca6b) + Math.imul(suite + 1, 0xc2b2_ae35)) | 0) }));
    return st;
  }

  /** Counts the features one input's runs reached (each once), and keeps the input as one that reached each. */
  observe(suite: number, input: CrashInput, features: Record<string, number>): void {
    const st = this.state(suite);
    const names = Object.keys(features).filter((f) => (features[f] ?? 0) > 0);
    st.inputs++;
    if (st.aimed !== undefined) {
      this.aims.mutants++;
      if (names.includes(st.aimed)) this.aims.hit++;
      st.aimed = undefined;
    }
    for (const f of names) {
      st.runs.set(f, (st.runs.get(f) ?? 0) + 1);
      const kept = st.kept.get(f) ?? [];
      kept.push(input);
      if (kept.length > KEPT_PER_FEATURE) kept.shift();
      st.kept.set(f, kept);
    }
  }

  /** The suite's rare features with their share of its inputs, rarest first. */
  rare(suite: number): { feature: string; share: number }[] {
    const st = this.state(suite);
    return [...st.runs.entries()]
      .map(([feature, n]) => ({ feature, share: n / st.inputs }))
      .filter((r) => r.share <= RARE_SHARE)
      .sort((a, b) => a.share - b.share || (a.feature < b.feature ? -1 : 1));
  }

  /**
   * An input of `suite` to mutate, or undefined for a fresh one: always while no feature of the suite
   * is rare, else a quarter of the time. The rare feature is drawn with weight 1/share squared (one
   * reached half as often is four times as likely), then one of the inputs that reached it.
   */
  pick(suite: number): CrashInput | undefined {
    const st = this.state(suite);
    st.aimed = undefined;
    const rare = this.rare(suite);
    if (rare.length === 0 || st.prng.next() >= MUTATE_SHARE) return undefined;
    const weights = rare.map((r) => 1 / r.share ** 2);
    let x = st.prng.next() * weights.reduce((a, b) => a + b, 0);
    let i = 0;
    while (i < rare.length - 1 && x >= weights[i]) x -= weights[i++];
    const kept = st.kept.get(rare[i].feature)!;
    st.aimed = rare[i].feature;
    this.steered++;
    return kept[st.prng.int(kept.length)];
  }
}
