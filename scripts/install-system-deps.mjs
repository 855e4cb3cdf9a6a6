// Makes sure Debian's `fuse` (fusermount) and `libfuse2` (libfuse.so.2) are installed, `iproute2`
// (`ip`: each driver process gets a network namespace of its own with its loopback brought up by
// `ip link set lo up`; without it drivers share the machine's network, and the gate says so), and in
// powercut's own checkout also `chromium` (the browser the HTML report test renders in; /usr/bin/chromium)
// and `nats-server` (the server the nats-jetstream target's driver starts; its test needs it), and
// what `powercut kernel-check` runs (`qemu-system-x86`, `busybox-static`, `e2fsprogs`, `gcc`,
// `libc6-dev`: QEMU, the guest's shell, the image checker, the static history runner), and `gdb`
// (the native stacks of a driver that stopped answering, in the harness's error).
//   npm preinstall:            as root, installs them; otherwise prints the exact command and goes on
//                              (`npm test` then fails with a clear message if one is still missing).
//                              Only in powercut's own checkout: installed as a dependency of another
//                              project it does nothing (the command that needs FUSE says so).
//   --require (CI gate script): installs FUSE and iproute2 only (the gate never needs a browser or NATS), with sudo when
//                              not root, and exits 1 if it cannot.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const checkout = join(dirname(fileURLToPath(import.meta.url)), '..');
// .ci/run is in the repository, not in the published package.
if (!process.argv.includes('--require') && !existsSync(join(checkout, '.ci', 'run'))) process.exit(0);

const required = process.argv.includes('--require');
const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };

function run(cmd, args) {
  return execFileSync(cmd, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'], env });
}

function installed(name) {
  try {
    return run('dpkg-query', ['-W', '-f=${Status}', name]).includes('install ok installed');
  } catch {
    return false;
  }
}

function hasCandidate(name) {
  try {
    const policy = run('apt-cache', ['policy', name]);
    return policy.includes('Candidate:') && !policy.includes('Candidate: (none)');
  } catch {
    return false;
  }
}

function done(message, ok) {
  (ok ? console.log : console.error)(`powercut: ${message}`);
  process.exit(ok || !required ? 0 : 1);
}

if (process.platform !== 'linux') done(`FUSE tests need Linux; this is ${process.platform}.`, false);
if (!existsSync('/usr/bin/dpkg-query')) done(`not a Debian/Ubuntu system: install FUSE 2 (fusermount and libfuse.so.2), iproute2 (ip)${required ? '' : ', Chromium, nats-server, gdb, and for kernel-check QEMU, a static busybox, e2fsprogs and gcc'} with your package manager.`, false);

// Ubuntu 24.04 renamed libfuse2 to libfuse2t64.
const libNames = ['libfuse2', 'libfuse2t64'];
const missing = [];
if (!installed('fuse')) missing.push('fuse');
if (!libNames.some(installed)) missing.push('libfuse2');
// `unshare` is util-linux's (essential on Debian); `ip` brings a driver's namespace loopback up.
if (!installed('iproute2')) missing.push('iproute2');
if (!required && !installed('chromium')) missing.push('chromium');
if (!required && !installed('nats-server')) missing.push('nats-server');
// A driver that stops answering gets its native stacks in the error (process-group.ts, nativeBacktrace).
if (!required && !installed('gdb')) missing.push('gdb');
// kernel-check (npm run check:kernel, .ci/run): the real kernel under QEMU.
const KERNEL_CHECK = ['qemu-system-x86', 'busybox-static', 'e2fsprogs', 'gcc', 'libc6-dev'];
if (!required) for (const p of KERNEL_CHECK) if (!installed(p)) missing.push(p);
if (missing.length === 0) process.exit(0);

const sudo = process.getuid?.() === 0 ? [] : ['sudo'];
const hint = `sudo apt-get update && sudo apt-get install -y ${missing.join(' ')}`;
if (sudo.length > 0 && !required) done(`missing Debian packages: ${missing.join(', ')}. Install them with:\n  ${hint}`, false);

console.log(`powercut: installing Debian packages: ${missing.join(', ')}`);
try {
  const apt = (...args) => execFileSync(sudo[0] ?? 'apt-get', sudo.length ? ['apt-get', ...args] : args, { stdio: 'inherit', env });
  apt('update', '-qq');
  const names = missing.map((p) => (p === 'libfuse2' && !hasCandidate('libfuse2') && hasCandidate('libfuse2t64') ? 'libfuse2t64' : p));
  // Ubuntu has no `chromium` package (only a snap shim): FUSE still installs; say what the report test needs.
  if (names.includes('chromium') && !hasCandidate('chromium')) {
    names.splice(names.indexOf('chromium'), 1);
    console.error('powercut: apt has no chromium package here; the HTML report test renders in /usr/bin/chromium: install Chromium there to run it.');
  }
  // nats-server is packaged in Debian and Ubuntu (universe); without a candidate, FUSE still installs.
  if (names.includes('nats-server') && !hasCandidate('nats-server')) {
    names.splice(names.indexOf('nats-server'), 1);
    console.error('powercut: apt has no nats-server package here; the nats-jetstream target needs nats-server on the PATH.');
  }
  if (names.length > 0) apt('install', '-y', '-qq', ...names);
} catch (err) {
  done(`could not install ${missing.join(', ')} (${err.message}). Run:\n  ${hint}`, false);
}
