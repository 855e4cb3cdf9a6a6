// One file in two images (live and durable at a cut), side by side, the differing bytes marked:
// text for small ASCII files, a hex dump otherwise. Output is bounded whatever the file sizes:
// only the rows around differences are shown, up to a fixed number per file.
import { esc, num } from './html.js';
import type { ImageEntry } from './types.js';

export interface ByteRange {
  start: number;
  /** Exclusive. */
  end: number;
}

const ROW_BYTES = 16;
/** Hex rows shown per file; the rest is summarised (the image files are in the artifact for hexdump -C). */
export const MAX_HEX_ROWS_PER_FILE = 64;
/** A long differing range shows this many rows at its start and at its end. */
const RANGE_EDGE_ROWS = 6;
/** Differing byte ranges named per file. */
export const MAX_RANGES_LISTED = 24;
/** Files up to this size that are plain ASCII text are shown as text. */
const MAX_TEXT_BYTES = 16 * 1024;
/** Equal runs shorter than this between two differences are reported as one range. */
const MERGE_GAP_BYTES = 8;

/** Differing byte ranges of two buffers: bytes that differ, and the tail only one of them has. */
export function diffRanges(a: Uint8Array, b: Uint8Array): ByteRange[] {
  const out: ByteRange[] = [];
  const common = Math.min(a.length, b.length);
  let i = 0;
  while (i < common) {
    if (a[i] === b[i]) {
      i++;
      continue;
    }
    const start = i;
    while (i < common && a[i] !== b[i]) i++;
    const last = out[out.length - 1];
    if (last && start - last.end < MERGE_GAP_BYTES) last.end = i;
    else out.push({ start, end: i });
  }
  if (a.length !== b.length) {
    const last = out[out.length - 1];
    const end = Math.max(a.length, b.length);
    if (last && common - last.end < MERGE_GAP_BYTES) last.end = end;
    else out.push({ start: common, end });
  }
  return out;
}

const isText = (x: Uint8Array) => x.length <= MAX_TEXT_BYTES && x.every((c) => (c >= 0x20 && c < 0x7f) || c === 0x0a || c === 0x09 || c === 0x0d);
const hex2 = (c: number) => (c < 16 ? '0' : '') + c.toString(16);
const hex8 = (n: number) => n.toString(16).padStart(8, '0');
const differs = (a: Uint8Array, b: Uint8Array, i: number) => i >= a.length || i >= b.length || a[i] !== b[i];

export function formatRange(r: ByteRange): string {
  const n = r.end - r.start;
  return n === 1 ? `byte ${num(r.start)}` : `bytes ${num(r.start)}–${num(r.end - 1)} (${num(n)})`;
}

/** Spans of one side, with differing ones wrapped in <mark>; `render` turns a run of bytes into HTML. */
function markedRun(x: Uint8Array, other: Uint8Array, from: number, to: number, render: (bytes: Uint8Array) => string, pad: (count: number) => string): string {
  let html = '';
  let i = from;
  const end = Math.min(to, x.length);
  while (i < end) {
    const d = differs(x, other, i);
    let j = i;
    while (j < end && differs(x, other, j) === d) j++;
    const part = render(x.subarray(i, j));
    html += d ? `<mark>${part}</mark>` : part;
    i = j;
  }
  if (end < to) html += pad(to - Math.max(end, from));
  return html;
}

const hexOf = (bytes: Uint8Array) => Array.from(bytes, hex2).join(' ') + ' ';
const asciiOf = (bytes: Uint8Array) => esc(Array.from(bytes, (c) => (c >= 0x20 && c < 0x7f ? String.fromCharCode(c) : '.')).join(''));

function hexRow(row: number, a: Uint8Array, b: Uint8Array): string {
  const from = row * ROW_BYTES;
  const to = from + ROW_BYTES;
  const side = (x: Uint8Array, y: Uint8Array) =>
    `<td class="hex">${markedRun(x, y, from, to, hexOf, (n) => '   '.repeat(n))}</td><td class="asc">${markedRun(x, y, from, to, asciiOf, (n) => ' '.repeat(n))}</td>`;
  return `<tr><td class="off">${hex8(from)}</td>${side(a, b)}${side(b, a)}</tr>`;
}

