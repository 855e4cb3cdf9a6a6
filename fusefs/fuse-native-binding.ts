// Loads fuse-native with a small patch to its C binding, built once per machine with the C
// compiler (no download). fuse-native 2.2.6 lacks five things powercut needs:
//   - who sent a request (fuse_get_context: uid, gid, pid), needed for the owner of new files;
//   - utimens: it passes atime twice (mtime is lost) and, without flag_utime_omit_ok, libfuse 2
//     drops a SETATTR that sets only one of the two times (touch -m);
//   - I/O on an open file after its last name is gone: without flag_nullpath_ok libfuse 2 answers
//     ENOENT to read, write, fstat and fsync of it (hard_remove leaves it no path), and with the flag
//     the binding would hand NULL to napi_create_string_utf8; the patch passes "" instead.
//   - unmounting without a subprocess: fuse-native runs `sh -c "fusermount -uz MNT"`, a fork of the
//     whole daemon (its cost grows with the daemon's memory and with the machine's load);
//   - replacing a mount without a moment where its path shows the directory underneath:
//     move_mount(2) with MOVE_MOUNT_BENEATH (Linux 6.5), then a lazy unmount of the old one on top;
//   - fallocate (libfuse 2.9's fuse_operations has it; fuse-native 2.2.6 does not): without it the
//     kernel answers EOPNOTSUPP to every fallocate and glibc's posix_fallocate writes zeros instead.
//     The patch adds it as opcode 35 (FALLOCATE_OPCODE: the handler array and the implemented array
//     grow to 36), with the arguments (path, fd, mode, offset low/high, length low/high);
//   - fstat of an open file after its last name is gone: the kernel sends fstat as a GETATTR without
//     the file handle, and libfuse 2.9 answers that by path, ENOENT once hard_remove dropped the
//     path. The patch puts its own channel between libfuse and /dev/fuse (CHANNEL_C below) that
//     remembers which handle each OPEN and CREATE gave which node (from the request and its reply)
//     and adds the handle to a GETATTR that has none, so libfuse asks fgetattr, which the daemon
//     answers by handle (st_nlink 0, as ext4).
//   - answering writes without waking JavaScript for each (write-behind, fusefs/write-behind.ts):
//     the FUSE thread copies a write into populated memory and answers it, when JavaScript's last
//     grant allows; JavaScript applies the queued writes in order before anything else
//     (WRITE_BEHIND_C in write-behind-c.ts).
// The patch adds four fields at the end of the per-thread request buffer that the FUSE thread fills
// from fuse_get_context() before handing the request to JavaScript (the buffer is the first argument
// of every native handler), passes mtime, encodes UTIME_NOW/UTIME_OMIT, sets flag_utime_omit_ok and
// flag_nullpath_ok, and exports powercut_umount2(path): umount2(path, MNT_DETACH | UMOUNT_NOFOLLOW)
// and powercut_move_mount(from, to, beneath), answering 0 or -errno (root only; otherwise -EPERM and
// the caller falls back to fusermount and to unmount-then-mount).
// Where no compiler is available, the stock binding is used and `patched` is false: new files then
// belong to the daemon's user, utimens sets both times to atime, and unmounting forks fusermount.
import { createHash } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import type FuseClass from 'fuse-native';
import { WRITE_BEHIND_REPLACEMENTS } from './write-behind-c.js';

export const CALLER_MAGIC = 0x70c7c7a1;
/** The four uint32 fields the patch appends to fuse_thread_locals_t: magic, uid, gid, pid. */
export const CALLER_FIELDS_BYTES = 16;
/** Sentinels for utimens times (exact as doubles: they only use the high 32 bits). */
export const UTIME_NOW_MS = 0xfffffffe * 2 ** 32;
export const UTIME_OMIT_MS = 0xffffffff * 2 ** 32;

