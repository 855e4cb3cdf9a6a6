// The pure artifact report on hand-made artifacts: timeline, cut, evidence, file diffs, escaping, bounds.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import type { TraceEntry } from '../../fusefs/protocol.js';
import type { Outcome } from '../harness/outcome.js';
import type { RunRecord, Violation } from '../harness/oracle.js';
import { renderArtifactReport, STDERR_SHOWN_CHARS } from './artifact-report.js';
import { DEFAULT_TARGET } from '../targets/index.js';
import { EXTERNAL_TARGET } from '../targets/external.js';
import { diffRanges, MAX_HEX_ROWS_PER_FILE } from './bytes-diff.js';
import { caseFacts, DEFAULT_TARGET_NAME, EXTERNAL_TARGET_NAME } from './header.js';
import { readReportArtifact } from './load.js';
import { buildEvidence, evidenceByRef } from './evidence.js';
import { preallocatedArtifact } from './testing.js';
import { MAX_FILE_LANES, MIN_WINDOW, timelineWindow, WINDOW_CONTEXT, ZOOM_MIN_REQUESTS } from './timeline.js';
import { cutView } from './trace-model.js';
import type { ImageFiles, ReportArtifact } from './types.js';

const FIXTURES = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures');
const HELLO: Outcome = { t: 'hello', protocol: 1, target: 'powercut-queue', replayBound: { ackBatchSize: 1, outOfOrderAcksDurable: false } };

let opCounter = 0;
function req(kind: TraceEntry['kind'], p: string, extra: Partial<TraceEntry> = {}): TraceEntry {
  return { op: ++opCounter, kind, path: p, state: 'applied', result: 0, ...extra };
}
function trace(...entries: TraceEntry[]): TraceEntry[] {
  opCounter = 0;
  return entries.map((e, i) => ({ ...e, op: i + 1 }));
}
function run(role: RunRecord['role'], outcomes: Outcome[], killed = true): RunRecord {
  return { role, outcomes, exitCode: killed ? null : 0, killed, hung: false, failedRequests: [] };
}
function image(files: Record<string, string | Uint8Array>): ImageFiles {
  return new Map(Object.entries(files).map(([name, v]) => {
    const bytes = typeof v === 'string' ? new TextEncoder().encode(v) : v;
    return [name, { kind: 'file' as const, sizeBytes: bytes.length, bytes }];
  }));
}

/**
 * A queue that claims seq 1 durable after writing its page but before any fsync of it (the bug
 * fsync-claims-late-writes), then fsyncs; the power is cut after request `cutAfter`.
 */
function lateClaimArtifact(over: Partial<ReportArtifact> = {}, cutAfter = 4): ReportArtifact {
  const t = trace(
    req('create', '/page.1'), // 1
    req('fsyncdir', '/'), // 2
    req('write', '/page.1', { offset: 0, length: 120 }), // 3: event id 1
    req('rename', '/cp.tmp', { path2: '/checkpoint' }), // 4
    req('fsync', '/page.1', { state: 'held', result: undefined }), // 5: the cut holds it
  );
  const workload: Outcome[] = [HELLO, { t: 'open', durableSeq: 0, durableFirstUnackedSeq: 1 }, { t: 'write-intent', id: 1, size: 100 }, { t: 'written', id: 1, seq: 1 }, { t: 'durable', durableSeq: 1, durableFirstUnackedSeq: 1 }];
  const violations: Violation[] = [{ check: 'at-least-once', seqs: [1], ids: [1], message: 'at-least-once: seqs 1 (event ids 1) were confirmed durable and never acked, but were not delivered after recovery' }];
  return {
    dir: '/tmp/artifacts/late-claim',
    case: { workload: { steps: [{ op: 'write', sizesBytes: [100] }] } as never, settings: {}, variant: 'fsync-claims-late-writes', cut: { atOp: cutAfter + 1, timing: 'before' }, policy: 'lose-unsynced', seed: 1 },
    runs: [run('workload', workload), run('drain', [HELLO, { t: 'open', durableSeq: 0, durableFirstUnackedSeq: 1 }, { t: 'drained', count: 0 }, { t: 'done' }], false)],
    cuts: [{ frozenAt: cutAfter + 1, trace: t, marks: [{ n: 1, afterOp: 0 }, { n: 2, afterOp: 2 }, { n: 3, afterOp: 2 }, { n: 4, afterOp: 3 }, { n: 5, afterOp: 3 }] }],
    violations,
    stderr: ['', ''],
    images: [{ live: image({ 'page.1': 'A'.repeat(120), checkpoint: 'cp' }), durable: image({}), afterCrash: image({}) }],
    ...over,
  };
}

