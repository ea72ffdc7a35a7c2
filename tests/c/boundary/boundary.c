/*
 * boundary - the ring stage as real hosts drive it (issue 9), where a
 * convenient harness would not: build/boundary MODE [LIB]
 *
 *   env-after-load LIB   dlopen LIB (RTLD_LOCAL), then setenv
 *                        NCCOM_RING_PLATFORM=trn3-switchv1,
 *                        NCCOM_RING_POD_ORDER=node, NCCL_DEBUG=WARN and
 *                        NCCL_DEBUG_FILE, as a Python launcher setting
 *                        os.environ does: kangaRing is lifted and
 *                        materialized, pods are stitched in node order, and
 *                        a bad call's WARN lands in the file.
 *   rtld-local HOOKLIB   run with LD_PRELOAD=libnccomring.so: dlopen the
 *                        stand-in HOOKLIB (build/libnccom-hooks*.so) with
 *                        RTLD_LOCAL, so no global lookup sees its hooks, and
 *                        run the stage through its own calls: its
 *                        SwitchV1 hooks lift and materialize kangaRing (JBOG
 *                        id 2) and ncclTopoGetNetDev with a NULL graph is
 *                        answered by its ncclTopoGetLocalNet (2000 + rank).
 *   gate HOOKLIB         as rtld-local but loaded RTLD_GLOBAL (any lookup
 *                        finds the hooks), on a platform whose family hook
 *                        says false: the virtual-core and JBOG hooks abort()
 *                        if called (spec §4 calls them only on SwitchV1).
 *   address-limit LIB    under an address-space limit (RLIMIT_AS, set in the
 *                        process after a first call: 1 GB above what it has
 *                        mapped then): Postset of a
 *                        communicator of 2^24 ranks and 16 channels (every
 *                        fragment pointer at one fragment) needs more working
 *                        memory than the limit leaves: it must return
 *                        ncclSystemError with one WARN, and the process
 *                        lives (Go's own out-of-memory would kill it).
 *   stale-pointer LIB    Postset with channels[0].ring.userRanks a stale
 *                        pointer (a page that was unmapped): ncclInternalError whose
 *                        WARN names the address, and nothing written: not
 *                        the communicator (prev/next, no fresh buffer in
 *                        channels[1]), not nodesFirstRank, not the
 *                        out-parameters. And ncclBuildRings with rings
 *                        aliasing next: ncclInvalidArgument, rings untouched.
 *   shared-log HOOKLIB   run with LD_PRELOAD=libnccomring.so and
 *                        NCCL_DEBUG_FILE unset: the stand-in opens its log
 *                        (its ncclDebugFile, "w") and writes a line, a call
 *                        through it fails with a WARN, it writes another
 *                        line: the file holds the three lines, whole, in
 *                        that order.
 *   layout-profile LIB PROFILE
 *                        PROFILE is `nccom-abi profile` of a libnccom whose
 *                        ncclComm keeps rank at +17612 and nRanks at +17616
 *                        (4 bytes below D3; tests/c/abi's moved fixture).
 *                        Communicators laid out that way, NCCOM_RING_LAYOUT
 *                        set after load: the whole stage runs correctly, and
 *                        the int at D3's nRanks offset (+17620, another field
 *                        in this layout) is never written. Without the
 *                        profile the same communicators are refused (the
 *                        rank read at D3's offset is nRanks, out of range).
 *   layout-overrun LIB PROFILE WANT [STANDIN]
 *                        (issue 34, F4) PROFILE places fields beyond the
 *                        host's ncclComm (node, nNodes, nChannels at +19216,
 *                        +19220, +19224) and declares a sizeof of 1 MiB.
 *                        With STANDIN (a libnccom.so.2: stripped, or one
 *                        whose DWARF gives another size) loaded RTLD_LOCAL
 *                        first, or none: one rank's communicator of exactly
 *                        sizeof(struct ncclComm) bytes, followed by 64 guard
 *                        bytes and then a page mapped PROT_NONE. Preset and
 *                        Postset each return ncclInvalidUsage with one WARN
 *                        `<fn>: NCCOM_RING_LAYOUT=PROFILE: WANT...`, and no
 *                        byte of the communicator or after it changes.
 *                        Before issue 34 both succeeded, and Postset wrote
 *                        the 12 bytes after the struct.
 *
 * The cluster: 2 nodes x 2 ranks, one channel, one kangaRing path whose
 * ints are 100*rank + i. Exit 0 when every check held, 1 otherwise.
 */

