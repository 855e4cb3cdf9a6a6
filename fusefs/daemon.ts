// Entry point: node dist/fusefs/daemon.js --mountpoint M [--mountpoint M2 ...] --socket S [--image DIR]
// Several mountpoints serve a cluster: one mount per node, all requests in one order.
// Prints one JSON line {"event":"mounted",...} once the mount serves requests and the socket
// listens; errors go to stderr with a non-zero exit. Unmounts on SIGTERM/SIGINT.
import { parseArgs } from 'node:util';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { nodeImageDir } from './protocol.js';
import { assertFuseAvailable } from './fuse-requirements.js';
import { PowercutDaemon, type DaemonLimits } from './powercut-daemon.js';
import { listenControl } from './control-server.js';
import { readTree } from './image-files.js';
import { FsModel } from './model/fs-model.js';

/** Set to 1, the daemon checks its model's invariants after every request (npm test does). */
export const CHECK_INVARIANTS_ENV = 'POWERCUT_CHECK_INVARIANTS';

export const DAEMON_USAGE = 'usage: daemon --mountpoint DIR [--mountpoint DIR ...] --socket PATH [--image DIR] [--max-data-bytes N] [--max-recording-bytes N]';

/** The limits are the daemon's (DaemonLimits); absent or undefined, its defaults. */
export interface DaemonOptions extends Partial<DaemonLimits> {
  /** One per node (a cluster has several). */
  mountpoints: string[];
  socket: string;
  /** The files to start from; a cluster's has one folder per node (node0, node1, ...). */
  image?: string;
}

/** A positive byte count from an option, or an error naming the option. */
export function parseBytes(value: string | undefined, flag: string): number | undefined {
  if (value === undefined) return undefined;
  if (!/^[1-9]\d*$/.test(value) || !Number.isSafeInteger(Number(value))) throw new Error(`${flag} must be a positive number of bytes, got '${value}'`);
  return Number(value);
}

export function parseDaemonArgs(argv: string[]): DaemonOptions {
  const { values, positionals } = parseArgs({
    args: argv,
    options: {
      mountpoint: { type: 'string', multiple: true }, socket: { type: 'string' }, image: { type: 'string' },
      'max-data-bytes': { type: 'string' }, 'max-recording-bytes': { type: 'string' },
    },
    allowPositionals: true,
  });
  if (positionals.length > 0) throw new Error(`unexpected argument '${positionals[0]}'\n${DAEMON_USAGE}`);
  if (!values.mountpoint?.length) throw new Error(`--mountpoint is required\n${DAEMON_USAGE}`);
  if (!values.socket) throw new Error(`--socket is required\n${DAEMON_USAGE}`);
  return {
    mountpoints: values.mountpoint.map((m) => resolve(m)), socket: resolve(values.socket), image: values.image && resolve(values.image),
    maxDataBytes: parseBytes(values['max-data-bytes'], '--max-data-bytes'),
    maxRecordingBytes: parseBytes(values['max-recording-bytes'], '--max-recording-bytes'),
  };
}

/** The models to start from: none (empty disks), the image, or a cluster image's node<k> folder per node. */
async function imageModels(opts: DaemonOptions): Promise<FsModel[]> {
  if (!opts.image) return [];
  if (opts.mountpoints.length === 1) return [FsModel.fromTree(await readTree(opts.image))];
  const models: FsModel[] = [];
  for (let k = 0; k < opts.mountpoints.length; k++) {
    const dir = join(opts.image, nodeImageDir(k));
    if (!existsSync(dir)) throw new Error(`--image ${opts.image} has no folder ${nodeImageDir(k)} for node ${k} (a cluster's image holds one folder per node)`);
    models.push(FsModel.fromTree(await readTree(dir)));
  }
  return models;
}

/** The exit code of a daemon that stopped because its model broke an invariant. */
export const INVARIANT_BROKEN_EXIT = 70;

/** Runs the daemon until shutdown or a signal; resolves with the exit code. */
export async function runDaemon(opts: DaemonOptions): Promise<number> {
  assertFuseAvailable();
  const models = await imageModels(opts);
  // An absent limit (undefined) takes the daemon's default.
  const daemon = new PowercutDaemon(opts.mountpoints, models, { ...opts, checkInvariants: process.env[CHECK_INVARIANTS_ENV] === '1' });
  await daemon.mount();
  let server;
  try {
    server = await listenControl(opts.socket, (req) => daemon.handle(req));
  } catch (e) {
    await daemon.unmount();
    throw e;
  }
  return new Promise<number>((done) => {
    let stopping = false;
    const stop = (code: number) => {
      if (stopping) return;
      stopping = true;
      server.close();
      daemon.unmount().then(
        () => done(code),
        (e: Error) => {
          console.error(`powercut daemon: ${e.message}`);
          done(1);
        },
      );
    };
    daemon.onShutdown = () => stop(0);
    daemon.onFatal = (message) => {
      console.error(`powercut daemon: stopping: ${message}`);
      stop(INVARIANT_BROKEN_EXIT);
    };
    process.once('SIGTERM', () => stop(0));
    process.once('SIGINT', () => stop(0));
    const cluster = opts.mountpoints.length > 1 ? { mountpoints: opts.mountpoints } : {};
    console.log(JSON.stringify({ event: 'mounted', mountpoint: opts.mountpoints[0], ...cluster, socket: opts.socket, pid: process.pid }));
  });
}

const isMain = process.argv[1] !== undefined && import.meta.url === new URL(`file://${resolve(process.argv[1])}`).href;
if (isMain) {
  (async () => {
    try {
      const code = await runDaemon(parseDaemonArgs(process.argv.slice(2)));
      // Let the last control answer flush; exit even if a native handle lingers.
      process.exitCode = code;
      setTimeout(() => process.exit(code), 200).unref();
    } catch (e) {
      console.error(`powercut daemon: ${e instanceof Error ? e.message : String(e)}`);
      process.exit(1);
    }
  })();
}
