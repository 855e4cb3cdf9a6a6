// The oracle on hand-made histories: for each check, a history it passes and one it fails.
import { describe, expect, it } from 'vitest';
import { maxReplayedAcks } from '../queue/index.js';
import { ackShape, judge, type CheckName, type History, type RunRecord } from './oracle.js';
import type { Outcome } from './outcome.js';
import { payloadCrc } from './payload.js';

const SIZE = 16;
const open = (durableSeq = 0, durableFirstUnackedSeq = 1): Outcome => ({ t: 'open', durableSeq, durableFirstUnackedSeq });
const write = (id: number, seq = id, size = SIZE): Outcome[] => [{ t: 'write-intent', id, size }, { t: 'written', id, seq }];
const durable = (durableSeq: number, durableFirstUnackedSeq = 1): Outcome => ({ t: 'durable', durableSeq, durableFirstUnackedSeq });
const delivered = (seq: number, id = seq, size = SIZE): Outcome => ({ t: 'delivered', seq, id, size, crc: payloadCrc(id, size) });
const ack = (...seqs: number[]): Outcome[] => [{ t: 'ack-intent', seqs }, { t: 'acked', seqs }];

function run(role: RunRecord['role'], outcomes: Outcome[], extra: Partial<RunRecord> = {}): RunRecord {
  return { role, outcomes, exitCode: role === 'drain' ? 0 : null, killed: role === 'workload', hung: false, failedRequests: [], ...extra };
}
/** A final drain that recovered `seqs` (event id = seq) and then passed its liveness writes. */
function drain(seqs: number[], livenessId = 1000, livenessSeq = 100): RunRecord {
  return run('drain', [
    open(),
    ...seqs.map((s) => delivered(s)),
    ...(seqs.length ? ack(...seqs) : []),
    { t: 'drained', count: seqs.length },
    ...write(livenessId, livenessSeq),
    delivered(livenessSeq, livenessId),
    ...ack(livenessSeq),
    { t: 'done' },
  ]);
}
const history = (runs: RunRecord[], checkpointAcks = 1, faultsInjected = false): History => ({ checkpointAcks, faultsInjected, runs });
const checks = (h: History): CheckName[] => [...new Set(judge(h).map((v) => v.check))];

// Five writes, durable up to 3.
const wrote5 = [open(), ...[1, 2, 3, 4, 5].flatMap((i) => write(i)), durable(3)];

