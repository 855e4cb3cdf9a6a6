// The guest's history runner, as C source kernel-check compiles on the host (gcc -static, into its
// cache) and puts into the initramfs: a static binary needs nothing from the guest.

export const RUNNER_C = String.raw`/* powercut kernel-check: runs one history's steps in the guest, one line each of a spec file, and
 * after each step writes an O_DIRECT marker block (4 KiB: "KCMARK" and the step number) to the disk
 * past the filesystem's end, so the block log shows where each step ended. Compiled on the host with
 * gcc -static; reads: runner SPEC MOUNTDIR DEVICE MARKER_OFFSET LABEL.
 * Steps (paths relative to MOUNTDIR):
 *   mkdir P | create P | write P OFFSET LEN BYTE | truncate P SIZE | rename A B | link A B | unlink P
 *   fsync P | fdatasync P | fsyncdir P | pause MS
 * Prints "KC LABEL STEP ok" or "KC LABEL STEP err ERRNO" per step, "KC LABEL end" at the end. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char root[256];

static const char *at(const char *p, char *buf) {
  snprintf(buf, 512, "%s/%s", root, p);
  return buf;
}

static int sync_path(const char *p, int data, int dir) {
  int fd = open(p, dir ? O_RDONLY | O_DIRECTORY : O_WRONLY);
  if (fd < 0) return -1;
  int r = data ? fdatasync(fd) : fsync(fd);
  int e = errno;
  close(fd);
  errno = e;
  return r;
}

static int step(char *line) {
  char op[32], a[256], b[256], pa[512], pb[512];
  long long x = 0, y = 0, z = 0;
  a[0] = b[0] = 0;
  if (sscanf(line, "%31s", op) != 1) return 0;
  if (!strcmp(op, "mkdir")) { sscanf(line, "%*s %255s", a); return mkdir(at(a, pa), 0755); }
  if (!strcmp(op, "create")) {
    sscanf(line, "%*s %255s", a);
    int fd = open(at(a, pa), O_CREAT | O_EXCL | O_WRONLY, 0644);
    if (fd < 0) return -1;
    return close(fd);
  }
  if (!strcmp(op, "write")) {
    sscanf(line, "%*s %255s %lld %lld %lld", a, &x, &y, &z);
    int fd = open(at(a, pa), O_WRONLY);
    if (fd < 0) return -1;
    char *buf = malloc(y > 0 ? y : 1);
    memset(buf, (int)z, y);
    long long done = 0;
    while (done < y) {
      ssize_t n = pwrite(fd, buf + done, y - done, x + done);
      if (n <= 0) { int e = errno; free(buf); close(fd); errno = e; return -1; }
      done += n;
    }
    free(buf);
    return close(fd);
  }
  if (!strcmp(op, "truncate")) { sscanf(line, "%*s %255s %lld", a, &x); return truncate(at(a, pa), x); }
  if (!strcmp(op, "rename")) { sscanf(line, "%*s %255s %255s", a, b); return rename(at(a, pa), at(b, pb)); }
  if (!strcmp(op, "link")) { sscanf(line, "%*s %255s %255s", a, b); return link(at(a, pa), at(b, pb)); }
  if (!strcmp(op, "unlink")) { sscanf(line, "%*s %255s", a); return unlink(at(a, pa)); }
  if (!strcmp(op, "fsync")) { sscanf(line, "%*s %255s", a); return sync_path(at(a, pa), 0, 0); }
  if (!strcmp(op, "fdatasync")) { sscanf(line, "%*s %255s", a); return sync_path(at(a, pa), 1, 0); }
  if (!strcmp(op, "fsyncdir")) { sscanf(line, "%*s %255s", a); return sync_path(at(a, pa), 0, 1); }
  if (!strcmp(op, "pause")) { sscanf(line, "%*s %lld", &x); usleep((useconds_t)(x * 1000)); return 0; }
  errno = EINVAL;
  return -1;
}

int main(int argc, char **argv) {
  if (argc != 6) { fprintf(stderr, "usage: runner SPEC MOUNTDIR DEVICE MARKER_OFFSET LABEL\n"); return 2; }
  snprintf(root, sizeof root, "%s", argv[2]);
  FILE *spec = fopen(argv[1], "r");
  if (!spec) { printf("KC %s spec-missing %d\n", argv[5], errno); return 1; }
  int dev = open(argv[3], O_WRONLY | O_DIRECT);
  if (dev < 0) { printf("KC %s device-open %d\n", argv[5], errno); return 1; }
  long long marker = atoll(argv[4]);
  void *block;
  if (posix_memalign(&block, 4096, 4096)) return 1;
  char line[1024];
  int n = 0;
  while (fgets(line, sizeof line, spec)) {
    n++;
    int r = step(line);
    printf(r < 0 ? "KC %s %d err %d\n" : "KC %s %d ok\n", argv[5], n, r < 0 ? errno : 0);
    fflush(stdout);
    memset(block, 0, 4096);
    snprintf(block, 4096, "KCMARK %d", n);
    if (pwrite(dev, block, 4096, marker + (long long)(n % 64) * 4096) != 4096) { printf("KC %s marker-failed %d\n", argv[5], errno); return 1; }
  }
  printf("KC %s end\n", argv[5]);
  fflush(stdout);
  return 0;
}
`;
