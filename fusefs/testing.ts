// Preconditions and tools of the real-mount tests (test code only: src/layout.test.ts keeps runtime
// code from importing it). A test that cannot check what its name says fails naming what is missing,
// never skips: a skipped test reads as a pass, and these tests guard regressions that look the same (a
// daemon on the stock binding, a test run without root, prints no error of its own).
import { execFileSync } from 'node:child_process';
import { closeSync, fsyncSync, openSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
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

/** fsync(2) of the file or directory at `p` (opened read-only, closed after). */
export function fsyncPath(p: string): void {
  const fd = openSync(p, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/**
 * One fallocate(2) call: `PROG path mode offset length` prints "ok" or strerror(errno) and never
 * fsyncs (util-linux's fallocate(1) does, which would make every change durable). Node has no
 * fallocate: the tests build this with the C compiler the patched binding needs anyway.
 */
const FALLOCATE_CALL_C = String.raw`#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
int main(int argc, char **argv) {
  if (argc != 5) { fprintf(stderr, "usage: fallocate-call PATH MODE OFFSET LENGTH\n"); return 2; }
  int fd = open(argv[1], O_RDWR | O_CREAT, 0644);
  if (fd < 0) { printf("%s\n", strerror(errno)); return 0; }
  int r = fallocate(fd, (int) strtol(argv[2], NULL, 0), strtoll(argv[3], NULL, 0), strtoll(argv[4], NULL, 0));
  printf("%s\n", r == 0 ? "ok" : strerror(errno));
  close(fd);
  return 0;
}
`;

/** Builds the fallocate(2) caller in `dir` (bounded); returns its path. */
export function buildFallocateCall(dir: string): string {
  const src = join(dir, 'fallocate-call.c');
  const bin = join(dir, 'fallocate-call');
  writeFileSync(src, FALLOCATE_CALL_C);
  execFileSync('cc', ['-O1', '-o', bin, src], { stdio: ['ignore', 'ignore', 'pipe'], timeout: 60_000 });
  return bin;
}
