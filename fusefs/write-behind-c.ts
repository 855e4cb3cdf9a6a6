// The C half of write-behind (fusefs/write-behind.ts has the JavaScript half and says why): the part
// of the patched binding (fuse-native-binding.ts) that answers a write in the FUSE thread when
// JavaScript allowed it, copying its data into slabs of populated memory and queueing a record of it
// for JavaScript, which applies the queued writes to the model, in order, before anything else.
import { CHUNK_BYTES } from './model/content-digest.js';

/** Sizes the C code and JavaScript share (the C defines are generated from these). */
export const WB = {
  /** A slab of write data: mmap'd populated (one page fault here costs 10 us on some VMs, populating 0.6), reused once JavaScript dropped every view of it. */
  slabBytes: 256 * 1024,
  /** Mount slots: a mount's id modulo this is its slot. */
  mounts: 64,
  /** Writes queued at most; past this (or maxQueuedBytes, or pathBytes of paths) a write takes the usual hop to JavaScript. */
  maxQueued: 8192,
  maxQueuedBytes: 64 * 1024 * 1024,
  pathBytes: 1024 * 1024,
  /** Free slabs kept populated for reuse (64 MiB); more are unmapped. */
  poolSlabs: 256,
  /**
   * JavaScript is woken when this many writes are queued, or wakeBytes of data: it applies them
   * while the program goes on writing. Fewer wait for the next request or command JavaScript handles
   * (each takes the queue first), so a program's writes do not each wake a third thread.
   */
  wakeRecords: 64,
  wakeBytes: 1024 * 1024,
  /** The model's file chunks come from populated memory too (powercut_chunk). */
  chunkBytes: CHUNK_BYTES,
  /** Chunks are mapped this many at a time, populated, and this many kept free for reuse at most. */
  chunksPerMap: 32,
  poolChunks: 1024,
  /** Doubles per queued record handed to JavaScript: mount id, fh, offset, length, slab id, offset in it, time (ms), path offset, path length. */
  recordDoubles: 9,
  /** Per granted mount: id, enabled, lowest valid fh, cost limit, fault-bytes limit. */
  grantDoubles: 5,
  /**
   * What a write may add to the disk's usage beyond its length, at most: a partial block at each end
   * and the old end-of-file block counted whole (GrowBuffer.usageAfterAllocating). The binding
   * charges every write its length plus this against the space JavaScript granted.
   */
  blockSlackBytes: 3 * 4096,
} as const;

