// The gate's pure parts: budget, summary table, JUnit XML, progress line.
import { describe, expect, it } from 'vitest';
import { Budget, formatClock, formatDuration } from './budget.js';
import { toJunitXml, xmlEscape } from './junit.js';
import { formatProgress, ProgressReporter } from './progress.js';
import { newRow, totals, type GateRow } from '../report/gate-results.js';
import { explainedInWords, formatCauseCosts, formatFailures, formatGateText, formatSummaryTable } from './summary.js';
import { emptyClusterCoverage } from './cluster-coverage.js';
import { checkFloor } from './floor.js';
import { completeContract, contractKey } from '../harness/contract.js';
import { groupKeyOf, requestsInWords, ROUTE_WORDS, type Cause } from '../harness/cause/cause.js';
import { FailureRegistry } from './failure-registry.js';
import type { DistinctFailure } from '../report/gate-results.js';
import { roundSeed } from './suites.js';
import { emptyCoverage, type Coverage } from '../harness/coverage.js';

const cov = (c: Partial<Coverage>): Coverage => ({ ...emptyCoverage(), ...c });
const pass: GateRow = { name: 'torn-checkpoint-write', kind: 'scenario', cases: 1, coverage: cov({ cases: 1, cutsRequested: 1, cutsLanded: 1, tornPartialWrites: 1, policies: { torn: { states: 0, listed: 0, cuts: 1, landed: 1, intervalsChecked: 0 } } }), violations: 0, durationMs: 612, errors: [], capsHit: [] };
const fail: GateRow = {
  name: 'atomic-file/sync',
  kind: 'suite',
  cases: 42,
  coverage: cov({ cases: 42, intervals: 50, intervalsChecked: 40, policies: { 'lose-unsynced': { states: 30, listed: 0, cuts: 0, landed: 0, intervalsChecked: 50, intervalsReached: 50 }, torn: { states: 12, listed: 0, cuts: 0, landed: 0, intervalsChecked: 40, intervalsReached: 45 } }, states: 42, events: { rolls: 3, purges: 1 } }),
  violations: 1,
  durationMs: 61_000,
  failure: { messages: ['at-least-once: seq 3 <lost> & "gone"'], seed: 17, path: '0:1', artifactDir: '/a/b', replay: 'node cli.js replay /a/b' },
  errors: [],
  capsHit: ['maxStates 400'],
};
const broken: GateRow = { name: 'faults', kind: 'suite', cases: 0, coverage: emptyCoverage(), violations: 0, durationMs: 10, errors: ['daemon died\nstack'], capsHit: [] };

describe('budget', () => {
  it('counts down on the injected clock and never goes below zero', () => {
    let now = 1_000;
    const b = new Budget(5_000, () => now);
    expect(b.leftMs()).toBe(5_000);
    now += 4_000;
    expect([b.leftMs(), b.expired()]).toEqual([1_000, false]);
    now += 9_000;
    expect([b.leftMs(), b.expired(), b.elapsedMs()]).toEqual([0, true, 13_000]);
  });
  it('says how long is left of a part of the allowed overrun (10 s or 10 % past the end), none under a work budget', () => {
    let now = 0;
    const b = new Budget(60_000, () => now);
    now = 62_000;
    expect([b.overrunLeftMs(0.5), b.overrunLeftMs(0.75)]).toEqual([3_000, 5_500]);
    expect(new Budget(Infinity).overrunLeftMs(0.5)).toBe(Infinity);
  });
  it('rejects a budget that is not positive', () => {
    expect(() => new Budget(0)).toThrow(/totalMs must be a positive number \(Infinity under a work budget\), got 0/);
  });
  it('formats clocks and durations', () => {
    expect([formatClock(125_999), formatClock(-5), formatDuration(612), formatDuration(61_000)]).toEqual(['2:05', '0:00', '0.6 s', '1:01']);
  });
});

