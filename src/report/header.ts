// What ran, in words, for every place a report names it (the artifact report's title, heading and
// case facts; the gate report's header), and the one place that builds an artifact report's header.
// A case names a registered target (`--target`, by default the built-in queue), optionally with one
// of its known-bad variants, or an external driver (`--driver 'CMD'`): a command the tool knows
// nothing else of, so its report names the command and never a built-in target or "the correct queue".
import { causeFacts, type Cause } from '../harness/cause/cause.js';
import { describeContract } from '../harness/contract.js';
import { contractOf } from '../harness/outcome.js';
import type { ExternalDriver } from '../harness/target.js';
import type { CrashCase } from '../harness/crash-case.js';
import { describeState } from '../../fusefs/model/policies/index.js';
import { esc, plural } from './html.js';
import type { ReportArtifact } from './types.js';

/** The target a case without a name ran on: src/targets' DEFAULT_TARGET (the report may not import src/targets; a test checks they agree). */
export const DEFAULT_TARGET_NAME = 'powercut-queue';
/** The name artifacts and the gate give an external driver's target: src/targets' EXTERNAL_TARGET. */
export const EXTERNAL_TARGET_NAME = 'external';

/** One line of the header's facts: a label and its value, as text (code: shown as code). */
export interface Fact {
  label: string;
  value: string;
  code?: boolean;
}

/** How a case or a gate run named what it ran. */
export interface SubjectRef {
  target?: string;
  driver?: ExternalDriver;
  variant?: string;
}

export interface Subject {
  /** One line of plain text for titles: "driver 'python3 q.py'", "powercut-queue (variant v)". */
  text: string;
  /** The same for a heading, with a command as code. */
  html: string;
  /** One phrase for a summary line: "target powercut-queue, known-bad variant v", "driver 'CMD' (in DIR)". */
  phrase: string;
  /** What ran, as header facts: the driver's command and folder, or the target and its variant. */
  facts: Fact[];
}

/** What a case or a gate run ran; `helloTarget` is the name the driver's hello line gave itself. */
export function subjectOf(ref: SubjectRef, helloTarget?: string): Subject {
  if (ref.driver) {
    const facts: Fact[] = [
      { label: 'driver', value: ref.driver.command, code: true },
      { label: 'run in', value: ref.driver.cwd, code: true },
    ];
    if (ref.target !== undefined && ref.target !== EXTERNAL_TARGET_NAME) facts.push({ label: 'target', value: ref.target });
    if (helloTarget) facts.push({ label: 'calls itself', value: `${helloTarget} (its hello line)` });
    return { text: `driver '${ref.driver.command}'`, html: `driver <code>${esc(ref.driver.command)}</code>`, phrase: `driver '${ref.driver.command}' (in ${ref.driver.cwd})`, facts };
  }
  if (ref.target === EXTERNAL_TARGET_NAME) {
    // A gate run or an artifact that says "external" without the command (an older writer).
    const value = 'an external driver (--driver); its command is not recorded here';
    return { text: 'an external driver', html: 'an external driver', phrase: 'an external driver (--driver)', facts: [{ label: 'target', value }] };
  }
  const name = ref.target ?? DEFAULT_TARGET_NAME;
  const variant = ref.variant ? ` (variant ${ref.variant})` : '';
  return {
    text: `${name}${variant}`,
    html: esc(`${name}${variant}`),
    phrase: `target ${name}${ref.variant ? `, known-bad variant ${ref.variant}` : ''}`,
    facts: [
      { label: 'target', value: name },
      { label: 'queue', value: ref.variant ? `known-bad variant '${ref.variant}'` : 'the correct queue' },
    ],
  };
}

/** The name the first run's hello line gives the driver, if it printed one. */
function helloTargetOf(a: ReportArtifact): string | undefined {
  for (const run of a.runs) {
    const hello = run.outcomes.find((o) => o.t === 'hello');
    if (hello && hello.t === 'hello' && typeof hello.target === 'string' && hello.target !== '') return hello.target;
  }
  return undefined;
}

