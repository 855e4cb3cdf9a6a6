// The gate run's report: summary, coverage, rate, and links to each failing case's report.
import { mkdir, mkdtemp, readFile, rm, cp } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { emptyCoverage } from '../harness/coverage.js';
import type { ClusterCoverageShown, DistinctFailure, GateRow } from './gate-results.js';
import { completeContract, contractKey } from '../harness/contract.js';
import { artifactReportHref, renderGateReport, type GateReportInput } from './gate-report.js';
import { writeGateReport } from './load.js';

const FIXTURES = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures');

function row(name: string, over: Partial<GateRow> = {}): GateRow {
  return { name, kind: 'suite', cases: 120, coverage: { ...emptyCoverage(), cases: 120, intervals: 30, intervalsChecked: 28, policies: { 'lose-unsynced': { states: 30, listed: 0, cuts: 0, landed: 0, intervalsChecked: 30 }, torn: { states: 90, listed: 0, cuts: 0, landed: 0, intervalsChecked: 28 } }, states: 120, statesCapped: 4, events: { rolls: 3 } }, violations: 0, durationMs: 60_000, errors: [], capsHit: [], ...over };
}

function report(rows: GateRow[]): GateReportInput {
  return { rows, durationMs: 120_000, mode: 'exhaustive', seed: 42, target: 'powercut-queue', variant: 'purge-before-checkpoint' };
}

