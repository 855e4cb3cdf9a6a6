// The summary printed at the end of a gate run (pure): one line per scenario and suite, totals,
// what was covered, then each failure with its violation, artifact and replay command.
import { causeFacts, groupedByCause, type CauseRoute } from '../harness/cause/cause.js';
import { formatContracts, formatCoverage, formatFeatures } from '../harness/coverage.js';
import { CASE_WORDS, capsNote, perMinute, replaySummary, replayWithMode, resultOf, rowResult, totals, type DistinctFailure, type GateRow, type GateTotals, type SummaryMode } from '../report/gate-results.js';
import { formatFloor, type FloorCheck } from './floor.js';
import { formatDuration } from './budget.js';
import type { GateMode } from './suites.js';
import { formatClusterCoverage, formatClusterFloor, judgedOfListed, type ClusterCoverage } from './cluster-coverage.js';

export function formatSummaryTable(rows: readonly GateRow[], t: GateTotals, mode: SummaryMode = 'exhaustive', steered?: { inputs: number; of: number }): string {
  const words = CASE_WORDS[mode];
  const headers = ['scenario / suite', `cases (${words.column})`, 'violations', 'tool errors', 'time', 'result'];
  const body = rows.map((r) => [`${r.kind === 'suite' ? 'suite ' : ''}${r.name}`, String(r.cases), String(r.violations), String(r.errors.length), formatDuration(r.durationMs), rowResult(r)]);
  const verdict = resultOf(t.violations, t.errors);
  const foot = ['total', String(t.cases), String(t.violations), String(t.errors), formatDuration(t.durationMs), verdict];
  const all = [headers, ...body, foot];
  const widths = headers.map((_, i) => Math.max(...all.map((row) => row[i].length)));
  // Name left-aligned, numbers right-aligned.
  const line = (row: string[]) => row.map((cell, i) => (i === 0 || i === row.length - 1 ? cell.padEnd(widths[i]) : cell.padStart(widths[i]))).join('  ').trimEnd();
  const rule = widths.map((w) => '-'.repeat(w)).join('  ');
  const note = capsNote(rows);
  return [
    line(all[0]), rule, ...body.map(line), rule, line(foot),
    '',
    `coverage: ${formatCoverage(t.coverage)}`,
    ...[formatContracts(t.coverage)].filter((x): x is string => x !== undefined),
    ...(Object.keys(t.coverage.features).length ? [`features reached (runs reaching each, rarest first): ${formatFeatures(t.coverage)}`] : []),
    ...(steered && steered.of > 0 ? [`steered inputs (mutations of inputs that reached rare features): ${steered.inputs} of ${steered.of}`] : []),
    `${words.unit} per minute: ${perMinute(t.cases, t.durationMs)}`,
    // A cluster's rows are its cut kinds: formatClusterCoverage says each kind's figures.
    ...rows.filter((r) => mode !== 'cluster' && r.kind === 'suite' && r.cases > 0).map((r) => `  ${r.name}: ${formatCoverage(r.coverage)}${r.capsHit.length ? `; caps hit: ${r.capsHit.join(', ')}` : ''}`),
    ...(note ? [note] : []),
  ].join('\n');
}

/**
 * What went wrong: each distinct failure (how often, found by which rows, the smallest case's
 * violations, artifact and replay command), then each row's tool failures; with no distinct
 * failures listed (--stop-on-first), each failed row's first failure instead.
 */