#include <dlfcn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include "../common/cluster.h"
#include "../common/host.h"

#define NODES 2
#define LOCAL 2
#define NRANKS (NODES * LOCAL)


static ring_preset_fn preset;
static ring_postset_fn postset;
static ring_get_net_dev_fn get_net_dev;
static int failures;

#define CHECK(cond, ...) CHECK_AS("boundary", 8, cond, __VA_ARGS__) /* the first 8 say enough */

static void *need(void *handle, const char *name) { return need_symbol("boundary", handle, name); }

/* dlopen(path, RTLD_NOW | scope), or exit 2 saying why. */
static void *load(const char *path, int scope) {
  void *h = dlopen(path, RTLD_NOW | scope);
  if (h == NULL) {
    fprintf(stderr, "boundary: %s\n", dlerror());
    exit(2);
  }
  return h;
}

/* lib loaded with RTLD_LOCAL, its Preset and Postset found, and its log
 * (NCCL_DEBUG=WARN) sent to a new file made from the template logPath.
 * Returns the handle, or NULL when the log file cannot be made. */
static void *load_stage(const char *lib, char *logPath) {
  void *h = load(lib, RTLD_LOCAL);
  preset = (ring_preset_fn)need(h, "ncclTopoPreset");
  postset = (ring_postset_fn)need(h, "ncclTopoPostset");
  return log_to_temp_file(logPath, "WARN") == 0 ? h : NULL;
}

/* Every rank's Preset, then every rank's Postset, with enablePod set when
 * pods is true; the kangaRing checks of D7 and D13 when kanga is true. */
static void run_stage(bool kanga, bool pods) {
  static struct ncclTopoGraph graphs[NODES];
  struct ncclComm *comms = calloc(NRANKS, sizeof *comms);
  struct ncclTopoRanks frags[NRANKS], *all[NRANKS];
  memset(frags, 0xA5, sizeof frags);
  for (int m = 0; m < NODES; m++) {
    memset(&graphs[m], 0, sizeof graphs[m]);
    graphs[m].pattern = NCCL_TOPO_PATTERN_RING;
    graphs[m].nChannels = 1;
    for (int i = 0; i < LOCAL; i++) graphs[m].intra[i] = m * LOCAL + i;
  }
  for (int r = 0; r < NRANKS; r++) {
    struct ncclComm *c = &comms[r];
    c->rank = r, c->nRanks = NRANKS, c->localRanks = LOCAL, c->enablePod = pods;
    c->nKangaRingChannels = kanga ? 1 : 0;
    for (int i = 0; i < NCCOM_RING_KANGA_WIDTH; i++) c->kangaRing[0][i] = 100 * r + i;
    ncclResult_t res = preset(c, &graphs[r / LOCAL], &frags[r]);
    CHECK(res == ncclSuccess, "Preset of rank %d returned %d", r, res);
    all[r] = &frags[r];
    for (int i = 0; i < 4; i++) {
      int want = kanga ? 100 * r + i : (int)0xA5A5A5A5;
      CHECK(frags[r].JbogKangaringPath[0][i] == want, "rank %d: JbogKangaringPath[0][%d] is %d, want %d (D7)", r, i,
            frags[r].JbogKangaringPath[0][i], want);
    }
  }
  for (int r = 0; r < NRANKS; r++) {
    int heads[NRANKS], nChannels = 0, nNodes = 0;
    ncclResult_t res = postset(&comms[r], heads, all, &nChannels, &nNodes);
    CHECK(res == ncclSuccess, "Postset of rank %d returned %d", r, res);
    CHECK(nChannels == 2 && nNodes == NODES, "rank %d: %d channels, %d nodes", r, nChannels, nNodes);
    /* D13: kangaRing[0][4v + i] = rank v's JbogKangaringPath[0][i]. */
    for (int v = 0; kanga && v < NRANKS; v++)
      for (int i = 0; i < 4; i++)
        CHECK(comms[r].kangaRing[0][4 * v + i] == 100 * v + i, "rank %d: kangaRing[0][%d] is %d, want %d (D13)", r,
              4 * v + i, comms[r].kangaRing[0][4 * v + i], 100 * v + i);
    for (int c = 0; c < MAXCHANNELS; c++) free(comms[r].channels[c].ring.userRanks);
  }
  free(comms);
}