describe('gate report', () => {
  it('has the summary table, coverage counts and crash states per minute', () => {
    const html = renderGateReport(report([row('atomic-file/sync'), row('new-page-dir-not-fsynced', { kind: 'scenario', cases: 1, coverage: emptyCoverage(), durationMs: 400 })]), { reportDir: '/r' });
    expect(html).toContain('<span class="verdict pass">pass</span> powercut gate');
    expect(html).toContain('suite atomic-file/sync');
    // The whole row: 120 cases, no violations or errors, a minute, 120 states per minute, pass.
    expect(html).toContain('<tr><td>suite atomic-file/sync</td><td class="num">120</td><td class="num">0</td><td class="num">0</td><td class="num">1 min 0 s</td><td class="num">120</td><td><span class="verdict pass">pass</span></td><td></td></tr>');
    expect(html).toContain('crash states / min');
    expect(html).toMatch(/<td>crash states per minute<\/td><td class="num">61<\/td>/); // 121 cases in 2 minutes
    expect(html).toContain('<td>persistence intervals checked in full</td><td class="num">28 of 30 (lose-unsynced 30, torn 28)</td>');
    expect(html).toContain('<td>rolls</td><td class="num">3</td>');
    expect(html).toContain('seed 42 (repeat with --seed 42)');
  });

  it('lists every distinct failure with its count, the rows that found it and its artifact', () => {
    const failing = row('append-log/sync', { violations: 5, failure: { messages: ['liveness: first'], artifactDir: '/r/a1' } });
    const input = { ...report([failing]), failures: [
      { key: 'liveness, torn, before fsync of /page.*', title: 'liveness, torn, before fsync of /page.*', signatures: [{ signature: 'liveness, torn, before fsync of /page.*', count: 4 }], count: 4, foundBy: ['append-log/sync', 'atomic-file/sync'], checks: ['liveness'], messages: ['liveness: <page> missing'], artifactDir: '/r/a1', replay: 'powercut replay /r/a1', seed: 3, path: '0:1' },
      { key: 'bounded-replay, lose-unsynced, before fsync of /checkpoint.log', title: 'bounded-replay, lose-unsynced, before fsync of /checkpoint.log', signatures: [{ signature: 'bounded-replay, lose-unsynced, before fsync of /checkpoint.log', count: 1 }], count: 1, foundBy: ['append-log/sync'], checks: ['bounded-replay'], messages: ['bounded-replay: acked'], artifactDir: '/r/a2' },
    ] };
    const html = renderGateReport(input, { reportDir: '/r' });
    expect(html).toContain('<h2>Distinct failures (2)</h2>');
    expect(html).toContain('<h3>1. liveness, torn, before fsync of /page.*</h3><p class="note">4 failing cases, found by append-log/sync, atomic-file/sync</p><p class="msg">liveness: &lt;page&gt; missing</p>');
    expect(html).toContain('<a href="a2/report.html">report</a>');
    // The row's own failure is in the list: no second section repeats it.
    expect(html).not.toContain('<h2>Failures</h2>');
  });

  it('links each failing case: relative under the report folder, a file URL elsewhere', () => {
    expect(artifactReportHref('/r', '/r/artifacts/2026 case')).toBe('artifacts/2026%20case/report.html');
    expect(artifactReportHref('/r', '/elsewhere/a')).toBe(pathToFileURL('/elsewhere/a/report.html').href);
    const failing = row('append-log/sync', { violations: 1, failure: { messages: ['liveness: <queue> did not open'], artifactDir: '/r/artifacts/x', replay: 'powercut replay /r/artifacts/x', seed: 7, path: '0' } });
    const broken = row('faults', { errors: ['daemon died\nartifact: /tmp/elsewhere/y'] });
    const html = renderGateReport(report([failing, broken]), { reportDir: '/r' });
    expect(html).toContain('<span class="verdict fail">FAIL</span> powercut gate');
    expect(html).toContain('<a href="artifacts/x/report.html">report</a>');
    expect(html).toContain(`<a href="${pathToFileURL('/tmp/elsewhere/y/report.html').href}">report</a>`);
    expect(html).toContain('liveness: &lt;queue&gt; did not open');
    expect(html).toContain('fast-check seed 7, path "0"');
    expect(html).toContain('harness error (the tool failed, not a verdict on the queue)');
  });

  it('names the external driver a run was given, and a built-in target with its variant', () => {
    const driver = { command: 'python3 q.py --bad', cwd: '/src/q' };
    const html = renderGateReport({ ...report([row('driver')]), target: 'external', variant: undefined, driver }, { reportDir: '/r' });
    expect(html).toContain("<p class=\"sub\">driver &#39;python3 q.py --bad&#39; (in /src/q) · exhaustive mode · seed 42");
    expect(html).not.toContain('powercut-queue');
    expect(html).not.toMatch(/variant/);
    // Told only "external" (no command): no built-in name, no guess.
    expect(renderGateReport({ ...report([row('driver')]), target: 'external', variant: undefined }, { reportDir: '/r' })).toContain('<p class="sub">an external driver (--driver) · exhaustive mode');
    expect(renderGateReport(report([row('x')]), { reportDir: '/r' })).toContain('<p class="sub">target powercut-queue, known-bad variant purge-before-checkpoint · exhaustive mode');
  });

  it('takes the driver command from the artifacts when the run names only target external', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'powercut-gate-report-'));
    try {
      const artifact = path.join(dir, 'artifacts', 'case-1');
      await cp(path.join(FIXTURES, 'external-driver-bounded-replay'), artifact, { recursive: true });
      const file = await writeGateReport(dir, { ...report([row('driver', { violations: 1, failure: { messages: ['bounded-replay: …'], artifactDir: artifact } })]), target: 'external', variant: undefined });
      const html = await readFile(file, 'utf8');
      expect(html).toContain('<p class="sub">driver &#39;python3 examples/python-queue/driver.py --no-dir-fsync-after-ack-rename&#39; (in ');
      expect(html).not.toContain('powercut-queue');
      const artifactHtml = await readFile(path.join(artifact, 'report.html'), 'utf8');
      expect(artifactHtml).not.toContain('powercut-queue');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('writes index.html and the report of each failing artifact that has none', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'powercut-gate-report-'));
    try {
      const artifact = path.join(dir, 'artifacts', 'case-1');
      await mkdir(path.dirname(artifact), { recursive: true });
      await cp(path.join(FIXTURES, 'integrity-recovery-cut'), artifact, { recursive: true });
      const notAnArtifact = path.join(dir, 'artifacts', 'empty');
      await mkdir(notAnArtifact);
      const file = await writeGateReport(dir, report([
        row('cut-during-recovery', { kind: 'scenario', violations: 1, failure: { messages: ['integrity: …'], artifactDir: artifact } }),
        row('faults', { errors: [`daemon died\nartifact: ${notAnArtifact}`] }),
      ]));
      expect(file).toBe(path.join(dir, 'index.html'));
      expect(existsSync(path.join(artifact, 'report.html'))).toBe(true);
      const html = await readFile(file, 'utf8');
      expect(html).toContain('<a href="artifacts/case-1/report.html">report</a>');
      // An artifact whose report cannot be written is named, and the gate's report is still written.
      expect(html).toMatch(/report not written: .*case\.json: cannot read/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('shows a cluster run per cut kind and per node, with its contract, and none of a single disk\'s modes', () => {
    const contracts = { [contractKey(completeContract({ replayBound: { ackBatchSize: 1, outOfOrderAcksDurable: false } }))]: 7 };
    const kind = (name: string, cases: number) => row(name, { cases, coverage: { ...emptyCoverage(), cases, states: 1, cutsRequested: 3, cutsLanded: 2, contracts } });
    const cluster: ClusterCoverageShown = {
      nodes: 3, nodesCut: 'all-kinds', kinds: ['coordinated', 'majority'], recordings: 2, intervals: 60, statesListed: 200, statesCapped: 0, statesShared: 0,
      perKind: { coordinated: { listed: 40, states: 1, liveCuts: 3, liveLanded: 2, livePaused: 0, failing: 0 }, majority: { listed: 90, states: 1, liveCuts: 3, liveLanded: 2, livePaused: 1, failing: 1 } },
      perNode: [{ node: 0, requests: 100, cutInStates: 1, cutLive: 2 }, { node: 1, requests: 120, cutInStates: 2, cutLive: 4 }, { node: 2, requests: 90, cutInStates: 1, cutLive: 3 }],
      grouping: 'by check, cut kind and nodes',
    };
    const failures: DistinctFailure[] = [
      { key: 's', title: 'liveness after a coordinated crash state', count: 1, signatures: [{ signature: 's', count: 1 }], foundBy: ['cluster coordinated'], checks: ['liveness'], messages: [], artifactDir: '/r/s', replay: 'powercut replay /r/s', replayMode: 'sample', replayStoredImages: true },
      { key: 'l', title: 'liveness after a live cut of nodes 0, 1', count: 1, signatures: [{ signature: 'l', count: 1 }], foundBy: ['cluster majority'], checks: ['liveness'], messages: [], artifactDir: '/r/l', replay: 'powercut replay /r/l', replayMode: 'sample', replayStoredImages: false },
    ];
    const html = renderGateReport({ ...report([kind('cluster coordinated', 3), kind('cluster majority', 4)]), variant: undefined, target: 'replicated-queue', cluster, failures }, { reportDir: '/r' });
    expect(html).toContain('<p class="sub">target replicated-queue · a cluster of 3 nodes, --nodes-cut all-kinds (coordinated, majority) · seed 42');
    expect(html).not.toMatch(/exhaustive mode|random cuts|Per suite/);
    expect(html).toContain('<th class="num">cases (crash states and live cuts)</th>');
    expect(html).toContain('<tr><td>live cuts landed</td><td class="num">4 of 6</td></tr>');
    expect(html).toContain('<p class="contracts">checked against: at-least-once; ');
    expect(html).toContain('<p class="note">2 workloads recorded, 60 persistence intervals, 200 crash states listed</p>');
    // Per kind: states listed, judged, failing; live cuts requested, landed, after a pause.
    expect(html).toContain('<tr><td>majority</td><td class="num">90</td><td class="num">1</td><td class="num">1</td><td class="num">3</td><td class="num">2</td><td class="num">1</td></tr>');
    // Per node: its requests, how often it was cut in crash states and live, and in all.
    expect(html).toContain('<tr><td>node 1</td><td class="num">120</td><td class="num">2</td><td class="num">4</td><td class="num">6</td></tr>');
    // Which artifacts replay exactly, and which only as a sample.
    expect(html).toContain('artifacts: 1 replays exactly (from stored disks, or one re-run of one process); 1 only as a sample (5 re-runs each, reproduced in k of 5)');
    expect(html).toContain('<code>powercut replay /r/s</code> <span class="note">(replays exactly from its stored images, REPRODUCED or not; ');
    expect(html).toContain('<code>powercut replay /r/l</code> <span class="note">(replays as a sample (5 re-runs): ');
  });
});
