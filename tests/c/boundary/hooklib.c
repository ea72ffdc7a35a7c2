/*
 * hooklib.c - a stand-in libnccom that keeps its platform hooks to itself
 * (issue 9): built as build/libnccom-hooks.so (C names) and
 * build/libnccom-hooks-cxx.so (-DHOOKLIB_CXX_NAMES: the names a C++ build
 * without extern "C" gives them). A host loads it with RTLD_LOCAL, so no
 * global lookup sees its hooks; its own calls to the four ring-stage
 * functions go through its PLT, as libnccom's buildGraphTransportsRank's do,
 * and land in whatever defines them first (libnccomring under LD_PRELOAD).
 *
 * The hooks answer what hooklib_configure set. With switchV1 false, the
 * virtual-core and JBOG hooks abort(): spec §4 calls them only inside
 * Postset's SwitchV1 block, and real implementations may assert there.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "nccom_ring.h"

#define HOOKLIB_LOCAL_NET_BASE 2000

static bool switchV1;
static int jbogId = 2;

void hooklib_configure(bool isSwitchV1, int jbog);
void hooklib_configure(bool isSwitchV1, int jbog) {
  switchV1 = isSwitchV1;
  jbogId = jbog;
}

static void outside_the_gate(const char *hook) {
  fprintf(stderr, "hooklib: %s called on a platform that is not TRN3-SwitchV1 (spec §4)\n", hook);
  abort();
}

#ifdef HOOKLIB_CXX_NAMES
#define HOOK_NAME(c, cxx) __asm__(cxx)
#else
#define HOOK_NAME(c, cxx) __asm__(c)
#endif

bool hook_family(void) HOOK_NAME("neuronIsTrn3SwitchV1Family", "_Z26neuronIsTrn3SwitchV1Familyv");
int hook_vcore(void) HOOK_NAME("nec_get_virtual_core_size", "_Z25nec_get_virtual_core_sizev");
int hook_jbog(int rank) HOOK_NAME("neuronTrnSwitchV1JbogId", "_Z23neuronTrnSwitchV1JbogIdi");
ncclResult_t hook_local_net(struct ncclTopoSystem *sys, int rank, int *dev)
    HOOK_NAME("ncclTopoGetLocalNet", "_Z19ncclTopoGetLocalNetP14ncclTopoSystemiPi");

bool hook_family(void) { return switchV1; }
int hook_vcore(void) {
  if (!switchV1) outside_the_gate("nec_get_virtual_core_size");
  return 0;
}
int hook_jbog(int rank) {
  if (!switchV1) outside_the_gate("neuronTrnSwitchV1JbogId");
  (void)rank;
  return jbogId;
}
ncclResult_t hook_local_net(struct ncclTopoSystem *sys, int rank, int *dev) {
  (void)sys;
  *dev = HOOKLIB_LOCAL_NET_BASE + rank;
  return ncclSuccess;
}

/* Its log, as NCCL keeps one: NCCL_DEBUG_FILE opened with "w" into a
 * global stream that libnccomring finds and writes through (docs/operating.md,
 * "Logging"). */
FILE *ncclDebugFile;

void hooklib_open_log(const char *path);
void hooklib_log(const char *text);
void hooklib_open_log(const char *path) { ncclDebugFile = fopen(path, "w"); }
void hooklib_log(const char *text) {
  fprintf(ncclDebugFile, "%s\n", text);
  fflush(ncclDebugFile);
}

/* The library's own callers of the ring stage (through its PLT). Like
 * libnccom's, each checks the result after the call, so the call is not a
 * tail call: the return address that libnccomring sees lies in this
 * library. (A caller that tail-calls hands over its own caller's address;
 * the lookup then falls back to the global scope.) */
static volatile int calls;
ncclResult_t hooklib_preset(struct ncclComm *comm, struct ncclTopoGraph *graph,
                            struct ncclTopoRanks *ranks);
ncclResult_t hooklib_postset(struct ncclComm *comm, int *nodesFirstRank,
                             struct ncclTopoRanks **all, int *nChannels, int *nNodes);
ncclResult_t hooklib_get_net_dev(struct ncclTopoSystem *sys, int rank, struct ncclTopoGraph *graph,
                                 int channelId, int *dev);

ncclResult_t hooklib_preset(struct ncclComm *comm, struct ncclTopoGraph *graph,
                            struct ncclTopoRanks *ranks) {
  ncclResult_t res = ncclTopoPreset(comm, graph, ranks);
  calls++;
  return res;
}
ncclResult_t hooklib_postset(struct ncclComm *comm, int *nodesFirstRank,
                             struct ncclTopoRanks **all, int *nChannels, int *nNodes) {
  ncclResult_t res = ncclTopoPostset(comm, nodesFirstRank, all, nChannels, nNodes);
  calls++;
  return res;
}
ncclResult_t hooklib_get_net_dev(struct ncclTopoSystem *sys, int rank, struct ncclTopoGraph *graph,
                                 int channelId, int *dev) {
  ncclResult_t res = ncclTopoGetNetDev(sys, rank, graph, channelId, dev);
  calls++;
  return res;
}
