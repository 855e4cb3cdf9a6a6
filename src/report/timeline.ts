// The timeline of one cut as inline SVG: requests on a common axis (request number), one lane for
// directory entries and one per file, the program's output lines placed by their marks, the
// persistence points, the power cut and the violation's evidence. Every shape carries a <title>,
// so the chart reads without JavaScript; the log table below says the same in words. A long run
// opens zoomed to a window around the cut and the evidence (timelineWindow), with a note of what
// it leaves out and the whole run's chart behind a <details> control.
import type { RunRecord } from '../harness/oracle.js';
import { describeLine, lineClass, refKey, requestArgs, requestResult, ROLE_NAMES, type Evidence } from './evidence.js';
import { esc, num, plural } from './html.js';
import type { ClusterCut } from './cluster-view.js';
import type { CutView } from './trace-model.js';
import { lastOp, renderChart, type OpRange } from './timeline-chart.js';

export { MAX_FILE_LANES, type OpRange } from './timeline-chart.js';

const TARGET_CHART_W = 1100;

export interface TimelineParts {
  /** The labels column and the scrolling chart. */
  chart: string;
  /** Every request and output line of the cut, in order, with the cut and the evidence. */
  log: string;
}

/** Runs of at most this many requests are always drawn whole (at the chart's width, 7 px a request or more). */
export const ZOOM_MIN_REQUESTS = 150;
/** Requests the default window shows on each side of the cut and the evidence. */
export const WINDOW_CONTEXT = 10;
/** The default window is at least this many requests wide (within the run). */
export const MIN_WINDOW = 60;
/** Width of a window's requests: with the labels, a 60-request window fits a 1280 px screen, unscrolled. */
const WINDOW_CHART_W = 900;
/** Request kinds named per left-out stretch in the zoom note. */
const KINDS_NAMED = 3;
/** Unsynced changes outside the window named in the zoom note. */
const UNSYNCED_NAMED = 5;

/**
 * The window a cut's timeline shows by default, or undefined when it shows the whole run. The
 * window holds the power cut and every piece of evidence of this cut drawn on the chart (its
 * highlighted requests and the marked lines of its run), with WINDOW_CONTEXT requests on each side,
 * widened to MIN_WINDOW requests; a run of more than ZOOM_MIN_REQUESTS requests is zoomed to it
 * when that leaves out at least a quarter of the run.
 */
export function timelineWindow(view: CutView, run: RunRecord | undefined, runIndex: number, evidence: Map<string, Evidence[]>): OpRange | undefined {
  const n = lastOp(view);
  if (n <= ZOOM_MIN_REQUESTS) return undefined;
  // What the window must hold, as request numbers: a line or the cut sits in the gap after request a, between a and a + 1.
  const points: number[] = [];
  const gap = (a: number) => points.push(Math.max(1, a), Math.min(n, a + 1));
  gap(view.boundary);
  for (const e of view.trace) if (evidence.has(refKey({ kind: 'op', cut: view.index, op: e.op }))) points.push(e.op);
  if (run) for (const m of view.marks) if (m.n >= 1 && m.n <= run.outcomes.length && evidence.has(refKey({ kind: 'line', run: runIndex, line: m.n }))) gap(m.afterOp);
  let from = Math.max(1, Math.min(...points) - WINDOW_CONTEXT);
  let to = Math.min(n, Math.max(...points) + WINDOW_CONTEXT);
  // Widen to MIN_WINDOW, evenly, and on one side only where the other meets the run's end.
  const short = MIN_WINDOW - (to - from + 1);
  if (short > 0) {
    from = Math.max(1, from - Math.ceil(short / 2));
    to = Math.min(n, from + MIN_WINDOW - 1);
    from = Math.max(1, to - MIN_WINDOW + 1);
  }
  const leftOut = n - (to - from + 1);
  return leftOut >= n / 4 ? { from, to } : undefined;
}

