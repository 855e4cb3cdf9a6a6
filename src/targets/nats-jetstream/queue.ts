// NATS JetStream (nats-server 2.9.10, file storage, one server) as a queue with the built-in queue's
// API (DrivenQueue), through the official client (@nats-io/transport-node, @nats-io/jetstream 3.4.0).
//
// - open: start nats-server on the directory (its store is <dir>/jetstream), then look up the stream
//   and the durable pull consumer; create whichever is missing, as an application does at start-up.
//   The `open` line reports what the server holds: durableSeq = the stream's last seq,
//   durableFirstUnackedSeq = the consumer's ack floor + 1 (docs/nats.md, "Durability claims").
// - write = publish; the PubAck's seq is the seq. With pubAckDurable (NATS's documented meaning of
//   a PubAck) it is also a `durable` line.
// - read = a pull request {batch, no_wait}: whatever is there now; a read with a wait pulls again
//   every READ_POLL_MS until messages come or the wait is over (never `expires`: 2.9.10 can drop
//   such a request unanswered); ack = +ACK with the server's confirmation (what ackAck() does).
// - checkpoint: 2.9.10 has no call that makes anything durable. With pubAckDurable off, waitDurable
//   and checkpoint fsync the store's files and directories from the driver (the only way), and
//   claim what was PubAcked before that fsync began.
// - close = a clean stop of the server (SIGTERM).
// - replicas 3: three servers (cluster.ts), one per node; the client connects to all of them and
//   reconnects to another when its server goes; the stream and its consumers have 3 replicas. A
//   call that meets a leader election or a node's cut (no answer, no responders, the cluster not
//   ready) is retried within REPLICATED_RETRY_MS; a publish carries its event id as Nats-Msg-Id so
//   that a retry of one the stream did store is answered as its duplicate, with the first seq.
import { open as openFile, readdir } from 'node:fs/promises';
import path from 'node:path';
import { connect, createInbox, type NatsConnection } from '@nats-io/transport-node';
import {
  AckPolicy,
  DeliverPolicy,
  DiscardPolicy,
  JetStreamApiCodes,
  JetStreamApiError,
  jetstream,
  jetstreamManager,
  RetentionPolicy,
  StorageType,
  type ConsumerInfo,
  type JetStreamClient,
  type JetStreamManager,
  type StreamInfo,
} from '@nats-io/jetstream';
import type { DriverSpec } from '../../harness/driver-spec.js';
import type { Outcome } from '../../harness/outcome.js';
import { errnoOf } from '../errno-text.js';
import type { DrivenQueue } from '../node-driver.js';
import { NatsCluster, type ServerSide } from './cluster.js';
import { NatsServer, NatsServerError, START_TIMEOUT_MS } from './server.js';
import { natsMaxEventBytes, natsSettings, SMALL_BLOCKS_MAX_BYTES, type NatsSettings } from './settings.js';

export const STREAM = 'POWERCUT';
export const SUBJECT = 'powercut.events';
export const CONSUMER = 'powercut';
export const extraConsumerName = (i: number): string => `powercut-extra-${i + 1}`;
/** Long enough that nothing delivered is redelivered during a run: redelivery after ack_wait would break in-session order. */
export const ACK_WAIT_MS = 60 * 60 * 1000;
const MAX_ACK_PENDING = 20_000;
/** Answers to API calls, publishes and acks. */
const REQUEST_TIMEOUT_MS = 10_000;
/** Once a pull request got its first messages, the rest of its batch or its end comes within this (else the server is gone or stuck). */
const PULL_ANSWER_MS = 10_000;
/**
 * A read with a wait pulls again this often until messages come or the wait is over. Not one pull
 * request with `expires`: 2.9.10 drops a request whose expiry passes before its consumer's loop
 * serves it, without any answer (consumer.go nextWaiting; fixed in 2.9.16; docs/nats.md, "How the
 * driver maps the protocol"), so a short wait under load became a driver error.
 */
const READ_POLL_MS = 10;
/** Extra consumers fetch in batches of this many while catching up to an ack. */
const EXTRA_FETCH_BATCH = 256;
/** An I/O error on a cluster node's disk waits this long to see that node's server killed (its cut), under load. */
const CUT_EXIT_WAIT_MS = 2_000;
/** A closed connection waits this long for the server's exit, so the error can name it. */
const SERVER_EXIT_WAIT_MS = 200;
/** Pending deliveries looked up one by one at open, at most (a damaged o.dat can claim any range). */
const MAX_PENDING_LOOKUPS = 100_000;
/** Pulls in a row that brought only messages this session had already delivered, before a read gives up. */
const MAX_REDELIVERY_PULLS = 10;

