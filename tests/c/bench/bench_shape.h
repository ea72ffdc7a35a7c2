/*
 * bench_shape.h - the cluster shape of the C benchmarks (bench.c,
 * footprint.c): nodes of LOCAL ranks, CHANNELS graph channels, DOUBLED
 * after doubling.
 */
#ifndef NCCOMRING_BENCH_SHAPE_H
#define NCCOMRING_BENCH_SHAPE_H
#include "nccom_ring.h"

enum { LOCAL = 32, CHANNELS = 16, DOUBLED = 32 };

/* Node first's graph: channel c runs the node's ranks rotated by c, reversed
 * on odd channels; NIC c % 8 in and out. */
static inline void node_graph(struct ncclTopoGraph *g, int first) {
  g->nChannels = CHANNELS;
  for (int c = 0; c < CHANNELS; c++) {
    for (int i = 0; i < LOCAL; i++) {
      int v = c % 2 ? (c + LOCAL - i) % LOCAL : (c + i) % LOCAL;
      g->intra[c * LOCAL + i] = first + v;
    }
    g->inter[2 * c] = g->inter[2 * c + 1] = c % 8;
  }
}

#endif
