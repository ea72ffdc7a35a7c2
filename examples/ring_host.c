/*
 * ring_host.c - a minimal libnrt-style host of libnccomring, as a tutorial.
 *
 * It plays every rank of a small cluster in one process, the way libnccom's
 * driver runs the ring stage on each rank of a job (spec §1):
 *
 *   1. every rank: ncclTopoPreset(comm, graph of its node, &fragment)
 *   2. AllGather of the 960-byte fragments (here: one array in memory)
 *   3. every rank: ncclTopoPostset(comm, nodesFirstRank, allTopoRanks, ...)
 *   4. every rank and channel: ncclTopoGetNetDev(sys of its node, rank, graph, c, &dev)
 *
 * then checks that the result is the ring it must be and frees what
 * Postset allocated. Build and run it with `make test-example`; the
 * docs/abi-notes.md's "Using it from C" walks through it.
 *
 * "spec" is docs/spec/ring-construction.txt, D1..D24 are the decisions in
 * docs/spec/DECISIONS.md, and the error texts are in docs/errors.md (set
 * NCCL_DEBUG=WARN to see them; the library prints nothing by default, D21).
 */
#include <stdio.h>
#include <stdlib.h>

#include "nccom_ring.h"

/* The cluster: 2 nodes of 4 ranks, numbered node-major (node m holds ranks
 * 4m .. 4m+3), and a searched ring graph of 2 channels on each node. */
enum { N_NODES = 2, LOCAL_RANKS = 4, N_RANKS = N_NODES * LOCAL_RANKS, GRAPH_CHANNELS = 2 };

/* The NICs of channel c: it enters each node on ENTRY_NIC[c] and leaves it on
 * EXIT_NIC[c] (graph->inter[2c], graph->inter[2c+1]). Different on purpose,
 * so that the output shows GetNetDev's direction rule (spec §5, D18). */
static const int ENTRY_NIC[GRAPH_CHANNELS] = {0, 1};
static const int EXIT_NIC[GRAPH_CHANNELS] = {1, 0};

/* The order in which channel c visits the local ranks of a node: channel 0
 * goes 0 1 2 3, channel 1 starts one further along, 1 2 3 0. */
static int local_index(int c, int i) { return (c + i) % LOCAL_RANKS; }

static int fail(const char *what, int rank, int c, int got, int want) {
  fprintf(stderr, "ring_host: rank %d channel %d: %s is %d, expected %d\n", rank, c, what, got,
          want);
  return 1;
}

/* Checks rank comm->rank after Postset against what a ring must be, calls
 * ncclTopoGetNetDev for each of its channels and prints channel 0. Returns 0
 * when everything holds, 1 otherwise (with a line on stderr). */