/** A replicated stream's call is retried this long through a leader election (2.9.10: 4 to 9 s after the leader's last heartbeat) or a node's cut. */
export const REPLICATED_RETRY_MS = 30_000;
/** One attempt of a replicated stream's call: shorter than REQUEST_TIMEOUT_MS, so that a request lost with its server is retried soon. */
const REPLICATED_ATTEMPT_MS = 3_000;
/** A cluster that opens has this long to elect its meta leader, recover or create the stream and consumers, and elect their leaders. */
export const CLUSTER_READY_MS = 60_000;
const RETRY_PAUSE_MS = 200;

const RETENTION = { limits: RetentionPolicy.Limits, interest: RetentionPolicy.Interest, workqueue: RetentionPolicy.Workqueue } as const;

export interface DurableState {
  durableSeq: number;
  durableFirstUnackedSeq: number;
}

export class NatsQueueError extends Error {
  constructor(message: string, readonly code?: string, /** No answer or no responder: a replicated stream retries it. */ readonly transient = false) {
    super(message);
    this.name = 'NatsQueueError';
  }
}

/** Whether a failed call may succeed when tried again on a cluster: anything but the driver's own findings and the API's definite answers. */
function transient(err: unknown): boolean {
  if (err instanceof NatsQueueError) return err.transient;
  if (err instanceof NatsServerError) return false;
  // An I/O error of the driver's own fsync of the store (pubAckDurable off) is an answer: an fsync is not retried.
  if (/^E[A-Z]+$/.test(String((err as NodeJS.ErrnoException)?.code ?? ''))) return false;
  // A definite answer of the JetStream API (not found, bad request) stands; "temporarily unavailable" (503) and leader changes pass.
  // "No suitable peers for placement": a stream of 3 replicas is created only once 3 servers are up (a cut node restarting).
  if (err instanceof JetStreamApiError) return err.status === 503 || /not.*leader|unavailable|no.*leader|timeout|suitable peers|insufficient resources/i.test(err.message);
  return true;
}

/**
 * Runs `op` until it succeeds, a non-transient error, or `boundMs` (then its last error): a
 * replicated stream's calls across a leader election or a node's cut. `attempt` counts from 1.
 */
async function retrying<T>(boundMs: number, where: string, op: (attempt: number) => Promise<T>): Promise<T> {
  const deadline = Date.now() + boundMs;
  for (let attempt = 1; ; attempt++) {
    try {
      return await op(attempt);
    } catch (err) {
      if (!transient(err) || Date.now() + RETRY_PAUSE_MS >= deadline) throw err;
      process.stderr.write(`nats-jetstream driver: ${where}: ${(err as Error)?.message ?? String(err)} (attempt ${attempt}, tried again)\n`);
      await new Promise((r) => setTimeout(r, RETRY_PAUSE_MS));
    }
  }
}

/**
 * What a run has claimed, kept across a `reopen` step (a clean restart of the server): the claims of
 * the first open stand (what the store held when the run began), and only PubAcks or store fsyncs
 * add to them. A clean stop flushes but never fsyncs, so what the restarted server reports is not
 * more durable than before.
 */
const claimsOfRun = new WeakMap<DriverSpec, DurableState>();

/** One pulled message: its stream seq, the subject to ack it on, its bytes. */
interface Pulled {
  seq: number;
  reply: string;
  data: Buffer;
}

/** The stream seq in a JetStream ack subject: $JS.ACK.<stream>.<consumer>.<dc>.<sseq>.<dseq>.<ts>.<pending> (2.9), or the 12-token form. */
export function seqOfAckSubject(reply: string): number {
  const t = reply.split('.');
  const seq = t.length === 9 ? Number(t[5]) : t.length >= 11 ? Number(t[7]) : NaN;
  if (t[0] !== '$JS' || t[1] !== 'ACK' || !Number.isSafeInteger(seq) || seq < 1) throw new NatsQueueError(`not a JetStream ack subject: ${reply}`);
  return seq;
}

/** An extra consumer: what it was delivered and not yet acked (seq -> ack subject), and the highest seq it was delivered. */
interface Extra {
  name: string;
  held: Map<number, string>;
  lastSeen: number;
}

export class NatsQueue implements DrivenQueue {
  private failure: Error | undefined;
  private closed = false;
  private listeners = new Set<(s: DurableState) => void>();
  /** Delivered in this session: seq -> ack subject, until acked. */
  private delivered = new Map<number, string>();
  /** Every seq delivered in this session (a redelivery of one is dropped, and logged). */
  private seen = new Set<number>();
  private syncing: Promise<void> | undefined;
  private readonly maxEventBytes: number;

