// The timeline of one cut as inline SVG: requests on a common axis (request number), one lane for
// directory entries and one per file, the program's output lines placed by their marks, the
// persistence points, the power cut and the violation's evidence. Every shape carries a <title>,
// so the chart reads without JavaScript; the log table below says the same in words.
import type { TraceEntry } from '../../fusefs/protocol.js';
import type { RunRecord } from '../harness/oracle.js';
import { describeLine, describeRequest, lineClass, refKey, requestArgs, requestResult, ROLE_NAMES, type Evidence } from './evidence.js';
import { esc, num } from './html.js';
import { DIR_KINDS, PERSIST_KINDS, type CutView } from './trace-model.js';

const LABEL_W = 200;
const AXIS_H = 34;
const LANE_H = 24;
const PROGRAM_H = 64;
const PAD_RIGHT = 96;
/** Room left of request 1, so the lines printed before any request stay visible. */
const PAD_LEFT = 10;
/** Width of one request on the axis: wide enough to hover, narrow enough that long traces stay scrollable. */
const MIN_OP_W = 6;
const MAX_OP_W = 56;
const TARGET_CHART_W = 1100;
/** Files beyond this many share one lane, so a trace touching hundreds of files stays readable. */
export const MAX_FILE_LANES = 60;
const MARKER = 8;

interface Lane {
  key: string;
  label: string;
  title: string;
  y: number;
  h: number;
}

export interface TimelineParts {
  /** The labels column and the scrolling chart. */
  chart: string;
  /** Every request and output line of the cut, in order, with the cut and the evidence. */
  log: string;
}

function laneOf(e: TraceEntry): string {
  return DIR_KINDS.has(e.kind) ? 'dir' : `file:${e.path}`;
}

/** Ticks on the axis every `step` requests, `step` from 1-2-5 so labels never collide. */
function axisStep(opW: number): number {
  for (const s of [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10_000]) if (s * opW >= 36) return s;
  return 20_000;
}

