/*
 * cluster.h - a simulated cluster for libnrt-style hosts of the ring stage.
 *
 * A cluster is nNodes nodes of localRanks[m] ranks each, numbered node-major
 * (cluster_new) or across nodes (cluster_new_numbered).
 * Each node has its own ncclTopoGraph (intra holds global ranks, indexed
 * [c * localRanks + i]) and its own ncclTopoSystem (nodes[0].count =
 * localRanks). cluster_run() drives the whole ring stage the way libnccom's
 * buildGraphTransportsRank does (spec §1): Preset on every rank, an in-memory
 * AllGather of the 960-byte fragments, Postset on every rank, then
 * GetNetDev for every rank and channel, through a table of entry points so
 * that any library exporting the four symbols can be driven.
 */
#ifndef NCCOMRING_TESTS_CLUSTER_H
#define NCCOMRING_TESTS_CLUSTER_H

#include <stddef.h>

#include "nccom_ring.h"

/* The four entry points' types, for a host that finds them with dlsym. */
typedef ncclResult_t (*ring_preset_fn)(struct ncclComm *, struct ncclTopoGraph *, struct ncclTopoRanks *);
typedef ncclResult_t (*ring_postset_fn)(struct ncclComm *, int *, struct ncclTopoRanks **, int *, int *);
typedef ncclResult_t (*ring_build_rings_fn)(int, int *, int, int, int *, int *);
typedef ncclResult_t (*ring_get_net_dev_fn)(struct ncclTopoSystem *, int, struct ncclTopoGraph *, int, int *);

/* The four entry points of one library. */
struct ring_api {
  ring_preset_fn preset;
  ring_postset_fn postset;
  ring_build_rings_fn build_rings;
  ring_get_net_dev_fn get_net_dev;
};

/* The entry points this program was linked against. */
extern const struct ring_api linked_ring_api;

struct cluster {
  int nNodes;
  int nRanks;
  int *localRanks;               /* [nNodes] */
  int *firstRank;                /* [nNodes] global rank of each node's local rank 0 */
  struct ncclTopoGraph **graphs; /* [nNodes] */
  struct ncclTopoSystem *systems;/* [nNodes] */
  int enablePod;                 /* copied into every comm */
  int nKangaRingChannels;        /* copied into every comm, with kangaRing rows (see stage_run) */
  int switchV1;                  /* the platform is TRN3-SwitchV1: stage_check expects kangaRing */
  /* D25: when network, stage_run sets NCCOM_RING_NODE_ORDER=network for
   * every rank's Preset; locations[m] (NULL: none), when set, is node m's
   * NCCOM_RING_LOCATION. Both are unset again after the Presets. */
  int network;
  const char **locations;        /* [nNodes] or NULL; not owned */
  /* Rank numbering across nodes (cluster_new_numbered); all NULL for the
   * node-major clusters of cluster_new. */
  int numbering;                 /* enum cluster_numbering */
  int *nodeOf;                   /* [nRanks] the node of each global rank */
  int *localOf;                  /* [nRanks] its local index on that node */
  int *rankAt;                   /* [nRanks] node m's local index i is rankAt[slot[m] + i] */
  int *slot;                     /* [nNodes] localRanks[0] + ... + localRanks[m-1] */
  /* When set, stage_run calls it after each rank of each of its per-rank
   * loops (call: "Preset", "Postset" or "GetNetDev"; done of total ranks),
   * so that a host simulating thousands of ranks can say how far it is;
   * NULL (cluster_new's) for none. */
  void (*progress)(const char *call, int done, int total);
};


/* Allocates a cluster of nNodes nodes with localRanks[m] ranks (graphs
 * zeroed, pattern RING). Returns NULL when out of memory. */
struct cluster *cluster_new(int nNodes, const int *localRanks);
void cluster_free(struct cluster *cl);

/* How global ranks are spread over nodes. Real launchers need not number
 * ranks node-major; the ring stage must not care (D8: nodes are numbered in
 * order of first appearance over ranks 0..nRanks-1, keyed by each
 * fragment's channel-0 head). */
enum cluster_numbering {
  CLUSTER_NODE_MAJOR = 0,  /* node m holds firstRank[m] .. firstRank[m] + localRanks[m] - 1 */
  CLUSTER_ROUND_ROBIN = 1, /* ranks dealt to the nodes in turn, skipping full nodes: with
                            * equal nodes rank r is node r % nNodes's local index r / nNodes */
  CLUSTER_PERMUTED = 2,    /* a random permutation (from seed) of the ranks over the
                            * (node, local index) slots */
  CLUSTER_NUMBERINGS
};

/* cluster_new with ranks numbered by numbering (enum cluster_numbering;
 * seed is used by CLUSTER_PERMUTED only). CLUSTER_NODE_MAJOR is exactly
 * cluster_new. firstRank[m] stays the global rank of node m's local index 0,
 * but only a node-major cluster has local index i at firstRank[m] + i: use
 * cluster_rank. stage_run and stage_check take any numbering. Returns NULL
 * when out of memory or numbering is unknown. */