const BUILD_TIMEOUT_MS = 120_000;
const PATCH_VERSION = 7; // bump when the replacements below change
/** The opcode the patch gives fallocate: after fuse-native's 35 (0..34), so the arrays grow to 36. */
export const FALLOCATE_OPCODE = 35;
export const PATCHED_OPCODE_COUNT = 36;

/**
 * The channel between libfuse and /dev/fuse (fstat of an unlinked open file, above). Reads and
 * writes /dev/fuse as libfuse 2.9's own channel does (fuse_kern_chan_receive/send: the same retries
 * and session exit); the fd stays the original channel's, which closes it at unmount.
 */
const CHANNEL_C = String.raw`
// powercut: open handles by node, to give a GETATTR without a handle one (fstat after unlink). One
// table per mount: node ids are libfuse's, numbered afresh by each mount.
#define PC_MAX_OPEN 4096
typedef struct { uint64_t nodeid; uint64_t fh; uint64_t unique; int state; } pc_open_t; // state: 0 free, 1 awaiting its reply, 2 open
typedef struct {
  pc_open_t open[PC_MAX_OPEN];
  int used; // entries [0, used) may be in use
  int awaiting; // entries in state 1: only then does a reply need a look
  pthread_mutex_t lock;
} pc_table_t;

static void pc_seen_request (pc_table_t *t, char *buf, size_t len) {
  struct fuse_in_header *in = (struct fuse_in_header *) buf;
  if (len < sizeof(*in)) return;
  // Most requests (writes, reads, lookups) concern none of this: no lock for them.
  if (in->opcode != FUSE_OPEN && in->opcode != FUSE_CREATE && in->opcode != FUSE_RELEASE && in->opcode != FUSE_GETATTR) return;
  pc_open_t *pc_open = t->open;
  pthread_mutex_lock(&t->lock);
  if (in->opcode == FUSE_OPEN || in->opcode == FUSE_CREATE) {
    for (int i = 0; i < PC_MAX_OPEN; i++) {
      if (pc_open[i].state != 0) continue;
      pc_open[i].state = 1;
      __atomic_add_fetch(&t->awaiting, 1, __ATOMIC_RELEASE);
      pc_open[i].unique = in->unique;
      pc_open[i].nodeid = in->opcode == FUSE_OPEN ? in->nodeid : 0; // CREATE: the reply names the node
      if (i >= t->used) t->used = i + 1;
      break;
    }
  } else if (in->opcode == FUSE_RELEASE && len >= sizeof(*in) + sizeof(struct fuse_release_in)) {
    uint64_t fh = ((struct fuse_release_in *) (in + 1))->fh;
    for (int i = 0; i < t->used; i++) {
      if (pc_open[i].state == 2 && pc_open[i].nodeid == in->nodeid && pc_open[i].fh == fh) { pc_open[i].state = 0; break; }
    }
    while (t->used > 0 && pc_open[t->used - 1].state == 0) t->used--;
  } else if (in->opcode == FUSE_GETATTR && len >= sizeof(*in) + sizeof(struct fuse_getattr_in)) {
    struct fuse_getattr_in *arg = (struct fuse_getattr_in *) (in + 1);
    if (!(arg->getattr_flags & FUSE_GETATTR_FH)) {
      for (int i = 0; i < t->used; i++) {
        if (pc_open[i].state == 2 && pc_open[i].nodeid == in->nodeid) {
          arg->getattr_flags |= FUSE_GETATTR_FH;
          arg->fh = pc_open[i].fh;
          break;
        }
      }
    }
  }
  pthread_mutex_unlock(&t->lock);
}

static void pc_seen_reply (pc_table_t *t, const struct iovec iov[], size_t count) {
  // No OPEN or CREATE awaits its reply (read without the lock: one that starts now is a request this reply does not answer).
  if (__atomic_load_n(&t->awaiting, __ATOMIC_ACQUIRE) == 0) return;
  // The header and, for an OPEN or CREATE, what follows it: at most an entry and an open reply.
  char head[sizeof(struct fuse_out_header) + sizeof(struct fuse_entry_out) + sizeof(struct fuse_open_out)];
  size_t have = 0;
  for (size_t k = 0; k < count && have < sizeof(head); k++) {
    size_t n = iov[k].iov_len < sizeof(head) - have ? iov[k].iov_len : sizeof(head) - have;
    memcpy(head + have, iov[k].iov_base, n);
    have += n;
  }
  if (have < sizeof(struct fuse_out_header)) return;
  struct fuse_out_header *out = (struct fuse_out_header *) head;
  if (out->unique == 0) return; // a notification
  pc_open_t *pc_open = t->open;
  pthread_mutex_lock(&t->lock);
  for (int i = 0; i < t->used; i++) {
    if (pc_open[i].state != 1 || pc_open[i].unique != out->unique) continue;
    __atomic_sub_fetch(&t->awaiting, 1, __ATOMIC_RELEASE);
    size_t body = have - sizeof(*out);
    if (out->error != 0) pc_open[i].state = 0;
    else if (pc_open[i].nodeid != 0 && body >= sizeof(struct fuse_open_out)) {
      pc_open[i].fh = ((struct fuse_open_out *) (out + 1))->fh;
      pc_open[i].state = 2;
    } else if (pc_open[i].nodeid == 0 && body >= sizeof(struct fuse_entry_out) + sizeof(struct fuse_open_out)) {
      pc_open[i].nodeid = ((struct fuse_entry_out *) (out + 1))->nodeid;
      pc_open[i].fh = ((struct fuse_open_out *) ((char *) (out + 1) + sizeof(struct fuse_entry_out)))->fh;
      pc_open[i].state = 2;
    } else pc_open[i].state = 0; // a reply shaped otherwise (an older protocol): not tracked
    break;
  }
  pthread_mutex_unlock(&t->lock);
}

static int pc_chan_receive (struct fuse_chan **chp, char *buf, size_t size) {
  struct fuse_chan *ch = *chp;
  struct fuse_session *se = fuse_chan_session(ch);
  ssize_t res;
restart:
  res = read(fuse_chan_fd(ch), buf, size);
  int err = errno;
  if (fuse_session_exited(se)) return 0;
  if (res == -1) {
    if (err == ENOENT) goto restart; // the request was interrupted
    if (err == ENODEV) { fuse_session_exit(se); return 0; } // unmounted
    if (err != EINTR && err != EAGAIN) perror("fuse: reading device");
    return -err;
  }
  if ((size_t) res < sizeof(struct fuse_in_header)) { fprintf(stderr, "short read on fuse device\n"); return -EIO; }
  pc_seen_request((pc_table_t *) fuse_chan_data(ch), buf, (size_t) res);
  return (int) res;
}

static int pc_chan_send (struct fuse_chan *ch, const struct iovec iov[], size_t count) {
  if (!iov) return 0;
  pc_seen_reply((pc_table_t *) fuse_chan_data(ch), iov, count);
  ssize_t res = writev(fuse_chan_fd(ch), iov, count);
  int err = errno;
  if (res == -1) {
    if (!fuse_session_exited(fuse_chan_session(ch)) && err != ENOENT) perror("fuse: writing device");
    return -err;
  }
  return 0;
}

static void pc_chan_destroy (struct fuse_chan *ch) {
  // The fd belongs to the original channel: fuse_unmount closes it.
  pc_table_t *t = (pc_table_t *) fuse_chan_data(ch);
  pthread_mutex_destroy(&t->lock);
  free(t);
}

static struct fuse_chan_ops pc_chan_ops = { .receive = pc_chan_receive, .send = pc_chan_send, .destroy = pc_chan_destroy };

// Puts the channel in the session in place of libfuse's own (kept for fuse_unmount); leaves it if that fails.
static void pc_wrap_chan (struct fuse *fuse) {
  struct fuse_session *se = fuse_get_session(fuse);
  struct fuse_chan *orig = fuse_session_next_chan(se, NULL);
  if (orig == NULL) return;
  pc_table_t *t = calloc(1, sizeof(pc_table_t));
  if (t == NULL) return;
  pthread_mutex_init(&t->lock, NULL);
  struct fuse_chan *wrap = fuse_chan_new(&pc_chan_ops, fuse_chan_fd(orig), fuse_chan_bufsize(orig), t);
  if (wrap == NULL) {
    pthread_mutex_destroy(&t->lock);
    free(t);
    return;
  }
  fuse_session_remove_chan(orig);
  fuse_session_add_chan(se, wrap);
}

`;

