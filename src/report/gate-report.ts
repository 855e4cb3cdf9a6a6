// The HTML report of a gate run (pure): the summary table, coverage counts, crash states or power
// cuts per minute, and a link to the report of each failing case.
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { causeFacts, groupedByCause } from '../harness/cause/cause.js';
import { formatContracts, formatCoverage, policiesInOrder } from '../harness/coverage.js';
import { CASE_WORDS, capsNote, perMinute, replayModeNote, replaySummary, resultOf, rowResult, totals, type ClusterCoverageShown, type DistinctFailure, type GateResult, type GateRow } from './gate-results.js';
import type { ReplayFacts } from '../harness/artifacts.js';
import { CSS, SCRIPT } from './assets.js';
import type { ExternalDriver } from '../harness/target.js';
import { subjectOf } from './header.js';
import { duration, esc, num, page, plural } from './html.js';

/** A failure's replay command, and whether it replays exactly or as a sample. */
function replayHtml(f: { replay?: string } & Partial<ReplayFacts>): string {
  if (!f.replay) return '';
  const note = replayModeNote(f);
  return `<p>replay: <code>${esc(f.replay)}</code>${note ? ` <span class="note">${esc(note)}</span>` : ''}</p>`;
}

/** A gate run: GateReport's rows and duration, plus what the CLI knows (mode, seed, target or driver, variant). */
export interface GateReportInput {
  rows: GateRow[];
  /** Every distinct failure of the run (GateReport's failures). */
  failures?: DistinctFailure[];
  durationMs: number;
  mode?: 'exhaustive' | 'random';
  seed?: number;
  /** The registered target's name (`external` for a driver, whose command is `driver`). */
  target?: string;
  /** The external driver the run was given (--driver), instead of a registered target. */
  driver?: ExternalDriver;
  /** A known-bad variant of a registered target. */
  variant?: string;
  /** The run's time budget, for the header. */
  timeBudgetMs?: number;
  /** Or its work budget, as the option that asks it ("--cases 12"). */
  workBudget?: string;
  /** A cluster target's gate: its coverage per cut kind and per node (its rows are the cut kinds). */
  cluster?: ClusterCoverageShown;
}

/** The file name of an artifact's report inside its folder. */
export const ARTIFACT_REPORT_FILE = 'report.html';
/** The file name of a gate run's report inside the report folder. */
export const GATE_REPORT_FILE = 'index.html';

/** How the gate report links to an artifact's report: relative when the artifact is under the report folder, else an absolute file URL. */
export function artifactReportHref(reportDir: string, artifactDir: string): string {
  const from = path.resolve(reportDir);
  const to = path.resolve(artifactDir, ARTIFACT_REPORT_FILE);
  const rel = path.relative(from, to);
  if (!rel.startsWith('..') && !path.isAbsolute(rel)) return rel.split(path.sep).map(encodeURIComponent).join('/');
  return pathToFileURL(to).href;
}

/** An artifact folder named in a harness error ("...\nartifact: DIR"). */
function errorArtifact(error: string): string | undefined {
  return /\nartifact: (.+)$/.exec(error)?.[1]?.trim();
}

/** Every artifact folder the run left: failures and harness errors. */
export function gateArtifactDirs(report: GateReportInput): string[] {
  const dirs: string[] = [];
  for (const f of report.failures ?? []) if (f.artifactDir) dirs.push(f.artifactDir);
  for (const r of report.rows) {
    if (r.failure?.artifactDir && !dirs.includes(r.failure.artifactDir)) dirs.push(r.failure.artifactDir);
    for (const e of r.errors) {
      const d = errorArtifact(e);
      if (d) dirs.push(d);
    }
  }
  return dirs;
}

/** A result as a badge: the summary's word, styled by its lower-case class. */
const badge = (res: GateResult) => `<span class="verdict ${res.toLowerCase()}">${res}</span>`;

export interface GateReportOptions {
  /** Where the report is written: links to artifacts under it are relative. */
  reportDir: string;
  /** Artifact reports that could not be written, by artifact folder, with why. */
  missingReports?: Map<string, string>;
}

/** "a cluster of 3 nodes, --nodes-cut all-kinds (coordinated, one, majority)": the header's word for a cluster run. */
function clusterPhrase(c: ClusterCoverageShown): string {
  return `a cluster of ${c.nodes} nodes, --nodes-cut ${c.nodesCut} (${c.kinds.join(', ')})`;
}