describe('summary table', () => {
  const text = formatSummaryTable([pass, fail, broken], totals([pass, fail, broken], 62_000));
  const lines = text.split('\n');
  const totalLine = (t: string) => t.split('\n').find((l) => l.startsWith('total'));
  it('has one line per row between header and totals, with aligned columns', () => {
    expect(lines[0]).toMatch(/^scenario \/ suite\s+cases \(states\)\s+violations\s+tool errors\s+time\s+result$/);
    expect(lines[2]).toMatch(/^torn-checkpoint-write\s+1\s+0\s+0\s+0\.6 s\s+pass$/);
    expect(lines[3]).toMatch(/^suite atomic-file\/sync\s+42\s+1\s+0\s+1:01\s+FAIL$/);
    expect(lines[4]).toMatch(/^suite faults\s+0\s+0\s+1\s+0\.0 s\s+ERROR$/);
    expect(lines[6]).toMatch(/^total\s+43\s+1\s+1\s+1:02\s+FAIL$/);
    // Right-aligned numbers: the "cases" column ends at the same offset on every line.
    const end = (l: string, cell: string) => l.indexOf(cell, 20) + cell.length;
    expect(end(lines[2], ' 1 ')).toBe(end(lines[3], '42 '));
  });
  it('prints the coverage counts: cuts that landed, torn writes kept in part, intervals and states, rolls and purges', () => {
    // Checked in full: every state listed judged; with a state judged: any (a torn interval offers more than the caps list).
    expect(text).toContain('coverage: 43 cases, cuts landed 1/1, torn cuts 13 (partial writes kept 1), intervals checked in full 40/50 (lose-unsynced 50/50, torn 40/50), intervals with a state judged (lose-unsynced 50/50, torn 45/50), crash states 42, purges 1, rolls 3');
    expect(text).toMatch(/crash states per minute: \d+/);
    expect(text).toContain('  atomic-file/sync: 42 cases, torn cuts 12 (partial writes kept 0), intervals checked in full 40/50 (lose-unsynced 50/50, torn 40/50), intervals with a state judged (lose-unsynced 50/50, torn 45/50)');
    expect(text).toContain('; caps hit: maxStates 400');
    expect(text).toContain('caps left crash states out (raise them with --max-states');
  });
  it('says pass only when nothing was violated and the tool never failed; ERROR for tool failures alone', () => {
    expect(totalLine(formatSummaryTable([pass], totals([pass], 700)))).toMatch(/pass$/);
    expect(totalLine(formatSummaryTable([pass, broken], totals([pass, broken], 700)))).toMatch(/ERROR$/);
    expect(totalLine(formatSummaryTable([fail, broken], totals([fail, broken], 700)))).toMatch(/FAIL$/);
  });
  it('lists each failure with its violation, seed, artifact and replay command', () => {
    const f = formatFailures([pass, fail, broken]);
    expect(f).toContain('suite atomic-file/sync:\n  at-least-once: seq 3');
    expect(f).toContain('fast-check seed 17, path "0:1"');
    expect(f).toContain('artifact: /a/b\n  replay:   node cli.js replay /a/b');
    expect(f).toContain('suite faults:\n  harness error (the tool failed, not a verdict on the queue): daemon died');
    expect(f).not.toContain('torn-checkpoint-write');
  });
  it('says beside each replay command whether it replays exactly or is a sample, and counts each in a line', () => {
    const distinct = (replayMode: 'exact' | 'sample', replayStoredImages: boolean): DistinctFailure => ({ key: 'k', title: 'k', count: 1, signatures: [{ signature: 'k', count: 1 }], foundBy: ['x'], checks: ['order'], messages: [], artifactDir: '/a/b', replay: 'powercut replay /a/b', replayMode, replayStoredImages });
    expect(formatFailures([fail], [distinct('exact', true)])).toContain('replay:   powercut replay /a/b   (replays exactly: one re-run repeats the recorded run)');
    // A cluster's crash state: its stored disks are exact; its re-recordings interleave anew.
    expect(formatFailures([fail], [distinct('sample', true)])).toContain('replay:   powercut replay /a/b   (replays exactly from its stored images, REPRODUCED or not; its 5 re-runs of the whole case are a sample)');
    // A live cut of some nodes: the others ran on, so no stored disk holds the cluster.
    expect(formatFailures([fail], [distinct('sample', false)])).toContain('replay:   powercut replay /a/b   (replays as a sample (5 re-runs): concurrent requests interleave anew, so it says in how many it reproduced)');
    const all = formatFailures([fail], [distinct('exact', false), distinct('sample', true), distinct('sample', false)]).split('\n');
    expect(all.slice(0, 2)).toEqual(['distinct failures: 3', 'artifacts: 2 replay exactly (from stored disks, or one re-run of one process); 1 only as a sample (5 re-runs each, reproduced in k of 5)']);
    expect(formatFailures([fail], [{ ...distinct('exact', false), artifactDir: undefined, replay: undefined, replayMode: undefined }])).not.toContain('artifacts:');
  });
});

