// The summary printed at the end of a gate run (pure): one line per scenario and suite, totals,
// what was covered, then each failure with its violation, artifact and replay command.
import { formatCoverage } from '../harness/coverage.js';
import { capsNote, perMinute, resultOf, rowFailed, rowResult, type GateRow, type GateTotals } from '../report/gate-results.js';
import { formatDuration } from './budget.js';
import type { GateMode } from './suites.js';

export function formatSummaryTable(rows: readonly GateRow[], t: GateTotals, mode: GateMode = 'exhaustive'): string {
  const headers = ['scenario / suite', mode === 'exhaustive' ? 'cases (states)' : 'cases (cuts)', 'violations', 'tool errors', 'time', 'result'];
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
    `${mode === 'exhaustive' ? 'crash states' : 'power cuts'} per minute: ${perMinute(t.cases, t.durationMs)}`,
    ...rows.filter((r) => r.kind === 'suite' && r.cases > 0).map((r) => `  ${r.name}: ${formatCoverage(r.coverage)}${r.capsHit.length ? `; caps hit: ${r.capsHit.join(', ')}` : ''}`),
    ...(note ? [note] : []),
  ].join('\n');
}

/** Each failed row: what was violated or what broke, where the artifact is, how to replay it. */
export function formatFailures(rows: readonly GateRow[]): string {
  const out: string[] = [];
  for (const r of rows.filter(rowFailed)) {
    out.push(`${r.kind} ${r.name}:`);
    for (const e of r.errors) out.push(`  harness error (the tool failed, not a verdict on the queue): ${e.split('\n').join('\n    ')}`);
    const f = r.failure;
    if (f) {
      out.push(...f.messages.map((m) => `  ${m}`));
      if (f.seed !== undefined) out.push(`  fast-check seed ${f.seed}, path "${f.path ?? ''}"`);
      if (f.artifactDir) out.push(`  artifact: ${f.artifactDir}`);
      if (f.replay) out.push(`  replay:   ${f.replay}`);
    }
  }
  return out.join('\n');
}
