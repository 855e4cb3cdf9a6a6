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

/** A filesystem-level failure: the request is answered with `errno` (negative). */
export class FsError extends Error {
  constructor(readonly errno: number, message: string) {
    super(message);
  }
}
