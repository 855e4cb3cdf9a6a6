// The real kernel under QEMU: what kernel-check needs on the host (and the apt line that installs
// it), Debian's kernel package fetched with `apt-get download` and unpacked with `dpkg-deb -x` into a
// cache (installing it would run its hooks), the history runner compiled there, a busybox initramfs,
// and one boot that runs several histories at once, one disk each, every write and flush of each disk
// logged by QEMU's blklogwrites driver.
import { spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { mkdir, readFile, readdir, rename, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { cpioNewc, type CpioEntry } from './cpio.js';
import { runTool } from './ext4-image.js';
import { RUNNER_C } from './guest-runner.js';

/** Debian packages kernel-check needs: QEMU, a static busybox for the guest, e2fsprogs and gcc (a static runner) on the host. */
export const KERNEL_CHECK_PACKAGES = ['qemu-system-x86', 'busybox-static', 'e2fsprogs', 'gcc', 'libc6-dev'] as const;

/** The kernel modules ext4 on a virtio disk needs, in the order they load (each after what it uses). */
export const GUEST_MODULES = [
  'kernel/fs/mbcache.ko', 'kernel/fs/jbd2/jbd2.ko', 'kernel/lib/crc16.ko', 'kernel/crypto/crc32c_generic.ko', 'kernel/fs/ext4/ext4.ko',
  'kernel/drivers/virtio/virtio_ring.ko', 'kernel/drivers/virtio/virtio.ko', 'kernel/drivers/virtio/virtio_pci_modern_dev.ko',
  'kernel/drivers/virtio/virtio_pci_legacy_dev.ko', 'kernel/drivers/virtio/virtio_pci.ko', 'kernel/drivers/block/virtio_blk.ko',
] as const;

const BUSYBOX = ['/bin/busybox', '/usr/bin/busybox'];
const LIBC_A = '/usr/lib/x86_64-linux-gnu/libc.a';

/** How the host is probed for tools (a test passes its own). */
export interface HostProbe {
  onPath(cmd: string): boolean;
  exists(file: string): boolean;
  /** The first bytes of a file. */
  head(file: string): Buffer;
}

export const realHost: HostProbe = {
  onPath: (cmd) => (process.env.PATH ?? '').split(':').concat(['/usr/sbin', '/sbin']).some((d) => d !== '' && existsSync(path.join(d, cmd))),
  exists: (file) => existsSync(file),
  head: (file) => readFileSync(file).subarray(0, 1 << 16),
};

/** What is missing on this host, by Debian package (empty: nothing). */
export function missingPackages(host: HostProbe = realHost): string[] {
  const missing: string[] = [];
  if (!host.onPath('qemu-system-x86_64')) missing.push('qemu-system-x86');
  // Debian's busybox package is dynamically linked: the guest has no libc, so it needs busybox-static.
  const bb = BUSYBOX.find((p) => host.exists(p));
  if (!bb || host.head(bb).includes('ld-linux')) missing.push('busybox-static');
  if (['e2fsck', 'debugfs', 'mkfs.ext4'].some((t) => !host.onPath(t))) missing.push('e2fsprogs');
  if (!host.onPath('gcc')) missing.push('gcc');
  if (!host.exists(LIBC_A)) missing.push('libc6-dev');
  return missing;
}

/** Throws, naming every missing package and the apt line that installs it, unless kernel-check can run here. */
export function requireHostTools(host: HostProbe = realHost): void {
  for (const t of ['apt-get', 'apt-cache', 'dpkg-deb']) {
    if (!host.onPath(t)) throw new Error(`kernel-check needs Debian's ${t} (it fetches the kernel as a Debian package with apt-get download): run it on Debian or Ubuntu`);
  }
  const missing = missingPackages(host);
  if (missing.length > 0) {
    throw new Error(`kernel-check needs Debian packages that are not installed: ${missing.join(', ')}. Install them with:\n  sudo apt-get update && sudo apt-get install -y ${missing.join(' ')}`);
  }
}

export function cacheDir(): string {
  return process.env.POWERCUT_CACHE ?? path.join(process.env.XDG_CACHE_HOME ?? path.join(os.homedir(), '.cache'), 'powercut', 'kernel-check');
}

export interface Kernel {
  /** The Debian package it came from, e.g. linux-image-6.1.0-57-amd64 6.1.192-3. */
  package: string;
  version: string;
  vmlinuz: string;
  modulesDir: string;
}

/**
 * Debian's current kernel (the package linux-image-amd64 depends on), downloaded with apt-get
 * download and unpacked with dpkg-deb -x into the cache, once. `POWERCUT_KERNEL_PACKAGE` names another.
 */
export async function debianKernel(cache = cacheDir()): Promise<Kernel> {
  let pkg = process.env.POWERCUT_KERNEL_PACKAGE;
  if (!pkg) {
    const dep = await runTool('apt-cache', ['depends', 'linux-image-amd64']);
    pkg = /Depends: (linux-image-[0-9][^\s]*-amd64)/.exec(dep.stdout)?.[1];
    if (!pkg) throw new Error(`apt-cache depends linux-image-amd64 names no kernel package (exit ${dep.code}); run apt-get update, or set POWERCUT_KERNEL_PACKAGE`);
  }
  const root = path.join(cache, pkg);
  const done = path.join(root, '.unpacked');
  if (!existsSync(done)) {
    const dl = path.join(cache, `download-${process.pid}`);
    await rm(dl, { recursive: true, force: true });
    await mkdir(dl, { recursive: true });
    const guard = removeOnSignal(dl);
    try {
      const r = await runTool('apt-get', ['download', pkg], 600_000, dl);
      if (r.code !== 0) throw new Error(`apt-get download ${pkg} failed (exit ${r.code}): ${r.stderr.trim()}`);
      const deb = (await readdir(dl)).find((f) => f.endsWith('.deb'));
      if (!deb) throw new Error(`apt-get download ${pkg} left no .deb`);
      const unpack = path.join(dl, 'root');
      const x = await runTool('dpkg-deb', ['-x', path.join(dl, deb), unpack], 600_000);
      if (x.code !== 0) throw new Error(`dpkg-deb -x ${deb} failed: ${x.stderr.trim()}`);
      await writeFile(path.join(unpack, '.unpacked'), deb);
      await rm(root, { recursive: true, force: true });
      await rename(unpack, root);
    } finally {
      await rm(dl, { recursive: true, force: true });
      guard.release();
    }
  }
  const deb = (await readFile(done, 'utf8')).trim();
  const version = /_([^_]+)_amd64\.deb$/.exec(deb)?.[1] ?? 'unknown';
  const boot = (await readdir(path.join(root, 'boot'))).find((f) => f.startsWith('vmlinuz-'));
  const mods = await readdir(path.join(root, 'lib', 'modules'));
  if (!boot || mods.length !== 1) throw new Error(`${root} holds no vmlinuz or not one module tree`);
  return { package: pkg, version, vmlinuz: path.join(root, 'boot', boot), modulesDir: path.join(root, 'lib', 'modules', mods[0]) };
}

/** The runner, compiled once per source into the cache. */
export async function guestRunner(cache = cacheDir()): Promise<string> {
  const hash = createHash('sha1').update(RUNNER_C).digest('hex').slice(0, 12);
  const bin = path.join(cache, `runner-${hash}`);
  if (existsSync(bin)) return bin;
  await mkdir(cache, { recursive: true });
  const src = path.join(cache, `runner-${hash}-${process.pid}.c`);
  await writeFile(src, RUNNER_C);
  try {
    const r = await runTool('gcc', ['-static', '-O2', '-o', `${bin}.tmp${process.pid}`, src]);
    if (r.code !== 0) throw new Error(`gcc -static failed compiling the guest runner: ${r.stderr.trim()}`);
    await rename(`${bin}.tmp${process.pid}`, bin);
  } finally {
    await rm(src, { force: true });
  }
  return bin;
}

/** Write-back settings of one boot (centiseconds, /proc/sys/vm): varied between boots so runs sample more of ext4's timing. */
export interface WritebackSettings {
  dirtyExpireCs: number;
  dirtyWritebackCs: number;
}

export interface GuestDisk {
  image: string;
  log: string;
  /** The runner's spec text. */
  spec: string;
  /** Byte offset of the marker region (past the filesystem). */
  markerOffset: number;
}

export function initScript(disks: number, markerOffsets: readonly number[], wb: WritebackSettings, tailSeconds: number): string {
  const mods = GUEST_MODULES.map((m) => `/mods/${path.basename(m)}`).join(' ');
  const lines = [
    '#!/bin/busybox sh',
    'export PATH=/bin',
    '/bin/busybox mount -t proc proc /proc',
    '/bin/busybox mount -t sysfs sys /sys',
    '/bin/busybox mount -t devtmpfs dev /dev',
    `for m in ${mods}; do /bin/busybox insmod $m || echo "KC insmod-failed $m"; done`,
    `echo ${wb.dirtyExpireCs} > /proc/sys/vm/dirty_expire_centisecs`,
    `echo ${wb.dirtyWritebackCs} > /proc/sys/vm/dirty_writeback_centisecs`,
    'echo "KC kernel $(/bin/busybox uname -r)"',
  ];
  for (let i = 0; i < disks; i++) {
    const dev = `/dev/vd${String.fromCharCode(97 + i)}`;
    lines.push(`/bin/busybox mkdir -p /mnt/${i}`, `/bin/busybox mount -t ext4 ${dev} /mnt/${i} || echo "KC ${i} mount-failed"`);
  }
  for (let i = 0; i < disks; i++) lines.push(`/runner /spec${i} /mnt/${i} /dev/vd${String.fromCharCode(97 + i)} ${markerOffsets[i]} ${i} &`);
  lines.push('wait', `/bin/busybox sleep ${tailSeconds}`, 'echo "KC boot-done"', '/bin/busybox poweroff -f', '');
  return lines.join('\n');
}

export async function initramfs(kernel: Kernel, runner: string, script: string, specs: readonly string[]): Promise<Buffer> {
  const bb = BUSYBOX.find((p) => existsSync(p))!;
  const entries: CpioEntry[] = ['bin', 'proc', 'sys', 'dev', 'mnt', 'mods'].map((d) => ({ kind: 'dir', path: d }));
  entries.push({ kind: 'file', path: 'bin/busybox', data: await readFile(bb), mode: 0o755 });
  entries.push({ kind: 'file', path: 'init', data: Buffer.from(script), mode: 0o755 });
  entries.push({ kind: 'file', path: 'runner', data: await readFile(runner), mode: 0o755 });
  specs.forEach((s, i) => entries.push({ kind: 'file', path: `spec${i}`, data: Buffer.from(s) }));
  for (const m of GUEST_MODULES) {
    const p = path.join(kernel.modulesDir, m);
    if (!existsSync(p)) throw new Error(`the kernel package has no ${m} (its modules are ${kernel.modulesDir})`);
    entries.push({ kind: 'file', path: `mods/${path.basename(m)}`, data: await readFile(p) });
  }
  return cpioNewc(entries);
}

/** QEMU processes running now: killed on SIGINT/SIGTERM and at exit, so none outlives kernel-check. */
const running = new Set<ChildProcess>();
/** Scratch folders to remove if a signal ends the run (the normal paths remove their own). */
const scratch = new Set<string>();
let handlersInstalled = false;
function installHandlers(): void {
  if (handlersInstalled) return;
  handlersInstalled = true;
  const killAll = () => {
    for (const p of running) p.kill('SIGKILL');
  };
  process.on('exit', killAll);
  for (const sig of ['SIGINT', 'SIGTERM'] as const) {
    process.once(sig, () => {
      killAll();
      for (const dir of scratch) rmSync(dir, { recursive: true, force: true });
      process.kill(process.pid, sig);
    });
  }
}

/** Removes `dir` if SIGINT or SIGTERM ends the run before `release` is called. */
export function removeOnSignal(dir: string): { release: () => void } {
  installHandlers();
  scratch.add(dir);
  return { release: () => void scratch.delete(dir) };
}

export interface BootResult {
  console: string;
  seconds: number;
}

/** One boot: the disks attached in order (vda, vdb, ...), each through blklogwrites; the console output once the guest powered off. */
export async function boot(kernel: Kernel, initrdPath: string, disks: readonly GuestDisk[], timeoutMs: number): Promise<BootResult> {
  installHandlers();
  const args = [
    '-machine', 'q35,accel=tcg', '-m', '256', '-smp', '1', '-nodefaults', '-display', 'none', '-serial', 'stdio', '-no-reboot',
    '-kernel', kernel.vmlinuz, '-initrd', initrdPath, '-append', 'console=ttyS0 quiet panic=-1 rdinit=/init',
  ];
  disks.forEach((d, i) => {
    args.push(
      '-blockdev', `driver=file,node-name=img${i},filename=${d.image}`,
      '-blockdev', `driver=file,node-name=log${i},filename=${d.log}`,
      '-blockdev', `driver=blklogwrites,node-name=bl${i},file=img${i},log=log${i},log-sector-size=512`,
      '-device', `virtio-blk-pci,drive=bl${i}`,
    );
  });
  const started = Date.now();
  const child = spawn('qemu-system-x86_64', args, { stdio: ['ignore', 'pipe', 'pipe'] });
  running.add(child);
  let out = '';
  let err = '';
  child.stdout!.on('data', (b: Buffer) => (out += b.toString('latin1')));
  child.stderr!.on('data', (b: Buffer) => (err += b.toString('latin1')));
  try {
    const code = await new Promise<number | null>((resolve, reject) => {
      const timer = setTimeout(() => {
        child.kill('SIGKILL');
        reject(new Error(`QEMU did not power off within ${timeoutMs / 1000} s (killed); console tail: ${out.slice(-400)}`));
      }, timeoutMs);
      child.on('error', (e) => {
        clearTimeout(timer);
        reject(new Error(`qemu-system-x86_64 could not start: ${e.message}`));
      });
      child.on('exit', (c) => {
        clearTimeout(timer);
        resolve(c);
      });
    });
    if (code !== 0) throw new Error(`QEMU exited with ${code}: ${err.trim().slice(-400)}`);
    if (!out.includes('KC boot-done')) throw new Error(`the guest did not finish its histories; console tail: ${out.slice(-600)}`);
    return { console: out, seconds: (Date.now() - started) / 1000 };
  } finally {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    running.delete(child);
  }
}
