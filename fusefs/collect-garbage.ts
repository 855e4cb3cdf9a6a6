// A full garbage collection of the daemon's JavaScript heap, on request. The memory the model frees
// (write data in the binding's slabs, file chunks) goes back to the binding's pools only once the heap
// collects the Buffers that held it; until then every new write lands in memory touched for the first
// time, which on some VMs costs 15-50 us a page (docs/fs.md, "Speed"). After a reset, a power cut or
// a state loaded, the daemon collects if much was written since the last collection.
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

let gc: (() => void) | null | undefined;

/** Collects the whole heap; false where this Node does not allow it (said once on stderr). */
export function collectGarbage(): boolean {
  if (gc === undefined) {
    // --expose-gc makes `gc` a global of contexts made from now on; the daemon's own is left as it is.
    setFlagsFromString('--expose-gc');
    const f = runInNewContext('gc') as unknown;
    gc = typeof f === 'function' ? (f as () => void) : null;
    if (gc === null) console.error('powercut fs: this Node does not expose gc(); freed write data is reused only once the heap collects it by itself');
  }
  if (gc === null) return false;
  gc();
  return true;
}
