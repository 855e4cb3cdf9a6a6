// npm preinstall: make sure Debian's `fuse` (fusermount) and `libfuse2` are present.
// As root on Debian/Ubuntu we install them; otherwise we print the exact command and go on,
// because `npm test` fails later with a clear message if FUSE is still missing.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';

const packages = ['fuse', 'libfuse2'];
const hint = `sudo apt-get update && sudo apt-get install -y ${packages.join(' ')}`;

function hasPackage(name) {
  try {
    const status = execFileSync('dpkg-query', ['-W', '-f=${Status}', name], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
    return status.includes('install ok installed');
  } catch {
    return false;
  }
}

if (process.platform !== 'linux') {
  console.warn(`powercut: FUSE tests need Linux; this is ${process.platform}.`);
  process.exit(0);
}
if (!existsSync('/usr/bin/dpkg-query')) {
  console.warn(`powercut: not a Debian/Ubuntu system; install FUSE 2 (fusermount and libfuse.so.2) with your package manager.`);
  process.exit(0);
}
const missing = packages.filter((p) => !hasPackage(p));
if (missing.length === 0) process.exit(0);
if (process.getuid?.() !== 0) {
  console.warn(`powercut: missing Debian packages: ${missing.join(', ')}. Install them with:\n  ${hint}`);
  process.exit(0);
}
console.log(`powercut: installing Debian packages: ${missing.join(', ')}`);
try {
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  execFileSync('apt-get', ['update', '-qq'], { stdio: 'inherit', env });
  execFileSync('apt-get', ['install', '-y', '-qq', ...missing], { stdio: 'inherit', env });
} catch (err) {
  console.error(`powercut: could not install ${missing.join(', ')} (${err.message}). Run:\n  ${hint}`);
  process.exit(1);
}
