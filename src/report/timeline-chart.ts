// One chart of a cut's timeline (timeline.ts chooses the range and adds the log): the lanes
// (directory entries, one per file, a cluster's node headers, the program's lines), the axis with
// its persistence points, the files' lifetimes, each request and output line as a shape with its
// <title>, the power cut and the evidence's numbered badges, as inline SVG.
import type { TraceEntry } from '../../fusefs/protocol.js';
import type { RunRecord } from '../harness/oracle.js';
import { describeLine, describeRequest, lineClass, refKey, requestResult, ROLE_NAMES, type Evidence } from './evidence.js';
import { esc, num } from './html.js';
import { nodesInWords, splitNodePath, type ClusterCut } from './cluster-view.js';
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
/** Files beyond this many share one lane, so a trace touching hundreds of files stays readable. */
export const MAX_FILE_LANES = 60;
const MARKER = 8;
/** A cluster's node header lane: the node's process (started, cut, restarted). */
const NODE_H = 22;

interface Lane {
  key: string;
  label: string;
  title: string;
  y: number;
  h: number;
}

/** A cluster's node group of lanes: where it starts and ends on the y axis. */
interface NodeGroup {
  node: number;
  y0: number;
  y1: number;
}

/** The requests a chart draws, first to last (request numbers, inclusive). */
export interface OpRange {
  from: number;
  to: number;
}

/** The last request number of a cut's timeline. */
export const lastOp = (view: CutView) => Math.max(view.maxOp, view.boundary, 1);

function laneOf(e: TraceEntry, cluster: ClusterCut | undefined): string {
  if (DIR_KINDS.has(e.kind)) return cluster ? `dir:${e.node}` : 'dir';
  return `file:${e.path}`;
}

/** Ticks on the axis every `step` requests, `step` from 1-2-5 so labels never collide. */
function axisStep(opW: number): number {
  for (const s of [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10_000]) if (s * opW >= 36) return s;
  return 20_000;
}

export interface ChartOptions {
  /** Give the shapes their ids (svg-…): only the chart shown by default has them, so ids stay unique. */
  ids: boolean;
  /** Pixels the requests of the range spread over, within the op width bounds. */
  targetWidth: number;
  className?: string;
  /** A cluster's cut: a lane group per node (its process, its directory entries, its files). */
  cluster?: ClusterCut;
}

/** A chart's lanes, top to bottom. */
interface ChartLanes {
  lanes: Lane[];
  byKey: Map<string, Lane>;
  /** A cluster's node groups (none for one disk). */
  groups: NodeGroup[];
  /** The program's lines, when the cut has a run. */
  programLane: Lane | undefined;
  /** Where the last lane ends on the y axis. */
  bottom: number;
}

/** What every part of one chart is drawn against: the cut, its run and evidence, the range and its x scale, the lanes. */
interface Frame {
  view: CutView;
  run: RunRecord | undefined;
  runIndex: number;
  evidence: Map<string, Evidence[]>;
  from: number;
  to: number;
  /** Width of one request. */
  opW: number;
  width: number;
  height: number;
  /** Left edge of request `op`. */
  x: (op: number) => number;
  /** The gap right after request `afterOp`. */
  xb: (afterOp: number) => number;
  /** The id attribute of a shape, if this chart gives ids. */
  id: (key: string) => string;
  /** The requests within the range. */
  shownTrace: TraceEntry[];
  lanes: ChartLanes;
  cluster: ClusterCut | undefined;
}