/** `cluster`: the cut is a cluster's (its view's paths namespaced per node): one lane group per node. */
export function renderTimeline(view: CutView, run: RunRecord | undefined, runIndex: number, evidence: Map<string, Evidence[]>, cluster?: ClusterCut): TimelineParts {
  const log = renderLog(view, run, runIndex, evidence);
  const n = lastOp(view);
  const whole: OpRange = { from: 1, to: n };
  const win = timelineWindow(view, run, runIndex, evidence);
  if (!win) return { chart: renderChart(view, run, runIndex, evidence, whole, { ids: true, targetWidth: TARGET_CHART_W, cluster }), log };
  // The window is the default (with the shapes' ids); the whole run waits behind a control, and
  // CSS swaps the two (details.tl-whole[open] ~ .tl-window), so it works with scripts off too.
  const chart = `<div class="tl-zoom" data-cut="${view.index}">
${zoomNote(view, run, runIndex, evidence, win)}
<details class="tl-whole"><summary><span class="when-closed">Show the whole run (requests 1–${num(n)})</span><span class="when-open">Show only requests ${num(win.from)}–${num(win.to)}, around the cut</span></summary>
${renderChart(view, run, runIndex, evidence, whole, { ids: false, targetWidth: TARGET_CHART_W, cluster })}
</details>
${renderChart(view, run, runIndex, evidence, win, { ids: true, targetWidth: WINDOW_CHART_W, className: 'tl-window', cluster })}
</div>`;
  return { chart, log };
}

/** What the default window leaves out, in words: the stretches of requests by kind, the lines, the files, and any change unsynced at the cut. */
function zoomNote(view: CutView, run: RunRecord | undefined, runIndex: number, evidence: Map<string, Evidence[]>, win: OpRange): string {
  const n = lastOp(view);
  const inWin = (op: number) => op >= win.from && op <= win.to;
  const stretch = (from: number, to: number) => {
    const kinds = new Map<string, number>();
    for (const e of view.trace) if (e.op >= from && e.op <= to) kinds.set(e.kind, (kinds.get(e.kind) ?? 0) + 1);
    const named = [...kinds].sort((p, q) => q[1] - p[1] || (p[0] < q[0] ? -1 : 1));
    const what = named.slice(0, KINDS_NAMED).map(([k, c]) => plural(c, k)).join(', ') + (named.length > KINDS_NAMED ? ', …' : '');
    return `requests ${num(from)}–${num(to)}${what ? ` (${what})` : ''}`;
  };
  const out: string[] = [];
  if (win.from > 1) out.push(stretch(1, win.from - 1));
  if (win.to < n) out.push(stretch(win.to + 1, n));
  if (run) {
    const lines = view.marks.filter((m) => m.n >= 1 && m.n <= run.outcomes.length && (m.afterOp < win.from - 1 || m.afterOp > win.to)).length;
    if (lines) out.push(`${num(lines)} of the program's ${num(run.outcomes.length)} lines`);
  }
  const inside = new Set(view.trace.filter((e) => inWin(e.op)).flatMap((e) => [e.path, e.path2]));
  const outsideOnly = new Set(view.trace.filter((e) => !inWin(e.op)).flatMap((e) => [e.path, e.path2]).filter((p): p is string => p !== undefined && p !== '/' && !inside.has(p)));
  if (outsideOnly.size) out.push(`${num(outsideOnly.size)} ${outsideOnly.size === 1 ? 'file' : 'files'} touched only there (no lane here)`);
  const unsynced = [...view.atCut.keys()].filter((op) => !inWin(op));
  const unsyncedText = unsynced.length
    ? ` Unsynced at the cut but outside the window: ${unsynced.length === 1 ? 'request' : `${num(unsynced.length)} requests,`} ${unsynced.slice(-UNSYNCED_NAMED).map((op) => `<a href="#${refKey({ kind: 'op', cut: view.index, op })}">${op}</a>`).join(', ')}${unsynced.length > UNSYNCED_NAMED ? ' (the last few)' : ''}.`
    : '';
  const items = [...evidence.keys()].filter((k) => k.startsWith(`c${view.index}-op`) || k.startsWith(`r${runIndex}-l`)).length;
  return `<p class="tl-zoom-note"><strong>Zoomed to requests ${num(win.from)}–${num(win.to)} of ${num(n)}</strong>: the power cut${items ? ' and the evidence' : ''}, and the requests around them. Left out: ${esc(out.join('; '))}.${unsyncedText} The log below lists everything.</p>`;
}

/** Rows of the log beyond this many start folded (the chart still shows everything). */
const LOG_OPEN_MAX_ROWS = 300;

