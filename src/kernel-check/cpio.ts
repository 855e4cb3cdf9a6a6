// A newc ("070701") cpio archive, what the Linux kernel unpacks as an initramfs. Pure: entries in,
// bytes out. Only what a busybox initramfs needs: directories, regular files, symlinks.

export type CpioEntry =
  | { kind: 'dir'; path: string; mode?: number }
  | { kind: 'file'; path: string; data: Buffer; mode?: number }
  | { kind: 'symlink'; path: string; target: string };

const pad4 = (n: number) => (4 - (n % 4)) % 4;
const hex8 = (n: number) => n.toString(16).padStart(8, '0');

function record(ino: number, mode: number, name: string, data: Buffer, nlink: number): Buffer {
  const nameBytes = Buffer.from(`${name}\0`);
  const fields = [ino, mode, 0, 0, nlink, 0, data.length, 0, 0, 0, 0, nameBytes.length, 0];
  const header = Buffer.from(`070701${fields.map(hex8).join('')}`);
  const head = Buffer.concat([header, nameBytes]);
  return Buffer.concat([head, Buffer.alloc(pad4(head.length)), data, Buffer.alloc(pad4(data.length))]);
}

/** The archive of `entries` in order (a directory before what it holds), ending with the trailer. */
export function cpioNewc(entries: readonly CpioEntry[]): Buffer {
  const parts = entries.map((e, i) => {
    const path = e.path.replace(/^\/+/, '');
    if (e.kind === 'dir') return record(i + 1, 0o040000 | (e.mode ?? 0o755), path, Buffer.alloc(0), 2);
    if (e.kind === 'symlink') return record(i + 1, 0o120000 | 0o777, path, Buffer.from(e.target), 1);
    return record(i + 1, 0o100000 | (e.mode ?? 0o644), path, e.data, 1);
  });
  parts.push(record(0, 0, 'TRAILER!!!', Buffer.alloc(0), 1));
  return Buffer.concat(parts);
}