/** The labels column and the scrolling chart of the requests `range` of a cut. */
export function renderChart(view: CutView, run: RunRecord | undefined, runIndex: number, evidence: Map<string, Evidence[]>, range: OpRange, opts: ChartOptions): string {
  const { from, to } = range;
  const count = to - from + 1;
  const inRange = (op: number) => op >= from && op <= to;
  const opW = Math.max(MIN_OP_W, Math.min(MAX_OP_W, opts.targetWidth / count));
  const shownTrace = view.trace.filter((e) => inRange(e.op));
  const lanes = chartLanes(view, shownTrace, run, runIndex, opts.cluster);
  const f: Frame = {
    view, run, runIndex, evidence, from, to, opW, shownTrace, lanes, cluster: opts.cluster,
    width: Math.ceil(PAD_LEFT + count * opW + PAD_RIGHT),
    height: lanes.bottom + 12,
    x: (op) => PAD_LEFT + (op - from) * opW,
    xb: (afterOp) => PAD_LEFT + (afterOp - from + 1) * opW,
    id: (key) => (opts.ids ? ` id="svg-${key}"` : ''),
  };
  const { width, height } = f;
  const badges: string[] = [];
  const parts = [...laneParts(f), ...axisParts(f), ...lifeParts(f), ...requestParts(f, badges), ...programLineParts(f, badges), ...cutParts(f), ...badges];
  const cutX = f.xb(view.boundary);
  const labels = lanes.lanes.map((l) => `<g${l.key.startsWith('node:') ? ` class="node-label" data-node="${l.key.slice(5)}"` : ''}><title>${esc(l.title)}</title><text class="lane-label${l.key === 'dir' || l.key === 'program' ? ' strong' : ''}${l.key.startsWith('node:') ? ' node' : ''}" x="${LABEL_W - 8}" y="${l.y + l.h / 2 + 4}">${esc(shorten(l.label, 28))}</text></g>`).join('');
  return `<div class="timeline${opts.className ? ` ${opts.className}` : ''}" data-cut="${view.index}" data-from="${from}" data-to="${to}">
<svg class="tl-labels" width="${LABEL_W}" height="${height}" viewBox="0 0 ${LABEL_W} ${height}" role="img" aria-label="lanes"><text class="axis-name" x="${LABEL_W - 8}" y="12">request</text><text class="axis-name" x="${LABEL_W - 8}" y="${AXIS_H - 4}">persistence points</text>${labels}</svg>
<div class="tl-scroll" data-cut-x="${cutX}"><svg class="tl-chart" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" role="img" aria-label="${esc(`timeline of cut ${view.index + 1}, requests ${from}–${to}: ${view.cutLabel}`)}">${parts.join('')}</svg></div>
</div>`;
}

/** The lanes: directory entries first (per node on a cluster, under its header lane), then files in the order the range first touches them, then the program's lines. */
function chartLanes(view: CutView, shownTrace: readonly TraceEntry[], run: RunRecord | undefined, runIndex: number, cluster: ClusterCut | undefined): ChartLanes {
  const fileOrder = filesInOrder(view, shownTrace);
  const shown = fileOrder.slice(0, MAX_FILE_LANES);
  const overflow = fileOrder.length - shown.length;
  const lanes: Lane[] = [];
  let y = AXIS_H;
  const addLane = (key: string, label: string, title: string, h = LANE_H) => {
    lanes.push({ key, label, title, y, h });
    y += h;
  };
  const groups: NodeGroup[] = [];
  if (cluster) {
    for (let node = 0; node < cluster.nodes; node++) {
      const y0 = y;
      const cut = cluster.cut.includes(node);
      addLane(`node:${node}`, `node ${node}`, `node ${node}: its server's process (started, ${cut ? 'its power cut' : 'kept its power'}${cluster.events.some((e) => e.node === node && e.restarted) ? ', restarted' : ''})`, NODE_H);
      addLane(`dir:${node}`, 'directory entries', `node ${node}'s creates, links, renames, unlinks and directory fsyncs`);
      for (const p of shown) if (splitNodePath(p)?.node === node) addLane(`file:${p}`, splitNodePath(p)!.path, `node ${node}: ${splitNodePath(p)!.path}`);
      groups.push({ node, y0, y1: y });
    }
  } else {
    addLane('dir', 'directory entries', 'creates, links, renames, unlinks and directory fsyncs');
    for (const p of shown) addLane(`file:${p}`, p, p);
  }
  if (overflow > 0) addLane('other', `${num(overflow)} more files`, fileOrder.slice(MAX_FILE_LANES).join('\n'));
  const programLane = run ? (addLane('program', `program: run ${runIndex} (${run.role})`, 'the lines the driver printed, placed after the request they followed', PROGRAM_H), lanes[lanes.length - 1]) : undefined;
  return { lanes, byKey: new Map(lanes.map((l) => [l.key, l])), groups, programLane, bottom: y };
}

/** The files the requests shown touch, in the order they first do (a directory's own path is no file). */
function filesInOrder(view: CutView, shownTrace: readonly TraceEntry[]): string[] {
  const fileOrder: string[] = [];
  const seenFiles = new Set<string>();
  const touch = (p: string | undefined) => {
    if (p !== undefined && !seenFiles.has(p)) {
      seenFiles.add(p);
      fileOrder.push(p);
    }
  };
  const dirPaths = new Set(view.trace.filter((e) => e.kind === 'mkdir' || e.kind === 'rmdir' || e.kind === 'fsyncdir').map((e) => e.path));
  for (const e of shownTrace) {
    if (!DIR_KINDS.has(e.kind)) touch(e.path);
    else if (e.kind === 'create' || e.kind === 'mknod' || e.kind === 'symlink') touch(e.path);
    else if (e.kind === 'rename' || e.kind === 'link') {
      if (!dirPaths.has(e.path)) touch(e.path);
      if (!dirPaths.has(e.path2 ?? '')) touch(e.path2);
    }
  }
  return fileOrder;
}