static int env_after_load(const char *lib) {
  const char *vars[] = {"NCCOM_RING_PLATFORM", "NCCOM_RING_POD_ORDER", "NCCL_DEBUG", "NCCL_DEBUG_FILE"};
  for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++)
    if (getenv(vars[i])) {
      fprintf(stderr, "boundary: unset %s first: this mode sets it after load\n", vars[i]);
      return 2;
    }
  char logPath[] = "/tmp/boundary-log-XXXXXX";
  if (load_stage(lib, logPath) == NULL) return 2;
  /* After load, before the first call: what a launcher does. */
  setenv("NCCOM_RING_PLATFORM", "trn3-switchv1", 1);
  setenv("NCCOM_RING_POD_ORDER", "node", 1);
  run_stage(true, true);
  CHECK(preset(NULL, NULL, NULL) == ncclInvalidArgument, "Preset(NULL) is ncclInvalidArgument");
  FILE *f = fopen(logPath, "r");
  char line[512] = "";
  if (f) {
    if (!fgets(line, sizeof line, f)) line[0] = '\0';
    fclose(f);
  }
  CHECK(strstr(line, "NCCL WARN ncclTopoPreset: comm is NULL") != NULL, "the WARN went to NCCL_DEBUG_FILE: '%s'", line);
  unlink(logPath);
  return failures ? 1 : 0;
}

static int through_hooklib(const char *hooklib, bool switchV1) {
  void *own = dlsym(RTLD_DEFAULT, "ncclTopoPreset");
  Dl_info info;
  if (own == NULL || !dladdr(own, &info) || strstr(info.dli_fname, "libnccomring") == NULL) {
    fprintf(stderr, "boundary: run this mode with LD_PRELOAD=build/libnccomring.so\n");
    return 2;
  }
  /* rtld-local: hidden from every global lookup; gate: visible to all. */
  void *h = load(hooklib, switchV1 ? RTLD_LOCAL : RTLD_GLOBAL);
  bool global = dlsym(RTLD_DEFAULT, "neuronIsTrn3SwitchV1Family") || dlsym(RTLD_DEFAULT, "_Z26neuronIsTrn3SwitchV1Familyv");
  CHECK(global == !switchV1, "the stand-in's hooks are %s globally: the test would prove nothing", global ? "visible" : "invisible");
  void (*configure)(bool, int) = (void (*)(bool, int))need(h, "hooklib_configure");
  preset = (ring_preset_fn)need(h, "hooklib_preset");
  postset = (ring_postset_fn)need(h, "hooklib_postset");
  get_net_dev = (ring_get_net_dev_fn)need(h, "hooklib_get_net_dev");
  configure(switchV1, 2);
  run_stage(switchV1, false);
  int dev = -1;
  struct ncclTopoSystem sys = {{{LOCAL}}};
  ncclResult_t res = get_net_dev(&sys, 3, NULL, 0, &dev);
  CHECK(res == ncclSuccess && dev == 2003, "GetNetDev(graph NULL) gave %d, dev %d; want the stand-in's 2003 (D19)", res,
        dev);
  return failures ? 1 : 0;
}

static long vm_size_kb(void) {
  FILE *f = fopen("/proc/self/status", "r");
  if (f == NULL) return -1;
  char line[256];
  long kb = -1;
  while (fgets(line, sizeof line, f)) sscanf(line, "VmSize: %ld kB", &kb);
  fclose(f);
  return kb;
}