/**
 * Each [anchor, replacement] must match exactly once (with 'all': at least once, every match
 * replaced), or the patch refuses: it was written for another fuse-native version.
 */
const REPLACEMENTS: [string, string, 'all'?][] = [
  [
    '#include <fuse.h>\n',
    '#include <fuse.h>\n#include <time.h>\n#include <errno.h>\n#include <fcntl.h>\n#include <unistd.h>\n#include <sys/mount.h>\n#include <sys/syscall.h>\n#ifndef MOVE_MOUNT_BENEATH\n#define MOVE_MOUNT_BENEATH 0x00000200\n#endif\n#define POWERCUT_MAGIC ' + CALLER_MAGIC + 'u\n',
  ],
  [
    '  uv_async_t async;\n\n} fuse_thread_locals_t;',
    '  uv_async_t async;\n\n  // powercut: the caller of the request being dispatched; JavaScript reads the last 16 bytes.\n'
      + '  uint32_t powercut_magic;\n  uint32_t powercut_uid;\n  uint32_t powercut_gid;\n  uint32_t powercut_pid;\n} fuse_thread_locals_t;',
  ],
  [
    '  fuse_thread_locals_t *l = get_thread_locals();\\\n  l->op = op_##name;\\\n',
    '  fuse_thread_locals_t *l = get_thread_locals();\\\n'
      + '  { struct fuse_context *pc_ctx = fuse_get_context();\\\n'
      + '    l->powercut_uid = pc_ctx->uid; l->powercut_gid = pc_ctx->gid; l->powercut_pid = pc_ctx->pid;\\\n'
      + '    l->powercut_magic = POWERCUT_MAGIC; }\\\n'
      + '  l->op = op_##name;\\\n',
  ],
  [
    '// Methods\n',
    '// powercut: UTIME_NOW/UTIME_OMIT travel as sentinels in the high word; times before 1970 become 0\n'
      + '// (the stat reply carries unsigned milliseconds only).\n'
      + 'static uint64_t powercut_utime_ms (const struct timespec* ts) {\n'
      + '  if (ts->tv_nsec == UTIME_NOW) return 0xFFFFFFFEULL << 32;\n'
      + '  if (ts->tv_nsec == UTIME_OMIT) return 0xFFFFFFFFULL << 32;\n'
      + '  if (ts->tv_sec < 0) return 0;\n'
      + '  return timespec_to_uint64(ts);\n'
      + '}\n\n'
      + '// powercut: a lazy unmount in this process (no fork of the daemon); 0 or -errno.\n'
      + 'NAPI_METHOD(powercut_umount2) {\n'
      + '  NAPI_ARGV(1)\n'
      + '  NAPI_ARGV_UTF8(mnt, 4096, 0)\n'
      + '  int r = umount2(mnt, MNT_DETACH | UMOUNT_NOFOLLOW);\n'
      + '  NAPI_RETURN_INT32(r == 0 ? 0 : -errno)\n'
      + '}\n\n'
      + '// powercut: move_mount(2) of the mount at `from` to `to`, beneath the mount there when `beneath`; 0 or -errno.\n'
      + 'NAPI_METHOD(powercut_move_mount) {\n'
      + '  NAPI_ARGV(3)\n'
      + '  NAPI_ARGV_UTF8(from, 4096, 0)\n'
      + '  NAPI_ARGV_UTF8(to, 4096, 1)\n'
      + '  NAPI_ARGV_INT32(beneath, 2)\n'
      + '#ifdef SYS_move_mount\n'
      + '  int r = syscall(SYS_move_mount, AT_FDCWD, from, AT_FDCWD, to, beneath ? MOVE_MOUNT_BENEATH : 0);\n'
      + '  NAPI_RETURN_INT32(r == 0 ? 0 : -errno)\n'
      + '#else\n'
      + '  NAPI_RETURN_INT32(-ENOSYS)\n'
      + '#endif\n'
      + '}\n\n// Methods\n',
  ],
  [
    '  l->atime = timespec_to_uint64(&tv[0]);\n  l->mtime = timespec_to_uint64(&tv[1]);\n',
    '  l->atime = powercut_utime_ms(&tv[0]);\n  l->mtime = powercut_utime_ms(&tv[1]);\n',
  ],
  ['  FUSE_UINT64_TO_INTS_ARGV(l->atime, 5)\n', '  FUSE_UINT64_TO_INTS_ARGV(l->mtime, 5)\n'],
  ['  struct fuse_operations ops = { };\n', '  struct fuse_operations ops = { };\n  ops.flag_utime_omit_ok = 1;\n  ops.flag_nullpath_ok = 1;\n'],
  ['  NAPI_EXPORT_FUNCTION(fuse_native_unmount)\n', '  NAPI_EXPORT_FUNCTION(fuse_native_unmount)\n  NAPI_EXPORT_FUNCTION(powercut_umount2)\n  NAPI_EXPORT_FUNCTION(powercut_move_mount)\n'],
  ['napi_create_string_utf8(env, l->path, NAPI_AUTO_LENGTH,', 'napi_create_string_utf8(env, l->path ? l->path : "", NAPI_AUTO_LENGTH,', 'all'],
  // fallocate: opcode 35, one more handler slot, the method, its export and its registration.
  ['static const uint32_t op_rmdir = 33;\n', `static const uint32_t op_rmdir = 33;\nstatic const uint32_t op_fallocate = ${FALLOCATE_OPCODE};\n`],
  ['  napi_ref handlers[35];\n', `  napi_ref handlers[${PATCHED_OPCODE_COUNT}];\n`],
  ['  for (int i = 0; i < 35; i++) {\n', `  for (int i = 0; i < ${PATCHED_OPCODE_COUNT}; i++) {\n`],
  [
    'static void fuse_native_dispatch_init (',
    '// powercut: fallocate(path, fd, mode, offset, length); the length travels in l->len (an off_t fits a size_t here).\n'
      + 'FUSE_METHOD_VOID(fallocate, 7, 0, (const char *path, int mode, off_t offset, off_t length, struct fuse_file_info *info), {\n'
      + '  l->path = path;\n  l->mode = mode;\n  l->offset = offset;\n  l->len = length;\n  l->info = info;\n'
      + '}, {\n'
      + '  napi_create_string_utf8(env, l->path ? l->path : "", NAPI_AUTO_LENGTH, &(argv[2]));\n'
      + '  napi_create_uint32(env, l->info != NULL ? l->info->fh : 0, &(argv[3]));\n'
      + '  napi_create_uint32(env, l->mode, &(argv[4]));\n'
      + '  FUSE_UINT64_TO_INTS_ARGV(l->offset, 5)\n'
      + '  FUSE_UINT64_TO_INTS_ARGV(l->len, 7)\n'
      + '})\n\n'
      + 'static void fuse_native_dispatch_init (',
  ],
  ['  if (implemented[op_rmdir]) ops.rmdir = fuse_native_rmdir;\n', '  if (implemented[op_rmdir]) ops.rmdir = fuse_native_rmdir;\n  if (implemented[op_fallocate]) ops.fallocate = fuse_native_fallocate;\n'],
  ['  NAPI_EXPORT_FUNCTION(fuse_native_signal_rmdir)\n', '  NAPI_EXPORT_FUNCTION(fuse_native_signal_rmdir)\n  NAPI_EXPORT_FUNCTION(fuse_native_signal_fallocate)\n'],
  ['  NAPI_EXPORT_UINT32(op_rmdir)\n', '  NAPI_EXPORT_UINT32(op_rmdir)\n  NAPI_EXPORT_UINT32(op_fallocate)\n'],
  // The channel that gives fstat after unlink its handle (CHANNEL_C).
  ['#include <fuse_lowlevel.h>\n', '#include <fuse_lowlevel.h>\n#include <fuse_kernel.h>\n#include <sys/uio.h>\n'],
  [
    'static void* start_fuse_thread (void *data) {\n  fuse_thread_t *ft = (fuse_thread_t *) data;\n  fuse_loop_mt(ft->fuse);\n',
    CHANNEL_C + 'static void* start_fuse_thread (void *data) {\n  fuse_thread_t *ft = (fuse_thread_t *) data;\n  pc_wrap_chan(ft->fuse);\n  fuse_loop_mt(ft->fuse);\n',
  ],
  ...WRITE_BEHIND_REPLACEMENTS,
];