/** Lane backgrounds, and a line between node groups. */
function laneParts(f: Frame): string[] {
  const { width } = f;
  const parts = f.lanes.lanes.map((l, i) => `<rect class="lane-bg${i % 2 ? ' odd' : ''}${l.key === 'program' ? ' program' : ''}${l.key.startsWith('node:') ? ' node-head' : ''}" x="0" y="${l.y}" width="${width}" height="${l.h}"/>`);
  for (const g of f.lanes.groups.slice(1)) parts.push(`<line class="node-sep" x1="0" x2="${width}" y1="${g.y0}" y2="${g.y0}"/>`);
  return parts;
}

/** The axis: request numbers and persistence points. */
function axisParts(f: Frame): string[] {
  const { from, to, opW, x, view } = f;
  const parts: string[] = [];
  const step = axisStep(opW);
  for (let op = step === 1 ? from : Math.ceil(from / step) * step; op <= to; op += step) parts.push(`<text class="axis-label" x="${x(op) + opW / 2}" y="12">${op}</text><line class="axis-tick" x1="${x(op) + opW / 2}" x2="${x(op) + opW / 2}" y1="15" y2="19"/>`);
  for (const e of f.shownTrace) {
    if (PERSIST_KINDS.has(e.kind) && view.applied(e.op) && (e.result ?? 0) >= 0) {
      parts.push(`<rect class="persist-tick" x="${x(e.op) + opW / 2 - 1.5}" y="22" width="3" height="${AXIS_H - 24}"><title>persistence point: ${esc(describeRequest(e))}</title></rect>`);
    }
  }
  return parts;
}

