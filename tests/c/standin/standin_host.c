/*
 * standin_host.c - build/standin-host, the LD_PRELOAD proof (issue #3).
 *
 * Linked against the stand-in libnccom (NEEDED libnccom-standin.so, rpath
 * $ORIGIN) and nothing else of the ring stage. It runs a small cluster (2
 * nodes x 4 ranks, 3 channels with distinct intra orders and NICs, doubled to
 * 6) two ways:
 *
 *   direct  the host's own calls (cluster.c's stage_run over the linked
 *           ncclTopoPreset/Postset/GetNetDev, and ncclBuildRings and
 *           ncclTopoGetNetDev(graph NULL) called here);
 *   driver  the stand-in's internal caller (standinBuildGraphTransports,
 *           standinCallBuildRings, standinCallGetNetDev), whose calls go
 *           through the stand-in's PLT.
 *
 * The reference results come from build/libnccomref.so, dlopen'ed with
 * RTLD_LOCAL (it calls nothing of its own through a PLT, so its answers are
 * its own whatever is preloaded).
 *
 *   standin-host --expect standin   [--ref PATH]  no LD_PRELOAD: both paths
 *       must reach the stand-in's code and give its documented wrong answers.
 *   standin-host --expect reference [--ref PATH]  under
 *       LD_PRELOAD=build/libnccomring.so: both paths must reach libnccomring
 *       and give exactly the reference model's results, every cluster
 *       invariant must hold (stage_check), and ncclTopoGetNetDev(sys, rank,
 *       NULL, 0, &dev) must return the stand-in's ncclTopoGetLocalNet answer
 *       (1000 + rank) on both paths (D19).
 *   standin-host --expect split [--ref PATH]  the control: under LD_PRELOAD
 *       with a stand-in linked -Bsymbolic (found first through
 *       LD_LIBRARY_PATH), the direct path must reach libnccomring and the
 *       driver path must still get the stand-in's own wrong answers: a library
 *       that does not call through its PLT cannot be preloaded over.
 *   standin-host --print direct|driver|reference [--ref PATH]  prints every
 *       output of one path.
 *
 * --ref defaults to libnccomref.so next to this executable. Exit 0 when every
 * expectation held.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cluster.h"
#include "stage_compare.h"
#include "standin.h"

enum { NODES = 2, LOCAL = 4, CHANNELS = 3, PROBE_RANK = 5 };

static const int kOrders[CHANNELS][LOCAL] = {{0, 1, 2, 3}, {3, 1, 2, 0}, {2, 0, 3, 1}};
static const int kNics[CHANNELS][2] = {{0, 1}, {1, 2}, {3, 0}};

static int failures;

__attribute__((format(printf, 1, 2))) static void failf(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fputs("standin-host: FAIL: ", stderr);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
  failures++;
}

static struct cluster *small_cluster(void) {
  int local[NODES];
  for (int m = 0; m < NODES; m++) local[m] = LOCAL;
  struct cluster *cl = cluster_new(NODES, local);
  if (cl == NULL) return NULL;
  for (int c = 0; c < CHANNELS; c++) cluster_set_channel(cl, c, kOrders[c], LOCAL, kNics[c][0], kNics[c][1]);
  cluster_set_nchannels(cl, CHANNELS);
  return cl;
}

/* The file name of the object that defines addr. */
static const char *object_of(const void *addr) {
  Dl_info info;
  if (addr == NULL || !dladdr(addr, &info) || info.dli_fname == NULL) return "?";
  const char *slash = strrchr(info.dli_fname, '/');
  return slash ? slash + 1 : info.dli_fname;
}

