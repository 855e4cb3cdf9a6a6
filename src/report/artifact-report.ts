// The HTML report of one failure artifact (pure: artifact data in, one self-contained page out).
// What it shows, top to bottom: the case and the violated checks with their evidence; per cut, the
// timeline (requests, persistence points, the program's confirmations, the power cut) and the log
// of requests and lines; the files as the program saw them and as they were on disk; the runs
// that had no cut (the final drain).
import type { RunRecord } from '../harness/oracle.js';
import { CSS, SCRIPT } from './assets.js';
import { compareSummary, formatRange, renderCompare, sameEntry, renderSingle } from './bytes-diff.js';
import { clusterCut, clusterCutView, namespacedCut } from './cluster-view.js';
import { buildEvidence, describeLine, evidenceByRef, lineClass, refKey, ROLE_NAMES, type Evidence } from './evidence.js';
import { reportHeader } from './header.js';
import { esc, list, num, page, plural } from './html.js';
import { renderTimeline } from './timeline.js';
import { cutView, type CutView } from './trace-model.js';
import type { CutImages, ImageEntry, ImageFiles, ReportArtifact } from './types.js';

/** Lines of a run without a timeline listed in full up to this many; beyond, the first and last ones. */
const MAX_RUN_LINES = 400;
/** Files compared byte by byte per cut; more are only listed. */
const MAX_FILES_COMPARED = 40;
/** Unsynced changes at the cut named in the summary above a timeline. */
const MAX_DROPPED_LISTED = 12;

function evidenceList(items: Evidence[], hasRow: (key: string) => boolean): string {
  if (items.length === 0) return '';
  return `<ol class="evidence">${items
    .map((e) => {
      const key = refKey(e.ref);
      const text = esc(e.text);
      return `<li class="role-${e.role}"><span class="badge-inline">${e.n}</span> <span class="role role-${e.role}">${esc(ROLE_NAMES[e.role])}</span> ${hasRow(key) ? `<a href="#${key}">${text}</a>` : text}</li>`;
    })
    .join('')}</ol>`;
}

function violationsSection(a: ReportArtifact, evidence: Evidence[][], hasRow: (key: string) => boolean): string {
  if (a.harnessError !== undefined) {
    return `<h2>Harness error</h2><p>The tool itself failed on this case: this is not a verdict on the queue.</p><div class="harness-error">${esc(a.harnessError.trim())}</div>`;
  }
  if (a.violations.length === 0) return '<h2>Violations</h2><p>none recorded</p>';
  const blocks = a.violations.map((v, i) => `<div class="violation" id="violation-${i + 1}"><h3>${esc(v.check)}${v.hang ? ' (a hang)' : ''}</h3><p class="msg">${esc(v.message)}</p>${
    v.seqs?.length ? `<p class="note">seqs ${esc(list(v.seqs))}${v.ids?.length ? `; event ids ${esc(list(v.ids))}` : ''}</p>` : ''
  }${evidenceList(evidence[i] ?? [], hasRow)}</div>`);
  return `<h2>Violations (${a.violations.length})</h2>${blocks.join('')}`;
}

const LEGEND = `<div class="legend">
<span style="--c:#3b82f6">write</span><span style="--c:#f59e0b">truncate</span><span style="--c:#16a34a">fsync</span><span style="--c:#86efac">fdatasync</span><span style="--c:#166534">directory fsync</span>
<span style="--c:#0f766e">create / link</span><span style="--c:#7c3aed">rename</span><span style="--c:#be123c">unlink</span><span style="--c:#9ca3af">setattr</span>
<span style="--c:#fff;--b:1.6px dashed #dc2626">unsynced at the cut: lost</span><span style="--c:#fff;--b:1.6px dashed #ea580c">may be lost (torn)</span><span style="--c:#fff;--b:1.4px dotted #16a34a">unsynced but kept</span>
<span style="--c:#fecaca;--b:2px solid #dc2626">failed</span><span style="--c:#fde047">evidence (numbered)</span><span style="--c:#dc2626">power cut</span>
<span style="--c:#16a34a">line: durable / waited</span><span style="--c:#2563eb">line: written</span><span style="--c:#9333ea">line: acked</span><span style="--c:#0891b2">line: delivered</span><span style="--c:#fff;--b:1px solid #6b7280">line: intent</span>
</div>`;