/** File lifetimes: a thin bar from the request that named the file to the one that removed the name (the part within the range). */
function lifeParts(f: Frame): string[] {
  const { from, to, x, view } = f;
  const laneY = f.lanes.byKey;
  const born = new Map<string, number>();
  const life: string[] = [];
  const endLife = (p: string, op: number) => {
    const start = born.get(p);
    born.delete(p);
    if (start === undefined || !laneY.has(`file:${p}`)) return;
    const [a, b] = [Math.max(start, from), Math.min(op, to + 1)];
    if (b < a) return;
    const l = laneY.get(`file:${p}`)!;
    life.push(`<rect class="life" x="${x(a)}" y="${l.y + l.h / 2 - 1}" width="${Math.max(1, x(b) - x(a))}" height="2"/>`);
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
  for (const p of [...born.keys()]) endLife(p, Math.min(view.boundary + 1, lastOp(view) + 1));
  return life;
}

/** Each request in the range, in its lane, with its title; `badges` gets the evidence numbers of those that are evidence. */
function requestParts(f: Frame, badges: string[]): string[] {
  const { view, evidence, x, opW, id } = f;
  const { byKey: laneY, lanes } = f.lanes;
  const laneFor = (key: string) => laneY.get(key) ?? laneY.get('other') ?? lanes[0];
  const parts: string[] = [];
  for (const e of f.shownTrace) {
    const key = refKey({ kind: 'op', cut: view.index, op: e.op });
    const ev = evidence.get(key) ?? [];
    const lane = laneFor(laneOf(e, f.cluster));
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
    const shape = requestShape(e.kind, cx, lane, opW);
    // A rename or link also touches the files on both sides of it.
    const ticks = (e.kind === 'rename' || e.kind === 'link' || e.kind === 'unlink' || e.kind === 'create')
      ? [e.path, e.path2].filter((p): p is string => p !== undefined && laneY.has(`file:${p}`)).map((p) => `<rect class="tick" x="${cx + opW / 2 - 1}" y="${laneY.get(`file:${p}`)!.y + 3}" width="2" height="${LANE_H - 6}"/>`).join('')
      : '';
    const halo = ev.length ? `<rect class="halo" x="${cx - 1}" y="${lane.y}" width="${opW + 2}" height="${lane.h}"/>` : '';
    parts.push(`<g class="${classes.join(' ')}" data-ref="${key}"${id(key)}>${halo}${shape}${ticks}<title>${esc(title)}</title></g>`);
    if (ev.length) badges.push(badge(cx + opW / 2, lane.y, ev.map((v) => v.n)));
  }
  return parts;
}

/** A request's shape by its kind: a data change a bar, a sync a tall narrow bar, a setattr a dot, the rest a pill. */
function requestShape(kind: TraceEntry['kind'], cx: number, lane: Lane, opW: number): string {
  const pad = opW > 10 ? 2 : 1;
  switch (kind) {
    case 'write':
    case 'truncate':
    case 'fallocate':
      return `<rect x="${cx + pad}" y="${lane.y + 5}" width="${opW - 2 * pad}" height="${lane.h - 10}" rx="1.5"/>`;
    case 'fsync':
    case 'fsyncdir':
      return `<rect x="${cx + opW / 2 - Math.max(1.5, opW / 5)}" y="${lane.y + 2}" width="${Math.max(3, (2 * opW) / 5)}" height="${lane.h - 4}"/>`;
    case 'setattr':
      return `<circle cx="${cx + opW / 2}" cy="${lane.y + lane.h / 2}" r="${Math.min(4, opW / 2 - 0.5)}"/>`;
    default:
      return `<rect x="${cx + pad}" y="${lane.y + 7}" width="${opW - 2 * pad}" height="${lane.h - 14}" rx="${(opW - 2 * pad) / 2}"/>`;
  }
}

/** The program's lines, stacked after the request they followed; `badges` gets the evidence numbers of those that are evidence. */
function programLineParts(f: Frame, badges: string[]): string[] {
  const { view, run, runIndex, evidence, from, to, xb, id } = f;
  const programLane = f.lanes.programLane;
  const parts: string[] = [];
  if (!run || !programLane) return parts;
  const byGap = new Map<number, number[]>();
  for (const m of view.marks) if (m.n >= 1 && m.n <= run.outcomes.length && m.afterOp >= from - 1 && m.afterOp <= to) byGap.set(m.afterOp, [...(byGap.get(m.afterOp) ?? []), m.n]);
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
      parts.push(`<g class="line t-${lineClass(o)}${ev.length ? ' hl ' + ev.map((v) => `role-${v.role}`).join(' ') : ''}" data-ref="${key}"${id(key)}>${halo}<rect x="${cx - MARKER / 2}" y="${yy}" width="${MARKER}" height="${MARKER}" rx="2"/><title>${esc(title)}</title></g>`);
      if (ev.length) badges.push(badge(cx, yy - 2, ev.map((v) => v.n)));
    });
  }
  if (view.marks.length === 0 && run.outcomes.length > 0) {
    parts.push(`<text class="no-marks" x="6" y="${programLane.y + programLane.h / 2 + 4}">this run left no marks: its ${num(run.outcomes.length)} lines are listed below, not placed on the axis</text>`);
  }
  return parts;
}

/** The power cut, over everything else (on a cluster, with each node's process), and the dashed edges of a range that leaves requests out. */
function cutParts(f: Frame): string[] {
  const { view, from, to, width, height, xb, id, cluster } = f;
  const { groups } = f.lanes;
  const parts: string[] = [];
  const cutX = xb(view.boundary);
  if (view.recordedBeyond) parts.push(`<rect class="beyond-shade" x="${cutX}" y="${AXIS_H}" width="${width - cutX}" height="${height - AXIS_H}"><title>recorded after the crash state: this case never reached these requests</title></rect>`);
  // A stretch of the run left out: a dashed edge, so a picture of the window says it goes on.
  const edge = (ex: number, what: string) => parts.push(`<g class="elided"><line x1="${ex}" x2="${ex}" y1="${AXIS_H}" y2="${height - 4}"/><title>${esc(what)} left out of this window (see the note above the chart)</title></g>`);
  if (from > 1) edge(1, `requests 1–${num(from - 1)}`);
  if (to < lastOp(view)) edge(width - 1, `requests ${num(to + 1)}–${num(lastOp(view))}`);
  const bolt = (bx: number, by: number) => `<path d="M${bx - 5} ${by} l7 -9 l-2 6 l5 0 l-7 9 l2 -6 z"/>`;
  if (cluster && groups.length > 0) {
    parts.push(...nodeMarks(cluster, groups, view, xb, id));
    // The power cut: across every node's group on a coordinated cut, else across the cut nodes' groups only.
    const coordinated = cluster.cut.length === cluster.nodes;
    const spans = coordinated ? [{ y0: AXIS_H - 6, y1: height - 4 }] : groups.filter((g) => cluster.cut.includes(g.node)).map((g) => ({ y0: g.y0, y1: g.y1 }));
    const label = coordinated ? 'power cut: every node' : `power cut: ${nodesInWords(cluster.cut)}`;
    parts.push(`<g class="cut${coordinated ? '' : ' some-nodes'}"${id(`cut-${view.index}`)} data-nodes="${cluster.cut.join(',')}">${spans.map((s) => `<line x1="${cutX}" x2="${cutX}" y1="${s.y0}" y2="${s.y1}"/>`).join('')}${bolt(cutX, AXIS_H - 14)}<text x="${cutX + 6}" y="${AXIS_H - 6}">${label}</text><title>${esc(view.cutLabel)}\n${esc(view.policyLabel)}</title></g>`);
  } else {
    parts.push(`<g class="cut"${id(`cut-${view.index}`)}><line x1="${cutX}" x2="${cutX}" y1="${AXIS_H - 6}" y2="${height - 4}"/>${bolt(cutX, AXIS_H - 14)}<text x="${cutX + 6}" y="${AXIS_H - 6}">power cut</text><title>${esc(view.cutLabel)}\n${esc(view.policyLabel)}</title></g>`);
  }
  return parts;
}

