// The summary table printed at the end of a gate run (pure): one line per scenario and suite,
// totals, then each failure with its violation, artifact and replay command.
import { formatDuration } from './budget.js';
import { rowFailed, type GateRow, type GateTotals } from './results.js';

const HEADERS = ['scenario / suite', 'cases', 'cuts', 'violations', 'time', 'result'] as const;

function result(r: GateRow): string {
  if (r.error !== undefined) return 'ERROR';
  return r.violations > 0 ? 'FAIL' : 'pass';
}

export function formatSummaryTable(rows: readonly GateRow[], t: GateTotals): string {
  const body = rows.map((r) => [`${r.kind === 'suite' ? 'suite ' : ''}${r.name}`, String(r.cases), String(r.cuts), String(r.violations), formatDuration(r.durationMs), result(r)]);
  const verdict = t.violations > 0 || t.errors > 0 ? 'FAIL' : 'pass';
  const foot = ['total', String(t.cases), String(t.cuts), String(t.violations), formatDuration(t.durationMs), verdict];
  const all = [[...HEADERS], ...body, foot];
  const widths = HEADERS.map((_, i) => Math.max(...all.map((row) => row[i].length)));
  // Name left-aligned, numbers right-aligned.
  const line = (row: string[]) => row.map((cell, i) => (i === 0 || i === row.length - 1 ? cell.padEnd(widths[i]) : cell.padStart(widths[i]))).join('  ').trimEnd();
  const rule = widths.map((w) => '-'.repeat(w)).join('  ');
  return [line(all[0]), rule, ...body.map(line), rule, line(foot)].join('\n');
}

/** Each failed row: what was violated, where the artifact is, how to replay it. */
export function formatFailures(rows: readonly GateRow[]): string {
  const out: string[] = [];
  for (const r of rows.filter(rowFailed)) {
    out.push(`${r.kind} ${r.name}:`);
    if (r.error !== undefined) out.push(`  harness error (not a verdict on the queue): ${r.error}`);
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