function droppedSummary(view: CutView): string {
  const changes = [...view.atCut.values()];
  if (changes.length === 0) return '<p class="cut-info">Every change was persisted when the power went.</p>';
  const lost = changes.filter((c) => c.fate === 'lost').length;
  const maybe = changes.filter((c) => c.fate === 'maybe').length;
  const kept = changes.filter((c) => c.fate === 'kept').length;
  // The ones nearest the cut matter most: list the last few.
  const named = changes.slice(-MAX_DROPPED_LISTED).map((c) => {
    const e = view.byOp.get(c.op);
    return `<a href="#${refKey({ kind: 'op', cut: view.index, op: c.op })}">${c.op}</a>${e ? ` ${esc(e.kind)} <code>${esc(e.path)}</code>` : ''}`;
  });
  return `<p class="cut-info">Unsynced at the cut: ${plural(changes.length, 'request')} (${[lost ? `${num(lost)} lost` : '', maybe ? `${num(maybe)} may be lost or torn` : '', kept ? `${num(kept)} kept` : ''].filter(Boolean).join(', ')}): ${changes.length > MAX_DROPPED_LISTED ? '…; ' : ''}${named.join('; ')}</p>`;
}

function sortedNames(...images: (ImageFiles | undefined)[]): string[] {
  const names = new Set<string>();
  for (const im of images) for (const k of im?.keys() ?? []) names.add(k);
  return [...names].sort((p, q) => (p < q ? -1 : p > q ? 1 : 0));
}

const sizeOf = (e: ImageEntry | undefined) => (e === undefined ? '—' : e.kind === 'dir' ? 'dir' : e.kind === 'other' ? 'special' : num(e.sizeBytes));

function statusText(s: ReturnType<typeof compareSummary>, aName: string, bName: string): string {
  switch (s.status) {
    case 'same': return 'same';
    case 'only-a': return `only ${aName}`;
    case 'only-b': return `only ${bName}`;
    case 'differ': return s.ranges.length ? `differ: ${s.ranges.slice(0, 3).map(formatRange).join(', ')}${s.ranges.length > 3 ? `, … (${num(s.ranges.length)} ranges)` : ''}` : 'differ';
  }
}

