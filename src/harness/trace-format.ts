// Human-readable trace, with the crash point marked: what `replay` and artifacts print.
import type { TraceEntry } from '../../fusefs/protocol.js';

export function formatTraceEntry(e: TraceEntry): string {
  const args = [
    e.path2 !== undefined ? `-> ${e.path2}` : '',
    e.offset !== undefined ? `offset ${e.offset}` : '',
    e.length !== undefined ? `${e.kind === 'truncate' ? 'size' : 'length'} ${e.length}` : '',
    e.datasync ? 'datasync' : '',
  ].filter(Boolean).join(' ');
  const result = e.state === 'held' ? 'HELD (never answered)' : e.result === 0 ? 'ok' : `errno ${-(e.result ?? 0)}`;
  // A cluster's requests name their node (a single disk's carry none).
  const node = e.node !== undefined ? `node ${e.node} ` : '';
  return `${String(e.op).padStart(5)} ${node}${e.kind.padEnd(8)} ${e.path}${args ? ' ' + args : ''}  => ${result}`;
}

/** The trace, one request a line, with a marker line at the request the power was cut at. */
export function formatTrace(trace: readonly TraceEntry[], frozenAt: number | null, timing?: 'before' | 'after'): string {
  const lines: string[] = [];
  for (const e of trace) {
    if (e.op === frozenAt && timing !== 'after') lines.push(`----- POWER CUT before request ${e.op} (it is not applied) -----`);
    lines.push(formatTraceEntry(e));
    if (e.op === frozenAt && timing === 'after') lines.push(`----- POWER CUT after request ${e.op} (applied, never answered) -----`);
  }
  if (frozenAt === null) lines.push('----- POWER CUT after the driver exited (crash point not reached) -----');
  return lines.join('\n');
}
