/*
 * preload_probe - what build/libnccomring-preload.so costs and does, seen
 * from inside a process that runs under it: build/preload-probe MODE
 *
 *   idle           print this process's threads, VmSize, VmRSS and which of
 *                  the two libraries are mapped; call nothing. Exit 0.
 *   idle-check     the same, under LD_PRELOAD=build/libnccomring-preload.so:
 *                  fail unless the shim is mapped, the Go library is not,
 *                  and the process has exactly 1 thread.
 *   fork           (under the shim) chdir("/"), then fork before any
 *                  ring-stage call; the child runs a whole 2 x 2 ring stage
 *                  (Preset on every rank, Postset, GetNetDev) and checks
 *                  the wiring; then the parent, whose address space the
 *                  child's load did not touch, does the same; then a child
 *                  forked after that gets ncclInvalidUsage (E1).
 *   latency        time the first ring-stage call of the process (through the
 *                  shim: loading the Go library and starting its runtime)
 *                  and the mean of steady calls; print them with the
 *                  process's threads and memory after the calls.
 *   race           (under the shim) 8 threads make their first call at the
 *                  same moment; every one must get the right answer.
 *   maps-forgery BASE EVIL
 *                  (under the shim, named by a relative path) maps a file
 *                  whose path is so long that its /proc/self/maps line,
 *                  read through a buffer of PATH_MAX + 128 bytes, splits
 *                  into a forged line "0-ffffffffffffffff /BASE/evil/x"
 *                  that covers every address, with BASE/evil/
 *                  libnccomring.so.0 a link to EVIL; then changes directory
 *                  and runs the 2 x 2 stage, which must be the Go
 *                  library's (the shim once parsed that file to find
 *                  itself). Exit 77 when the kernel's line does not fall
 *                  where it must (nothing was tested).
 *   missing WANT   (under the shim, with NCCOMRING_LIBRARY naming something
 *                  that is not the Go library, or under a small ulimit -v)
 *                  every function returns
 *                  ncclSystemError; with NCCL_DEBUG set each prints exactly
 *                  one "NCCL WARN" line on stderr containing WANT, without it
 *                  nothing. With NCCL_DEBUG_FILE set too, the lines are in
 *                  that file (it must not exist before) and stderr is
 *                  empty: the shim logs with the library's logger.
 *   standin LIB    (under the shim) dlopen LIB, a stand-in libnccom.so.2
 *                  (tests/c/preload/standin_libnccom.c), RTLD_LOCAL, and
 *                  run its two failing calls; exit 0 when both returned
 *                  ncclInvalidArgument. check.sh reads the lines (D26).
 *
 * The four functions are found with dlsym(RTLD_DEFAULT), as a host linked to
 * libnccom would reach the preloaded definitions; the modes that test the
 * shim first check that this is where they come from.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../common/cluster.h"

#define SHIM_FILE "libnccomring-preload.so"
#define GO_FILE "libnccomring.so"

static int failures;

#define CHECK(cond, ...)                                                          \
  do {                                                                            \
    if (!(cond)) {                                                                \
      fprintf(stderr, "preload-probe[%d]: FAIL %s:%d: %s: ", (int)getpid(), __FILE__, \
              __LINE__, #cond);                                                   \
      fprintf(stderr, __VA_ARGS__);                                               \
      fputc('\n', stderr);                                                        \
      failures++;                                                                 \
    }                                                                             \
  } while (0)

/* ---- this process, from /proc ---- */

struct usage {
  long threads, vmSizeKB, vmRssKB;
};

static struct usage read_usage(void) {
  struct usage u = {-1, -1, -1};
  FILE *f = fopen("/proc/self/status", "r");
  if (f == NULL) return u;
  char line[256];
  while (fgets(line, sizeof line, f)) {
    sscanf(line, "Threads: %ld", &u.threads);
    sscanf(line, "VmSize: %ld kB", &u.vmSizeKB);
    sscanf(line, "VmRSS: %ld kB", &u.vmRssKB);
  }
  fclose(f);
  return u;
}

/* Whether a file named `name`, or `name` and a version suffix (".0"), is
 * mapped into this process ("libnccomring.so" does not match
 * "libnccomring-preload.so"); a file replaced on disk since it was mapped
 * (a rebuild) shows as " (deleted)". */