struct cluster *cluster_new_numbered(int nNodes, const int *localRanks, int numbering,
                                     unsigned long long seed);

/* The node a global rank belongs to. */
int cluster_node_of(const struct cluster *cl, int rank);
/* The global rank of node m's local index i, and the local index of a rank. */
int cluster_rank(const struct cluster *cl, int m, int i);
int cluster_local_of(const struct cluster *cl, int rank);
/* The node numbers D8 gives the cluster's nodes: index[m] is node m's place
 * in order of first appearance over ranks 0..nRanks-1 (index has room for
 * nNodes ints). The identity when node-major. */
void cluster_node_order(const struct cluster *cl, int *index);

/* Sets channel c of every node from a local order (local indices, length
 * localRanks of that node, which must all be equal to len; each index is
 * mapped to its global rank with cluster_rank) and the channel's entry/exit
 * NICs (-1 for none). */
void cluster_set_channel(struct cluster *cl, int c, const int *localOrder, int len, int nicIn,
                         int nicOut);
/* Sets graph->nChannels on every node. */
void cluster_set_nchannels(struct cluster *cl, int nChannels);

/* The embedded default: nNodes trn1.32xlarge-like nodes of 32 NeuronCores
 * and 8 EFA NICs (NIC k serves cores 4k..4k+3), 8 ring channels with
 * distinct intra orders: channel c starts at core 4c and runs forward for even
 * c, backward for odd c; it enters on the head's NIC and leaves on the tail's. */
struct cluster *cluster_default(int nNodes);
/* The same with cores (1..256) ranks a node: min(8, cores) NICs, core i on
 * NIC i * NICs / cores, channel c starting at core c * cores / 8.
 * cluster_default(n) is cluster_default_sized(n, 32). */
struct cluster *cluster_default_sized(int nNodes, int cores);

/* 2 nodes x 4 ranks with `channels` graph channels, channel c in the local
 * order rotated by c (c, c + 1, ... mod 4), its NICs c % 8 in and
 * (c + outStep) % 8 out: more channels than the 16 a graph usually has
 * (the doubling past 32 of D6 and D10). */
struct cluster *cluster_rotated_2x4(int channels, int outStep);

/* Loads the RING graph (pattern 4) of an NCCL_GRAPH_FILE and applies it to
 * every one of nNodes nodes (graph_xml.c). Writes a message to err and
 * returns NULL on failure. */
struct cluster *cluster_from_graph_file(const char *path, int nNodes, char *err, size_t errlen);

/* The outcome of one ring stage over a cluster. */
struct stage {
  int nRanks;
  struct ncclComm **comms;          /* [nRanks], calloc'ed */
  struct ncclTopoRanks *fragments;  /* [nRanks], the AllGather buffer */
  struct ncclTopoRanks **all;       /* [nRanks] pointers into fragments */
  int *nodesFirstRank;              /* [nRanks * nRanks] each rank's own array */
  int *nChannels;                   /* [nRanks] Postset out-parameter */
  int *nNodes;                      /* [nRanks] Postset out-parameter */
  int *netDev;                      /* [nRanks * MAXCHANNELS] */
  ncclResult_t failedResult;        /* first failure, ncclSuccess if none */
  char failure[512];                /* which call failed on which rank */
};

/* Runs the ring stage through api. Returns 0 when every call succeeded;
 * otherwise fills st->failedResult/failure and returns -1. The stage must be
 * released with stage_free either way. */
int stage_run(const struct ring_api *api, const struct cluster *cl, struct stage *st);
void stage_free(struct stage *st);

/* Checks the global invariants of a finished stage: every channel one
 * Hamiltonian cycle; r.next == s exactly when s.prev == r; userRanks[0] ==
 * rank and userRanks is the walk along next; nChannels == min(2n, 32) and the
 * doubled channels repeat the first half; every rank agrees on nNodes and
 * nodesFirstRank, which lists each node's channel-0 head in D8's node order
 * (cluster_node_order), and comm->node is the rank's node in that order; the NIC of every channel follows the head/direction rule
 * (spec §5); on SwitchV1, kangaRing[k][4v..4v+3] is rank v's row k, 0..3
 * (D13). Returns the number of violations and prints each to stderr
 * (at most 20). */
int stage_check(const struct cluster *cl, const struct stage *st);

/* D25 over cl->locations (all 0 without them): the deepest location's
 * level count; the groups at level (1-based: distinct prefixes of that many
 * names, nodes without a location one group); and the edges of channel c's
 * ring (rank 0's userRanks, the wrap-around edge included) whose two ranks'
 * nodes differ at that level. */
int cluster_location_depth(const struct cluster *cl);
int cluster_location_groups(const struct cluster *cl, int level);
int stage_crossings(const struct cluster *cl, const struct stage *st, int c, int level);

#endif
