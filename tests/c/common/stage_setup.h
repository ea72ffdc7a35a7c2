/*
 * stage_setup.h - what every driver of the ring stage does around the four
 * calls: allocate a stage, give each rank a zeroed communicator set up as
 * libnrt would, and AllGather the fragments. Header-only (static inline) so
 * that the stand-in libnccom can compile it in without exporting it.
 */
#ifndef NCCOMRING_TESTS_STAGE_SETUP_H
#define NCCOMRING_TESTS_STAGE_SETUP_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cluster.h"

static inline int stage_node_of(const struct cluster *cl, int rank) {
  for (int m = cl->nNodes - 1; m >= 0; m--)
    if (rank >= cl->firstRank[m]) return m;
  return -1;
}

/* The kangaRing rows stage_setup gives each rank: row k of rank r holds the
 * ring segment (r + k + i) % nRanks, i < 64, as a rotated path. */
static inline int cluster_kanga_value(int nRanks, int rank, int k, int i) {
  return (rank + k + i) % nRanks;
}

/* Records the first failure of a stage; rank -1 for the host's own. */
static inline int stage_fail(struct stage *st, ncclResult_t res, const char *what, int rank) {
  st->failedResult = res;
  if (rank < 0)
    snprintf(st->failure, sizeof st->failure, "%s failed", what);
  else
    snprintf(st->failure, sizeof st->failure,
             "%s on rank %d returned %d", what, rank,
             (int)res);
  return -1;
}

/* Sets a zeroed communicator up as libnrt would for rank r of cl (node-major,
 * stage_node_of): rank, nRanks, localRanks, topo, enablePod and the kangaRing
 * rows of cluster_kanga_value. One process per rank (tests/mpi) calls it for
 * its own rank only. */
static inline void stage_comm_init(const struct cluster *cl, int r, struct ncclComm *comm) {
  int m = stage_node_of(cl, r);
  comm->rank = r;
  comm->nRanks = cl->nRanks;
  comm->localRanks = cl->localRanks[m];
  comm->topo = &cl->systems[m];
  comm->enablePod = cl->enablePod;
  comm->nKangaRingChannels = cl->nKangaRingChannels;
  for (int k = 0; k < MAX_KANGA_PATHS; k++)
    for (int i = 0; i < NCCOM_RING_KANGA_WIDTH; i++)
      comm->kangaRing[k][i] = cluster_kanga_value(cl->nRanks, r, k, i);
}

/* Zeroes st and allocates its arrays for n ranks (comms[] all NULL, every
 * array zeroed). Returns 0, or -1 when out of memory (what was allocated is
 * released by stage_free). */
static inline int stage_alloc(struct stage *st, int n) {
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
    return -1;
  return 0;
}

/* Allocates st for cl and one zeroed communicator per rank, set up by
 * stage_comm_init. Returns 0, or -1 with st->failure set. */
static inline int stage_setup(const struct cluster *cl, struct stage *st) {
  int n = cl->nRanks;
  if (stage_alloc(st, n) != 0) return stage_fail(st, ncclSystemError, "host allocation", -1);
  for (int r = 0; r < n; r++) {
    struct ncclComm *comm = calloc(1, sizeof *comm);
    if (comm == NULL) return stage_fail(st, ncclSystemError, "host allocation", -1);
    stage_comm_init(cl, r, comm);
    st->comms[r] = comm;
  }
  return 0;
}

/* The bootstrap AllGather: every rank receives every rank's 960 bytes. */
static inline void stage_gather(struct stage *st, const struct ncclTopoRanks *own) {
  memcpy(st->fragments, own, (size_t)st->nRanks * sizeof *own);
  for (int r = 0; r < st->nRanks; r++) st->all[r] = &st->fragments[r];
}

#endif