  private constructor(
    private readonly server: ServerSide,
    private readonly nc: NatsConnection,
    private readonly js: JetStreamClient,
    private readonly s: NatsSettings,
    private readonly claims: DurableState,
    private readonly extras: Extra[],
    spec: DriverSpec,
    /** Highest seq the server held or a PubAck returned: what an fsync of the store covers. */
    private pubAcked: number,
  ) {
    this.maxEventBytes = natsMaxEventBytes(spec.settings);
  }

  /**
   * Starts the server on spec.dir (replicas 3: a server per node of spec.nodes, each node's line
   * emitted as it starts), finds or creates the stream and consumers, and reports what it holds.
   */
  static async open(spec: DriverSpec, emit?: (o: Outcome) => void): Promise<NatsQueue> {
    const s = natsSettings(spec.settings);
    const replicated = s.replicas > 1;
    if (replicated && spec.nodes?.length !== s.replicas) {
      throw new NatsQueueError(`open: replicas ${s.replicas} runs a server per node of a cluster case, but the spec lists ${spec.nodes?.length ?? 'no'} nodes`);
    }
    if (!replicated && spec.nodes && spec.nodes.length > 1) {
      throw new NatsQueueError(`open: the spec lists ${spec.nodes.length} nodes, but replicas is 1 (one server): set replicas ${spec.nodes.length} to run a cluster`);
    }
    let started: { server: ServerSide; nc: NatsConnection };
    try {
      started = replicated ? await startCluster(spec, s, emit) : await NatsServer.start(spec.dir, s.serverConfig);
    } catch (err) {
      throw err instanceof NatsServerError ? new NatsQueueError(`open: ${err.message}`) : err;
    }
    const { server, nc } = started;
    try {
      // A cluster elects its meta leader, then the stream's and each consumer's: until then calls go unanswered or answer 503.
      const ready = <T>(where: string, op: () => Promise<T>) => (replicated ? retrying(CLUSTER_READY_MS, `open: ${where}`, op) : op());
      const timeout = replicated ? REPLICATED_ATTEMPT_MS : REQUEST_TIMEOUT_MS;
      // Its first call asks whether JetStream is enabled, which a cluster answers once its meta leader is elected.
      const jsm = await ready('JetStream', () => jetstreamManager(nc, { timeout }));
      const stream = await ready('the stream', async () => {
        try {
          return leaderOf(await ensureStream(jsm, s), replicated, `stream ${STREAM}`);
        } catch (err) {
          // 2.9.10 places a new R3 stream on three running servers only; a node cut while the
          // cluster first opens is restarted once the queue is open (node-driver.ts): so the queue
          // opens without the stream, which does not exist, and creates it at its first call.
          const down = server instanceof NatsCluster ? server.downNodes() : [];
          if (down.length > 0 && /suitable peers|insufficient resources/i.test((err as Error).message)) return null;
          throw err;
        }
      });
      const consumers = async (st: StreamInfo) => {
        const consumer = await ready(`consumer ${CONSUMER}`, async () => leaderOf(await ensureConsumer(jsm, CONSUMER), replicated, `consumer ${CONSUMER}`));
        const extras: Extra[] = [];
        for (let i = 0; i < s.extraConsumers; i++) {
          const info = await ready(`consumer ${extraConsumerName(i)}`, async () => leaderOf(await ensureConsumer(jsm, extraConsumerName(i)), replicated, `consumer ${extraConsumerName(i)}`));
          await ready(`redelivery on ${info.name}`, () => redeliverPending(nc, jsm, info, st));
          extras.push({ name: info.name, held: new Map(), lastSeen: info.delivered.stream_seq });
        }
        await ready(`redelivery on ${CONSUMER}`, () => redeliverPending(nc, jsm, consumer, st));
        return { consumer, extras };
      };
      if (stream === null) {
        const down = (server as NatsCluster).downNodes();
        process.stderr.write(`nats-jetstream driver: no stream ${STREAM}, and it cannot be placed while node ${down.join(', ')} is down (cut while the cluster opened): opened without it (nothing held); it and its consumers are created at the first call, once the node is restarted\n`);
        const claims = claimsOfRun.get(spec) ?? { durableSeq: 0, durableFirstUnackedSeq: 1 };
        claimsOfRun.set(spec, claims);
        const queue = new NatsQueue(server, nc, jetstream(nc, { timeout }), s, claims, [], spec, 0);
        queue.setUp = async () => {
          const st = await ready('the stream', async () => leaderOf(await ensureStream(jsm, s), replicated, `stream ${STREAM}`));
          queue.extras.push(...(await consumers(st)).extras);
        };
        return queue;
      }
      const { consumer, extras } = await consumers(stream);
      let claims = claimsOfRun.get(spec);
      if (!claims) {
        claims = { durableSeq: stream.state.last_seq, durableFirstUnackedSeq: consumer.ack_floor.stream_seq + 1 };
        claimsOfRun.set(spec, claims);
        process.stderr.write(
          `nats-jetstream driver: opened stream ${STREAM} (messages ${stream.state.messages}, seqs ${stream.state.first_seq}..${stream.state.last_seq}), ` +
            `consumer ${CONSUMER} (ack floor ${consumer.ack_floor.stream_seq}, delivered ${consumer.delivered.stream_seq}, ` +
            `ack pending ${consumer.num_ack_pending}, pending ${consumer.num_pending})\n`,
        );
      }
      // Everything the server holds now is covered by a later fsync of the store (a clean stop
      // flushed it all before this start).
      return new NatsQueue(server, nc, jetstream(nc, { timeout }), s, claims, extras, spec, stream.state.last_seq);
    } catch (err) {
      // Described before the kill: the server's state when open failed, not "killed by SIGKILL".
      const failure = asQueueError(err, 'open', server, true);
      await nc.close().catch(() => undefined);
      await server.kill();
      throw failure;
    }
  }