/** Rows to show: those around each differing range, long ranges by their two ends. */
function rowsToShow(ranges: ByteRange[], lengthBytes: number): { rows: number[]; shownRanges: number } {
  const lastRow = Math.max(0, Math.ceil(lengthBytes / ROW_BYTES) - 1);
  const rows = new Set<number>();
  let shownRanges = 0;
  for (const r of ranges) {
    const first = Math.max(0, Math.floor(r.start / ROW_BYTES) - 1);
    const last = Math.min(lastRow, Math.floor((r.end - 1) / ROW_BYTES) + 1);
    const wanted: number[] = [];
    if (last - first + 1 <= 2 * RANGE_EDGE_ROWS) for (let i = first; i <= last; i++) wanted.push(i);
    else for (let i = 0; i < RANGE_EDGE_ROWS; i++) wanted.push(first + i, last - RANGE_EDGE_ROWS + 1 + i);
    const fresh = wanted.filter((row) => !rows.has(row));
    if (rows.size + fresh.length > MAX_HEX_ROWS_PER_FILE && shownRanges > 0) break;
    for (const row of fresh.slice(0, MAX_HEX_ROWS_PER_FILE)) rows.add(row);
    shownRanges++;
  }
  return { rows: [...rows].sort((x, y) => x - y), shownRanges };
}

function hexTable(aName: string, bName: string, a: Uint8Array, b: Uint8Array, rows: number[]): string {
  const out: string[] = [];
  let prev = -1;
  for (const row of rows) {
    if (row > prev + 1) {
      const from = (prev + 1) * ROW_BYTES;
      const to = row * ROW_BYTES;
      let equal = true;
      for (let i = from; i < to && equal; i++) equal = !differs(a, b, i);
      out.push(`<tr class="gap"><td colspan="5">… ${num(to - from)} bytes not shown${equal ? ' (equal)' : ' (they differ)'} …</td></tr>`);
    }
    out.push(hexRow(row, a, b));
    prev = row;
  }
  const rest = Math.max(a.length, b.length) - (prev + 1) * ROW_BYTES;
  if (rest > 0) out.push(`<tr class="gap"><td colspan="5">… ${num(rest)} more bytes not shown …</td></tr>`);
  return `<table class="hexdump"><thead><tr><th>offset</th><th colspan="2">${esc(aName)}</th><th colspan="2">${esc(bName)}</th></tr></thead><tbody>${out.join('')}</tbody></table>`;
}

function textPanes(aName: string, bName: string, a: Uint8Array, b: Uint8Array): string {
  const text = (bytes: Uint8Array) => esc(String.fromCharCode(...bytes));
  const pane = (name: string, x: Uint8Array, y: Uint8Array) =>
    `<div class="pane"><div class="pane-head">${esc(name)}</div><pre class="text">${x.length ? markedRun(x, y, 0, x.length, text, () => '') : '<span class="note">(empty)</span>'}</pre></div>`;
  return `<div class="panes">${pane(aName, a, b)}${pane(bName, b, a)}</div>`;
}

export interface CompareSide {
  name: string;
  entry?: ImageEntry;
}

const describeEntry = (e: ImageEntry | undefined) => (e === undefined ? 'absent' : e.kind === 'dir' ? 'directory' : e.kind === 'other' ? 'special file' : `${num(e.sizeBytes)} bytes`);

/** Whether two entries hold the same thing (as far as the loader read them). */
export function sameEntry(x: ImageEntry | undefined, y: ImageEntry | undefined): boolean {
  if (x === undefined || y === undefined) return x === y;
  if (x.kind !== y.kind || x.sizeBytes !== y.sizeBytes) return false;
  if (x.kind !== 'file') return true;
  const p = x.bytes ?? new Uint8Array();
  const q = y.bytes ?? new Uint8Array();
  return p.length === q.length && p.every((c, i) => c === q[i]);
}

