// nats-server as the driver's child: JetStream's store on the mount, a free port on 127.0.0.1, its
// log on the driver's stderr (stdout is the protocol), a bounded start-up, and a death tied to the
// driver's: it stays in the driver's process group (the harness SIGKILLs the group at a cut) and,
// when util-linux's setpriv is there, also gets SIGKILL as its parent-death signal.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { NATS_SERVER_BINARY, onPath } from './env.js';

/** How long a start may take, from spawn until a client is connected (JetStream recovers the store before the port opens). */
export const START_TIMEOUT_MS = 10_000;
/** How long a clean stop (SIGTERM: the store is flushed, never fsynced) may take before SIGKILL. */
export const STOP_TIMEOUT_MS = 5_000;
/** Attempts with a fresh port when another process took the one picked (between the probe and the server's listen). */
export const PORT_ATTEMPTS = 3;
/** The server's log kept for error messages. */
const LOG_TAIL_BYTES = 6_000;

/** A free TCP port on 127.0.0.1: listen on port 0, read it, close it. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = net.createServer();
    probe.unref();
    probe.on('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      probe.close(() => (port > 0 ? resolve(port) : reject(new Error('could not read the probed port'))));
    });
  });
}

export class NatsServerError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'NatsServerError';
  }
}

/** One server of a loopback cluster: its name (the Raft peer id is derived from it) and every node's route port. */
export interface ClusterMembership {
  clusterName: string;
  serverName: string;
  /** This server's route port. */
  routePort: number;
  /** Every server's route port, this one's included (a server skips its own route). */
  routePorts: readonly number[];
}

/** The configuration file's text: the store on the mount, limits given so the server never sizes them from statfs. */
export function serverConfigText(storeDir: string, port: number, extra: string, cluster?: ClusterMembership): string {
  return [
    `listen: 127.0.0.1:${port}`,
    ...(cluster
      ? [
          `server_name: ${JSON.stringify(cluster.serverName)}`,
          'cluster {',
          `  name: ${JSON.stringify(cluster.clusterName)}`,
          `  listen: 127.0.0.1:${cluster.routePort}`,
          `  routes: [${cluster.routePorts.map((p) => JSON.stringify(`nats-route://127.0.0.1:${p}`)).join(', ')}]`,
          '}',
        ]
      : []),
    'jetstream {',
    `  store_dir: ${JSON.stringify(storeDir)}`,
    '  max_file_store: 1G',
    '  max_memory_store: 64M',
    '}',
    extra,
    '',
  ].join('\n');
}

const running = new Set<ChildProcess>();
let exitHookInstalled = false;
/** A driver that exits (an error line, an internal error) takes its servers with it, even without setpriv. */
function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on('exit', () => {
    for (const p of running) p.kill('SIGKILL');
  });
}

export class NatsServer {
  private tail = '';
  private exit: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  /** The signal this driver sent it (stop, kill): any other that ended it was the harness's, at its node's cut. */
  private sent: NodeJS.Signals | undefined;
  private readonly exited: Promise<void>;

  private constructor(
    readonly proc: ChildProcess,
    readonly port: number,
    private readonly confDir: string,
    private readonly storeDir: string,
  ) {
    running.add(proc);
    const log = (d: Buffer) => {
      process.stderr.write(d);
      this.tail = (this.tail + d.toString('utf8')).slice(-LOG_TAIL_BYTES);
    };
    proc.stdout?.on('data', log);
    proc.stderr?.on('data', log);
    this.exited = new Promise((resolve) => {
      proc.on('exit', (code, signal) => {
        this.exit = { code, signal };
        running.delete(proc);
        resolve();
      });
      proc.on('error', (err) => {
        this.tail += `\n(spawn failed: ${err.message})`;
        this.exit ??= { code: null, signal: null };
        running.delete(proc);
        resolve();
      });
    });
  }

  get url(): string {
    return `127.0.0.1:${this.port}`;
  }

  get urls(): string[] {
    return [this.url];
  }

  get dirs(): string[] {
    return [this.storeDir];
  }

  /** The end of the server's log, for error messages. */
  logTail(maxChars = 2_000): string {
    const t = this.tail.trim();
    return t.length <= maxChars ? t : `...${t.slice(-maxChars)}`;
  }