  durability(): DurableState {
    return { ...this.claims };
  }

  onDurable(listener: (s: DurableState) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private advance(seq: number): void {
    if (seq <= this.claims.durableSeq) return;
    this.claims.durableSeq = seq;
    const state = this.durability();
    for (const l of [...this.listeners]) l(state);
  }

  private check(): void {
    if (this.failure) throw this.failure;
    if (this.closed) throw new NatsQueueError('the queue is closed');
  }

  /** A cluster opened without its stream (a node cut while it opened): creates it and its consumers, once, before the first call. */
  private setUp: (() => Promise<void>) | undefined;
  private settingUp: Promise<void> | undefined;

  /** Runs one call; its first failure stops the queue (every later call rejects with it). */
  private async guard<T>(where: string, op: (attempt: number) => Promise<T>): Promise<T> {
    this.check();
    try {
      if (this.setUp) await (this.settingUp ??= this.setUp());
      return await (this.s.replicas > 1 ? retrying(REPLICATED_RETRY_MS, where, op) : op(1));
    } catch (err) {
      // A connection closed by the server's death is seen before its exit: wait for the exit, to name it.
      if (this.nc.isClosed()) await this.server.settle(SERVER_EXIT_WAIT_MS);
      this.failure ??= asQueueError(err, where, this.server);
      throw this.failure;
    }
  }

  write(data: Buffer): Promise<number> {
    return this.guard('publish', async (attempt) => {
      if (data.length > this.maxEventBytes) throw new NatsQueueError(`event of ${data.length} bytes is larger than ${this.maxEventBytes}, the largest the stream takes with these settings`);
      const id = data.length >= 4 ? data.readUInt32LE(0) : 0;
      const replicated = this.s.replicas > 1;
      const pa = await this.js.publish(SUBJECT, data, {
        timeout: replicated ? REPLICATED_ATTEMPT_MS : REQUEST_TIMEOUT_MS,
        // A replicated stream's publish may be retried: its id makes a retry of a stored one a duplicate.
        ...(this.s.msgId || replicated ? { msgID: String(id) } : {}),
      });
      // A retry's duplicate is the earlier attempt, stored under pa.seq.
      if (pa.duplicate && attempt === 1) throw new NatsQueueError(`the PubAck for event id ${id} says it is a duplicate of seq ${pa.seq}: it was published once`);
      this.pubAcked = Math.max(this.pubAcked, pa.seq);
      // NATS's documentation: a PubAck means the message "has been successfully persisted".
      if (this.s.pubAckDurable) this.advance(pa.seq);
      return pa.seq;
    });
  }

  async waitDurable(seq: number): Promise<void> {
    this.check();
    if (seq <= this.claims.durableSeq) return;
    if (seq > this.pubAcked) throw new NatsQueueError(`waitDurable(${seq}): no PubAck for that seq yet (highest ${this.pubAcked})`);
    if (this.s.pubAckDurable) throw new NatsQueueError(`invariant: seq ${seq} was PubAcked but durableSeq is ${this.claims.durableSeq}`);
    await this.syncStore(seq);
  }

  /** pubAckDurable off: fsyncs the store (one walk at a time, shared by concurrent waits) until `seq` is covered. */
  private async syncStore(seq: number): Promise<void> {
    while (this.claims.durableSeq < seq) {
      this.syncing ??= this.guard('fsync of the store', async () => {
        const covered = this.pubAcked;
        for (const [node, dir] of this.server.dirs.entries()) {
          try {
            await fsyncTree(dir);
          } catch (err) {
            // A cluster's node cut meanwhile: its disk answers EIO until it is remounted, and its
            // server is gone; its peers' fsynced stores hold what it held, and it catches up from them.
            if (!(this.server instanceof NatsCluster) || !(await this.server.cutWithin(node, CUT_EXIT_WAIT_MS))) throw err;
            process.stderr.write(`nats-jetstream driver: fsync of node ${node}'s store skipped: it was cut (${(err as Error).message})\n`);
          }
        }
        this.advance(covered);
      }).finally(() => {
        this.syncing = undefined;
      });
      await this.syncing;
    }
  }

  readBatch(maxEvents: number, timeoutMs: number): Promise<{ seq: number; data: Buffer }[]> {
    return this.guard('fetch', async () => {
      const deadline = Date.now() + timeoutMs;
      // An empty answer means "nothing to read" to the drain: a pull of redeliveries alone is pulled again.
      for (let redeliveryPulls = 0; redeliveryPulls < MAX_REDELIVERY_PULLS; ) {
        const got = await this.pullOrExplain(CONSUMER, maxEvents, timeoutMs > 0);
        const out: { seq: number; data: Buffer }[] = [];
        for (const m of got) {
          if (this.seen.has(m.seq)) {
            process.stderr.write(`nats-jetstream driver: seq ${m.seq} delivered again in the same session (dropped)\n`);
            continue;
          }
          this.seen.add(m.seq);
          this.delivered.set(m.seq, m.reply);
          out.push({ seq: m.seq, data: m.data });
        }
        if (out.length > 0) return out;
        if (got.length > 0) {
          redeliveryPulls++;
          continue;
        }
        const leftMs = deadline - Date.now();
        if (leftMs <= 0) return out;
        await new Promise((r) => setTimeout(r, Math.min(READ_POLL_MS, leftMs)));
      }
      throw new NatsQueueError(`${MAX_REDELIVERY_PULLS} pulls in a row brought only messages already delivered in this session`);
    });
  }

  /** How long one request may wait for its answer: short on a cluster, whose calls are retried. */
  private get requestTimeoutMs(): number {
    return this.s.replicas > 1 ? REPLICATED_ATTEMPT_MS : REQUEST_TIMEOUT_MS;
  }

  ack(seqs: readonly number[]): Promise<void> {
    // Looked up once: a retried ack sends the same replies again (a second +ACK of a seq is harmless).
    let looked: string[] | undefined;
    return this.guard('ack', async () => {
      if (seqs.length === 0) return;
      const replies = looked ?? seqs.map((seq) => {
        const reply = this.delivered.get(seq);
        if (reply === undefined) throw new NatsQueueError(`ack(${seq}): that seq was not delivered in this session`);
        return reply;
      });
      looked = replies;
      seqs.forEach((seq) => this.delivered.delete(seq));
      // +ACK with a reply subject: the server answers once it processed the ack (what ackAck() does).
      await Promise.all(replies.map((reply) => ackAck(this.nc, reply, this.requestTimeoutMs)));
      if (this.s.extraConsumersAck) for (const x of this.extras) await this.ackOnExtra(x, seqs);
    });
  }

  /**
   * A pull; a no_wait pull the server held unanswered is "nothing to deliver" when the consumer has
   * nothing new to deliver by the server's own count (what 2.9.10 does when a queued redelivery
   * names a seq the stream no longer holds: it counts it as a message to wait for, then skips it),
   * or when the read was `waiting`: nothing came within its wait, which a read with a wait may
   * return (the liveness check then judges it, as it did when the wait was the request's `expires`,
   * which 2.9.10 ends with a 408). Otherwise an error: an empty read without a wait means nothing is left.
   */
  private async pullOrExplain(consumer: string, batch: number, waiting = false): Promise<Pulled[]> {
    const got = await pull(this.nc, consumer, batch);
    if (got !== HELD) return got;
    const jsm = await jetstreamManager(this.nc, { timeout: this.requestTimeoutMs });
    const [c, st] = [await jsm.consumers.info(STREAM, consumer), await jsm.streams.info(STREAM)];
    const state = `consumer ${consumer}: ack floor ${c.ack_floor.stream_seq}, delivered ${c.delivered.stream_seq}, ack pending ${c.num_ack_pending}, ` +
      `pending ${c.num_pending}; stream seqs ${st.state.first_seq}..${st.state.last_seq}, ${st.state.messages} messages`;
    // On a cluster the consumer's leader may have gone with the request: tried again.
    if (c.num_pending > 0 && !waiting) throw new NatsQueueError(`a no_wait pull request got no answer within ${HELD_PULL_MS} ms (${state})`, undefined, this.s.replicas > 1);
    const why = c.num_pending > 0 ? 'in a read with a wait' : 'with nothing new to deliver';
    process.stderr.write(`nats-jetstream driver: the server held a no_wait pull request unanswered for ${HELD_PULL_MS} ms ${why}; taken as nothing (${state})\n`);
    return [];
  }

  /** Fetches on an extra consumer until it was delivered every seq up to the highest of `seqs`, then acks those of `seqs` it holds. */
  private async ackOnExtra(x: Extra, seqs: readonly number[]): Promise<void> {
    const highest = Math.max(...seqs);
    while (x.lastSeen < highest) {
      const got = await this.pullOrExplain(x.name, EXTRA_FETCH_BATCH);
      if (got.length === 0) break;
      for (const m of got) {
        if (!x.held.has(m.seq)) x.held.set(m.seq, m.reply);
        x.lastSeen = Math.max(x.lastSeen, m.seq);
      }
    }
    const mine = seqs.filter((seq) => x.held.has(seq));
    const replies = mine.map((seq) => x.held.get(seq)!);
    mine.forEach((seq) => x.held.delete(seq));
    await Promise.all(replies.map((reply) => ackAck(this.nc, reply, this.requestTimeoutMs)));
  }

  /** Replicas 3: restarts node k's server on its crashed disk (the harness cut it); the cluster serves on meanwhile. */
  async restartNode(node: number): Promise<void> {
    if (!(this.server instanceof NatsCluster)) throw new NatsQueueError(`restart of node ${node}: replicas is 1, there is no cluster`);
    try {
      await this.server.restartNode(node);
    } catch (err) {
      throw err instanceof NatsServerError ? new NatsQueueError(`restart of node ${node}: ${err.message}`) : err;
    }
  }

  /** 2.9.10 has no call that makes anything durable; with pubAckDurable off, the store is fsynced from here. */
  async checkpoint(): Promise<void> {
    this.check();
    if (!this.s.pubAckDurable && this.pubAcked > this.claims.durableSeq) await this.syncStore(this.pubAcked);
  }

  /**
   * A clean stop: the client closes, the server gets SIGTERM (it flushes its files; 2.9.10 fsyncs
   * none of them). A cluster first waits (bounded) for the restart of every node the harness cut.
   */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    let failure = this.failure;
    try {
      await this.nc.close();
    } catch (err) {
      failure ??= asQueueError(err, 'close', this.server);
    }
    if (this.s.replicas > 1) process.stderr.write('nats-jetstream driver: client closed; stopping the servers\n');
    try {
      await this.server.stop();
    } catch (err) {
      failure ??= asQueueError(err, 'close', this.server);
    }
    if (failure) throw failure;
  }
}