/** The status of one file in two images, in a few words, and its differing ranges. */
export function compareSummary(a: CompareSide, b: CompareSide): { status: 'same' | 'differ' | 'only-a' | 'only-b'; ranges: ByteRange[] } {
  if (a.entry === undefined && b.entry === undefined) return { status: 'same', ranges: [] };
  if (b.entry === undefined) return { status: 'only-a', ranges: [] };
  if (a.entry === undefined) return { status: 'only-b', ranges: [] };
  if (sameEntry(a.entry, b.entry)) return { status: 'same', ranges: [] };
  const ranges = a.entry.kind === 'file' && b.entry.kind === 'file' ? diffRanges(a.entry.bytes ?? new Uint8Array(), b.entry.bytes ?? new Uint8Array()) : [];
  return { status: 'differ', ranges };
}

/** The two versions of one file side by side, differences marked; bounded output. */
export function renderCompare(a: CompareSide, b: CompareSide): string {
  const x = a.entry?.kind === 'file' ? (a.entry.bytes ?? new Uint8Array()) : new Uint8Array();
  const y = b.entry?.kind === 'file' ? (b.entry.bytes ?? new Uint8Array()) : new Uint8Array();
  const notes: string[] = [];
  for (const s of [a, b]) {
    const e = s.entry;
    if (e?.kind === 'file' && (e.bytes?.length ?? 0) < e.sizeBytes) notes.push(`only the first ${num(e.bytes?.length ?? 0)} of the ${num(e.sizeBytes)} bytes of the ${esc(s.name)} file were read`);
  }
  const { ranges } = compareSummary(a, b);
  const head = `<p class="sizes">${esc(a.name)}: ${describeEntry(a.entry)}; ${esc(b.name)}: ${describeEntry(b.entry)}</p>`;
  const rangeText = ranges.length
    ? `<p class="ranges">differing: ${ranges.slice(0, MAX_RANGES_LISTED).map((r) => `<span class="range">${formatRange(r)}</span>`).join(', ')}${ranges.length > MAX_RANGES_LISTED ? `, … (${num(ranges.length)} ranges in all)` : ''}</p>`
    : '';
  const noteText = notes.map((n) => `<p class="note">${n}</p>`).join('');
  if (a.entry?.kind !== 'file' && b.entry?.kind !== 'file') return head + noteText;
  if (isText(x) && isText(y) && x.length === (a.entry?.sizeBytes ?? 0) && y.length === (b.entry?.sizeBytes ?? 0)) return head + rangeText + noteText + textPanes(a.name, b.name, x, y);
  // A file present on one side only: its first rows, against nothing.
  const diffs = ranges.length ? ranges : [{ start: 0, end: Math.max(x.length, y.length) }];
  const { rows, shownRanges } = rowsToShow(diffs, Math.max(x.length, y.length));
  const more = ranges.length > shownRanges ? `<p class="note">${num(ranges.length - shownRanges)} more differing ranges not shown: compare the image files with hexdump -C</p>` : '';
  return head + rangeText + noteText + hexTable(a.name, b.name, x, y, rows) + more;
}

/** Rows of a file shown alone (a crash state's file): its first bytes. */
const SINGLE_ROWS = 16;

/** One file on its own: text when it is short ASCII, else the first rows of a hex dump. */
export function renderSingle(name: string, entry: ImageEntry): string {
  const x = entry.bytes ?? new Uint8Array();
  if (isText(x) && x.length === entry.sizeBytes) return `<div class="panes"><div class="pane"><div class="pane-head">${esc(name)}</div><pre class="text">${esc(String.fromCharCode(...x))}</pre></div></div>`;
  const rows: string[] = [];
  const count = Math.min(SINGLE_ROWS, Math.ceil(x.length / ROW_BYTES));
  for (let row = 0; row < count; row++) {
    const bytes = x.subarray(row * ROW_BYTES, row * ROW_BYTES + ROW_BYTES);
    rows.push(`<tr><td class="off">${hex8(row * ROW_BYTES)}</td><td class="hex">${hexOf(bytes)}</td><td class="asc">${asciiOf(bytes)}</td></tr>`);
  }
  const rest = entry.sizeBytes - count * ROW_BYTES;
  if (rest > 0) rows.push(`<tr class="gap"><td colspan="3">… ${num(rest)} more bytes (hexdump -C the image file) …</td></tr>`);
  return `<table class="hexdump"><thead><tr><th>offset</th><th colspan="2">${esc(name)}</th></tr></thead><tbody>${rows.join('')}</tbody></table>`;
}