/** A cluster run's coverage: per cut kind its crash states and live cuts, per node how often its power went. */
function clusterHtml(c: ClusterCoverageShown): string {
  const cell = (n: number) => `<td class="num">${num(n)}</td>`;
  const kinds = c.kinds.map((k) => {
    const x = c.perKind[k];
    return x ? `<tr><td>${esc(k)}</td>${[x.listed, x.states, x.failing, x.liveCuts, x.liveLanded, x.livePaused].map(cell).join('')}</tr>` : '';
  });
  const nodes = c.perNode.map((n) => `<tr><td>node ${num(n.node)}</td>${[n.requests, n.cutInStates, n.cutLive, n.cutInStates + n.cutLive].map(cell).join('')}</tr>`);
  return `<h3>Per cut kind</h3><p class="note">${plural(c.recordings, 'workload')} recorded, ${plural(c.intervals, 'persistence interval')}, ${plural(c.statesListed, 'crash state')} listed${c.statesCapped ? ` (${num(c.statesCapped)} more left out by --max-states)` : ''}</p>
<table class="summary cluster-kinds"><thead><tr><th>cut kind</th><th class="num">states listed (lose-unsynced)</th><th class="num">states judged</th><th class="num">failing (states and live cuts)</th><th class="num">live cuts requested</th><th class="num">live cuts landed</th><th class="num">live cuts after a pause</th></tr></thead><tbody>${kinds.join('')}</tbody></table>
<h3>Per node</h3><table class="summary cluster-nodes"><thead><tr><th>node</th><th class="num">requests</th><th class="num">cut in crash states</th><th class="num">cut live</th><th class="num">cut in all</th></tr></thead><tbody>${nodes.join('')}</tbody></table>
<p class="note">Distinct failures are grouped ${esc(c.grouping)}.</p>`;
}

