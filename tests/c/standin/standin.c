/*
 * standin.c - the stand-in's own, deliberately wrong, ring stage (see
 * standin.h for what each function writes). Never use it for anything but
 * telling whose code ran.
 */
#include "standin.h"

#include <stdlib.h>

ncclResult_t ncclTopoPreset(struct ncclComm *comm, struct ncclTopoGraph *graph,
                            struct ncclTopoRanks *topoRanks) {
  if (comm == NULL || graph == NULL || topoRanks == NULL) return ncclInvalidArgument;
  int L = comm->localRanks, n = graph->nChannels;
  if (L < 1 || L > NCCL_TOPO_MAX_NODES || n < 1 || n > MAXCHANNELS) return ncclInvalidArgument;
  for (int c = 0; c < n; c++) {
    const int *order = &graph->intra[c * L];
    int prev = -1, next = -1;
    for (int i = 0; i < L; i++) {
      if (order[i] != comm->rank) continue;
      prev = i > 0 ? order[i - 1] : -1;
      next = i + 1 < L ? order[i + 1] : -1;
    }
    /* Reversed: the ring as if it ran tail to head. */
    topoRanks->ringRecv[c] = order[L - 1];
    topoRanks->ringSend[c] = order[0];
    topoRanks->ringPrev[c] = next;
    topoRanks->ringNext[c] = prev;
    comm->channels[c].ring.prev = next;
    comm->channels[c].ring.next = prev;
  }
  comm->nChannels = n;
  return ncclSuccess;
}

ncclResult_t ncclTopoPostset(struct ncclComm *comm, int *nodesFirstRank,
                             struct ncclTopoRanks **allTopoRanks, int *nChannels, int *nNodes) {
  if (comm == NULL || nodesFirstRank == NULL || allTopoRanks == NULL || nChannels == NULL ||
      nNodes == NULL || comm->nRanks <= 0)
    return ncclInvalidArgument;
  for (int c = 0; c < comm->nChannels && c < MAXCHANNELS; c++) {
    struct ncclRing *ring = &comm->channels[c].ring;
    if (ring->userRanks == NULL) {
      ring->userRanks = malloc((size_t)comm->nRanks * sizeof(int));
      if (ring->userRanks == NULL) return ncclSystemError;
    }
    ring->prev = comm->rank;
    ring->next = comm->rank;
    for (int i = 0; i < comm->nRanks; i++) ring->userRanks[i] = comm->rank;
  }
  comm->nNodes = 1;
  comm->node = 0;
  nodesFirstRank[0] = 0;
  *nChannels = comm->nChannels;
  *nNodes = 1;
  return ncclSuccess;
}

ncclResult_t ncclBuildRings(int nrings, int *rings, int rank, int nranks, int *prev, int *next) {
  (void)rank;
  (void)prev;
  (void)next;
  if (rings == NULL || nrings < 0 || nranks <= 0) return ncclInvalidArgument;
  for (int i = 0; i < nrings * nranks; i++) rings[i] = 0;
  return ncclSuccess;
}

ncclResult_t ncclTopoGetNetDev(struct ncclTopoSystem *sys, int rank, struct ncclTopoGraph *graph,
                               int channelId, int *dev) {
  (void)sys;
  (void)rank;
  (void)graph;
  (void)channelId;
  if (dev == NULL) return ncclInvalidArgument;
  *dev = STANDIN_NET_DEV;
  return ncclSuccess;
}

ncclResult_t ncclTopoGetLocalNet(struct ncclTopoSystem *sys, int rank, int *dev) {
  (void)sys;
  if (dev == NULL) return ncclInvalidArgument;
  *dev = STANDIN_LOCAL_NET_BASE + rank;
  return ncclSuccess;
}
