// The oracle on hand-made histories: for each check, a history it passes and one it fails.
import { describe, expect, it } from 'vitest';
import { judge, type CheckName, type History, type RunRecord } from './oracle.js';
import { outcomeProblems, type ContractDeclaration, type Outcome } from './outcome.js';
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
/** Every run starts with the built-in queue's hello: acks durable in batches of checkpointAcks, out-of-order acks not durable. */
const hello = (checkpointAcks: number): Outcome => ({ t: 'hello', protocol: 1, target: 'powercut-queue', replayBound: { ackBatchSize: checkpointAcks, outOfOrderAcksDurable: false } });
const history = (runs: RunRecord[], checkpointAcks = 1, faultsInjected = false): History => ({
  target: 'powercut-queue',
  faultsInjected,
  runs: runs.map((r) => ({ ...r, outcomes: [hello(checkpointAcks), ...r.outcomes] })),
});
const checks = (h: History): CheckName[] => [...new Set(judge(h).map((v) => v.check))];

// Five writes, durable up to 3.
const wrote5 = [open(), ...[1, 2, 3, 4, 5].flatMap((i) => write(i)), durable(3)];

/** A run cut at a power cut: a recovery drain (second cut) or a workload. */
const cut = (role: RunRecord['role'], outcomes: Outcome[]): RunRecord => run(role, outcomes, { killed: true, exitCode: null });
/** A final drain that delivered exactly `recoveredEvents`, acked them, and passed its liveness writes. */
function drainOf(recoveredEvents: Outcome[], opened = open()): RunRecord {
  const seqs = recoveredEvents.map((o) => (o as Extract<Outcome, { t: 'delivered' }>).seq);
  return run('drain', [opened, ...recoveredEvents, ...(seqs.length ? ack(...seqs) : []), { t: 'drained', count: seqs.length },
    ...write(1000, 100), delivered(100, 1000), ...ack(100), { t: 'done' }]);
}
// Seqs reused after a cut. Run 0 delivers and acks seqs it never got confirmed durable (2 and 3);
// the cut loses them (and 4). Run 1, a recovery drain cut late, opens at durableSeq 1 and writes new events
// 2001, 2002 and 2003, which get seqs 2, 3 and 4. An ack of seq 2 in run 0 says nothing about 2001.
const ackedThenLost = [open(), ...[1, 2, 3, 4].flatMap((i) => write(i)), durable(1), ...[1, 2, 3, 4].map((s) => delivered(s)), ...ack(1), ...ack(2), ...ack(3), durable(1, 2)];
const reusedBy = (tail: Outcome[]): RunRecord => cut('drain', [open(1, 2), { t: 'drained', count: 0 }, ...write(2001, 2), ...write(2002, 3), ...write(2003, 4), ...tail]);