static int load_reference(const char *path, struct ring_api *api) {
  void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (h == NULL) {
    fprintf(stderr, "standin-host: dlopen %s: %s\n", path, dlerror());
    return -1;
  }
  api->preset = (ncclResult_t(*)(struct ncclComm *, struct ncclTopoGraph *,
                                 struct ncclTopoRanks *))dlsym(h, "ncclTopoPreset");
  api->postset = (ncclResult_t(*)(struct ncclComm *, int *, struct ncclTopoRanks **, int *,
                                  int *))dlsym(h, "ncclTopoPostset");
  api->build_rings = (ncclResult_t(*)(int, int *, int, int, int *, int *))dlsym(h, "ncclBuildRings");
  api->get_net_dev = (ncclResult_t(*)(struct ncclTopoSystem *, int, struct ncclTopoGraph *, int,
                                      int *))dlsym(h, "ncclTopoGetNetDev");
  if (!api->preset || !api->postset || !api->build_rings || !api->get_net_dev) {
    fprintf(stderr, "standin-host: %s lacks one of the four symbols\n", path);
    return -1;
  }
  return 0;
}

/* ---- the paths ---- */


struct path {
  const char *name;
  int (*run)(const struct ring_api *ref, const struct cluster *cl, struct stage *st);
  ring_build_rings_fn build_rings;
  ring_get_net_dev_fn get_net_dev;
};

static int run_direct(const struct ring_api *ref, const struct cluster *cl, struct stage *st) {
  (void)ref;
  return stage_run(&linked_ring_api, cl, st);
}
static int run_driver(const struct ring_api *ref, const struct cluster *cl, struct stage *st) {
  (void)ref;
  return standinBuildGraphTransports(cl, st);
}
static int run_reference(const struct ring_api *ref, const struct cluster *cl, struct stage *st) {
  return stage_run(ref, cl, st);
}

static struct path paths[3] = {
    {"direct", run_direct, ncclBuildRings, ncclTopoGetNetDev},
    {"driver", run_driver, standinCallBuildRings, standinCallGetNetDev},
    {"reference", run_reference, NULL, NULL},
};

/* BuildRings over the reference stage's next tables, for every rank, plus a
 * broken table (ring 0: rank 0's next is itself). */
struct rings_out {
  int n, nrings;
  ncclResult_t rc[64];
  int rings[64][MAXCHANNELS * 64];
  ncclResult_t brokenRc;
  int broken[MAXCHANNELS * 64];
};

static void run_build_rings(ring_build_rings_fn fn, const struct stage *refSt, struct rings_out *out) {
  int n = refSt->nRanks, nrings = refSt->comms[0]->nChannels;
  static int next[MAXCHANNELS * 64];
  memset(out, 0, sizeof *out);
  out->n = n;
  out->nrings = nrings;
  for (int c = 0; c < nrings; c++)
    for (int r = 0; r < n; r++) next[c * n + r] = refSt->comms[r]->channels[c].ring.next;
  for (int r = 0; r < n; r++) {
    for (int i = 0; i < nrings * n; i++) out->rings[r][i] = -5;
    out->rc[r] = fn(nrings, out->rings[r], r, n, NULL, next);
  }
  next[0] = 0;
  for (int i = 0; i < nrings * n; i++) out->broken[i] = -5;
  out->brokenRc = fn(nrings, out->broken, 0, n, NULL, next);
}

/* ---- printing ---- */

static void print_stage(const char *name, const struct stage *st, int ok) {
  printf("path %s: %s\n", name, ok == 0 ? "all calls succeeded" : st->failure);
  if (ok != 0) return;
  int n = st->nRanks;
  for (int r = 0; r < n; r++) {
    const struct ncclComm *comm = st->comms[r];
    printf("rank %d: node %d nNodes %d/%d nChannels %d/%d nodesFirstRank", r, comm->node,
           comm->nNodes, st->nNodes[r], comm->nChannels, st->nChannels[r]);
    for (int m = 0; m < st->nNodes[r] && m < n; m++)
      printf(" %d", st->nodesFirstRank[(size_t)r * (size_t)n + (size_t)m]);
    printf("\n");
    for (int c = 0; c < comm->nChannels && c < MAXCHANNELS; c++) {
      const struct ncclRing *ring = &comm->channels[c].ring;
      printf("rank %d channel %d: prev %d next %d netDev %d userRanks", r, c, ring->prev,
             ring->next, st->netDev[r * MAXCHANNELS + c]);
      for (int i = 0; ring->userRanks && i < n; i++) printf(" %d", ring->userRanks[i]);
      printf("\n");
    }
  }
}