describe('oracle', () => {
  it('passes a history where everything durable is recovered and nothing else is wrong', () => {
    expect(judge(history([run('workload', wrote5), drain([1, 2, 3])]))).toEqual([]);
    expect(judge(history([run('workload', wrote5), drain([1, 2, 3, 4, 5])]))).toEqual([]);
  });

  describe('1 at-least-once', () => {
    it('fails when a durable, unacked event is missing, naming the seq and the confirmation', () => {
      const v = judge(history([run('workload', wrote5), drain([1, 3])]));
      expect(v.map((x) => x.check)).toContain('at-least-once');
      const msg = v.find((x) => x.check === 'at-least-once')!.message;
      expect(msg).toContain('seqs 2 (event ids 2)');
      expect(msg).toContain('durableSeq reached 3 in run 0 (workload)');
    });
    it('counts waitDurable and the durable state reported on open as confirmations', () => {
      const w = [open(), ...write(1), ...write(2), { t: 'waited', seq: 2 } as Outcome];
      expect(checks(history([run('workload', w), drain([1])]))).toEqual(['at-least-once']);
      const unconfirmed = [open(), ...write(1), ...write(2)];
      expect(checks(history([run('workload', unconfirmed), drain([1])]))).toEqual([]);
      expect(checks(history([run('workload', unconfirmed), run('drain', [open(2, 1)]), drain([1])]))).toEqual(['at-least-once']);
    });
    it('does not require acked events to come back', () => {
      const w = [...wrote5, delivered(1), delivered(2), ...ack(1, 2)];
      expect(judge(history([run('workload', w), drain([3])]))).toEqual([]);
    });
  });

  describe('2 bounded duplicate replay', () => {
    it('fails when an event whose ack was confirmed durable is delivered again', () => {
      const w = [...wrote5, delivered(1), delivered(2), ...ack(1, 2), durable(3, 3)];
      expect(judge(history([run('workload', w), drain([3])]))).toEqual([]);
      const v = judge(history([run('workload', w), drain([2, 3])]));
      expect(v.map((x) => x.check)).toEqual(['bounded-replay']);
      expect(v[0].message).toContain('durableFirstUnackedSeq reached 3');
    });
    it('allows replayed acks up to maxReplayedAcks and fails beyond it', () => {
      // checkpointAcks 2, one ack call of 1 event at a time, in order: bound = 2 - 1 + 1 + 0 = 2.
      const w = [...wrote5, ...[1, 2, 3].map((s) => delivered(s)), ...ack(1), ...ack(2), ...ack(3)];
      expect(maxReplayedAcks(2, 1, 0)).toBe(2);
      expect(judge(history([run('workload', w), drain([2, 3])], 2))).toEqual([]);
      const v = judge(history([run('workload', w), drain([1, 2, 3])], 2));
      expect(v.map((x) => x.check)).toEqual(['bounded-replay']);
      expect(v[0].message).toContain('3 acked events were delivered again');
      expect(v[0].message).toContain('largest ack call 1, out-of-order acks 0) = 2');
    });
    it('widens the bound by out-of-order acks: events acked above an unacked one', () => {
      const w = [...wrote5, ...[1, 2, 3].map((s) => delivered(s)), ...ack(3), ...ack(2), ...ack(1)];
      expect(ackShape(run('workload', w))).toEqual({ ackCalls: 3, largestAckCallSize: 1, outOfOrderAcks: 2 });
      expect(judge(history([run('workload', w), drain([1, 2, 3])], 1))).toEqual([]);
    });
  });

  describe('3 integrity', () => {
    it('fails on bytes that differ from what was written', () => {
      const bad: Outcome = { ...(delivered(2) as Extract<Outcome, { t: 'delivered' }>), crc: 1 };
      const v = judge(history([run('workload', wrote5), { ...drain([1, 3]), outcomes: [open(), delivered(1), bad, delivered(3), ...drain([]).outcomes.slice(1)] }]));
      expect(v.map((x) => x.check)).toEqual(['integrity']);
      expect(v[0].message).toMatch(/seq 2 \(event id 2\) has different bytes than were written: expected 16 bytes with crc32 \d+, got 16 bytes with crc32 1/);
    });
    it('fails on an event that was never written, an unreadable header, and a swapped seq', () => {
      const f = (outcome: Outcome) => judge(history([run('workload', wrote5), { ...drain([]), outcomes: [open(), delivered(1), delivered(2), outcome, { t: 'drained', count: 3 }, ...drain([]).outcomes.slice(2)] }]));
      expect(f(delivered(3, 77)).map((x) => x.message).join()).toContain('event id 77, which was never written');
      expect(f({ t: 'delivered', seq: 3, id: null, size: 4, crc: 0 }).map((x) => x.message).join()).toContain('unreadable payload header');
      expect(f(delivered(3, 4)).map((x) => x.message).join()).toContain('write() returned seq 4');
    });
  });

  describe('4 order', () => {
    it('fails on a repeat or a step back within one session', () => {
      const v = judge(history([run('workload', wrote5), { ...drain([]), outcomes: [open(), delivered(1), delivered(3), delivered(2), { t: 'drained', count: 3 }, ...drain([]).outcomes.slice(2)] }]));
      expect(v.map((x) => x.check)).toContain('order');
      expect(v.find((x) => x.check === 'order')!.message).toContain('delivered seq 2 after seq 3');
    });
    it('fails on a hole of unacked events and accepts a hole of acked ones', () => {
      const withAck = [...wrote5, delivered(1), delivered(2), delivered(3), ...ack(2)];
      expect(judge(history([run('workload', withAck), drain([1, 3])]))).toEqual([]);
      const v = judge(history([run('workload', [open(), ...[1, 2, 3, 4].flatMap((i) => write(i)), durable(1)]), drain([1, 2, 4])]));
      expect(v.map((x) => x.check)).toEqual(['order']);
      expect(v[0].message).toContain('skipped seqs 3 (event ids 3)');
    });
    it('lets a reopened session deliver its unacked events again', () => {
      const w = [...wrote5, delivered(1), delivered(2), { t: 'close-intent' } as Outcome, { t: 'closed' } as Outcome, open(5), delivered(1)];
      expect(judge(history([run('workload', w), drain([1, 2, 3, 4, 5])]))).toEqual([]);
    });
  });

  describe('5 monotonic seqs', () => {
    it('fails when a seq confirmed durable before the cut is given to a new write', () => {
      const final = drain([1, 2, 3], 1000, 3); // liveness write got seq 3 again
      const v = judge(history([run('workload', wrote5), final]));
      expect(v.map((x) => x.check)).toContain('monotonic-seqs');
      expect(v.find((x) => x.check === 'monotonic-seqs')!.message).toContain('got seq 3 for event id 1000, but seqs up to 3 were confirmed durable in run 0');
    });
    it('accepts reuse of a seq that was never confirmed durable', () => {
      expect(judge(history([run('workload', wrote5), drain([1, 2, 3], 1000, 4)]))).toEqual([]);
    });
  });

  describe('6 liveness', () => {
    it('fails when the queue does not open after the cut', () => {
      const final = run('drain', [{ t: 'error', where: 'open', message: 'damaged where synced: page.1 offset 0' }], { exitCode: 3 });
      const v = judge(history([run('workload', wrote5), final]));
      expect(v.map((x) => x.check)).toEqual(['liveness']);
      expect(v[0].message).toContain('did not open after the power cut: damaged where synced');
    });
    it('fails when new writes after recovery are not delivered back, or the workload fails with no fault', () => {
      const noBack = { ...drain([1, 2, 3]) };
      noBack.outcomes = noBack.outcomes.filter((o) => !(o.t === 'delivered' && o.seq === 100));
      expect(checks(history([run('workload', wrote5), noBack]))).toEqual(['liveness']);
      const failed = [...wrote5, { t: 'error', where: 'steps[2] (write)', message: 'EIO' } as Outcome];
      expect(checks(history([run('workload', failed, { killed: false, exitCode: 3 }), drain([1, 2, 3])]))).toEqual(['liveness']);
      expect(checks(history([run('workload', failed, { killed: false, exitCode: 3 }), drain([1, 2, 3])], 1, true))).toEqual([]);
    });
    it('fails a hang and survives a second cut during recovery', () => {
      expect(checks(history([run('workload', wrote5, { hung: true }), drain([1, 2, 3])]))).toEqual(['liveness']);
      const partial = run('drain', [open(3), delivered(1), ...ack(1)]);
      expect(judge(history([run('workload', wrote5), partial, drain([1, 2, 3])], 4))).toEqual([]);
    });
  });

  describe('fail-loudly (fault runs)', () => {
    const failed = [{ op: 9, kind: 'fsync', path: '/page.1', result: -5 }];
    it('fails when the fs failed a request and the queue said nothing', () => {
      const v = judge(history([run('workload', wrote5, { killed: false, exitCode: 0, failedRequests: failed }), drain([1, 2, 3])], 1, true));
      expect(v.map((x) => x.check)).toEqual(['fail-loudly']);
      expect(v[0].message).toContain('failed request 9 (fsync /page.1: errno 5)');
    });
    it('passes when the queue reported the error', () => {
      const w = [...wrote5, { t: 'error', where: 'steps[1] (waitDurable)', message: 'fsync page.1: EIO', code: 'EIO' } as Outcome];
      expect(judge(history([run('workload', w, { killed: false, exitCode: 3, failedRequests: failed }), drain([1, 2, 3])], 1, true))).toEqual([]);
    });
  });
});
