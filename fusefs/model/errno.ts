// Negative errno values as FUSE expects them; the model throws FsError carrying one.
import { constants } from 'node:os';

const e = constants.errno;
export const ENOENT = -e.ENOENT;
export const EEXIST = -e.EEXIST;
export const ENOTDIR = -e.ENOTDIR;
export const EISDIR = -e.EISDIR;
export const ENOTEMPTY = -e.ENOTEMPTY;
export const EINVAL = -e.EINVAL;
export const EIO = -e.EIO;
export const ENOSPC = -e.ENOSPC;
export const EBADF = -e.EBADF;
export const EPERM = -e.EPERM;
export const ENAMETOOLONG = -e.ENAMETOOLONG;
export const EFBIG = -e.EFBIG;
export const EXDEV = -e.EXDEV;
export const EOPNOTSUPP = -e.EOPNOTSUPP;

/** A filesystem-level failure: the request is answered with `errno` (negative). */
export class FsError extends Error {
  constructor(readonly errno: number, message: string) {
    super(message);
  }
}

const NAMES = new Map(Object.entries(e).map(([name, n]) => [n, name]));
/** "EIO" for 5 (a positive errno, as the kernel numbers it); "errno N" for a number it does not know. */
export function errnoName(errno: number): string {
  return NAMES.get(errno) ?? `errno ${errno}`;
}
