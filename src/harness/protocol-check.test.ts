// The driver protocol check on hand-made driver output: each kind of violation is reported with
// its line, and a conforming run has none.
import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { REPO_ROOT } from './dist-path.js';
import { judge } from './oracle.js';
import { parseOutcomes, type Outcome } from './outcome.js';
import { payloadCrc } from './payload.js';
import { checkDriverRun } from './protocol-check.js';

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
});