/** The native module fuse-native's index.js uses (the same object): what powercut calls directly. */
export interface FuseBinding {
  fuse_native_unmount(mnt: string, thread: Buffer): void;
  /** Patched binding only: umount2(MNT_DETACH | UMOUNT_NOFOLLOW) in this process; 0 or -errno. */
  powercut_umount2?: (mnt: string) => number;
  /** Patched binding only: move_mount(2) from `from` to `to`, beneath the mount there if `beneath` is 1; 0 or -errno. */
  powercut_move_mount?: (from: string, to: string, beneath: number) => number;
  /** Patched binding only: write-behind (write-behind-c.ts says what each does). */
  powercut_wb_init?: (onWake: () => void, queued: Buffer) => void;
  powercut_wb_attach?: (thread: Buffer, id: number) => void;
  powercut_wb_take?: (out: Buffer, paths: Buffer, slabs: unknown[], totals: Buffer, pause: number) => number;
  powercut_wb_grant?: (limits: Buffer) => void;
  /** Patched binding only: a Buffer of 64 KiB of populated memory (a model chunk), or undefined if memory ran out. */
  powercut_chunk?: () => Buffer | undefined;
  /** Patched binding only: [slabs mapped, slabs handed out, chunks mapped, chunks handed out] since start. */
  powercut_wb_stats?: () => number[];
  /** Answers a request: (its thread buffer, result, op-specific values); posts the FUSE thread's semaphore. */
  [signal: `fuse_native_signal_${string}`]: (...args: unknown[]) => void;
  /** Opcodes: the index of each op's handler in the handler array. */
  [opcode: `op_${string}`]: number;
}

