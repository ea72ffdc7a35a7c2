/*
 * dlopen_host.c - build/dlopen-host, the dlopen proof (issue #3).
 *
 * The host is linked directly against the C reference model
 * (NEEDED libnccomref.so, rpath $ORIGIN), so the reference is loaded at
 * process start and owns the four names in the global scope. It then
 * dlopens build/libnccomring.so with RTLD_NOW | RTLD_LOCAL (the path is
 * argv[1], default: libnccomring.so next to this executable), resolves the
 * four symbols from that handle with dlsym, and drives the same clusters
 * through both with cluster.c's stage_run (one `struct ring_api` each):
 *
 *   - 2 nodes x 4 ranks, 3 channels with distinct orders and NICs;
 *   - the embedded trn1-like default at 2 and 4 nodes (32 ranks per node,
 *     8 channels doubled to 16);
 *   - 1 node x 8 ranks, channels [0..7] and [0,7,...,1];
 *   - failing stages: graph->nChannels 0 and 33 (Preset), enablePod on two
 *     nodes (Postset, D15).
 *
 * It compares every output (stage_compare.h: fragments, prev/next/userRanks
 * per rank and channel, every other byte of each ncclComm, nChannels, nNodes,
 * nodesFirstRank, netDev) and the return codes, then direct ncclBuildRings
 * and ncclTopoGetNetDev calls on valid and invalid input (output buffers
 * pre-filled with canaries, compared after the call). Exit 0 only if
 * everything is identical.
 *
 * The symbols must come from where they should: the linked ones (and
 * dlsym(RTLD_DEFAULT, ...)) from libnccomref.so, the dlsym(handle, ...) ones
 * from libnccomring.so: RTLD_LOCAL keeps the Go library out of the global
 * scope, so nothing of the reference is interposed (and the Go library's own
 * calls never leave it: it is linked -Bsymbolic).
 *
 * Static TLS caveat of a late dlopen: a Go c-shared library is linked with
 * the initial-exec TLS model (DF_STATIC_TLS; build/libnccomring.so has an
 * 8-byte PT_TLS segment). A dlopen after start must fit that into glibc's
 * static TLS surplus; when other libraries already used it up, dlopen fails
 * with "cannot allocate memory in static TLS block" (fix: load at start,
 * or GLIBC_TUNABLES=glibc.rtld.optional_static_tls=4096). Here it was NOT
 * needed: this small host (libc, libxml2, libnccomref.so) dlopens it with
 * the default surplus on glibc 2.36, and the tests run it without
 * GLIBC_TUNABLES. No dlclose either: a Go library stays mapped (#11100).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cluster.h"
#include "stage_compare.h"

static int failures;
static int verbose = 1; /* 0: print a comparison only when it differs */

__attribute__((format(printf, 1, 2))) static void failf(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fputs("dlopen-host: FAIL: ", stderr);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
  failures++;
}

static const char *object_of(const void *addr) {
  Dl_info info;
  if (addr == NULL || !dladdr(addr, &info) || info.dli_fname == NULL) return "?";
  const char *slash = strrchr(info.dli_fname, '/');
  return slash ? slash + 1 : info.dli_fname;
}

/* ---- clusters ---- */

static struct cluster *cluster_small(void) {
  static const int orders[3][4] = {{0, 1, 2, 3}, {3, 1, 2, 0}, {2, 0, 3, 1}};
  static const int nics[3][2] = {{0, 1}, {1, 2}, {3, 0}};
  int local[2] = {4, 4};
  struct cluster *cl = cluster_new(2, local);
  if (cl == NULL) return NULL;
  for (int c = 0; c < 3; c++) cluster_set_channel(cl, c, orders[c], 4, nics[c][0], nics[c][1]);
  cluster_set_nchannels(cl, 3);
  return cl;
}