  /** How it exited, if it did: "exited with code 1", "was killed by SIGKILL". */
  exitDescription(): string | undefined {
    if (!this.exit) return undefined;
    return this.exit.signal ? `was killed by ${this.exit.signal}` : `exited with code ${this.exit.code}`;
  }

  /** "nats-server (pid N) exited with code 1; its log ends: ..." */
  describe(what: string): string {
    const log = this.logTail();
    return `nats-server (pid ${this.proc.pid}, port ${this.port}) ${what}; ${log ? `its log ends:\n${log}` : 'it logged nothing'}`;
  }

  /**
   * Starts nats-server with JetStream's store in `storeDir` (it adds `jetstream/`) and connects to it,
   * within START_TIMEOUT_MS. A server that exits or never accepts a connection is a NatsServerError
   * naming the end of its log.
   */
  static async start(storeDir: string, extraConfig: string): Promise<{ server: NatsServer; nc: NatsConnection }> {
    const binary = onPath(NATS_SERVER_BINARY);
    if (!binary) throw new NatsServerError(`${NATS_SERVER_BINARY} is not on the PATH (Debian package nats-server)`);
    let last: NatsServerError | undefined;
    for (let attempt = 0; attempt < PORT_ATTEMPTS; attempt++) {
      const server = NatsServer.spawn(binary, storeDir, await freePort(), extraConfig);
      try {
        const nc = await server.connect();
        // It read its config at start-up: nothing is left behind when a cut kills it.
        server.cleanup();
        return { server, nc };
      } catch (err) {
        await server.kill();
        if (!(err instanceof NatsServerError)) throw err;
        last = err;
        // Another process took the port between the probe and the listen: not the server's fault.
        if (!/address already in use/i.test(server.tail)) throw err;
      }
    }
    throw last!;
  }

  /**
   * Starts one server of a cluster in a process group of its own (the harness kills exactly that
   * group at the node's cut); `spawned` learns the group while the server is held, before it can
   * have read its store, and the server starts once `spawned` returned. The server's death is still tied to the driver's (parent-death signal, exit hook).
   * Returns once it accepts a client connection (within START_TIMEOUT_MS); its ports are the
   * caller's, fixed for the run, so a restarted node keeps its address.
   */
  static async startClusterNode(storeDir: string, port: number, extraConfig: string, cluster: ClusterMembership, spawned: (server: NatsServer) => void): Promise<NatsServer> {
    const binary = onPath(NATS_SERVER_BINARY);
    if (!binary) throw new NatsServerError(`${NATS_SERVER_BINARY} is not on the PATH (Debian package nats-server)`);
    const server = NatsServer.spawn(binary, storeDir, port, extraConfig, cluster);
    if (server.proc.pid === undefined) {
      await server.settle(STOP_TIMEOUT_MS);
      throw new NatsServerError(server.describe('could not be started'));
    }
    // Its pid is its process group's id (detached); the line naming it goes out before the server may touch the store.
    spawned(server);
    server.go();
    try {
      const nc = await server.connect();
      await nc.close();
      server.cleanup();
      return server;
    } catch (err) {
      await server.kill();
      throw err;
    }
  }

  private static spawn(binary: string, storeDir: string, port: number, extraConfig: string, cluster?: ClusterMembership): NatsServer {
    sweepConfigFolders();
    // The config file lives off the mount: the powercut filesystem holds only JetStream's store.
    const confDir = mkdtempSync(path.join(os.tmpdir(), `${CONFIG_FOLDER_PREFIX}${process.pid}-`));
    const conf = path.join(confDir, 'nats-server.conf');
    writeFileSync(conf, serverConfigText(storeDir, port, extraConfig, cluster));
    const setpriv = onPath('setpriv');
    const [file, args] = setpriv ? [setpriv, ['--pdeathsig', 'SIGKILL', '--', binary, '-c', conf]] : [binary, ['-c', conf]];
    installExitHook();
    // One server: a plain child in the driver's process group. stdout and stderr piped to ours.
    if (!cluster) return new NatsServer(spawn(file, args, { stdio: ['ignore', 'pipe', 'pipe'] }), port, confDir, storeDir);
    // A cluster's: a group of its own (detached), so one node can be cut alone, and held by a shell
    // until go() (the node's line printed), then exec'd into the server: same pid, same group.
    const proc = spawn('/bin/sh', ['-c', HOLD_UNTIL_GO, 'nats-node', file, ...args], { stdio: ['pipe', 'pipe', 'pipe'], detached: true });
    return new NatsServer(proc, port, confDir, storeDir);
  }