export const WRITE_BEHIND_C = String.raw`
// powercut: write-behind. A write is answered here, in the FUSE thread, when JavaScript's last grant
// allows it (its mount enabled, its handle valid, room on the disk, no crash point that close); its
// data is copied into a slab and a record queued, which JavaScript takes (powercut_wb_take) and
// applies to the model before it handles anything else. Everything under pc_wb.lock.
#define PC_WB_SLAB_BYTES ${WB.slabBytes}
#define PC_WB_MOUNTS ${WB.mounts}
#define PC_WB_MAX_QUEUED ${WB.maxQueued}
#define PC_WB_MAX_QUEUED_BYTES ${WB.maxQueuedBytes}
#define PC_WB_PATH_BYTES ${WB.pathBytes}
#define PC_WB_POOL_SLABS ${WB.poolSlabs}
#define PC_WB_REC ${WB.recordDoubles}
#define PC_WB_GRANT ${WB.grantDoubles}
#define PC_WB_SLACK ${WB.blockSlackBytes}.0
#define PC_WB_WAKE_RECORDS ${WB.wakeRecords}
#define PC_WB_WAKE_BYTES ${WB.wakeBytes}
#define PC_CHUNK_BYTES ${WB.chunkBytes}
#define PC_CHUNKS_PER_MAP ${WB.chunksPerMap}
#define PC_POOL_CHUNKS ${WB.poolChunks}

typedef struct pc_slab { char *base; uint32_t id; uint32_t used; int sealed; int wrapped; int finalized; struct pc_slab *next; } pc_slab_t;
typedef struct { uint32_t id; int enabled; double fh_floor; double cost_total; double cost_limit; double fault_total; double fault_limit; } pc_wb_mount_t;
typedef struct { uint32_t mount; uint32_t len; uint64_t fh; uint64_t offset; pc_slab_t *slab; uint32_t slab_off; uint32_t path_off; uint32_t path_len; double time_ms; int copied; } pc_wb_rec_t;

static struct {
  pthread_mutex_t lock;
  pthread_cond_t copied; // signalled when the last copy in flight is done
  uint32_t copying;      // writes whose data is being copied outside the lock (not answered yet)
  int ready;
  napi_env env;
  napi_ref on_wake;
  napi_ref queued_ref; // the Buffer JavaScript reads queued[0] from: writes queued now (so it asks only when there are some)
  volatile int32_t *queued;
  uv_async_t wake;
  pc_wb_mount_t mounts[PC_WB_MOUNTS];
  double op_total;
  double op_limit;
  double max_file_bytes;
  pc_wb_rec_t recs[PC_WB_MAX_QUEUED];
  uint32_t head;  // records [head, nrecs) are queued; [0, head) were taken (the array starts over once all are)
  uint32_t nrecs;
  size_t queued_bytes;
  char paths[PC_WB_PATH_BYTES];
  uint32_t paths_used;
  pc_slab_t *current; // where the next write goes; sealed when one does not fit
  pc_slab_t *free;
  uint32_t nfree;
  uint32_t next_slab_id;
  double slabs_mapped; // slabs mapped fresh (their pages not touched before), and slabs handed out in all
  double slabs_handed;
} pc_wb = { .lock = PTHREAD_MUTEX_INITIALIZER, .copied = PTHREAD_COND_INITIALIZER };

// A slab no write goes to any more and no JavaScript view holds: kept for reuse, or unmapped.
static void pc_wb_recycle (pc_slab_t *s) {
  if (pc_wb.nfree < PC_WB_POOL_SLABS) {
    s->next = pc_wb.free;
    pc_wb.free = s;
    pc_wb.nfree++;
    return;
  }
  munmap(s->base, PC_WB_SLAB_BYTES);
  free(s);
}

// The slab the next len bytes go to (a fresh or reused one when the current one is full), or NULL.
static pc_slab_t *pc_wb_room (size_t len) {
  pc_slab_t *s = pc_wb.current;
  if (s != NULL && s->used + len <= PC_WB_SLAB_BYTES) return s;
  if (s != NULL) {
    s->sealed = 1;
    if (s->finalized) pc_wb_recycle(s);
  }
  pc_wb.current = NULL;
  pc_slab_t *n = pc_wb.free;
  if (n != NULL) {
    pc_wb.free = n->next;
    pc_wb.nfree--;
  } else {
    pc_wb.slabs_mapped++;
    n = calloc(1, sizeof(pc_slab_t));
    if (n == NULL) return NULL;
    n->base = mmap(NULL, PC_WB_SLAB_BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
    if (n->base == MAP_FAILED) {
      free(n);
      return NULL;
    }
  }
  pc_wb.slabs_handed++;
  n->id = ++pc_wb.next_slab_id;
  n->used = 0;
  n->sealed = 0;
  n->wrapped = 0;
  n->finalized = 0;
  n->next = NULL;
  pc_wb.current = n;
  return n;
}

// The write answered here (its length), or -1: the usual hop to JavaScript.
static int pc_wb_try (fuse_thread_t *ft, const char *path, const char *buf, size_t len, off_t offset, struct fuse_file_info *info) {
  if (info == NULL || info->fh == 0 || len == 0 || len > PC_WB_SLAB_BYTES) return -1;
  size_t plen = path != NULL ? strlen(path) : 0;
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  pthread_mutex_lock(&pc_wb.lock);
  uint32_t id = ft->pc_wb_mount;
  pc_wb_mount_t *m = &pc_wb.mounts[id % PC_WB_MOUNTS];
  pc_wb_rec_t *prev = pc_wb.nrecs > pc_wb.head ? &pc_wb.recs[pc_wb.nrecs - 1] : NULL;
  int same_path = prev != NULL && prev->path_len == plen && (plen == 0 || memcmp(pc_wb.paths + prev->path_off, path, plen) == 0);
  double cost = (double) len + PC_WB_SLACK;
  int ok = pc_wb.ready && id != 0 && m->id == id && m->enabled && (double) info->fh >= m->fh_floor
    && (double) offset + (double) len <= pc_wb.max_file_bytes
    && pc_wb.op_total + 1 <= pc_wb.op_limit
    && m->cost_total + cost <= m->cost_limit && m->fault_total + (double) len <= m->fault_limit
    && pc_wb.nrecs < PC_WB_MAX_QUEUED && pc_wb.queued_bytes + len <= PC_WB_MAX_QUEUED_BYTES
    && (same_path || pc_wb.paths_used + plen <= PC_WB_PATH_BYTES);
  pc_slab_t *s = ok ? pc_wb_room(len) : NULL;
  if (s == NULL) {
    pthread_mutex_unlock(&pc_wb.lock);
    return -1;
  }
  pc_wb_rec_t *r = &pc_wb.recs[pc_wb.nrecs++];
  r->mount = id;
  r->len = (uint32_t) len;
  r->fh = info->fh;
  r->offset = (uint64_t) offset;
  r->slab = s;
  r->slab_off = s->used;
  char *to = s->base + s->used;
  s->used += (uint32_t) len;
  if (same_path) r->path_off = prev->path_off;
  else {
    r->path_off = pc_wb.paths_used;
    if (plen > 0) memcpy(pc_wb.paths + pc_wb.paths_used, path, plen);
    pc_wb.paths_used += (uint32_t) plen;
  }
  r->path_len = (uint32_t) plen;
  r->time_ms = (double) ts.tv_sec * 1000.0 + (double) (ts.tv_nsec / 1000000);
  r->copied = 0;
  pc_wb.op_total += 1;
  m->cost_total += cost;
  m->fault_total += (double) len;
  uint32_t queued = pc_wb.nrecs - pc_wb.head;
  *pc_wb.queued = (int32_t) queued;
  int wake = queued == PC_WB_WAKE_RECORDS || (pc_wb.queued_bytes < PC_WB_WAKE_BYTES && pc_wb.queued_bytes + len >= PC_WB_WAKE_BYTES);
  pc_wb.queued_bytes += len;
  // The copy runs outside the lock: a 128 KiB copy would stall a take or a grant. A take leaves the
  // record queued until it is copied (it is not answered before); a pausing take waits for it. The
  // record stays where it is until then (the array starts over only once every record was taken).
  pc_wb.copying++;
  pthread_mutex_unlock(&pc_wb.lock);
  memcpy(to, buf, len);
  pthread_mutex_lock(&pc_wb.lock);
  r->copied = 1;
  if (--pc_wb.copying == 0) pthread_cond_broadcast(&pc_wb.copied);
  pthread_mutex_unlock(&pc_wb.lock);
  if (wake) uv_async_send(&pc_wb.wake);
  return (int) len;
}

static int pc_wb_write (const char *path, const char *buf, size_t len, off_t offset, struct fuse_file_info *info) {
  fuse_thread_t *ft = (fuse_thread_t *) fuse_get_context()->private_data;
  int r = pc_wb_try(ft, path, buf, len, offset, info);
  return r >= 0 ? r : fuse_native_write(path, buf, len, offset, info);
}

// JavaScript dropped every view of a slab (its Buffer was collected).
static void pc_wb_finalize (napi_env env, void *data, void *hint) {
  pc_slab_t *s = (pc_slab_t *) hint;
  pthread_mutex_lock(&pc_wb.lock);
  s->finalized = 1;
  if (s->sealed) pc_wb_recycle(s);
  pthread_mutex_unlock(&pc_wb.lock);
}

static void pc_wb_on_wake (uv_async_t *handle) {
  napi_env env = pc_wb.env;
  napi_handle_scope scope;
  napi_open_handle_scope(env, &scope);
  napi_value fn, global;
  napi_get_reference_value(env, pc_wb.on_wake, &fn);
  napi_get_global(env, &global);
  napi_make_callback(env, NULL, global, fn, 0, NULL, NULL);
  napi_close_handle_scope(env, scope);
}

// powercut_wb_init(onWake, queued): onWake runs on the event loop once writes were queued;
// queued (a Buffer of at least 4 bytes, kept) holds in its first int32 how many are queued now.
NAPI_METHOD(powercut_wb_init) {
  NAPI_ARGV(2)
  NAPI_ARGV_BUFFER_CAST(int32_t *, queued, 1)
  if (pc_wb.env != NULL) return NULL;
  pc_wb.env = env;
  napi_create_reference(env, argv[0], 1, &pc_wb.on_wake);
  napi_create_reference(env, argv[1], 1, &pc_wb.queued_ref);
  pc_wb.queued = queued;
  *queued = 0;
  uv_async_init(uv_default_loop(), &pc_wb.wake, pc_wb_on_wake);
  uv_unref((uv_handle_t *) &pc_wb.wake);
  pthread_mutex_lock(&pc_wb.lock);
  pc_wb.ready = 1;
  pthread_mutex_unlock(&pc_wb.lock);
  return NULL;
}

// powercut_wb_attach(thread, id): the mount whose FUSE thread this is takes the id (0: none).
NAPI_METHOD(powercut_wb_attach) {
  NAPI_ARGV(2)
  NAPI_ARGV_BUFFER_CAST(fuse_thread_t *, ft, 0)
  NAPI_ARGV_UINT32(id, 1)
  pthread_mutex_lock(&pc_wb.lock);
  ft->pc_wb_mount = id;
  pthread_mutex_unlock(&pc_wb.lock);
  return NULL;
}

// powercut_wb_take(out, paths, slabs, totals, pause) -> count: moves the queued records whose data
// is copied, in order up to the first that is not, into out (PC_WB_REC doubles each; path offsets
// into paths, which gets the whole path area); pushes [id, Buffer] onto slabs for each slab
// JavaScript has not seen; writes the running totals (writes admitted; per slot cost and bytes
// charged) into totals. With pause it first waits for every copy (so it takes every write admitted)
// and nothing more is answered here until the next grant.
NAPI_METHOD(powercut_wb_take) {
  NAPI_ARGV(5)
  NAPI_ARGV_BUFFER_CAST(double *, out, 0)
  NAPI_ARGV_BUFFER_CAST(char *, paths, 1)
  napi_value slabs = argv[2];
  NAPI_ARGV_BUFFER_CAST(double *, totals, 3)
  NAPI_ARGV_INT32(pause, 4)
  pc_slab_t *unwrapped[PC_WB_MAX_QUEUED];
  uint32_t nunwrapped = 0;
  pthread_mutex_lock(&pc_wb.lock);
  if (pause) while (pc_wb.copying > 0) pthread_cond_wait(&pc_wb.copied, &pc_wb.lock);
  uint32_t n = 0;
  while (pc_wb.head + n < pc_wb.nrecs && pc_wb.recs[pc_wb.head + n].copied) n++;
  for (uint32_t i = 0; i < n; i++) {
    pc_wb_rec_t *r = &pc_wb.recs[pc_wb.head + i];
    pc_wb.queued_bytes -= r->len;
    double *o = out + (size_t) i * PC_WB_REC;
    o[0] = r->mount; o[1] = (double) r->fh; o[2] = (double) r->offset; o[3] = r->len;
    o[4] = r->slab->id; o[5] = r->slab_off; o[6] = r->time_ms; o[7] = r->path_off; o[8] = r->path_len;
    if (!r->slab->wrapped) {
      r->slab->wrapped = 1;
      unwrapped[nunwrapped++] = r->slab;
    }
  }
  memcpy(paths, pc_wb.paths, pc_wb.paths_used);
  pc_wb.head += n;
  if (pc_wb.head == pc_wb.nrecs) pc_wb.head = pc_wb.nrecs = pc_wb.paths_used = 0;
  *pc_wb.queued = (int32_t) (pc_wb.nrecs - pc_wb.head);
  totals[0] = pc_wb.op_total;
  for (int k = 0; k < PC_WB_MOUNTS; k++) {
    totals[1 + 2 * k] = pc_wb.mounts[k].cost_total;
    totals[2 + 2 * k] = pc_wb.mounts[k].fault_total;
    if (pause) {
      pc_wb.mounts[k].cost_limit = pc_wb.mounts[k].cost_total;
      pc_wb.mounts[k].fault_limit = pc_wb.mounts[k].fault_total;
    }
  }
  if (pause) pc_wb.op_limit = pc_wb.op_total;
  pthread_mutex_unlock(&pc_wb.lock);
  // Outside the lock: creating a Buffer may collect garbage, whose finalizers take the lock.
  uint32_t at;
  napi_get_array_length(env, slabs, &at);
  for (uint32_t i = 0; i < nunwrapped; i++) {
    napi_value id, buf;
    napi_create_uint32(env, unwrapped[i]->id, &id);
    napi_create_external_buffer(env, PC_WB_SLAB_BYTES, unwrapped[i]->base, pc_wb_finalize, unwrapped[i], &buf);
    napi_set_element(env, slabs, at++, id);
    napi_set_element(env, slabs, at++, buf);
  }
  NAPI_RETURN_UINT32(n)
}

// powercut_wb_grant(limits): what may be answered here from now on: limits[0] the total of writes
// answered, limits[1] the largest file, then per slot PC_WB_GRANT doubles (id, enabled, lowest valid
// fh, cost limit, fault-bytes limit). Limits are totals since start, so writes answered between
// JavaScript's last take and this grant count against them.
NAPI_METHOD(powercut_wb_grant) {
  NAPI_ARGV(1)
  NAPI_ARGV_BUFFER_CAST(double *, g, 0)
  pthread_mutex_lock(&pc_wb.lock);
  pc_wb.op_limit = g[0];
  pc_wb.max_file_bytes = g[1];
  for (int k = 0; k < PC_WB_MOUNTS; k++) {
    double *s = g + 2 + k * PC_WB_GRANT;
    pc_wb_mount_t *m = &pc_wb.mounts[k];
    m->id = (uint32_t) s[0];
    m->enabled = s[1] != 0;
    m->fh_floor = s[2];
    m->cost_limit = s[3];
    m->fault_limit = s[4];
  }
  pthread_mutex_unlock(&pc_wb.lock);
  return NULL;
}

// powercut: the model's file chunks in populated memory (mapped PC_CHUNKS_PER_MAP at a time), kept
// for reuse once JavaScript dropped them. JavaScript thread only (finalizers run there too); locked anyway.
static struct { pthread_mutex_t lock; void *free[PC_POOL_CHUNKS]; uint32_t nfree; double mapped; double handed; } pc_chunks = { .lock = PTHREAD_MUTEX_INITIALIZER };

static void pc_chunk_finalize (napi_env env, void *data, void *hint) {
  pthread_mutex_lock(&pc_chunks.lock);
  if (pc_chunks.nfree < PC_POOL_CHUNKS) pc_chunks.free[pc_chunks.nfree++] = data;
  else munmap(data, PC_CHUNK_BYTES);
  pthread_mutex_unlock(&pc_chunks.lock);
}

// powercut_chunk() -> a Buffer of PC_CHUNK_BYTES (its bytes undefined), or undefined if memory ran out.
NAPI_METHOD(powercut_chunk) {
  pthread_mutex_lock(&pc_chunks.lock);
  if (pc_chunks.nfree == 0) {
    char *run = mmap(NULL, (size_t) PC_CHUNK_BYTES * PC_CHUNKS_PER_MAP, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
    if (run != MAP_FAILED) {
      pc_chunks.mapped += PC_CHUNKS_PER_MAP;
      for (int i = PC_CHUNKS_PER_MAP - 1; i >= 0; i--) pc_chunks.free[pc_chunks.nfree++] = run + (size_t) i * PC_CHUNK_BYTES;
    }
  }
  void *p = pc_chunks.nfree > 0 ? pc_chunks.free[--pc_chunks.nfree] : NULL;
  if (p != NULL) pc_chunks.handed++;
  pthread_mutex_unlock(&pc_chunks.lock);
  if (p == NULL) return NULL;
  napi_value buf;
  napi_create_external_buffer(env, PC_CHUNK_BYTES, p, pc_chunk_finalize, NULL, &buf);
  return buf;
}

// powercut_wb_stats() -> [slabs mapped, slabs handed out, chunks mapped, chunks handed out] since start:
// what was not reused from a pool is memory touched for the first time.
NAPI_METHOD(powercut_wb_stats) {
  double v[4];
  pthread_mutex_lock(&pc_wb.lock);
  v[0] = pc_wb.slabs_mapped;
  v[1] = pc_wb.slabs_handed;
  pthread_mutex_unlock(&pc_wb.lock);
  pthread_mutex_lock(&pc_chunks.lock);
  v[2] = pc_chunks.mapped;
  v[3] = pc_chunks.handed;
  pthread_mutex_unlock(&pc_chunks.lock);
  napi_value arr;
  napi_create_array_with_length(env, 4, &arr);
  for (uint32_t i = 0; i < 4; i++) {
    napi_value x;
    napi_create_double(env, v[i], &x);
    napi_set_element(env, arr, i, x);
  }
  return arr;
}

`;