export function formatFailures(rows: readonly GateRow[], failures: readonly DistinctFailure[] = []): string {
  const out: string[] = [];
  if (failures.length > 0) {
    const signatures = new Set(failures.flatMap((f) => f.signatures.map((s) => s.signature))).size;
    const cases = failures.reduce((n, f) => n + f.count, 0);
    out.push(`distinct failures: ${failures.length}${failures.some(groupedByCause) ? ` causes (${cases} failing cases, ${signatures} signatures)` : ''}`);
    const replays = replaySummary(failures);
    if (replays) out.push(replays);
    const explained = explainedInWords(failures);
    if (explained) out.push(explained);
    failures.forEach((f, i) => {
      const sigs = f.signatures.length > 1 || f.signatures[0]?.signature !== f.title ? ` (${f.signatures.length} signature${f.signatures.length === 1 ? '' : 's'})` : '';
      out.push(`${i + 1}. ${f.title}: ${f.count} failing case${f.count === 1 ? '' : 's'}${sigs}, found by ${f.foundBy.join(', ')}`);
      if (groupedByCause(f)) {
        for (const c of causeFacts(f.cause).slice(1)) out.push(`     ${`${c.label}:`.padEnd(8)} ${c.text}`);
        if (f.alsoCauses) out.push(`     ${'also:'.padEnd(8)} ${f.alsoCauses.join('; ')} (the same confirmation, proven at another fsync it did not wait for)`);
        if (f.provenAgain) out.push(`     ${'again:'.padEnd(8)} proven again on ${f.provenAgain} later failing run${f.provenAgain === 1 ? '' : 's'}, its fix carried over (one proof each, no search)`);
        const twins = f.cause.kind === 'not-isolated' ? sharingSignature(f, failures) : [];
        if (twins.length) out.push(`     ${'shares:'.padEnd(8)} ${twins.join('; ')}: the known causes were not proven on its states before the causes' share of the budget ran out; a run with more time (or a work budget) tries them first`);
        if (sigs) out.push(`     signatures: ${f.signatures.map((s) => `${s.signature} (${s.count})`).join('; ')}`);
      }
      out.push(...f.messages.map((m) => `     ${m}`));
      if (f.seed !== undefined) out.push(`     fast-check seed ${f.seed}, path "${f.path ?? ''}"`);
      if (f.artifactDir) out.push(`     artifact: ${f.artifactDir}`);
      if (f.replay) out.push(`     replay:   ${replayWithMode(f)}`);
    });
  }
  const failedRows = rows.filter((r) => r.errors.length > 0 || (failures.length === 0 && r.violations > 0));
  if (failedRows.length > 0) out.push(...(out.length > 0 ? [''] : []), 'failures:');
  for (const r of failedRows) {
    out.push(`${r.kind} ${r.name}:`);
    for (const e of r.errors) out.push(`  harness error (the tool failed, not a verdict on the queue): ${e.split('\n').join('\n    ')}`);
    const f = r.failure;
    if (f && failures.length === 0) {
      out.push(...f.messages.map((m) => `  ${m}`));
      if (f.seed !== undefined) out.push(`  fast-check seed ${f.seed}, path "${f.path ?? ''}"`);
      if (f.artifactDir) out.push(`  artifact: ${f.artifactDir}`);
      if (f.replay) out.push(`  replay:   ${replayWithMode(f)}`);
    }
  }
  return out.join('\n');
}

/** The explained groups an unexplained one shares a signature with: "its signature liveness, torn, ... with group 1 (missing fsync ...)". */
function sharingSignature(f: DistinctFailure, failures: readonly DistinctFailure[]): string[] {
  return failures.flatMap((g, i) => {
    if (!g.cause || g.cause.kind === 'not-isolated') return [];
    const shared = f.signatures.filter((s) => g.signatures.some((t) => t.signature === s.signature));
    return shared.length ? [`${shared.reduce((n, s) => n + s.count, 0)} of its cases share their signature with group ${i + 1} (${g.title})`] : [];
  });
}

/**
 * "41 failing states: 2 proven causes explain 38; 3 unexplained", and the named causes that are one
 * step missed in several files of one pattern (the same kind and fix, other paths).
 */