static int check_rank(struct ncclComm *comm, struct ncclTopoGraph *const graphs[N_NODES],
                      struct ncclTopoSystem *sys, const int *nodesFirstRank, int nChannels,
                      int nNodes) {
  int r = comm->rank, node = r / LOCAL_RANKS;
  /* Postset's outputs: the doubled channel count (D10: 2 -> 4) in
   * *nChannels and comm->nChannels, the node count and this rank's node. */
  if (nChannels != 2 * GRAPH_CHANNELS) return fail("*nChannels", r, -1, nChannels, 4);
  if (comm->nChannels != nChannels) return fail("comm->nChannels", r, -1, comm->nChannels, 4);
  if (nNodes != N_NODES) return fail("*nNodes", r, -1, nNodes, N_NODES);
  if (comm->nNodes != N_NODES) return fail("comm->nNodes", r, -1, comm->nNodes, N_NODES);
  if (comm->node != node) return fail("comm->node", r, -1, comm->node, node);
  /* nodesFirstRank[m]: node m's channel-0 head, its local rank 0 here (D8). */
  for (int m = 0; m < N_NODES; m++)
    if (nodesFirstRank[m] != m * LOCAL_RANKS)
      return fail("nodesFirstRank[m]", r, 0, nodesFirstRank[m], m * LOCAL_RANKS);

  for (int c = 0; c < comm->nChannels; c++) {
    int gc = c % GRAPH_CHANNELS; /* the doubled channels repeat the graph's (D10) */
    /* The ring of graph channel gc: node 0's intra slice, then node 1's,
     * and back to node 0's head (D9). order[] is that ring, pos is r in it. */
    int order[N_RANKS], pos = -1, dev = -1;
    for (int m = 0; m < N_NODES; m++)
      for (int i = 0; i < LOCAL_RANKS; i++) {
        order[m * LOCAL_RANKS + i] = graphs[m]->intra[gc * LOCAL_RANKS + i];
        if (order[m * LOCAL_RANKS + i] == r) pos = m * LOCAL_RANKS + i;
      }
    if (pos < 0) return fail("position in the ring", r, c, pos, 0);
    const struct ncclRing *ring = &comm->channels[c].ring;
    int want_prev = order[(pos + N_RANKS - 1) % N_RANKS];
    int want_next = order[(pos + 1) % N_RANKS];
    if (ring->prev != want_prev) return fail("prev", r, c, ring->prev, want_prev);
    if (ring->next != want_next) return fail("next", r, c, ring->next, want_next);
    /* userRanks: nRanks ints, the ring's traversal starting at this rank (D12). */
    if (ring->userRanks == NULL) return fail("userRanks != NULL", r, c, 0, 1);
    for (int i = 0; i < N_RANKS; i++)
      if (ring->userRanks[i] != order[(pos + i) % N_RANKS])
        return fail("userRanks[i]", r, c, ring->userRanks[i], order[(pos + i) % N_RANKS]);

    /* The NIC (spec §5, D18): dev = inter[2c' + (intra[c' * count] != rank)]
     * with c' = c % graph->nChannels and count = sys->nodes[0].count: the
     * channel's head on this node uses the entry NIC, every other rank the
     * exit NIC. */
    ncclResult_t res = ncclTopoGetNetDev(sys, r, graphs[node], c, &dev);
    if (res != ncclSuccess) return fail("ncclTopoGetNetDev's result", r, c, (int)res, 0);
    int head = graphs[node]->intra[gc * LOCAL_RANKS];
    int want_dev = head == r ? ENTRY_NIC[gc] : EXIT_NIC[gc];
    if (dev != want_dev) return fail("NIC", r, c, dev, want_dev);
    if (c == 0)
      printf("rank %d (node %d): channel 0 prev %d next %d NIC %d\n", r, comm->node, ring->prev,
             ring->next, dev);
  }
  return 0;
}