/** Starts a server per node and connects to them all: the client reconnects to another when its server goes. */
async function startCluster(spec: DriverSpec, s: NatsSettings, emit: ((o: Outcome) => void) | undefined): Promise<{ server: NatsCluster; nc: NatsConnection }> {
  const cluster = await NatsCluster.start(spec.nodes!, s.serverConfig, (node, pgid, restarted) => emit?.({ t: 'node', node, pgid, ...(restarted ? { restarted: true } : {}) }));
  try {
    const nc = await connect({
      servers: cluster.urls,
      // Node 0 first, then the others in order: the same server each run.
      noRandomize: true,
      ignoreClusterUpdates: true,
      reconnect: true,
      maxReconnectAttempts: -1,
      reconnectTimeWait: 100,
      // A server that stops answering (paused, or frozen at a cut) is left for another within ~3 s, not the default 2 minutes.
      pingInterval: 1_000,
      maxPingOut: 2,
      timeout: START_TIMEOUT_MS,
    });
    return { server: cluster, nc };
  } catch (err) {
    await cluster.kill();
    throw new NatsQueueError(`open: could not connect to the cluster at ${cluster.urls.join(', ')}: ${(err as Error).message}`);
  }
}

/** On a cluster, a stream's or consumer's info must name its leader (else it is tried again): before one is elected, nothing is served. */
function leaderOf<T extends StreamInfo | ConsumerInfo>(info: T, replicated: boolean, what: string): T {
  if (replicated && !info.cluster?.leader) throw new NatsQueueError(`${what} has no leader yet`, undefined, true);
  return info;
}

