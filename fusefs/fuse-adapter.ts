// fuse-native operations -> the crash model, through the request gate (numbering, trace, crash
// point) and the armed faults. One adapter per mount generation: after a crash the old
// generation answers EIO to anything still arriving on the detached mount.
import type { FsModel } from './model/fs-model.js';
import { EBADF, EIO, ENOSPC, EPERM, FsError } from './model/errno.js';
import type { RequestGate } from './request-gate.js';
import type { Faults } from './faults.js';
import type { MutatingKind } from './protocol.js';
import type { TraceArgs } from './trace.js';

type Cb = (...args: any[]) => void;
const S_IFMT = 0o170000;
const TYPE_BITS = { file: 0o100000, dir: 0o040000, symlink: 0o120000 } as const;

export interface FsState {
  model: FsModel;
  gate: RequestGate;
  faults: Faults;
  /** Open handles: fd -> inode and the path it was opened by (hard_remove gives no path after unlink). */
  handles: Map<number, { ino: number; path: string }>;
  nextFd: number;
  generation: number;
}

export function makeFuseOps(state: FsState, generation: number): Record<string, Cb> {
  const uid = process.getuid?.() ?? 0;
  const gid = process.getgid?.() ?? 0;
  const dead = () => state.generation !== generation;

  /** Runs a non-mutating request; errors thrown as FsError become the errno answer. */
  const query = (cb: Cb, fn: () => void) => {
    if (dead()) return cb(EIO);
    if (state.gate.holdIfFrozen(() => cb(EIO))) return;
    try {
      fn();
    } catch (e) {
      if (e instanceof FsError) return cb(e.errno);
      console.error(`powercut fs: internal error, answering EIO: ${e instanceof Error ? e.stack : String(e)}`);
      cb(EIO);
    }
  };

  const mutate = (cb: Cb, kind: MutatingKind, args: TraceArgs, apply: () => number) => {
    if (dead()) return cb(EIO);
    state.gate.mutate(kind, args, apply, (r) => cb(r), () => cb(EIO));
  };

  const inoOf = (path: string, fd?: number): number => {
    if (fd !== undefined && fd > 0) {
      const h = state.handles.get(fd);
      if (!h) throw new FsError(EBADF, `fd ${fd} is not open`);
      return h.ino;
    }
    return state.model.resolve(path);
  };
  const pathOf = (path: string | null, fd?: number) => (path ? path : (fd !== undefined && state.handles.get(fd)?.path) || '');

  const statOf = (ino: number) => {
    const s = state.model.stat(ino);
    return {
      mode: TYPE_BITS[s.kind] | s.mode, uid, gid, size: s.sizeBytes, nlink: s.nlink, ino: s.ino,
      blksize: 4096, blocks: Math.ceil(s.sizeBytes / 512), mtime: s.mtimeMs, ctime: s.ctimeMs, atime: s.mtimeMs,
    };
  };

  const openHandle = (ino: number, path: string) => {
    const fd = state.nextFd++;
    state.handles.set(fd, { ino, path });
    return fd;
  };

  return {
    init: (cb) => cb(0),
    statfs: (_path, cb) => cb(0, { bsize: 4096, frsize: 4096, blocks: 1 << 24, bfree: 1 << 23, bavail: 1 << 23, files: 1 << 20, ffree: 1 << 19, favail: 1 << 19, fsid: 0x70c7, flag: 0, namemax: 255 }),
    getattr: (path, cb) => query(cb, () => cb(0, statOf(state.model.resolve(path)))),
    fgetattr: (path, fd, cb) => query(cb, () => cb(0, statOf(inoOf(path, fd)))),
    readdir: (path, cb) => query(cb, () => cb(0, state.model.readdir(path))),
    open: (path, _flags, cb) => query(cb, () => {
      const ino = state.model.resolve(path);
      state.model.file(ino); // EISDIR for directories
      cb(0, openHandle(ino, path));
    }),
    opendir: (path, _flags, cb) => query(cb, () => cb(0, openHandle(state.model.resolve(path), path))),
    release: (_path, fd, cb) => {
      state.handles.delete(fd); // never held: closing a file changes nothing durable
      cb(0);
    },
    releasedir: (_path, fd, cb) => {
      state.handles.delete(fd);
      cb(0);
    },
    flush: (_path, _fd, cb) => query(cb, () => cb(0)),
    readlink: (path, cb) => query(cb, () => cb(0, state.model.readlink(path))),
    read: (path, fd, buf: Buffer, len: number, pos: number, cb) => query(cb, () => {
      const p = pathOf(path, fd);
      const ino = inoOf(path, fd);
      const durable = (byteOffset: number) => state.model.matchesDurable(ino, byteOffset);
      if (state.faults.readFails(p, pos, len, durable)) return cb(EIO);
      const data = Buffer.from(state.model.read(ino, pos, len));
      state.faults.corruptRead(p, pos, data, durable);
      data.copy(buf);
      cb(data.length);
    }),

    create: (path, mode, cb) => {
      let fd = 0;
      mutate((r: number) => (r < 0 ? cb(r) : cb(0, fd)), 'create', { path, mode: mode & 0o7777 }, () => {
        fd = openHandle(state.model.create(path, mode), path);
        return 0;
      });
    },
    mknod: (path, mode, _dev, cb) => mutate(cb, 'mknod', { path, mode: mode & 0o7777 }, () => {
      if ((mode & S_IFMT) !== TYPE_BITS.file && (mode & S_IFMT) !== 0) throw new FsError(EPERM, `${path}: only regular files can be created`);
      state.model.create(path, mode);
      return 0;
    }),
    write: (path, fd, buf: Buffer, len: number, pos: number, cb) => {
      const p = pathOf(path, fd);
      // fuse-native detaches `buf` after the callback, and a held request answers much later: copy now.
      const data = Buffer.from(buf.subarray(0, len));
      mutate(cb, 'write', { path: p, offset: pos, length: len }, () => {
        const ino = inoOf(path, fd);
        const admitted = state.faults.admitWrite(len);
        if (admitted === 0) return ENOSPC;
        return state.model.write(ino, pos, data.subarray(0, admitted));
      });
    },
    truncate: (path, size, cb) => mutate(cb, 'truncate', { path, length: size }, () => {
      state.model.truncate(state.model.resolve(path), size);
      return 0;
    }),
    ftruncate: (path, fd, size, cb) => mutate(cb, 'truncate', { path: pathOf(path, fd), length: size }, () => {
      state.model.truncate(inoOf(path, fd), size);
      return 0;
    }),
    fsync: (path, datasync, fd, cb) => {
      const p = pathOf(path, fd);
      mutate(cb, 'fsync', { path: p, datasync: !!datasync }, () => {
        const ino = inoOf(path, fd);
        if (state.faults.fsyncFails(p)) {
          state.model.dropUnsynced(ino); // ext4: the failed data can no longer become durable
          return EIO;
        }
        state.model.fsync(ino);
        return 0;
      });
    },
    fsyncdir: (path, datasync, fd, cb) => mutate(cb, 'fsyncdir', { path: pathOf(path, fd), datasync: !!datasync }, () => {
      state.model.fsync(inoOf(path, fd));
      return 0;
    }),
    unlink: (path, cb) => mutate(cb, 'unlink', { path }, () => (state.model.unlink(path), 0)),
    mkdir: (path, mode, cb) => mutate(cb, 'mkdir', { path, mode: mode & 0o7777 }, () => (state.model.mkdir(path, mode), 0)),
    rmdir: (path, cb) => mutate(cb, 'rmdir', { path }, () => (state.model.rmdir(path), 0)),
    rename: (src, dest, cb) => mutate(cb, 'rename', { path: src, path2: dest }, () => (state.model.rename(src, dest), 0)),
    link: (src, dest, cb) => mutate(cb, 'link', { path: src, path2: dest }, () => (state.model.link(src, dest), 0)),
    // fuse-native: symlink(target, linkPath)
    symlink: (target, path, cb) => mutate(cb, 'symlink', { path, path2: target }, () => (state.model.symlink(target, path), 0)),
    chmod: (path, mode, cb) => mutate(cb, 'setattr', { path, mode: mode & 0o7777 }, () => (state.model.chmod(state.model.resolve(path), mode), 0)),
    chown: (path, _uid, _gid, cb) => mutate(cb, 'setattr', { path }, () => (state.model.resolve(path), 0)),
    utimens: (path, _atime, mtime, cb) => mutate(cb, 'setattr', { path }, () => (state.model.utimens(state.model.resolve(path), Number(mtime)), 0)),
  };
}

