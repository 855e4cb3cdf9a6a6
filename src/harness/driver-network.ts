// Where a driver's processes listen: each driver process the harness starts gets a network
// namespace of its own, with only a loopback (up), so that drivers running at once never share a
// port. A server that keeps its ports in its data directory (etcd's member list, a Raft peer list)
// is recovered in several slots at once from copies of the same disk: on one loopback the second
// slot's server finds its port taken (`bind: address already in use`, seen as the store's liveness
// failures). As root that is `unshare --net`; otherwise a user namespace as well, where the kernel
// allows one, mapped back to the caller's uid so the driver runs as the user it is (a server that
// refuses root still starts); else every driver shares the machine's network, and the gate says so.
// A driver that must reach something outside its own processes asks for the machine's network
// (--network host). Pipes, files and Unix sockets bound to a path work across namespaces; what a
// namespace hides is TCP/UDP ports and abstract Unix sockets.
import { execFileSync } from 'node:child_process';
import os from 'node:os';

/** What a user asks (--network): a namespace per driver process where the machine allows one, or the machine's network. */
export type DriverNetworkChoice = 'isolated' | 'host';
export const DRIVER_NETWORK_CHOICES: readonly DriverNetworkChoice[] = ['isolated', 'host'];

/** What a driver process gets. */
export interface DriverNetwork {
  /**
   * 'namespace': a network namespace of its own (root: unshare --net); 'user-namespace': a user and
   * network namespace of its own (not root), the driver keeping its uid; 'shared': the machine's
   * network, shared by every driver process (reason says why).
   */
  isolation: 'namespace' | 'user-namespace' | 'shared';
  /** Why 'shared': --network host, or why no namespace could be made here. */
  reason?: string;
}

/** Brings the namespace's loopback up, then becomes the driver (exec: the pid the harness started stays the driver's). */
const LOOPBACK_UP = `ip link set lo up || { echo "powercut: 'ip link set lo up' failed in the driver's network namespace (iproute2's ip)" >&2; exit 125; }`;
/** $0 of the wrapper's shell, as `ps` shows it. */
const WRAPPER_NAME = 'powercut-netns';
const PROBE_TIMEOUT_MS = 10_000;

/** The `unshare` arguments that put a program (appended) in a namespace of kind `isolation`. */
function wrapperArgs(isolation: 'namespace' | 'user-namespace'): string[] {
  if (isolation === 'namespace') return ['--net', '--', '/bin/sh', '-c', `${LOOPBACK_UP}; exec "$@"`, WRAPPER_NAME];
  // -r makes the caller root of the new user namespace, which `ip` needs; a nested user namespace
  // then maps the caller's own uid and gid back, so the driver runs as who it is.
  const uid = process.getuid?.() ?? 0;
  const gid = process.getgid?.() ?? 0;
  const back = uid === 0 ? '' : `unshare --user --map-user=${uid} --map-group=${gid} -- `;
  return ['--user', '--map-root-user', '--net', '--', '/bin/sh', '-c', `${LOOPBACK_UP}; exec ${back}"$@"`, WRAPPER_NAME];
}

/** The last line of a failed probe's stderr (or its error), for the gate's words. */
function whyFailed(err: unknown): string {
  const e = err as { stderr?: Buffer | string; code?: string; message?: string };
  if (e.code === 'ENOENT') return 'unshare (util-linux) is not installed';
  const said = String(e.stderr ?? '').trim().split('\n').pop();
  return said || (e.message ?? String(err)).split('\n')[0];
}

function probe(): DriverNetwork {
  const failed: string[] = [];
  let noIp = false;
  for (const isolation of ['namespace', 'user-namespace'] as const) {
    try {
      execFileSync('unshare', [...wrapperArgs(isolation), 'true'], { stdio: ['ignore', 'ignore', 'pipe'], timeout: PROBE_TIMEOUT_MS });
      return { isolation };
    } catch (err) {
      failed.push(`${isolation === 'namespace' ? 'unshare --net' : 'unshare --user --net'}: ${whyFailed(err)}`);
      // The shell's own words when there is no `ip` to run.
      noIp ||= /\bip: (not found|No such file)/.test(String((err as { stderr?: unknown }).stderr ?? ''));
    }
  }
  return { isolation: 'shared', reason: `no network namespace could be made here (${failed.join('; ')})${noIp ? '; install iproute2 (the ip command)' : ''}` };
}

let probed: DriverNetwork | undefined;

/** What this machine gives a driver process asking `choice` (probed once per process: a few milliseconds). */
export function driverNetwork(choice: DriverNetworkChoice = 'isolated'): DriverNetwork {
  if (choice === 'host') return { isolation: 'shared', reason: '--network host' };
  if (os.platform() !== 'linux') return { isolation: 'shared', reason: `network namespaces are Linux's; this is ${os.platform()}` };
  return (probed ??= probe());
}

/** A command to start (driver-process.ts's DriverCommand), in the network it asks for. */
interface Spawned {
  file: string;
  args: string[];
  network?: DriverNetworkChoice;
}

/** The command that runs `command` in the network its driver gets: wrapped in unshare, or as it is. */
export function inDriverNetwork<C extends Spawned>(command: C): C {
  const n = driverNetwork(command.network);
  if (n.isolation === 'shared') return command;
  return { ...command, file: 'unshare', args: [...wrapperArgs(n.isolation), command.file, ...command.args] };
}

/** The gate's words for it (its first line and summary). */
export function describeDriverNetwork(n: DriverNetwork): string {
  if (n.isolation === 'namespace') return 'each driver process in a network namespace of its own (unshare --net): recovery slots never share a port';
  if (n.isolation === 'user-namespace') return 'each driver process in a user and network namespace of its own (unshare --user --net, not root): recovery slots never share a port';
  return `shared by every driver process (${n.reason}): recovery slots share one loopback, so a driver whose servers keep their ports in their data directory must choose new ones in offline runs (docs/driver-protocol.md, "Ports and the network")`;
}