function streamConfig(s: NatsSettings) {
  return {
    name: STREAM,
    subjects: [SUBJECT],
    storage: StorageType.File,
    num_replicas: s.replicas,
    retention: RETENTION[s.retention],
    // A full stream refuses the publish (loud) rather than dropping old messages (silent); fitWorkload keeps runs below it.
    discard: DiscardPolicy.New,
    max_bytes: s.smallBlocks ? SMALL_BLOCKS_MAX_BYTES : -1,
    max_msg_size: s.maxMsgSize,
    ...(s.duplicateWindowMs > 0 ? { duplicate_window: duplicateWindowMs(s) * 1_000_000 } : {}),
  };
}

/**
 * A replicated stream's publishes are retried for up to REPLICATED_RETRY_MS, and a retry of one the
 * stream did store is told apart by its Nats-Msg-Id only within the duplicate window: so a cluster's
 * window covers every retry (a shorter one stored a retried event twice: the gate's seed 3, a live cut
 * of node 0 during two publishes with a 100 ms window).
 */
export const MIN_REPLICATED_DUPLICATE_WINDOW_MS = REPLICATED_RETRY_MS + 2 * REPLICATED_ATTEMPT_MS;

function duplicateWindowMs(s: NatsSettings): number {
  return s.replicas > 1 ? Math.max(s.duplicateWindowMs, MIN_REPLICATED_DUPLICATE_WINDOW_MS) : s.duplicateWindowMs;
}