static int address_limit(const char *lib) {
  void *h = load(lib, RTLD_LOCAL);
  postset = (ring_postset_fn)need(h, "ncclTopoPostset");
  get_net_dev = (ring_get_net_dev_fn)need(h, "ncclTopoGetNetDev");
  const int nRanks = 1 << 24, nChannels = 16;
  static struct ncclTopoRanks one; /* every value 0: in range, a ring of one */
  struct ncclTopoRanks **all = malloc((size_t)nRanks * sizeof *all);
  int *heads = malloc((size_t)nRanks * sizeof *heads);
  struct ncclComm *comm = calloc(1, sizeof *comm);
  if (all == NULL || heads == NULL || comm == NULL) {
    fprintf(stderr, "boundary: the host itself could not allocate 2^24 pointers\n");
    return 2;
  }
  /* The limit is set here, relative to what this process has mapped once
   * the library's runtime has started (a first call), rather than as a
   * fixed `ulimit -v`: the Go runtime reserves address space in proportion
   * to its threads, and those depend on the machine's cores before the
   * library's own init caps them (issue 13), so a fixed figure that fits
   * one machine starves another's runtime start. ADDRESS_HEADROOM_KB is far
   * more than the runtime needs for a few more threads and far less than
   * the 3.2 GB of working memory 2^24 ranks x 16 channels need. */
  enum { ADDRESS_HEADROOM_KB = 1024 * 1024 };
  struct ncclTopoGraph *g = calloc(1, sizeof *g);
  struct ncclTopoSystem *sys = calloc(1, sizeof *sys);
  int dev = -1;
  if (g == NULL || sys == NULL) return 2;
  g->nChannels = 1, sys->nodes[0].count = 1;
  (void)get_net_dev(sys, 0, g, 0, &dev); /* starts the runtime; its answer does not matter */
  long vm = vm_size_kb();
  if (vm < 0) return 2;
  /* Lowered only: a limit the caller already set (`ulimit -v`) stays the
   * hard one, and the soft one never goes above it. */
  struct rlimit limit;
  if (getrlimit(RLIMIT_AS, &limit) != 0) return 2;
  rlim_t want = (rlim_t)(vm + ADDRESS_HEADROOM_KB) * 1024;
  if (limit.rlim_max == RLIM_INFINITY || want < limit.rlim_max) limit.rlim_cur = want;
  else limit.rlim_cur = limit.rlim_max;
  if (setrlimit(RLIMIT_AS, &limit) != 0) {
    perror("boundary: setrlimit(RLIMIT_AS)");
    return 2;
  }
  printf("boundary: address space limited to %ld MB (%ld MB mapped after the first call + at most %d MB)\n",
         (long)(limit.rlim_cur / (1024 * 1024)), vm / 1024, ADDRESS_HEADROOM_KB / 1024);
  for (int r = 0; r < nRanks; r++) all[r] = &one;
  comm->rank = 0, comm->nRanks = nRanks, comm->localRanks = 1, comm->nChannels = nChannels;
  int outChannels = -7, outNodes = -7;
  ncclResult_t res = postset(comm, heads, all, &outChannels, &outNodes);
  CHECK(res == ncclSystemError, "Postset of 2^24 ranks under the limit returned %d, want ncclSystemError", res);
  CHECK(outChannels == -7 && outNodes == -7 && comm->nChannels == nChannels, "Postset wrote on failure");
  printf("boundary: ok (expected): Postset of 2^24 ranks x %d channels under the address-space limit returns %d "
         "(ncclSystemError), with the WARN above, and the process lives\n",
         nChannels, res);
  return failures ? 1 : 0;
}

