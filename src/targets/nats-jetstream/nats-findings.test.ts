// Each finding of docs/nats.md, caught again from its committed artifact (docs/findings/nats/<name>):
// the stored post-crash image, exactly the disk the failed recovery saw, recovered by nats-server
// 2.9.10 through the driver (natively, on a copy of the image: no mount, no interleaving to hit)
// and judged with the runs the artifact recorded before the cut. The check and a distinctive part
// of its message must come back, and so must what the server said about the disk (its WRN or ERR
// line, or the driver's `opened stream` line with the state it recovered). Replaying a stored image
// is exact, so none of this depends on timing; `sh <artifact>/replay.sh` (which records the whole
// case again) is what docs/nats.md shows for each. A cluster finding (C1) stores one image per node,
// recovered together by three servers, as `powercut replay` recovers it first.
//
// A consumer's o.dat dates its pending deliveries from the moment it was written (its base timestamp
// is the wall clock, in seconds): recovered more than ack_wait (one hour) after the cut, every pending
// delivery has expired, and the consumer's first check of its pending list (0.5 to 1.5 s after start,
// consumer.go applyState) queues them all for redelivery, which changes what the drain sees. The gate
// recovers each state seconds after its cut, so the copy of the image gets a base timestamp of now
// (freshenPending): the same disk, recovered as the gate recovered it.
//
// Findings 8 to 12 are about a damaged disk (the gate's read-faults suite): their image is loaded as
// the disk of a fresh powercut mount, the artifact's recovery fault (a flipped bit or a read error at
// a byte of one file) is armed on it before the recovery starts, as replayRecovery arms
// case.recoveryFaults, and the recovery is judged as a damaged-disk history. The same image recovered
// without the fault passes: the damage is the cause.
//
// Two checks go beyond an artifact's own recovery, for what docs/nats.md says was found by hand: finding
// 2 recovers finding 11's image without the stream's meta files (the blocks are adopted: it passes), and
// finding 5's second test runs nats-server on its image without the driver, to show what ends the stall.
// That one depends on timing, loosely: its publish must come within the block cache's 5 s of the failed
// read (it comes within about half a second).
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { connect, createInbox, type NatsConnection } from '@nats-io/transport-node';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { describe, expect, it } from 'vitest';
import { copyStoredImage, isClusterCase, readArtifact, type ClusterArtifactCase } from '../../harness/artifacts.js';
import { nodeImageDir } from '../../../fusefs/protocol.js';
import { recoverClusterImage } from '../../harness/cluster/cluster-run.js';
import { storedClusterState, writeStoredFixImages } from '../../harness/cluster/explain-stored.js';
import { ID_BASE_PER_RUN, specFor } from '../../harness/crash-run.js';
import { startDaemon, type DaemonHandle } from '../../harness/daemon-process.js';
import { REPO_ROOT } from '../../harness/dist-path.js';
import { mergeTimeouts, runDriver } from '../../harness/driver-process.js';
import type { DriverSpec } from '../../harness/driver-spec.js';
import { judge, type Violation } from '../../harness/oracle.js';
import { NATS_SERVER_BINARY, onPath } from './env.js';
import { natsJetstream } from './index.js';
import { CONSUMER, seqOfAckSubject, STREAM, SUBJECT } from './queue.js';
import { freePort, serverConfigText } from './server.js';

const FINDINGS = path.join(REPO_ROOT, 'docs', 'findings', 'nats');
const STREAM_DIR = path.join('jetstream', '$G', 'streams', 'POWERCUT');

/** A varint (zigzag) or uvarint at `i` of `b`: its value and the index after it, or undefined if `b` ends inside it. */
function readVarint(b: Buffer, i: number, signed: boolean): { value: bigint; next: number } | undefined {
  let x = 0n;
  let shift = 0n;
  for (;;) {
    if (i >= b.length) return undefined;
    const c = b[i++];
    x |= BigInt(c & 0x7f) << shift;
    shift += 7n;
    if (c < 0x80) break;
  }
  return { value: signed ? (x >> 1n) ^ -(x & 1n) : x, next: i };
}
function putVarint(v: bigint): Buffer {
  let x = v >= 0n ? v << 1n : ~(v << 1n);
  const out: number[] = [];
  while (x >= 0x80n) {
    out.push(Number(x & 0x7fn) | 0x80);
    x >>= 7n;
  }
  out.push(Number(x));
  return Buffer.from(out);
}