static int mapped(const char *name) {
  FILE *f = fopen("/proc/self/maps", "r");
  if (f == NULL) return -1;
  char line[4096];
  int found = 0;
  size_t n = strlen(name);
  while (!found && fgets(line, sizeof line, f)) {
    line[strcspn(line, "\n")] = '\0';
    size_t len = strlen(line);
    if (len > 10 && strcmp(line + len - 10, " (deleted)") == 0) line[len - 10] = '\0';
    const char *base = strrchr(line, '/');
    found = base && strncmp(base + 1, name, n) == 0 && (base[1 + n] == '\0' || base[1 + n] == '.');
  }
  fclose(f);
  return found;
}

static void print_usage(const char *what) {
  struct usage u = read_usage();
  printf("preload-probe: %s: threads %ld, VmSize %ld kB, VmRSS %ld kB, shim %s, Go library %s\n",
         what, u.threads, u.vmSizeKB, u.vmRssKB, mapped(SHIM_FILE) ? "mapped" : "not mapped",
         mapped(GO_FILE) ? "mapped" : "not mapped");
  fflush(stdout);
}

/* ---- the four functions, as the host's dynamic linker resolves them ---- */

static struct ring_api api;

static void *need(const char *name, int fromShim) {
  void *p = dlsym(RTLD_DEFAULT, name);
  Dl_info info;
  if (p == NULL) {
    fprintf(stderr, "preload-probe: %s is not defined; run under LD_PRELOAD\n", name);
    exit(2);
  }
  if (fromShim && (!dladdr(p, &info) || info.dli_fname == NULL ||
                   strstr(info.dli_fname, SHIM_FILE) == NULL)) {
    fprintf(stderr, "preload-probe: %s does not come from %s; run with LD_PRELOAD=build/%s\n",
            name, SHIM_FILE, SHIM_FILE);
    exit(2);
  }
  return p;
}

static void resolve(int fromShim) {
  api.preset = (ncclResult_t(*)(struct ncclComm *, struct ncclTopoGraph *,
                                struct ncclTopoRanks *))need("ncclTopoPreset", fromShim);
  api.postset = (ncclResult_t(*)(struct ncclComm *, int *, struct ncclTopoRanks **, int *,
                                 int *))need("ncclTopoPostset", fromShim);
  api.build_rings =
      (ncclResult_t(*)(int, int *, int, int, int *, int *))need("ncclBuildRings", fromShim);
  api.get_net_dev = (ncclResult_t(*)(struct ncclTopoSystem *, int, struct ncclTopoGraph *, int,
                                     int *))need("ncclTopoGetNetDev", fromShim);
}

/* ---- one whole 2 x 2 ring stage ---- */

/* Two nodes of two ranks, one channel entering on NIC 0 and leaving on NIC 1:
 * the ring is 0 1 2 3, doubled to two channels; heads (ranks 0 and 2) get
 * NIC 0, tails NIC 1. */
static void run_small_stage(const char *who) {
  const int local[2] = {2, 2}, order[2] = {0, 1};
  struct cluster *cl = cluster_new(2, local);
  CHECK(cl != NULL, "%s: out of memory", who);
  if (cl == NULL) return;
  cluster_set_channel(cl, 0, order, 2, 0, 1);
  cluster_set_nchannels(cl, 1);
  struct stage st;
  int rc = stage_run(&api, cl, &st);
  CHECK(rc == 0, "%s: %s", who, st.failure);
  if (rc == 0) {
    CHECK(stage_check(cl, &st) == 0, "%s: invariants violated (above)", who);
    for (int r = 0; r < 4; r++) {
      const struct ncclComm *comm = st.comms[r];
      CHECK(comm->nChannels == 2 && st.nChannels[r] == 2 && st.nNodes[r] == 2,
            "%s: rank %d: nChannels %d/%d, nNodes %d", who, r, comm->nChannels, st.nChannels[r],
            st.nNodes[r]);
      for (int c = 0; c < 2; c++) {
        const struct ncclRing *ring = &comm->channels[c].ring;
        CHECK(ring->next == (r + 1) % 4 && ring->prev == (r + 3) % 4,
              "%s: rank %d channel %d: prev %d next %d", who, r, c, ring->prev, ring->next);
        for (int i = 0; ring->userRanks && i < 4; i++)
          CHECK(ring->userRanks[i] == (r + i) % 4, "%s: rank %d channel %d: userRanks[%d] = %d",
                who, r, c, i, ring->userRanks[i]);
        int want = r % 2 == 0 ? 0 : 1;
        CHECK(st.netDev[r * MAXCHANNELS + c] == want, "%s: rank %d channel %d: NIC %d, want %d",
              who, r, c, st.netDev[r * MAXCHANNELS + c], want);
      }
    }
  }
  stage_free(&st);
  cluster_free(cl);
}