function renderLog(view: CutView, run: RunRecord | undefined, runIndex: number, evidence: Map<string, Evidence[]>): string {
  const linesAfter = new Map<number, number[]>();
  const placed = new Set<number>();
  if (run) {
    for (const m of view.marks) {
      if (m.n < 1 || m.n > run.outcomes.length) continue;
      linesAfter.set(m.afterOp, [...(linesAfter.get(m.afterOp) ?? []), m.n]);
      placed.add(m.n);
    }
  }
  const rows: string[] = [];
  const evCell = (key: string) => (evidence.get(key) ?? []).map((v) => `<span class="badge-inline role-${v.role}" title="${esc(v.text)}">${v.n}</span> ${esc(ROLE_NAMES[v.role])}`).join('<br>');
  const lineRows = (afterOp: number) => {
    for (const lineN of (linesAfter.get(afterOp) ?? []).sort((p, q) => p - q)) {
      const o = run!.outcomes[lineN - 1];
      const key = refKey({ kind: 'line', run: runIndex, line: lineN });
      const hl = evidence.has(key);
      rows.push(`<tr class="line-row t-${lineClass(o)}${hl ? ' hl' : ''}" id="${key}" data-ref="${key}"><td class="num">line ${lineN}</td><td>${esc(o.t)}</td><td>${esc(describeLine(o))}</td><td></td><td>${evCell(key)}</td></tr>`);
    }
  };
  const cutRow = () => rows.push(`<tr class="cut-row" id="cut-${view.index}"><td colspan="5">⚡ ${esc(view.cutLabel)} — ${esc(view.policyLabel)}</td></tr>`);
  lineRows(0);
  let cutShown = false;
  for (const e of view.trace) {
    if (!cutShown && e.op > view.boundary) {
      cutRow();
      cutShown = true;
    }
    const key = refKey({ kind: 'op', cut: view.index, op: e.op });
    const pending = view.atCut.get(e.op);
    const notes = [
      !view.applied(e.op) ? (e.op > view.boundary && view.recordedBeyond ? 'after the crash state (recorded run)' : 'not applied') : '',
      pending ? `unsynced at the cut: <strong class="fate-${pending.fate}">${pending.fate === 'maybe' ? 'may be lost' : pending.fate}</strong> (${esc(pending.because)})` : '',
    ].filter(Boolean).join('; ');
    const ev = evCell(key);
    const cls = ['req-row', `k-${e.kind}`, evidence.has(key) ? 'hl' : '', !view.applied(e.op) ? 'not-applied' : '', (e.result ?? 0) < 0 ? 'failed' : ''].filter(Boolean).join(' ');
    const args = requestArgs(e, num);
    rows.push(`<tr class="${cls}" id="${key}" data-ref="${key}"><td class="num">${e.op}</td><td>${esc(e.kind)}</td><td><code>${esc(e.path)}</code>${args ? ` ${esc(args)}` : ''}</td><td>${esc(requestResult(e))}</td><td>${[notes, ev].filter(Boolean).join('<br>')}</td></tr>`);
    lineRows(e.op);
  }
  if (!cutShown) cutRow();
  if (run) {
    const unplaced = run.outcomes.map((o, i) => ({ o, n: i + 1 })).filter(({ n }) => !placed.has(n));
    if (unplaced.length) {
      rows.push(`<tr class="gap"><td colspan="5">lines with no mark (not placed among the requests):</td></tr>`);
      for (const { o, n } of unplaced) {
        const key = refKey({ kind: 'line', run: runIndex, line: n });
        rows.push(`<tr class="line-row t-${lineClass(o)}${evidence.has(key) ? ' hl' : ''}" id="${key}" data-ref="${key}"><td class="num">line ${n}</td><td>${esc(o.t)}</td><td>${esc(describeLine(o))}</td><td></td><td>${evCell(key)}</td></tr>`);
      }
    }
  }
  const open = rows.length <= LOG_OPEN_MAX_ROWS ? ' open' : '';
  return `<details class="log"${open}><summary>requests and output lines of cut ${view.index + 1}, in order (${num(view.trace.length)} requests${run ? `, ${num(run.outcomes.length)} lines` : ''})</summary>
<table class="log-table"><thead><tr><th>#</th><th>kind</th><th>request / line</th><th>result</th><th>notes</th></tr></thead><tbody>${rows.join('\n')}</tbody></table></details>`;
}