/** Sets the base timestamp of every consumer's pending list under `store` to now (see the header comment). */
async function freshenPending(store: string): Promise<void> {
  const obs = path.join(store, STREAM_DIR, 'obs');
  if (!existsSync(obs)) return;
  for (const consumer of await readdir(obs)) {
    const file = path.join(obs, consumer, 'o.dat');
    if (!existsSync(file)) continue;
    const b = await readFile(file);
    if (b.length < 3 || b[0] !== 0x16 || b[1] !== 2) continue; // an empty, torn or other-version state: as it is
    let i: number | undefined = 2;
    for (let k = 0; k < 4 && i !== undefined; k++) i = readVarint(b, i, false)?.next; // ack floor and delivered, consumer and stream seqs
    const pending = i === undefined ? undefined : readVarint(b, i, false);
    if (!pending || pending.value === 0n) continue;
    const base = readVarint(b, pending.next, true);
    if (!base) continue; // torn inside the pending list: as it is
    const now = putVarint(BigInt(Math.round(Date.now() / 1000)));
    await writeFile(file, Buffer.concat([b.subarray(0, pending.next), now, b.subarray(base.next)]));
  }
}

/**
 * The stored post-crash image of an artifact recovered natively, as replay and exhaustive mode do, keeping
 * the driver's stderr (the server's log). `without`: files of the stream directory removed from the copy
 * first (a state derived by hand from the artifact's).
 */
