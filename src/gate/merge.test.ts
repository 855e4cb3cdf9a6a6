import { describe, expect, it } from 'vitest';
import { emptyCoverage } from '../harness/coverage.js';
import { checkShard, mergeShards, MergeError, type Shard } from './merge.js';
import { GATE_RESULT_SCHEMA, type GateResultJson } from './result-json.js';

const failure = (key: string, count: number, signature: string, proven = false): GateResultJson['failures'][number] => ({
  key, title: key, count, signatures: [{ signature, count }], checks: ['liveness'], foundBy: ['atomic-file/sync'], messages: [`${key} message`],
  cause: { kind: 'missing-dir-fsync', key, title: key, fix: 'fsync /', evidence: [], search: { probes: 3, ms: 10, bound: { maxProbes: 100, maxMs: 20_000 }, boundReached: false },
    ...(proven ? { proof: { step: 'an fsync of /', failing: 2, cured: 2, curesOwnState: true, broken: 0, exposed: [], states: 9, capped: false, stillFailing: [], ms: 5 } } : {}) },
});

function shard(seed: number, over: Partial<GateResultJson> = {}): Shard {
  const coverage = { ...emptyCoverage(), cases: 10, states: 10 };
  const result: GateResultJson = {
    schema: GATE_RESULT_SCHEMA, seed,
    options: { mode: 'exhaustive', timeBudgetMs: 60_000, stopOnFirst: false, generation: 'plain', groupBy: 'cause' },
    verdict: 'passed', exitCode: 0, durationMs: 60_000 + seed, checkedAgainst: [], coverage,
    rows: [{ name: 'atomic-file/sync', kind: 'suite', result: 'pass', cases: 10, violations: 0, errors: [], durationMs: 50_000, coverage, capsHit: [], floor: [] }],
    floor: { met: true, requirements: [{ row: 'atomic-file/sync', kind: 'suite', what: 'cases judged', figure: 10, min: 1, met: true, raise: 'raise --time-budget' }] },
    failures: [], steered: { inputs: 0, of: 3 },
    ...over,
  };
  return { file: `shard-${seed}.json`, result };
}

describe('merging the shards of a gate run', () => {
  it('adds up rows, joins failures by key (counts, signatures, the seeds that found them, the proven cause), and takes the worst verdict', () => {
    const a = shard(1, { verdict: 'violation', failures: [failure('missing-dir-fsync / create /page.*', 3, 'liveness, torn, at fsync /page.*')] });
    const b = shard(2, { verdict: 'below-floor', failures: [failure('missing-dir-fsync / create /page.*', 2, 'liveness, lose-unsynced, at the end', true), failure('torn-write /page.* accepted', 1, 'integrity, torn, at write /page.*')] });
    const m = mergeShards([a, b]);
    expect(m.rows).toHaveLength(1);
    expect([m.rows[0].cases, m.rows[0].durationMs, m.rows[0].coverage.states]).toEqual([20, 100_000, 20]);
    expect(m.failures.map((f) => [f.key, f.count])).toEqual([['missing-dir-fsync / create /page.*', 5], ['torn-write /page.* accepted', 1]]);
    expect(m.failures[0].signatures.map((s) => s.signature)).toEqual(['liveness, torn, at fsync /page.*', 'liveness, lose-unsynced, at the end']);
    expect(m.failures[0].foundBy).toEqual(['atomic-file/sync (seed 1)', 'atomic-file/sync (seed 2)']);
    expect(m.failures[0].cause?.proof?.cured).toBe(2);
    expect([m.verdict, m.exitCode]).toEqual(['violation', 1]);
    expect(m.durationMs).toBe(60_002);
    expect(m.floor.map((c) => c.row)).toEqual(['atomic-file/sync (seed 1)', 'atomic-file/sync (seed 2)']);
    expect(m.steered).toEqual({ inputs: 0, of: 6 });
  });

  it('refuses shards of different runs, a seed merged twice, and files that are not gate results, naming the file', () => {
    const other = shard(2);
    other.result.options = { ...other.result.options, variant: 'no-dir-fsync-new-page' };
    expect(() => mergeShards([shard(1), other])).toThrow(/shard-2\.json is not a shard of the same run as shard-1\.json: its variant is "no-dir-fsync-new-page", not unset/);
    expect(() => mergeShards([shard(1), shard(1)])).toThrow(/seed 1 is in two shards/);
    expect(() => mergeShards([])).toThrow(MergeError);
    expect(() => checkShard('x.json', [])).toThrow(/x\.json: not a gate result/);
    expect(() => checkShard('x.json', { ...shard(1).result, schema: 'other/9' })).toThrow(/x\.json: schema is "other\/9", this powercut reads powercut-gate-result\/1/);
    const { rows: _rows, ...noRows } = shard(1).result;
    expect(() => checkShard('x.json', noRows)).toThrow(/x\.json: field "rows" is missing/);
  });
});