function isApiError(err: unknown, code: number): boolean {
  return err instanceof JetStreamApiError && err.code === code;
}

/** The stream, created if the server does not have it (a new store, or one a cut took). */
async function ensureStream(jsm: JetStreamManager, s: NatsSettings): Promise<StreamInfo> {
  try {
    return await jsm.streams.info(STREAM);
  } catch (err) {
    if (!isApiError(err, JetStreamApiCodes.StreamNotFound)) throw err;
  }
  return jsm.streams.add(streamConfig(s));
}

/** A durable pull consumer with explicit acks from the first seq, created if the server does not have it. */
async function ensureConsumer(jsm: JetStreamManager, name: string): Promise<ConsumerInfo> {
  try {
    return await jsm.consumers.info(STREAM, name);
  } catch (err) {
    if (!isApiError(err, JetStreamApiCodes.ConsumerNotFound)) throw err;
  }
  return jsm.consumers.add(STREAM, {
    durable_name: name,
    ack_policy: AckPolicy.Explicit,
    deliver_policy: DeliverPolicy.All,
    ack_wait: ACK_WAIT_MS * 1_000_000,
    max_deliver: -1,
    max_ack_pending: MAX_ACK_PENDING,
  });
}

/**
 * Messages delivered before the server stopped (or the power went) and never acked are pending in
 * the recovered consumer: 2.9.10 redelivers them only once ack_wait has passed since their delivery,
 * and then after any newer message it delivered meanwhile. A drain needs them now and first, as a
 * queue gives back its unacked events: so NAK each seq in (ack floor, last delivered], in order, on
 * subjects made like the server's own ack subjects. The server ignores a NAK for a seq that is not
 * pending (consumer.go processNak) and queues the others for redelivery in that order; redeliveries
 * go out before new messages. Only seqs the stream holds are NAKed (each is looked up): a queued
 * redelivery of a seq it does not hold (below its first seq, deleted, or above its last seq: a
 * consumer whose state survived a cut that its stream's messages did not) makes 2.9.10's consumer
 * stop at it until a new message arrives (consumer.go getNextMsg returns the load error,
 * loopAndGatherMsgs waits), and a no_wait pull counts it as a message to wait for.
 */
async function redeliverPending(nc: NatsConnection, jsm: JetStreamManager, info: ConsumerInfo, stream: StreamInfo): Promise<void> {
  if (info.num_ack_pending === 0) return;
  const dseq = info.delivered.consumer_seq;
  const from = Math.max(info.ack_floor.stream_seq + 1, stream.state.first_seq);
  const to = Math.min(info.delivered.stream_seq, stream.state.last_seq);
  if (to - from + 1 > MAX_PENDING_LOOKUPS) {
    throw new NatsQueueError(`consumer ${info.name} claims ${to - from + 1} pending deliveries (stream seqs ${from}..${to}), more than the ${MAX_PENDING_LOOKUPS} the driver looks up one by one`);
  }
  const held: number[] = [];
  const missing: number[] = [];
  for (let seq = from; seq <= to; seq++) {
    // Asked one by one: a recovered 2.9.10 stream's first seq and deleted count are not always right
    // (an empty last block can make its first seq come out 0).
    if ((await jsm.streams.getMessage(STREAM, { seq })) !== null) held.push(seq);
    else missing.push(seq);
  }
  // Asked once more: the first read of a block whose index 2.9.10 trusted can hit a damaged record,
  // which makes the server rebuild (and truncate) the block and answer "no message found" for that
  // read alone, also for a message before the damage that it still holds (docs/nats.md, finding 5).
  for (const seq of missing) {
    if ((await jsm.streams.getMessage(STREAM, { seq })) !== null) held.push(seq);
  }
  held.sort((a, b) => a - b);
  await Promise.all(held.map((seq) => nc.request(`$JS.ACK.${STREAM}.${info.name}.1.${seq}.${dseq}.0.0`, '-NAK', { timeout: REQUEST_TIMEOUT_MS })));
}

async function ackAck(nc: NatsConnection, reply: string, ackTimeoutMs = REQUEST_TIMEOUT_MS): Promise<void> {
  await nc.request(reply, '+ACK', { timeout: ackTimeoutMs });
}

