// JUnit XML for CI test reports (pure): a testsuite for the scenarios and one for the property
// suites; each row a testcase with its coverage counts as properties; a violation a <failure>, a
// harness error an <error>.
import { coverageProperties } from '../harness/coverage.js';
import { replayWithMode, totals, type DistinctFailure, type GateRow } from '../report/gate-results.js';
import { causeFacts, groupedByCause } from '../harness/cause/cause.js';
import { figureWords, needsWords, type FloorCheck } from './floor.js';

/** Escapes text for XML attributes and content; drops characters XML 1.0 cannot carry. */
export function xmlEscape(text: string): string {
  return text
    // eslint-disable-next-line no-control-regex
    .replace(/[^\x09\x0A\x0D\x20-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/gu, '')
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&apos;');
}

const seconds = (ms: number) => (ms / 1000).toFixed(3);

function testcase(r: GateRow, classname: string, unmet: readonly FloorCheck[]): string {
  const open = `    <testcase classname="${xmlEscape(classname)}" name="${xmlEscape(r.name)}" time="${seconds(r.durationMs)}">`;
  const inner: string[] = [properties(r.coverage, '      ', [['violations', r.violations], ['harnessErrors', r.errors.length]])];
  // Checked too little to pass: a failure of its own kind, so CI shows the row red with the reason.
  if (unmet.length > 0) {
    const why = unmet.map((c) => `${c.what} ${figureWords(c)}, needs ${needsWords(c)}; ${c.raise}`);
    inner.push(`      <failure message="${xmlEscape(`below the gate's floor: ${why[0]}`)}" type="below-floor">${xmlEscape(why.join('\n'))}</failure>`);
  }
  for (const e of r.errors) inner.push(`      <error message="${xmlEscape(e.split('\n')[0])}" type="harness-error">${xmlEscape(e)}</error>`);
  if (r.violations > 0) {
    const f = r.failure;
    const details = [
      ...(f?.messages ?? []),
      ...(f?.seed !== undefined ? [`fast-check seed ${f.seed}, path "${f.path ?? ''}"`] : []),
      ...(f?.artifactDir ? [`artifact: ${f.artifactDir}`] : []),
      ...(f?.replay ? [`replay: ${replayWithMode(f)}`] : []),
    ].join('\n');
    inner.push(`      <failure message="${xmlEscape(f?.messages[0] ?? `${r.violations} violations`)}" type="violation">${xmlEscape(details)}</failure>`);
  }
  return [open, ...inner, '    </testcase>'].join('\n');
}

function properties(c: GateRow['coverage'], indent: string, extra: [string, number][] = []): string {
  const lines = [...coverageProperties(c), ...extra].map(([name, value]) => `${indent}  <property name="${xmlEscape(name)}" value="${value}"/>`);
  return [`${indent}<properties>`, ...lines, `${indent}</properties>`].join('\n');
}

function testsuite(name: string, rows: readonly GateRow[], floor: readonly FloorCheck[]): string {
  const unmetOf = (r: GateRow) => floor.filter((c) => !c.met && c.row === r.name && c.kind === r.kind);
  const failures = rows.filter((r) => r.violations > 0 || unmetOf(r).length > 0).length;
  const errors = rows.filter((r) => r.errors.length > 0).length;
  const sum = totals(rows, rows.reduce((n, r) => n + r.durationMs, 0));
  return [
    `  <testsuite name="${xmlEscape(name)}" tests="${rows.length}" failures="${failures}" errors="${errors}" time="${seconds(sum.durationMs)}">`,
    properties(sum.coverage, '    '),
    ...rows.map((r) => testcase(r, `powercut.${name}`, unmetOf(r))),
    '  </testsuite>',
  ].join('\n');
}

/** One testcase per distinct failure, so a CI report lists each problem once, with its count and artifact. */
function distinctSuite(failures: readonly DistinctFailure[]): string {
  const cases = failures.map((f) => {
    const details = [
      `${f.count} failing case${f.count === 1 ? '' : 's'}, found by ${f.foundBy.join(', ')}`,
      ...(groupedByCause(f) ? causeFacts(f.cause).map((c) => `${c.label}: ${c.text}`) : []),
      `signatures: ${f.signatures.map((x) => `${x.signature} (${x.count})`).join('; ')}`,
      ...f.messages,
      ...(f.seed !== undefined ? [`fast-check seed ${f.seed}, path "${f.path ?? ''}"`] : []),
      ...(f.artifactDir ? [`artifact: ${f.artifactDir}`] : []),
      ...(f.replay ? [`replay: ${replayWithMode(f)}`] : []),
    ].join('\n');
    return [
      `    <testcase classname="powercut.distinct-failures" name="${xmlEscape(f.title)}" time="0.000">`,
      `      <properties>\n        <property name="count" value="${f.count}"/>\n      </properties>`,
      `      <failure message="${xmlEscape(groupedByCause(f) ? f.cause.fix : (f.messages[0] ?? f.title))}" type="violation">${xmlEscape(details)}</failure>`,
      '    </testcase>',
    ].join('\n');
  });
  return [`  <testsuite name="distinct-failures" tests="${failures.length}" failures="${failures.length}" errors="0" time="0.000">`, ...cases, '  </testsuite>'].join('\n');
}

export function toJunitXml(rows: readonly GateRow[], durationMs: number, distinct: readonly DistinctFailure[] = [], floor: readonly FloorCheck[] = [], name = 'powercut gate'): string {
  const scenarios = rows.filter((r) => r.kind === 'scenario');
  const suites = rows.filter((r) => r.kind === 'suite');
  const belowFloor = (r: GateRow) => floor.some((c) => !c.met && c.row === r.name && c.kind === r.kind);
  const failures = rows.filter((r) => r.violations > 0 || belowFloor(r)).length + distinct.length;
  const errors = rows.filter((r) => r.errors.length > 0).length;
  for (const group of [scenarios, suites]) {
    const names = group.map((r) => r.name);
    if (new Set(names).size !== names.length) throw new Error(`invariant: JUnit testcase names must be unique within a testsuite: ${names.join(', ')}`);
  }
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites name="${xmlEscape(name)}" tests="${rows.length + distinct.length}" failures="${failures}" errors="${errors}" time="${seconds(durationMs)}">`,
    testsuite('scenarios', scenarios, floor),
    testsuite('property-suites', suites, floor),
    ...(distinct.length > 0 ? [distinctSuite(distinct)] : []),
    '</testsuites>',
    '',
  ].join('\n');
}
