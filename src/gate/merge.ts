// Shards of one gate run joined into one result (pure): a CI matrix runs the same gate with one seed
// per job, each writing `--json`; `powercut merge` reads them back and this joins them. Rows with the
// same name add up, distinct failures with the same key (a cause, or a signature) are one failure
// found by several shards, and the verdict is the worst shard's.
import { groupedByCause } from '../harness/cause/cause.js';
import { addCoverage, emptyCoverage } from '../harness/coverage.js';
import { addAlsoCause, type DistinctFailure, type GateRow } from '../report/gate-results.js';
import type { FloorCheck } from './floor.js';
import { mergeClusterCoverage, type ClusterCoverage } from './cluster-coverage.js';
import { exitCodeOf, type GateVerdict } from './gate-report.js';
import { GATE_RESULT_SCHEMA, type GateResultJson, type GateResultOptions } from './result-json.js';

/** A shard as read: the file it came from, for messages. */
export interface Shard {
  file: string;
  result: GateResultJson;
}

export interface MergedGate {
  options: GateResultOptions;
  seeds: number[];
  rows: GateRow[];
  failures: DistinctFailure[];
  floor: FloorCheck[];
  verdict: GateVerdict;
  exitCode: number;
  /** The longest shard's: the shards ran side by side. */
  durationMs: number;
  steered: { inputs: number; of: number };
  shards: { file: string; seed: number; verdict: GateVerdict; durationMs: number }[];
  /** A cluster gate's coverage per cut kind and node, added up over the shards. */
  cluster?: ClusterCoverage;
}

export class MergeError extends Error {}

/** Worst first: a violation outweighs a tool failure, which outweighs a floor not met. */
const VERDICT_ORDER: readonly GateVerdict[] = ['violation', 'tool-failed', 'below-floor', 'passed'];

/** What makes shards parts of one run: the same target, queue and checks (the seed and the budget may differ). */
const SAME_RUN: readonly (keyof GateResultOptions)[] = ['target', 'driver', 'mode', 'variant', 'settings', 'policies', 'groupBy', 'nodesCut'];

/** Checks a parsed file is a gate result this version reads, naming the file and what is wrong. */
export function checkShard(file: string, doc: unknown): GateResultJson {
  const d = doc as Partial<GateResultJson> | null;
  if (typeof d !== 'object' || d === null || Array.isArray(d)) throw new MergeError(`${file}: not a gate result (a JSON object written by powercut gate --json)`);
  if (d.schema !== GATE_RESULT_SCHEMA) throw new MergeError(`${file}: schema is ${JSON.stringify(d.schema)}, this powercut reads ${GATE_RESULT_SCHEMA}`);
  for (const field of ['seed', 'options', 'verdict', 'durationMs', 'rows', 'floor', 'failures'] as const) {
    if (d[field] === undefined) throw new MergeError(`${file}: field "${field}" is missing`);
  }
  if (!Array.isArray(d.rows) || !Array.isArray(d.failures) || !Array.isArray(d.floor?.requirements)) throw new MergeError(`${file}: rows, failures and floor.requirements must be arrays`);
  if (!VERDICT_ORDER.includes(d.verdict!)) throw new MergeError(`${file}: verdict ${JSON.stringify(d.verdict)} is none of ${VERDICT_ORDER.join(', ')}`);
  return d as GateResultJson;
}

export function mergeShards(shards: readonly Shard[]): MergedGate {
  if (shards.length === 0) throw new MergeError('no shard to merge');
  const first = shards[0];
  for (const s of shards.slice(1)) {
    for (const k of SAME_RUN) {
      if (JSON.stringify(s.result.options[k]) !== JSON.stringify(first.result.options[k])) {
        throw new MergeError(`${s.file} is not a shard of the same run as ${first.file}: its ${k} is ${JSON.stringify(s.result.options[k]) ?? 'unset'}, not ${JSON.stringify(first.result.options[k]) ?? 'unset'}`);
      }
    }
  }
  const seeds = shards.map((s) => s.result.seed);
  const repeated = seeds.find((x, i) => seeds.indexOf(x) !== i);
  if (repeated !== undefined) throw new MergeError(`seed ${repeated} is in two shards (${shards.filter((s) => s.result.seed === repeated).map((s) => s.file).join(', ')}): a shard merged twice would count its cases twice`);

  const rows = new Map<string, GateRow>();
  for (const s of shards) {
    for (const r of s.result.rows) {
      const key = `${r.kind} ${r.name}`;
      const row = rows.get(key) ?? { name: r.name, kind: r.kind, cases: 0, coverage: emptyCoverage(), violations: 0, durationMs: 0, errors: [], capsHit: [] };
      row.cases += r.cases;
      row.violations += r.violations;
      row.durationMs += r.durationMs;
      addCoverage(row.coverage, r.coverage);
      row.errors.push(...r.errors.map((e) => `seed ${s.result.seed}: ${e}`));
      for (const cap of r.capsHit) if (!row.capsHit.includes(cap)) row.capsHit.push(cap);
      rows.set(key, row);
    }
  }

  const failures = new Map<string, DistinctFailure>();
  for (const s of shards) {
    for (const f of s.result.failures) {
      const known = failures.get(f.key);
      if (!known) {
        failures.set(f.key, { ...f, signatures: f.signatures.map((x) => ({ ...x })), foundBy: f.foundBy.map((b) => `${b} (seed ${s.result.seed})`) });
        continue;
      }
      known.count += f.count;
      for (const sig of f.signatures) {
        const same = known.signatures.find((x) => x.signature === sig.signature);
        if (same) same.count += sig.count;
        else known.signatures.push({ ...sig });
      }
      known.foundBy.push(...f.foundBy.map((b) => `${b} (seed ${s.result.seed})`));
      // The proven cause wins: each shard proves a cause once, on its first case.
      if (f.cause?.proof && !known.cause?.proof) known.cause = f.cause;
      // Causes grouped under the key (cause.ts groupKeyOf): every title but the one the group shows.
      for (const t of [...(f.alsoCauses ?? []), ...(groupedByCause(f) && groupedByCause(known) ? [f.cause.title] : [])]) addAlsoCause(known, t);
    }
  }

  // A floor is per shard: each must have checked enough on its own (its rows named with its seed).
  const floor = shards.flatMap((s) => s.result.floor.requirements.map((c) => ({ ...c, row: shards.length > 1 ? `${c.row} (seed ${s.result.seed})` : c.row })));
  const verdict = VERDICT_ORDER.find((v) => shards.some((s) => s.result.verdict === v))!;
  const cluster = mergeClusterCoverage(shards.map((s) => s.result.cluster));
  return {
    ...(cluster ? { cluster } : {}),
    options: first.result.options,
    seeds,
    rows: [...rows.values()],
    failures: [...failures.values()],
    floor,
    verdict,
    exitCode: exitCodeOf(verdict),
    durationMs: Math.max(...shards.map((s) => s.result.durationMs)),
    steered: { inputs: shards.reduce((n, s) => n + s.result.steered.inputs, 0), of: shards.reduce((n, s) => n + s.result.steered.of, 0) },
    shards: shards.map((s) => ({ file: s.file, seed: s.result.seed, verdict: s.result.verdict, durationMs: s.result.durationMs })),
  };
}
