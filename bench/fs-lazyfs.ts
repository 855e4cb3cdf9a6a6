// LazyFS (github.com/dsrhaslab/lazyfs) as a target of `npm run bench:fs -- --lazyfs PATH`: the
// peer a user compares powercut's mount with. The binary is the user's own build (docs/fs.md, "Speed"
// says how); nothing of LazyFS is part of powercut. It runs in the foreground over a root directory of
// its own, with its page cache large enough for every workload and no eviction, so it keeps every
// write in memory as powercut does. It allocates that cache, touching every page, before it mounts:
// its writes never take a page fault.
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { exited, track, untrack, type Target } from './fs-bench-lib.js';

/** Its cache: above the largest workload (64 MiB) many times over, so nothing is evicted. */
const CACHE_SIZE = '2gb';
/** LazyFS allocates and touches its whole cache before it mounts: 2 GB took 46 s on a loaded 2-core VM. */
const MOUNT_TIMEOUT_MS = 180_000;
const STOP_TIMEOUT_MS = 5_000;
const POLL_MS = 50;

const mounted = (mountpoint: string) => readFileSync('/proc/mounts', 'utf8').split('\n').some((l) => l.split(' ')[1] === mountpoint);

/** Starts LazyFS at `work`/lazyfs-mnt over `work`/lazyfs-root; the target stops it (SIGTERM, then SIGKILL and a lazy unmount). */
export async function startLazyFs(binary: string, work: string, name: string): Promise<Target> {
  if (!existsSync(binary)) throw new Error(`--lazyfs ${binary}: no such file (build LazyFS first: docs/fs.md, "Speed")`);
  const mountpoint = join(work, 'lazyfs-mnt');
  const root = join(work, 'lazyfs-root');
  mkdirSync(mountpoint, { recursive: true });
  mkdirSync(root, { recursive: true });
  // Its fault thread reads commands from a fifo; one that exists keeps it waiting quietly.
  const fifo = join(work, 'lazyfs.fifo');
  execFileSync('mkfifo', [fifo]);
  const config = join(work, 'lazyfs.toml');
  writeFileSync(config, [
    '[faults]', `fifo_path="${fifo}"`,
    '[cache]', 'apply_eviction=false',
    '[cache.simple]', `custom_size="${CACHE_SIZE}"`, 'blocks_per_page=1',
    '[filesystem]', 'log_all_operations=false', 'logfile=""', '',
  ].join('\n'));
  const proc = spawn(binary, [mountpoint, '--config-path', config, '-o', 'allow_other', '-o', 'modules=subdir', '-o', `subdir=${root}`, '-f'], { stdio: ['ignore', 'ignore', 'pipe'] });
  track(proc, mountpoint);
  let stderr = '';
  proc.stderr!.on('data', (d: Buffer) => { stderr = (stderr + d.toString()).slice(-2000); });
  const deadline = Date.now() + MOUNT_TIMEOUT_MS;
  while (!mounted(mountpoint)) {
    if (proc.exitCode !== null || proc.signalCode !== null) throw new Error(`LazyFS (${binary}) exited before mounting ${mountpoint}: ${stderr.trim() || `code ${proc.exitCode}`}`);
    if (Date.now() > deadline) {
      proc.kill('SIGKILL');
      throw new Error(`LazyFS (${binary}) did not mount ${mountpoint} within ${MOUNT_TIMEOUT_MS} ms: ${stderr.trim()}`);
    }
    await new Promise((r) => setTimeout(r, POLL_MS));
  }
  return {
    name,
    dir: mountpoint,
    stop: async () => {
      proc.kill('SIGTERM'); // libfuse's handler: leaves its loop and unmounts
      if (!(await exited(proc, STOP_TIMEOUT_MS))) proc.kill('SIGKILL');
      await exited(proc, STOP_TIMEOUT_MS);
      await untrack(proc, mountpoint);
    },
  };
}
