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
  arm --at-op N [--kind K] [--path GLOB] [--timing before|after]
                               crash at the Nth mutating request since mount (or the Nth of kind K,
                               or the Nth touching GLOB); K: ${MUTATING_KINDS.join('|')}; timing
                               defaults to before (N is not applied)
  disarm                       forget the crash point
  wait-frozen [--timeout-ms MS] wait until the crash point is reached (default 10000 ms)
  crash [--policy P] [--seed N] power cut and remount; P: ${POLICIES.join('|')} (default lose-unsynced)
  trace                        every mutating request since mount, with results
  image --out DIR [--state durable|live]
                               write the durable (default) or live state as files under DIR (new or empty)
  fault --type fsync-eio --path GLOB [--count N]
  fault --type enospc --after-bytes N
  fault --type read-eio --path GLOB --offset N --length N
  fault --type bitflip --path GLOB --offset N [--bit 0-7]
  clear-faults                 remove every fault
  reset                        empty filesystem, zeroed counters, disarmed, faults cleared
  shutdown                     unmount and stop the daemon

exit codes: 0 ok answer, 1 error answer or no daemon, 2 usage error`;

const options = {
  socket: { type: 'string' }, 'at-op': { type: 'string' }, kind: { type: 'string' }, path: { type: 'string' },
  timing: { type: 'string' }, policy: { type: 'string' }, seed: { type: 'string' }, out: { type: 'string' },
  state: { type: 'string' }, type: { type: 'string' }, count: { type: 'string' }, 'after-bytes': { type: 'string' },
  offset: { type: 'string' }, length: { type: 'string' }, bit: { type: 'string' }, 'timeout-ms': { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

/** Options this command accepts, so a misplaced one is a usage error, not silently ignored. */
const ACCEPTS: Record<string, string[]> = {
  status: [], disarm: [], trace: [], 'clear-faults': [], reset: [], shutdown: [],
  arm: ['at-op', 'kind', 'path', 'timing'], 'wait-frozen': ['timeout-ms'], crash: ['policy', 'seed'],
  image: ['out', 'state'], fault: ['type', 'path', 'count', 'after-bytes', 'offset', 'length', 'bit'],
};

function num(v: string | undefined, flag: string): number | undefined {
  if (v === undefined) return undefined;
  if (!/^-?\d+$/.test(v)) usageFail(`--${flag} must be an integer, got '${v}'`, help);
  return Number(v);
}

function build(cmd: string, v: Record<string, string | boolean | undefined>): ControlRequest {
  const s = (k: string) => v[k] as string | undefined;
  const strip = <T extends object>(o: T) => Object.fromEntries(Object.entries(o).filter(([, x]) => x !== undefined)) as Record<string, unknown>;
  try {
    switch (cmd) {
      case 'arm':
        if (s('at-op') === undefined) usageFail('arm needs --at-op N', help);
        return { cmd, ...parseCrashPoint(strip({ atOp: num(s('at-op'), 'at-op'), kind: s('kind'), path: s('path'), timing: s('timing') ?? 'before' })) };
      case 'wait-frozen':
        return { cmd, timeoutMs: num(s('timeout-ms'), 'timeout-ms') ?? 10_000 };
      case 'crash':
        return strip({ cmd, policy: s('policy'), seed: num(s('seed'), 'seed') }) as ControlRequest;
      case 'image':
        if (!s('out')) usageFail('image needs --out DIR', help);
        return strip({ cmd, out: resolve(s('out')!), state: s('state') }) as ControlRequest;
      case 'fault':
        return { cmd, ...parseFault(strip({ type: s('type'), path: s('path'), count: num(s('count'), 'count'), afterBytes: num(s('after-bytes'), 'after-bytes'), offset: num(s('offset'), 'offset'), length: num(s('length'), 'length'), bit: num(s('bit'), 'bit') })) };
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