  /**
   * A cluster node's server, held since its spawn: lets it exec nats-server (which opens its store
   * at once). Called once its node line is printed, so that line always comes before the node's
   * first request. Its stdin is closed after the line: a driver gone before it never starts the server.
   */
  go(): void {
    this.proc.stdin?.on('error', () => undefined);
    this.proc.stdin?.end(`${GO_LINE}\n`);
  }

  private async connect(): Promise<NatsConnection> {
    const deadline = Date.now() + START_TIMEOUT_MS;
    let lastError = '';
    while (Date.now() < deadline) {
      if (this.exit) throw new NatsServerError(this.describe(`${this.exitDescription()} before accepting a connection`));
      try {
        return await connect({ servers: this.url, reconnect: false, timeout: Math.max(200, Math.min(2_000, deadline - Date.now())) });
      } catch (err) {
        lastError = (err as Error).message;
        await new Promise((r) => setTimeout(r, 15));
      }
    }
    throw new NatsServerError(this.describe(`accepted no connection within ${START_TIMEOUT_MS} ms (last attempt: ${lastError})`));
  }

  /** Waits up to `ms` for the process to exit (a closed connection is often seen before the exit). */
  async settle(ms: number): Promise<void> {
    await Promise.race([this.exited, new Promise((r) => setTimeout(r, ms).unref())]);
  }

  /** A clean stop: SIGTERM (the server flushes its store; 2.9.10 exits with code 1), SIGKILL if it takes too long. */
  async stop(): Promise<void> {
    if (this.exit) {
      this.cleanup();
      throw new NatsServerError(this.describe(`${this.exitDescription()} before it was stopped`));
    }
    this.sent = 'SIGTERM';
    this.proc.kill('SIGTERM');
    await this.settle(STOP_TIMEOUT_MS);
    if (!this.exit) {
      await this.kill();
      throw new NatsServerError(this.describe(`did not stop within ${STOP_TIMEOUT_MS} ms of SIGTERM (killed)`));
    }
    this.cleanup();
  }

  /** SIGKILL, and wait for the exit (bounded). */
  async kill(): Promise<void> {
    if (!this.exit) {
      this.sent = 'SIGKILL';
      this.proc.kill('SIGKILL');
      await this.settle(STOP_TIMEOUT_MS);
    }
    this.cleanup();
  }

  /** Ended by a signal this driver did not send: the harness's SIGKILL at its node's cut (a cluster's node then awaits its restart). */
  get cut(): boolean {
    return this.exit?.signal != null && this.exit.signal !== this.sent;
  }

  /** True once the process is gone. */
  get gone(): boolean {
    return this.exit !== undefined;
  }

  private cleanup(): void {
    rmSync(this.confDir, { recursive: true, force: true });
  }
}

const GO_LINE = 'go';
/** The wrapper of a cluster node: waits for the go line, then execs its arguments; a closed stdin (the driver gone) ends it. */
const HOLD_UNTIL_GO = `IFS= read -r line || exit 0; [ "$line" = ${GO_LINE} ] || { echo "nats-node: expected '${GO_LINE}' on stdin, got '$line'" >&2; exit 2; }; exec "$@"`;

/** Config folders are named after the driver's pid: one whose driver is gone was left by a cut during start-up. */
const CONFIG_FOLDER_PREFIX = 'powercut-nats-';

function sweepConfigFolders(): void {
  for (const name of readdirSync(os.tmpdir())) {
    const pid = new RegExp(`^${CONFIG_FOLDER_PREFIX}(\\d+)-`).exec(name)?.[1];
    if (pid !== undefined && !processAlive(Number(pid))) rmSync(path.join(os.tmpdir(), name), { recursive: true, force: true });
  }
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
