/*
 * standin_driver.c - the stand-in's internal caller of the ring stage, in the
 * shape of libnccom's buildGraphTransportsRank (spec §1). It is a separate
 * translation unit from standin.c, as init.cc is from graph/connect.cc in
 * NCCL, and the library is built with plain -fPIC -shared: every call below
 * to ncclTopoPreset, ncclTopoPostset, ncclTopoGetNetDev and ncclBuildRings
 * goes through the stand-in's PLT (R_X86_64_JUMP_SLOT relocations; the test
 * checks them with readelf -r and objdump -d), so the dynamic linker resolves
 * it, and an LD_PRELOADed definition wins over standin.c's.
 */
#include "standin.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int node_of(const struct cluster *cl, int rank) {
  for (int m = cl->nNodes - 1; m >= 0; m--)
    if (rank >= cl->firstRank[m]) return m;
  return -1;
}

static int fail(struct stage *st, ncclResult_t res, const char *what, int rank) {
  st->failedResult = res;
  snprintf(st->failure, sizeof st->failure, "%s on rank %d returned %d", what, rank, (int)res);
  return -1;
}

int standinBuildGraphTransports(const struct cluster *cl, struct stage *st) {
  int n = cl->nRanks;
  size_t nn = (size_t)n;
  memset(st, 0, sizeof *st);
  st->nRanks = n;
  st->comms = calloc(nn, sizeof *st->comms);
  st->fragments = calloc(nn, sizeof *st->fragments);
  st->all = calloc(nn, sizeof *st->all);
  st->nodesFirstRank = calloc(nn * nn, sizeof(int));
  st->nChannels = calloc(nn, sizeof(int));
  st->nNodes = calloc(nn, sizeof(int));
  st->netDev = calloc(nn * MAXCHANNELS, sizeof(int));
  if (!st->comms || !st->fragments || !st->all || !st->nodesFirstRank || !st->nChannels ||
      !st->nNodes || !st->netDev)
    return fail(st, ncclSystemError, "host allocation", -1);
  for (int r = 0; r < n; r++) {
    int m = node_of(cl, r);
    struct ncclComm *comm = calloc(1, sizeof *comm);
    if (comm == NULL) return fail(st, ncclSystemError, "host allocation", r);
    comm->rank = r;
    comm->nRanks = n;
    comm->localRanks = cl->localRanks[m];
    comm->topo = &cl->systems[m];
    comm->enablePod = cl->enablePod;
    st->comms[r] = comm;
  }

  struct ncclTopoRanks *own = calloc(nn, sizeof *own);
  if (own == NULL) return fail(st, ncclSystemError, "host allocation", -1);
  for (int r = 0; r < n; r++) {
    ncclResult_t res = ncclTopoPreset(st->comms[r], cl->graphs[node_of(cl, r)], &own[r]);
    if (res != ncclSuccess) {
      free(own);
      return fail(st, res, "ncclTopoPreset", r);
    }
  }
  memcpy(st->fragments, own, nn * sizeof *own); /* the bootstrap AllGather */
  free(own);
  for (int r = 0; r < n; r++) st->all[r] = &st->fragments[r];

  for (int r = 0; r < n; r++) {
    ncclResult_t res = ncclTopoPostset(st->comms[r], &st->nodesFirstRank[(size_t)r * nn], st->all,
                                       &st->nChannels[r], &st->nNodes[r]);
    if (res != ncclSuccess) return fail(st, res, "ncclTopoPostset", r);
  }

  for (int r = 0; r < n; r++) {
    int m = node_of(cl, r);
    for (int c = 0; c < st->comms[r]->nChannels; c++) {
      ncclResult_t res = ncclTopoGetNetDev(st->comms[r]->topo, r, cl->graphs[m], c,
                                           &st->netDev[r * MAXCHANNELS + c]);
      if (res != ncclSuccess) return fail(st, res, "ncclTopoGetNetDev", r);
    }
  }
  return 0;
}

ncclResult_t standinCallBuildRings(int nrings, int *rings, int rank, int nranks, int *prev,
                                   int *next) {
  return ncclBuildRings(nrings, rings, rank, nranks, prev, next);
}

ncclResult_t standinCallGetNetDev(struct ncclTopoSystem *sys, int rank,
                                  struct ncclTopoGraph *graph, int channelId, int *dev) {
  return ncclTopoGetNetDev(sys, rank, graph, channelId, dev);
}
