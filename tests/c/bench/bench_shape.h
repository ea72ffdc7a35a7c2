/*
 * bench_shape.h - the cluster shape of the C benchmarks (bench.c,
 * footprint.c): nodes of LOCAL ranks (bench's node-order table also 1 and
 * 128), CHANNELS graph channels, DOUBLED after doubling.
 */
#ifndef NCCOMRING_BENCH_SHAPE_H
#define NCCOMRING_BENCH_SHAPE_H
#include "nccom_ring.h"

enum { LOCAL = 32, CHANNELS = 16, DOUBLED = 32 };

/* Node first's graph for nodes of local ranks: channel c runs the node's
 * ranks rotated by c, reversed on odd channels; NIC c % 8 in and out. */
static inline void node_graph_local(struct ncclTopoGraph *g, int first, int local) {
  g->nChannels = CHANNELS;
  for (int c = 0; c < CHANNELS; c++) {
    for (int i = 0; i < local; i++) {
      int v = c % 2 ? (c + local - i) % local : (c + i) % local;
      g->intra[c * local + i] = first + v;
    }
    g->inter[2 * c] = g->inter[2 * c + 1] = c % 8;
  }
}

/* The same graph for nodes of LOCAL ranks. */
static inline void node_graph(struct ncclTopoGraph *g, int first) { node_graph_local(g, first, LOCAL); }

#endif
