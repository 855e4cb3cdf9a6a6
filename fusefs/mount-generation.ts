// Mounting and unmounting one fuse-native instance over the shared state, with bounded waits.
import Fuse from 'fuse-native';
import { makeFuseOps, type FsState } from './fuse-adapter.js';

// big_writes: 128 KiB writes (fuse-native has no option; fsname is joined into -o). hard_remove:
// an unlinked open file stays reachable by its handle instead of being renamed to .fuse_hidden.
// Zero cache timeouts: a reset that is not frozen changes the tree behind the kernel's back without a remount.
const MOUNT_OPTIONS = 'powercut,big_writes,hard_remove,entry_timeout=0,attr_timeout=0,negative_timeout=0';
const MOUNT_TIMEOUT_MS = 10_000;

export interface Mounted {
  fuse: Fuse;
  generation: number;
}

function withTimeout<T>(what: string, ms: number, p: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout;
  return Promise.race([
    p,
    new Promise<T>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${what} did not finish within ${ms} ms`)), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}

export async function mountGeneration(mountpoint: string, state: FsState): Promise<Mounted> {
  const generation = ++state.generation;
  const fuse = new Fuse(mountpoint, makeFuseOps(state, generation), {
    force: true, // cleans a stale mount left by a killed daemon (fusermount -uz)
    mkdir: true,
    autoUnmount: true,
    timeout: false, // a request held at the crash point waits as long as the harness needs
    fsname: MOUNT_OPTIONS,
  });
  await withTimeout(`mounting ${mountpoint}`, MOUNT_TIMEOUT_MS, new Promise<void>((resolve, reject) => {
    fuse.mount((err: Error | null) => (err ? reject(new Error(`cannot mount ${mountpoint}: ${err.message}`)) : resolve()));
  }));
  return { fuse, generation };
}

/** Detaches the mount; requests still arriving on it are answered EIO by the dead generation. */
export async function unmountGeneration(m: Mounted, state: FsState): Promise<void> {
  if (state.generation === m.generation) state.generation++;
  await withTimeout('unmounting', MOUNT_TIMEOUT_MS, new Promise<void>((resolve, reject) => {
    m.fuse.unmount((err: Error | null) => (err ? reject(new Error(`unmount failed: ${err.message}`)) : resolve()));
  }));
}