static int mode_fork(void) {
  resolve(1);
  /* When LD_PRELOAD named the shim by a relative path, the shim finds the
   * Go library beside itself from the absolute path it resolved at load,
   * not from the stale relative name. */
  if (chdir("/") != 0) perror("chdir");
  CHECK(mapped(GO_FILE) == 0, "the Go library is mapped before the first call");
  pid_t child = fork();
  if (child < 0) {
    perror("fork");
    return 2;
  }
  if (child == 0) {
    run_small_stage("child");
    CHECK(mapped(GO_FILE) == 1, "the child computed rings without loading the Go library?");
    _exit(failures ? 1 : 0);
  }
  int status = 0;
  CHECK(waitpid(child, &status, 0) == child, "waitpid");
  CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the child failed (status 0x%x)", status);
  CHECK(mapped(GO_FILE) == 0, "the child's load reached the parent");
  run_small_stage("parent");

  /* A child forked after the load inherits the loaded library, which
   * refuses the call (E1) instead of entering a Go runtime that did not
   * survive the fork. */
  child = fork();
  if (child == 0) {
    /* A call that hung here would leave this child, and the parent's
     * waitpid, blocked: the watchdog check.sh runs the probe under ends
     * both, and the check fails. */
    int next[2] = {1, 0}, rings[2] = {-7, -7};
    ncclResult_t rc = api.build_rings(1, rings, 0, 2, NULL, next);
    _exit(rc == ncclInvalidUsage && rings[0] == -7 ? 0 : 1);
  }
  CHECK(child > 0 && waitpid(child, &status, 0) == child && WIFEXITED(status) &&
            WEXITSTATUS(status) == 0,
        "a child forked after the load did not get ncclInvalidUsage (status 0x%x)", status);
  if (failures) return 1;
  printf("preload-probe: fork: the child (forked before the first call) and then the parent "
         "each built the 2 x 2 rings through the shim; a child forked after the load got "
         "ncclInvalidUsage\n");
  return 0;
}

/* ---- latency ---- */

static double now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int small_build_rings(void) {
  int next[2] = {1, 0}, rings[2] = {-1, -1};
  ncclResult_t rc = api.build_rings(1, rings, 0, 2, NULL, next);
  return rc == ncclSuccess && rings[0] == 0 && rings[1] == 1 ? 0 : -1;
}

static int mode_latency(void) {
  resolve(0);
  Dl_info info;
  const char *from = dladdr((void *)api.build_rings, &info) && info.dli_fname ? info.dli_fname : "?";
  double t0 = now_ns();
  int rc = small_build_rings();
  double first = now_ns() - t0;
  CHECK(rc == 0, "the first ncclBuildRings failed");
  if (rc != 0) return 1;
  enum { steady = 20000 };
  t0 = now_ns();
  for (int i = 0; i < steady; i++) rc |= small_build_rings();
  double mean = (now_ns() - t0) / steady;
  CHECK(rc == 0, "a steady ncclBuildRings failed");
  printf("preload-probe: latency via %s: first call %.3f ms, steady call %.0f ns (mean of %d)\n",
         strrchr(from, '/') ? strrchr(from, '/') + 1 : from, first / 1e6, mean, steady);
  print_usage("after the calls");
  return failures ? 1 : 0;
}

/* ---- first calls from many threads at once ---- */

enum { RACERS = 8 };
static pthread_barrier_t start_line;

