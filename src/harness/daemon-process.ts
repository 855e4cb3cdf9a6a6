// Starts the fs daemon as its own process (execa), waits for its "mounted" line, and guarantees
// cleanup: stop() is bounded and idempotent; every daemon this process started is stopped on exit,
// SIGINT and SIGTERM; a mount left by a killed daemon is cleaned.
import { execa, execaSync, type ResultPromise } from 'execa';
import { existsSync, statSync } from 'node:fs';
import { readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { fileURLToPath } from 'node:url';
import { dirname, join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { ControlClient } from './control-client.js';
import { OWN_NODE_ENV } from './dist-path.js';
import { runFolder } from './run-folder.js';

export const DEFAULT_START_TIMEOUT_MS = 15_000;
const STOP_TIMEOUT_MS = 5_000;
/** How much of a daemon's stderr is kept for reports. */
const STDERR_TAIL_BYTES = 20_000;
/** Lines of that tail a death report quotes. */
const DEATH_REPORT_LINES = 30;

export function formatDaemonExit(pid: number, e: DaemonExit): string {
  const how = e.signal ? `was killed by ${e.signal}` : `exited with code ${e.exitCode}`;
  const tail = e.stderrTail.trim().split('\n').slice(-DEATH_REPORT_LINES).join('\n  ');
  return `the fs daemon (pid ${pid}) ${how}; ${tail ? `the end of its stderr:\n  ${tail}` : 'it printed nothing on stderr'}`;
}

/** How a daemon process ended, with the end of what it printed on stderr. */
export interface DaemonExit {
  exitCode: number | null;
  signal: string | null;
  stderrTail: string;
}

export interface DaemonHandle {
  pid: number;
  /** Node 0's mount (the only one unless the daemon serves a cluster). */
  mountpoint: string;
  /** Every node's mount, node 0 first. */
  mountpoints: string[];
  socketPath: string;
  client: ControlClient;
  /** null while the daemon runs. */
  exitInfo(): DaemonExit | null;
  /**
   * Waits up to `waitMs` for the daemon to be seen exiting (a closed control socket usually comes
   * just before the exit status) and describes its death, or returns null if it still runs.
   */
  describeDeath(waitMs?: number): Promise<string | null>;
  /** shutdown, else SIGTERM, bounded; then SIGKILL + fusermount -uz. Idempotent. */
  stop(): Promise<void>;
  /** SIGKILL, leaving the mount stale (for tests of cleanup). */
  kill(): void;
}

/** dist/fusefs/daemon.js, whether this module runs from src/ (tests) or from dist/. */
export function daemonEntry(): string {
  const here = dirname(fileURLToPath(import.meta.url));
  const root = here.includes(`${join('dist', 'src')}`) ? resolve(here, '../../..') : resolve(here, '../..');
  const entry = join(root, 'dist', 'fusefs', 'daemon.js');
  if (!existsSync(entry)) throw new Error(`fs daemon not built: ${entry} is missing; run 'npm run build' first`);
  return entry;
}

/** The mount table: each mount's point (its \040 escapes undone) and filesystem type. */
async function mountTable(): Promise<{ point: string; type: string }[]> {
  return (await readFile('/proc/mounts', 'utf8')).split('\n').filter(Boolean).map((l) => {
    const [, point, type] = l.split(' ');
    return { point: point.replace(/\\040/g, ' '), type };
  });
}

async function isMounted(mountpoint: string): Promise<boolean> {
  return (await mountTable()).some((m) => m.point === mountpoint);
}

/** Lazily unmounts whatever is mounted at `mountpoint` (a daemon killed earlier leaves ENOTCONN). */
export async function cleanupStaleMount(mountpoint: string): Promise<void> {
  const abs = resolve(mountpoint);
  if (!(await isMounted(abs))) return;
  await execa('fusermount', ['-uz', abs], { timeout: STOP_TIMEOUT_MS, reject: false });
  if (await isMounted(abs)) await execa('umount', ['-l', abs], { timeout: STOP_TIMEOUT_MS, reject: false });
  if (await isMounted(abs)) throw new Error(`cannot unmount stale mount at ${abs}; run: fusermount -uz ${abs}`);
}

/** How long a mount may take to answer a stat before it counts as alive (a busy daemon of another run). */
const PROBE_TIMEOUT_MS = 2_000;

/**
 * Unmounts the FUSE mounts under folders named `prefix`* whose daemon is dead (ENOTCONN), and
 * removes those folders: what a run killed with SIGKILL left in its random temp folder, which no
 * later run could name. A live mount (another run's) answers its stat and is left alone; the stat
 * runs in a child with a bound, since a stalled daemon would block it.
 */
export async function sweepDeadMounts(prefix: string): Promise<void> {
  const mounts = (await mountTable()).filter((m) => m.type.startsWith('fuse') && m.point.startsWith(prefix)).map((m) => m.point);
  const dead = new Set<string>();
  for (const m of mounts) {
    const r = await execa('stat', ['--', m], { reject: false, timeout: PROBE_TIMEOUT_MS, env: { LC_ALL: 'C' } });
    if (!r.timedOut && /Transport endpoint is not connected/.test(r.stderr)) dead.add(m);
  }
  for (const m of dead) await cleanupStaleMount(m);
  // The run's own folder: the first path segment after the prefix's parent.
  const parent = dirname(prefix);
  const folderOf = (m: string) => join(parent, m.slice(parent.length + 1).split('/')[0]);
  for (const folder of new Set([...dead].map(folderOf))) {
    if (!mounts.some((m) => !dead.has(m) && folderOf(m) === folder)) await rm(folder, { recursive: true, force: true });
  }
}

const live = new Set<DaemonHandle>();
let hooksInstalled = false;

function installExitHooks(): void {
  if (hooksInstalled) return;
  hooksInstalled = true;
  // On exit only synchronous work is possible: SIGKILL the daemons and unmount.
  process.on('exit', () => {
    for (const h of live) {
      try {
        process.kill(h.pid, 'SIGKILL');
      } catch { /* already gone */ }
      for (const m of h.mountpoints) {
        try {
          execaSyncUnmount(m);
        } catch { /* best effort at exit */ }
      }
    }
  });
  for (const sig of ['SIGINT', 'SIGTERM'] as const) {
    process.once(sig, () => {
      void Promise.allSettled([...live].map((h) => h.stop())).then(() => process.kill(process.pid, sig));
    });
  }
}

function execaSyncUnmount(mountpoint: string): void {
  // An exit hook cannot await: the sync API.
  execaSync('fusermount', ['-uz', mountpoint], { reject: false, timeout: STOP_TIMEOUT_MS });
}

/** `mountpoint`: one, or one per node of a cluster (node 0 first), all served by one daemon. */
export async function startDaemon(opts: { mountpoint: string | readonly string[]; socketPath: string; imageDir?: string; startTimeoutMs?: number }): Promise<DaemonHandle> {
  installExitHooks();
  const mountpoints = (typeof opts.mountpoint === 'string' ? [opts.mountpoint] : [...opts.mountpoint]).map((m) => resolve(m));
  const mountpoint = mountpoints[0];
  const socketPath = resolve(opts.socketPath);
  const startTimeoutMs = opts.startTimeoutMs ?? DEFAULT_START_TIMEOUT_MS;
  // Every node's mount is tried, whichever fails: one left mounted must not keep the others so.
  const cleanupAll = async () => {
    const failed = (await Promise.allSettled(mountpoints.map((m) => cleanupStaleMount(m)))).flatMap((r) => (r.status === 'rejected' ? [(r.reason as Error).message] : []));
    if (failed.length > 0) throw new Error(failed.join('\n'));
  };
  await cleanupAll();
  for (const m of mountpoints) if (existsSync(m) && !statSync(m).isDirectory()) throw new Error(`mountpoint ${m} is not a directory`);
  const args = [daemonEntry(), ...mountpoints.flatMap((m) => ['--mountpoint', m]), '--socket', socketPath];
  if (opts.imageDir) args.push('--image', resolve(opts.imageDir));
  const child: ResultPromise = execa(process.execPath, args, { stdout: 'pipe', stderr: 'pipe', reject: false, buffer: false, env: OWN_NODE_ENV });
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => {
    stderr += d.toString();
    if (stderr.length > STDERR_TAIL_BYTES) stderr = stderr.slice(-STDERR_TAIL_BYTES);
  });
  const pid = child.pid!;
  let exit: DaemonExit | null = null;
  const exited = child.then((r) => {
    exit = { exitCode: r.exitCode ?? null, signal: r.signal ?? null, stderrTail: stderr };
  });
  const bounded = (ms: number) => Promise.race([exited.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), ms).unref())]);

  let client: ControlClient;
  try {
    const mountedLine = await new Promise<string>((resolveLine, reject) => {
      const rl = createInterface({ input: child.stdout! });
      const timer = setTimeout(() => {
        reject(new Error(`fs daemon did not report "mounted" within ${startTimeoutMs} ms. stderr:\n${stderr}`));
      }, startTimeoutMs);
      rl.once('line', (line) => {
        clearTimeout(timer);
        resolveLine(line);
      });
      void child.then((r) => {
        clearTimeout(timer);
        reject(new Error(`fs daemon exited (code ${r.exitCode}, signal ${r.signal ?? 'none'}) before mounting. stderr:\n${stderr.trim()}`));
      });
    });
    let event: unknown;
    try {
      event = JSON.parse(mountedLine);
    } catch {
      event = null;
    }
    if ((event as { event?: unknown } | null)?.event !== 'mounted') throw new Error(`fs daemon printed an unexpected first line (want {"event":"mounted",...}): ${mountedLine}`);
    client = await ControlClient.connect(socketPath);
  } catch (e) {
    // The daemon may be mounted already: never leave it (or its mount) behind.
    child.kill('SIGKILL');
    await bounded(STOP_TIMEOUT_MS);
    await cleanupAll();
    throw e;
  }

  let stopping: Promise<void> | null = null;
  const handle: DaemonHandle = {
    pid, mountpoint, mountpoints, socketPath, client,
    exitInfo: () => (exit ? { ...exit, stderrTail: stderr } : null),
    describeDeath: async (waitMs = 2_000) => {
      await bounded(waitMs);
      const e = handle.exitInfo();
      return e && formatDaemonExit(pid, e);
    },
    stop: () => {
      stopping ??= (async () => {
        try {
          await client.shutdown();
        } catch {
          child.kill('SIGTERM');
        }
        client.close();
        if (!(await bounded(STOP_TIMEOUT_MS))) {
          child.kill('SIGKILL');
          await bounded(STOP_TIMEOUT_MS);
        }
        try {
          await cleanupAll();
        } finally {
          live.delete(handle);
        }
      })();
      return stopping;
    },
    kill: () => {
      client.close();
      child.kill('SIGKILL');
      live.delete(handle);
    },
  };
  live.add(handle);
  return handle;
}

export interface TempDaemon {
  daemon: DaemonHandle;
  /** Unmounts, stops the daemon and removes the temporary folder; idempotent. */
  stop(): Promise<void>;
}

/**
 * A daemon on a fresh temporary mountpoint (one per test file or gate run, reused via reset); with
 * `nodes` > 1, a cluster's: mnt0, mnt1, ... in the temporary folder.
 */
export async function startTempDaemon(label: string, nodes = 1): Promise<TempDaemon> {
  await sweepDeadMounts(join(tmpdir(), `powercut-${label}-`));
  const dir = await runFolder(join(tmpdir(), `powercut-${label}-`));
  let daemon: DaemonHandle;
  try {
    const mountpoint = nodes === 1 ? join(dir, 'mnt') : Array.from({ length: nodes }, (_, k) => join(dir, `mnt${k}`));
    daemon = await startDaemon({ mountpoint, socketPath: join(dir, 'control.sock') });
  } catch (err) {
    await rm(dir, { recursive: true, force: true });
    throw err;
  }
  let stopped: Promise<void> | undefined;
  return {
    daemon,
    stop: () =>
      (stopped ??= (async () => {
        await daemon.stop();
        await rm(dir, { recursive: true, force: true });
      })()),
  };
}