static void print_rings(const struct rings_out *o) {
  for (int r = 0; r < o->n; r++) {
    printf("ncclBuildRings rank %d: result %d rings", r, (int)o->rc[r]);
    for (int i = 0; i < o->nrings * o->n; i++) printf(" %d", o->rings[r][i]);
    printf("\n");
  }
  printf("ncclBuildRings broken ring: result %d\n", (int)o->brokenRc);
}

/* ---- expectations ---- */

/* stage_check with its per-violation lines (expected here) discarded. */
static int quiet_stage_check(const struct cluster *cl, const struct stage *st) {
  fflush(stderr);
  int saved = dup(STDERR_FILENO), null = open("/dev/null", O_WRONLY);
  if (saved >= 0 && null >= 0) dup2(null, STDERR_FILENO);
  int v = stage_check(cl, st);
  fflush(stderr);
  if (saved >= 0) {
    dup2(saved, STDERR_FILENO);
    close(saved);
  }
  if (null >= 0) close(null);
  return v;
}

/* The stand-in's documented wrong answers (standin.h), checked against the
 * reference stage they must differ from. */
static void expect_standin_stage(const char *name, const struct cluster *cl,
                                 const struct stage *st, const struct stage *ref) {
  int n = st->nRanks;
  for (int r = 0; r < n; r++) {
    const struct ncclTopoRanks *f = &st->fragments[r], *g = &ref->fragments[r];
    for (int c = 0; c < CHANNELS; c++) {
      if (f->ringRecv[c] != g->ringSend[c] || f->ringSend[c] != g->ringRecv[c] ||
          f->ringPrev[c] != g->ringNext[c] || f->ringNext[c] != g->ringPrev[c])
        failf("%s: rank %d channel %d: fragment is not the reversed reference fragment", name, r, c);
    }
    const struct ncclComm *comm = st->comms[r];
    if (comm->nChannels != CHANNELS || st->nChannels[r] != CHANNELS || comm->nNodes != 1 ||
        st->nNodes[r] != 1 || comm->node != 0)
      failf("%s: rank %d: nChannels %d/%d nNodes %d/%d node %d, the stand-in writes %d/%d 1/1 0",
            name, r, comm->nChannels, st->nChannels[r], comm->nNodes, st->nNodes[r], comm->node,
            CHANNELS, CHANNELS);
    for (int c = 0; c < CHANNELS; c++) {
      const struct ncclRing *ring = &comm->channels[c].ring;
      if (ring->prev != r || ring->next != r)
        failf("%s: rank %d channel %d: prev/next %d/%d, the stand-in writes %d/%d", name, r, c,
              ring->prev, ring->next, r, r);
      for (int i = 0; ring->userRanks && i < n; i++)
        if (ring->userRanks[i] != r) {
          failf("%s: rank %d channel %d: userRanks[%d] = %d, the stand-in writes %d", name, r, c,
                i, ring->userRanks[i], r);
          break;
        }
      if (st->netDev[r * MAXCHANNELS + c] != STANDIN_NET_DEV)
        failf("%s: rank %d channel %d: netDev %d, the stand-in answers %d", name, r, c,
              st->netDev[r * MAXCHANNELS + c], STANDIN_NET_DEV);
    }
  }
  int v = quiet_stage_check(cl, st);
  printf("%s: stage_check finds %d violation(s) in the stand-in's results (it must find some)\n",
         name, v);
  if (v == 0) failf("%s: the stand-in's results pass stage_check", name);
}

static void expect_standin_rings(const char *name, const struct rings_out *o) {
  for (int r = 0; r < o->n; r++) {
    if (o->rc[r] != ncclSuccess) failf("%s: ncclBuildRings rank %d returned %d", name, r, (int)o->rc[r]);
    for (int i = 0; i < o->nrings * o->n; i++)
      if (o->rings[r][i] != 0) {
        failf("%s: ncclBuildRings rank %d: rings[%d] = %d, the stand-in writes 0", name, r, i,
              o->rings[r][i]);
        break;
      }
  }
  if (o->brokenRc != ncclSuccess)
    failf("%s: ncclBuildRings on a broken ring returned %d, the stand-in returns 0", name,
          (int)o->brokenRc);
}

