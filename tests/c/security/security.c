/*
 * security - a host that reproduces what another user can do to a job
 * through the files and the environment it shares (issue 21,
 * docs/security.md), for `make test-security` (check.sh runs it and reads
 * what it prints): build/security-host MODE LIB [ARGS]
 *
 * LIB is dlopen'ed by its path: build/libnccomring.so, or the preload shim.
 * check.sh runs every mode under the watchdog (tests/watchdog): a call
 * that waits (on a FIFO) is ended by its blocked limit, one that reads
 * without end (/dev/zero) by its CPU limit, and either fails the test.
 * The job is 1 node of RANKS ranks, 1 graph channel (2 after doubling).
 *
 *   dump-links LIB DIR VICTIM   plants symbolic links to VICTIM under the
 *                  names rank 0's and rank 1's dumps get in DIR and under
 *                  the temporary names earlier versions used (this host
 *                  knows its own pid and host name, as an attacker can
 *                  guess them), runs the stage with NCCOM_RING_DUMP=DIR:
 *                  VICTIM must keep its bytes, each dump be a regular file
 *                  in its link's place, the old temporary links be left.
 *   dump-swap LIB DIR KIND      after rank 0's Postset wrote its dump,
 *                  replaces the file with a FIFO (KIND fifo) or a link to
 *                  /dev/zero (zero), then asks GetNetDev: each call must
 *                  return at once, the process must not grow, and the dump
 *                  be a regular file again with the answers.
 *   stage LIB      the stage with whatever the environment says, every
 *                  call expected to succeed (check.sh counts the WARNs and
 *                  looks at what was written).
 *   warn LIB       one failing call (Preset with NULL arguments), expected
 *                  to return ncclInvalidArgument; check.sh reads the log.
 *   secure LIB     prints "AT_SECURE=N" (getauxval), then runs the stage;
 *                  for the set-user-ID host check.sh builds.
 *   wait-fifo LIB FIFO  check.sh's negative control: runs the stage (the
 *                  library's runtime started), then opens FIFO, which has
 *                  no writer, and waits there as a call that opened it
 *                  would: the watchdog must end it by its blocked limit.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../common/cluster.h"
#include "../common/host.h"

#define RANKS 2


static ring_preset_fn preset;
static ring_postset_fn postset;
static ring_get_net_dev_fn get_net_dev;
static int failures;

#define CHECK(cond, ...) CHECK_AS("security-host", 0, cond, __VA_ARGS__)

static void load(const char *path) {
  void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (h == NULL) {
    fprintf(stderr, "security-host: %s\n", dlerror());
    exit(2);
  }
  preset = (ring_preset_fn)dlsym(h, "ncclTopoPreset");
  postset = (ring_postset_fn)dlsym(h, "ncclTopoPostset");
  get_net_dev = (ring_get_net_dev_fn)dlsym(h, "ncclTopoGetNetDev");
  if (!preset || !postset || !get_net_dev) {
    fprintf(stderr, "security-host: %s lacks the ring stage\n", path);
    exit(2);
  }
}

static struct ncclTopoGraph graph;
static struct ncclTopoSystem sys;
static struct ncclComm comms[RANKS];
static struct ncclTopoRanks frags[RANKS], *all[RANKS];

static void presets(void) {
  graph.pattern = NCCL_TOPO_PATTERN_RING, graph.nChannels = 1;
  graph.inter[0] = 7, graph.inter[1] = 8;
  sys.nodes[0].count = RANKS;
  for (int r = 0; r < RANKS; r++) {
    graph.intra[r] = r;
    comms[r].rank = r, comms[r].nRanks = RANKS, comms[r].localRanks = RANKS;
  }
  for (int r = 0; r < RANKS; r++) {
    ncclResult_t res = preset(&comms[r], &graph, &frags[r]);
    CHECK(res == ncclSuccess, "Preset of rank %d returned %d", r, res);
    all[r] = &frags[r];
  }
}

static void postset_rank(int r) {
  int heads[RANKS], nChannels = 0, nNodes = 0;
  ncclResult_t res = postset(&comms[r], heads, all, &nChannels, &nNodes);
  CHECK(res == ncclSuccess && nChannels == 2 && nNodes == 1, "Postset of rank %d: %d, %d channels, %d nodes", r,
        res, nChannels, nNodes);
}

static void net_devs(int r) {
  for (int c = 0; c < 2; c++) {
    int dev = -1;
    ncclResult_t res = get_net_dev(&sys, r, &graph, c, &dev);
    CHECK(res == ncclSuccess && dev == (r == 0 ? 7 : 8), "GetNetDev(rank %d, channel %d): %d, dev %d", r, c, res,
          dev);
  }
}

static void stage(void) {
  presets();
  for (int r = 0; r < RANKS; r++) postset_rank(r);
  for (int r = 0; r < RANKS; r++) net_devs(r);
}

/* The name ringdump.FileName gives rank's dump in this process. */
static void dump_name(char *out, size_t size, int rank) {
  char host[256];
  if (gethostname(host, sizeof host) != 0) snprintf(host, sizeof host, "unknown");
  host[sizeof host - 1] = '\0';
  for (char *p = host; *p; p++)
    if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || *p == '-' || *p == '_'))
      *p = '_';
  snprintf(out, size, "rank-%06d.%s.%d.json", rank, host, (int)getpid());
}

static long file_text(const char *path, char *out, size_t size) {
  int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
  if (fd < 0) return -1;
  ssize_t n = read(fd, out, size - 1);
  close(fd);
  out[n > 0 ? n : 0] = '\0';
  return (long)n;
}

