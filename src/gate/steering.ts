// Steers a suite's generation toward the features its runs reach least (Coverage.features: kinds of
// request against kinds of file, and the target's events such as purges), as coverage-guided fuzzers
// do: an input whose run reached a rare feature joins a corpus, and three inputs in four are small
// mutations of a corpus entry, picked by how rare its rarest feature is. Seeded: a gate run repeats.
import { Prng } from '../../fusefs/model/prng.js';
import type { CrashInput } from '../../properties/crash-property.js';

/** A feature reached by fewer runs than this is rare: an input reaching it joins the corpus. */
export const RARE_RUNS = 3;
/** Features among this many least reached count as rare too, however often they were reached. */
export const RAREST_KEPT = 3;
/** A suite's corpus keeps this many inputs, the newest. */
export const MAX_CORPUS = 64;

/**
 * One gate run's steering: the features are counted over all its suites (what is rare, is rare for
 * the run), each suite keeps a corpus of its own inputs (a mutation must keep the suite's settings).
 */
export class Steering {
  private readonly corpora = new Map<number, { input: CrashInput; features: string[] }[]>();
  private readonly runs = new Map<string, number>();
  private readonly prng: Prng;
  /** Inputs handed out as mutations so far. */
  steered = 0;

  constructor(seed: number) {
    this.prng = new Prng(seed);
  }

  /**
   * Counts the features one input's runs reached; keeps the input in its suite's corpus if one of
   * them was rare: reached by fewer than RARE_RUNS runs, or among the RAREST_KEPT least reached.
   */
  observe(suite: number, input: CrashInput, features: Record<string, number>): void {
    const names = Object.keys(features);
    const counts = [...this.runs.values()].sort((a, b) => a - b);
    const rareBelow = Math.max(RARE_RUNS, (counts[RAREST_KEPT - 1] ?? 0) + 1);
    const rare = names.some((f) => (this.runs.get(f) ?? 0) < rareBelow);
    for (const f of names) this.runs.set(f, (this.runs.get(f) ?? 0) + (features[f] ?? 0));
    if (!rare) return;
    const corpus = this.corpora.get(suite) ?? [];
    corpus.push({ input, features: names });
    if (corpus.length > MAX_CORPUS) corpus.shift();
    this.corpora.set(suite, corpus);
  }

  /** An input of `suite` to mutate (likeliest: the one whose rarest feature is rarest), or undefined for a fresh one: a quarter of the time, and while the corpus is empty. */
  pick(suite: number): CrashInput | undefined {
    const corpus = this.corpora.get(suite) ?? [];
    if (corpus.length === 0 || this.prng.int(4) === 0) return undefined;
    // The square: an input that reached a feature half as often reached is four times as likely.
    const weights = corpus.map((e) => Math.max(0, ...e.features.map((f) => 1 / Math.max(1, this.runs.get(f) ?? 0) ** 2)));
    const total = weights.reduce((a, b) => a + b, 0);
    let x = (this.prng.int(1_000_000) / 1_000_000) * total;
    this.steered++;
    for (const [i, w] of weights.entries()) {
      x -= w;
      if (x < 0) return corpus[i].input;
    }
    return corpus[corpus.length - 1].input;
  }
}