export function explainedInWords(failures: readonly DistinctFailure[]): string {
  const withCause = failures.filter(groupedByCause);
  if (withCause.length === 0) return '';
  const states = (fs: readonly DistinctFailure[]) => fs.reduce((n, f) => n + (f.states ?? f.count), 0);
  const named = withCause.filter((f) => f.cause!.kind !== 'not-isolated');
  const unexplained = states(withCause) - states(named);
  const lines = [`${states(withCause)} failing states: ${named.length} proven cause${named.length === 1 ? ' explains' : 's explain'} ${states(named)}; ${unexplained} unexplained`];
  // One mistake in two places (both checkpoint designs): the same kind of step, its files told apart.
  const byStep = new Map<string, DistinctFailure[]>();
  for (const f of named) {
    const c = f.cause!;
    const step = `${c.kind} ${c.step?.kind ?? ''} ${c.change?.kind ?? ''}`;
    byStep.set(step, [...(byStep.get(step) ?? []), f]);
  }
  for (const fs of byStep.values()) {
    if (fs.length < 2) continue;
    lines.push(`the same step in ${fs.length} places (${fs[0].cause!.kind}): ${fs.map((f) => f.cause!.unit?.path ?? f.title).join(', ')}`);
  }
  return lines.join('\n');
}

/**
 * The whole text a gate run (or a merge of its shards) prints at its end: table, floor, what
 * explaining cost, failures; a cluster's (`cluster` given) its coverage per cut kind and node instead of the single-disk modes' words.
 */
export function formatGateText(rows: readonly GateRow[], failures: readonly DistinctFailure[], floor: readonly FloorCheck[], mode: GateMode, steered: { inputs: number; of: number }, durationMs: number, cluster?: ClusterCoverage): string {
  const details = formatFailures(rows, failures);
  const t = totals(rows, durationMs);
  const middle = cluster
    ? [formatSummaryTable(rows, t, 'cluster', steered), formatClusterCoverage(cluster), formatClusterFloor(floor), judgedOfListed(rows)]
    : [formatSummaryTable(rows, t, mode, steered), formatFloor(floor), ...[formatCauseCosts(failures)].filter((x) => x)];
  return [...middle, ...(details ? ['', details] : [])].join('\n');
}

/** What explaining the distinct failures cost: the cause searches, the proofs and the reach checks of the kept cases. */
export function formatCauseCosts(failures: readonly DistinctFailure[]): string {
  const all = failures.map((f) => f.cause).filter((c): c is NonNullable<typeof c> => c !== undefined);
  const searched = all.filter((c) => c.search.probes > 0);
  const proofs = all.filter((c) => c.proof);
  if (searched.length === 0 && proofs.length === 0) return '';
  const sum = (cs: typeof all, f: (c: (typeof all)[number]) => number) => cs.reduce((n, c) => n + f(c), 0);
  const s = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
  const reaches = all.filter((c) => c.reach);
  const named = all.filter((c) => c.kind !== 'not-isolated');
  const by = (r: CauseRoute) => named.filter((c) => (c.route ?? 'reduction') === r).length;
  const again = failures.reduce((n, f) => n + (f.provenAgain ?? 0), 0);
  return `explaining: ${searched.length} cause search${searched.length === 1 ? '' : 'es'}, ${sum(searched, (c) => c.search.probes)} probes in ${s(sum(searched, (c) => c.search.ms))}; ` +
    `${proofs.length} proof${proofs.length === 1 ? '' : 's'} in ${s(sum(proofs, (c) => c.proof?.ms ?? 0))}; ${reaches.length} reach check${reaches.length === 1 ? '' : 's'} in ${s(sum(reaches, (c) => c.reach?.ms ?? 0))}\n` +
    `causes found: ${by('candidate')} read off the recording, ${by('reduction')} by the probing search, ${by('known')} carried over; known causes proven again on ${again} later failing run${again === 1 ? '' : 's'}`;
}

/**
 * Each suite's share of the judging time and its inputs: "judging time per suite (of 2:10): atomic-file/sync 34 % (3 inputs), faults 12 % (40 inputs)".
 * A time budget gives each suite its share whatever its inputs cost (docs/gate.md, "Turns").
 */
export function formatJudgingShares(shares: readonly { name: string; inputs: number; usedMs: number }[]): string {
  const total = shares.reduce((n, x) => n + x.usedMs, 0);
  if (shares.length === 0 || total <= 0) return '';
  const parts = shares.map((x) => `${x.name} ${Math.round((100 * x.usedMs) / total)} % (${x.inputs} input${x.inputs === 1 ? '' : 's'})`);
  return `judging time per suite (of ${formatDuration(total)}): ${parts.join(', ')}`;
}