static void compare_rings(const char *name, const struct rings_out *o, const struct rings_out *ref) {
  for (int r = 0; r < o->n; r++) {
    if (o->rc[r] != ref->rc[r])
      failf("%s: ncclBuildRings rank %d returned %d, reference %d", name, r, (int)o->rc[r],
            (int)ref->rc[r]);
    if (memcmp(o->rings[r], ref->rings[r], sizeof o->rings[r]) != 0)
      failf("%s: ncclBuildRings rank %d: rings differ from the reference", name, r);
  }
  if (o->brokenRc != ref->brokenRc || memcmp(o->broken, ref->broken, sizeof o->broken) != 0)
    failf("%s: ncclBuildRings on a broken ring: result %d, reference %d (or rings differ)", name,
          (int)o->brokenRc, (int)ref->brokenRc);
}

static void check_resolution(const char *want) {
  const void *fns[] = {(const void *)ncclTopoPreset, (const void *)ncclTopoPostset,
                       (const void *)ncclBuildRings, (const void *)ncclTopoGetNetDev};
  const char *names[] = {"ncclTopoPreset", "ncclTopoPostset", "ncclBuildRings", "ncclTopoGetNetDev"};
  for (int i = 0; i < 4; i++) {
    const char *got = object_of(fns[i]);
    printf("%s resolves to %s\n", names[i], got);
    if (strcmp(got, want) != 0) failf("%s resolves to %s, want %s", names[i], got, want);
  }
  printf("ncclTopoGetLocalNet resolves to %s\n", object_of((const void *)ncclTopoGetLocalNet));
}

static int usage(void) {
  fprintf(stderr, "usage: standin-host --expect standin|reference|split [--ref PATH]\n"
                  "       standin-host --print direct|driver|reference [--ref PATH]\n");
  return 2;
}

