// A replicated queue: N independent copies of the built-in queue, one per node on its own disk,
// behind a tiny primary/backup protocol run by the driver (the primary). Every write, read and ack
// goes to every running node in one order, so their seqs agree. A write is confirmed durable once
// a majority of nodes made it durable; an ack once a majority's ack calls returned. Recovery
// trusts what a majority holds: the nodes open their disks, the cluster's durable seq is the
// majority-th highest of theirs, and every node is made a copy of one that holds exactly that.
// After one node's cut the others go on; the restarted node is brought back up to date from what
// this session wrote, read and acked before it serves again.
// The order is the primary's: each replica applies its requests one at a time as they arrive, so
// a read meets the same writes on every node and delivers the same seqs (checked). Nothing blocks
// inside a replica: the primary admits a write only once the backlog leaves room (backpressure
// counted here, from what the nodes recovered and what this session wrote and acked).
import { closeSync, copyFileSync, fsyncSync, openSync, readdirSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { ClusterNodeSpec, DriverSpec } from '../../../harness/driver-spec.js';
import { TIMED_OUT, type Outcome } from '../../../harness/outcome.js';
import type { DrivenQueue } from '../../node-driver.js';
import { pollUntil } from '../../poll-until.js';
import { BackpressureTimeoutError, validateSettings } from '../../../queue/index.js';
import { recordBytes } from '../../../queue/format.js';
import type { QueueSettings } from '../../../queue/types.js';
import { InProcessReplica } from './in-process-replica.js';
import { REPLICA_QUEUE_VARIANTS, replicaSettings } from './replica-variants.js';
import { ReplicaDown, ReplicaProcess, type Backlog, type DurableState, type Replica } from './replica.js';

/** The known-bad variant: the primary confirms a write once its own disk has it, then replicates it. */
export const ASYNC_REPLICATION = 'async-replication';

/** How long a restart waits to see the cut node's old server gone. */
const RESTART_EXIT_WAIT_MS = 5_000;

/**
 * How long the run's end waits for the harness to restart a node it cut (docs/driver-protocol.md,
 * "Clusters"): the harness asks only once it has reaped the node, which under load may come after
 * the workload's last step; a run that ended first would never restart it.
 */
export const RESTART_AWAIT_MS = 20_000;

/** The k-th largest of the values (k from 1). */
function kthLargest(values: readonly number[], k: number): number {
  return [...values].sort((a, b) => b - a)[k - 1] ?? 0;
}

/** Makes `dest` a durable copy of `src` (both a node's queue directory; flat files). */
function copyQueueDir(src: string, dest: string): void {
  for (const name of readdirSync(dest)) rmSync(join(dest, name), { recursive: true, force: true });
  for (const name of readdirSync(src)) {
    if (!statSync(join(src, name)).isFile()) continue;
    copyFileSync(join(src, name), join(dest, name));
    fsyncPath(join(dest, name));
  }
  fsyncPath(dest);
}

function fsyncPath(p: string): void {
  const fd = openSync(p, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

export class ReplicatedQueue implements DrivenQueue {
  private readonly replicas: (Replica | null)[];
  private readonly majority: number;
  private confirmed: DurableState;
  private listeners: ((s: DurableState) => void)[] = [];
  private lastSeq: number;
  /** This session's writes, by seq: what a restarted node is given again. */
  private readonly written = new Map<number, Buffer>();
  /** This session's deliveries and acks, for the same. */
  private readonly delivered = new Set<number>();
  private readonly acked = new Set<number>();
  /** A restart brings a node up to date while nothing else runs: operations wait for it. */
  private restarting: Promise<void> = Promise.resolve();
  /** The async-replication variant's backups get each operation after the primary, in order. */
  private backupChain: Promise<unknown> = Promise.resolve();
  private waiters: { seq: number; resolve: () => void }[] = [];
  /** Backpressure, counted by the primary: unacked events and their record bytes, writes waiting (FIFO). */
  private readonly limits: Pick<QueueSettings, 'maxBytes' | 'maxEvents' | 'writeTimeoutMs'>;
  private readonly backlog: Backlog;
  private readonly deliveredBytes = new Map<number, number>();
  private spaceWaiters: { bytes: number; resolve: () => void }[] = [];
  /** Restarts asked for and not finished: the run's end waits for them. */
  private readonly restartsInFlight = new Set<Promise<void>>();

  private constructor(
    private readonly nodes: readonly ClusterNodeSpec[],
    private readonly settings: Record<string, unknown>,
    private readonly variant: string | undefined,
    private readonly emit: (o: Outcome) => void,
    replicas: (Replica | null)[],
    recovered: DurableState,
    backlog: Backlog,
    /** Nodes whose server was killed while the cluster opened (their cut): the harness restarts them. */
    private readonly killedAtOpen: Set<number>,
    /** Its nodes run in this process (the spec's offline): none can be cut, so none restarted. */
    private readonly offline: boolean,
  ) {
    this.replicas = replicas;
    const { maxBytes, maxEvents, writeTimeoutMs } = validateSettings(settings as Partial<QueueSettings>);
    this.limits = { maxBytes, maxEvents, writeTimeoutMs };
    this.backlog = { ...backlog };
    this.majority = Math.floor(nodes.length / 2) + 1;
    this.confirmed = recovered;
    this.lastSeq = recovered.durableSeq;
    for (const r of replicas) if (r) this.watch(r);
  }

  static async open(spec: DriverSpec, emit: (o: Outcome) => void): Promise<ReplicatedQueue> {
    const nodes = spec.nodes;
    if (!nodes) throw new Error('the replicated queue runs on a cluster: the spec must list its nodes');
    if (spec.variant !== undefined && spec.variant !== ASYNC_REPLICATION && !(spec.variant in REPLICA_QUEUE_VARIANTS)) throw new Error(`unknown variant '${spec.variant}' (the replicated queue has ${[ASYNC_REPLICATION, ...Object.keys(REPLICA_QUEUE_VARIANTS)].join(', ')})`);
    // Each replica's queue runs the variant's single-disk one, if it has one (replica-variants.ts).
    const nodeSettings = replicaSettings(spec.settings, spec.variant);
    // A node cut while the cluster opens is down (the harness restarts it): a majority must open.
    const killedAtOpen = new Set<number>();
    /** Nodes whose server did not open in time: a busy machine, not the queue, may be why. */
    const timedOut = new Set<number>();
    // An offline drain (no node of it is cut) runs its nodes in this process: the same queue code, no process to start.
    const startAll = async () => (await Promise.allSettled(nodes.map((n) => (spec.offline ? InProcessReplica.start(n.node, n.dir, nodeSettings) : ReplicatedQueue.startNode(n, nodeSettings, emit, false))))).map((r, k) => {
      if (r.status === 'rejected' && r.reason instanceof ReplicaDown && r.reason.killed) killedAtOpen.add(k);
      if (r.status === 'rejected' && (r.reason as NodeJS.ErrnoException).code === TIMED_OUT) timedOut.add(k);
      return r.status === 'fulfilled' && r.value.alive ? r.value : null;
    });
    const majority = Math.floor(nodes.length / 2) + 1;
    let replicas = await startAll();
    const up = (rs: (Replica | null)[]) => {
      const running = rs.filter((r): r is Replica => r !== null);
      if (running.length < majority) {
        const late = timedOut.size ? `; node ${[...timedOut].join(', ')} did not open in time` : '';
        throw Object.assign(new Error(`open: only ${running.length} of ${nodes.length} nodes opened their queues, fewer than a majority (${majority})${late}`), { code: running.length + timedOut.size >= majority ? TIMED_OUT : 'EIO' });
      }
      return running;
    };
    const states = up(replicas).map((r) => ({ node: r.node, ...r.state }));
    const durableSeq = kthLargest(states.map((s) => s.durableSeq), majority);
    const firstUnacked = kthLargest(states.map((s) => s.durableFirstUnackedSeq), majority);
    const source = states.find((s) => s.durableSeq === durableSeq)!;
    const differs = (s: DurableState) => s.durableSeq !== source.durableSeq || s.durableFirstUnackedSeq !== source.durableFirstUnackedSeq;
    if (states.some(differs)) {
      // Every node becomes a copy of the one holding exactly what a majority holds.
      await Promise.all(up(replicas).map((r) => r.close()));
      for (const s of states) if (differs(s)) copyQueueDir(nodes[source.node].dir, nodes[s.node].dir);
      replicas = await startAll();
      up(replicas);
    }
    const copied = up(replicas)[0].state.durableFirstUnackedSeq;
    const q = new ReplicatedQueue(nodes, spec.settings, spec.variant, emit, replicas, { durableSeq, durableFirstUnackedSeq: Math.max(firstUnacked, copied) }, up(replicas)[0].backlog, killedAtOpen, spec.offline === true);
    // Acks a majority made durable that the copied node had not: made on every node again.
    await q.ackBelow(copied, firstUnacked);
    return q;
  }

  private static async startNode(n: ClusterNodeSpec, settings: Record<string, unknown>, emit: (o: Outcome) => void, restarted: boolean): Promise<Replica> {
    return ReplicaProcess.start(n.node, n.dir, settings, (pgid) => emit({ t: 'node', node: n.node, pgid, ...(restarted ? { restarted: true } : {}) }));
  }

  private watch(r: Replica): void {
    r.onDurable(() => this.recount());
  }

  private get running(): Replica[] {
    return this.replicas.filter((r): r is Replica => r !== null && r.alive);
  }

  /** The cluster's confirmed state: what a majority of running nodes made durable (async-replication: the primary alone). */
  private recount(): void {
    const states = this.variant === ASYNC_REPLICATION ? (this.replicas[0]?.alive ? [this.replicas[0].state] : []) : this.running.map((r) => r.state);
    const need = this.variant === ASYNC_REPLICATION ? 1 : this.majority;
    if (states.length < need) return;
    const next = {
      durableSeq: Math.max(this.confirmed.durableSeq, Math.min(this.lastSeq, kthLargest(states.map((s) => s.durableSeq), need))),
      durableFirstUnackedSeq: Math.max(this.confirmed.durableFirstUnackedSeq, kthLargest(states.map((s) => s.durableFirstUnackedSeq), need)),
    };
    if (next.durableSeq === this.confirmed.durableSeq && next.durableFirstUnackedSeq === this.confirmed.durableFirstUnackedSeq) return;
    this.confirmed = next;
    for (const l of this.listeners) l(next);
    this.waiters = this.waiters.filter((w) => {
      if (w.seq > next.durableSeq) return true;
      w.resolve();
      return false;
    });
  }

  /**
   * One operation on every running node (async-replication: on the primary, then on the backups
   * once `confirmed` resolved); the primary's answer, or the first running node's. A node that goes down meanwhile
   * drops out; fewer than a majority left is an error.
   */
  private async onAll<T>(what: string, op: (r: Replica) => Promise<T>, confirmed: () => Promise<void> = () => Promise.resolve()): Promise<T> {
    // Requests reach every node in the order of these calls: each node's stdin gets them in turn.
    if (this.variant === ASYNC_REPLICATION) {
      const primary = this.replicas[0];
      if (!primary?.alive) throw new Error(`${what}: the primary (node 0) is not running`);
      const result = await op(primary);
      // The backups get it only after what the primary confirmed was printed (a macrotask after
      // the confirmation's own turn), in order: always after the client was told.
      const backups = this.replicas.slice(1).filter((r): r is Replica => r !== null);
      const confirmedFirst = confirmed();
      this.backupChain = this.backupChain
        .then(() => confirmedFirst)
        .then(() => new Promise((r) => setImmediate(r)))
        .then(() => Promise.allSettled(backups.filter((b) => b.alive).map(op)));
      return result;
    }
    const settled = await Promise.allSettled(this.running.map(op));
    const ok = settled.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
    const failure = settled.find((s): s is PromiseRejectedResult => s.status === 'rejected' && !(s.reason instanceof ReplicaDown));
    if (failure) throw failure.reason;
    // Fewer than a majority (a majority was cut): what ran is recorded and given again to each node
    // restarted; `gated` then waits for a majority before the operation counts as done.
    if (ok.length === 0) throw Object.assign(new Error(`${what}: no node is running`), { code: 'EIO' });
    for (const other of ok.slice(1)) this.agree(what, ok[0], other);
    return ok[0];
  }

  /**
   * Runs one operation of the queue once no restart is under way, counted while it runs: a restart
   * waits until none is, so what it gives the restarted node again (this session's writes,
   * deliveries and acks, which `fn` records) is complete, and no operation it replays reaches the node twice.
   */
  private async gated<T>(fn: () => Promise<T>): Promise<T> {
    for (let r = this.restarting; ; r = this.restarting) {
      await r;
      if (r === this.restarting) break;
    }
    this.inflight++;
    let result: T;
    try {
      result = await fn();
    } finally {
      if (--this.inflight === 0) for (const idle of this.idleWaiters.splice(0)) idle();
    }
    // Outside the count: the restarts that bring a majority back wait for no operation in flight.
    if (this.variant !== ASYNC_REPLICATION) await this.majorityRunning();
    return result;
  }

  /** Waits (bounded) until a majority of nodes runs: after a cut of a majority, until enough were restarted. */
  private async majorityRunning(): Promise<void> {
    const deadline = Date.now() + RESTART_AWAIT_MS;
    while (this.running.length < this.majority) {
      if (Date.now() >= deadline) throw Object.assign(new Error(`only ${this.running.length} of ${this.nodes.length} nodes running, fewer than a majority (${this.majority}), for ${RESTART_AWAIT_MS} ms`), { code: 'EIO' });
      await new Promise((r) => setTimeout(r, 10));
    }
  }

  private inflight = 0;
  private idleWaiters: (() => void)[] = [];

  /** Every node's answers must agree (one order): a replica that diverged is a bug of this queue. */
  private agree(what: string, a: unknown, b: unknown): void {
    if (JSON.stringify(a) !== JSON.stringify(b)) throw new Error(`invariant: replicas diverged at ${what}: ${JSON.stringify(a)} against ${JSON.stringify(b)}`);
  }

  async write(data: Buffer): Promise<number> {
    const bytes = recordBytes(data.length);
    // Admitted before it is ordered (outside `gated`): a write waiting for space must not hold up a restart, nor the acks that free it.
    await this.admit(bytes);
    return this.gated(async () => {
      const seq = ++this.lastSeq;
      this.written.set(seq, data);
      const payload = data.toString('base64');
      return this.onAll(`write of seq ${seq}`, async (r) => {
        const reply = await r.request({ op: 'write', data: payload });
        this.agree(`the write of seq ${seq} on node ${r.node}`, reply.seq, seq);
        return seq;
      }, () => this.waitDurable(seq));
    });
  }

  /** Backpressure as the built-in queue's (FIFO, bounded by writeTimeoutMs), decided here so that no replica waits. */
  private admit(bytes: number): Promise<void> {
    if (this.spaceWaiters.length === 0 && this.fits(bytes)) {
      this.reserve(bytes);
      return Promise.resolve();
    }
    return new Promise<void>((resolve, reject) => {
      const waiter = { bytes, resolve: () => {} };
      const timer = this.limits.writeTimeoutMs > 0
        ? setTimeout(() => {
          this.spaceWaiters = this.spaceWaiters.filter((w) => w !== waiter);
          reject(new BackpressureTimeoutError(`write waited ${this.limits.writeTimeoutMs} ms (writeTimeoutMs) for space: the cluster holds ${this.backlog.unackedCount} unacked events ` +
            `(maxEvents ${this.limits.maxEvents || 'unlimited'}) and ${this.backlog.unackedBytes} bytes (maxBytes ${this.limits.maxBytes}); ack events to make room`));
          this.wakeWriters();
        }, this.limits.writeTimeoutMs)
        : undefined;
      waiter.resolve = () => {
        clearTimeout(timer);
        resolve();
      };
      this.spaceWaiters.push(waiter);
    });
  }

  private fits(bytes: number): boolean {
    const { maxBytes, maxEvents } = this.limits;
    return this.backlog.unackedBytes + bytes <= maxBytes && (maxEvents === 0 || this.backlog.unackedCount < maxEvents);
  }

  private reserve(bytes: number): void {
    this.backlog.unackedBytes += bytes;
    this.backlog.unackedCount += 1;
  }

  private wakeWriters(): void {
    while (this.spaceWaiters.length > 0 && this.fits(this.spaceWaiters[0].bytes)) {
      const w = this.spaceWaiters.shift()!;
      this.reserve(w.bytes);
      w.resolve();
    }
  }

  waitDurable(seq: number): Promise<void> {
    if (seq <= this.confirmed.durableSeq) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push({ seq, resolve }));
  }

  async readBatch(maxEvents: number, timeoutMs: number): Promise<{ seq: number; data: Buffer }[]> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const events = await this.gated(async () => {
        const got = await this.onAll('read', async (r) => (await r.request({ op: 'read', maxEvents })).events ?? []);
        for (const e of got) {
          this.delivered.add(e.seq);
          this.deliveredBytes.set(e.seq, recordBytes(Buffer.byteLength(e.data, 'base64')));
        }
        return got;
      });
      if (events.length > 0 || Date.now() >= deadline) return events.map((e) => ({ seq: e.seq, data: Buffer.from(e.data, 'base64') }));
      await new Promise((r) => setTimeout(r, 10));
    }
  }

  async ack(seqs: readonly number[]): Promise<void> {
    await this.gated(async () => {
      await this.onAll(`ack of ${seqs.join(', ')}`, async (r) => void (await r.request({ op: 'ack', seqs: [...seqs] })));
      for (const s of seqs) {
        this.acked.add(s);
        const bytes = this.deliveredBytes.get(s);
        if (bytes === undefined) throw new Error(`invariant: ack of seq ${s}, which the cluster never delivered, went through`);
        this.deliveredBytes.delete(s);
        this.backlog.unackedBytes -= bytes;
        this.backlog.unackedCount -= 1;
      }
      this.wakeWriters();
    });
  }

  async checkpoint(): Promise<void> {
    await this.gated(() => this.onAll('checkpoint', async (r) => void (await r.request({ op: 'checkpoint' }))));
  }

  durability(): DurableState {
    return this.confirmed;
  }

  onDurable(listener: (s: DurableState) => void): () => void {
    this.listeners.push(listener);
    return () => {
      this.listeners = this.listeners.filter((l) => l !== listener);
    };
  }

  /** Nodes cut (their server killed) and not restarted since. */
  private get awaitingRestart(): number[] {
    return this.nodes.map((n) => n.node).filter((k) => {
      const r = this.replicas[k];
      return r === null ? this.killedAtOpen.has(k) : !r.alive && r.killed;
    });
  }

  /**
   * Closes every node, once every node cut during the run was restarted (bounded by
   * RESTART_AWAIT_MS): the harness's restart must find the run still going. A node cut while the
   * others close is waited for and closed too.
   */
  async close(): Promise<void> {
    const deadline = Date.now() + RESTART_AWAIT_MS;
    for (;;) {
      await pollUntil(() => this.awaitingRestart.length === 0 && this.restartsInFlight.size === 0, deadline);
      const missing = this.awaitingRestart;
      if (missing.length > 0) process.stderr.write(`replicated queue: node${missing.length > 1 ? 's' : ''} ${missing.join(', ')} cut and not restarted within ${RESTART_AWAIT_MS} ms; closing the others without ${missing.length > 1 ? 'them' : 'it'}\n`);
      await this.restarting;
      await this.backupChain;
      await Promise.all(this.running.map((r) => r.close()));
      if (Date.now() >= deadline || (this.awaitingRestart.length === 0 && this.restartsInFlight.size === 0 && this.running.length === 0)) return;
    }
  }

  /**
   * Reads and acks, on every node, the seqs from `from` (the copied node's first unacked, where its
   * reads start) below `firstUnacked` (recovery: acks a majority made durable); nothing beyond is read.
   */
  private async ackBelow(from: number, firstUnacked: number): Promise<void> {
    for (let next = from; next < firstUnacked;) {
      const batch = await this.readBatch(Math.min(64, firstUnacked - next), 0);
      if (batch.length === 0) throw new Error(`recovery: a majority acked up to seq ${firstUnacked - 1}, but the recovered queue delivers nothing from seq ${next}`);
      await this.ack(batch.map((e) => e.seq));
      next = batch.at(-1)!.seq + 1;
    }
  }

  /** Restarts node k (the harness cut it); counted from the moment it is asked for, so the run's end waits for it. */
  restartNode(node: number): Promise<void> {
    const p = this.restart(node);
    this.restartsInFlight.add(p);
    const forget = () => this.restartsInFlight.delete(p);
    p.then(forget, forget);
    return p;
  }

  private async restart(node: number): Promise<void> {
    const spec = this.nodes[node];
    if (!spec) throw new Error(`restart: there is no node ${node} (the cluster has ${this.nodes.length})`);
    if (this.offline) throw new Error(`restart: node ${node} asked for in an offline run (its spec says offline: no node of it is cut)`);
    // The harness asks once it killed the node's group: its server's end may not have reached us yet.
    const old = this.replicas[node];
    if (old?.alive && !(await old.exitedWithin(RESTART_EXIT_WAIT_MS))) throw new Error(`restart: node ${node}'s server is still running ${RESTART_EXIT_WAIT_MS} ms after the restart was asked for; the harness restarts a node after cutting it`);
    let done!: () => void;
    const previous = this.restarting;
    this.restarting = new Promise<void>((r) => (done = r));
    try {
      await previous;
      if (this.inflight > 0) await new Promise<void>((r) => this.idleWaiters.push(r));
      const r = await ReplicatedQueue.startNode(spec, replicaSettings(this.settings, this.variant), this.emit, true);
      if (r.state.durableSeq > this.lastSeq) throw new Error(`restart: node ${node} recovered seqs up to ${r.state.durableSeq}, beyond the ${this.lastSeq} the cluster holds (it was down when the cluster opened, holding more than a majority)`);
      // What the cut took from this node is given again, in order: writes, then deliveries, then acks.
      for (let seq = r.state.durableSeq + 1; seq <= this.lastSeq; seq++) {
        const data = this.written.get(seq);
        if (!data) throw new Error(`restart: node ${node} recovered up to seq ${r.state.durableSeq}, and seq ${seq} was written before this session, which never loses what it started with`);
        const reply = await r.request({ op: 'write', data: data.toString('base64') });
        this.agree(`the rewrite of seq ${seq} on node ${node}`, reply.seq, seq);
      }
      const upTo = Math.max(0, ...this.delivered);
      const deliveredThere: number[] = [];
      // Never past what the cluster delivered: the node's next read must deliver what the others' does.
      for (let last = r.state.durableFirstUnackedSeq - 1; last < upTo; last = deliveredThere.at(-1)!) {
        const events = (await r.request({ op: 'read', maxEvents: Math.min(64, upTo - last) })).events ?? [];
        if (events.length === 0) break;
        deliveredThere.push(...events.map((e) => e.seq));
      }
      const toAck = deliveredThere.filter((s) => this.acked.has(s));
      if (toAck.length > 0) await r.request({ op: 'ack', seqs: toAck });
      this.replicas[node] = r;
      this.killedAtOpen.delete(node);
      this.watch(r);
      // What it made durable while it caught up counts now (it may say nothing more).
      this.recount();
    } finally {
      done();
    }
  }
}
