// The pure parts of kernel-check's I/O: the initramfs archive, debugfs's listings, e2fsck's notes,
// the guest's init script, the runner's spec lines.
import { describe, expect, it } from 'vitest';
import { seedFromEnv } from '../../properties/seed.js';
import { cpioNewc } from './cpio.js';
import { parseDebugfsListings, unusualFsckLines } from './ext4-image.js';
import { GUEST_MODULES, initScript, requireHostTools, type HostProbe } from './guest.js';
import { drawHistories, modelsAfterEachStep, specText, type History } from './history.js';

/** Reads a newc archive back: name -> [mode, data]. */
function readNewc(buf: Buffer): Map<string, [number, Buffer]> {
  const out = new Map<string, [number, Buffer]>();
  let off = 0;
  const align = (n: number) => (n + 3) & ~3;
  for (;;) {
    expect(buf.subarray(off, off + 6).toString()).toBe('070701');
    const field = (i: number) => parseInt(buf.subarray(off + 6 + i * 8, off + 14 + i * 8).toString(), 16);
    const mode = field(1);
    const size = field(6);
    const nameSize = field(11);
    const name = buf.subarray(off + 110, off + 110 + nameSize - 1).toString();
    const dataAt = align(off + 110 + nameSize);
    if (name === 'TRAILER!!!') return out;
    out.set(name, [mode, buf.subarray(dataAt, dataAt + size)]);
    off = align(dataAt + size);
  }
}

describe('cpioNewc', () => {
  it('writes an archive whose entries read back with their modes and bytes, 4-byte aligned', () => {
    const buf = cpioNewc([{ kind: 'dir', path: 'bin' }, { kind: 'file', path: '/bin/x', data: Buffer.from('hello'), mode: 0o755 }, { kind: 'symlink', path: 'sh', target: 'bin/x' }]);
    const entries = readNewc(buf);
    expect([...entries.keys()]).toEqual(['bin', 'bin/x', 'sh']);
    expect(entries.get('bin')![0]).toBe(0o040755);
    expect(entries.get('bin/x')).toEqual([0o100755, Buffer.from('hello')]);
    expect(entries.get('sh')).toEqual([0o120777, Buffer.from('bin/x')]);
    expect(buf.length % 4).toBe(0);
  });
});

describe('parseDebugfsListings', () => {
  it('reads each listed directory with inode numbers, kinds and sizes, and leaves out one debugfs could not find', () => {
    const out = [
      'debugfs: ls -p /', '/2/040755/0/0/.//', '/2/040755/0/0/..//', '/11/040700/0/0/lost+found//', '/12/100644/0/0/f0/5000/', '/12/100644/0/0/f1/5000/', '/13/040755/0/0/d0//', '',
      'debugfs: ls -p /d0', '/13/040755/0/0/.//', '/2/040755/0/0/..//', '/14/100644/0/0/f2/0/', '',
      'debugfs: ls -p /d1', 'debugfs: rdump / /tmp/x',
    ].join('\n');
    const l = parseDebugfsListings(out);
    expect([...l.keys()]).toEqual(['', 'd0', 'd1']);
    expect(l.get('')!.filter((e) => e.kind === 'file').map((e) => [e.name, e.inode, e.size])).toEqual([['f0', 12, 5000], ['f1', 12, 5000]]);
    expect(l.get('d0')!.find((e) => e.name === 'f2')).toMatchObject({ inode: 14, kind: 'file', size: 0 });
    expect(l.get('d1')).toEqual([]);
  });
});

describe('unusualFsckLines', () => {
  it('passes over pass headings and free-count corrections, and keeps anything else', () => {
    const out = 'Pass 1: Checking inodes, blocks, and sizes\nFree blocks count wrong (3000, counted=2990).\nFix? yes\n\nEntry \'f0\' in / (2) has deleted/unused inode 12.  Clear? yes\nimg: ***** FILE SYSTEM WAS MODIFIED *****\n';
    expect(unusualFsckLines(out)).toEqual(["Entry 'f0' in / (2) has deleted/unused inode 12.  Clear? yes"]);
  });
});