function filesAtCut(view: CutView, images: CutImages | undefined, k: number): string {
  if (!images || (!images.live && !images.durable && !images.afterCrash)) return '<p class="note">No images of the filesystem were captured at this cut.</p>';
  const out: string[] = [];
  if (images.live || images.durable) {
    const names = sortedNames(images.live, images.durable, images.afterCrash);
    const rows: string[] = [];
    const compared: string[] = [];
    let differing = 0;
    for (const name of names) {
      const live = images.live?.get(name);
      const durable = images.durable?.get(name);
      const after = images.afterCrash?.get(name);
      const s = compareSummary({ name: 'live', entry: live }, { name: 'durable', entry: durable });
      const afterNote = images.afterCrash && !sameEntry(after, durable) ? ` (after the crash: ${after === undefined ? 'absent' : sizeOf(after) + ' bytes'})` : '';
      rows.push(`<tr><td><code>${esc(name)}</code></td><td class="num">${sizeOf(live)}</td><td class="num">${sizeOf(durable)}</td><td class="num">${sizeOf(after)}</td><td class="status-${s.status}">${esc(statusText(s, 'live', 'durable'))}${esc(afterNote)}</td></tr>`);
      if (s.status !== 'same' && (live?.kind === 'file' || durable?.kind === 'file')) {
        differing++;
        if (compared.length < MAX_FILES_COMPARED) {
          compared.push(`<div class="file"><h4>${esc(name)}</h4>${renderCompare({ name: 'live (what the program saw)', entry: live }, { name: 'durable (on disk)', entry: durable })}</div>`);
        }
      }
    }
    out.push(`<table class="files"><thead><tr><th>file</th><th class="num">live bytes</th><th class="num">durable bytes</th><th class="num">after the crash</th><th>live vs durable</th></tr></thead><tbody>${rows.join('')}</tbody></table>`);
    if (differing) out.push(`<h3>Live vs durable at cut ${k + 1}: ${plural(differing, 'file')} differ</h3>${compared.join('')}${differing > compared.length ? `<p class="note">${num(differing - compared.length)} more differing files not shown</p>` : ''}`);
    else out.push(`<p>Live and durable images are the same: nothing unsynced at this cut.</p>`);
    // Torn cuts keep part of what was unsynced: what recovery started from is then neither image.
    if (images.afterCrash && images.durable) {
      const torn = sortedNames(images.durable, images.afterCrash).filter((n) => !sameEntry(images.durable!.get(n), images.afterCrash!.get(n)) && (images.durable!.get(n)?.kind === 'file' || images.afterCrash!.get(n)?.kind === 'file'));
      if (torn.length) {
        out.push(`<h3>Durable vs after the crash: what the policy kept of the unsynced changes (${plural(torn.length, 'file')})</h3>`);
        for (const name of torn.slice(0, MAX_FILES_COMPARED)) out.push(`<div class="file"><h4>${esc(name)}</h4>${renderCompare({ name: 'durable', entry: images.durable.get(name) }, { name: 'after the crash (recovery read this)', entry: images.afterCrash.get(name) })}</div>`);
      }
    }
    return out.join('');
  }
  // A crash state keeps only the state image: set it against the sizes the program saw, from the trace.
  const state = images.afterCrash!;
  const names = [...new Set([...state.keys(), ...[...view.liveSizes.keys(), ...view.removedNames.keys()].map((n) => n.replace(/^\//, ''))])].sort((p, q) => (p < q ? -1 : p > q ? 1 : 0));
  const rows: string[] = [];
  const dumps: string[] = [];
  for (const name of names) {
    const entry = state.get(name);
    const sawKnown = view.liveSizes.has('/' + name);
    const saw = view.liveSizes.get('/' + name);
    let status: string;
    let cls = 'same';
    const removedBy = view.removedNames.get('/' + name);
    if (entry?.kind === 'dir') status = 'directory';
    else if (!sawKnown && removedBy !== undefined) {
      status = entry === undefined ? `removed by request ${removedBy}, and gone from the crash state` : `removed by request ${removedBy}, yet in the crash state (the removal was not persisted)`;
      cls = entry === undefined ? 'same' : 'differ';
    } else if (!sawKnown) status = 'in the crash state only (the program never named it)';
    else if (entry === undefined) {
      status = 'missing from the crash state';
      cls = 'missing';
    } else if (saw === undefined) status = 'present (its size before the trace is unknown)';
    else if (saw === entry.sizeBytes) status = 'same size';
    else {
      status = `the program saw ${num(saw)} bytes; the crash state has ${num(entry.sizeBytes)}`;
      cls = 'differ';
    }
    rows.push(`<tr><td><code>${esc(name)}</code></td><td class="num">${sawKnown ? (saw === undefined ? '?' : num(saw)) : '—'}</td><td class="num">${sizeOf(entry)}</td><td class="status-${cls}">${esc(status)}</td></tr>`);
    if (entry?.kind === 'file' && dumps.length < MAX_FILES_COMPARED) dumps.push(`<details class="file"${cls !== 'same' ? ' open' : ''}><summary><code>${esc(name)}</code> in the crash state (${num(entry.sizeBytes)} bytes)</summary>${renderSingle('crash state', entry)}</details>`);
  }
  return `<p class="note">Exhaustive mode stores only the crash state (what recovery started from). The program's view is rebuilt from the trace: names and sizes after request ${view.boundary}.</p>
<table class="files"><thead><tr><th>file</th><th class="num">program saw (bytes)</th><th class="num">crash state (bytes)</th><th>status</th></tr></thead><tbody>${rows.join('')}</tbody></table>${dumps.join('')}`;
}

function runLines(run: RunRecord, k: number, evidence: Map<string, Evidence[]>): string {
  const n = run.outcomes.length;
  const shown = n <= MAX_RUN_LINES ? run.outcomes.map((_, i) => i) : [...Array(MAX_RUN_LINES / 2).keys(), ...Array.from({ length: MAX_RUN_LINES / 2 }, (_, i) => n - MAX_RUN_LINES / 2 + i)];
  // Evidence lines are always listed, wherever they are.
  for (const key of evidence.keys()) {
    const m = /^r(\d+)-l(\d+)$/.exec(key);
    if (m && Number(m[1]) === k && !shown.includes(Number(m[2]) - 1)) shown.push(Number(m[2]) - 1);
  }
  shown.sort((p, q) => p - q);
  const rows: string[] = [];
  let prev = -1;
  for (const i of shown) {
    if (i > prev + 1) rows.push(`<tr class="gap"><td colspan="3">… ${num(i - prev - 1)} lines …</td></tr>`);
    const o = run.outcomes[i];
    const key = refKey({ kind: 'line', run: k, line: i + 1 });
    const ev = evidence.get(key) ?? [];
    rows.push(`<tr class="line-row t-${lineClass(o)}${ev.length ? ' hl' : ''}" id="${key}" data-ref="${key}"><td class="num">line ${i + 1}</td><td>${esc(describeLine(o))}</td><td>${ev.map((v) => `<span class="badge-inline" title="${esc(v.text)}">${v.n}</span> ${esc(ROLE_NAMES[v.role])}`).join('<br>')}</td></tr>`);
    prev = i;
  }
  if (prev < n - 1) rows.push(`<tr class="gap"><td colspan="3">… ${num(n - 1 - prev)} lines …</td></tr>`);
  return `<table class="lines-table"><thead><tr><th class="num">#</th><th>line</th><th>evidence</th></tr></thead><tbody>${rows.join('')}</tbody></table>`;
}

function runMeta(run: RunRecord): string {
  const how = run.hung ? 'hung (no crash point, no exit within its time bound)' : run.killed ? 'killed at the power cut' : `exited with code ${run.exitCode}`;
  const failed = run.failedRequests.length ? `; the filesystem failed ${plural(run.failedRequests.length, 'request')}: ${run.failedRequests.slice(0, 5).map((f) => `${f.op} ${f.kind} ${f.path} (errno ${-f.result})`).join(', ')}` : '';
  return `${esc(how)}, ${plural(run.outcomes.length, 'line')}${esc(failed)}`;
}

/** Characters of a run's stderr the report shows: its end (the whole is in stderr/run-K.txt). */
export const STDERR_SHOWN_CHARS = 8_000;

/** What each run printed on stderr (a server's log, say), its end when long; nothing when none did. */
function stderrOf(a: ReportArtifact): string {
  const runs = (a.stderr ?? []).map((text, k) => ({ text: text.trimEnd(), k })).filter(({ text }) => text !== '');
  if (runs.length === 0) return '';
  return `<section id="stderr"><h2>What the drivers printed on stderr</h2>${runs.map(({ text, k }) => {
    const cut = text.length > STDERR_SHOWN_CHARS;
    return `<h3>Run ${k}: ${esc(a.runs[k]?.role ?? '')}</h3>${cut ? `<p class="note">the last ${STDERR_SHOWN_CHARS} of ${text.length} characters; all of it is in stderr/run-${k}.txt</p>` : ''}<pre class="stderr">${esc(cut ? text.slice(-STDERR_SHOWN_CHARS) : text)}</pre>`;
  }).join('')}</section>`;
}

/** The self-contained HTML report of one artifact. */
export function renderArtifactReport(a: ReportArtifact): string {
  // A cluster's cut (its trace's entries name their node): each node's paths in a name space of its own, a lane group per node.
  const clusters = a.cuts.map((cut, k) => clusterCut(a.case, cut, a.runs[k], k));
  const views = a.cuts.map((cut, k) => {
    const cluster = clusters[k];
    return cluster ? clusterCutView(cutView(a.case, namespacedCut(cut), k), cluster, k === 0 ? a.case.state : undefined) : cutView(a.case, cut, k);
  });
  const evidence = buildEvidence(a, views);
  const byRef = evidenceByRef(evidence);
  const header = reportHeader(a);
  const rowKeys = new Set<string>();
  views.forEach((v) => {
    for (const e of v.trace) rowKeys.add(refKey({ kind: 'op', cut: v.index, op: e.op }));
  });
  a.runs.forEach((r, k) => r.outcomes.forEach((_, i) => rowKeys.add(refKey({ kind: 'line', run: k, line: i + 1 }))));

  const cutSections = views.map((view, k) => {
    const run = a.runs[k];
    const tl = renderTimeline(view, run, k, byRef, clusters[k]);
    const where = k === 0 ? (a.case.state ? 'the recorded workload' : 'during the workload') : 'during recovery';
    return `<section class="cut-section" id="cut-section-${k}">
<h2>Cut ${k + 1}: ${where}</h2>
<p class="cut-info"><strong>⚡ ${esc(view.cutLabel)}</strong> — ${esc(view.policyLabel)}. ${plural(view.trace.length, 'request')}${run ? `; run ${k} (${esc(run.role)}) ${runMeta(run)}` : ''}.</p>
${droppedSummary(view)}
${LEGEND}
${tl.chart}
${tl.log}
<h3>Files at cut ${k + 1}</h3>
${filesAtCut(view, a.images[k], k)}
</section>`;
  });

  const otherRuns = a.runs.map((run, k) => ({ run, k })).filter(({ k }) => k >= views.length);
  const runsSection = otherRuns.length
    ? `<h2>Runs without a cut</h2>${otherRuns.map(({ run, k }) => `<h3>Run ${k}: ${esc(run.role)}${k === a.runs.length - 1 ? ' (final drain: what recovery delivered)' : ''}</h3><p>${runMeta(run)}</p>${runLines(run, k, byRef)}`).join('')}`
    : '';

  const stderrSection = stderrOf(a);

  const body = `${header.html}
<section id="violations">${violationsSection(a, evidence, (key) => rowKeys.has(key))}</section>
${cutSections.join('\n')}
${runsSection}
${stderrSection}
<div id="details" hidden></div>
<footer>Written by powercut from the artifact folder. Requests are numbered from the mount (or the reset) of each run; a line's place comes from the mark the driver left right after printing it. Hover a shape for its details; the tables say the same in words.</footer>`;
  return page(header.title, CSS, body, SCRIPT);
}