int main(int argc, char **argv) {
  const char *mode = NULL, *arg = NULL, *refPath = NULL;
  static char defaultRef[PATH_MAX];
  for (int i = 1; i < argc; i++) {
    if ((strcmp(argv[i], "--expect") == 0 || strcmp(argv[i], "--print") == 0) && i + 1 < argc) {
      mode = argv[i];
      arg = argv[++i];
    } else if (strcmp(argv[i], "--ref") == 0 && i + 1 < argc) {
      refPath = argv[++i];
    } else {
      return usage();
    }
  }
  if (mode == NULL) return usage();
  if (refPath == NULL) {
    ssize_t len = readlink("/proc/self/exe", defaultRef, sizeof defaultRef - 32);
    if (len <= 0) return usage();
    defaultRef[len] = '\0';
    char *slash = strrchr(defaultRef, '/');
    strcpy(slash ? slash + 1 : defaultRef, "libnccomref.so");
    refPath = defaultRef;
  }

  struct ring_api ref;
  if (load_reference(refPath, &ref) != 0) return 1;
  struct cluster *cl = small_cluster();
  if (cl == NULL) return 1;
  int sys = cluster_node_of(cl, PROBE_RANK);

  struct stage refSt;
  if (stage_run(&ref, cl, &refSt) != 0) {
    fprintf(stderr, "standin-host: reference stage failed: %s\n", refSt.failure);
    return 1;
  }
  static struct rings_out refRings, rings;
  run_build_rings(ref.build_rings, &refSt, &refRings);
  int refDev = -5;
  ncclResult_t refDevRc = ref.get_net_dev(&cl->systems[sys], PROBE_RANK, NULL, 0, &refDev);

  if (strcmp(mode, "--print") == 0) {
    for (int p = 0; p < 3; p++) {
      if (strcmp(arg, paths[p].name) != 0) continue;
      struct stage st;
      int ok = paths[p].run(&ref, cl, &st);
      print_stage(paths[p].name, &st, ok);
      if (ok == 0) {
        run_build_rings(paths[p].build_rings ? paths[p].build_rings : ref.build_rings, &refSt, &rings);
        print_rings(&rings);
      }
      int dev = -5;
      ring_get_net_dev_fn gnd = paths[p].get_net_dev ? paths[p].get_net_dev : ref.get_net_dev;
      ncclResult_t rc = gnd(&cl->systems[sys], PROBE_RANK, NULL, 0, &dev);
      printf("ncclTopoGetNetDev(sys, %d, NULL, 0, &dev): result %d dev %d\n", PROBE_RANK, (int)rc, dev);
      stage_free(&st);
      stage_free(&refSt);
      cluster_free(cl);
      return 0;
    }
    return usage();
  }

  int wantStandinPath[2]; /* direct, driver */
  if (strcmp(arg, "standin") == 0) {
    wantStandinPath[0] = wantStandinPath[1] = 1;
  } else if (strcmp(arg, "reference") == 0) {
    wantStandinPath[0] = wantStandinPath[1] = 0;
  } else if (strcmp(arg, "split") == 0) {
    wantStandinPath[0] = 0;
    wantStandinPath[1] = 1;
  } else {
    return usage();
  }

  check_resolution(wantStandinPath[0] ? "libnccom-standin.so" : "libnccomring.so");
  int localNet = -5;
  if (ncclTopoGetLocalNet(&cl->systems[sys], PROBE_RANK, &localNet) != ncclSuccess ||
      localNet != STANDIN_LOCAL_NET_BASE + PROBE_RANK)
    failf("the stand-in's ncclTopoGetLocalNet answered %d", localNet);

  struct stage st[2];
  for (int p = 0; p < 2; p++) {
    const char *name = paths[p].name;
    int before = failures, wantStandin = wantStandinPath[p];
    int ok = paths[p].run(&ref, cl, &st[p]);
    if (ok != 0) {
      failf("%s: %s", name, st[p].failure);
      continue;
    }
    run_build_rings(paths[p].build_rings, &refSt, &rings);
    int dev = -5;
    ncclResult_t rc = paths[p].get_net_dev(&cl->systems[sys], PROBE_RANK, NULL, 0, &dev);
    if (wantStandin) {
      expect_standin_stage(name, cl, &st[p], &refSt);
      expect_standin_rings(name, &rings);
      if (rc != ncclSuccess || dev != STANDIN_NET_DEV)
        failf("%s: ncclTopoGetNetDev(graph NULL): result %d dev %d, the stand-in answers 0 %d",
              name, (int)rc, dev, STANDIN_NET_DEV);
    } else {
      if (stage_compare(name, name, &st[p], "reference", &refSt) != 0)
        failf("%s: results differ from the reference model's", name);
      if (stage_check(cl, &st[p]) != 0) failf("%s: cluster invariants violated", name);
      compare_rings(name, &rings, &refRings);
      if (rc != ncclSuccess || dev != STANDIN_LOCAL_NET_BASE + PROBE_RANK)
        failf("%s: ncclTopoGetNetDev(sys, %d, NULL, 0, &dev): result %d dev %d, want 0 %d "
              "(the host's ncclTopoGetLocalNet)",
              name, PROBE_RANK, (int)rc, dev, STANDIN_LOCAL_NET_BASE + PROBE_RANK);
      if (refDevRc != rc || refDev != dev)
        failf("%s: ncclTopoGetNetDev(graph NULL): result %d dev %d, reference %d %d", name,
              (int)rc, dev, (int)refDevRc, refDev);
    }
    printf("%s: %s %s; ncclTopoGetNetDev(sys, %d, NULL, 0, &dev) -> result %d dev %d\n", name,
           failures == before ? "OK," : "FAILED, want",
           wantStandin ? "the stand-in's wrong answers" : "identical to the reference model",
           PROBE_RANK, (int)rc, dev);
  }
  if (failures == 0 && wantStandinPath[0] == wantStandinPath[1] &&
      stage_compare("direct vs driver", "direct", &st[0], "driver", &st[1]) != 0)
    failf("the direct and driver paths disagree");
  stage_free(&st[0]);
  stage_free(&st[1]);
  stage_free(&refSt);
  cluster_free(cl);
  if (failures) {
    fprintf(stderr, "standin-host: %d failure(s)\n", failures);
    return 1;
  }
  printf("standin-host --expect %s: OK\n", arg);
  return 0;
}