static void *racer(void *arg) {
  pthread_barrier_wait(&start_line);
  *(int *)arg = small_build_rings();
  return NULL;
}

static int mode_race(void) {
  resolve(1);
  pthread_t t[RACERS];
  int result[RACERS];
  pthread_barrier_init(&start_line, NULL, RACERS);
  for (int i = 0; i < RACERS; i++) {
    result[i] = -2;
    if (pthread_create(&t[i], NULL, racer, &result[i]) != 0) return 2;
  }
  for (int i = 0; i < RACERS; i++) pthread_join(t[i], NULL);
  for (int i = 0; i < RACERS; i++) CHECK(result[i] == 0, "thread %d's first call failed", i);
  CHECK(mapped(GO_FILE) == 1, "the Go library is not mapped after the calls");
  if (failures) return 1;
  printf("preload-probe: race: %d threads' simultaneous first calls all succeeded\n", RACERS);
  return 0;
}

/* ---- calls from a stand-in libnccom (D26) ---- */

static int mode_standin(const char *lib) {
  void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
  if (h == NULL) {
    fprintf(stderr, "preload-probe: dlopen %s: %s\n", lib, dlerror());
    return 1;
  }
  int (*calls)(void) = (int (*)(void))dlsym(h, "standin_failing_calls");
  if (calls == NULL) {
    fprintf(stderr, "preload-probe: %s has no standin_failing_calls\n", lib);
    return 1;
  }
  int rc = calls();
  fflush(stdout);
  if (rc != 0) fprintf(stderr, "preload-probe: standin_failing_calls returned %d\n", rc);
  return rc == 0 ? 0 : 1;
}

/* ---- a library that cannot be used ---- */

static int mode_missing(const char *want) {
  /* The lines read below are NCCL's (D21): so chosen, not left to whether
   * a libnccom happens to be loaded (D26). */
  setenv("NCCOM_RING_LOG_STYLE", "nccl", 1);
  resolve(1);
  fflush(stderr);
  FILE *log = tmpfile();
  int saved = dup(2);
  if (log == NULL || saved < 0 || dup2(fileno(log), 2) < 0) return 2;
  struct ncclComm *comm = calloc(1, sizeof *comm);
  struct ncclTopoGraph *graph = calloc(1, sizeof *graph);
  struct ncclTopoRanks frag;
  struct ncclTopoRanks *all[1] = {&frag};
  int nodesFirst[1], nCh = -7, nN = -7, dev = -7, rings[2] = {-7, -7}, next[2] = {1, 0};
  struct ncclTopoSystem sys = {{{2}}};
  ncclResult_t rc[4];
  rc[0] = api.preset(comm, graph, &frag);
  rc[1] = api.postset(comm, nodesFirst, all, &nCh, &nN);
  rc[2] = api.build_rings(1, rings, 1, 2, NULL, next);
  rc[3] = api.get_net_dev(&sys, 3, graph, 0, &dev);
  fflush(stderr);
  dup2(saved, 2);
  close(saved);
  for (int i = 0; i < 4; i++) CHECK(rc[i] == ncclSystemError, "call %d returned %d", i, rc[i]);
  CHECK(nCh == -7 && nN == -7 && dev == -7 && rings[0] == -7 && rings[1] == -7,
        "a failing call wrote an out-parameter");
  CHECK(mapped(GO_FILE) == 0, "the Go library is mapped");

  const char *fns[4] = {"ncclTopoPreset", "ncclTopoPostset", "ncclBuildRings",
                        "ncclTopoGetNetDev"};
  const int ranks[4] = {-1, -1, 1, 3};
  int expectLines = getenv("NCCL_DEBUG") && getenv("NCCL_DEBUG")[0] ? 4 : 0;
  const char *file = getenv("NCCL_DEBUG_FILE");
  if (file && file[0]) {
    char extra[2048];
    rewind(log);
    CHECK(fgets(extra, sizeof extra, log) == NULL, "a line on stderr with NCCL_DEBUG_FILE set: %s", extra);
    fclose(log);
    log = fopen(file, "r");
    CHECK(log != NULL, "NCCL_DEBUG_FILE %s was not written", file);
    if (log == NULL) return 1;
  }
  char line[2048];
  int lines = 0;
  rewind(log);
  while (fgets(line, sizeof line, log)) {
    printf("preload-probe: expected WARN (the library cannot be loaded on purpose): %s", line);
    if (lines < 4) {
      char prefix[64], text[128];
      snprintf(prefix, sizeof prefix, ":%d:", (int)getpid());
      snprintf(text, sizeof text, "] NCCL WARN %s: cannot load the ring stage from ", fns[lines]);
      char rank[32];
      snprintf(rank, sizeof rank, " [%d] NCCL WARN", ranks[lines]);
      CHECK(strstr(line, prefix) && strstr(line, text) && strstr(line, rank) &&
                strstr(line, want),
            "line %d is not the WARN for %s containing \"%s\": %s", lines + 1, fns[lines], want,
            line);
    }
    lines++;
  }
  fclose(log);
  CHECK(lines == expectLines, "%d lines on %s, want %d", lines, file && file[0] ? file : "stderr", expectLines);
  free(comm);
  free(graph);
  if (failures) return 1;
  printf("preload-probe: ok (expected), the library missing: every function returned ncclSystemError, %d WARN lines\n",
         lines);
  return 0;
}

