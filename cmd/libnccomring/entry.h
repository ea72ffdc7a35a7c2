/*
 * entry.h - libnccomring's internal entry points for its preload shim.
 *
 * build/libnccomring.so exports, beside the four ring-stage functions, the
 * same four with one leading argument: caller, a code address inside the
 * object that called the ring-stage function. The library looks the host's
 * hooks up in that object (docs/abi-notes.md, P18). The public functions pass their own
 * return address; the preload shim (build/libnccomring-preload.so), which
 * loads the library at the first call, passes the return address its own
 * caller gave it. Not for hosts: call the four public functions.
 */
#ifndef NCCOMRING_ENTRY_H
#define NCCOMRING_ENTRY_H

#include "nccom_ring.h"

#ifdef __cplusplus
extern "C" {
#endif

ncclResult_t nccomring_topo_preset_from(void *caller, struct ncclComm *comm,
                                        struct ncclTopoGraph *graph,
                                        struct ncclTopoRanks *topoRanks);
ncclResult_t nccomring_topo_postset_from(void *caller, struct ncclComm *comm,
                                         int *nodesFirstRank,
                                         struct ncclTopoRanks **allTopoRanks, int *nChannels,
                                         int *nNodes);
ncclResult_t nccomring_build_rings_from(void *caller, int nrings, int *rings, int rank,
                                        int nranks, int *prev, int *next);
ncclResult_t nccomring_topo_get_net_dev_from(void *caller, struct ncclTopoSystem *sys, int rank,
                                             struct ncclTopoGraph *graph, int channelId,
                                             int *dev);

#ifdef __cplusplus
}
#endif

#endif
