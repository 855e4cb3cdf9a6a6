// Three nats-server processes clustered over loopback routes, one per node of a cluster case, each
// with its store on its node's disk and in a process group of its own. Ports are picked once when
// the cluster opens and kept, so a node restarted after its cut comes back at the same address and
// its peers' routes find it again.
import type { ClusterNodeSpec } from '../../harness/driver-spec.js';
import { pollUntil } from '../poll-until.js';
import { freePort, NatsServer, NatsServerError, PORT_ATTEMPTS, STOP_TIMEOUT_MS, type ClusterMembership } from './server.js';

export const CLUSTER_NAME = 'powercut';
/**
 * How long a stop waits for the harness to restart a node it cut (docs/driver-protocol.md,
 * "Clusters": no end before the restart). The harness asks once it reaped the node, which can be
 * after the workload's last step; a run that ended first would leave the node down.
 */
export const RESTART_AWAIT_MS = 20_000;
export const serverNameOf = (node: number): string => `n${node}`;

/** What the queue needs of the servers behind it: one server, or a cluster. */
export interface ServerSide {
  /** Every server's client URL (a client connects to any, and reconnects to another). */
  readonly urls: string[];
  /** Every node's store directory (the store is <dir>/jetstream). */
  readonly dirs: string[];
  settle(ms: number): Promise<void>;
  exitDescription(): string | undefined;
  describe(what: string): string;
  stop(): Promise<void>;
  kill(): Promise<void>;
}

export class NatsCluster implements ServerSide {
  private constructor(
    private readonly nodes: readonly ClusterNodeSpec[],
    private readonly clientPorts: readonly number[],
    private readonly routePorts: readonly number[],
    private readonly extraConfig: string,
    private readonly servers: (NatsServer | null)[],
    private readonly emitNode: (node: number, pgid: number, restarted: boolean) => void,
  ) {}

  /**
   * Starts a server per node, all at once (a clustered server waits for its peers' routes before
   * JetStream is up), each node's group told through `emitNode` as soon as it exists. A node cut
   * while it starts (killed by SIGKILL) is down until the harness restarts it, and a majority
   * suffices; any other server that does not start is a NatsServerError naming its log, and the
   * others are killed.
   */
  static async start(nodes: readonly ClusterNodeSpec[], extraConfig: string, emitNode: (node: number, pgid: number, restarted: boolean) => void): Promise<NatsCluster> {
    for (let attempt = 1; ; attempt++) {
      const ports = await distinctFreePorts(nodes.length * 2);
      const cluster = new NatsCluster(nodes, ports.slice(0, nodes.length), ports.slice(nodes.length), extraConfig, nodes.map(() => null), emitNode);
      const started = await Promise.allSettled(nodes.map((n) => cluster.startNode(n.node, false)));
      // The harness's SIGKILL, not ours (a server that never accepted a connection is killed too, but after its own failure).
      const cut = (r: PromiseRejectedResult) => r.reason instanceof NatsServerError && /was killed by SIGKILL before accepting a connection/.test(r.reason.message);
      const failed = started.find((r): r is PromiseRejectedResult => r.status === 'rejected' && !cut(r));
      const up = started.filter((r) => r.status === 'fulfilled').length;
      if (!failed && up >= Math.floor(nodes.length / 2) + 1) return cluster;
      await cluster.kill();
      // Another process took a port between the probe and the server's listen, as a single server's
      // start allows for (NatsServer.start; more likely with many clusters starting at once): every
      // server again on fresh ports, each printing its node line again (the harness cuts the group a
      // node's latest line names).
      if (failed && attempt < PORT_ATTEMPTS && started.some((r) => r.status === 'rejected' && /address already in use/i.test(String(r.reason?.message)))) continue;
      throw failed?.reason ?? new NatsServerError(`only ${up} of ${nodes.length} servers started, fewer than a majority`);
    }
  }

  private membership(node: number): ClusterMembership {
    return { clusterName: CLUSTER_NAME, serverName: serverNameOf(node), routePort: this.routePorts[node], routePorts: this.routePorts };
  }

  private async startNode(node: number, restarted: boolean): Promise<void> {
    const spec = this.nodes[node];
    await NatsServer.startClusterNode(spec.dir, this.clientPorts[node], this.extraConfig, this.membership(node), (server) => {
      // Known before it is ready: a cut while it starts finds it here, and a restart waits for its exit.
      this.servers[node] = server;
      this.emitNode(node, server.proc.pid!, restarted);
    });
  }

  get urls(): string[] {
    return this.clientPorts.map((p) => `127.0.0.1:${p}`);
  }

  get dirs(): string[] {
    return this.nodes.map((n) => n.dir);
  }

