/*
 * standin_libnccom.c - build/preload-standin/libnccom.so.2: a stand-in for
 * the libnccom a preloaded job runs (D26). It holds no ring stage: its one
 * function makes two failing ring-stage calls from inside a library named
 * libnccom.so.2, as libnccom's init makes its calls, so that the return
 * address the preload shim passes on lies in it. Also loaded by the
 * logger's test (tests/c/log), as "a libnccom is loaded".
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stddef.h>

#include "nccom_ring.h"

/* Looked up, not linked: the stand-in loads without the shim too (the
 * logger's test never calls it). */
typedef ncclResult_t (*postset_fn)(struct ncclComm *, int *, struct ncclTopoRanks **, int *, int *);
typedef ncclResult_t (*build_rings_fn)(int, int *, int, int, int *, int *);

/* Postset without a comm (rank -1 in the line) and BuildRings without
 * rings, as rank 2: 0 when both return ncclInvalidArgument, else 1, or 2
 * when the functions are not there. */
int standin_failing_calls(void) {
  postset_fn postset = (postset_fn)dlsym(RTLD_DEFAULT, "ncclTopoPostset");
  build_rings_fn build_rings = (build_rings_fn)dlsym(RTLD_DEFAULT, "ncclBuildRings");
  if (postset == NULL || build_rings == NULL) return 2;
  int first[1] = {0}, n = 0, nodes = 0, prev[4] = {0}, next[4] = {0};
  struct ncclTopoRanks *all[1] = {NULL};
  ncclResult_t a = postset(NULL, first, all, &n, &nodes);
  ncclResult_t b = build_rings(1, NULL, 2, 4, prev, next);
  return a == ncclInvalidArgument && b == ncclInvalidArgument ? 0 : 1;
}