function describeCut(c: CrashCase): string {
  if (c.state) return `crash state ${describeState(c.state)} of the recorded run (exhaustive mode)`;
  if (c.cut) return `request ${c.cut.atOp}${c.cut.kind ? ` (counting ${c.cut.kind} requests only)` : ''}${c.cut.path ? ` touching ${c.cut.path}` : ''}, ${c.cut.timing}; policy ${c.policy}, seed ${c.seed}`;
  return `after the workload (fault run); policy ${c.policy}`;
}

/** What the queue promised, as its first run's hello line declared it: what the oracle judged by. */
function checkedAgainst(a: ReportArtifact): Fact[] {
  const contract = a.runs.map((r) => contractOf(r.outcomes)).find((c) => c !== undefined);
  return contract ? [{ label: 'checked against', value: describeContract(contract) }] : [];
}

/** The facts of the header, in order: what ran, then the case. Add a line here and it shows in the header. */
export function caseFacts(a: ReportArtifact, subject: Subject = subjectOf(a.case, helloTargetOf(a))): Fact[] {
  const c = a.case;
  const facts: Fact[] = [
    ...subject.facts,
    { label: 'settings', value: JSON.stringify(c.settings), code: true },
    ...checkedAgainst(a),
    { label: 'workload', value: plural(c.workload.steps.length, 'step') },
    { label: 'power cut', value: describeCut(c) },
  ];
  if (c.faults?.length) facts.push({ label: 'faults', value: JSON.stringify(c.faults) });
  if (c.recoveryFaults?.length) facts.push({ label: 'damage at recovery', value: JSON.stringify(c.recoveryFaults) });
  if (c.recoveryCut) facts.push({ label: '2nd cut', value: `during recovery at request ${c.recoveryCut.cut.atOp}${c.recoveryCut.cut.kind ? ` (${c.recoveryCut.cut.kind})` : ''}, ${c.recoveryCut.cut.timing}; policy ${c.recoveryCut.policy}, seed ${c.recoveryCut.seed}` });
  if (c.recoverySettings) facts.push({ label: 'after the cut', value: `settings ${JSON.stringify(c.recoverySettings)}` });
  if (a.dir) facts.push({ label: 'replay', value: `powercut replay ${a.dir}`, code: true });
  return facts;
}

/** Why it failed, first: the cause, the fix, its proof and reach, then what the search saw. */
export function renderCause(c: Cause): string {
  const facts = causeFacts(c).map((f) => ({ label: f.label, value: f.text }));
  const evidence = c.evidence.length ? `<details><summary>what the cause search saw (${plural(c.evidence.length, 'finding')})</summary><ul>${c.evidence.map((e) => `<li>${esc(e)}</li>`).join('')}</ul></details>` : '';
  return `<section id="cause"><h2>Why it failed</h2>${renderFacts(facts)}${evidence}</section>`;
}

export function renderFacts(facts: readonly Fact[]): string {
  return `<dl class="case">${facts.map((f) => `<dt>${esc(f.label)}</dt><dd>${f.code ? `<code>${esc(f.value)}</code>` : esc(f.value)}</dd>`).join('')}</dl>`;
}

export interface ReportHeader {
  /** The page's <title>. */
  title: string;
  /** The page's heading and "The case" section. */
  html: string;
}

/** The top of an artifact report: the verdict and what ran, the folder, and the case's facts. */
export function reportHeader(a: ReportArtifact): ReportHeader {
  const subject = subjectOf(a.case, helloTargetOf(a));
  const checks = [...new Set(a.violations.map((v) => v.check))];
  const headline = a.harnessError !== undefined ? 'harness error' : checks.length ? checks.join(', ') : 'no violation';
  const verdict = a.harnessError !== undefined ? '<span class="verdict error">harness error</span>' : a.violations.length ? '<span class="verdict fail">FAIL</span>' : '<span class="verdict pass">no violation</span>';
  const html = `<header>
<h1>${verdict} ${esc(headline)} — ${subject.html}</h1>
${a.dir ? `<p class="sub">${esc(a.dir)}</p>` : ''}
</header>
${a.cause ? renderCause(a.cause) : ''}
<section id="case"><h2>The case</h2>${renderFacts(caseFacts(a, subject))}</section>`;
  return { title: `powercut: ${headline} — ${subject.text}`, html };
}