describe('a cluster gate\'s text', () => {
  const row = (name: string, cases: number): GateRow => ({ ...newRow(name, 'suite'), cases, coverage: cov({ cases, cutsRequested: 2, cutsLanded: 2, contracts: { [contractKey(completeContract({ replayBound: { ackBatchSize: 1, outOfOrderAcksDurable: false } }))]: cases } }) });
  const rows = [row('cluster coordinated', 3), row('cluster one-node', 2)];
  const c = emptyClusterCoverage(3, 'one', ['coordinated', 'one']);
  c.perKind.one!.states = 1;
  const text = formatGateText(rows, [], checkFloor(rows.map((r) => ({ row: r, floor: [] }))), 'exhaustive', { inputs: 0, of: 1 }, 60_000, c);
  it('counts crash states and live cuts, not a single disk\'s modes, and says each kind and node once', () => {
    expect(text.split('\n')[0]).toMatch(/^scenario \/ suite\s+cases \(states, live cuts\)\s+violations/);
    expect(text).toContain('\ncrash states and live cuts per minute: 5\n');
    expect(text).not.toMatch(/^crash states per minute|^power cuts per minute|exhaustive mode|random cuts/m);
    // Its rows are its kinds: their coverage is said per kind, not per suite again.
    expect(text).not.toMatch(/^ {2}cluster coordinated: /m);
    expect(text).toContain('\n  one: 1 crash state judged, live cuts landed 0/0, failing 0\n');
    expect(text).toMatch(/^checked against: at-least-once; /m);
    expect(text).toMatch(/^cluster: 3 nodes, --nodes-cut one \(coordinated, one\)/m);
    expect(text).toMatch(/^lose-unsynced states judged of those listed, per cut kind: coordinated 0\/0, one-node 0\/0$/m);
  });
});

describe('JUnit XML', () => {
  const xml = toJunitXml([pass, fail, broken], 62_000);
  it('counts tests, failures and errors per suite and in all', () => {
    expect(xml).toMatch(/^<\?xml version="1.0" encoding="UTF-8"\?>\n<testsuites name="powercut gate" tests="3" failures="1" errors="1" time="62.000">/);
    expect(xml).toContain('<testsuite name="scenarios" tests="1" failures="0" errors="0" time="0.612">');
    expect(xml).toContain('<testsuite name="property-suites" tests="2" failures="1" errors="1" time="61.010">');
  });
  it('has a failure with the escaped violation, seed and artifact, and an error for a harness failure', () => {
    expect(xml).toContain('<failure message="at-least-once: seq 3 &lt;lost&gt; &amp; &quot;gone&quot;" type="violation">');
    expect(xml).toContain('fast-check seed 17, path &quot;0:1&quot;\nartifact: /a/b\nreplay: node cli.js replay /a/b</failure>');
    expect(xml).toContain('<error message="daemon died" type="harness-error">daemon died\nstack</error>');
    expect(xml.match(/<testcase /g)).toHaveLength(3);
    expect(xml.match(/<\/testcase>/g)).toHaveLength(3);
  });
  it('carries the coverage counts as properties, per testcase and per testsuite', () => {
    expect(xml).toContain('<property name="cutsLanded" value="1"/>');
    expect(xml).toContain('<property name="events.rolls" value="3"/>');
    expect(xml).toContain('<property name="harnessErrors" value="1"/>');
    expect(xml).toMatch(/<testsuite name="property-suites"[^>]*>\n    <properties>\n(      <property [^>]*\/>\n)+    <\/properties>/);
  });
  it('escapes markup and drops characters XML cannot hold', () => {
    expect(xmlEscape(`a<b>&"c'\u0000\u001b[31m`)).toBe('a&lt;b&gt;&amp;&quot;c&apos;[31m');
  });
  it('refuses duplicate testcase names in one testsuite', () => {
    expect(() => toJunitXml([pass, pass], 1)).toThrow(/names must be unique within a testsuite/);
  });
});