static struct cluster *cluster_one_node(void) {
  static const int fwd[8] = {0, 1, 2, 3, 4, 5, 6, 7}, bwd[8] = {0, 7, 6, 5, 4, 3, 2, 1};
  int local[1] = {8};
  struct cluster *cl = cluster_new(1, local);
  if (cl == NULL) return NULL;
  cluster_set_channel(cl, 0, fwd, 8, 2, 3);
  cluster_set_channel(cl, 1, bwd, 8, 4, 5);
  cluster_set_nchannels(cl, 2);
  return cl;
}

static struct cluster *cluster_nchannels(int n) {
  struct cluster *cl = cluster_small();
  if (cl != NULL) cluster_set_nchannels(cl, n);
  return cl;
}

static struct cluster *cluster_pod(void) {
  struct cluster *cl = cluster_small();
  if (cl != NULL) cl->enablePod = 1;
  return cl;
}

/* ---- comparisons ---- */

static void compare_stages(const char *what, struct cluster *cl, const struct ring_api *ref,
                           const struct ring_api *lib, int wantOk) {
  if (cl == NULL) {
    failf("%s: out of memory", what);
    return;
  }
  struct stage a, b;
  int okA = stage_run(ref, cl, &a), okB = stage_run(lib, cl, &b);
  int d = stage_compare(what, "libnccomref", &a, "libnccomring", &b);
  if (d != 0) failf("%s: %d difference(s)", what, d);
  if ((okA == 0) != wantOk) failf("%s: the reference %s", what, okA == 0 ? "succeeded" : a.failure);
  if ((okB == 0) != wantOk) failf("%s: libnccomring %s", what, okB == 0 ? "succeeded" : b.failure);
  if (okA == 0 && stage_check(cl, &a) != 0) failf("%s: invariants violated", what);
  printf("%-40s %s: %s\n", what, d == 0 ? "identical" : "DIFFERENT",
         okA == 0 ? "all calls succeeded" : a.failure);
  stage_free(&a);
  stage_free(&b);
  cluster_free(cl);
}

enum { MAXR = 16 };

static void compare_build_rings(const char *what, ring_build_rings_fn ref, ring_build_rings_fn lib,
                                int nrings, int useRings, int rank, int nranks, const int *next) {
  static int ra[MAXCHANNELS * MAXR + 8], rb[MAXCHANNELS * MAXR + 8];
  for (size_t i = 0; i < sizeof ra / sizeof ra[0]; i++) ra[i] = rb[i] = -77;
  ncclResult_t ca = ref(nrings, useRings ? ra : NULL, rank, nranks, NULL, (int *)next);
  ncclResult_t cb = lib(nrings, useRings ? rb : NULL, rank, nranks, NULL, (int *)next);
  int same = ca == cb && memcmp(ra, rb, sizeof ra) == 0;
  if (!same) failf("ncclBuildRings %s: reference %d, libnccomring %d (or rings differ)", what, (int)ca, (int)cb);
  if (verbose || !same)
    printf("ncclBuildRings %-25s %s: result %d\n", what, same ? "identical" : "DIFFERENT", (int)ca);
}

static void compare_get_net_dev(const char *what, ring_get_net_dev_fn ref, ring_get_net_dev_fn lib,
                                struct ncclTopoSystem *sys, int rank, struct ncclTopoGraph *graph,
                                int channelId, int useDev) {
  int da = -77, db = -77;
  ncclResult_t ca = ref(sys, rank, graph, channelId, useDev ? &da : NULL);
  ncclResult_t cb = lib(sys, rank, graph, channelId, useDev ? &db : NULL);
  int same = ca == cb && da == db;
  if (!same)
    failf("ncclTopoGetNetDev %s: reference %d dev %d, libnccomring %d dev %d", what, (int)ca, da,
          (int)cb, db);
  if (verbose || !same)
    printf("ncclTopoGetNetDev %-22s %s: result %d dev %d\n", what, same ? "identical" : "DIFFERENT",
           (int)ca, da);
}

