/*
 * fixture.c - a stand-in libnccom for cmd/nccom-abi's tests: the four
 * ring-stage functions over fixture.h's structs, and an internal caller of
 * all four (libnccom's initTransportsRank calls the ring stage from inside
 * the library; whether those calls go through the PLT is what `nccom-abi
 * preload` reports). The functions do just enough with the structs that
 * the compiler emits their full DWARF; their results mean nothing.
 *
 * Build switches besides fixture.h's variants:
 *   FIXTURE_VISIBILITY=protected  the four are declared with that visibility
 *   (-fvisibility=hidden, -Wl,-Bsymbolic and -fno-semantic-interposition are
 *   plain compiler and linker flags; see the Makefile's test-abi-tool rules).
 * Compiled as C (C names) and as C++ (the mangled names exports.map lists).
 */
#include "fixture.h"

#include <stdlib.h>

#ifdef FIXTURE_NAMESPACE
using namespace nccl;
#endif

#ifdef FIXTURE_VISIBILITY
#define FIXTURE_API __attribute__((visibility(FIXTURE_VISIBILITY)))
#else
#define FIXTURE_API
#endif

#ifdef __cplusplus
#define FIXTURE_ASSERT(c, m) static_assert(c, m)
#else
#define FIXTURE_ASSERT(c, m) _Static_assert(c, m)
#endif

/* The default build is the documented layout: nccom-abi check must pass it. */
#if !defined(FIXTURE_MOVE_RANK) && !defined(FIXTURE_GROW_GRAPH) && !defined(FIXTURE_RENAME)
FIXTURE_ASSERT(sizeof(struct ncclRing) == 24, "ncclRing");
FIXTURE_ASSERT(sizeof(struct ncclChannel) == 512, "ncclChannel");
FIXTURE_ASSERT(sizeof(ncclTopoRanks) == 960, "ncclTopoRanks");
FIXTURE_ASSERT(offsetof(ncclTopoRanks, JbogKangaringPath) == 896, "JbogKangaringPath");
FIXTURE_ASSERT(sizeof(struct ncclTopoGraph) == 33080, "ncclTopoGraph");
FIXTURE_ASSERT(offsetof(struct ncclTopoGraph, inter) == 32820, "inter");
FIXTURE_ASSERT(offsetof(struct ncclComm, nKangaRingChannels) == 16384, "nKangaRingChannels");
FIXTURE_ASSERT(offsetof(struct ncclComm, peerInfo) == 17544, "peerInfo");
FIXTURE_ASSERT(offsetof(struct ncclComm, topo) == 17552, "topo");
FIXTURE_ASSERT(offsetof(struct ncclComm, rank) == 17616, "rank");
FIXTURE_ASSERT(offsetof(struct ncclComm, nRanks) == 17620, "nRanks");
FIXTURE_ASSERT(offsetof(struct ncclComm, node) == 17640, "node");
FIXTURE_ASSERT(offsetof(struct ncclComm, nNodes) == 17644, "nNodes");
FIXTURE_ASSERT(offsetof(struct ncclComm, localRanks) == 17648, "localRanks");
FIXTURE_ASSERT(offsetof(struct ncclComm, nChannels) == 17704, "nChannels");
FIXTURE_ASSERT(offsetof(struct ncclComm, enablePod) == 19208, "enablePod");
FIXTURE_ASSERT(sizeof(struct ncclComm) == 19224, "ncclComm");
#endif

#ifdef FIXTURE_RENAME
#define COMM_NCHANNELS numChannels
#else
#define COMM_NCHANNELS nChannels
#endif

FIXTURE_API ncclResult_t ncclTopoPreset(ncclComm *comm, ncclTopoGraph *graph,
                                        ncclTopoRanks *topoRanks) {
  if (comm == NULL || graph == NULL || topoRanks == NULL) return ncclInvalidArgument;
  int n = graph->nChannels;
  if (n < 1 || n > MAXCHANNELS) return ncclInvalidArgument;
  for (int c = 0; c < n; c++) {
    topoRanks->ringRecv[c] = graph->intra[c * comm->localRanks];
    topoRanks->ringSend[c] = graph->intra[c * comm->localRanks + comm->localRanks - 1];
    topoRanks->ringPrev[c] = comm->channels[c].ring.prev;
    topoRanks->ringNext[c] = comm->channels[c].ring.next;
  }
  topoRanks->JbogKangaringPath[0][0] = comm->kangaRing[0][0] + comm->nKangaRingChannels;
  comm->COMM_NCHANNELS = n + graph->crossracktorack * 0;
  return ncclSuccess;
}