/**
 * Each node's header lane: its process as a bar, up from its first node line (or the run's start)
 * until its cut, and again from its restart; a marker at each node line (started, restarted), and
 * the cut's bolt on the cut nodes. Shapes carry <title>s, as the requests do.
 */
function nodeMarks(cluster: ClusterCut, groups: { node: number; y0: number }[], view: CutView, xb: (afterOp: number) => number, id: (key: string) => string): string[] {
  const out: string[] = [];
  const end = Math.max(view.maxOp, view.boundary);
  for (const g of groups) {
    const k = g.node;
    const cy = g.y0 + NODE_H / 2;
    const events = cluster.events.filter((e) => e.node === k);
    const cut = cluster.cut.includes(k);
    // Up-intervals of the node's process, in request numbers (gaps after afterOp).
    const started = events.find((e) => !e.restarted)?.afterOp ?? 0;
    const restart = events.find((e) => e.restarted && (e.afterOp ?? -1) >= view.boundary);
    // A node's process ends at the cut unless the node ran on through a live cut of others.
    const ranOn = !cut && cluster.live;
    const ups: [number, number][] = ranOn ? [[started, end]] : [[started, view.boundary], ...(restart ? [[restart.afterOp!, end] as [number, number]] : [])];
    for (const [a, b] of ups) if (b >= a) out.push(`<rect class="node-up" x="${xb(a)}" y="${cy - 3}" width="${Math.max(1, xb(b) - xb(a))}" height="6"><title>node ${k}'s server running (after request ${a}${b === end ? '' : ` until request ${b}`})</title></rect>`);
    for (const e of events) {
      if (e.afterOp === undefined) continue;
      const ex = xb(e.afterOp);
      const what = e.restarted ? `restarted on its crashed disk (process group ${e.pgid})` : `started (process group ${e.pgid})`;
      out.push(`<g class="node-event ${e.restarted ? 'restarted' : 'started'}" data-node="${k}"${id(`node-${k}-line-${e.line}`)}><circle cx="${ex}" cy="${cy}" r="5"/>${e.restarted ? `<text x="${ex + 7}" y="${cy + 4}">restarted</text>` : ''}<title>node ${k} ${esc(what)}: line ${e.line}, after request ${e.afterOp}</title></g>`);
    }
    if (cut) out.push(`<g class="node-cut" data-node="${k}"><path d="M${xb(view.boundary) - 5} ${cy + 1} l7 -9 l-2 6 l5 0 l-7 9 l2 -6 z"/><title>node ${k}: ${esc(view.cutLabel)}</title></g>`);
    else if (!ranOn) out.push(`<g class="node-killed" data-node="${k}"><path d="M${xb(view.boundary) - 4} ${cy - 4} l8 8 m0 -8 l-8 8"/><title>node ${k} lost only its process at the cut: its page cache kept what it had not synced</title></g>`);
  }
  return out;
}

function badge(cx: number, top: number, ns: number[]): string {
  const text = ns.join(',');
  const w = Math.max(14, 7 * text.length + 6);
  return `<g class="badge"><rect x="${cx - w / 2}" y="${top - 13}" width="${w}" height="13" rx="6.5"/><text x="${cx}" y="${top - 3}">${text}</text></g>`;
}

function shorten(s: string, max: number): string {
  return s.length <= max ? s : '…' + s.slice(s.length - max + 1);
}
