// powercut mount MOUNTPOINT --socket PATH [--image DIR]: the fs daemon in the foreground.
import { resolve } from 'node:path';
import { parseCommandArgs, usageFail, type Command } from './usage.js';
import { runDaemon } from '../../fusefs/daemon.js';

export const help = `usage: powercut mount MOUNTPOINT --socket PATH [--image DIR]

Mounts the powercut filesystem at MOUNTPOINT (created if missing) and serves control requests
on the Unix socket PATH (mode 0600) until Ctrl-C or SIGTERM, which unmount it. A stale mount
left at MOUNTPOINT by a killed daemon is cleaned first. Prints one JSON line
{"event":"mounted",...} when ready.

options:
  --socket PATH   control socket (required)
  --image DIR     start from the files under DIR as the durable state
  -h, --help      this help

exit codes: 0 after a clean unmount, 1 on an error (message on stderr), 2 on a usage error`;

export const run: Command = async (argv) => {
  const { values, positionals } = parseCommandArgs(
    { args: argv, options: { socket: { type: 'string' }, image: { type: 'string' }, help: { type: 'boolean', short: 'h' } }, allowPositionals: true },
    help,
  );
  if (values.help) {
    console.log(help);
    return 0;
  }
  if (positionals.length !== 1) usageFail(positionals.length === 0 ? 'MOUNTPOINT is required' : `unexpected argument '${positionals[1]}'`, help);
  if (!values.socket) usageFail('--socket PATH is required', help);
  return runDaemon({ mountpoint: resolve(positionals[0]), socket: resolve(values.socket), image: values.image && resolve(values.image) });
};