describe('progress', () => {
  it('says cases checked, violations, time left and what runs', () => {
    expect(formatProgress({ phase: 'scenario x', cases: 12, unit: 'crash states', violations: 1, leftMs: 95_000 })).toBe('powercut gate: 12 crash states checked, 1 violation, 1:35 left  [scenario x]');
  });
  it('on a terminal redraws one line in place and prints result lines above it', () => {
    const written: string[] = [];
    const r = new ProgressReporter({ isTTY: true, columns: 200, write: (t) => written.push(t) }, () => ({ phase: 'p', cases: 3, unit: 'power cuts', violations: 0, leftMs: 1_000 }));
    r.start();
    r.log('scenario x: pass');
    r.stop();
    expect(written).toEqual([
      '\r\x1b[Kpowercut gate: 3 power cuts checked, 0 violations, 0:01 left  [p]',
      '\r\x1b[K',
      'scenario x: pass\n',
      '\r\x1b[Kpowercut gate: 3 power cuts checked, 0 violations, 0:01 left  [p]',
      '\r\x1b[K',
    ]);
  });
  it('otherwise prints plain lines only, with no control characters', async () => {
    const written: string[] = [];
    const r = new ProgressReporter({ isTTY: false, write: (t) => written.push(t) }, () => ({ phase: 'p', cases: 0, unit: 'power cuts', violations: 0, leftMs: 0 }), 10);
    r.start();
    r.log('scenario x: pass');
    await new Promise((resolve) => setTimeout(resolve, 35));
    r.stop();
    expect(written[0]).toBe('scenario x: pass\n');
    expect(written.length).toBeGreaterThan(1);
    expect(written.every((w) => w.endsWith('\n') && !w.includes('\x1b'))).toBe(true);
  });
});

describe('suite seeds', () => {
  it('differ per suite and round and are 32-bit integers', () => {
    const seeds = [0, 1, 2].flatMap((suite) => [0, 1, 2].map((round) => roundSeed(1000, suite, round)));
    expect(new Set(seeds).size).toBe(9);
    expect(seeds.every((s) => Number.isInteger(s) && s === (s | 0))).toBe(true);
    expect(roundSeed(1000, 1, 2)).toBe(roundSeed(1000, 1, 2));
  });
});