describe('oracle', () => {
  // Found by the gate on the Python example: a cut swallowed seq 2's written line after its durable
  // line; the recovery drain delivered it (naming event 2), acked it durably, and was cut again.
  describe('a seq confirmed before its written line was seen is named by a later delivery', () => {
    const workload = cut('workload', [open(), ...write(1), { t: 'write-intent', id: 2, size: SIZE }, durable(2)]);
    it('its ack in the recovery drain counts: nothing is missing after the second cut', () => {
      const recovery = cut('drain', [open(2), delivered(1), delivered(2), ...ack(1, 2), durable(2, 3)]);
      expect(judge(history([workload, recovery, drainOf([], open(2, 3))]))).toEqual([]);
    });
    it('unacked, it must still come back', () => {
      const recovery = cut('drain', [open(2), delivered(1), delivered(2)]);
      expect(checks(history([workload, recovery, drainOf([delivered(1)], open(2))]))).toContain('at-least-once');
    });
  });

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
    it('identifies an event by its id, not its seq, when a never-durable seq is reused after a cut', () => {
      // The review's history: seq 2 (id 2) acked before its fsync in run 0; event 1000001 written
      // as seq 2 and confirmed durable in run 1; the final drain never delivers seq 2.
      const run0 = cut('workload', [open(), ...write(1), { t: 'waited', seq: 1 }, ...write(2), delivered(1), delivered(2), ...ack(2)]);
      const run1 = cut('drain', [open(1), delivered(1), ...ack(1), { t: 'drained', count: 1 }, ...write(1000001, 2), { t: 'waited', seq: 2 }]);
      // (Seq 1's ack returned in run 1 with ackBatchSize 1: it must not come back.)
      const v = judge(history([run0, run1, drainOf([])]));
      expect(v.map((x) => x.check)).toEqual(['at-least-once']);
      expect(v[0].message).toContain('seqs 2 (event ids 1000001) were confirmed durable (durableSeq reached 2 in run 1 (drain))');
      expect(judge(history([run0, run1, drainOf([delivered(2, 1000001)])]))).toEqual([]);
    });
    it('does not take an earlier event\'s ack for a confirmed seq whose write line the cut swallowed', () => {
      // Run 1 confirms durableSeq 3 before printing that 2002 got seq 3; the acked event 3 of run 0 is gone.
      const run1 = cut('drain', [open(1, 2), { t: 'drained', count: 0 }, { t: 'write-intent', id: 2001, size: SIZE }, { t: 'write-intent', id: 2002, size: SIZE },
        { t: 'written', id: 2001, seq: 2 }, durable(3, 2)]);
      const v = judge(history([cut('workload', ackedThenLost), run1, drainOf([delivered(2, 2001)])]));
      expect(v.map((x) => x.check)).toEqual(['at-least-once']);
      expect(v[0].message).toContain('seqs 3 were confirmed durable (durableSeq reached 3 in run 1 (drain))');
      expect(judge(history([cut('workload', ackedThenLost), run1, drainOf([delivered(2, 2001), delivered(3, 2002)])]))).toEqual([]);
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
    it('lets a batch hold the last ackBatchSize - 1 returned acks, and no earlier one', () => {
      // checkpointAcks 3, acks of 1, 2, 3, 4 returned one at a time in order: only 3 and 4 may come back.
      const w = [...wrote5, ...[1, 2, 3, 4].map((s) => delivered(s)), ...ack(1), ...ack(2), ...ack(3), ...ack(4)];
      expect(judge(history([cut('workload', w), drain([3, 4, 5])], 3))).toEqual([]);
      const v = judge(history([cut('workload', w), drain([2, 3, 4, 5])], 3));
      expect(v.map((x) => x.check)).toEqual(['bounded-replay']);
      expect(v[0].seqs).toEqual([2]);
      // It names the acked line that promised the ack (line 1 is the hello) and the bound it broke.
      expect(v[0].message).toContain('delivered seq 2 (event id 2) again after a power cut');
      expect(v[0].message).toContain('its ack call returned at line 21 of run 0 (workload) ("acked" after the ack-intent at line 20)');
      expect(v[0].message).toContain('declared ackBatchSize 3, so only the last 2 returned in-order acks may be lost at its cut, and 2 acked events joined after it');
      expect(v[0].message).toMatch(/\[target powercut-queue\]$/);
    });
    it('with ackBatchSize 1, catches an ack call that returned before its ack was durable', () => {
      const w = [...wrote5, delivered(1), delivered(2), ...ack(1)];
      const v = judge(history([cut('workload', w), drain([1, 2, 3])], 1));
      expect(v.map((x) => x.check)).toEqual(['bounded-replay']);
      expect(v[0].message).toContain('declared ackBatchSize 1, so only the last 0 returned in-order acks may be lost');
      expect(judge(history([cut('workload', w), drain([2, 3])], 1))).toEqual([]);
    });
    it('lets an ack call in flight at the cut come back, whatever its size', () => {
      const w = [...wrote5, ...[1, 2, 3].map((s) => delivered(s)), { t: 'ack-intent', seqs: [1, 2, 3] } as Outcome];
      expect(judge(history([cut('workload', w), drain([1, 2, 3])], 1))).toEqual([]);
    });
    it('lets out-of-order acks come back while the gap below them is open, and not once a returned ack closed it', () => {
      const outOfOrder = [...wrote5, ...[1, 2, 3].map((s) => delivered(s)), ...ack(3), ...ack(2)];
      expect(judge(history([cut('workload', outOfOrder), drain([1, 2, 3])], 1))).toEqual([]);
      // ack(1) closes the gap: with ackBatchSize 1 all three acks are durable when it returns.
      const closed = [...outOfOrder, ...ack(1)];
      const v = judge(history([cut('workload', closed), drain([1, 2, 3])], 1));
      expect(v.map((x) => x.seqs)).toEqual([[1], [2], [3]]);
      expect(v[2].message).toContain('and joined the in-order acks when line 22 acked the last lower seq');
      // A target whose out-of-order acks are durable (LevelDB's queue) may lose none of them with batch 1.
      const durableOutOfOrder: Outcome = { t: 'hello', protocol: 1, target: 'other', replayBound: { ackBatchSize: 1, outOfOrderAcksDurable: true } };
      const h = history([cut('workload', outOfOrder), drain([1, 2, 3])], 1);
      const other = judge({ ...h, target: 'other', runs: h.runs.map((r) => ({ ...r, outcomes: [durableOutOfOrder, ...r.outcomes.slice(1)] })) });
      expect(other.map((x) => x.seqs)).toEqual([[2], [3]]);
      expect(other[0].message).toContain('[target other]');
    });
    it('judges a recovery cut by a second power cut too, and an event by its last ack', () => {
      // Run 0 acks 1 in flight (may be lost); the recovery drain delivers 1 again, acks it (returned) and is cut.
      const w = [...wrote5, delivered(1), { t: 'ack-intent', seqs: [1] } as Outcome];
      const recovery = cut('drain', [open(3, 1), delivered(1), delivered(2), ...ack(1)]);
      expect(judge(history([cut('workload', w), recovery, drain([2, 3])], 1))).toEqual([]);
      const v = judge(history([cut('workload', w), recovery, drain([1, 2, 3])], 1));
      expect(v.map((x) => x.check)).toEqual(['bounded-replay']);
      expect(v[0].message).toContain('of run 1 (drain)');
      // The recovery itself delivering an event whose returned ack was promised durable fails too.
      const promised = [...wrote5, delivered(1), ...ack(1)];
      const v2 = judge(history([cut('workload', promised), cut('drain', [open(3, 1), delivered(1)]), drain([2, 3])], 1));
      expect(v2[0].message).toContain('run 1 (drain) delivered seq 1 (event id 1) again after a power cut');
    });
    it('counts as replayed only acked events, not new events that reuse an acked seq after a cut', () => {
      const fresh = judge(history([cut('workload', ackedThenLost), reusedBy([]), drainOf([delivered(2, 2001), delivered(3, 2002)])]));
      expect(fresh).toEqual([]);
      // Events 2 and 3 themselves survived the cut (their returned acks did not) and come back.
      const survived = cut('drain', [open(3, 2), { t: 'drained', count: 0 }]);
      const v = judge(history([cut('workload', ackedThenLost), survived, drainOf([delivered(2), delivered(3)])]));
      expect(v.map((x) => [x.check, x.seqs])).toEqual([['bounded-replay', [2]], ['bounded-replay', [3]]]);
    });
  });

  describe('a damaged disk (read faults during recovery)', () => {
    const w = [...wrote5];
    const damaged = (runs: RunRecord[]): History => ({ ...history(runs), faultsInjected: false, damagedDisk: true });
    it('accepts a recovery that reports the damage instead of going on', () => {
      const loud = run('drain', [open(3, 1), { t: 'error', where: 'open', message: 'page.1: record 2 fails its checksum' }], { exitCode: 3 });
      expect(judge(damaged([cut('workload', w), loud]))).toEqual([]);
      // Without the damage the same error is a liveness failure.
      expect(checks(history([cut('workload', w), loud]))).toEqual(['liveness']);
    });
    it('still fails a recovery that drops or corrupts what was confirmed, silently', () => {
      expect(checks(damaged([cut('workload', w), drain([1, 3])]))).toEqual(['at-least-once', 'order']);
      const corrupt = drainOf([delivered(1), { t: 'delivered', seq: 2, id: 2, size: SIZE, crc: 7 }, delivered(3)], open(3, 1));
      expect(checks(damaged([cut('workload', w), corrupt]))).toEqual(['integrity']);
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
    it('does not excuse a hole at a seq that was acked for another event before a cut', () => {
      // Run 1's events 2001-2003 (seqs 2-4) were never confirmed durable, so losing a tail is fine,
      // but skipping 2002 while delivering 2003 is a hole: seq 3 was acked in run 0 for event 3.
      const v = judge(history([cut('workload', ackedThenLost), reusedBy([]), drainOf([delivered(2, 2001), delivered(4, 2003)])]));
      expect(v.map((x) => x.check)).toEqual(['order']);
      expect(v[0].message).toContain('skipped seqs 3 (event ids 2002)');
      expect(judge(history([cut('workload', ackedThenLost), reusedBy([]), drainOf([delivered(2, 2001)])]))).toEqual([]);
    });
    describe('skips before the first delivered seq, judged from what the final open reports', () => {
      // Run 0: five writes, only 1-2 confirmed durable; 1-2 acked and that ack confirmed (first unacked 3).
      const acked12 = cut('workload', [open(), ...[1, 2, 3, 4, 5].flatMap((i) => write(i)), durable(2), delivered(1), delivered(2), ...ack(1, 2), durable(2, 3)]);
      it('fails when the queue reports 3-5 held and unacked but starts delivering at 5', () => {
        const v = judge(history([acked12, drainOf([delivered(5)], open(5, 3))]));
        expect(v.map((x) => x.check)).toEqual(['order']);
        expect(v[0].message).toContain('skipped seqs 3, 4 (event ids 3, 4), which were never acked, although its open reported seqs 3 to 5 held');
        expect(judge(history([acked12, drainOf([3, 4, 5].map((s) => delivered(s)), open(5, 3))]))).toEqual([]);
      });
      it('fails when nothing is delivered although the open reports unconfirmed seqs held', () => {
        const v = judge(history([acked12, drainOf([], open(5, 3))]));
        expect(v.map((x) => x.check)).toEqual(['order']);
        expect(v[0].seqs).toEqual([3, 4, 5]);
        // 3-5 lost at the cut (the open says so), then the liveness write reuses seq 3: no hole.
        expect(judge(history([acked12, run('drain', [open(2, 3), { t: 'drained', count: 0 }, ...write(1000, 3), delivered(3, 1000), ...ack(3), { t: 'done' }])]))).toEqual([]);
      });
      // nats-server 2.9.10 took a flipped bit in a record's seq field for the stream's last seq (docs/nats.md, finding 9).
      it('judges a claimed range of 2^43 seqs in bounded time and memory, listing the first and counting all', () => {
        const huge = 2 ** 43 + 1;
        const workload = cut('workload', [open(), ...write(1), ...write(2), durable(2)]);
        const v = judge(history([workload, drainOf([delivered(1), delivered(2)], open(huge, 1))]));
        // (and monotonic-seqs: the liveness write's seq 100 is below the claim)
        expect(v.map((x) => x.check)).toEqual(['order', 'monotonic-seqs']);
        expect(v[0].seqs).toHaveLength(1000);
        expect(v[0].seqs!.slice(0, 2)).toEqual([3, 4]);
        expect(v[0].message).toContain(`skipped seqs 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14 ... (${huge - 2} in all)`);
        // The same claim in a recovery cut short, then a final drain: what it confirmed must come back.
        const recovery = cut('drain', [open(huge, 1), delivered(1), delivered(2)]);
        const after = judge(history([workload, recovery, drainOf([delivered(1), delivered(2)], open(2, 1))]));
        expect(after.find((x) => x.check === 'at-least-once')!.message).toContain(`seqs 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14 ... (${huge - 2} in all)`);
      });
      it('starts at the reported first unacked seq, so a lucky durable ack or an acked event is no hole', () => {
        const acked3 = cut('workload', [...acked12.outcomes, delivered(3), ...ack(3)]);
        expect(judge(history([acked3, drainOf([delivered(4), delivered(5)], open(5, 4))]))).toEqual([]); // ack of 3 became durable unseen
        expect(judge(history([acked3, drainOf([delivered(4), delivered(5)], open(5, 3))]))).toEqual([]); // 3 acked: skipping it is allowed
        expect(judge(history([acked3, drainOf([delivered(5)], open(5, 4))])).map((x) => x.seqs)).toEqual([[4]]);
      });
      it('judges a reused seq by the event that holds it now', () => {
        // Seqs 2-4 hold run 1's events 2001-2003; seq 3 was acked for event 3 in run 0, not for 2002.
        const v = judge(history([cut('workload', ackedThenLost), reusedBy([]), drainOf([delivered(4, 2003)], open(4, 2))]));
        expect(v.map((x) => x.check)).toEqual(['order']);
        expect(v[0].message).toContain('skipped seqs 2, 3 (event ids 2001, 2002)');
        const ackedInRun1 = reusedBy([delivered(2, 2001), delivered(3, 2002), ...ack(2, 3)]);
        expect(judge(history([cut('workload', ackedThenLost), ackedInRun1, drainOf([delivered(4, 2003)], open(4, 2))]))).toEqual([]);
      });
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
    it('fails when a run reuses a seq its own open (or an earlier confirmation in it) reported durable', () => {
      const unconfirmed = cut('workload', [open(), ...write(1), ...write(2)]);
      const reused = cut('drain', [open(2), delivered(1), delivered(2), ...ack(1, 2), { t: 'drained', count: 2 }, ...write(1000001, 2)]);
      const v = judge(history([unconfirmed, reused, drainOf([])]));
      expect(v.map((x) => x.check)).toContain('monotonic-seqs');
      expect(v.find((x) => x.check === 'monotonic-seqs')!.message).toContain('got seq 2 for event id 1000001, but seqs up to 2 were confirmed durable in run 1 (drain)');
      const fine = cut('drain', [open(2), delivered(1), delivered(2), ...ack(1, 2), { t: 'drained', count: 2 }, ...write(1000001, 3)]);
      expect(judge(history([unconfirmed, fine, drainOf([])]))).toEqual([]);
    });
    it('does not count a confirmation printed after a write started against that write (concurrent writers)', () => {
      const w = [open(), { t: 'write-intent', id: 1, size: SIZE }, { t: 'write-intent', id: 2, size: SIZE }, durable(2), { t: 'written', id: 1, seq: 1 }, { t: 'written', id: 2, seq: 2 }] as Outcome[];
      expect(judge(history([run('workload', w), drain([1, 2])]))).toEqual([]);
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
    it('judges a wait the driver gave up (code ETIMEDOUT) as a hang: load-dependent, never proof of a failure', () => {
      const final = run('drain', [{ t: 'error', where: 'open', message: "node 1's replica did not open its queue within 15000 ms", code: 'ETIMEDOUT' }], { exitCode: 3 });
      const v = judge(history([run('workload', wrote5), final]));
      expect(v.map((x) => [x.check, x.hang])).toEqual([['liveness', true]]);
      expect(v[0].message).toContain('gave up waiting at open');
      const other = run('drain', [{ t: 'error', where: 'open', message: 'connect refused', code: 'ECONNREFUSED' }], { exitCode: 3 });
      expect(judge(history([run('workload', wrote5), other])).map((x) => [x.check, x.hang])).toEqual([['liveness', undefined]]);
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

  describe('the declared contract', () => {
    /** A history whose every run declares `contract` (the replay bound alone leaves the rest at its defaults). */
    const declaring = (runs: RunRecord[], contract: ContractDeclaration): History => ({
      target: 'job-server',
      faultsInjected: false,
      runs: runs.map((r) => ({ ...r, outcomes: [{ t: 'hello', protocol: 1, target: 'job-server', contract } as Outcome, ...r.outcomes] })),
    });
    const BOUND = { ackBatchSize: 1, outOfOrderAcksDurable: true };
    const defaults: ContractDeclaration = { replayBound: BOUND };

    describe('unconfirmedWrites: a lost unconfirmed write while a later one survives', () => {
      // The seen case: two producers, job 3 reached the disk before job 2, neither confirmed; the
      // recovered queue reports no seq range (open 0, 1) and delivers 1 and 3.
      const workload = cut('workload', [open(), ...write(1), { t: 'waited', seq: 1 }, { t: 'write-intent', id: 2, size: SIZE }, ...write(3)]);
      const recovery = drainOf([delivered(1), delivered(3)], open(0, 1));
      it('fails as a hole under the default (suffix), citing the delivered seq, never an empty range, and naming the declaration', () => {
        const v = judge(declaring([workload, recovery], defaults));
        expect(v.map((x) => x.check)).toEqual(['order']);
        expect(v[0].message).toContain('skipped seqs 2, which were never acked');
        expect(v[0].message).toContain('it delivered seq 3, and under "unconfirmedWrites": "suffix"');
        expect(v[0].message).not.toMatch(/seqs 1 to 0/);
        expect(v[0].message).toContain('declares "unconfirmedWrites": "holes"');
      });
      it('passes with holes declared', () => {
        expect(judge(declaring([workload, recovery], { ...defaults, unconfirmedWrites: 'holes' }))).toEqual([]);
      });
      it('with holes declared, still fails a missing seq that a line confirmed durable', () => {
        const holes = { ...defaults, unconfirmedWrites: 'holes' as const };
        const confirmed2 = cut('workload', [...workload.outcomes, { t: 'written', id: 2, seq: 2 }, { t: 'waited', seq: 3 }]);
        expect(checks(declaring([confirmed2, recovery], holes))).toEqual(['at-least-once']);
        // A recovered open names the highest seq it holds, and claims only what it then delivers:
        // its durableSeq 3 does not make the lost seq 2 owed, neither now nor after a second cut.
        expect(judge(declaring([workload, drainOf([delivered(1), delivered(3)], open(3, 1))], holes))).toEqual([]);
        const recoveryCut = cut('drain', [open(3, 1), delivered(1), delivered(3)]);
        expect(judge(declaring([workload, recoveryCut, drainOf([delivered(1), delivered(3)], open(3, 1))], holes))).toEqual([]);
        // ... but what it delivered under that claim must come back after the second cut.
        expect(checks(declaring([workload, recoveryCut, drainOf([delivered(1)], open(3, 1))], holes))).toEqual(['at-least-once']);
        // A confirmation after the open claims the seqs the session hands out, gaplessly.
        const wrote4 = cut('drain', [open(3, 1), delivered(1), delivered(3), { t: 'drained', count: 2 }, { t: 'write-intent', id: 1004, size: SIZE }, durable(4)]);
        const lost4 = judge(declaring([workload, wrote4, drainOf([delivered(1), delivered(3)], open(3, 1))], holes));
        expect(lost4.map((x) => x.check)).toEqual(['at-least-once']);
        expect(lost4[0].seqs).toEqual([4]);
      });
      it('names no declaration when the queue declared suffix itself', () => {
        const v = judge(declaring([workload, recovery], { ...defaults, unconfirmedWrites: 'suffix' }));
        expect(v.map((x) => x.check)).toEqual(['order']);
        expect(v[0].message).not.toContain('declares');
      });
    });

    describe('seqScope: seqs numbered per session', () => {
      // Everything written was acked durably; the restarted queue found nothing and numbers from 1 again.
      const allAcked = cut('workload', [open(), ...write(1), ...write(2), { t: 'waited', seq: 2 }, delivered(1), delivered(2), ...ack(1, 2), durable(2, 3)]);
      const restart = drainOf([], open(0, 1)); // its liveness write gets seq 100 ...
      const restartAt1 = run('drain', [open(0, 1), { t: 'drained', count: 0 }, ...write(1000, 1), delivered(1, 1000), ...ack(1), { t: 'done' }]);
      it('fails a clean restart at seq 1 under the default (forever), naming the declaration', () => {
        expect(judge(declaring([allAcked, restart], defaults))).toEqual([]);
        const v = judge(declaring([allAcked, restartAt1], defaults));
        expect(v.map((x) => x.check)).toEqual(['monotonic-seqs']);
        expect(v[0].message).toContain('declares "seqScope": "session"');
      });
      it('names the declaration where a seq reused after a reopen comes back as a replay of an acked seq (seen on the Python jobs queue)', () => {
        // Seq 1 acked durably; a reopen that found nothing gives seq 1 to event 2, and the cut's drain delivers it.
        const reopened = cut('workload', [open(), ...write(1), { t: 'waited', seq: 1 }, delivered(1), ...ack(1), durable(1, 2), open(0, 1), ...write(2, 1)]);
        const v = judge(declaring([reopened, drainOf([delivered(1, 2)], open(1, 1))], defaults)).filter((x) => x.check === 'bounded-replay');
        expect(v).toHaveLength(1);
        expect(v[0].message).toContain('seqs 1 came back under other event ids: a queue that numbers its seqs per session');
        // The same seq delivered again for the event that was acked under it is a replay, with no hint.
        const same = judge(declaring([cut('workload', [open(), ...write(1), { t: 'waited', seq: 1 }, delivered(1), ...ack(1), durable(1, 2)]), drainOf([delivered(1)], open(1, 1))], defaults));
        expect(same.filter((x) => x.check === 'bounded-replay').map((x) => x.message).join('\n')).not.toContain('declares');
      });
      it('names the declaration where a seq is reused within one run, across a reopen, and not where no reopen came between', () => {
        const reopened = cut('workload', [open(), ...write(1), { t: 'waited', seq: 1 }, delivered(1), ...ack(1), durable(1, 2), open(0, 1), ...write(2, 1)]);
        const v = judge(declaring([reopened, drainOf([], open(0, 1))], defaults)).filter((x) => x.check === 'monotonic-seqs');
        expect(v.map((x) => x.message)).toEqual([
          expect.stringContaining('got seq 1 for event id 2, but seqs up to 1 were confirmed durable in run 0 (workload) (a durable seq must never be reused; a queue that numbers its seqs per session'),
          expect.stringContaining('returned seq 1 twice, for event ids 1 and 2 (across a reopen; a queue that numbers its seqs per session'),
        ]);
        const noReopen = cut('workload', [open(), ...write(1), { t: 'waited', seq: 1 }, ...write(2, 1)]);
        const plain = judge(declaring([noReopen, drainOf([delivered(1)], open(1, 1))], defaults)).filter((x) => x.check === 'monotonic-seqs');
        expect(plain.length).toBeGreaterThan(0);
        expect(plain.map((x) => x.message).join('\n')).not.toContain('declares');
      });
      it('passes it with session declared, judging monotonic seqs within the session', () => {
        const session = { ...defaults, seqScope: 'session' as const };
        expect(judge(declaring([allAcked, restartAt1], session))).toEqual([]);
        // Within a session a confirmed seq still must not be handed out again.
        const reuse = run('workload', [open(), ...write(1), { t: 'waited', seq: 1 }, ...write(2, 1)], { killed: true, exitCode: null });
        expect(checks(declaring([reuse, drainOf([delivered(1)], open(1, 1))], session))).toContain('monotonic-seqs');
      });
      it('matches events across sessions by id: a confirmed event lost, or a durably acked one back under another seq, still fails', () => {
        const session = { ...defaults, seqScope: 'session' as const };
        const w = cut('workload', [open(), ...write(1), ...write(2), { t: 'waited', seq: 2 }]);
        // The recovered queue renumbered event 2 as seq 1 and lost event 1.
        const v = judge(declaring([w, drainOf([delivered(1, 2)], open(1, 1))], session));
        expect(v.map((x) => x.check)).toEqual(['at-least-once']);
        expect(v[0].message).toContain('event ids 1 (seqs 1 of their sessions) were confirmed durable (in run 0 (workload))');
        expect(judge(declaring([w, drainOf([delivered(1, 1), delivered(2, 2)], open(2, 1))], session))).toEqual([]);
        const acked = cut('workload', [...w.outcomes, delivered(1), ...ack(1), durable(2, 2)]);
        const back = judge(declaring([acked, drainOf([delivered(5, 1), delivered(6, 2)], open(6, 5))], { ...session, acksConfirmed: false }));
        expect(back.map((x) => x.check)).toEqual(['bounded-replay']);
        expect(back[0].message).toContain('delivered event id 1 (seq 5) again after a power cut although its ack was confirmed durable');
      });
      it('does not claim seqs no line named (the gapless rule is the forever scope\'s)', () => {
        // A durable line covers seq 2, whose written line the cut swallowed (a dummy write, say).
        const w = cut('workload', [open(), ...write(1), { t: 'write-intent', id: 2, size: SIZE }, durable(2)]);
        const forever = judge(declaring([w, drainOf([delivered(1)], open(1, 1))], defaults));
        expect(forever.map((x) => x.check)).toEqual(['at-least-once']);
        expect(forever[0].message).toContain('seqs are gapless');
        expect(judge(declaring([w, drainOf([delivered(1)], open(1, 1))], { ...defaults, seqScope: 'session' }))).toEqual([]);
      });
      it('refuses a history whose runs declare different scopes', () => {
        const h = declaring([allAcked, restart], defaults);
        h.runs[1].outcomes[0] = { t: 'hello', protocol: 1, target: 'job-server', contract: { ...defaults, seqScope: 'session' } };
        expect(() => judge(h)).toThrow(/declared "seqScope": "session" but run 0 \(workload\) "forever"/);
      });
    });

    it('acksConfirmed false: a returned ack promises nothing, a confirmed first unacked seq still does', () => {
      const w = cut('workload', [...wrote5, delivered(1), delivered(2), ...ack(1), ...ack(2)]);
      expect(checks(declaring([w, drain([1, 2, 3])], defaults))).toEqual(['bounded-replay']);
      expect(judge(declaring([w, drain([1, 2, 3])], { ...defaults, acksConfirmed: false }))).toEqual([]);
      const confirmedAck = cut('workload', [...w.outcomes, durable(3, 3)]);
      expect(checks(declaring([confirmedAck, drain([1, 2, 3])], { ...defaults, acksConfirmed: false }))).toEqual(['bounded-replay']);
    });

    it('deliveryOrder any: events may come in any order, each at most once per session', () => {
      const w = run('workload', wrote5);
      const outOfOrder = drainOf([delivered(3), delivered(1), delivered(2)]);
      const v = judge(declaring([w, outOfOrder], defaults));
      expect(v.map((x) => x.check)).toEqual(['order']);
      expect(v[0].message).toContain('declares "deliveryOrder": "any"');
      expect(judge(declaring([w, outOfOrder], { ...defaults, deliveryOrder: 'any' }))).toEqual([]);
      expect(checks(declaring([w, drainOf([delivered(3), delivered(1), delivered(3), delivered(2)])], { ...defaults, deliveryOrder: 'any' }))).toContain('order');
    });

    it('a declaration is validated field by field, naming what is wrong', () => {
      const problems = (hello: Record<string, unknown>) => outcomeProblems({ t: 'hello', protocol: 1, target: 'x', ...hello });
      expect(problems({ contract: defaults })).toEqual([]);
      expect(problems({ replayBound: BOUND })).toEqual([]);
      expect(problems({})).toEqual([expect.stringContaining('without its "contract" field')]);
      expect(problems({ contract: { ...defaults, seqScope: 'per-run' } })).toEqual(['"hello".contract.seqScope must be "forever" or "session", got "per-run"']);
      expect(problems({ contract: { ...defaults, holes: true } })).toEqual([expect.stringContaining('unknown field "holes" (known: replayBound, acksConfirmed, unconfirmedWrites, seqScope, deliveryOrder)')]);
      expect(problems({ contract: { seqScope: 'session' } })).toEqual([expect.stringContaining('without its "replayBound" field')]);
      expect(problems({ contract: defaults, replayBound: BOUND })).toEqual([expect.stringContaining('both "contract" and "replayBound"')]);
      expect(problems({ contract: { replayBound: { ackBatchSize: 0, outOfOrderAcksDurable: false } } })).toEqual([expect.stringContaining('contract.replayBound must be')]);
    });
  });
});
