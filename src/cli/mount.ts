// powercut mount MOUNTPOINT... --socket PATH [--image DIR]: the fs daemon in the foreground.
import { resolve } from 'node:path';
import { parseCommandArgs, usageFail, type Command } from './usage.js';
import { parseBytes, runDaemon } from '../../fusefs/daemon.js';
import { DEFAULT_MAX_DATA_BYTES } from '../../fusefs/faults.js';
import { DEFAULT_MAX_RECORDING_BYTES } from '../../fusefs/powercut-daemon.js';

export const help = `usage: powercut mount MOUNTPOINT... --socket PATH [--image DIR] [--max-data-bytes N] [--max-recording-bytes N]

Mounts the powercut filesystem at MOUNTPOINT (created if missing) and serves control requests
on the Unix socket PATH (mode 0600) until Ctrl-C or SIGTERM, which unmount it. A stale mount
left at MOUNTPOINT by a killed daemon is cleaned first. Prints one JSON line
{"event":"mounted",...} when ready. Several MOUNTPOINTs serve a cluster: one disk per node,
node 0 first, every node's requests numbered in one order (docs/cluster.md).

options:
  --socket PATH   control socket (required)
  --image DIR     start from the files under DIR as the durable state (a cluster: DIR/node0,
                  DIR/node1, ...)
  --max-data-bytes N
                  the disk's size: a write or fallocate that would make the files' blocks (holes
                  are free) exceed it gets ENOSPC (default ${DEFAULT_MAX_DATA_BYTES}); file data lives in the
                  daemon's memory, in 64 KiB chunks shared by the live and durable versions
  --max-recording-bytes N
                  what a recorded run (exhaustive mode) may keep, write data and calls
                  (default ${DEFAULT_MAX_RECORDING_BYTES}); beyond it the recording is dropped and
                  its crash states are refused with a message naming this bound
  -h, --help      this help

exit codes: 0 after a clean unmount, 1 on an error (message on stderr), 2 on a usage error`;

export const run: Command = async (argv) => {
  const { values, positionals } = parseCommandArgs(
    { args: argv, options: { socket: { type: 'string' }, image: { type: 'string' }, 'max-data-bytes': { type: 'string' }, 'max-recording-bytes': { type: 'string' }, help: { type: 'boolean', short: 'h' } }, allowPositionals: true },
    help,
  );
  if (values.help) {
    console.log(help);
    return 0;
  }
  if (positionals.length === 0) usageFail('MOUNTPOINT is required', help);
  if (!values.socket) usageFail('--socket PATH is required', help);
  let limits;
  try {
    limits = { maxDataBytes: parseBytes(values['max-data-bytes'], '--max-data-bytes'), maxRecordingBytes: parseBytes(values['max-recording-bytes'], '--max-recording-bytes') };
  } catch (err) {
    usageFail((err as Error).message, help);
  }
  return runDaemon({ mountpoints: positionals.map((m) => resolve(m)), socket: resolve(values.socket), image: values.image && resolve(values.image), ...limits });
};
