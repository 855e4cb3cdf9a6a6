// A node of an offline drain, in the driver's own process: the same queue and the same requests as
// a replica server (replica-service.ts), without a process to start. Only a run that no one cuts may
// use it (the spec's `offline`): the harness cuts a node by killing its process group. Starting a
// Node process per node was most of an offline cluster state's cost (bench:crash, cluster rows).
import type { Queue } from '../../../queue/index.js';
import { ReplicaDown, type Backlog, type DurableState, type Replica, type RequestBody } from './replica.js';
import { openReplicaQueue, replyOrError, serveReplicaRequest, type ReplicaReply } from './replica-service.js';

export class InProcessReplica implements Replica {
  alive = true;
  readonly killed = false;
  state: DurableState;
  readonly backlog: Backlog;
  private listeners: ((s: DurableState) => void)[] = [];
  private nextId = 1;
  /** Requests apply one at a time, in the primary's order, as a server's stdin orders them. */
  private queueTurn: Promise<unknown> = Promise.resolve();

  private constructor(readonly node: number, private readonly queue: Queue) {
    const { durableSeq, durableFirstUnackedSeq } = queue.durability();
    this.state = { durableSeq, durableFirstUnackedSeq };
    this.backlog = queue.backlog();
    queue.onDurable((s) => {
      this.state = { durableSeq: s.durableSeq, durableFirstUnackedSeq: s.durableFirstUnackedSeq };
      for (const l of this.listeners) l(this.state);
    });
  }

  static async start(node: number, dir: string, settings: Record<string, unknown>): Promise<InProcessReplica> {
    try {
      return new InProcessReplica(node, await openReplicaQueue(dir, settings));
    } catch (err) {
      throw new Error(`node ${node}'s replica could not open its queue in ${dir}: ${err instanceof Error ? err.message : String(err)}`);
    }
  }

  onDurable(listener: (s: DurableState) => void): void {
    this.listeners.push(listener);
  }

  request(body: RequestBody): Promise<ReplicaReply> {
    if (!this.alive) return Promise.reject(new ReplicaDown(this.node));
    const req = { id: this.nextId++, ...body };
    const reply = this.queueTurn.then(() => serveReplicaRequest(this.queue, req, (m) => process.stderr.write(`node ${this.node}: ${m}\n`)));
    this.queueTurn = reply;
    return reply.then((r) => {
      if (req.op === 'close') this.alive = false;
      const result = replyOrError(this.node, r);
      if (result instanceof Error) throw result;
      return result;
    });
  }

  async close(): Promise<void> {
    if (this.alive) await this.request({ op: 'close' });
  }

  exitedWithin(): Promise<boolean> {
    return Promise.resolve(!this.alive);
  }
}
