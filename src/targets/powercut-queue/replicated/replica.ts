// The driver's handle on one node: `Replica`. A run that may be cut runs each node as a server in a
// process group of its own (ReplicaProcess: the harness kills exactly that group at the node's cut),
// matching replies to requests and passing on its durability news; every request of a server that
// died fails with ReplicaDown. An offline drain runs its nodes in the driver (in-process-replica.ts).
import { execa, type ResultPromise } from 'execa';
import { createInterface } from 'node:readline';
import { distPath, OWN_NODE_ENV } from '../../../harness/dist-path.js';
import { TIMED_OUT } from '../../../harness/outcome.js';
import { parseReplicaMessage, START_LINE, type ReplicaMessage, type ReplicaRequest } from './replica-protocol.js';
import { replyOrError, type ReplicaReply } from './replica-service.js';

export interface DurableState {
  durableSeq: number;
  durableFirstUnackedSeq: number;
}

/** Unacked events and their record bytes: what backpressure counts. */
export interface Backlog {
  unackedCount: number;
  unackedBytes: number;
}

/** A request to a replica whose server is gone (its node was cut): the cluster goes on without it. */
export class ReplicaDown extends Error {
  /** killed: by a signal (its node's cut) rather than its own failure. */
  constructor(readonly node: number, readonly killed = false) {
    super(`node ${node}'s replica server is not running${killed ? ' (killed)' : ''}`);
  }
}

export type RequestBody = ReplicaRequest extends infer R ? (R extends ReplicaRequest ? Omit<R, 'id'> : never) : never;

/** One node as the primary sees it, whether its own process or in the driver's. */
export interface Replica {
  readonly node: number;
  /** Serving: not cut, not closed. */
  readonly alive: boolean;
  /** Killed by a signal (its node's cut), not closed: the harness restarts it. */
  readonly killed: boolean;
  /** What the node holds durably, as it last said. */
  readonly state: DurableState;
  /** What its backpressure counted when it opened. */
  readonly backlog: Backlog;
  onDurable(listener: (s: DurableState) => void): void;
  /** One request; its reply, or an Error carrying the node's message and errno code. */
  request(body: RequestBody): Promise<ReplicaReply>;
  /** Closes its queue cleanly (and its server exits). */
  close(): Promise<void>;
  /** True once it stopped, waiting up to `ms` for it. */
  exitedWithin(ms: number): Promise<boolean>;
}

/** How long a replica may take to open its queue. */
const READY_TIMEOUT_MS = 15_000;

export class ReplicaProcess implements Replica {
  private nextId = 1;
  private readonly pending = new Map<number, { resolve: (r: ReplicaReply) => void; reject: (e: Error) => void }>();
  private listeners: ((s: DurableState) => void)[] = [];
  alive = true;
  /** What the node holds durably, as it last said. */
  state: DurableState = { durableSeq: 0, durableFirstUnackedSeq: 1 };
  /** What its backpressure counted when it opened. */
  backlog: Backlog = { unackedCount: 0, unackedBytes: 0 };

  private constructor(readonly node: number, private readonly proc: ResultPromise) {}

  get pid(): number {
    return this.proc.pid!;
  }

  /** Starts node `node`'s server on `dir`; `started` learns its process group at once (before it is ready). */
  static async start(node: number, dir: string, settings: Record<string, unknown>, started: (pgid: number) => void): Promise<ReplicaProcess> {
    // detached: a session and process group of its own. Its stdin is the driver's pipe: if the
    // driver dies, the server sees its end and exits.
    const proc = execa(process.execPath, [distPath('src/targets/powercut-queue/replicated/replica-server.js'), dir, JSON.stringify(settings)], {
      detached: true, stdin: 'pipe', stdout: 'pipe', stderr: 'inherit', reject: false, buffer: false, env: OWN_NODE_ENV,
    });
    const r = new ReplicaProcess(node, proc);
    // A server killed at its node's cut: writing to it fails (EPIPE) until its exit marks it down.
    proc.stdin!.on('error', () => {});
    started(r.pid);
    proc.stdin!.write(START_LINE + '\n');
    const ready = new Promise<void>((resolve, reject) => {
      // ETIMEDOUT: the oracle judges a wait given up like a hang (a busy machine can cause it), never as the queue's failure.
      const timer = setTimeout(() => reject(Object.assign(new Error(`node ${node}'s replica did not open its queue within ${READY_TIMEOUT_MS} ms`), { code: TIMED_OUT })), READY_TIMEOUT_MS);
      r.onReady = (failure) => {
        clearTimeout(timer);
        if (failure) reject(r.killed ? new ReplicaDown(node, true) : new Error(`node ${node}'s replica could not open its queue in ${dir}: ${failure}`));
        else resolve();
      };
    });
    createInterface({ input: proc.stdout! }).on('line', (line) => r.receive(parseReplicaMessage(line)));
    void proc.then((result) => r.down(result.signal));
    await ready;
    return r;
  }

  private onReady: (failure: string | null) => void = () => {};

  private receive(m: ReplicaMessage): void {
    switch (m.t) {
      case 'ready':
        this.state = { durableSeq: m.durableSeq, durableFirstUnackedSeq: m.durableFirstUnackedSeq };
        this.backlog = { unackedCount: m.unackedCount, unackedBytes: m.unackedBytes };
        this.onReady(null);
        return;
      case 'failed':
        this.onReady(m.message);
        return;
      case 'durable':
        this.state = { durableSeq: m.durableSeq, durableFirstUnackedSeq: m.durableFirstUnackedSeq };
        for (const l of this.listeners) l(this.state);
        return;
      case 'reply': {
        const p = this.pending.get(m.id);
        this.pending.delete(m.id);
        p?.resolve(m);
      }
    }
  }

  // One initialiser for both: a resolver field declared after the promise's would run after it
  // and overwrite the resolver the promise set, which then never resolves.
  private readonly exit = (() => {
    let resolve!: () => void;
    const promise = new Promise<void>((r) => (resolve = r));
    return { promise, resolve };
  })();
  /** Its server was killed by a signal (its node's cut), not closed: the harness restarts it. */
  killed = false;

  /** True once its server exited, waiting up to `ms` for it. */
  async exitedWithin(ms: number): Promise<boolean> {
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([this.exit.promise, new Promise((r) => (timer = setTimeout(r, ms)))]);
    clearTimeout(timer);
    return !this.alive;
  }

  private down(signal: string | undefined): void {
    this.alive = false;
    this.killed = signal !== undefined;
    this.exit.resolve();
    this.onReady('its server exited');
    for (const p of this.pending.values()) p.reject(new ReplicaDown(this.node));
    this.pending.clear();
  }

  onDurable(listener: (s: DurableState) => void): void {
    this.listeners.push(listener);
  }

  /** One request; its reply, or an Error carrying the server's message and errno code. */
  request(body: RequestBody): Promise<ReplicaReply> {
    if (!this.alive) return Promise.reject(new ReplicaDown(this.node));
    const id = this.nextId++;
    return new Promise<ReplicaReply>((resolve, reject) => {
      this.pending.set(id, {
        resolve: (r) => {
          const result = replyOrError(this.node, r);
          if (result instanceof Error) reject(result);
          else resolve(result);
        },
        reject,
      });
      this.proc.stdin!.write(JSON.stringify({ id, ...body }) + '\n');
    });
  }

  /** Closes its queue cleanly and waits for the server to exit. */
  async close(): Promise<void> {
    if (!this.alive) return;
    await this.request({ op: 'close' }).catch((e: unknown) => {
      if (!(e instanceof ReplicaDown)) throw e;
    });
    await this.proc;
  }
}
