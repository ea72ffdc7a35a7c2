/*
 * hanglib.c - build/libnccom-hang.so, a stand-in libnccom that misbehaves
 * on demand, for the conformance harness's run limits (issue 10;
 * tests/c/conformance/timeout_check.sh, `make test-conformance-timeout`).
 *
 * It exports the four ring-stage functions. The one NCCOM_HANG_IN names
 * (ncclTopoPreset, ncclTopoPostset, ncclBuildRings, ncclTopoGetNetDev; or
 * "load": the library's constructor) misbehaves as NCCOM_HANG_HOW says:
 *   sleep  (default) sleeps forever
 *   spin   blocks every signal on the calling thread, then spins forever
 *   wrong  answers wrongly: GetNetDev's *dev one more, the others
 *          ncclInternalError where the forwarded call succeeded
 *   crash  writes through a NULL pointer
 * Every other call is forwarded to NCCOM_HANG_FORWARD (a library exporting
 * the four, e.g. build/libnccomref.so, dlopen'ed RTLD_LOCAL at first use),
 * so that a harness run agrees with it up to the call that misbehaves;
 * without it they return ncclInternalError.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "nccom_ring.h"

static int chosen(const char *name) {
  const char *in = getenv("NCCOM_HANG_IN");
  return in && strcmp(in, name) == 0;
}

static const char *how(void) {
  const char *h = getenv("NCCOM_HANG_HOW");
  return h && h[0] ? h : "sleep";
}

/* sleep, spin or crash; returns only for "wrong". */
static void misbehave(void) {
  const char *h = how();
  if (strcmp(h, "spin") == 0) {
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, NULL);
    for (volatile unsigned long n = 0;; n++) {
    }
  }
  if (strcmp(h, "crash") == 0) {
    volatile int *volatile p = NULL; /* volatile both: the compiler keeps the store */
    *p = 1;
  }
  if (strcmp(h, "wrong") == 0) return;
  for (;;) sleep(1000);
}

__attribute__((constructor)) static void at_load(void) {
  if (chosen("load")) misbehave();
}

static void *forward(const char *name) {
  static void *lib;
  const char *path = getenv("NCCOM_HANG_FORWARD");
  if (lib == NULL && path && path[0]) lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  return lib ? dlsym(lib, name) : NULL;
}

/* The forwarded function, as a function pointer (POSIX: the conversion
 * from dlsym's void * is defined). */
#define FORWARD(type, name, var) \
  type var;                      \
  do {                           \
    void *p_ = forward(name);    \
    memcpy(&var, &p_, sizeof p_); \
  } while (0)

typedef ncclResult_t (*preset_t)(struct ncclComm *, struct ncclTopoGraph *, struct ncclTopoRanks *);
typedef ncclResult_t (*postset_t)(struct ncclComm *, int *, struct ncclTopoRanks **, int *, int *);
typedef ncclResult_t (*build_rings_t)(int, int *, int, int, int *, int *);
typedef ncclResult_t (*get_net_dev_t)(struct ncclTopoSystem *, int, struct ncclTopoGraph *, int, int *);

/* A "wrong" answer: an error where the real call succeeded. */
static ncclResult_t wrong(const char *name, ncclResult_t res) {
  return chosen(name) && res == ncclSuccess ? ncclInternalError : res;
}

ncclResult_t ncclTopoPreset(struct ncclComm *comm, struct ncclTopoGraph *graph, struct ncclTopoRanks *topoRanks) {
  if (chosen("ncclTopoPreset")) misbehave();
  FORWARD(preset_t, "ncclTopoPreset", f);
  return wrong("ncclTopoPreset", f ? f(comm, graph, topoRanks) : ncclInternalError);
}

ncclResult_t ncclTopoPostset(struct ncclComm *comm, int *nodesFirstRank, struct ncclTopoRanks **allTopoRanks,
                             int *nChannels, int *nNodes) {
  if (chosen("ncclTopoPostset")) misbehave();
  FORWARD(postset_t, "ncclTopoPostset", f);
  return wrong("ncclTopoPostset", f ? f(comm, nodesFirstRank, allTopoRanks, nChannels, nNodes) : ncclInternalError);
}

ncclResult_t ncclBuildRings(int nrings, int *rings, int rank, int nranks, int *prev, int *next) {
  if (chosen("ncclBuildRings")) misbehave();
  FORWARD(build_rings_t, "ncclBuildRings", f);
  return wrong("ncclBuildRings", f ? f(nrings, rings, rank, nranks, prev, next) : ncclInternalError);
}

ncclResult_t ncclTopoGetNetDev(struct ncclTopoSystem *sys, int rank, struct ncclTopoGraph *graph, int channelId,
                               int *dev) {
  if (chosen("ncclTopoGetNetDev")) misbehave();
  FORWARD(get_net_dev_t, "ncclTopoGetNetDev", f);
  ncclResult_t res = f ? f(sys, rank, graph, channelId, dev) : ncclInternalError;
  if (chosen("ncclTopoGetNetDev") && res == ncclSuccess && dev) ++*dev; /* "wrong" */
  return res;
}
