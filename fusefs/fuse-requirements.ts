// FUSE must be present: a missing piece is a clear error naming the fix, never a silent skip.
import { accessSync, constants, existsSync } from 'node:fs';
import { execFileSync } from 'node:child_process';

export const FUSE_FIX = 'apt-get install -y fuse libfuse2';

/** The problems that stop a mount, empty when FUSE is usable. */
export function fuseProblems(): string[] {
  const problems: string[] = [];
  try {
    accessSync('/dev/fuse', constants.R_OK | constants.W_OK);
  } catch {
    problems.push(existsSync('/dev/fuse') ? '/dev/fuse is not readable and writable by this user' : '/dev/fuse does not exist (in a container, run it with --device /dev/fuse --cap-add SYS_ADMIN)');
  }
  let ldconfig = '';
  try {
    ldconfig = execFileSync('ldconfig', ['-p'], { encoding: 'utf8', timeout: 5000 });
  } catch {
    ldconfig = '';
  }
  const libPaths = ['/lib/x86_64-linux-gnu/libfuse.so.2', '/usr/lib/x86_64-linux-gnu/libfuse.so.2', '/lib/aarch64-linux-gnu/libfuse.so.2', '/usr/lib/libfuse.so.2', '/lib/libfuse.so.2'];
  if (!ldconfig.includes('libfuse.so.2') && !libPaths.some((p) => existsSync(p))) problems.push(`libfuse.so.2 (libfuse2) is not installed: ${FUSE_FIX}`);
  const path = (process.env.PATH ?? '').split(':').concat(['/bin', '/usr/bin']);
  if (!path.some((d) => existsSync(`${d}/fusermount`))) problems.push(`fusermount is not installed: ${FUSE_FIX}`);
  return problems;
}

/** Throws one Error listing every problem and the fix. */
export function assertFuseAvailable(): void {
  const problems = fuseProblems();
  if (problems.length > 0) throw new Error(`FUSE is not usable on this machine:\n  - ${problems.join('\n  - ')}`);
}