  /**
   * Restarts node k's server on its crashed disk, at its old ports. The harness asks once it killed
   * the node's group; the old server's exit is awaited (bounded) so two never share a store.
   */
  async restartNode(node: number): Promise<void> {
    process.stderr.write(`nats-jetstream driver: restart of node ${node} asked for\n`);
    const restart = this.restarting.then(() => this.restartNow(node));
    this.restarting = restart.catch(() => undefined);
    this.restartsInFlight++;
    return restart.finally(() => this.restartsInFlight--);
  }

  /** Restarts asked for and not finished: a stop waits for them. */
  private restartsInFlight = 0;
  /** Set when the cluster's stop ended: a restart asked for later would outlive the run. */
  private stopped = false;

  /** Restarts under way, in order: a stop waits for them, so no server starts after the cluster stopped. */
  private restarting: Promise<void> = Promise.resolve();

  private async restartNow(node: number): Promise<void> {
    if (!this.nodes[node]) throw new NatsServerError(`restart: there is no node ${node} (the cluster has ${this.nodes.length})`);
    if (this.stopped) {
      process.stderr.write(`nats-jetstream driver: restart of node ${node} asked for after the cluster stopped; ignored\n`);
      return;
    }
    const old = this.servers[node];
    if (old && !old.gone) {
      await old.settle(STOP_TIMEOUT_MS);
      if (!old.gone) throw new NatsServerError(`restart: node ${node}'s server (pid ${old.proc.pid}) is still running ${STOP_TIMEOUT_MS} ms after the restart was asked for; the harness restarts a node after cutting it`);
    }
    await this.startNode(node, true);
  }

  /** Nodes whose server the harness killed (their cut) and that were not restarted since. */
  awaitingRestart(): number[] {
    return this.servers.flatMap((s, k) => (s?.gone && s.cut ? [k] : []));
  }

  /** Whether node k's server was cut (killed by the harness), waiting up to `ms` to see its exit. */
  async cutWithin(node: number, ms: number): Promise<boolean> {
    const s = this.servers[node];
    if (!s) return false;
    if (!s.gone) await s.settle(ms);
    return s.gone && s.cut;
  }

  /** Nodes whose server is not running (cut, and not restarted yet). */
  downNodes(): number[] {
    return this.servers.flatMap((s, k) => (s === null || s.gone ? [k] : []));
  }

  private get live(): NatsServer[] {
    return this.servers.filter((s): s is NatsServer => s !== null);
  }

  async settle(ms: number): Promise<void> {
    await Promise.all(this.live.map((s) => s.settle(ms)));
  }

  /** How the servers that exited did, node by node; undefined while every server runs. */
  exitDescription(): string | undefined {
    const gone = this.servers.flatMap((s, k) => (s?.exitDescription() ? [`node ${k}'s server ${s.exitDescription()}`] : []));
    return gone.length > 0 ? gone.join('; ') : undefined;
  }

  describe(what: string): string {
    return this.servers.map((s, k) => (s ? `node ${k}: ${s.describe(s.exitDescription() ?? what)}` : `node ${k}: not started`)).join('\n');
  }

  /**
   * A clean stop of every server that runs (SIGTERM each), once every node cut during the run was
   * restarted (bounded by RESTART_AWAIT_MS): the harness's restart must find the run going. A node
   * cut while the others stop is waited for and stopped too. The first failure is thrown once all stopped.
   */
  async stop(): Promise<void> {
    const deadline = Date.now() + RESTART_AWAIT_MS;
    let failure: unknown;
    for (;;) {
      if (this.awaitingRestart().length > 0 || this.restartsInFlight > 0) {
        process.stderr.write(`nats-jetstream driver: the run's end waits for the restart of node ${[...this.awaitingRestart()].join(', ') || '(under way)'}\n`);
      }
      await pollUntil(() => this.awaitingRestart().length === 0 && this.restartsInFlight === 0, deadline);
      await this.restarting;
      const missing = this.awaitingRestart();
      const late = Date.now() >= deadline;
      if (late && missing.length > 0) process.stderr.write(`nats-jetstream driver: node ${missing.join(', ')} cut and not restarted within ${RESTART_AWAIT_MS} ms; stopping the others without it\n`);
      if (late) this.stopped = true;
      const results = await Promise.allSettled(this.live.filter((s) => !s.gone).map((s) => s.stop()));
      failure ??= results.find((r): r is PromiseRejectedResult => r.status === 'rejected')?.reason;
      if (late || (this.awaitingRestart().length === 0 && this.restartsInFlight === 0)) break;
    }
    this.stopped = true;
    await this.restarting;
    if (failure) throw failure;
  }

  async kill(): Promise<void> {
    await Promise.all(this.live.map((s) => s.kill()));
  }
}

/** `n` distinct free ports on 127.0.0.1. */
async function distinctFreePorts(n: number): Promise<number[]> {
  const ports = new Set<number>();
  for (let attempts = 0; ports.size < n; attempts++) {
    if (attempts > n * 10) throw new NatsServerError(`could not find ${n} distinct free ports on 127.0.0.1`);
    ports.add(await freePort());
  }
  return [...ports];
}