static int mode_dump_links(const char *dir, const char *victim) {
  char before[256], after[256], name[512], path[1024];
  CHECK(file_text(victim, before, sizeof before) > 0, "%s is empty", victim);
  for (int r = 0; r < RANKS; r++) {
    dump_name(name, sizeof name, r);
    snprintf(path, sizeof path, "%s/%s", dir, name);
    CHECK(symlink(victim, path) == 0, "symlink %s: %s", path, strerror(errno));
    snprintf(path, sizeof path, "%s/.%s.tmp", dir, name);
    CHECK(symlink(victim, path) == 0, "symlink %s: %s", path, strerror(errno));
  }
  setenv("NCCOM_RING_DUMP", dir, 1);
  stage();
  CHECK(file_text(victim, after, sizeof after) > 0 && strcmp(before, after) == 0,
        "%s was written through a planted link: '%s'", victim, after);
  for (int r = 0; r < RANKS; r++) {
    struct stat st;
    char text[8192];
    dump_name(name, sizeof name, r);
    snprintf(path, sizeof path, "%s/%s", dir, name);
    CHECK(lstat(path, &st) == 0 && S_ISREG(st.st_mode), "%s is not a regular file", path);
    CHECK(file_text(path, text, sizeof text) > 0 && strstr(text, "\"netDevs\":[{\"channel\":0") != NULL,
          "%s does not hold rank %d's dump with its NICs: %s", path, r, text);
    snprintf(path, sizeof path, "%s/.%s.tmp", dir, name);
    CHECK(lstat(path, &st) == 0 && S_ISLNK(st.st_mode), "the link at %s was touched", path);
  }
  printf("security-host: links planted under rank 0's and 1's dump and old temporary names: %s untouched\n",
         victim);
  return failures != 0;
}

static long rss_kb(void) {
  char text[4096];
  if (file_text("/proc/self/status", text, sizeof text) <= 0) return -1;
  const char *p = strstr(text, "VmRSS:");
  return p ? strtol(p + 6, NULL, 10) : -1;
}

static int mode_dump_swap(const char *dir, const char *kind) {
  char name[512], path[1024];
  setenv("NCCOM_RING_DUMP", dir, 1);
  presets();
  postset_rank(0);
  dump_name(name, sizeof name, 0);
  snprintf(path, sizeof path, "%s/%s", dir, name);
  CHECK(unlink(path) == 0, "unlink %s: %s", path, strerror(errno));
  if (strcmp(kind, "fifo") == 0)
    CHECK(mkfifo(path, 0644) == 0, "mkfifo %s: %s", path, strerror(errno));
  else
    CHECK(symlink("/dev/zero", path) == 0, "symlink %s: %s", path, strerror(errno));
  long before = rss_kb();
  net_devs(0); /* waiting on the FIFO, the host would be ended by the watchdog's blocked limit */
  long after = rss_kb();
  CHECK(after - before < 100 * 1024, "VmRSS grew from %ld kB to %ld kB", before, after);
  struct stat st;
  char text[8192];
  CHECK(lstat(path, &st) == 0 && S_ISREG(st.st_mode), "%s is not a regular file again", path);
  CHECK(file_text(path, text, sizeof text) > 0 && strstr(text, "\"netDevs\":[{\"channel\":0,\"dev\":7},{\"channel\":1") != NULL,
        "%s lacks the answers: %s", path, text);
  printf("security-host: rank 0's dump swapped for %s after Postset: GetNetDev returned at once, VmRSS %ld -> %ld kB, "
         "the dump rewritten\n",
         strcmp(kind, "fifo") == 0 ? "a FIFO" : "a link to /dev/zero", before, after);
  return failures != 0;
}

/* Reaches its end only when something wrote to FIFO: then it is no
 * control, and fails. */
static int mode_wait_fifo(const char *fifo) {
  stage();
  printf("security-host: the stage ran; now waiting to open %s, which has no writer\n", fifo);
  fflush(stdout);
  int fd = open(fifo, O_RDONLY);
  fprintf(stderr, "security-host: wait-fifo: open %s returned %d: the control did not wait\n", fifo, fd);
  return 1;
}

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: security-host dump-links|dump-swap|stage|warn|secure|wait-fifo LIB [ARGS]\n");
    return 2;
  }
  const char *mode = argv[1];
  if (strcmp(mode, "secure") == 0) {
    printf("AT_SECURE=%lu\n", getauxval(AT_SECURE));
    fflush(stdout);
  }
  load(argv[2]);
  if (strcmp(mode, "dump-links") == 0 && argc == 5) return mode_dump_links(argv[3], argv[4]);
  if (strcmp(mode, "dump-swap") == 0 && argc == 5) return mode_dump_swap(argv[3], argv[4]);
  if (strcmp(mode, "wait-fifo") == 0 && argc == 4) return mode_wait_fifo(argv[3]);
  if ((strcmp(mode, "stage") == 0 || strcmp(mode, "secure") == 0) && argc == 3) {
    stage();
    return failures != 0;
  }
  if (strcmp(mode, "warn") == 0 && argc == 3) {
    ncclResult_t res = preset(NULL, NULL, NULL);
    CHECK(res == ncclInvalidArgument, "Preset(NULL) returned %d", res);
    return failures != 0;
  }
  fprintf(stderr, "security-host: unknown mode or arguments\n");
  return 2;
}