const count = (html: string, re: RegExp) => (html.match(re) ?? []).length;

/** The header's facts as "label: value" lines, what a reader sees under "The case". */
const factLines = (a: ReportArtifact) => caseFacts(a).map((f) => `${f.label}: ${f.value}`);

describe('artifact report: what ran', () => {
  it('names an external driver by its command and folder, never a built-in target or "the correct queue" (committed artifact)', async () => {
    const a = await readReportArtifact(path.join(FIXTURES, 'external-driver-bounded-replay'));
    const command = 'python3 examples/python-queue/driver.py --no-dir-fsync-after-ack-rename';
    expect(a.case.driver?.command).toBe(command);
    const html = renderArtifactReport(a);
    expect(html).toContain(`<title>powercut: bounded-replay — driver &#39;${command}&#39;</title>`);
    expect(html).toContain(`<h1><span class="verdict fail">FAIL</span> bounded-replay — driver <code>${command}</code></h1>`);
    expect(html).toContain(`<dt>driver</dt><dd><code>${command}</code></dd><dt>run in</dt><dd><code>${a.case.driver!.cwd}</code></dd>`);
    // The name the driver gave itself, from its hello line: what the reader knows it as.
    expect(html).toContain('<dt>calls itself</dt><dd>python-queue (its hello line)</dd>');
    expect(html).not.toContain('powercut-queue');
    expect(html).not.toContain('correct queue');
    expect(html).not.toMatch(/variant/i);
    expect(html).not.toContain('<dt>target</dt>');
    // What the oracle judged by: the contract of its hello line (here the older form, the replay bound alone, and the defaults).
    expect(html).toContain('<dt>checked against</dt><dd>at-least-once; bounded replay 1 (out-of-order acks not durable until the gap closes); lost unconfirmed writes a suffix; seqs unique forever; delivered in seq order</dd>');
  });

  it('names a hand-made external driver the same way, whatever else the case holds', () => {
    const hello: Outcome = { ...HELLO, target: 'my-queue' } as Outcome;
    const a = lateClaimArtifact({ case: { ...lateClaimArtifact().case, variant: undefined, driver: { command: "./q --no-fsync 'a b'", cwd: '/src/q' } } });
    a.runs = a.runs.map((r) => ({ ...r, outcomes: r.outcomes.map((o) => (o.t === 'hello' ? hello : o)) }));
    expect(factLines(a).slice(0, 3)).toEqual(["driver: ./q --no-fsync 'a b'", 'run in: /src/q', 'calls itself: my-queue (its hello line)']);
    const html = renderArtifactReport(a);
    expect(html).toContain('— driver <code>./q --no-fsync &#39;a b&#39;</code></h1>');
    expect(html).not.toContain('powercut-queue');
    expect(html).not.toContain('correct queue');
    // A registered name recorded beside the driver is named as such (the driver is what ran).
    const both = lateClaimArtifact({ case: { ...a.case, target: 'leveldb' } });
    expect(factLines(both)).toContain('target: leveldb');
    expect(factLines(both)[0]).toBe("driver: ./q --no-fsync 'a b'");
    // An artifact that says "external" without its command says so rather than guess.
    const bare = lateClaimArtifact({ case: { ...lateClaimArtifact().case, variant: undefined, target: EXTERNAL_TARGET_NAME } });
    expect(factLines(bare)[0]).toBe('target: an external driver (--driver); its command is not recorded here');
    expect(renderArtifactReport(bare)).not.toContain('correct queue');
  });

  it('names a built-in target and its variant, or the correct queue', () => {
    expect(factLines(lateClaimArtifact()).slice(0, 2)).toEqual(['target: powercut-queue', "queue: known-bad variant 'fsync-claims-late-writes'"]);
    expect(renderArtifactReport(lateClaimArtifact())).toContain('— powercut-queue (variant fsync-claims-late-writes)</h1>');
    const correct = lateClaimArtifact({ case: { ...lateClaimArtifact().case, variant: undefined, target: 'leveldb' } });
    expect(factLines(correct).slice(0, 2)).toEqual(['target: leveldb', 'queue: the correct queue']);
    expect(renderArtifactReport(correct)).toContain('— leveldb</h1>');
  });

  it('keeps its copies of the target names equal to src/targets', () => {
    expect(DEFAULT_TARGET_NAME).toBe(DEFAULT_TARGET);
    expect(EXTERNAL_TARGET_NAME).toBe(EXTERNAL_TARGET);
  });
});