static int stale_pointer(const char *lib) {
  char logPath[] = "/tmp/boundary-log-XXXXXX";
  void *h = load_stage(lib, logPath);
  if (h == NULL) return 2;
  ring_build_rings_fn build_rings = (ring_build_rings_fn)need(h, "ncclBuildRings");

  static struct ncclTopoGraph graph;
  graph.pattern = NCCL_TOPO_PATTERN_RING, graph.nChannels = 1;
  for (int i = 0; i < NRANKS; i++) graph.intra[i] = i;
  struct ncclComm *comms = calloc(NRANKS, sizeof *comms), *before = malloc(sizeof *before);
  struct ncclTopoRanks frags[NRANKS], *all[NRANKS];
  for (int r = 0; r < NRANKS; r++) {
    comms[r].rank = r, comms[r].nRanks = NRANKS, comms[r].localRanks = NRANKS;
    CHECK(preset(&comms[r], &graph, &frags[r]) == ncclSuccess, "Preset of rank %d", r);
    all[r] = &frags[r];
  }
  struct ncclComm *c = &comms[1];
  /* Stale: a buffer the host freed back to the system. */
  long page = sysconf(_SC_PAGESIZE);
  int *stale = mmap(NULL, (size_t)page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (stale == MAP_FAILED) return 2;
  munmap(stale, (size_t)page);
  c->channels[0].ring.userRanks = stale;
  memcpy(before, c, sizeof *before);
  int heads[NRANKS] = {-5, -5, -5, -5}, nChannels = -7, nNodes = -7;
  ncclResult_t res = postset(c, heads, all, &nChannels, &nNodes);
  CHECK(res == ncclInternalError, "Postset with a stale userRanks returned %d", res);
  CHECK(memcmp(before, c, sizeof *before) == 0, "Postset wrote the communicator before it faulted");
  CHECK(heads[0] == -5 && heads[NRANKS - 1] == -5, "Postset wrote nodesFirstRank before it faulted");
  CHECK(nChannels == -7 && nNodes == -7, "Postset wrote an out-parameter before it faulted");

  int buf[4] = {1, 2, 3, 0};
  res = build_rings(1, buf, 0, 4, NULL, buf);
  CHECK(res == ncclInvalidArgument, "ncclBuildRings with rings aliasing next returned %d", res);
  CHECK(buf[0] == 1 && buf[1] == 2 && buf[2] == 3 && buf[3] == 0, "ncclBuildRings wrote rings over next");

  FILE *f = fopen(logPath, "r");
  char log[2048] = "";
  if (f) {
    size_t got = fread(log, 1, sizeof log - 1, f);
    log[got] = '\0';
    fclose(f);
  }
  unlink(logPath);
  char want[96];
  snprintf(want, sizeof want, "NCCL WARN ncclTopoPostset: invalid memory access at address %p ", (void *)stale);
  CHECK(strstr(log, want) != NULL, "the WARN names the faulting address %p: %s", (void *)stale, log);
  CHECK(strstr(log, "NCCL WARN ncclBuildRings: rings and next overlap") != NULL, "the overlap WARN: %s", log);
  free(before);
  free(comms);
  if (!failures) printf("boundary: a stale userRanks pointer and aliased rings: refused, nothing written\n");
  return failures ? 1 : 0;
}

static int shared_log(const char *hooklib) {
  void *h = load(hooklib, RTLD_LOCAL);
  void (*open_log)(const char *) = (void (*)(const char *))need(h, "hooklib_open_log");
  void (*log_line)(const char *) = (void (*)(const char *))need(h, "hooklib_log");
  preset = (ring_preset_fn)need(h, "hooklib_preset");
  char path[] = "/tmp/boundary-shared-XXXXXX";
  if (log_to_temp_file(path, "WARN") != 0) return 2;
  open_log(path);
  log_line("libnccom: line one, before the ring stage");
  CHECK(preset(NULL, NULL, NULL) == ncclInvalidArgument, "Preset(NULL) through the stand-in");
  log_line("libnccom: line two, after the ring stage");
  FILE *f = fopen(path, "r");
  char lines[3][512] = {"", "", ""}, extra[512];
  for (int i = 0; f && i < 3; i++)
    if (!fgets(lines[i], sizeof lines[i], f)) lines[i][0] = '\0';
  int more = f && fgets(extra, sizeof extra, f) != NULL;
  if (f) fclose(f);
  unlink(path);
  CHECK(strcmp(lines[0], "libnccom: line one, before the ring stage\n") == 0, "line 1: '%s'", lines[0]);
  CHECK(strstr(lines[1], "NCCL WARN ncclTopoPreset: comm is NULL\n") != NULL, "line 2, the WARN whole: '%s'", lines[1]);
  CHECK(strcmp(lines[2], "libnccom: line two, after the ring stage\n") == 0, "line 3: '%s'", lines[2]);
  CHECK(!more, "more than three lines");
  if (!failures) printf("boundary: libnccom's log lines and the WARN, whole and in order, in one file\n");
  return failures ? 1 : 0;
}

static int layout_profile(const char *lib, const char *profile) {
  enum { MOVED_RANK = 17612, MOVED_NRANKS = 17616, D3_NRANKS = 17620, OTHER = 0x7777 };
  void *h = load(lib, RTLD_LOCAL);
  preset = (ring_preset_fn)need(h, "ncclTopoPreset");
  postset = (ring_postset_fn)need(h, "ncclTopoPostset");
  if (profile != NULL) setenv("NCCOM_RING_LAYOUT", profile, 1);
  static struct ncclTopoGraph graphs[NODES];
  struct ncclComm *comms = calloc(NRANKS, sizeof *comms);
  struct ncclTopoRanks frags[NRANKS], *all[NRANKS];
  for (int m = 0; m < NODES; m++) {
    graphs[m].pattern = NCCL_TOPO_PATTERN_RING, graphs[m].nChannels = 1;
    for (int i = 0; i < LOCAL; i++) graphs[m].intra[i] = m * LOCAL + i;
  }
  ncclResult_t res = ncclSuccess;
  for (int r = 0; r < NRANKS; r++) {
    char *raw = (char *)&comms[r];
    memcpy(raw + MOVED_RANK, &r, sizeof r);
    int n = NRANKS, other = OTHER;
    memcpy(raw + MOVED_NRANKS, &n, sizeof n);
    memcpy(raw + D3_NRANKS, &other, sizeof other);
    comms[r].localRanks = LOCAL;
    res = preset(&comms[r], &graphs[r / LOCAL], &frags[r]);
    if (res != ncclSuccess) break;
    all[r] = &frags[r];
  }
  if (profile == NULL) {
    CHECK(res == ncclInvalidArgument, "without the profile Preset returned %d: it read rank at D3's +17616", res);
    free(comms);
    if (!failures) printf("boundary: without NCCOM_RING_LAYOUT the moved layout is read wrongly and refused\n");
    return failures ? 1 : 0;
  }
  CHECK(res == ncclSuccess, "Preset with the profile returned %d", res);
  for (int r = 0; res == ncclSuccess && r < NRANKS; r++) {
    int heads[NRANKS], nChannels = 0, nNodes = 0;
    res = postset(&comms[r], heads, all, &nChannels, &nNodes);
    CHECK(res == ncclSuccess && nChannels == 2 && nNodes == NODES, "Postset of rank %d: %d, %d channels, %d nodes", r,
          res, nChannels, nNodes);
    const int *u = comms[r].channels[0].ring.userRanks;
    CHECK(u && u[0] == r && u[1] == (r + 1) % NRANKS, "rank %d's ring starts %d %d", r, u ? u[0] : -1, u ? u[1] : -1);
    CHECK(comms[r].nChannels == 2 && comms[r].nNodes == NODES && comms[r].node == r / LOCAL,
          "rank %d: nChannels %d nNodes %d node %d at the profile's offsets", r, comms[r].nChannels, comms[r].nNodes,
          comms[r].node);
    int other;
    memcpy(&other, (char *)&comms[r] + D3_NRANKS, sizeof other);
    CHECK(other == OTHER, "rank %d: the int at +17620 (not nRanks in this layout) was written: %d", r, other);
    for (int c = 0; c < MAXCHANNELS; c++) free(comms[r].channels[c].ring.userRanks);
  }
  free(comms);
  if (!failures) printf("boundary: with NCCOM_RING_LAYOUT the moved layout runs correctly\n");
  return failures ? 1 : 0;
}

/* A profile that fails validation: every export refuses, naming it. */
static int layout_bad(const char *lib) {
  void *h = load(lib, RTLD_LOCAL);
  preset = (ring_preset_fn)need(h, "ncclTopoPreset");
  ring_get_net_dev_fn net = (ring_get_net_dev_fn)need(h, "ncclTopoGetNetDev");
  char path[] = "/tmp/boundary-layout-XXXXXX", logPath[] = "/tmp/boundary-log-XXXXXX";
  int fd = mkstemp(path);
  if (fd < 0 || log_to_temp_file(logPath, "WARN") != 0) return 2;
  const char *bad = "{\"ncclComm\": {\"topo\": 17552, \"rank\": 17648, \"nRanks\": 17620, \"node\": 17640, "
                    "\"nNodes\": 17644, \"nChannels\": 17704}, \"sizeof\": {\"ncclComm\": 19216}}";
  if (write(fd, bad, strlen(bad)) < 0) return 2;
  close(fd);
  setenv("NCCOM_RING_LAYOUT", path, 1);
  struct ncclComm *c = calloc(1, sizeof *c);
  static struct ncclTopoGraph g;
  struct ncclTopoRanks frag;
  int dev = -9;
  CHECK(preset(c, &g, &frag) == ncclInvalidUsage, "Preset under a bad profile");
  CHECK(net(NULL, 0, &g, 0, &dev) == ncclInvalidUsage && dev == -9, "GetNetDev under a bad profile");
  FILE *f = fopen(logPath, "r");
  char line[1024] = "";
  if (f) {
    if (!fgets(line, sizeof line, f)) line[0] = '\0';
    fclose(f);
  }
  char want[512];
  snprintf(want, sizeof want,
           "NCCL WARN ncclTopoPreset: NCCOM_RING_LAYOUT=%s: ncclComm.rank at +17648 overlaps the documented "
           "ncclComm.localRanks (+17648, 4 bytes), which no profile can move; write one with `nccom-abi profile LIB`, "
           "or unset it for D3's offsets\n",
           path);
  CHECK(strstr(line, want) != NULL, "the WARN: '%s'", line);
  unlink(path);
  unlink(logPath);
  free(c);
  if (!failures) printf("boundary: a bad NCCOM_RING_LAYOUT makes every export refuse, naming the field\n");
  return failures ? 1 : 0;
}

/* Issue 34 (F4): a profile that reaches past the host's struct. */
static int layout_overrun(const char *lib, const char *profile, const char *want, const char *standin) {
  enum { GUARD = 64, FILL = 0x5A };
  if (standin != NULL) load(standin, RTLD_LOCAL);
  char logPath[] = "/tmp/boundary-log-XXXXXX";
  if (load_stage(lib, logPath) == NULL) return 2;
  setenv("NCCOM_RING_LAYOUT", profile, 1);

  /* The struct ends GUARD bytes before a page no one may touch. */
  size_t page = (size_t)sysconf(_SC_PAGESIZE), body = sizeof(struct ncclComm) + GUARD;
  size_t span = (body + page - 1) / page * page;
  char *base = mmap(NULL, span + page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (base == MAP_FAILED || mprotect(base + span, page, PROT_NONE) != 0) return 2;
  struct ncclComm *comm = (struct ncclComm *)(base + span - body);
  unsigned char *after = (unsigned char *)(comm + 1);
  memset(after, FILL, GUARD);
  comm->rank = 0, comm->nRanks = 1, comm->localRanks = 1;
  static struct ncclTopoGraph graph;
  graph.pattern = NCCL_TOPO_PATTERN_RING, graph.nChannels = 1, graph.intra[0] = 0;
  struct ncclTopoRanks frag, *all[1] = {&frag};
  memset(&frag, 0, sizeof frag);
  static struct ncclComm before;
  memcpy(&before, comm, sizeof before);

  ncclResult_t pre = preset(comm, &graph, &frag);
  int heads[1] = {-5}, nChannels = -7, nNodes = -7;
  ncclResult_t post = postset(comm, heads, all, &nChannels, &nNodes);
  CHECK(pre == ncclInvalidUsage, "Preset returned %d", pre);
  CHECK(post == ncclInvalidUsage, "Postset returned %d", post);
  int changed = 0;
  for (int i = 0; i < GUARD; i++)
    if (after[i] != FILL) {
      if (changed++ == 0) fprintf(stderr, "boundary: bytes written after the %zu-byte ncclComm:", sizeof *comm);
      fprintf(stderr, " +%zu", sizeof *comm + (size_t)i);
    }
  if (changed) fputc('\n', stderr);
  CHECK(changed == 0, "%d bytes after the struct changed", changed);
  CHECK(memcmp(&before, comm, sizeof before) == 0, "the communicator changed");
  CHECK(heads[0] == -5 && nChannels == -7 && nNodes == -7, "Postset wrote its outputs");

  static char log[8192];
  FILE *f = fopen(logPath, "r");
  size_t got = f ? fread(log, 1, sizeof log - 1, f) : 0;
  log[got] = '\0';
  if (f) fclose(f);
  unlink(logPath);
  const char *fns[] = {"ncclTopoPreset", "ncclTopoPostset"};
  int warns = 0;
  for (const char *p = log; (p = strstr(p, " NCCL WARN ")) != NULL; p++) warns++;
  CHECK(warns == 2, "%d WARNs:\n%s", warns, log);
  for (int i = 0; i < 2; i++) {
    char text[2048];
    snprintf(text, sizeof text, "NCCL WARN %s: NCCOM_RING_LAYOUT=%s: %s", fns[i], profile, want);
    const char *line = strstr(log, text);
    const char *end = line ? strchr(line, '\n') : NULL;
    const char *advice = line ? strstr(line, "; write one with `nccom-abi profile LIB`, or unset it for D3's offsets\n") : NULL;
    CHECK(line != NULL && advice != NULL && advice < end, "want a WARN '%s...' in:\n%s", text, log);
  }
  munmap(base, span + page);
  if (!failures)
    printf("boundary: a layout profile reaching past the %zu-byte ncclComm%s%s: refused (E4), nothing written\n",
           sizeof *comm, standin ? " over " : " with no libnccom.so.2", standin ? standin : "");
  return failures ? 1 : 0;
}

int main(int argc, char **argv) {
  /* The lines this test reads are NCCL's (D21): chosen here, not left to
   * whether a libnccom is loaded in the process (D26). */
  setenv("NCCOM_RING_LOG_STYLE", "nccl", 1);
  if (argc == 4 && strcmp(argv[1], "layout-profile") == 0) return layout_profile(argv[2], argv[3]);
  if (argc == 3 && strcmp(argv[1], "layout-d3") == 0) return layout_profile(argv[2], NULL);
  if (argc == 3 && strcmp(argv[1], "layout-bad") == 0) return layout_bad(argv[2]);
  if ((argc == 5 || argc == 6) && strcmp(argv[1], "layout-overrun") == 0)
    return layout_overrun(argv[2], argv[3], argv[4], argc == 6 ? argv[5] : NULL);
  if (argc == 3 && strcmp(argv[1], "shared-log") == 0) return shared_log(argv[2]);
  if (argc == 3 && strcmp(argv[1], "stale-pointer") == 0) return stale_pointer(argv[2]);
  if (argc == 3 && strcmp(argv[1], "address-limit") == 0) return address_limit(argv[2]);
  if (argc == 3 && strcmp(argv[1], "env-after-load") == 0) return env_after_load(argv[2]);
  if (argc == 3 && strcmp(argv[1], "rtld-local") == 0) return through_hooklib(argv[2], true);
  if (argc == 3 && strcmp(argv[1], "gate") == 0) return through_hooklib(argv[2], false);
  fprintf(stderr, "usage: boundary env-after-load LIB | rtld-local HOOKLIB | gate HOOKLIB | address-limit LIB | stale-pointer LIB | shared-log HOOKLIB | layout-profile LIB PROFILE | layout-d3 LIB | layout-bad LIB | layout-overrun LIB PROFILE WANT [STANDIN]\n");
  return 2;
}