int main(void) {
  struct ncclComm *comms[N_RANKS] = {0};
  struct ncclTopoGraph *graphs[N_NODES] = {0};
  struct ncclTopoSystem systems[N_NODES];
  struct ncclTopoRanks *gathered = NULL;
  struct ncclTopoRanks *allTopoRanks[N_RANKS];
  int nodesFirstRank[N_RANKS][N_RANKS];
  int nChannels[N_RANKS], nNodes[N_RANKS];
  int status = 1;
  ncclResult_t res;

  /* Step 0a: one graph and one system per node (what libnccom's topology
   * search hands the ring stage). Allocated zeroed: 33080 bytes, too big for
   * the stack. Only nChannels, intra and inter are read (header); pattern is
   * set as the search would (NCCL_TOPO_PATTERN_RING, the only pattern the
   * fork builds, spec §1), but nothing checks it. */
  for (int m = 0; m < N_NODES; m++) {
    struct ncclTopoGraph *g = calloc(1, sizeof *g);
    if (g == NULL) goto nomem;
    graphs[m] = g;
    g->pattern = NCCL_TOPO_PATTERN_RING;
    g->nChannels = GRAPH_CHANNELS; /* 1..32, and nChannels x localRanks <= 8192 (D4) */
    for (int c = 0; c < GRAPH_CHANNELS; c++) {
      /* intra[c * localRanks + i]: the i-th rank channel c visits on this
       * node, as a GLOBAL rank (D5). intra[c * localRanks] is the channel's
       * head on this node: it receives from the previous node. */
      for (int i = 0; i < LOCAL_RANKS; i++)
        g->intra[c * LOCAL_RANKS + i] = m * LOCAL_RANKS + local_index(c, i);
      g->inter[2 * c] = ENTRY_NIC[c];
      g->inter[2 * c + 1] = EXIT_NIC[c];
    }
    /* GetNetDev reads only nodes[0].count: it must be this node's localRanks,
     * the stride of intra (D18). The library cannot check this promise. */
    systems[m].nodes[0].count = LOCAL_RANKS;
  }

  /* Step 0b: one zeroed communicator per rank (D3: a prefix view; libnccom
   * allocates the real one). Preset and Postset read rank, nRanks and
   * localRanks; zero leaves enablePod off (D15) and nKangaRingChannels at 0
   * (no kangaRing, D7/D13). comm->topo is not read: leave it NULL. */
  for (int r = 0; r < N_RANKS; r++) {
    struct ncclComm *comm = calloc(1, sizeof *comm);
    if (comm == NULL) goto nomem;
    comms[r] = comm;
    comm->rank = r;
    comm->nRanks = N_RANKS;
    comm->localRanks = LOCAL_RANKS;
  }

  /* Step 1: Preset on every rank, each into its slot of the AllGather buffer
   * (one 960-byte ncclTopoRanks per rank). Preset writes the rank's
   * fragment (ringRecv/ringSend/ringPrev/ringNext; -1 past the graph's
   * channels, D23), its own channels[c].ring.prev/next (-1 at a node's
   * ends, for Postset to stitch), copies channels [n, 2n) from [0, n) (D6)
   * and sets comm->nChannels = n (D4). */
  gathered = calloc(N_RANKS, sizeof *gathered);
  if (gathered == NULL) goto nomem;
  for (int r = 0; r < N_RANKS; r++) {
    res = ncclTopoPreset(comms[r], graphs[r / LOCAL_RANKS], &gathered[r]);
    if (res != ncclSuccess) {
      fprintf(stderr, "ring_host: ncclTopoPreset on rank %d returned %d\n", r, (int)res);
      goto out;
    }
  }

  /* Step 2: the AllGather. In a job every rank receives every rank's
   * fragment; here they already sit in one array, so allTopoRanks[v] just
   * points at rank v's (D8: an array of nRanks pointers). */
  for (int v = 0; v < N_RANKS; v++) allTopoRanks[v] = &gathered[v];

  /* Step 3: Postset on every rank, on the same fragments (D24: every rank
   * reaches the same verdict). It finds the nodes (nodesFirstRank[m] = node
   * m's channel-0 head, D8), stitches the nodes into rings (D9), doubles
   * the channels (D10: 2 -> 4) and writes this rank's prev/next and
   * userRanks for every channel. userRanks is NULL here, so Postset mallocs
   * nRanks ints per channel; the host owns them and frees them with free()
   * (D12). All-or-nothing: on error nothing is written (D11). */
  for (int r = 0; r < N_RANKS; r++) {
    res = ncclTopoPostset(comms[r], nodesFirstRank[r], allTopoRanks, &nChannels[r], &nNodes[r]);
    if (res != ncclSuccess) {
      fprintf(stderr, "ring_host: ncclTopoPostset on rank %d returned %d\n", r, (int)res);
      goto out;
    }
  }

  /* Step 4: the NIC of every rank and channel, and the check of every
   * rank's wiring against the ring it must be (check_rank, above). */
  printf("ring_host: %d nodes x %d ranks, %d graph channels\n", N_NODES, LOCAL_RANKS,
         GRAPH_CHANNELS);
  for (int r = 0; r < N_RANKS; r++)
    if (check_rank(comms[r], graphs, &systems[r / LOCAL_RANKS], nodesFirstRank[r], nChannels[r],
                   nNodes[r]) != 0)
      goto out;
  printf("ring_host: %d channels on every rank, every ring and NIC as expected\n",
         comms[0]->nChannels);
  status = 0;
  goto out;

nomem:
  fprintf(stderr, "ring_host: out of memory\n");
out:
  /* Step 5: free what the host owns: the communicators and graphs it
   * allocated, the fragments, and the userRanks buffers Postset malloc'd
   * (D12; free(NULL) is fine for channels it did not reach). */
  for (int r = 0; r < N_RANKS; r++) {
    if (comms[r] == NULL) continue;
    for (int c = 0; c < MAXCHANNELS; c++) free(comms[r]->channels[c].ring.userRanks);
    free(comms[r]);
  }
  for (int m = 0; m < N_NODES; m++) free(graphs[m]);
  free(gathered);
  return status;
}