describe('artifact report: timeline', () => {
  it('has one lane per file and one for directory entries, every request drawn, persistence points and lines placed', () => {
    const html = renderArtifactReport(lateClaimArtifact());
    expect(html).toContain('>directory entries<');
    for (const f of ['/page.1', '/cp.tmp', '/checkpoint']) expect(html).toContain(`">${f}</text>`);
    expect(html).toContain('program: run 0 (workload)');
    for (let op = 1; op <= 5; op++) expect(html).toContain(`data-ref="c0-op${op}" id="svg-c0-op${op}"`);
    expect(html).toMatch(/<g class="req k-write[^"]*" data-ref="c0-op3"/);
    expect(html).toMatch(/<g class="req k-rename[^"]*" data-ref="c0-op4"/);
    expect(html).toMatch(/<g class="req k-fsyncdir[^"]*" data-ref="c0-op2"/);
    // Persistence points: the directory fsync only; the held fsync never completed.
    expect(count(html, /class="persist-tick"/g)).toBe(1);
    // Every marked line of the cut run is a marker in the program lane.
    for (let n = 1; n <= 5; n++) expect(html).toContain(`data-ref="r0-l${n}" id="svg-r0-l${n}"`);
    // The final drain has no cut: its lines are listed, not drawn.
    expect(html).not.toContain('id="svg-r1-l1"');
    expect(html).toContain('id="r1-l1"');
  });

  it('is self-contained: one inline script, no external URL', () => {
    const html = renderArtifactReport(lateClaimArtifact());
    expect(count(html, /<script>/g)).toBe(1);
    expect(html).not.toMatch(/(src|href)="(https?:)?\/\//);
    expect(html).toContain("default-src 'none'");
  });

  it('marks the power cut before the crash-point request, which is not applied', () => {
    const html = renderArtifactReport(lateClaimArtifact());
    expect(html).toContain('power cut before request 5 (it is not applied)');
    expect(html).toMatch(/<g class="req k-fsync[^"]*\bheld\b[^"]*\bnot-applied\b[^"]*" data-ref="c0-op5"/);
    // The cut line sits right after request 4, ahead of request 5 in the log.
    const log = html.slice(html.indexOf('<table class="log-table"'));
    expect(log.indexOf('id="cut-0"')).toBeGreaterThan(log.indexOf('id="c0-op4"'));
    expect(log.indexOf('id="cut-0"')).toBeLessThan(log.indexOf('id="c0-op5"'));
  });

  it('marks a cut after the crash-point request as applied, and a crash state after request afterOp with the recorded rest faded', () => {
    const after = lateClaimArtifact();
    after.case.cut = { atOp: 5, timing: 'after' };
    expect(renderArtifactReport(after)).toContain('power cut after request 5 (applied, never answered)');

    const state = lateClaimArtifact();
    state.case = { ...state.case, cut: undefined, state: { afterOp: 3, policy: 'lose-unsynced' } };
    state.cuts[0] = { ...state.cuts[0], frozenAt: 4, trace: state.cuts[0].trace.map((e) => ({ ...e, state: 'applied', result: 0 })) };
    state.images = [{ afterCrash: image({ 'page.1': '' }) }];
    const html = renderArtifactReport(state);
    expect(html).toContain('power cut after request 3 (crash state of the recorded run)');
    expect(html).toMatch(/<g class="req k-rename[^"]*\bbeyond\b[^"]*" data-ref="c0-op4"/);
    expect(html).toContain('class="beyond-shade"');
    // Only the crash state's image: set against the sizes the trace says the program saw.
    expect(html).toContain('the program saw 120 bytes; the crash state has 0');
  });

  it('places the cut line in the SVG at the boundary: right of request 4, left of request 5', () => {
    const a = lateClaimArtifact();
    const view = cutView(a.case, a.cuts[0], 0);
    expect(view.boundary).toBe(4);
    expect(view.applied(5)).toBe(false);
    const html = renderArtifactReport(a);
    const lineX = Number(/<g class="cut" id="svg-cut-0"><line x1="([\d.]+)"/.exec(html)![1]);
    // The horizontal extent of a request's shape (its halo and the ticks on other lanes left out).
    const extent = (op: number) => {
      const g = new RegExp(`<g class="req[^"]*" data-ref="c0-op${op}" id="svg-c0-op${op}">([\\s\\S]*?)</g>`).exec(html)![1];
      const rects = [...g.matchAll(/<rect x="([-\d.]+)" y="[-\d.]+" width="([\d.]+)"/g)].map((m) => ({ left: Number(m[1]), right: Number(m[1]) + Number(m[2]) }));
      expect(rects.length).toBeGreaterThan(0);
      return { left: Math.min(...rects.map((r) => r.left)), right: Math.max(...rects.map((r) => r.right)) };
    };
    expect(lineX).toBeGreaterThanOrEqual(extent(4).right);
    expect(lineX).toBeLessThanOrEqual(extent(5).left);
  });
});

/** The chart shown by default: the zoomed window when there is one, else the only chart. */
function defaultChart(html: string): string {
  const start = html.indexOf('<div class="timeline tl-window"') >= 0 ? html.indexOf('<div class="timeline tl-window"') : html.indexOf('<div class="timeline"');
  return html.slice(start, html.indexOf('</svg></div>\n</div>', start));
}
/** Left and right of a request's or line's shapes in a chart (its halo included). */
function shapeExtent(chart: string, ref: string): { left: number; right: number } {
  const g = new RegExp(`<g class="[^"]*" data-ref="${ref}"[^>]*>([\\s\\S]*?)</g>`).exec(chart);
  expect(g, `${ref} is drawn in the chart`).not.toBeNull();
  const rects = [...g![1].matchAll(/<rect (?:class="[^"]*" )?x="([-\d.]+)" y="[-\d.]+" width="([\d.]+)"/g)].map((m) => ({ left: Number(m[1]), right: Number(m[1]) + Number(m[2]) }));
  return { left: Math.min(...rects.map((r) => r.left)), right: Math.max(...rects.map((r) => r.right)) };
}

describe('artifact report: the timeline zoomed to the cut and the evidence', () => {
  it('shows 500 pre-allocation requests far from the cut only behind a control: the default window holds the cut and every piece of evidence', () => {
    const a = preallocatedArtifact();
    const html = renderArtifactReport(a);
    const chart = defaultChart(html);
    expect(chart).toContain('class="timeline tl-window" data-cut="0" data-from="447" data-to="506"');
    const width = Number(/<svg class="tl-chart" width="(\d+)"/.exec(chart)![1]);
    // Narrow enough to sit beside the lane labels on a 1280 px screen, unscrolled (and so on paper).
    expect(width).toBeLessThanOrEqual(1080 - 56);
    // The power cut, inside the window.
    const cutX = Number(/<g class="cut" id="svg-cut-0"><line x1="([\d.]+)"/.exec(chart)![1]);
    expect(cutX).toBeGreaterThan(0);
    expect(cutX).toBeLessThan(width);
    // Every piece of evidence of this cut: the requests and the lines, drawn inside the window.
    const refs = [...new Set(buildEvidence(a, [cutView(a.case, a.cuts[0], 0)]).flat().map((e) => (e.ref.kind === 'op' ? `c${e.ref.cut}-op${e.ref.op}` : `r${e.ref.run}-l${e.ref.line}`)))].filter((r) => r.startsWith('c0-') || r.startsWith('r0-'));
    expect(refs).toEqual(expect.arrayContaining(['c0-op504', 'c0-op503', 'r0-l4', 'r0-l5']));
    for (const ref of refs) {
      const { left, right } = shapeExtent(chart, ref);
      expect(left, ref).toBeGreaterThanOrEqual(0);
      expect(right, ref).toBeLessThanOrEqual(cutX + 1);
      expect(chart).toMatch(new RegExp(`<g class="[^"]*\\bhl\\b[^"]*" data-ref="${ref}" id="svg-${ref}"`));
    }
    // The pre-allocation is not in the window; it is in the whole run's chart, behind the control.
    expect(chart).not.toContain('data-ref="c0-op1"');
    expect(chart).not.toContain('>/pre.0</text>');
    const whole = html.slice(html.indexOf('<details class="tl-whole">'), html.indexOf('</details>', html.indexOf('<details class="tl-whole">')));
    expect(whole).toContain('<summary><span class="when-closed">Show the whole run (requests 1–506)</span>');
    for (const op of [1, 250, 500, 504]) expect(whole).toContain(`data-ref="c0-op${op}"`);
    // The note says what is left out.
    expect(html).toContain('<strong>Zoomed to requests 447–506 of 506</strong>: the power cut and the evidence, and the requests around them. Left out: requests 1–446 (429 writes, 9 creates, 8 fsyncs); 1 of the program&#39;s 5 lines; 8 files touched only there (no lane here).');
    // Ids stay unique: only the default chart's shapes have them.
    const ids = [...html.matchAll(/ id="([^"]+)"/g)].map((m) => m[1]);
    expect(ids.length).toBeGreaterThan(0);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('chooses the window by its rule: the cut and the evidence, context on each side, a minimum width, and only when it leaves out a quarter of a long run', () => {
    const a = preallocatedArtifact();
    const view = cutView(a.case, a.cuts[0], 0);
    const ev = evidenceByRef(buildEvidence(a, [view]));
    // Points: 503 (the directory fsync before the claim) to 506 (the request after the cut): 493–516 with context, then widened to 60 within the run's 506.
    expect(timelineWindow(view, a.runs[0], 0, ev)).toEqual({ from: 506 - MIN_WINDOW + 1, to: 506 });
    expect(WINDOW_CONTEXT).toBe(10);
    // Evidence far from the cut widens the window to hold it: a claim after request 300.
    const far = preallocatedArtifact();
    far.cuts[0].marks = far.cuts[0].marks!.map((m) => (m.n === 5 ? { ...m, afterOp: 300 } : m));
    const farView = cutView(far.case, far.cuts[0], 0);
    const farWin = timelineWindow(farView, far.runs[0], 0, evidenceByRef(buildEvidence(far, [farView])));
    expect(farWin).toBeDefined();
    expect(farWin!.from).toBe(300 - WINDOW_CONTEXT);
    expect(farWin!.to).toBe(506);
    // Evidence at both ends of the run: the window would leave out less than a quarter, so the whole run is shown.
    far.cuts[0].marks = far.cuts[0].marks!.map((m) => (m.n === 5 ? { ...m, afterOp: 20 } : m));
    const wideView = cutView(far.case, far.cuts[0], 0);
    expect(timelineWindow(wideView, far.runs[0], 0, evidenceByRef(buildEvidence(far, [wideView])))).toBeUndefined();
    // A short run is always drawn whole, with its ids, no note and no control.
    const short = preallocatedArtifact(2); // 106 requests
    expect(cutView(short.case, short.cuts[0], 0).maxOp).toBeLessThanOrEqual(ZOOM_MIN_REQUESTS);
    for (const html of [renderArtifactReport(short), renderArtifactReport(lateClaimArtifact())]) {
      expect(html).not.toContain('<details class="tl-whole">');
      expect(html).not.toContain('<p class="tl-zoom-note">');
      expect(html).toContain('id="svg-cut-0"');
    }
  });

  it('names the changes unsynced at the cut that fall outside the window', () => {
    const a = preallocatedArtifact();
    // The first pre-allocated file is never fsynced: its writes are still unsynced at the cut, far left of the window.
    a.cuts[0].trace = a.cuts[0].trace.map((e) => (e.op === 50 ? { ...e, kind: 'write', offset: 48 * 4096, length: 4096 } : e));
    const html = renderArtifactReport(a);
    expect(html).toMatch(/Unsynced at the cut but outside the window: 49 requests, <a href="#c0-op46">46<\/a>, <a href="#c0-op47">47<\/a>, <a href="#c0-op48">48<\/a>, <a href="#c0-op49">49<\/a>, <a href="#c0-op50">50<\/a> \(the last few\)\./);
  });
});

describe('artifact report: what the drivers printed on stderr', () => {
  it('shows each run that printed something, bounded to its end, and nothing when none did', () => {
    expect(renderArtifactReport(lateClaimArtifact())).not.toContain('id="stderr"');
    const log = `${'x'.repeat(STDERR_SHOWN_CHARS)}\n[1] nats-server: stream not found <here>`;
    const html = renderArtifactReport(lateClaimArtifact({ stderr: ['', log] }));
    expect(html).toContain('<h2>What the drivers printed on stderr</h2><h3>Run 1: drain</h3>');
    expect(html).toContain(`the last ${STDERR_SHOWN_CHARS} of ${log.length} characters; all of it is in stderr/run-1.txt`);
    expect(html).toContain('stream not found &lt;here&gt;');
  });
});

describe('artifact report: evidence of the violated check', () => {
  it('highlights the claim, the unsynced write it relied on, and says what the cut did', () => {
    const html = renderArtifactReport(lateClaimArtifact());
    // The durable line claimed seq 1 while its page write was still unsynced.
    expect(html).toMatch(/<g class="line t-durable hl role-claim" data-ref="r0-l5"/);
    expect(html).toMatch(/<g class="req k-write[^"]*\bhl\b[^"]*\brole-unsynced\b[^"]*" data-ref="c0-op3"/);
    expect(html).toContain('not persisted yet when line 5 claimed it durable');
    // The write's fate at the cut, in the log.
    expect(html).toMatch(/id="c0-op3"[^]*?unsynced at the cut: <strong class="fate-lost">lost<\/strong>/);
    // The oracle's message, with numbered evidence linking to the log rows.
    expect(html).toContain('were confirmed durable and never acked');
    expect(html).toMatch(/<a href="#r0-l5">line 5 of run 0 \(durable: durableSeq 1, first unacked 1\): claimed seq 1 \(event id 1\) durable<\/a>/);
    expect(html).toContain('<a href="#c0-op3">');
  });

  it('names the fsync that should have made the event durable when the claim followed it', () => {
    const a = lateClaimArtifact({}, 5);
    // fsync completes (request 5), then the claim; the power goes after a later rename.
    a.cuts[0].trace = trace(
      req('create', '/page.1'),
      req('fsyncdir', '/'),
      req('write', '/page.1', { offset: 0, length: 120 }),
      req('rename', '/cp.tmp', { path2: '/checkpoint' }),
      req('fsync', '/page.1'),
      req('unlink', '/page.1'),
    );
    a.cuts[0].frozenAt = 6;
    a.case.cut = { atOp: 6, timing: 'after' };
    a.cuts[0].marks = [{ n: 1, afterOp: 0 }, { n: 2, afterOp: 2 }, { n: 3, afterOp: 2 }, { n: 4, afterOp: 3 }, { n: 5, afterOp: 5 }];
    const html = renderArtifactReport(a);
    expect(html).toMatch(/<g class="req k-fsync[^"]*\brole-persist\b[^"]*" data-ref="c0-op5"/);
    expect(html).toContain('request 5 fsync /page.1: the last persistence request of /page.1 before line 5 claimed seq 1 durable');
    // The later unlink removed the file that held the event.
    expect(html).toMatch(/<g class="req k-unlink[^"]*\brole-removed\b[^"]*" data-ref="c0-op6"/);
  });

  it('opens with the cause, its fix, proof and reach, and marks the lost change instead of an fsync that completed', () => {
    // The fsync of the file completed (request 4); the file's directory entry (create, request 1) was never made durable.
    const a = lateClaimArtifact({}, 5);
    a.cuts[0].trace = trace(
      req('create', '/page.2'),
      req('write', '/page.2', { offset: 0, length: 120 }),
      req('rename', '/cp.tmp', { path2: '/checkpoint' }),
      req('fsync', '/page.2'),
      req('write', '/checkpoint', { offset: 0, length: 8 }),
    );
    a.cuts[0].frozenAt = 6;
    a.case.cut = { atOp: 6, timing: 'after' };
    a.cuts[0].marks = [{ n: 1, afterOp: 0 }, { n: 2, afterOp: 0 }, { n: 3, afterOp: 1 }, { n: 4, afterOp: 2 }, { n: 5, afterOp: 4 }];
    a.cause = {
      kind: 'missing-dir-fsync', key: 'missing-dir-fsync / create /page.*', title: 'missing fsync of directory / after create of /page.*',
      fix: 'fsync the directory / after create /page.2 (request 1), before line 5 of run 0 claimed seq 1 durable',
      unit: { kind: 'dir', ino: 1, path: '/' }, change: { seq: 1, op: 1, kind: 'create', entries: [{ name: 'page.2', target: 'file' }] },
      step: { kind: 'fsync-after', afterOp: 1, ino: 1, path: '/', dir: true },
      evidence: ['with the directory / durable the state recovers and passes'],
      search: { probes: 3, ms: 120, bound: { maxProbes: 100, maxMs: 20_000 }, boundReached: false },
      proof: { step: 'an fsync of / after request 1', failing: 3, cured: 3, curesOwnState: true, broken: 0, exposed: [], states: 9, capped: false, stillFailing: [], ms: 400 },
      reach: { journaled: true, complete: true, words: 'also under the journaled model, as on ext4', why: 'a journaled state shows it', statesChecked: 4, ms: 50 },
    };
    const html = renderArtifactReport(a);
    expect(html.indexOf('<section id="cause"><h2>Why it failed</h2>')).toBeGreaterThan(0);
    expect(html.indexOf('id="cause"')).toBeLessThan(html.indexOf('<section id="case">'));
    expect(html).toContain('<dt>cause</dt><dd>missing fsync of directory / after create of /page.*</dd>');
    expect(html).toContain('<dt>fix</dt><dd>fsync the directory / after create /page.2 (request 1), before line 5 of run 0 claimed seq 1 durable</dd>');
    expect(html).toContain('<dt>proof</dt><dd>with an fsync of / after request 1: 3 of the 3 failing states of the run pass on the same cuts; no state that passed fails');
    expect(html).toContain('<dt>reach</dt><dd>also under the journaled model, as on ext4: a journaled state shows it</dd>');
    expect(html).toMatch(/<g class="req k-create[^"]*\brole-cause\b[^"]*" data-ref="c0-op1"/);
    expect(html).toContain('request 1 create /page.2: create /page.2 (request 1), lost at the cut; the fix: fsync the directory /');
    expect(html).not.toMatch(/role-persist\b[^"]*" data-ref/);
    expect(html).not.toContain('should have made it durable</span>');
  });

  it('highlights failed requests for fail-loudly and the error line for liveness', () => {
    const a = lateClaimArtifact();
    a.cuts[0].trace[2] = { ...a.cuts[0].trace[2], result: -5 };
    a.violations = [{ check: 'fail-loudly', message: 'fail-loudly: the filesystem failed request 3 but the queue reported no error' }];
    expect(renderArtifactReport(a)).toMatch(/<g class="req k-write[^"]*\bfailed\b[^"]*\brole-failed\b[^"]*" data-ref="c0-op3"/);

    const b = lateClaimArtifact();
    b.runs[1] = run('drain', [HELLO, { t: 'error', where: 'open', message: 'queue damaged where synced: /tmp/x/mnt/page.1 at offset 0' }], false);
    b.violations = [{ check: 'liveness', message: 'liveness: the queue did not open after the power cut: queue damaged where synced: /tmp/x/mnt/page.1 at offset 0' }];
    const html = renderArtifactReport(b);
    expect(html).toMatch(/class="line-row t-error hl" id="r1-l2"/);
    // The file the error names: its requests unsynced at the cut are evidence.
    expect(html).toMatch(/data-ref="c0-op3"/);
    expect(html).toMatch(/<g class="req k-write[^"]*\brole-cut\b[^"]*" data-ref="c0-op3"/);
  });

  it('shows a harness error as such, not as a verdict', () => {
    const a = lateClaimArtifact({ harnessError: 'harness error (not a verdict on the queue):\ndaemon died', violations: [], runs: [], cuts: [], images: [] });
    const html = renderArtifactReport(a);
    expect(html).toContain('Harness error');
    expect(html).toContain('daemon died');
    expect(html).not.toContain('class="tl-chart"');
  });
});

describe('artifact report: files', () => {
  it('finds differing byte ranges, merging close ones, and the tail only one side has', () => {
    const a = new Uint8Array(64);
    const b = new Uint8Array(64);
    expect(diffRanges(a, b)).toEqual([]);
    b[10] = 1;
    b[12] = 1; // 1 equal byte apart: one range
    b[40] = 1;
    expect(diffRanges(a, b)).toEqual([{ start: 10, end: 13 }, { start: 40, end: 41 }]);
    expect(diffRanges(a, new Uint8Array(100))).toEqual([{ start: 64, end: 100 }]);
    expect(diffRanges(new Uint8Array(0), new Uint8Array(3))).toEqual([{ start: 0, end: 3 }]);
  });

  it('shows live and durable side by side with the differing ranges marked', () => {
    const live = new Uint8Array(64).fill(0xab);
    const durable = new Uint8Array(48).fill(0xab);
    durable[5] = 0;
    const a = lateClaimArtifact({ images: [{ live: image({ 'page.1': live, same: 'x' }), durable: image({ 'page.1': durable, same: 'x' }) }] });
    const html = renderArtifactReport(a);
    expect(html).toContain('differ: byte 5, bytes 48–63 (16)');
    expect(html).toMatch(/<table class="hexdump">/);
    expect(html).toContain('<mark>ab </mark>');
    expect(html).toContain('<td class="status-same">same</td>');
    // Small ASCII files compare as text.
    const text = renderArtifactReport(lateClaimArtifact({ images: [{ live: image({ lock: '0000001234\n' }), durable: image({ lock: '0000001299\n' }) }] }));
    expect(text).toContain('<pre class="text">00000012<mark>34</mark>');
  });

  it('bounds big files and many differences', () => {
    const size = 4 * 1024 * 1024;
    const live = new Uint8Array(size);
    const durable = new Uint8Array(size);
    for (let i = 0; i < size; i += 4096) live[i] = 1;
    const a = lateClaimArtifact({ images: [{ live: new Map([['big', { kind: 'file', sizeBytes: size * 2, bytes: live }]]), durable: new Map([['big', { kind: 'file', sizeBytes: size, bytes: durable }]]) }] });
    const html = renderArtifactReport(a);
    const table = html.slice(html.indexOf('<table class="hexdump">'), html.indexOf('</table>', html.indexOf('<table class="hexdump">')));
    expect(count(table, /<td class="off">/g)).toBeLessThanOrEqual(MAX_HEX_ROWS_PER_FILE);
    expect(html).toMatch(/more differing ranges not shown/);
    expect(html).toContain('only the first 4,194,304 of the 8,388,608 bytes of the live (what the program saw) file were read');
    expect(html.length).toBeLessThan(300_000);
  });
});

describe('artifact report: hostile input', () => {
  it('escapes file names, contents, messages and driver output', () => {
    const evil = `<img src=x onerror=alert(1)>"'&.bin`;
    const a = lateClaimArtifact();
    a.cuts[0].trace = a.cuts[0].trace.map((e) => (e.path === '/page.1' ? { ...e, path: `/${evil}` } : e));
    const live = image({ [evil]: '</pre><script>alert(2)</script>' });
    live.set('__proto__', { kind: 'file', sizeBytes: 1, bytes: new Uint8Array([0x70]) });
    a.images = [{ live, durable: image({ [evil]: 'old' }) }];
    a.violations = [{ check: 'liveness', message: 'liveness: <script>alert(3)</script>' }];
    a.runs[1] = run('drain', [HELLO, { t: 'error', where: '<b>open</b>', message: `</td><script>alert(4)</script> ${evil}` }], false);
    const html = renderArtifactReport(a);
    expect(count(html, /<script>/g)).toBe(1);
    expect(html).not.toContain('<img');
    expect(html).not.toContain('<b>open');
    expect(html).toContain('&lt;img src=x onerror=alert(1)&gt;&quot;&#39;&amp;.bin');
    expect(html).toContain('&lt;/pre&gt;&lt;script&gt;alert(2)&lt;/script&gt;');
    // A file named __proto__ is just a file.
    expect(html).toContain('<code>__proto__</code>');
  });
});

describe('artifact report: scale', () => {
  it('renders a trace of thousands of requests with bounded lanes, a folded log and a bounded page', () => {
    const entries: TraceEntry[] = [];
    for (let i = 0; i < 3000; i++) {
      const file = `/page.${Math.floor(i / 30)}`;
      entries.push(req(i % 30 === 0 ? 'create' : i % 5 === 0 ? 'fsync' : 'write', file, { offset: i * 10, length: 10 }));
    }
    const a = lateClaimArtifact();
    a.cuts[0] = { frozenAt: 2999, trace: trace(...entries), marks: Array.from({ length: 5 }, (_, i) => ({ n: i + 1, afterOp: i * 500 })) };
    a.case.cut = { atOp: 2999, timing: 'after' };
    const html = renderArtifactReport(a);
    // The whole run (behind the zoom's control): the files shown, then one lane for the rest.
    const whole = html.slice(html.indexOf('<details class="tl-whole">'), html.indexOf('</details>', html.indexOf('<details class="tl-whole">')));
    expect(count(whole, /class="lane-label"/g)).toBe(MAX_FILE_LANES + 1);
    expect(whole).toContain('40 more files');
    expect(count(defaultChart(html), /class="lane-label"/g)).toBeLessThanOrEqual(MAX_FILE_LANES + 1);
    expect(html).toMatch(/<details class="log"><summary>/); // folded: 3,000 requests are more rows than the log shows open
    expect(html.length).toBeLessThan(5_000_000);
  });
});
