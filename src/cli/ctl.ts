// powercut ctl --socket PATH <command> [options]: one control request, prints the JSON answer.
import { resolve } from 'node:path';
import { parseCommandArgs, UsageError, usageFail, type Command } from './usage.js';
import { ControlClient, CRASH_TIMEOUT_MS } from '../harness/control-client.js';
import { parseCrashPoint, parseFault, parseRequest } from '../../fusefs/control-validate.js';
import type { ControlRequest } from '../../fusefs/protocol.js';
import { MUTATING_KINDS, POLICIES } from '../../fusefs/protocol.js';

export const help = `usage: powercut ctl --socket PATH <command> [options]

Sends one control request to a running 'powercut mount' and prints the JSON answer.

commands:
  status                       mountpoint, mutating requests so far, armed crash point, frozen or not
  arm --at-op N [--kind K] [--path GLOB] [--timing before|after] [--node K]
                               crash at the Nth mutating request since mount (or the Nth of kind K,
                               or the Nth touching GLOB, or the Nth of node K's mount); K: ${MUTATING_KINDS.join('|')};
                               timing defaults to before (N is not applied)
  disarm                       forget the crash point
  wait-frozen [--timeout-ms MS] wait until the crash point is reached (default 10000 ms)
  release [--at-op N ...]      thaw a freeze without a power cut (a pause: stop a node's processes
                               first); with --at-op and arm's other options, arm the next point at once
  crash [--policy P] [--seed N] [--nodes 0,2]
                               power cut and remount; P: ${POLICIES.join('|')} (default lose-unsynced);
                               --nodes: only these nodes of a cluster lose power, the others run on
  trace                        every mutating request since mount, with results
  image --out DIR [--state durable|live] [--node K]
                               write the durable (default) or live state as files under DIR (new or empty);
                               a cluster's nodes under DIR/node<k>, or node K's alone at DIR
  fault --type fsync-eio --path GLOB [--count N]
  fault --type enospc --after-bytes N
  fault --type read-eio --path GLOB --offset N --length N
  fault --type bitflip --path GLOB --offset N [--bit 0-7]
                               every fault takes --node K: only node K's mount (default: every node)
  clear-faults                 remove every fault
  reset                        empty filesystem, zeroed counters, disarmed, faults cleared
  shutdown                     unmount and stop the daemon

exit codes: 0 ok answer, 1 error answer or no daemon, 2 usage error`;

const options = {
  socket: { type: 'string' }, 'at-op': { type: 'string' }, kind: { type: 'string' }, path: { type: 'string' },
  timing: { type: 'string' }, policy: { type: 'string' }, seed: { type: 'string' }, out: { type: 'string' },
  state: { type: 'string' }, type: { type: 'string' }, count: { type: 'string' }, 'after-bytes': { type: 'string' },
  offset: { type: 'string' }, length: { type: 'string' }, bit: { type: 'string' }, 'timeout-ms': { type: 'string' },
  node: { type: 'string' }, nodes: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

/** Options this command accepts, so a misplaced one is a usage error, not silently ignored. */
const ACCEPTS: Record<string, string[]> = {
  status: [], disarm: [], trace: [], 'clear-faults': [], reset: [], shutdown: [],
  arm: ['at-op', 'kind', 'path', 'timing', 'node'], release: ['at-op', 'kind', 'path', 'timing', 'node'],
  'wait-frozen': ['timeout-ms'], crash: ['policy', 'seed', 'nodes'],
  image: ['out', 'state', 'node'], fault: ['type', 'path', 'count', 'after-bytes', 'offset', 'length', 'bit', 'node'],
};

function num(v: string | undefined, flag: string): number | undefined {
  if (v === undefined) return undefined;
  if (!/^-?\d+$/.test(v)) usageFail(`--${flag} must be an integer, got '${v}'`, help);
  return Number(v);
}

function build(cmd: string, v: Record<string, string | boolean | undefined>): ControlRequest {
  const s = (k: string) => v[k] as string | undefined;
  const strip = <T extends object>(o: T) => Object.fromEntries(Object.entries(o).filter(([, x]) => x !== undefined)) as Record<string, unknown>;
  const point = () => parseCrashPoint(strip({ atOp: num(s('at-op'), 'at-op'), kind: s('kind'), path: s('path'), timing: s('timing') ?? 'before', node: num(s('node'), 'node') }));
  const nodeList = (v: string | undefined) => {
    if (v === undefined) return undefined;
    if (!/^\d+(,\d+)*$/.test(v)) usageFail(`--nodes must list node indexes separated by commas (0,2), got '${v}'`, help);
    return v.split(',').map(Number);
  };
  try {
    switch (cmd) {
      case 'arm':
        if (s('at-op') === undefined) usageFail('arm needs --at-op N', help);
        return { cmd, ...point() };
      case 'release':
        if (s('at-op') === undefined && ['kind', 'path', 'timing', 'node'].some((k) => s(k) !== undefined)) usageFail('release arms a point only with --at-op N', help);
        return s('at-op') === undefined ? { cmd } : { cmd, arm: point() };
      case 'wait-frozen':
        return { cmd, timeoutMs: num(s('timeout-ms'), 'timeout-ms') ?? 10_000 };
      case 'crash':
        return strip({ cmd, policy: s('policy'), seed: num(s('seed'), 'seed'), nodes: nodeList(s('nodes')) }) as ControlRequest;
      case 'image':
        if (!s('out')) usageFail('image needs --out DIR', help);
        return strip({ cmd, out: resolve(s('out')!), state: s('state'), node: num(s('node'), 'node') }) as ControlRequest;
      case 'fault':
        return { cmd, ...parseFault(strip({ type: s('type'), path: s('path'), count: num(s('count'), 'count'), afterBytes: num(s('after-bytes'), 'after-bytes'), offset: num(s('offset'), 'offset'), length: num(s('length'), 'length'), bit: num(s('bit'), 'bit'), node: num(s('node'), 'node') })) };
      default:
        return { cmd } as ControlRequest;
    }
  } catch (e) {
    if (e instanceof Error && !(e instanceof UsageError)) usageFail(e.message, help);
    throw e;
  }
}

export const run: Command = async (argv) => {
  const { values, positionals } = parseCommandArgs({ args: argv, options, allowPositionals: true }, help);
  if (values.help) {
    console.log(help);
    return 0;
  }
  const [cmd, extra] = positionals;
  if (cmd === undefined) usageFail('a command is required', help);
  if (!(cmd in ACCEPTS)) usageFail(`unknown command '${cmd}'`, help);
  if (extra !== undefined) usageFail(`unexpected argument '${extra}'`, help);
  if (!values.socket) usageFail('--socket PATH is required', help);
  for (const k of Object.keys(values)) {
    if (k !== 'socket' && k !== 'help' && !ACCEPTS[cmd].includes(k)) usageFail(`${cmd} does not take --${k}`, help);
  }
  let req = build(cmd, values);
  try {
    req = parseRequest(JSON.stringify(req)); // the daemon's own validation, reported as a usage error
  } catch (e) {
    usageFail((e as Error).message, help);
  }
  const client = await ControlClient.connect(resolve(values.socket));
  try {
    const timeoutMs = req.cmd === 'wait-frozen' ? req.timeoutMs + 10_000 : CRASH_TIMEOUT_MS;
    const answer = await client.request(req, timeoutMs);
    console.log(JSON.stringify(answer));
    return answer.ok ? 0 : 1;
  } finally {
    client.close();
  }
};