async function recoverStored(name: string, without: readonly string[] = []): Promise<{ violations: Violation[]; stderr: string; image: string }> {
  const dir = path.join(FINDINGS, name);
  const a = await readArtifact(dir);
  expect(a.case.target).toBe('nats-jetstream');
  expect(a.case.recoveryCut, 'a finding is recovered once: its image is the state the final drain saw').toBeUndefined();
  const imageName = `cut-${a.cuts.length - 1}-after-crash`;
  const image = path.join(dir, 'images', imageName);
  const prior = a.runs.slice(0, -1);
  const scratch = await mkdtemp(path.join(existsSync('/dev/shm') ? '/dev/shm' : os.tmpdir(), 'powercut-nats-finding-'));
  try {
    // With its empty folders, which a clone lacks (images/<name>.dirs.json lists them).
    const queueDir = path.join(scratch, 'queue');
    expect(await copyStoredImage(dir, imageName, queueDir), image).toBe(true);
    for (const rel of without) {
      expect(existsSync(path.join(queueDir, STREAM_DIR, rel)), `${rel} in the stored image`).toBe(true);
      await rm(path.join(queueDir, STREAM_DIR, rel));
    }
    await freshenPending(queueDir);
    const spec: DriverSpec = { mode: 'drain', dir: queueDir, settings: a.case.settings, idBase: prior.length * ID_BASE_PER_RUN };
    const run = await runDriver({} as DaemonHandle, natsJetstream.driver, spec, false, mergeTimeouts());
    return { violations: judge({ target: natsJetstream.name, faultsInjected: false, runs: [...prior, run.record] }), stderr: run.stderr, image };
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}

/**
 * A read-fault finding: the stored post-crash image as the disk of a fresh mount, the artifact's
 * recovery faults armed before the recovery (as replayRecovery does), recovered through the driver
 * and judged as a damaged-disk history; with the number of reads the faults hit.
 */
async function recoverStoredDamaged(name: string): Promise<{ violations: Violation[]; stderr: string; image: string; hits: number }> {
  const dir = path.join(FINDINGS, name);
  const a = await readArtifact(dir);
  expect(a.case.target).toBe('nats-jetstream');
  expect(a.case.recoveryFaults, 'a read-fault finding names the damage its recoveries read').toHaveLength(1);
  expect(a.case.recoveryCut).toBeUndefined();
  const imageName = `cut-${a.cuts.length - 1}-after-crash`;
  const image = path.join(dir, 'images', imageName);
  const prior = a.runs.slice(0, -1);
  const scratch = await mkdtemp(path.join(os.tmpdir(), 'powercut-nats-damaged-'));
  try {
    const disk = path.join(scratch, 'image');
    expect(await copyStoredImage(dir, imageName, disk), image).toBe(true);
    await freshenPending(disk);
    const daemon = await startDaemon({ mountpoint: path.join(scratch, 'mnt'), socketPath: path.join(scratch, 'control.sock'), imageDir: disk });
    try {
      for (const f of a.case.recoveryFaults!) await daemon.client.fault(f);
      const run = await runDriver(daemon, natsJetstream.driver, specFor(daemon.mountpoint, a.case, 'drain', prior.length), false, mergeTimeouts());
      const hits = (await daemon.client.status()).readFaultsHit;
      const violations = judge({ target: natsJetstream.name, faultsInjected: false, damagedDisk: true, runs: [...prior, run.record] });
      return { violations, stderr: run.stderr, image, hits };
    } finally {
      await daemon.stop();
    }
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}

/**
 * nats-server on `storeDir` as the driver starts it (same configuration), without the driver, for what a
 * finding's text shows by hand on its image: a client connection, and the server's log kept (not printed).
 */
async function startServer(storeDir: string): Promise<{ nc: NatsConnection; log: () => string; stop: () => Promise<void> }> {
  const binary = onPath(NATS_SERVER_BINARY);
  if (!binary) throw new Error(`${NATS_SERVER_BINARY} is not on the PATH (Debian package nats-server)`);
  const confDir = await mkdtemp(path.join(os.tmpdir(), 'powercut-nats-by-hand-'));
  const port = await freePort();
  const conf = path.join(confDir, 'nats-server.conf');
  await writeFile(conf, serverConfigText(storeDir, port, ''));
  const proc = spawn(binary, ['-c', conf], { stdio: ['ignore', 'pipe', 'pipe'] });
  let log = '';
  proc.stdout.on('data', (d: Buffer) => (log += d.toString()));
  proc.stderr.on('data', (d: Buffer) => (log += d.toString()));
  const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
  const stopProc = async (signal: NodeJS.Signals) => {
    if (proc.exitCode === null && proc.signalCode === null) proc.kill(signal);
    await exited;
    await rm(confDir, { recursive: true, force: true });
  };
  for (const deadline = Date.now() + 10_000; ; ) {
    try {
      const nc = await connect({ servers: `127.0.0.1:${port}`, reconnect: false, timeout: 1_000 });
      return { nc, log: () => log, stop: async () => { await nc.close(); await stopProc('SIGTERM'); } };
    } catch (err) {
      if (Date.now() > deadline || proc.exitCode !== null) {
        await stopProc('SIGKILL');
        throw new Error(`nats-server accepted no connection: ${(err as Error).message}\n${log}`);
      }
      await new Promise((r) => setTimeout(r, 20));
    }
  }
}

/** Polls `cond` every 20 ms until it holds, for up to `ms`. */
async function until(cond: () => boolean | Promise<boolean>, ms = 5_000): Promise<void> {
  for (const deadline = Date.now() + ms; !(await cond()); ) {
    if (Date.now() > deadline) throw new Error(`not within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

const messages = (vs: Violation[], check: string) => vs.filter((v) => v.check === check).map((v) => v.message).join('\n');
const checks = (vs: Violation[]) => [...new Set(vs.map((v) => v.check))].sort();
const size = async (image: string, rel: string) => (await stat(path.join(image, STREAM_DIR, rel))).size;
const serverComplaints = (stderr: string) => stderr.split('\n').filter((l) => /\[(WRN|ERR)\]/.test(l));

// Concurrent: each finding recovers its own copy of its image with its own server on its own ports, and
// waits on the server most of the time (22 s of CPU in 71 s of wall, run alone on a busy machine). The one timed by hand runs alone.
describe.concurrent('nats-server 2.9.10 findings, from their committed artifacts (docs/nats.md)', () => {
  it('1. a PubAck is not durable: the recovered store is empty, the PubAcked events are gone and their seqs reused', async () => {
    const r = await recoverStored('1-puback-not-fsynced');
    expect(checks(r.violations)).toEqual(['at-least-once', 'monotonic-seqs']);
    expect(messages(r.violations, 'at-least-once')).toMatch(/were confirmed durable \(durableSeq reached \d+ in run 0 \(workload\)\) and never acked, but were not delivered after recovery/);
    expect(messages(r.violations, 'monotonic-seqs')).toMatch(/got seq 1 for event id 1000001, but seqs up to \d+ were confirmed durable/);
    expect(r.stderr).toMatch(/opened stream POWERCUT \(messages 0, seqs 0\.\.0\)/);
    expect(existsSync(path.join(r.image, 'jetstream', '$G')), 'nothing of the store reached the disk').toBe(false);
  }, 30_000);

  it('2. a stream directory without its meta.inf is skipped at start-up: the artifact loses seq 1 only because its block is not on the disk either, and a stream whose blocks are there is adopted whole when added again', async () => {
    const r = await recoverStored('2-stream-meta-not-fsynced');
    expect(checks(r.violations)).toEqual(['at-least-once', 'monotonic-seqs']);
    expect(r.stderr).toMatch(/\[WRN\]\s+Missing stream metafile for ".*\/streams\/POWERCUT\/meta\.inf"/);
    // The stream's folders are on the disk (empty: listed in the image's folder list, which a clone needs),
    // and no file of the store: neither meta.inf nor the block that held seq 1 (finding 1's loss).
    const dirs: string[] = JSON.parse(await readFile(`${r.image}.dirs.json`, 'utf8'));
    expect(dirs, 'the stream directory is on the disk').toContain(path.join(STREAM_DIR, 'msgs'));
    expect(dirs).toContain(path.join(STREAM_DIR, 'obs'));
    expect(existsSync(path.join(r.image, STREAM_DIR, 'meta.inf'))).toBe(false);
    expect(existsSync(path.join(r.image, STREAM_DIR, 'msgs', '1.blk')), 'seq 1\'s block').toBe(false);
    expect(r.stderr).toMatch(/opened stream POWERCUT \(messages 0, seqs 0\.\.0\)/);

    // The state with the blocks on the disk and no meta.inf (derived by hand: finding 11's image, two
    // messages fsynced by the driver, without the stream's meta files): the same warning, and the stream
    // added again adopts its blocks, so nothing is lost.
    const adopted = await recoverStored('11-consumer-state-no-checksum', ['meta.inf', 'meta.sum']);
    expect(await size(adopted.image, 'msgs/1.blk'), 'the block holds both records').toBeGreaterThan(2633 + 92);
    expect(adopted.stderr).toMatch(/\[WRN\]\s+Missing stream metafile for ".*\/streams\/POWERCUT\/meta\.inf"/);
    expect(adopted.stderr).toMatch(/opened stream POWERCUT \(messages 2, seqs 1\.\.2\)/);
    expect(adopted.violations).toEqual([]);
  }, 60_000);

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

  it('5. an index trusted over a torn record: the first read truncates the block, and the consumer stalls with durable messages undelivered', async () => {
    const r = await recoverStored('5-trusted-index-over-torn-record');
    // The drain stops at the unanswered pull, so the oracle judges no holes (it judges them only over a
    // completed drain); the artifact, recorded before that rule, also names seqs 1, 2, 3 under order.
    expect(checks(r.violations)).toEqual(['liveness']);
    expect(messages(r.violations, 'liveness')).toMatch(/a no_wait pull request got no answer within 3000 ms \(consumer powercut: ack floor 0, delivered 0, ack pending 0, pending 2; stream seqs 1\.\.2, 2 messages\)/);
    expect(r.stderr).toMatch(/opened stream POWERCUT \(messages 3, seqs 1\.\.3\)/);
    expect(r.stderr).toMatch(/\[ERR\] Received an error looking up message for consumer: malformed or corrupt message/);
  }, 30_000);

  it.sequential('5, by hand on its image: the stall ends at an accepted pull, which gets seqs 1 and 2; a message published first is written over them', async () => {
    const scratch = await mkdtemp(path.join(existsSync('/dev/shm') ? '/dev/shm' : os.tmpdir(), 'powercut-nats-finding5-'));
    try {
      for (const wake of ['pull', 'publish'] as const) {
        const store = path.join(scratch, wake);
        expect(await copyStoredImage(path.join(FINDINGS, '5-trusted-index-over-torn-record'), 'cut-0-after-crash', store)).toBe(true);
        let server = await startServer(store);
        try {
          const jsm = await jetstreamManager(server.nc);
          expect((await jsm.streams.info(STREAM)).state).toMatchObject({ messages: 3, first_seq: 1, last_seq: 3 });
          const delivered: number[] = [];
          const inbox = createInbox();
          // Status answers (408) carry no reply subject; a message's reply is its ack subject, naming its seq.
          server.nc.subscribe(inbox, { callback: (_err, m) => void (m.reply && delivered.push(seqOfAckSubject(m.reply))) });
          const pull = (request: object) => server.nc.publish(`$JS.API.CONSUMER.MSG.NEXT.${STREAM}.${CONSUMER}`, JSON.stringify(request), { reply: inbox });
          // The drain's pull: the first read truncates the block at the torn record 3 and fails; the consumer waits.
          pull({ batch: 64, no_wait: true });
          await until(async () => (await jsm.streams.info(STREAM)).state.messages === 2);
          await new Promise((r) => setTimeout(r, 300));
          expect(delivered, 'nothing delivered: the stall').toEqual([]);
          expect(server.log()).toMatch(/\[ERR\] Received an error looking up message for consumer: malformed or corrupt message/);
          if (wake === 'pull') {
            // A pull with expires is accepted and signals the consumer: seqs 1 and 2 come, seq 3 alone is gone.
            pull({ batch: 64, expires: 1_000_000_000 });
            await until(() => delivered.length >= 2);
            expect(delivered).toEqual([1, 2]);
            expect((await jsm.streams.info(STREAM)).state).toMatchObject({ messages: 2, first_seq: 1, last_seq: 2 });
            continue;
          }
          // Within the block cache's 5 s: the new message gets seq 3 again and is written at offset 0 of the
          // block, over seqs 1 and 2, which then read as missing and are gone after a restart.
          expect((await jetstream(server.nc).publish(SUBJECT, Buffer.from('woken'))).seq).toBe(3);
          await until(() => delivered.length >= 1);
          await new Promise((r) => setTimeout(r, 300));
          expect(delivered).toEqual([3]);
          expect(await jsm.streams.getMessage(STREAM, { seq: 1 })).toBeNull();
          expect(await jsm.streams.getMessage(STREAM, { seq: 2 })).toBeNull();
          const blk = await readFile(path.join(store, STREAM_DIR, 'msgs', '1.blk'));
          expect(blk.readBigUInt64LE(4), 'the seq of the block\'s first record').toBe(3n);
          await server.stop();
          server = await startServer(store);
          expect((await (await jetstreamManager(server.nc)).streams.info(STREAM)).state).toMatchObject({ messages: 1, first_seq: 3, last_seq: 3 });
        } finally {
          await server.stop();
        }
      }
    } finally {
      await rm(scratch, { recursive: true, force: true });
    }
  }, 60_000);

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

  it('8. a flipped bit in a record behind a trusted block index: the message reads as "no message found", and the consumer never delivers it', async () => {
    const r = await recoverStoredDamaged('8-damaged-record-reads-as-missing');
    expect(r.hits, 'reads the flipped bit hit').toBeGreaterThan(0);
    expect(checks(r.violations)).toEqual(['at-least-once', 'order']);
    expect(messages(r.violations, 'at-least-once')).toMatch(/seqs 1 \(event ids 1\) were confirmed durable \(durableSeq reached 4 in run 0 \(workload\)\) and never acked, but were not delivered after recovery/);
    // The index matches the block's last record, so 2.9.10 takes it as is: four messages, none checked.
    expect(r.stderr).toMatch(/Restored 4 messages/);
    expect(r.stderr).toMatch(/opened stream POWERCUT \(messages 4, seqs 1\.\.4\)/);
    // The only trace, in the server's log (the client gets no error): one line while the consumer works through its pending messages.
    expect(serverComplaints(r.stderr).join('\n')).toMatch(/\[ERR\] Received an error looking up message for consumer: malformed or corrupt message/);
    expect((await recoverStored('8-damaged-record-reads-as-missing')).violations, 'the same image without the flipped bit').toEqual([]);
  }, 60_000);

  it('9. a flipped bit in a block rebuilt at start-up: the block is cut at the damaged record, every later record goes with it, and seqs are handed out again', async () => {
    const r = await recoverStoredDamaged('9-damaged-record-truncates-block');
    expect(r.hits).toBeGreaterThan(0);
    expect(checks(r.violations)).toEqual(['at-least-once', 'liveness', 'monotonic-seqs', 'order']);
    expect(messages(r.violations, 'at-least-once')).toMatch(/seqs 1, 2, 3, 4, 5 \(event ids 1, 2, 3, 4, 5\) were confirmed durable/);
    expect(messages(r.violations, 'monotonic-seqs')).toMatch(/got seq 2 for event id 1000001, but seqs up to 5 were confirmed durable/);
    // Seven records on the disk, the first one damaged: none restored, and the damaged record's seq stays the last (finding 4's order).
    expect(r.stderr).toMatch(/Restored 0 messages/);
    expect(r.stderr).toMatch(/opened stream POWERCUT \(messages 0, seqs 1\.\.1\)/);
    expect(serverComplaints(r.stderr), 'nothing logged').toEqual([]);
    const intact = await recoverStored('9-damaged-record-truncates-block');
    expect(intact.violations).toEqual([]);
    expect(intact.stderr).toMatch(/opened stream POWERCUT \(messages 7, seqs 1\.\.7\)/);
  }, 60_000);

  it('10. a read error in a block rebuilt at start-up: the error is ignored and the block counts as empty; its seqs are handed out again', async () => {
    const r = await recoverStoredDamaged('10-read-error-block-counts-empty');
    expect(r.hits).toBeGreaterThan(0);
    expect(checks(r.violations)).toEqual(['at-least-once', 'liveness', 'monotonic-seqs']);
    expect(messages(r.violations, 'monotonic-seqs')).toMatch(/got seq 1 for event id 1000001, but seqs up to 2 were confirmed durable/);
    expect(r.stderr).toMatch(/Restored 0 messages/);
    expect(r.stderr).toMatch(/opened stream POWERCUT \(messages 0, seqs 1\.\.0\)/);
    // No warning at start-up; only the consumer's later reads of the block log the error (at least once:
    // the drain's reads after the liveness writes), and nothing else is logged.
    const complaints = serverComplaints(r.stderr);
    expect(complaints.length, 'the consumer\'s reads of the block log the read error').toBeGreaterThan(0);
    for (const l of complaints) expect(l).toMatch(/\[ERR\] Received an error looking up message for consumer: read .*\/msgs\/1\.blk: input\/output error/);
    const intact = await recoverStored('10-read-error-block-counts-empty');
    expect(intact.violations).toEqual([]);
    expect(intact.stderr).toMatch(/opened stream POWERCUT \(messages 2, seqs 1\.\.2\)/);
  }, 60_000);

  it('11. a flipped bit in the consumer\'s o.dat (no checksum): the consumer comes back past two unacked messages and never delivers them', async () => {
    const r = await recoverStoredDamaged('11-consumer-state-no-checksum');
    expect(r.hits).toBeGreaterThan(0);
    expect(checks(r.violations)).toEqual(['at-least-once', 'order']);
    expect(messages(r.violations, 'order')).toMatch(/skipped seqs 1, 2 \(event ids 1, 2\), which were never acked/);
    // On the disk: nothing delivered (delivered stream seq 0, byte 5); read with bit 1 flipped: delivered 2.
    const odat = await readFile(path.join(r.image, STREAM_DIR, 'obs', 'powercut', 'o.dat'));
    expect(odat.subarray(0, 6)).toEqual(Buffer.from([0x16, 0x02, 0x00, 0x00, 0x00, 0x00]));
    expect(r.stderr).toMatch(/opened stream POWERCUT \(messages 2, seqs 1\.\.2\), consumer powercut \(ack floor 0, delivered 2, ack pending 0,/);
    expect(serverComplaints(r.stderr), 'nothing logged').toEqual([]);
    expect((await recoverStored('11-consumer-state-no-checksum')).violations).toEqual([]);
  }, 60_000);

  it('12. a flipped bit in a block index\'s first seq: the index is rejected, but the rebuild keeps its first seq and drops every record below it', async () => {
    const r = await recoverStoredDamaged('12-rejected-index-first-seq');
    expect(r.hits).toBeGreaterThan(0);
    expect(checks(r.violations)).toEqual(['at-least-once', 'liveness', 'order']);
    expect(messages(r.violations, 'order')).toMatch(/skipped seqs 1, 2, 3, 4 /);
    // The index on the disk says first seq 1 (byte 5); read as 5, it fails the accounting check and is rebuilt from a first seq of 5.
    const idx = await readFile(path.join(r.image, STREAM_DIR, 'msgs', '1.idx'));
    expect(idx[5]).toBe(1);
    expect(r.stderr).toMatch(/Restored 0 messages/);
    expect(r.stderr).toMatch(/opened stream POWERCUT \(messages 0, seqs 5\.\.4\)/);
    expect(serverComplaints(r.stderr), 'nothing logged').toEqual([]);
    const intact = await recoverStored('12-rejected-index-first-seq');
    expect(intact.violations).toEqual([]);
    expect(intact.stderr).toMatch(/opened stream POWERCUT \(messages 3, seqs 1\.\.3\)/);
  }, 60_000);
});

describe('nats-server 2.9.10 cluster findings (replicas 3), from their committed artifacts (docs/nats.md, "Clusters")', () => {
  it('C1. a coordinated cut loses every PubAck: the three recovered stores are empty, the stream is created anew and its seqs start over', async () => {
    const dir = path.join(FINDINGS, 'C1-coordinated-cut-loses-pubacks');
    const a = await readArtifact(dir);
    expect(isClusterCase(a.case) && a.case.nodes).toBe(3);
    const c = a.case as ClusterArtifactCase;
    expect(c.state, 'a coordinated crash state: every node cut').toMatchObject({ policy: 'lose-unsynced' });
    expect(c.state!.nodes).toBeUndefined();
    const scratch = await mkdtemp(path.join(os.tmpdir(), 'powercut-nats-cluster-finding-'));
    try {
      // With its empty node folders, which a clone lacks (images/<name>.dirs.json lists them).
      expect(await copyStoredImage(dir, 'cut-0-after-crash', scratch)).toBe(true);
      for (const k of [0, 1, 2]) expect(await readdir(path.join(scratch, nodeImageDir(k))), `node ${k}'s disk kept nothing`).toEqual([]);
      const r = await recoverClusterImage(natsJetstream, c, scratch, c.nodes, a.runs[0], mergeTimeouts());
      expect(checks(r.violations)).toEqual(['at-least-once', 'monotonic-seqs']);
      expect(messages(r.violations, 'at-least-once')).toMatch(/seqs 1, 2, 3, 4 \(event ids 1, 2, 3, 4\) were confirmed durable/);
      expect(messages(r.violations, 'monotonic-seqs')).toMatch(/got seq 1 for event id 1000001, but seqs up to 4 were confirmed durable/);
      expect(r.drainStderr).toMatch(/opened stream POWERCUT \(messages 0, seqs 0\.\.0\)/);
    } finally {
      await rm(scratch, { recursive: true, force: true });
    }
  }, 60_000);

  // The causes explain named on the stored runs: their fix, applied to the run the artifact keeps,
  // writes every PubAcked message into the stream's block on each node it fixes, where the state
  // has none; exact, before any recovery. Recovering under the fix is a sample (the nodes elect
  // anew): explain's proof and replay's check did it, and docs/nats.md says how often it passed.
  it.each([
    ['C1-coordinated-cut-loses-pubacks', [0, 1, 2]],
    ['C2-majority-cut-overrules-full-node', [0, 1]],
  ])('%s: its stored cause names the stream\'s message block, and its fix, applied to the stored run, keeps it on the nodes it fixes', async (name, fixedNodes) => {
    const a = await readArtifact(path.join(FINDINGS, name));
    const cause = a.cause!;
    expect(cause.key).toBe('missing-fsync /jetstream/$G/streams/POWERCUT/msgs/*.blk write /jetstream/$G/streams/POWERCUT/msgs/*.blk');
    expect(cause.fix).toContain(`fsync the file /jetstream/$G/streams/POWERCUT/msgs/*.blk on ${fixedNodes.length === 3 ? 'nodes 0, 1, 2' : 'nodes 0, 1'} after every write`);
    expect(cause.proof).toMatchObject({ failing: 1, cured: 1, curesOwnState: true, broken: 0 });
    const out = await mkdtemp(path.join(os.tmpdir(), 'powercut-nats-fix-images-'));
    try {
      expect(await writeStoredFixImages(natsJetstream, storedClusterState(a)!, cause, out, mergeTimeouts())).toBe(true);
      const block = (which: string, node: number) => path.join(out, which, nodeImageDir(node), 'jetstream/$G/streams/POWERCUT/msgs/1.blk');
      for (const k of fixedNodes) {
        expect(existsSync(block('state', k)), `node ${k} lost the block in the state`).toBe(false);
        // Four records of 125, 125, 2,418 and 1,129 bytes with their headers: every PubAcked message.
        expect((await stat(block('fixed', k))).size, `node ${k}'s block under the fix`).toBe(4105);
      }
    } finally {
      await rm(out, { recursive: true, force: true });
    }
  }, 120_000);
});