/* ---- a forged /proc/self/maps line ---- */

/* /proc/self/maps, whole (malloc'd), or NULL. */
static char *read_maps(void) {
  int fd = open("/proc/self/maps", O_RDONLY);
  if (fd < 0) return NULL;
  size_t cap = 1 << 16, n = 0;
  char *text = malloc(cap);
  for (ssize_t got; text != NULL && (got = read(fd, text + n, cap - n - 1)) > 0;) {
    n += (size_t)got;
    if (cap - n < 4096) text = realloc(text, cap *= 2);
  }
  close(fd);
  if (text != NULL) text[n] = '\0';
  return text;
}

/* The line of the mapping at addr, and where its path starts in it. */
static int maps_line(const char *maps, const void *addr, const char **line, size_t *pathCol) {
  char head[32];
  snprintf(head, sizeof head, "%lx-", (unsigned long)addr);
  for (const char *l = maps; *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : l + strlen(l)) {
    if (strncmp(l, head, strlen(head)) != 0) continue;
    const char *slash = strchr(l, '/');
    if (slash == NULL) return -1;
    *line = l, *pathCol = (size_t)(slash - l);
    return 0;
  }
  return -1;
}

/* Makes directory name in dirfd and returns a descriptor of it (closing
 * dirfd), or -1. Paths past PATH_MAX can only be made one step at a time. */
static int step(int dirfd, const char *name) {
  if (mkdirat(dirfd, name, 0755) != 0 && errno != EEXIST) return -1;
  int fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY);
  close(dirfd);
  return fd;
}

