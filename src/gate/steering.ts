// Steers a suite's generation toward the features its runs reach least (Coverage.features: kinds of
// request against kinds of file, and the target's events such as purges), as coverage-guided fuzzers
// do: an input whose run reached a rare feature joins a corpus, and three inputs in four are small
// mutations of a corpus entry, picked by how rare its rarest feature is. Seeded: a gate run repeats.
import { Prng } from '../../fusefs/model/prng.js';
import type { CrashInput } from '../../properties/crash-property.js';

/** A feature reached by fewer runs than this is rare: an input reaching it joins the corpus. */
export const RARE_RUNS = 3;
/** The corpus keeps this many inputs, the newest. */
export const MAX_CORPUS = 64;

export class Steering {
  private readonly corpus: { input: CrashInput; features: string[] }[] = [];
  private readonly runs = new Map<string, number>();
  private readonly prng: Prng;
  /** Inputs handed out as mutations so far. */
  steered = 0;

  constructor(seed: number) {
    this.prng = new Prng(seed);
  }

  /** Counts the features one input's runs reached; keeps the input if one of them was rare. */
  observe(input: CrashInput, features: Record<string, number>): void {
    const names = Object.keys(features);
    const rare = names.some((f) => (this.runs.get(f) ?? 0) < RARE_RUNS);
    for (const f of names) this.runs.set(f, (this.runs.get(f) ?? 0) + (features[f] ?? 0));
    if (!rare) return;
    this.corpus.push({ input, features: names });
    if (this.corpus.length > MAX_CORPUS) this.corpus.shift();
  }

  /** An input to mutate (likeliest: the one whose rarest feature is rarest), or undefined for a fresh one: a quarter of the time, and while the corpus is empty. */
  pick(): CrashInput | undefined {
    if (this.corpus.length === 0 || this.prng.int(4) === 0) return undefined;
    const weights = this.corpus.map((e) => Math.max(0, ...e.features.map((f) => 1 / Math.max(1, this.runs.get(f) ?? 0))));
    const total = weights.reduce((a, b) => a + b, 0);
    let x = (this.prng.int(1_000_000) / 1_000_000) * total;
    for (const [i, w] of weights.entries()) {
      x -= w;
      if (x < 0) {
        this.steered++;
        return this.corpus[i].input;
      }
    }
    this.steered++;
    return this.corpus[this.corpus.length - 1].input;
  }
}
