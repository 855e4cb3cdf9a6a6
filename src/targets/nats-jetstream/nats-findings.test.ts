// Each finding of docs/nats.md, caught again from its committed artifact (docs/findings/nats/<name>):
// the stored post-crash image, exactly the disk the failed recovery saw, recovered by nats-server
// 2.9.10 through the driver (natively, on a copy of the image: no mount, no interleaving to hit)
// and judged with the runs the artifact recorded before the cut. The check and a distinctive part
// of its message must come back, and so must what the server said about the disk (its WRN or ERR
// line, or the driver's `opened stream` line with the state it recovered). Replaying a stored image
// is exact, so none of this depends on timing; `sh <artifact>/replay.sh` (which records the whole
// case again) is what docs/nats.md shows for each.
import { existsSync } from 'node:fs';
import { cp, mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { readArtifact } from '../../harness/artifacts.js';
import { ID_BASE_PER_RUN } from '../../harness/crash-run.js';
import type { DaemonHandle } from '../../harness/daemon-process.js';
import { REPO_ROOT } from '../../harness/dist-path.js';
import { mergeTimeouts, runDriver } from '../../harness/driver-process.js';
import type { DriverSpec } from '../../harness/driver-spec.js';
import { judge, type Violation } from '../../harness/oracle.js';
import { natsJetstream } from './index.js';

const FINDINGS = path.join(REPO_ROOT, 'docs', 'findings', 'nats');
const STREAM_DIR = path.join('jetstream', '$G', 'streams', 'POWERCUT');

/** The stored post-crash image of an artifact recovered natively, as replay and exhaustive mode do, keeping the driver's stderr (the server's log). */
async function recoverStored(name: string): Promise<{ violations: Violation[]; stderr: string; image: string }> {
  const dir = path.join(FINDINGS, name);
  const a = await readArtifact(dir);
  expect(a.case.target).toBe('nats-jetstream');
  expect(a.case.recoveryCut, 'a finding is recovered once: its image is the state the final drain saw').toBeUndefined();
  const image = path.join(dir, 'images', `cut-${a.cuts.length - 1}-after-crash`);
  expect(existsSync(image), image).toBe(true);
  const prior = a.runs.slice(0, -1);
  const scratch = await mkdtemp(path.join(existsSync('/dev/shm') ? '/dev/shm' : os.tmpdir(), 'powercut-nats-finding-'));
  try {
    const queueDir = path.join(scratch, 'queue');
    await cp(image, queueDir, { recursive: true, preserveTimestamps: true });
    const spec: DriverSpec = { mode: 'drain', dir: queueDir, settings: a.case.settings, idBase: prior.length * ID_BASE_PER_RUN };
    const run = await runDriver({} as DaemonHandle, natsJetstream.driver, spec, false, mergeTimeouts());
    return { violations: judge({ target: natsJetstream.name, faultsInjected: false, runs: [...prior, run.record] }), stderr: run.stderr, image };
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}

const messages = (vs: Violation[], check: string) => vs.filter((v) => v.check === check).map((v) => v.message).join('\n');
const checks = (vs: Violation[]) => [...new Set(vs.map((v) => v.check))].sort();
const size = async (image: string, rel: string) => (await stat(path.join(image, STREAM_DIR, rel))).size;

describe('nats-server 2.9.10 findings, from their committed artifacts (docs/nats.md)', () => {
  it('1. a PubAck is not durable: the recovered store is empty, the PubAcked events are gone and their seqs reused', async () => {
    const r = await recoverStored('1-puback-not-fsynced');
    expect(checks(r.violations)).toEqual(['at-least-once', 'monotonic-seqs']);
    expect(messages(r.violations, 'at-least-once')).toMatch(/were confirmed durable \(durableSeq reached \d+ in run 0 \(workload\)\) and never acked, but were not delivered after recovery/);
    expect(messages(r.violations, 'monotonic-seqs')).toMatch(/got seq 1 for event id 1000001, but seqs up to \d+ were confirmed durable/);
    expect(r.stderr).toMatch(/opened stream POWERCUT \(messages 0, seqs 0\.\.0\)/);
    expect(existsSync(path.join(r.image, 'jetstream', '$G')), 'nothing of the store reached the disk').toBe(false);
  }, 30_000);

  it('2. the stream disappears: its directory reached the disk, its meta.inf did not, and 2.9.10 skips it', async () => {
    const r = await recoverStored('2-stream-meta-not-fsynced');
    expect(checks(r.violations)).toEqual(['at-least-once', 'monotonic-seqs']);
    expect(r.stderr).toMatch(/\[WRN\]\s+Missing stream metafile for ".*\/streams\/POWERCUT\/meta\.inf"/);
    expect(existsSync(path.join(r.image, STREAM_DIR, 'msgs')), 'the stream directory is on the disk').toBe(true);
    expect(existsSync(path.join(r.image, STREAM_DIR, 'meta.inf'))).toBe(false);
  }, 30_000);

  it('3. the consumer\'s state reached the disk ahead of its stream\'s messages: recovered ahead of the stream, it skips the new messages', async () => {
    const r = await recoverStored('3-consumer-ahead-of-stream');
    expect(checks(r.violations)).toEqual(['liveness']);
    expect(messages(r.violations, 'liveness')).toMatch(/after recovery, new writes were not delivered back \(event ids 1000001, 1000002\)/);
    // Seqs 1..2 held, the consumer at delivered 4: the next publishes get seqs 3 and 4, which it has "delivered".
    expect(r.stderr).toMatch(/opened stream POWERCUT \(messages 2, seqs 1\.\.2\), consumer powercut \(ack floor 0, delivered 4, ack pending 4/);
    expect(r.stderr).not.toMatch(/Missing stream metafile/);
  }, 30_000);

  it('4. a torn last record is cut off but keeps its seq: every message appended to that block after recovery reads as missing', async () => {
    const r = await recoverStored('4-torn-last-record-keeps-seq');
    expect(checks(r.violations)).toEqual(['liveness', 'order']);
    expect(messages(r.violations, 'order')).toMatch(/skipped seqs 3 \(event ids 3\), which were never acked, although its open reported seqs 1 to 3 held/);
    expect(messages(r.violations, 'liveness')).toMatch(/after recovery, new writes were not delivered back \(event ids 1000001, 1000002, 1000003\)/);
    // Two messages, seqs 1..3: the truncated record's seq stayed the block's last.
    expect(r.stderr).toMatch(/opened stream POWERCUT \(messages 2, seqs 1\.\.3\)/);
  }, 30_000);

  it('5. an index trusted over a torn record: the first read truncates the block, and the consumer stops with durable messages undelivered', async () => {
    const r = await recoverStored('5-trusted-index-over-torn-record');
    expect(checks(r.violations)).toEqual(['liveness', 'order']);
    expect(messages(r.violations, 'order')).toMatch(/skipped seqs 1, 2, 3 \(event ids 1, 2, 3\)/);
    expect(messages(r.violations, 'liveness')).toMatch(/a no_wait pull request got no answer within 3000 ms \(consumer powercut: ack floor 0, delivered 0, ack pending 0, pending 2; stream seqs 1\.\.2, 2 messages\)/);
    expect(r.stderr).toMatch(/opened stream POWERCUT \(messages 3, seqs 1\.\.3\)/);
    expect(r.stderr).toMatch(/\[ERR\] Received an error looking up message for consumer: malformed or corrupt message/);
  }, 30_000);

  it('6. interest retention: the start-up purge of messages below the ack floor drops every consumer\'s pending list', async () => {
    const r = await recoverStored('6-interest-orphan-purge');
    expect(checks(r.violations)).toEqual(['at-least-once', 'order']);
    expect(messages(r.violations, 'at-least-once')).toMatch(/seqs 3, 4, 5, 6, 7, 8, 9, 10, 11, 12 \(event ids 3, 4, 5, 6, 7, 8, 9, 10, 11, 12\) were confirmed durable .* but were not delivered after recovery/);
    // On the disk the consumer has 10 messages delivered and unacked (its o.dat lists them); once
    // the server has recovered, it has none: delivered 12, ack floor 2, nothing pending.
    expect(r.stderr).toMatch(/opened stream POWERCUT \(messages 11, seqs 3\.\.13\), consumer powercut \(ack floor 2, delivered 12, ack pending 0,/);
    const odat = await readFile(path.join(r.image, STREAM_DIR, 'obs', 'powercut', 'o.dat'));
    expect(odat.subarray(0, 6)).toEqual(Buffer.from([0x16, 0x02, 0x02, 0x02, 0x0c, 0x0c])); // magic, version, ack floor 2/2, delivered 12/12
    expect(odat[6], 'pending entries in o.dat').toBe(10);
  }, 30_000);

  it('7. a work queue stream whose last block was emptied by acks: a torn first record resets its last seq, and seqs confirmed durable are handed out again', async () => {
    const r = await recoverStored('7-stream-seqs-restart');
    expect(checks(r.violations)).toEqual(['liveness', 'monotonic-seqs']);
    expect(messages(r.violations, 'monotonic-seqs')).toMatch(/run 1 \(drain, final\) got seq 1 for event id 1000001, but seqs up to 5 were confirmed durable in run 0 \(workload\)/);
    // First seq 6 (from the index), last seq 0: the recovered block kept no record and no last seq.
    expect(r.stderr).toMatch(/opened stream POWERCUT \(messages 0, seqs 6\.\.0\)/);
  }, 30_000);
});