/** The [anchor, replacement] pairs that build write-behind into fuse-native.c (see fuse-native-binding.ts). */
export const WRITE_BEHIND_REPLACEMENTS: [string, string][] = [
  ['#include <pthread.h>\n', '#include <pthread.h>\n#include <sys/mman.h>\n#include <time.h>\n'],
  ['  uv_async_t async;\n  uv_mutex_t mut;\n  uv_sem_t sem;\n} fuse_thread_t;', '  uv_async_t async;\n  uv_mutex_t mut;\n  uv_sem_t sem;\n  uint32_t pc_wb_mount; // powercut: write-behind mount id (0: none)\n} fuse_thread_t;'],
  ['// Top-level dispatcher\n', `${WRITE_BEHIND_C}// Top-level dispatcher\n`],
  ['  if (implemented[op_write]) ops.write = fuse_native_write;\n', '  if (implemented[op_write]) ops.write = pc_wb_write;\n'],
  ['  NAPI_EXPORT_FUNCTION(fuse_native_mount)\n', '  NAPI_EXPORT_FUNCTION(fuse_native_mount)\n  NAPI_EXPORT_FUNCTION(powercut_wb_init)\n  NAPI_EXPORT_FUNCTION(powercut_wb_attach)\n  NAPI_EXPORT_FUNCTION(powercut_wb_take)\n  NAPI_EXPORT_FUNCTION(powercut_wb_grant)\n  NAPI_EXPORT_FUNCTION(powercut_chunk)\n  NAPI_EXPORT_FUNCTION(powercut_wb_stats)\n'],
];