export function renderGateReport(report: GateReportInput, options: GateReportOptions): string {
  const mode = report.mode ?? 'exhaustive';
  const words = CASE_WORDS[report.cluster ? 'cluster' : mode];
  const unit = words.unit;
  const rows = report.rows;
  const t = totals(rows, report.durationMs);
  const verdict = resultOf(t.violations, t.errors);
  const link = (dir: string) => {
    const why = options.missingReports?.get(dir);
    const href = artifactReportHref(options.reportDir, dir);
    return why ? `<span class="note">report not written: ${esc(why)}</span>` : `<a href="${esc(href)}">report</a>`;
  };

  const body = rows.map((r) => {
    const dirs = [...(r.failure?.artifactDir ? [r.failure.artifactDir] : []), ...r.errors.map(errorArtifact).filter((d): d is string => d !== undefined)];
    return `<tr><td>${r.kind === 'suite' ? 'suite ' : ''}${esc(r.name)}</td><td class="num">${num(r.cases)}</td><td class="num">${num(r.violations)}</td><td class="num">${num(r.errors.length)}</td><td class="num">${duration(r.durationMs)}</td><td class="num">${num(perMinute(r.cases, r.durationMs))}</td><td>${badge(rowResult(r))}</td><td>${dirs.map(link).join(' ')}</td></tr>`;
  });
  const foot = `<tr class="total"><th>total</th><th class="num">${num(t.cases)}</th><th class="num">${num(t.violations)}</th><th class="num">${num(t.errors)}</th><th class="num">${duration(t.durationMs)}</th><th class="num">${num(perMinute(t.cases, t.durationMs))}</th><th>${badge(verdict)}</th><th></th></tr>`;
  const table = `<table class="summary"><thead><tr><th>scenario / suite</th><th class="num">cases (${unit})</th><th class="num">violations</th><th class="num">tool errors</th><th class="num">time</th><th class="num">${unit} / min</th><th>result</th><th>artifacts</th></tr></thead><tbody>${body.join('')}</tbody><tfoot>${foot}</tfoot></table>`;

  const total = t.coverage;
  const note = capsNote(rows);
  const countRows: [string, string][] = [
    ['cases', num(total.cases)],
    ...(total.cutsRequested ? [[`${words.cuts} landed`, `${num(total.cutsLanded)} of ${num(total.cutsRequested)}`] as [string, string]] : []),
    ...(total.recoveryCutsRequested ? [['recovery cuts landed', `${num(total.recoveryCutsLanded)} of ${num(total.recoveryCutsRequested)}`] as [string, string]] : []),
    ...(total.faultCases ? [['faults fired', `${num(total.faultsFired)} of ${num(total.faultCases)} fault cases`] as [string, string]] : []),
    ...(total.policies.torn ? [['torn cuts', `${num(total.policies.torn.states + total.policies.torn.cuts)} (writes kept in part: ${num(total.tornPartialWrites)})`] as [string, string]] : []),
    ...(total.intervals ? [['persistence intervals checked in full', `${num(total.intervalsChecked)} of ${num(total.intervals)} (${policiesInOrder(total).map(([p, x]) => `${p} ${num(x.intervalsChecked)}`).join(', ')})`] as [string, string]] : []),
    ...(total.intervals && policiesInOrder(total).some(([, x]) => x.intervalsReached !== undefined)
      ? [['persistence intervals with a state judged', policiesInOrder(total).filter(([, x]) => x.intervalsReached !== undefined).map(([p, x]) => `${p} ${num(x.intervalsReached!)}`).join(', ')] as [string, string]] : []),
    ...(total.states ? [['crash states judged', `${num(total.states)}${total.statesCapped ? ` (${num(total.statesCapped)} left out by caps)` : ''}`] as [string, string]] : []),
    ...Object.entries(total.events).sort().map(([e, n]) => [e, num(n)] as [string, string]),
    [`${unit} per minute`, num(perMinute(t.cases, t.durationMs))],
  ];
  const contracts = formatContracts(total);
  // A cluster's rows are its cut kinds: its own tables say each kind's figures, and each node's.
  const parts = report.cluster ? clusterHtml(report.cluster)
    : `<h3>Per suite</h3><ul>${rows.filter((r) => r.kind === 'suite' && r.cases > 0).map((r) => `<li><strong>${esc(r.name)}</strong>: ${esc(formatCoverage(r.coverage))}${r.capsHit.length ? `; caps hit: ${esc(r.capsHit.join(', '))}` : ''}</li>`).join('')}</ul>`;
  const coverage = `<table class="summary"><tbody>${countRows.map(([k, v]) => `<tr><td>${esc(k)}</td><td class="num">${v}</td></tr>`).join('')}</tbody></table>
${contracts ? `<p class="contracts">${esc(contracts)}</p>` : ''}
${parts}${note ? `<p class="note">${esc(note)}</p>` : ''}`;

  const distinct = report.failures ?? [];
  const distinctHtml = distinct.length
    ? `<h2>Distinct failures (${distinct.length})</h2>${replaySummary(distinct) ? `<p class="note">${esc(replaySummary(distinct))}</p>` : ''}${distinct.map((f, i) => `<div class="violation"><h3>${i + 1}. ${esc(f.title)}</h3><p class="note">${num(f.count)} failing case${f.count === 1 ? '' : 's'}, found by ${esc(f.foundBy.join(', '))}</p>${
        groupedByCause(f) ? `<dl class="case">${causeFacts(f.cause).slice(1).map((c) => `<dt>${esc(c.label)}</dt><dd>${esc(c.text)}</dd>`).join('')}<dt>signatures</dt><dd>${esc(f.signatures.map((s) => `${s.signature} (${s.count})`).join('; '))}</dd></dl>` : ''
      }${f.messages.map((m) => `<p class="msg">${esc(m)}</p>`).join('')}${
        f.seed !== undefined ? `<p class="note">fast-check seed ${esc(f.seed)}, path "${esc(f.path ?? '')}"</p>` : ''
      }${f.artifactDir ? `<p>artifact: <code>${esc(f.artifactDir)}</code> — ${link(f.artifactDir)}</p>` : ''}${replayHtml(f)}</div>`).join('')}`
    : '';
  // With distinct failures listed, a row's own section only tells of tool failures.
  const failed = rows.filter((r) => rowResult(r) !== 'pass' && (distinct.length === 0 || r.errors.length > 0));
  const failures = failed.length
    ? `<h2>Failures</h2>${failed.map((r) => `<div class="violation"><h3>${r.kind} ${esc(r.name)}</h3>${(r.failure?.messages ?? []).map((m) => `<p class="msg">${esc(m)}</p>`).join('')}${
        r.failure?.seed !== undefined ? `<p class="note">fast-check seed ${esc(r.failure.seed)}, path "${esc(r.failure.path ?? '')}"</p>` : ''
      }${r.failure?.artifactDir ? `<p>artifact: <code>${esc(r.failure.artifactDir)}</code> — ${link(r.failure.artifactDir)}</p>` : ''}${r.failure ? replayHtml(r.failure) : ''}${r.errors
        .map((e) => `<div class="harness-error">harness error (the tool failed, not a verdict on the queue):\n${esc(e)}${errorArtifact(e) ? `\n${link(errorArtifact(e)!)}` : ''}</div>`)
        .join('')}</div>`).join('')}`
    : '';

  const header = [
    report.target !== undefined || report.driver || report.variant ? subjectOf(report).phrase : '',
    report.cluster ? clusterPhrase(report.cluster) : `${mode} mode`,
    report.seed !== undefined ? `seed ${report.seed} (repeat with --seed ${report.seed})` : '',
    report.timeBudgetMs !== undefined ? `time budget ${duration(report.timeBudgetMs)}` : '',
    report.workBudget !== undefined ? `work budget ${report.workBudget}` : '',
  ].filter(Boolean).join(' · ');
  const html = `<header><h1>${badge(verdict)} powercut gate</h1><p class="sub">${esc(header)}; ran ${duration(report.durationMs)}</p></header>
<h2>Summary</h2>${table}
<h2>Coverage</h2>${coverage}
${distinctHtml}
${failures}
<footer>Written by powercut gate. Each failing case links to its artifact's report (timeline, evidence, files).</footer>`;
  return page(`powercut gate: ${verdict}`, CSS, html, SCRIPT);
}