describe('requireHostTools', () => {
  const host = (paths: string[], dynamicBusybox = false): HostProbe => ({
    onPath: (cmd) => paths.includes(cmd),
    exists: (file) => paths.includes(file),
    head: () => Buffer.from(dynamicBusybox ? 'ELF ... /lib64/ld-linux-x86-64.so.2' : 'ELF static'),
  });
  const apt = ['apt-get', 'apt-cache', 'dpkg-deb'];
  const all = [...apt, 'qemu-system-x86_64', '/bin/busybox', 'e2fsck', 'debugfs', 'mkfs.ext4', 'gcc', '/usr/lib/x86_64-linux-gnu/libc.a'];

  it('names every missing Debian package and the apt line that installs them', () => {
    expect(() => requireHostTools(host(apt))).toThrow('not installed: qemu-system-x86, busybox-static, e2fsprogs, gcc, libc6-dev. Install them with:\n  sudo apt-get update && sudo apt-get install -y qemu-system-x86 busybox-static e2fsprogs gcc libc6-dev');
    expect(() => requireHostTools(host(all.filter((p) => p !== 'debugfs')))).toThrow(/not installed: e2fsprogs\./);
    expect(() => requireHostTools(host(all, true))).toThrow(/not installed: busybox-static\./);
    expect(() => requireHostTools(host(all))).not.toThrow();
  });

  it('says it needs Debian without apt', () => {
    expect(() => requireHostTools(host(all.filter((p) => p !== 'dpkg-deb')))).toThrow(/needs Debian's dpkg-deb/);
  });
});

describe('the guest', () => {
  it('loads the modules in order, mounts each disk and runs every history at once, then powers off', () => {
    const s = initScript(2, [100, 200], { dirtyExpireCs: 100, dirtyWritebackCs: 500 }, 3);
    expect(s.indexOf('jbd2.ko')).toBeLessThan(s.indexOf('ext4.ko'));
    expect(s.indexOf('virtio_pci.ko')).toBeLessThan(s.indexOf('virtio_blk.ko'));
    expect(GUEST_MODULES.map((m) => m.split('/').pop())).toContain('crc32c_generic.ko');
    expect(s).toContain('echo 100 > /proc/sys/vm/dirty_expire_centisecs');
    expect(s).toMatch(/mount -t ext4 \/dev\/vdb \/mnt\/1/);
    expect(s).toContain('/runner /spec1 /mnt/1 /dev/vdb 200 1 &');
    expect(s.trim().split('\n').slice(-3)).toEqual(['/bin/busybox sleep 3', 'echo "KC boot-done"', '/bin/busybox poweroff -f']);
  });

  it('spells each step as the runner reads it', () => {
    const h: History = [
      { op: 'mkdir', path: 'd0' }, { op: 'create', path: 'd0/f0' }, { op: 'write', path: 'd0/f0', offset: 10, length: 20, byte: 7, kind: 'overwrite' },
      { op: 'rename', from: 'd0/f0', to: 'f1' }, { op: 'fsyncdir', path: '.' }, { op: 'pause', ms: 300 }, { op: 'truncate', path: 'f1', size: 3 },
    ];
    expect(specText(h)).toBe('mkdir d0\ncreate d0/f0\nwrite d0/f0 10 20 7\nrename d0/f0 f1\nfsyncdir .\npause 300\ntruncate f1 3\n');
  });
});

describe('drawn histories', () => {
  it('are valid on the model, small, repeatable from the seed, and use every kind of step', () => {
    const { seed } = seedFromEnv();
    const hs = drawHistories(seed, 200);
    expect(drawHistories(seed, 200)).toEqual(hs);
    const ops = new Set<string>();
    let renamesOver = 0;
    for (const h of hs) {
      expect(h.length).toBeGreaterThan(0);
      expect(h.length).toBeLessThanOrEqual(15);
      const models = modelsAfterEachStep(h); // throws on an invalid step
      h.forEach((s, i) => {
        ops.add(s.op === 'write' ? s.kind : s.op);
        if (s.op === 'rename' && models[i].readdir(s.to.includes('/') ? `/${s.to.split('/')[0]}` : '/').includes(s.to.split('/').pop()!)) renamesOver++;
      });
      const files = models.map((m) => m.readdir('/').length);
      expect(Math.max(...files)).toBeLessThanOrEqual(6);
    }
    expect([...ops].sort()).toEqual(['append', 'create', 'fdatasync', 'fsync', 'fsyncdir', 'link', 'mkdir', 'overwrite', 'pause', 'rename', 'truncate', 'unlink']);
    expect(renamesOver).toBeGreaterThan(5);
  });
});
