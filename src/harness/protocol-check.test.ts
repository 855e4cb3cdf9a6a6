// The driver protocol check on hand-made driver output: each kind of violation is reported with
// its line, and a conforming run has none.
import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { REPO_ROOT } from './dist-path.js';
import { judge } from './oracle.js';
import { parseOutcomes, type Outcome } from './outcome.js';
import { payloadCrc } from './payload.js';
import { checkDriverRun, checkNodeLines, type ClusterRunFacts } from './protocol-check.js';
import { parseDriverSpec } from './driver-spec.js';

const hello = '{"t":"hello","protocol":1,"target":"t","replayBound":{"ackBatchSize":1,"outOfOrderAcksDurable":false}}';
const lines = (...ls: string[]) => ls.join('\n') + '\n';
const good = lines(
  hello,
  '{"t":"open","durableSeq":0,"durableFirstUnackedSeq":1}',
  '{"t":"write-intent","id":1,"size":10}',
  '{"t":"written","id":1,"seq":1}',
  '{"t":"durable","durableSeq":1,"durableFirstUnackedSeq":1}',
  '{"t":"ack-intent","seqs":[1]}',
  '{"t":"acked","seqs":[1]}',
  '{"t":"done"}',
);
const problems = (stdout: string, exitCode = 0, extra: { marks?: number; sequential?: boolean } = {}) =>
  checkDriverRun({ stdout, exitCode, sequential: extra.sequential ?? true, ...(extra.marks !== undefined ? { marks: extra.marks } : {}) }).map((p) => `${p.line}: ${p.message}`);