int main(int argc, char **argv) {
  char path[PATH_MAX];
  if (argc > 1) {
    snprintf(path, sizeof path, "%s", argv[1]);
  } else {
    ssize_t len = readlink("/proc/self/exe", path, sizeof path - 32);
    if (len <= 0) return 2;
    path[len] = '\0';
    char *slash = strrchr(path, '/');
    strcpy(slash ? slash + 1 : path, "libnccomring.so");
  }

  const struct ring_api *ref = &linked_ring_api;
  printf("linked ncclTopoPreset is in %s\n", object_of((const void *)ref->preset));
  if (strcmp(object_of((const void *)ref->preset), "libnccomref.so") != 0)
    failf("the host is not linked against libnccomref.so");

  void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (h == NULL) {
    fprintf(stderr, "dlopen-host: dlopen %s: %s\n", path, dlerror());
    fprintf(stderr, "dlopen-host: (if this is \"cannot allocate memory in static TLS block\", "
                    "retry with GLIBC_TUNABLES=glibc.rtld.optional_static_tls=4096)\n");
    return 1;
  }
  struct ring_api lib;
  lib.preset = (ring_preset_fn)dlsym(h, "ncclTopoPreset");
  lib.postset = (ring_postset_fn)dlsym(h, "ncclTopoPostset");
  lib.build_rings = (ring_build_rings_fn)dlsym(h, "ncclBuildRings");
  lib.get_net_dev = (ring_get_net_dev_fn)dlsym(h, "ncclTopoGetNetDev");
  const void *syms[4] = {(const void *)lib.preset, (const void *)lib.postset,
                         (const void *)lib.build_rings, (const void *)lib.get_net_dev};
  const char *names[4] = {"ncclTopoPreset", "ncclTopoPostset", "ncclBuildRings", "ncclTopoGetNetDev"};
  for (int i = 0; i < 4; i++) {
    const char *obj = object_of(syms[i]);
    if (strcmp(obj, "libnccomring.so") != 0) failf("dlsym(handle, %s) is in %s", names[i], obj);
    const char *global = object_of(dlsym(RTLD_DEFAULT, names[i]));
    if (strcmp(global, "libnccomref.so") != 0)
      failf("dlsym(RTLD_DEFAULT, %s) is in %s after dlopen(RTLD_LOCAL)", names[i], global);
  }
  if (failures) return 1;
  printf("dlopen(%s, RTLD_NOW|RTLD_LOCAL): the four symbols are in libnccomring.so; "
         "RTLD_DEFAULT still finds libnccomref.so\n", path);

  compare_stages("2 nodes x 4 ranks, 3 channels", cluster_small(), ref, &lib, 1);
  compare_stages("1 node x 8 ranks, 2 channels", cluster_one_node(), ref, &lib, 1);
  compare_stages("default 2 nodes x 32 ranks, 8 channels", cluster_default(2), ref, &lib, 1);
  compare_stages("default 4 nodes x 32 ranks, 8 channels", cluster_default(4), ref, &lib, 1);
  compare_stages("graph->nChannels 0", cluster_nchannels(0), ref, &lib, 0);
  compare_stages("graph->nChannels 33", cluster_nchannels(33), ref, &lib, 0);
  compare_stages("enablePod on 2 nodes", cluster_pod(), ref, &lib, 0);

  /* ncclBuildRings: 2 rings of 8 ranks (forward, backward), then broken input. */
  enum { N = 8 };
  int next[2 * N];
  for (int r = 0; r < N; r++) {
    next[r] = (r + 1) % N;
    next[N + r] = (r + N - 1) % N;
  }
  int before = failures;
  verbose = 0;
  for (int r = 0; r < N; r++) {
    char what[32];
    snprintf(what, sizeof what, "valid, rank %d", r);
    compare_build_rings(what, ref->build_rings, lib.build_rings, 2, 1, r, N, next);
  }
  verbose = 1;
  printf("ncclBuildRings %-25s %s\n", "valid, ranks 0..7",
         failures == before ? "identical: result 0" : "DIFFERENT");
  compare_build_rings("nrings 0", ref->build_rings, lib.build_rings, 0, 1, 0, N, next);
  compare_build_rings("rings NULL", ref->build_rings, lib.build_rings, 2, 0, 0, N, next);
  compare_build_rings("nrings 33", ref->build_rings, lib.build_rings, 33, 1, 0, N, next);
  compare_build_rings("nranks 0", ref->build_rings, lib.build_rings, 2, 1, 0, 0, next);
  compare_build_rings("rank 8 of 8", ref->build_rings, lib.build_rings, 2, 1, 8, N, next);
  int broken[2 * N];
  memcpy(broken, next, sizeof broken);
  broken[N + 3] = 3; /* ring 1: rank 3 loops on itself */
  compare_build_rings("self loop", ref->build_rings, lib.build_rings, 2, 1, 0, N, broken);
  memcpy(broken, next, sizeof broken);
  broken[5] = N; /* ring 0: a next outside [0, N) */
  compare_build_rings("next out of range", ref->build_rings, lib.build_rings, 2, 1, 0, N, broken);
  memcpy(broken, next, sizeof broken);
  broken[7] = 3; /* ring 0: 7 -> 3, does not loop back to 0 */
  compare_build_rings("no loop back", ref->build_rings, lib.build_rings, 2, 1, 0, N, broken);

  /* ncclTopoGetNetDev on the 1-node graph, every rank and channel, then errors.
   * No object in this process defines ncclTopoGetLocalNet. */
  struct cluster *cl = cluster_one_node();
  if (cl == NULL) return 1;
  before = failures;
  verbose = 0;
  for (int r = 0; r < N; r++)
    for (int c = 0; c < 4; c++) {
      char what[32];
      snprintf(what, sizeof what, "rank %d channel %d", r, c);
      compare_get_net_dev(what, ref->get_net_dev, lib.get_net_dev, &cl->systems[0], r,
                          cl->graphs[0], c, 1);
    }
  verbose = 1;
  printf("ncclTopoGetNetDev %-22s %s\n", "ranks 0..7 x ch 0..3",
         failures == before ? "identical: result 0" : "DIFFERENT");
  compare_get_net_dev("channelId -1", ref->get_net_dev, lib.get_net_dev, &cl->systems[0], 0,
                      cl->graphs[0], -1, 1);
  compare_get_net_dev("graph NULL", ref->get_net_dev, lib.get_net_dev, &cl->systems[0], 3, NULL,
                      0, 1);
  compare_get_net_dev("sys NULL", ref->get_net_dev, lib.get_net_dev, NULL, 3, cl->graphs[0], 0, 1);
  compare_get_net_dev("dev NULL", ref->get_net_dev, lib.get_net_dev, &cl->systems[0], 3,
                      cl->graphs[0], 0, 0);
  cl->systems[0].nodes[0].count = 0;
  compare_get_net_dev("count 0", ref->get_net_dev, lib.get_net_dev, &cl->systems[0], 3,
                      cl->graphs[0], 0, 1);
  cl->systems[0].nodes[0].count = 8;
  cl->graphs[0]->nChannels = 0;
  compare_get_net_dev("nChannels 0", ref->get_net_dev, lib.get_net_dev, &cl->systems[0], 3,
                      cl->graphs[0], 0, 1);
  cluster_free(cl);

  if (failures) {
    fprintf(stderr, "dlopen-host: %d difference(s) between libnccomref.so and libnccomring.so\n",
            failures);
    return 1;
  }
  printf("dlopen-host: libnccomref.so and the dlopen'ed libnccomring.so agree on every output "
         "and return code\n");
  return 0;
}
