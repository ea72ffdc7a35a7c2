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
#include "stage_setup.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int standinBuildGraphTransports(const struct cluster *cl, struct stage *st) {
  if (stage_setup(cl, st) != 0) return -1;
  int n = cl->nRanks;

  struct ncclTopoRanks *own = calloc((size_t)n, sizeof *own);
  if (own == NULL) return stage_fail(st, ncclSystemError, "host allocation", -1);
  for (int r = 0; r < n; r++) {
    ncclResult_t res = ncclTopoPreset(st->comms[r], cl->graphs[stage_node_of(cl, r)], &own[r]);
    if (res != ncclSuccess) {
      free(own);
      return stage_fail(st, res, "ncclTopoPreset", r);
    }
  }
  stage_gather(st, own);
  free(own);

  for (int r = 0; r < n; r++) {
    ncclResult_t res = ncclTopoPostset(st->comms[r], &st->nodesFirstRank[(size_t)r * (size_t)n],
                                       st->all, &st->nChannels[r], &st->nNodes[r]);
    if (res != ncclSuccess) return stage_fail(st, res, "ncclTopoPostset", r);
  }

  for (int r = 0; r < n; r++) {
    int m = stage_node_of(cl, r);
    for (int c = 0; c < st->comms[r]->nChannels; c++) {
      ncclResult_t res = ncclTopoGetNetDev(st->comms[r]->topo, r, cl->graphs[m], c,
                                           &st->netDev[r * MAXCHANNELS + c]);
      if (res != ncclSuccess) return stage_fail(st, res, "ncclTopoGetNetDev", r);
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