describe('driver protocol check', () => {
  it('finds nothing wrong with a conforming run, markers included', () => {
    expect(problems(good, 0, { marks: 8 })).toEqual([]);
  });
  it('reports unknown kinds, missing and ill-typed fields, and lines that are not JSON, by line', () => {
    const out = problems(lines(hello, '{"t":"opened"}', '{"t":"written","id":1}', '{"t":"waited","seq":"3"}', 'oops', '{"t":"done"}'));
    expect(out).toEqual([
      expect.stringMatching(/^2: unknown kind "opened"/),
      '3: "written" line without its "seq" field',
      '4: "waited".seq must be an integer >= 1, got "3"',
      '5: not JSON: oops',
    ]);
  });
  it('reports a first line that is not hello, and a protocol it does not speak', () => {
    expect(problems(lines('{"t":"done"}'))).toContain('1: the first line must be the hello line, got "done"');
    expect(problems(lines(hello.replace('"protocol":1', '"protocol":2'), '{"t":"done"}'))).toContain('1: hello.protocol is 2; this powercut speaks protocol 1');
  });
  it('reports seqs and durable counters that go backwards', () => {
    const out = problems(lines(hello, '{"t":"written","id":1,"seq":4}', '{"t":"written","id":2,"seq":3}', '{"t":"durable","durableSeq":4,"durableFirstUnackedSeq":1}', '{"t":"durable","durableSeq":2,"durableFirstUnackedSeq":1}', '{"t":"delivered","seq":2,"id":1,"size":8,"crc":0}', '{"t":"delivered","seq":1,"id":1,"size":8,"crc":0}', '{"t":"done"}'));
    expect(out).toContain('3: seq goes backwards: write returned seq 3 after seq 4 (one writer at a time)');
    expect(out).toContain('5: durableSeq goes backwards: 2 after 4');
    expect(out).toContain('7: delivered seq 1 after seq 2: delivery must follow seq order (unless the contract declares "deliveryOrder": "any")');
    // Concurrent writers may finish out of seq order: not a violation then.
    expect(problems(lines(hello, '{"t":"written","id":1,"seq":4}', '{"t":"written","id":2,"seq":3}', '{"t":"done"}'), 0, { sequential: false })).toEqual([]);
  });
  it('judges what goes backwards by the declared contract: per-session seqs restart at an open, "any" order delivers as ready', () => {
    const declaring = (contract: object) => JSON.stringify({ t: 'hello', protocol: 1, target: 't', contract: { replayBound: { ackBatchSize: 1, outOfOrderAcksDurable: true }, ...contract } });
    const run = [
      '{"t":"open","durableSeq":0,"durableFirstUnackedSeq":1}', '{"t":"written","id":1,"seq":1}', '{"t":"durable","durableSeq":1,"durableFirstUnackedSeq":2}',
      '{"t":"open","durableSeq":0,"durableFirstUnackedSeq":1}', '{"t":"written","id":2,"seq":1}',
      '{"t":"delivered","seq":1,"id":2,"size":8,"crc":0}', '{"t":"written","id":3,"seq":3}', '{"t":"written","id":4,"seq":2}', '{"t":"delivered","seq":3,"id":3,"size":8,"crc":0}', '{"t":"delivered","seq":2,"id":4,"size":8,"crc":0}', '{"t":"done"}',
    ];
    const strict = problems(lines(declaring({}), ...run), 0, { sequential: false });
    expect(strict).toEqual(expect.arrayContaining([expect.stringContaining('durableSeq goes backwards'), expect.stringContaining('delivered seq 2 after seq 3')]));
    expect(problems(lines(declaring({ seqScope: 'session', deliveryOrder: 'any' }), ...run), 0, { sequential: false })).toEqual([]);
  });
  it('reports an ack without its intent, output after the end, a missing end and wrong exit codes', () => {
    expect(problems(lines(hello, '{"t":"acked","seqs":[1]}', '{"t":"done"}'))).toContain('2: acked [1] without an ack-intent line for the same seqs before it');
    expect(problems(lines(hello, '{"t":"done"}', '{"t":"closed"}'))).toEqual(expect.arrayContaining(['3: output after the run ended with its done line at line 2']));
    expect(problems(lines(hello, '{"t":"open","durableSeq":0,"durableFirstUnackedSeq":1}'))).toContain('2: the run must end with a "done" line (exit 0) or an "error" line (exit 3)');
    expect(problems(lines(hello, '{"t":"error","where":"open","message":"boom"}'), 0)).toContain('0: exit code 0 after a "error" line; expected 3');
    expect(problems(hello)).toContain('1: the last line has no newline (a line must be flushed whole before the next filesystem call): ' + hello.slice(0, 120));
  });
  it('reports markers missing from the request trace', () => {
    expect(problems(good, 0, { marks: 0 })).toContain('0: 8 lines printed but 0 markers in the request trace: stat <mark>/<N> right after printing line N (docs/driver-protocol.md, "Markers")');
  });
  it('passes the complete run docs/driver-protocol.md shows, and the oracle does too', () => {
    const doc = readFileSync(path.join(REPO_ROOT, 'docs/driver-protocol.md'), 'utf8');
    const block = /### One complete run[\s\S]*?```json\n([\s\S]*?)```/.exec(doc)?.[1];
    expect(block, 'the example run in docs/driver-protocol.md').toBeDefined();
    expect(checkDriverRun({ stdout: block!, exitCode: 0, sequential: false })).toEqual([]);
    const outcomes = parseOutcomes(block!, 'docs/driver-protocol.md');
    const drain = [outcomes[0], { t: 'open', durableSeq: 2, durableFirstUnackedSeq: 2 }, outcomes[10], { t: 'ack-intent', seqs: [2] }, { t: 'acked', seqs: [2] }, { t: 'drained', count: 1 },
      { t: 'write-intent', id: 1_000_001, size: 64 }, { t: 'written', id: 1_000_001, seq: 3 }, { t: 'waited', seq: 3 }, { t: 'delivered', seq: 3, id: 1_000_001, size: 64, crc: payloadCrc(1_000_001, 64) }, { t: 'done' }] as Outcome[];
    const run = (role: 'workload' | 'drain', o: Outcome[]) => ({ role, outcomes: o, exitCode: 0, killed: role === 'workload', hung: false, failedRequests: [] });
    expect(judge({ target: 'doc', faultsInjected: false, runs: [run('workload', outcomes), run('drain', drain)] })).toEqual([]);
  });

  it('passes the complete cluster run docs/driver-protocol.md shows: the spec, node lines, the restart and its line, and the oracle', () => {
    const doc = readFileSync(path.join(REPO_ROOT, 'docs/driver-protocol.md'), 'utf8');
    const blocks = /#### One complete cluster run[\s\S]*?```json\n([\s\S]*?)```[\s\S]*?```json\n([\s\S]*?)```/.exec(doc);
    expect(blocks, 'the cluster run in docs/driver-protocol.md').not.toBeNull();
    const [specLine, commandLine, ...rest] = blocks![1].trim().split('\n');
    expect(rest).toEqual([]);
    const spec = parseDriverSpec(specLine, 'the documented spec');
    expect(spec.nodes?.map((n) => n.node)).toEqual([0, 1, 2]);
    // The node driver reads a line starting {"cmd" as a command (src/targets/node-driver.ts).
    expect(commandLine).toMatch(/^\s*\{\s*"cmd"/);
    expect(JSON.parse(commandLine)).toEqual({ cmd: 'restart', node: 1 });
    const stdout = blocks![2];
    expect(checkDriverRun({ stdout, exitCode: 0, sequential: true })).toEqual([]);
    const outcomes = parseOutcomes(stdout, 'docs/driver-protocol.md');
    const facts: ClusterRunFacts = { nodeCount: 3, lines: outcomes.map((o, i) => ({ line: i + 1, o })), marks: [], trace: [], driverPgid: 4100, restartsAsked: [1] };
    expect(checkNodeLines(facts)).toEqual([]);
    expect(outcomes.findIndex((o) => o.t === 'node' && o.restarted === true), 'the restarted line comes before done').toBeLessThan(outcomes.findIndex((o) => o.t === 'done'));
    const drain = [outcomes[0], ...outcomes.slice(1, 4), { t: 'open', durableSeq: 2, durableFirstUnackedSeq: 3 }, { t: 'drained', count: 0 },
      { t: 'write-intent', id: 1_000_001, size: 64 }, { t: 'written', id: 1_000_001, seq: 3 }, { t: 'waited', seq: 3 }, { t: 'delivered', seq: 3, id: 1_000_001, size: 64, crc: payloadCrc(1_000_001, 64) }, { t: 'done' }] as Outcome[];
    const run = (role: 'workload' | 'drain', o: Outcome[]) => ({ role, outcomes: o, exitCode: 0, killed: false, hung: false, failedRequests: [] });
    expect(judge({ target: 'doc', faultsInjected: false, runs: [run('workload', outcomes), run('drain', drain)] })).toEqual([]);
  });

  it('checks a cluster run\'s node lines: one per node before open, not the driver\'s group, before the node\'s disk is touched, restarted only when asked', () => {
    const node = (k: number, pgid: number, restarted?: boolean): Outcome => ({ t: 'node', node: k, pgid, ...(restarted ? { restarted } : {}) });
    const open: Outcome = { t: 'open', durableSeq: 0, durableFirstUnackedSeq: 1 };
    const facts = (os: Outcome[], extra: Partial<ClusterRunFacts> = {}): string[] =>
      checkNodeLines({ nodeCount: 2, lines: os.map((o, i) => ({ line: i + 1, o })), marks: [], trace: [], driverPgid: 100, ...extra }).map((p) => `${p.line}: ${p.message}`);
    expect(facts([node(0, 101), node(1, 102), open])).toEqual([]);
    expect(facts([node(0, 101), open])).toEqual(['0: no node line for node 1: a cluster driver prints {"t":"node","node":1,"pgid":P} for each node of the spec as it starts its server']);
    expect(facts([node(0, 100), node(1, 102), open])[0]).toMatch(/^1: node 0's pgid 100 is the driver's own process group/);
    expect(facts([node(0, 101), open, node(1, 102)])[0]).toMatch(/^3: node 1's node line comes after the open line \(line 2\)/);
    expect(facts([node(0, 101), node(1, 102), node(1, 103), open])[0]).toMatch(/^3: a second node line for node 1 \(the first at line 2\)/);
    expect(facts([node(0, 101), node(1, 102), open, node(1, 103, true)])).toEqual(['4: a restarted line for node 1, which the harness did not ask to restart']);
    expect(facts([node(0, 101), node(1, 102), open], { restartsAsked: [1] })[0]).toMatch(/^0: the harness asked to restart node 1 .* but no .* line came/);
    const trace = [{ op: 1, node: 0, kind: 'create', path: '/log' }, { op: 2, node: 1, kind: 'create', path: '/log' }];
    expect(facts([node(0, 101), node(1, 102), open], { trace, marks: [{ n: 1, afterOp: 0 }, { n: 2, afterOp: 2 }] }))
      .toEqual(['2: node 1\'s disk was touched (request 2, create /log) before its node line was printed (marked after request 2): print the line before the server touches its data directory, or the harness cannot cut that node at its first requests']);
  });
});

describe('parseDriverSpec', () => {
  it('takes offline as true or false, and names the field otherwise', () => {
    const spec = { mode: 'drain', dir: '/d', settings: {}, idBase: 0 };
    expect(parseDriverSpec(JSON.stringify({ ...spec, offline: true }), 'spec').offline).toBe(true);
    expect(() => parseDriverSpec(JSON.stringify({ ...spec, offline: 'yes' }), 'spec')).toThrow('spec: offline must be true or false, got "yes"');
  });
});