describe('what the causes explain', () => {
  const cause = (kind: Cause['kind'], key: string, path: string): Cause => ({
    kind, key, title: key, fix: '', evidence: [], search: { probes: 1, ms: 1, bound: { maxProbes: 1, maxMs: 1 }, boundReached: false },
    unit: { kind: 'file', ino: 2, path }, change: { seq: 1, op: 1, kind: 'write' }, step: { kind: 'wait', line: 1, untilOp: 2 },
  });
  const failure = (c: Cause, states: number): DistinctFailure => ({ key: groupKeyOf(c), title: c.title, count: 1, states, signatures: [], cause: c, foundBy: [], checks: [], messages: [] });

  it('counts the failing states proven causes explain and those left unexplained, and names one step missed in two places', () => {
    const text = explainedInWords([
      failure(cause('missing-fsync', 'missing-fsync /checkpoint.log write /checkpoint.log', '/checkpoint.log'), 7),
      failure(cause('missing-fsync', 'missing-fsync /checkpoint.head.tmp write /checkpoint.head.tmp', '/checkpoint.head.tmp'), 3),
      failure({ ...cause('not-isolated', 'unexplained liveness, torn, before fsync of /page.*', '/page.1') }, 2),
    ]);
    expect(text).toBe('12 failing states: 2 proven causes explain 10; 2 unexplained\nthe same step in 2 places (missing-fsync): /checkpoint.log, /checkpoint.head.tmp');
  });

  it('groups a confirmation printed too early as one failure whichever fsync its states name, and says which others were proven', () => {
    const atLog = cause('early-confirmation', 'early-confirmation /checkpoint.log acked', '/checkpoint.log');
    const atDir = { ...cause('early-confirmation', 'early-confirmation / acked', '/'), title: 'confirmation ("acked") before the directory fsync of / completed' };
    const written = cause('early-confirmation', 'early-confirmation /page.* written', '/page.*');
    expect(groupKeyOf(atLog)).toBe(groupKeyOf(atDir));
    expect(groupKeyOf(written)).not.toBe(groupKeyOf(atLog));
    const registry = new FailureRegistry();
    const row = newRow('default', 'suite');
    registry.add(failure(atLog, 7), atLog.title);
    expect(registry.countKnown(groupKeyOf(atDir), row, 'sig', 3, 'candidate', atDir)).toBe(true);
    expect(registry.countKnown(groupKeyOf(written), row, 'sig', 1, 'candidate', written)).toBe(false);
    const [group] = registry.values();
    expect([group.count, group.states, group.alsoCauses]).toEqual([2, 10, ['confirmation ("acked") before the directory fsync of / completed']]);
    expect(formatFailures([], [group])).toContain('also:    confirmation ("acked") before the directory fsync of / completed (the same confirmation, proven at another fsync it did not wait for)');
  });

  it('says how each cause was found, how often a known cause was proven again, and which explained group an unexplained one shares a signature with', () => {
    const named = { ...failure({ ...cause('missing-dir-fsync', 'missing-dir-fsync / create /page.*', '/'), route: 'candidate' }, 9), signatures: [{ signature: 'liveness, torn, before fsync of /page.*', count: 2 }], provenAgain: 4 };
    const left = { ...failure(cause('not-isolated', 'unexplained liveness, torn, before fsync of /page.*', '/page.1'), 3), signatures: [{ signature: 'liveness, torn, before fsync of /page.*', count: 1 }] };
    const lines = formatFailures([], [named, left]).split('\n');
    expect(lines).toContain(`     found:   ${ROUTE_WORDS.candidate}`);
    expect(lines).toContain('     again:   proven again on 4 later failing runs, its fix carried over (one proof each, no search)');
    expect(lines.find((l) => l.startsWith('     shares:'))).toMatch(/^ {5}shares: {2}1 of its cases share their signature with group 1 \(missing-dir-fsync \/ create \/page\.\*\)/);
    expect(formatCauseCosts([named, left]).split('\n')[1]).toBe('causes found: 1 read off the recording, 0 by the probing search, 0 carried over; known causes proven again on 4 later failing runs');
  });

  it('collapses request numbers into ranges and a count', () => {
    expect(requestsInWords([7])).toBe('request 7');
    expect(requestsInWords([5, 3, 4, 9])).toBe('requests 3-5, 9 (4 requests)');
    expect(requestsInWords(Array.from({ length: 30 }, (_, i) => 2 * i))).toBe('requests 0, 2, 4, 6, ..., 54, 56, 58 (30 requests)');
  });
});