export interface FuseNative {
  Fuse: typeof FuseClass;
  /** True when the patched binding is loaded: caller context and full utimens are available. */
  patched: boolean;
  /** Why the stock binding is loaded instead (patched is false). */
  stockReason?: string;
  binding: FuseBinding;
}

let loaded: FuseNative | null = null;

/** fuse-native, patched where possible. Memoised: the binding can be chosen only before the first load. */
export function loadFuseNative(): FuseNative {
  if (loaded) return loaded;
  const require = createRequire(import.meta.url);
  const pkgDir = dirname(require.resolve('fuse-native/package.json'));
  let patched = false;
  let stockReason: string | undefined;
  try {
    process.env.FUSE_NATIVE_PREBUILD = ensurePatchedBuild(pkgDir);
    patched = true;
  } catch (e) {
    delete process.env.FUSE_NATIVE_PREBUILD;
    stockReason = e instanceof Error ? e.message : String(e);
    console.error(`powercut fs: using fuse-native's stock binding (${stockReason}); `
      + 'new files belong to the daemon\'s user and utimens cannot set mtime apart from atime');
  }
  const Fuse = require('fuse-native') as typeof FuseClass;
  // fuse-native loads its binding with node-gyp-build(its own dir), honouring FUSE_NATIVE_PREBUILD: the same call
  // here returns the same module object.
  const pkgRequire = createRequire(join(pkgDir, 'index.js'));
  const binding = (pkgRequire('node-gyp-build') as (dir: string) => FuseBinding)(pkgDir);
  loaded = { Fuse, patched, binding, ...(stockReason !== undefined ? { stockReason } : {}) };
  return loaded;
}