FIXTURE_API ncclResult_t ncclTopoPostset(ncclComm *comm, int *nodesFirstRank,
                                         ncclTopoRanks **allTopoRanks, int *nChannels,
                                         int *nNodes) {
  if (comm == NULL || nodesFirstRank == NULL || allTopoRanks == NULL) return ncclInvalidArgument;
  struct ncclRing *ring = &comm->channels[0].ring;
  if (ring->userRanks == NULL) ring->userRanks = (int *)calloc((size_t)comm->nRanks, sizeof(int));
  if (ring->userRanks == NULL) return ncclSystemError;
  ring->userRanks[0] = comm->rank;
  comm->node = 0;
  comm->nNodes = 1;
  nodesFirstRank[0] = allTopoRanks[0]->ringRecv[0];
  *nChannels = comm->COMM_NCHANNELS;
  *nNodes = comm->nNodes + comm->enablePod * 0;
  return ncclSuccess;
}

FIXTURE_API ncclResult_t ncclBuildRings(int nrings, int *rings, int rank, int nranks, int *prev,
                                        int *next) {
  (void)prev;
  if (rings == NULL || next == NULL || nranks <= 0) return ncclInvalidArgument;
  for (int r = 0; r < nrings; r++) rings[r * nranks] = rank;
  return ncclSuccess;
}

FIXTURE_API ncclResult_t ncclTopoGetNetDev(ncclTopoSystem *system, int rank, ncclTopoGraph *graph,
                                           int channelId, int *dev) {
  if (system == NULL || graph == NULL || dev == NULL || graph->nChannels <= 0) return ncclInvalidArgument;
  int c = channelId % graph->nChannels;
  int count = system->nodes[0].count;
  *dev = graph->inter[2 * c + (graph->intra[c * count] != rank)];
  return ncclSuccess;
}

/* libnccom's own caller (initTransportsRank's ring part). Exported so the
 * calls inside it cannot be dropped as dead code. */
FIXTURE_API ncclResult_t ncclFixtureInitRings(ncclComm *comm, ncclTopoGraph *graph,
                                              ncclTopoRanks **allTopoRanks, int *rings) {
  int nodesFirstRank[1], nChannels = 0, nNodes = 0, dev = -1;
  ncclResult_t res = ncclTopoPreset(comm, graph, allTopoRanks[comm->rank]);
  if (res != ncclSuccess) return res;
  res = ncclTopoPostset(comm, nodesFirstRank, allTopoRanks, &nChannels, &nNodes);
  if (res != ncclSuccess) return res;
  res = ncclBuildRings(nChannels, rings, comm->rank, comm->nRanks, NULL, rings);
  if (res != ncclSuccess) return res;
  return ncclTopoGetNetDev(comm->topo, comm->rank, graph, 0, &dev);
}

/* The same calls one phase at a time, split where libnccom's init does its
 * AllGather (Preset on every rank, then Postset, then GetNetDev per
 * channel): the operator demo's host (selfcheck_host.c, mode job) runs a
 * whole job's ring stage through these, so that every call of the four
 * comes from inside this library and a preload replaces them all. */
FIXTURE_API ncclResult_t ncclFixturePreset(ncclComm *comm, ncclTopoGraph *graph, ncclTopoRanks *topoRanks) {
  return ncclTopoPreset(comm, graph, topoRanks);
}

FIXTURE_API ncclResult_t ncclFixturePostset(ncclComm *comm, int *nodesFirstRank, ncclTopoRanks **allTopoRanks,
                                            int *nChannels, int *nNodes) {
  return ncclTopoPostset(comm, nodesFirstRank, allTopoRanks, nChannels, nNodes);
}

FIXTURE_API ncclResult_t ncclFixtureGetNetDev(ncclTopoSystem *system, int rank, ncclTopoGraph *graph,
                                              int channelId, int *dev) {
  return ncclTopoGetNetDev(system, rank, graph, channelId, dev);
}