export function renderTimeline(view: CutView, run: RunRecord | undefined, runIndex: number, evidence: Map<string, Evidence[]>): TimelineParts {
  const n = Math.max(view.maxOp, view.boundary, 1);
  const opW = Math.max(MIN_OP_W, Math.min(MAX_OP_W, TARGET_CHART_W / n));
  const x = (op: number) => PAD_LEFT + (op - 1) * opW; // left edge of request `op`
  const xb = (afterOp: number) => PAD_LEFT + afterOp * opW; // the gap right after request `afterOp`
  const width = Math.ceil(PAD_LEFT + n * opW + PAD_RIGHT);

  // Lanes: directory entries first, then files in the order the trace first touches them.
  const fileOrder: string[] = [];
  const seenFiles = new Set<string>();
  const touch = (p: string | undefined) => {
    if (p !== undefined && !seenFiles.has(p)) {
      seenFiles.add(p);
      fileOrder.push(p);
    }
  };
  const dirPaths = new Set(view.trace.filter((e) => e.kind === 'mkdir' || e.kind === 'rmdir' || e.kind === 'fsyncdir').map((e) => e.path));
  for (const e of view.trace) {
    if (!DIR_KINDS.has(e.kind)) touch(e.path);
    else if (e.kind === 'create' || e.kind === 'mknod' || e.kind === 'symlink') touch(e.path);
    else if (e.kind === 'rename' || e.kind === 'link') {
      if (!dirPaths.has(e.path)) touch(e.path);
      if (!dirPaths.has(e.path2 ?? '')) touch(e.path2);
    }
  }
  const shown = fileOrder.slice(0, MAX_FILE_LANES);
  const overflow = fileOrder.length - shown.length;
  const lanes: Lane[] = [];
  let y = AXIS_H;
  const addLane = (key: string, label: string, title: string, h = LANE_H) => {
    lanes.push({ key, label, title, y, h });
    y += h;
  };
  addLane('dir', 'directory entries', 'creates, links, renames, unlinks and directory fsyncs');
  for (const p of shown) addLane(`file:${p}`, p, p);
  if (overflow > 0) addLane('other', `${num(overflow)} more files`, fileOrder.slice(MAX_FILE_LANES).join('\n'));
  const programLane = run ? (addLane('program', `program: run ${runIndex} (${run.role})`, 'the lines the driver printed, placed after the request they followed', PROGRAM_H), lanes[lanes.length - 1]) : undefined;
  const height = y + 12;
  const laneY = new Map(lanes.map((l) => [l.key, l]));
  const laneFor = (key: string) => laneY.get(key) ?? laneY.get('other') ?? lanes[0];

  const parts: string[] = [];
  // Lane backgrounds and separators.
  lanes.forEach((l, i) => parts.push(`<rect class="lane-bg${i % 2 ? ' odd' : ''}${l.key === 'program' ? ' program' : ''}" x="0" y="${l.y}" width="${width}" height="${l.h}"/>`));

  // Axis: request numbers and persistence points.
  const step = axisStep(opW);
  for (let op = step === 1 ? 1 : step; op <= n; op += step) parts.push(`<text class="axis-label" x="${x(op) + opW / 2}" y="12">${op}</text><line class="axis-tick" x1="${x(op) + opW / 2}" x2="${x(op) + opW / 2}" y1="15" y2="19"/>`);
  for (const e of view.trace) {
    if (PERSIST_KINDS.has(e.kind) && view.applied(e.op) && (e.result ?? 0) >= 0) {
      parts.push(`<rect class="persist-tick" x="${x(e.op) + opW / 2 - 1.5}" y="22" width="3" height="${AXIS_H - 24}"><title>persistence point: ${esc(describeRequest(e))}</title></rect>`);
    }
  }

  // File lifetimes: a thin bar from the request that named the file to the one that removed the name.
  const born = new Map<string, number>();
  const life: string[] = [];
  const endLife = (p: string, op: number) => {
    const from = born.get(p);
    if (from === undefined || !laneY.has(`file:${p}`)) return;
    const l = laneY.get(`file:${p}`)!;
    life.push(`<rect class="life" x="${x(from)}" y="${l.y + l.h / 2 - 1}" width="${Math.max(1, x(op) - x(from))}" height="2"/>`);
    born.delete(p);
  };
  for (const e of view.trace) {
    if (!view.applied(e.op)) continue;
    if (e.kind === 'create' || e.kind === 'mknod' || e.kind === 'symlink') born.set(e.path, e.op);
    else if (e.kind === 'link' && e.path2) born.set(e.path2, e.op);
    else if (e.kind === 'unlink') endLife(e.path, e.op);
    else if (e.kind === 'rename' && e.path2) {
      endLife(e.path2, e.op);
      endLife(e.path, e.op);
      born.set(e.path2, e.op);
    }
  }
  for (const p of [...born.keys()]) endLife(p, Math.min(view.boundary + 1, n + 1));
  parts.push(...life);

  // Requests.
  const badges: string[] = [];
  for (const e of view.trace) {
    const key = refKey({ kind: 'op', cut: view.index, op: e.op });
    const ev = evidence.get(key) ?? [];
    const lane = laneFor(laneOf(e));
    const pending = view.atCut.get(e.op);
    const classes = ['req', `k-${e.kind}`];
    if (e.kind === 'fsync' && e.datasync) classes.push('datasync');
    if ((e.result ?? 0) < 0) classes.push('failed');
    if (e.state === 'held') classes.push('held');
    if (!view.applied(e.op)) classes.push(e.op > view.boundary && view.recordedBeyond ? 'beyond' : 'not-applied');
    if (pending) classes.push(`fate-${pending.fate}`);
    if (ev.length) classes.push('hl', ...ev.map((v) => `role-${v.role}`));
    const title = [
      `${describeRequest(e)} => ${requestResult(e)}`,
      !view.applied(e.op) ? (e.op > view.boundary && view.recordedBeyond ? 'recorded after the crash state: this case never reached it' : 'not applied: the power went first') : '',
      pending ? `unsynced at the cut: ${pending.fate === 'lost' ? 'lost' : pending.fate === 'kept' ? 'kept' : 'may be lost'} (${pending.because})` : '',
      ...ev.map((v) => `[${v.n}] ${ROLE_NAMES[v.role]}: ${v.text}`),
    ].filter(Boolean).join('\n');
    const cx = x(e.op);
    let shape: string;
    const pad = opW > 10 ? 2 : 1;
    switch (e.kind) {
      case 'write':
      case 'truncate':
        shape = `<rect x="${cx + pad}" y="${lane.y + 5}" width="${opW - 2 * pad}" height="${lane.h - 10}" rx="1.5"/>`;
        break;
      case 'fsync':
      case 'fsyncdir':
        shape = `<rect x="${cx + opW / 2 - Math.max(1.5, opW / 5)}" y="${lane.y + 2}" width="${Math.max(3, (2 * opW) / 5)}" height="${lane.h - 4}"/>`;
        break;
      case 'setattr':
        shape = `<circle cx="${cx + opW / 2}" cy="${lane.y + lane.h / 2}" r="${Math.min(4, opW / 2 - 0.5)}"/>`;
        break;
      default:
        shape = `<rect x="${cx + pad}" y="${lane.y + 7}" width="${opW - 2 * pad}" height="${lane.h - 14}" rx="${(opW - 2 * pad) / 2}"/>`;
    }
    // A rename or link also touches the files on both sides of it.
    const ticks = (e.kind === 'rename' || e.kind === 'link' || e.kind === 'unlink' || e.kind === 'create')
      ? [e.path, e.path2].filter((p): p is string => p !== undefined && laneY.has(`file:${p}`)).map((p) => `<rect class="tick" x="${cx + opW / 2 - 1}" y="${laneY.get(`file:${p}`)!.y + 3}" width="2" height="${LANE_H - 6}"/>`).join('')
      : '';
    const halo = ev.length ? `<rect class="halo" x="${cx - 1}" y="${lane.y}" width="${opW + 2}" height="${lane.h}"/>` : '';
    parts.push(`<g class="${classes.join(' ')}" data-ref="${key}" id="svg-${key}">${halo}${shape}${ticks}<title>${esc(title)}</title></g>`);
    if (ev.length) badges.push(badge(cx + opW / 2, lane.y, ev.map((v) => v.n)));
  }

  // The program's lines, stacked after the request they followed.
  if (run && programLane) {
    const byGap = new Map<number, number[]>();
    for (const m of view.marks) if (m.n >= 1 && m.n <= run.outcomes.length) byGap.set(m.afterOp, [...(byGap.get(m.afterOp) ?? []), m.n]);
    for (const [afterOp, ns] of byGap) {
      ns.sort((p, q) => p - q);
      const cx = xb(afterOp);
      const stepY = Math.min(MARKER + 1, (programLane.h - MARKER - 6) / Math.max(1, ns.length - 1));
      ns.forEach((lineN, i) => {
        const o = run.outcomes[lineN - 1];
        const key = refKey({ kind: 'line', run: runIndex, line: lineN });
        const ev = evidence.get(key) ?? [];
        const yy = programLane.y + programLane.h - 4 - MARKER - i * stepY;
        const title = [`line ${lineN}: ${describeLine(o)}`, `printed after request ${afterOp}`, ...ev.map((v) => `[${v.n}] ${ROLE_NAMES[v.role]}: ${v.text}`)].join('\n');
        const halo = ev.length ? `<rect class="halo" x="${cx - MARKER / 2 - 2}" y="${yy - 2}" width="${MARKER + 4}" height="${MARKER + 4}"/>` : '';
        parts.push(`<g class="line t-${lineClass(o)}${ev.length ? ' hl ' + ev.map((v) => `role-${v.role}`).join(' ') : ''}" data-ref="${key}" id="svg-${key}">${halo}<rect x="${cx - MARKER / 2}" y="${yy}" width="${MARKER}" height="${MARKER}" rx="2"/><title>${esc(title)}</title></g>`);
        if (ev.length) badges.push(badge(cx, yy - 2, ev.map((v) => v.n)));
      });
    }
    if (view.marks.length === 0 && run.outcomes.length > 0) {
      parts.push(`<text class="no-marks" x="6" y="${programLane.y + programLane.h / 2 + 4}">this run left no marks: its ${num(run.outcomes.length)} lines are listed below, not placed on the axis</text>`);
    }
  }

  // The power cut, over everything else.
  const cutX = xb(view.boundary);
  if (view.recordedBeyond) parts.push(`<rect class="beyond-shade" x="${cutX}" y="${AXIS_H}" width="${width - cutX}" height="${height - AXIS_H}"><title>recorded after the crash state: this case never reached these requests</title></rect>`);
  parts.push(`<g class="cut" id="svg-cut-${view.index}"><line x1="${cutX}" x2="${cutX}" y1="${AXIS_H - 6}" y2="${height - 4}"/><path d="M${cutX - 5} ${AXIS_H - 14} l7 -9 l-2 6 l5 0 l-7 9 l2 -6 z"/><text x="${cutX + 6}" y="${AXIS_H - 6}">power cut</text><title>${esc(view.cutLabel)}\n${esc(view.policyLabel)}</title></g>`);
  parts.push(...badges);

  const labels = lanes.map((l) => `<g><title>${esc(l.title)}</title><text class="lane-label${l.key === 'dir' || l.key === 'program' ? ' strong' : ''}" x="${LABEL_W - 8}" y="${l.y + l.h / 2 + 4}">${esc(shorten(l.label, 28))}</text></g>`).join('');
  const chart = `<div class="timeline" data-cut="${view.index}">
<svg class="tl-labels" width="${LABEL_W}" height="${height}" viewBox="0 0 ${LABEL_W} ${height}" role="img" aria-label="lanes"><text class="axis-name" x="${LABEL_W - 8}" y="12">request</text><text class="axis-name" x="${LABEL_W - 8}" y="${AXIS_H - 4}">persistence points</text>${labels}</svg>
<div class="tl-scroll" data-cut-x="${cutX}"><svg class="tl-chart" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" role="img" aria-label="${esc(`timeline of cut ${view.index + 1}: ${view.cutLabel}`)}">${parts.join('')}</svg></div>
</div>`;
  return { chart, log: renderLog(view, run, runIndex, evidence) };
}

function badge(cx: number, top: number, ns: number[]): string {
  const text = ns.join(',');
  const w = Math.max(14, 7 * text.length + 6);
  return `<g class="badge"><rect x="${cx - w / 2}" y="${top - 13}" width="${w}" height="13" rx="6.5"/><text x="${cx}" y="${top - 3}">${text}</text></g>`;
}

function shorten(s: string, max: number): string {
  return s.length <= max ? s : '…' + s.slice(s.length - max + 1);
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
