/*
 * standin.h - the stand-in libnccom (build/libnccom-standin.so).
 *
 * The stand-in plays the role of a libnccom build that exports the four
 * ring-stage functions in .dynsym and calls them through its own PLT
 * (default -fPIC, no -Bsymbolic, default visibility). Its own four
 * implementations are deliberately WRONG and recognizable (standin.c), so a
 * test can tell whose code ran:
 *
 *   ncclTopoPreset    writes the reversed fragment: ringRecv/ringSend and
 *                     ringPrev/ringNext swapped, prev/next swapped in the comm;
 *                     comm->nChannels = graph->nChannels (no doubling)
 *   ncclTopoPostset   returns ncclSuccess but writes prev = next = rank and
 *                     userRanks all = rank on channels [0, comm->nChannels),
 *                     nNodes = 1, node = 0, nodesFirstRank[0] = 0, and
 *                     *nChannels = comm->nChannels (no doubling)
 *   ncclBuildRings    writes zeros, returns ncclSuccess
 *   ncclTopoGetNetDev *dev = STANDIN_NET_DEV (99), ncclSuccess, whatever the graph
 *
 * It also exports ncclTopoGetLocalNet (*dev = STANDIN_LOCAL_NET_BASE + rank),
 * the D19 fallback a real libnccom provides, and a driver that runs the ring
 * stage from inside the library (standin_driver.c), like libnccom's
 * buildGraphTransportsRank: its calls go through the PLT, so an LD_PRELOADed
 * definition wins there too.
 */
#ifndef NCCOMRING_TESTS_STANDIN_H
#define NCCOMRING_TESTS_STANDIN_H

#include "cluster.h"

#define STANDIN_NET_DEV 99
#define STANDIN_LOCAL_NET_BASE 1000

ncclResult_t ncclTopoGetLocalNet(struct ncclTopoSystem *sys, int rank, int *dev);

/* Runs the whole ring stage over cl the way stage_run does (same
 * allocations, same call order: Preset on every rank, the AllGather,
 * Postset on every rank, GetNetDev for every rank and channel), but from
 * inside the stand-in, calling ncclTopoPreset, ncclTopoPostset and
 * ncclTopoGetNetDev by name. Returns 0 or -1 like stage_run; release st with
 * stage_free. */
int standinBuildGraphTransports(const struct cluster *cl, struct stage *st);

/* Call ncclBuildRings / ncclTopoGetNetDev by name from inside the stand-in
 * (e.g. ncclTopoGetNetDev with graph == NULL, as libnccom's own net
 * transport setup does). */
ncclResult_t standinCallBuildRings(int nrings, int *rings, int rank, int nranks, int *prev,
                                   int *next);
ncclResult_t standinCallGetNetDev(struct ncclTopoSystem *sys, int rank,
                                  struct ncclTopoGraph *graph, int channelId, int *dev);

#endif
