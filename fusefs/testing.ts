// Preconditions of the real-mount tests (test code only: src/layout.test.ts keeps runtime code from
// importing it). A test that cannot check what its name says fails naming what is missing, never
// skips: a skipped test reads as a pass, and these tests guard regressions that look the same (a
// daemon on the stock binding, a test run without root, prints no error of its own).
import { loadFuseNative } from './fuse-native-binding.js';

const RUN_AS_ROOT = 'run npm test as root, as CI does';

/** Throws unless this process runs as root; `what` names what needs it, and why. */
export function requireRoot(what: string): void {
  const uid = process.geteuid?.();
  if (uid !== 0) throw new Error(`${what} needs root, and this test runs as uid ${uid ?? 'unknown'}: ${RUN_AS_ROOT}`);
}

/**
 * Throws unless powercut's patched fuse-native binding loads (fusefs/fuse-native-binding.ts), with
 * the functions only it has: umount2 and move_mount in the daemon's own process.
 */
export function requirePatchedBinding(what: string): void {
  const { patched, stockReason, binding } = loadFuseNative();
  if (!patched) {
    throw new Error(`${what} needs powercut's patched fuse-native binding, which did not build (${stockReason}): it is compiled with cc against Node's headers (Debian: apt-get install -y gcc)`);
  }
  const missing = (['powercut_umount2', 'powercut_move_mount'] as const).filter((f) => typeof binding[f] !== 'function');
  if (missing.length > 0) throw new Error(`${what} needs the patched binding's ${missing.join(' and ')}, which the loaded binding lacks (a build of an older patch?)`);
}
