// `powercut merge SHARD.json...`: the shards of a gate run sharded over a CI matrix (one seed per
// job, each with --json) joined into one result: one summary, and on request one JSON document, one
// JUnit file and one index.html. Its exit status is the gate's, for the worst shard.
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { GATE_EXIT } from '../gate/gate-report.js';
import { toJunitXml } from '../gate/junit.js';
import { checkShard, mergeShards, MergeError, type MergedGate, type Shard } from '../gate/merge.js';
import { gateResultJson } from '../gate/result-json.js';
import { formatGateText } from '../gate/summary.js';
import { writeGateReport } from '../report/index.js';
import { parseCommandArgs, usageFail, type Command } from './usage.js';

export const TOOL_FAILED_EXIT = GATE_EXIT.toolFailed;

export const help = `usage: powercut merge SHARD.json... [--json FILE] [--junit FILE] [--report DIR]

Joins the --json results of one gate run sharded over several jobs (the same target, queue and
options, one seed per job) into one result: rows with the same name add up, distinct failures with
the same cause (or signature) become one, found by several seeds, and the verdict is the worst
shard's. Prints the summary; docs/gate.md shows the CI matrix job that runs it.

options:
  --json FILE     write the merged result as one JSON document (docs/gate-result.schema.json, with "shards")
  --junit FILE    write one JUnit XML report
  --report DIR    write one HTML page to DIR/index.html, linking each failure's report.html where its
                  artifact folder is found (artifacts downloaded from the jobs, at the paths they name)
  -h, --help      this text

exit status: the gate's (${GATE_EXIT.passed} passed, ${GATE_EXIT.violation} violation, ${GATE_EXIT.toolFailed} tool failed, ${GATE_EXIT.belowFloor} below the floor) for the worst shard; ${GATE_EXIT.usage} for a usage error or a file that is not a shard of the same run`;

async function readShard(file: string): Promise<Shard> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    throw new MergeError(`${file}: cannot read it (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
  }
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (err) {
    throw new MergeError(`${file}: not valid JSON (${(err as Error).message})`);
  }
  return { file, result: checkShard(file, doc) };
}

/** The merged result as the gate's --json document, with the shards it came from. */
function mergedJson(m: MergedGate) {
  const report = { rows: m.rows, failures: m.failures, floor: m.floor, verdict: m.verdict, exitCode: m.exitCode, durationMs: m.durationMs, steered: m.steered, passed: m.verdict === 'passed', violations: 0, harnessErrors: 0, text: '', ...(m.cluster ? { cluster: m.cluster } : {}) };
  return { ...gateResultJson(report, m.seeds[0], m.options), shards: m.shards };
}

export const run: Command = async (argv) => {
  const parsed = parseCommandArgs({ args: argv, allowPositionals: true, options: { json: { type: 'string' }, junit: { type: 'string' }, report: { type: 'string' }, help: { type: 'boolean', short: 'h' } } }, help);
  if (parsed.values.help) {
    console.log(help);
    return 0;
  }
  if (parsed.positionals.length === 0) usageFail('merge needs at least one shard (a file written by powercut gate --json)', help);
  let merged: MergedGate;
  try {
    merged = mergeShards(await Promise.all(parsed.positionals.map((f) => readShard(path.resolve(f)))));
  } catch (err) {
    if (err instanceof MergeError) usageFail(err.message, help);
    throw err;
  }
  console.log(`${merged.shards.length} shard${merged.shards.length === 1 ? '' : 's'} (seeds ${merged.seeds.join(', ')}):`);
  for (const s of merged.shards) console.log(`  seed ${s.seed}: ${s.verdict} in ${(s.durationMs / 1000).toFixed(0)} s (${s.file})`);
  console.log(`\n${formatGateText(merged.rows, merged.failures, merged.floor, merged.options.mode, merged.steered, merged.durationMs, merged.cluster)}`);

  const write = async (file: string, what: string, content: string) => {
    await mkdir(path.dirname(path.resolve(file)), { recursive: true });
    await writeFile(path.resolve(file), content);
    console.log(`${what}: ${path.resolve(file)}`);
  };
  if (parsed.values.json !== undefined) await write(parsed.values.json, 'JSON result', JSON.stringify(mergedJson(merged), null, 2) + '\n');
  if (parsed.values.junit !== undefined) await write(parsed.values.junit, 'JUnit report', toJunitXml(merged.rows, merged.durationMs, merged.failures, merged.floor, `powercut gate (${merged.shards.length} shards)`));
  if (parsed.values.report !== undefined) {
    const o = merged.options;
    const page = await writeGateReport(path.resolve(parsed.values.report), {
      rows: merged.rows, failures: merged.failures, durationMs: merged.durationMs, mode: o.mode, seed: merged.seeds[0], timeBudgetMs: o.timeBudgetMs,
      ...(o.target !== undefined ? { target: o.target } : {}), ...(o.driver ? { driver: o.driver } : {}), ...(o.variant !== undefined ? { variant: o.variant } : {}),
      ...(merged.cluster ? { cluster: merged.cluster } : {}),
    });
    console.log(`HTML report: ${page}`);
  }
  console.log(merged.verdict === 'passed' ? '\nmerged gate passed: no shard found a violation, and every shard met its floor' : `\nmerged gate FAILED: ${merged.verdict} (the worst shard's verdict)`);
  return merged.exitCode;
};