static int mode_maps_forgery(const char *base, const char *evil) {
  /* The shim's old reader: fgets into PATH_MAX + 128 bytes. */
  const size_t split = PATH_MAX + 128 - 1;
  char path[PATH_MAX];
  snprintf(path, sizeof path, "%s/evil", base);
  CHECK(mkdir(path, 0755) == 0, "mkdir %s", path);
  snprintf(path, sizeof path, "%s/evil/libnccomring.so.0", base);
  CHECK(symlink(evil, path) == 0, "symlink %s", path);
  /* Where a mapping's path starts in its line: the kernel pads the fields
   * before it to a fixed width. */
  snprintf(path, sizeof path, "%s/probe", base);
  int fd = open(path, O_RDWR | O_CREAT, 0644);
  CHECK(fd >= 0 && ftruncate(fd, 4096) == 0, "%s", path);
  void *probe = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, fd, 0);
  close(fd);
  char *maps = read_maps();
  const char *line = NULL;
  size_t col = 0;
  CHECK(probe != MAP_FAILED && maps && maps_line(maps, probe, &line, &col) == 0, "the probe's maps line");
  free(maps);
  if (failures) return 1;
  /* The old reader took the first line whose range held its own code: the
   * forged one must come before the shim's own, at a lower address, as
   * mappings made after load do. The path: BASE/ppp.../ppp.../ (col + its
   * length = split), then the
   * forged line's text, made of real directories: "0-ffffffffffffffff ",
   * then BASE's components again, "evil", and the file "x". */
  int dir = open(base, O_RDONLY | O_DIRECTORY);
  size_t len = strlen(base) + 1; /* "BASE/" */
  char pad[256];
  while (dir >= 0 && col + len < split) {
    size_t left = split - col - len; /* to fill, each component with its '/' */
    size_t n = left > 256 ? (left - 256 >= 2 ? 255 : left / 2) : left - 1;
    if (n == 0) break;
    memset(pad, 'p', n);
    pad[n] = '\0';
    dir = step(dir, pad);
    len += n + 1;
  }
  CHECK(dir >= 0 && col + len == split, "padding: %zu + %zu != %zu", col, len, split);
  dir = step(dir, "0-ffffffffffffffff ");
  char parts[PATH_MAX];
  snprintf(parts, sizeof parts, "%s", base + 1);
  for (char *save = NULL, *c = strtok_r(parts, "/", &save); dir >= 0 && c; c = strtok_r(NULL, "/", &save))
    dir = step(dir, c);
  if (dir >= 0) dir = step(dir, "evil");
  int file = dir >= 0 ? openat(dir, "x", O_RDWR | O_CREAT, 0644) : -1;
  CHECK(file >= 0 && ftruncate(file, 4096) == 0, "the long file");
  void *crafted = file >= 0 ? mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, file, 0) : MAP_FAILED;
  if (file >= 0) close(file);
  if (dir >= 0) close(dir);
  CHECK(crafted != MAP_FAILED, "mmap of the long file");
  if (failures) return 1;
  maps = read_maps();
  size_t crafted_col = 0;
  if (maps == NULL || maps_line(maps, crafted, &line, &crafted_col) != 0 || crafted_col != col ||
      strncmp(line + split, "0-ffffffffffffffff /", 20) != 0 || (uintptr_t)crafted > (uintptr_t)dlsym(RTLD_DEFAULT, "ncclTopoPreset")) {
    printf("preload-probe: skipped: the crafted maps line does not fall where it must (path at column %zu, "
           "want %zu)\n", crafted_col, col);
    free(maps);
    return 77;
  }
  free(maps);
  /* As a job would: change directory before the first call. */
  CHECK(chdir("/") == 0, "chdir /");
  resolve(1);
  run_small_stage("maps-forgery");
  if (failures) return 1;
  printf("preload-probe: maps-forgery: a file mapped from a %zu-byte path forging the line "
         "\"0-ffffffffffffffff %s/evil/x\": the shim loaded the Go library beside itself\n",
         len + 20 + strlen(base) + 6, base);
  return 0;
}

int main(int argc, char **argv) {
  const char *mode = argc >= 2 ? argv[1] : "";
  if (strcmp(mode, "idle") == 0 || strcmp(mode, "idle-check") == 0) {
    /* Whatever started at load has had time to start (the Go runtime
     * starts on a thread of its own and keeps reserving memory after main
     * was entered). */
    usleep(300 * 1000);
    struct usage u = read_usage();
    int shim = mapped(SHIM_FILE), go = mapped(GO_FILE);
    print_usage("never called");
    if (mode[4] == '\0') return 0;
    CHECK(shim == 1, "%s is not mapped: run under LD_PRELOAD", SHIM_FILE);
    CHECK(go == 0, "%s is mapped in a process that never called", GO_FILE);
    CHECK(u.threads == 1, "%ld threads, want 1", u.threads);
    return failures ? 1 : 0;
  }
  if (strcmp(mode, "fork") == 0) return mode_fork();
  if (strcmp(mode, "latency") == 0) return mode_latency();
  if (strcmp(mode, "race") == 0) return mode_race();
  if (strcmp(mode, "missing") == 0 && argc == 3) return mode_missing(argv[2]);
  if (strcmp(mode, "standin") == 0 && argc == 3) return mode_standin(argv[2]);
  if (strcmp(mode, "maps-forgery") == 0 && argc == 4) return mode_maps_forgery(argv[2], argv[3]);
  fprintf(stderr, "usage: preload-probe idle|idle-check|fork|latency|race|missing WANT|standin LIB|maps-forgery BASE EVIL\n");
  return 2;
}