/** A pull request the server neither answered nor ended within HELD_PULL_MS although it asked for no wait. */
const HELD = Symbol('held');
/** How long a no_wait pull may go unanswered before the driver asks why (the server holds it when it counts undeliverable redeliveries). */
const HELD_PULL_MS = 3_000;

/**
 * One no_wait pull request: up to `batch` messages; the server answers at once with what it has (404
 * if nothing, 408 at the end of what it has). Never with `expires` (READ_POLL_MS says why): without
 * it, 2.9.10 never ends a request for its age, so every request is answered or held. One that gets
 * no answer at all within HELD_PULL_MS resolves to HELD (the subscription is dropped, so the server
 * drops the request too: it delivers only to requests with interest).
 */
function pull(nc: NatsConnection, consumer: string, batch: number): Promise<Pulled[] | typeof HELD> {
  return new Promise((resolve, reject) => {
    const inbox = createInbox();
    const got: Pulled[] = [];
    let timer: NodeJS.Timeout | undefined;
    let done = false;
    const finish = (err?: Error, held = false) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      sub.unsubscribe();
      if (err) reject(err);
      else resolve(held ? HELD : got);
    };
    const sub = nc.subscribe(inbox, {
      callback: (err, m) => {
        if (err) return finish(err);
        clearTimeout(timer);
        if (m.reply?.startsWith('$JS.ACK.')) {
          try {
            got.push({ seq: seqOfAckSubject(m.reply), reply: m.reply, data: Buffer.from(m.data) });
          } catch (e) {
            return finish(e as Error);
          }
          if (got.length >= batch) finish();
          else armTimer(PULL_ANSWER_MS);
          return;
        }
        const code = m.headers?.code ?? 0;
        const description = m.headers?.description ?? '';
        // 404 No Messages, 408 Request Timeout: the request is over.
        if (code === 404 || (code === 408 && /timeout/i.test(description))) return finish();
        // 503: no consumer leader (an election on a cluster); 409 Leadership Change: it moved. A cluster's queue tries again.
        const passing = Number(code) === 503 || (Number(code) === 409 && /leader/i.test(description));
        finish(new NatsQueueError(`pull request to consumer ${consumer} answered ${code || '(no status)'} ${description}`.trim(), undefined, passing));
      },
    });
    const armTimer = (ms: number) => {
      clearTimeout(timer);
      timer = setTimeout(() => {
        if (got.length === 0) finish(undefined, true);
        else finish(new NatsQueueError(`pull request to consumer ${consumer}: no answer within ${ms} ms`, undefined, true));
      }, ms);
    };
    armTimer(HELD_PULL_MS);
    const request = { batch, no_wait: true };
    nc.publish(`$JS.API.CONSUMER.MSG.NEXT.${STREAM}.${consumer}`, JSON.stringify(request), { reply: inbox });
  });
}

/** fsyncs every file under <root>/jetstream, then every directory bottom-up, then root: what 2.9.10 never does. */
export async function fsyncTree(root: string): Promise<void> {
  const files: string[] = [];
  const dirs: string[] = [];
  const walk = async (dir: string): Promise<void> => {
    let entries;
    try {
      entries = await readdir(dir, { withFileTypes: true });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
      throw err;
    }
    dirs.push(dir);
    for (const e of entries) {
      const p = path.join(dir, e.name);
      if (e.isDirectory()) await walk(p);
      else if (e.isFile()) files.push(p);
    }
  };
  await walk(path.join(root, 'jetstream'));
  for (const f of files) await fsyncPath(f);
  for (const d of dirs.reverse()) await fsyncPath(d);
  await fsyncPath(root);
}

async function fsyncPath(p: string): Promise<void> {
  let fd;
  try {
    fd = await openFile(p, 'r');
  } catch (err) {
    // Removed by the server meanwhile (a temporary file, a block it deleted): nothing to keep.
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw err;
  }
  try {
    await fd.sync();
  } finally {
    await fd.close();
  }
}

/** The queue's error for a failure at `where`, naming the server's exit and log if it is gone (or always, with `withLog`). */
function asQueueError(err: unknown, where: string, server: ServerSide, withLog = false): Error {
  if (err instanceof NatsQueueError && err.message.startsWith(where)) return err;
  // A NatsServerError already names the server's exit and log.
  if (err instanceof NatsServerError) return new NatsQueueError(`${where}: ${err.message}`);
  const text = (err as Error | undefined)?.message ?? String(err);
  // The errno comes from the error alone: the server's log may name an older, unrelated I/O error.
  const errno = errnoOf(err, text);
  const state = server.exitDescription() ?? (withLog ? 'is running' : undefined);
  const message = `${where}: ${text}${state ? ` (${server.describe(state)})` : ''}`;
  return new NatsQueueError(message, errno);
}