/** Builds the patched binding unless a build of the same source exists; returns the dir for FUSE_NATIVE_PREBUILD. */
function ensurePatchedBuild(pkgDir: string): string {
  const pkg = JSON.parse(readFileSync(join(pkgDir, 'package.json'), 'utf8')) as { version: string };
  if (pkg.version !== '2.2.6') throw new Error(`the patch is written for fuse-native 2.2.6, found ${pkg.version}`);
  let src = readFileSync(join(pkgDir, 'fuse-native.c'), 'utf8');
  for (const [anchor, replacement, all] of REPLACEMENTS) {
    const count = src.split(anchor).length - 1;
    if (count === 0 || (count > 1 && all !== 'all')) throw new Error(`patch anchor found ${count} times: ${JSON.stringify(anchor.slice(0, 40))}`);
    src = src.split(anchor).join(replacement);
  }
  const pkgRequire = createRequire(join(pkgDir, 'index.js'));
  const fuseLib = pkgRequire('fuse-shared-library') as { include: string; lib: string };
  const napiMacros = dirname(pkgRequire.resolve('napi-macros/napi-macros.h'));
  const nodeInclude = resolve(dirname(process.execPath), '..', 'include', 'node');
  if (!existsSync(join(nodeInclude, 'node_api.h'))) throw new Error(`Node's headers are not at ${nodeInclude}`);
  const args = [
    '-shared', '-fPIC', '-pthread', '-O2', '-Wall', '-Wno-unused-parameter',
    '-D_FILE_OFFSET_BITS=64', '-D_LARGEFILE_SOURCE', '-DNODE_GYP_MODULE_NAME=fuse', '-DBUILDING_NODE_EXTENSION',
    `-I${nodeInclude}`, `-I${napiMacros}`, `-I${fuseLib.include}`,
  ];
  const key = createHash('sha256').update(JSON.stringify([PATCH_VERSION, src, args, fuseLib.lib, process.versions.napi])).digest('hex').slice(0, 16);
  const cacheRoot = join(dirname(pkgDir), '.cache', 'powercut');
  const dir = join(cacheRoot, `fuse-native-${key}`);
  if (existsSync(join(dir, 'build', 'Release', 'fuse.node'))) return dir;

  // Several daemons may start at once: each builds in its own directory and renames it into place.
  const tmp = `${dir}.tmp-${process.pid}-${Date.now()}`;
  const out = join(tmp, 'build', 'Release');
  mkdirSync(out, { recursive: true });
  try {
    writeFileSync(join(tmp, 'fuse-native.c'), src);
    execFileSync('cc', [...args, join(tmp, 'fuse-native.c'), '-o', join(out, 'fuse.node'), fuseLib.lib],
      { stdio: ['ignore', 'ignore', 'pipe'], timeout: BUILD_TIMEOUT_MS });
    try {
      renameSync(tmp, dir);
    } catch (e) {
      if (!existsSync(join(dir, 'build', 'Release', 'fuse.node'))) throw e; // else another process won the race
    }
  } catch (e) {
    const stderr = (e as { stderr?: Buffer }).stderr?.toString().trim().slice(0, 600);
    throw new Error(`cannot build the patched binding: ${stderr || (e instanceof Error ? e.message : String(e))}`);
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
  return dir;
}
