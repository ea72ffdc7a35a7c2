/*
 * faults - the fault catalogue through the C ABI of build/libnccomring.so
 * (issue 4; docs/errors.md; D4-D20).
 *
 * Every row is one failure a real job can hit, named after it. The row sets
 * up a 2-node x 4-rank cluster (channel 0 runs 0 1 2 3 on each node,
 * channel 1 runs 3 2 1 0), breaks one thing, makes one call on rank 1 and
 * checks: the return code; exactly one WARN line with the exact text of
 * docs/errors.md (NCCL_DEBUG=WARN, captured through NCCL_DEBUG_FILE); and
 * that every byte of caller memory the call could write (the
 * canary-filled communicator with its channels, the fragment,
 * nodesFirstRank, the out-parameters, rings, *dev) is unchanged. Rows that
 * model an input the ring stage accepts (unequal nodes, one rank per node,
 * 20 or 32 channels) check the result instead.
 *
 *   faults [--list]     --list prints "row | result | WARN" for each row
 *
 * Linked with -rdynamic: it defines the platform hooks (D14) so rows can
 * fail the SwitchV1 preconditions, and no ncclTopoGetLocalNet, so
 * GetNetDev without a graph has nothing to fall back on (D19).
 */
#if !defined(_GNU_SOURCE) && !defined(_POSIX_C_SOURCE)
#define _POSIX_C_SOURCE 200809L
#endif
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../common/cluster.h"
#include "../common/stage_setup.h"

static bool hookSwitchV1;
static int hookVcore, hookJbog = 1;
bool neuronIsTrn3SwitchV1Family(void);
int nec_get_virtual_core_size(void);
int neuronTrnSwitchV1JbogId(int rank);
bool neuronIsTrn3SwitchV1Family(void) { return hookSwitchV1; }
int nec_get_virtual_core_size(void) { return hookVcore; }
int neuronTrnSwitchV1JbogId(int rank) { return rank >= 0 ? hookJbog : 0; }

static int failures, listing;

static const char *result_name(ncclResult_t r) {
  static const char *names[] = {"ncclSuccess", "ncclUnhandledCudaError", "ncclSystemError",
                                "ncclInternalError", "ncclInvalidArgument", "ncclInvalidUsage"};
  return (unsigned)r < sizeof names / sizeof names[0] ? names[r] : "?";
}
static FILE *logFile;

#define CHECK(cond, ...)                                                \
  do {                                                                  \
    if (!(cond)) {                                                      \
      failures++;                                                       \
      fprintf(stderr, "faults: %s: FAIL %s: ", row->name, #cond);       \
      fprintf(stderr, __VA_ARGS__);                                     \
      fputc('\n', stderr);                                              \
    }                                                                   \
  } while (0)

/* The WARN lines printed since the last call, text only. */
static int read_warns(char *out, size_t size) {
  char line[2048];
  int n = 0;
  size_t used = 0;
  out[0] = '\0';
  clearerr(logFile);
  while (fgets(line, sizeof line, logFile)) {
    char *w = strstr(line, " NCCL WARN ");
    if (w == NULL) continue;
    w += strlen(" NCCL WARN ");
    w[strcspn(w, "\n")] = '\0';
    int k = snprintf(out + used, size - used, "%s%s", n ? " || " : "", w);
    if (k > 0 && (size_t)k < size - used) used += (size_t)k;
    n++;
  }
  return n;
}

/* The fixture one row breaks. */
struct fixture {
  struct cluster *cl;
  struct ncclTopoGraph *graph; /* rank 1's graph (a copy of node 0's) */
  struct ncclComm *comm;       /* rank 1's communicator */
  struct ncclTopoRanks frag;   /* rank 1's Preset output */
  struct ncclTopoRanks frags[8];
  struct ncclTopoRanks *all[8];
  int heads[8], nChannels, nNodes;
  struct ncclTopoSystem sys;
  int dev, channel;
  int rings[64], next[64], nrings, rank, nranks;
};

enum call { PRESET, POSTSET, BUILD_RINGS, GET_NET_DEV, GET_NET_DEV_NO_GRAPH };

struct row {
  const char *name;
  enum call call;
  void (*breakIt)(struct fixture *);
  ncclResult_t want;
  const char *warn; /* NULL: the call succeeds and check() decides */
  void (*check)(const struct row *, struct fixture *);
};

static void comm_for(struct fixture *f, int rank, struct ncclComm *c) {
  memset(c, 0x5A, sizeof *c); /* canary: the ring stage must not care */
  for (int ch = 0; ch < MAXCHANNELS; ch++) {
    c->channels[ch].ring.userRanks = NULL;
    c->channels[ch].ring.devUserRanks = NULL;
  }
  int m = cluster_node_of(f->cl, rank);
  c->rank = rank;
  c->nRanks = f->cl->nRanks;
  c->localRanks = f->cl->localRanks[m];
  c->topo = &f->cl->systems[m];
  c->nKangaRingChannels = 0;
  c->enablePod = 0;
}

static struct fixture *fixture_new(void) {
  struct fixture *f = calloc(1, sizeof *f);
  int local[2] = {4, 4}, fwd[4] = {0, 1, 2, 3}, rev[4] = {3, 2, 1, 0};
  f->cl = cluster_new(2, local);
  cluster_set_channel(f->cl, 0, fwd, 4, 0, 1);
  cluster_set_channel(f->cl, 1, rev, 4, 2, 3);
  cluster_set_nchannels(f->cl, 2);
  f->graph = malloc(sizeof *f->graph);
  memcpy(f->graph, f->cl->graphs[0], sizeof *f->graph);
  f->comm = malloc(sizeof *f->comm);
  /* Every rank's fragment, as the AllGather would deliver them. */
  struct ncclComm *c = malloc(sizeof *c);
  for (int r = 0; r < 8; r++) {
    comm_for(f, r, c);
    if (ncclTopoPreset(c, f->cl->graphs[r / 4], &f->frags[r]) != ncclSuccess) abort();
    f->all[r] = &f->frags[r];
  }
  free(c);
  comm_for(f, 1, f->comm);
  f->sys.nodes[0].count = 4;
  /* BuildRings: two rings of 4, 0>1>2>3>0 and 0>3>2>1>0. */
  f->nrings = 2;
  f->rank = 1;
  f->nranks = 4;
  int next[8] = {1, 2, 3, 0, 3, 0, 1, 2};
  memcpy(f->next, next, sizeof next);
  return f;
}

static void fixture_free(struct fixture *f) {
  for (int ch = 0; ch < MAXCHANNELS; ch++) free(f->comm->channels[ch].ring.userRanks);
  cluster_free(f->cl);
  free(f->graph);
  free(f->comm);
  free(f);
}

/* Postset rows run on a comm that went through Preset. */
static void preset_rank1(struct fixture *f) {
  comm_for(f, 1, f->comm);
  if (ncclTopoPreset(f->comm, f->graph, &f->frag) != ncclSuccess) abort();
}

/* ---- the breaks ---- */

static void none(struct fixture *f) { (void)f; }
static void nranks_zero(struct fixture *f) { f->comm->nRanks = 0; }
static void rank_past_nranks(struct fixture *f) { f->comm->rank = 8; }
static void local_ranks_zero(struct fixture *f) { f->comm->localRanks = 0; }
static void local_ranks_257(struct fixture *f) { f->comm->localRanks = 257; }
static void nchannels_zero(struct fixture *f) { f->graph->nChannels = 0; }
static void nchannels_33(struct fixture *f) { f->graph->nChannels = 33; }
static void kanga_five(struct fixture *f) { f->comm->nKangaRingChannels = 5; }
static void kanga_negative(struct fixture *f) { f->comm->nKangaRingChannels = -1; }
static void intra_past_nranks(struct fixture *f) { f->graph->intra[6] = 8; }
static void intra_negative(struct fixture *f) { f->graph->intra[3] = -1; }
static void intra_rank_twice(struct fixture *f) { f->graph->intra[7] = 3; }
static void intra_rank_missing(struct fixture *f) { f->graph->intra[6] = 4; }
/* The graph lists 6 GPUs per channel for a node of 4 ranks: Preset reads it
 * with stride 4, so channel 1's slice is the tail of channel 0's list and the
 * head of channel 1's. */
static void gpu_list_longer_than_node(struct fixture *f) {
  int six[12] = {0, 1, 2, 3, 4, 5, 5, 4, 3, 2, 1, 0};
  memcpy(f->graph->intra, six, sizeof six);
}
/* Ranks 1 and 2 believe node 0 runs 0 2 1 3 on channel 0, ranks 0 and 3
 * that it runs 0 1 2 3: heads and tails agree, the ring does not close. */
static void intra_order_disagreement_in_one_node(struct fixture *f) {
  int bad[4] = {0, 2, 1, 3};
  struct ncclTopoGraph *g = malloc(sizeof *g);
  memcpy(g, f->graph, sizeof *g);
  memcpy(g->intra, bad, sizeof bad);
  struct ncclComm *c = malloc(sizeof *c);
  for (int r = 1; r <= 2; r++) {
    comm_for(f, r, c);
    if (ncclTopoPreset(c, g, &f->frags[r]) != ncclSuccess) abort();
  }
  free(c);
  free(g);
  preset_rank1(f);
}
static void fragment_from_another_nodes_rank(struct fixture *f) {
  preset_rank1(f);
  f->frags[2] = f->frags[5];
}
static void missing_fragment(struct fixture *f) {
  preset_rank1(f);
  f->all[6] = NULL;
}
static void postset_nranks_zero(struct fixture *f) { preset_rank1(f), f->comm->nRanks = 0; }
static void postset_rank_out_of_range(struct fixture *f) { preset_rank1(f), f->comm->rank = 9; }
static void postset_without_preset(struct fixture *f) { comm_for(f, 1, f->comm), f->comm->nChannels = 0; }
static void postset_kanga_five(struct fixture *f) { preset_rank1(f), f->comm->nKangaRingChannels = 5; }
static void ring_recv_out_of_range(struct fixture *f) { preset_rank1(f), f->frags[2].ringRecv[1] = 8; }
static void ring_send_negative(struct fixture *f) { preset_rank1(f), f->frags[5].ringSend[0] = -1; }
static void ring_prev_below_minus_one(struct fixture *f) { preset_rank1(f), f->frags[0].ringPrev[1] = -2; }
static void ring_next_past_nranks(struct fixture *f) { preset_rank1(f), f->frags[7].ringNext[0] = 8; }
static void node_disagrees_on_head(struct fixture *f) { preset_rank1(f), f->frags[6].ringRecv[1] = 6; }
static void node_disagrees_on_tail(struct fixture *f) { preset_rank1(f), f->frags[3].ringSend[0] = 2; }
static void lost_successor(struct fixture *f) { preset_rank1(f), f->frags[5].ringNext[0] = -1; }
static void two_rank_cycle(struct fixture *f) { preset_rank1(f), f->frags[2].ringNext[0] = 1; }
static void corrupted_own_prev(struct fixture *f) { preset_rank1(f), f->frags[1].ringPrev[0] = 3; }
static void pods_on_two_nodes(struct fixture *f) { preset_rank1(f), f->comm->enablePod = 1; }
static void switchv1_virtual_core_size(struct fixture *f) {
  preset_rank1(f);
  hookSwitchV1 = true, hookVcore = 2;
}
static void switchv1_jbog_id_zero(struct fixture *f) {
  preset_rank1(f);
  hookSwitchV1 = true, hookJbog = 0;
}
static void build_rings_33(struct fixture *f) { f->nrings = 33; }
static void build_rings_no_ranks(struct fixture *f) { f->nranks = 0; }
static void build_rings_rank_out_of_range(struct fixture *f) { f->rank = 4; }
static void build_rings_next_out_of_range(struct fixture *f) { f->next[1] = 7; }
static void build_rings_no_loop_back(struct fixture *f) { f->next[3] = 3; }
static void build_rings_missing_rank(struct fixture *f) { f->next[4 + 1] = 3, f->next[4 + 3] = 1; }
static void net_dev_no_channels(struct fixture *f) { f->graph->nChannels = 0; }
static void net_dev_negative_channel(struct fixture *f) { f->channel = -5; }
static void net_dev_count_zero(struct fixture *f) { f->sys.nodes[0].count = 0; }
static void net_dev_count_257(struct fixture *f) { f->sys.nodes[0].count = 257; }
static void net_dev_past_intra(struct fixture *f) {
  f->graph->nChannels = 40, f->sys.nodes[0].count = 256, f->channel = 33;
}
static void net_dev_past_inter(struct fixture *f) {
  f->graph->nChannels = 40, f->sys.nodes[0].count = 1, f->channel = 32;
}

/* ---- rows the ring stage accepts: the result is checked ---- */

static void run_whole(const struct row *row, struct cluster *cl, int wantChannels) {
  struct stage st;
  int ok = stage_run(&linked_ring_api, cl, &st) == 0;
  CHECK(ok, "%s", st.failure);
  if (ok) {
    CHECK(stage_check(cl, &st) == 0, "invariants");
    CHECK(st.comms[0]->nChannels == wantChannels, "nChannels %d, want %d", st.comms[0]->nChannels,
          wantChannels);
  }
  stage_free(&st);
}

static void unequal_local_ranks_7_plus_8(const struct row *row, struct fixture *f) {
  (void)f;
  int local[2] = {7, 8};
  struct cluster *cl = cluster_new(2, local);
  for (int m = 0; m < 2; m++)
    for (int i = 0; i < local[m]; i++) cl->graphs[m]->intra[i] = cl->firstRank[m] + i;
  cluster_set_nchannels(cl, 1);
  struct stage st;
  if (stage_run(&linked_ring_api, cl, &st) == 0) {
    CHECK(stage_check(cl, &st) == 0, "invariants");
    /* P6: node 0's 0..6 then node 1's 7..14. */
    for (int i = 0; i < 15; i++)
      CHECK(st.comms[0]->channels[0].ring.userRanks[i] == i, "userRanks[%d] %d", i,
            st.comms[0]->channels[0].ring.userRanks[i]);
  } else {
    CHECK(0, "%s", st.failure);
  }
  stage_free(&st);
  cluster_free(cl);
}

static void one_rank_per_node_doubled(const struct row *row, struct fixture *f) {
  (void)f;
  int local[4] = {1, 1, 1, 1}, only[1] = {0};
  struct cluster *cl = cluster_new(4, local);
  cluster_set_channel(cl, 0, only, 1, 0, 1);
  cluster_set_nchannels(cl, 1);
  run_whole(row, cl, 2);
  cluster_free(cl);
}

static void twenty_channel_graph(const struct row *row, struct fixture *f) {
  (void)f;
  int local[2] = {4, 4}, order[4];
  struct cluster *cl = cluster_new(2, local);
  for (int c = 0; c < 20; c++) {
    for (int i = 0; i < 4; i++) order[i] = (c + i) % 4;
    cluster_set_channel(cl, c, order, 4, c % 8, (c + 3) % 8);
  }
  cluster_set_nchannels(cl, 20);
  run_whole(row, cl, 32);
  cluster_free(cl);
}

static void thirty_two_channels_on_256_local_ranks(const struct row *row, struct fixture *f) {
  (void)f;
  int local = 256, order[256];
  struct cluster *cl = cluster_new(1, &local);
  for (int c = 0; c < 32; c++) {
    for (int i = 0; i < 256; i++) order[i] = (c + i) % 256;
    cluster_set_channel(cl, c, order, 256, c % 8, (c + 1) % 8);
  }
  cluster_set_nchannels(cl, 32);
  run_whole(row, cl, 32);
  cluster_free(cl);
}

static const struct row rows[] = {
    /* the catalogue of issue 4 */
    {"intra order disagreement inside one node", POSTSET, intra_order_disagreement_in_one_node, ncclInternalError,
     "Error : ring 0 does not loop back to start (3 != 1)", NULL},
    {"fragment from a rank of another node", POSTSET, fragment_from_another_nodes_rank, ncclInternalError,
     "Error : ring 0 does not loop back to start (7 != 1)", NULL},
    {"missing fragment", POSTSET, missing_fragment, ncclInvalidArgument, "ncclTopoPostset: allTopoRanks[6] is NULL", NULL},
    {"7 + 8 ranks on two nodes (unequal localRanks)", PRESET, none, ncclSuccess, NULL, unequal_local_ranks_7_plus_8},
    {"one rank per node with doubled channels", PRESET, none, ncclSuccess, NULL, one_rank_per_node_doubled},
    {"20-channel graph", PRESET, none, ncclSuccess, NULL, twenty_channel_graph},
    {"32 channels on 256 local ranks", PRESET, none, ncclSuccess, NULL, thirty_two_channels_on_256_local_ranks},
    {"graph whose GPU list is longer than the node", PRESET, gpu_list_longer_than_node, ncclInvalidArgument,
     "ncclTopoPreset: channel 1 lists rank 5 twice (positions 1 and 2)", NULL},
    {"graph with nchannels=0", PRESET, nchannels_zero, ncclInvalidArgument,
     "ncclTopoPreset: graph->nChannels 0 is outside [1, 32]", NULL},
    {"GetNetDev without a graph or a host ncclTopoGetLocalNet", GET_NET_DEV_NO_GRAPH, none, ncclInternalError,
     "ncclTopoGetNetDev: graph is NULL and the host process provides no ncclTopoGetLocalNet to fall back on", NULL},
    {"nKangaRingChannels = 5", PRESET, kanga_five, ncclInvalidArgument,
     "ncclTopoPreset: comm->nKangaRingChannels 5 is outside [0, 4]", NULL},
    {"SwitchV1 precondition: virtual core size", POSTSET, switchv1_virtual_core_size, ncclInternalError,
     "ncclTopoPostset: kangaRing precondition failed: virtual core size is 2, expected 0", NULL},
    {"SwitchV1 precondition: JBOG id", POSTSET, switchv1_jbog_id_zero, ncclInternalError,
     "ncclTopoPostset: kangaRing precondition failed: JBOG id of rank 1 is 0, expected 1, 2 or 3", NULL},
    /* every other check of docs/errors.md */
    {"S4 comm->nRanks zero", PRESET, nranks_zero, ncclInvalidArgument, "ncclTopoPreset: comm->nRanks 0 is not positive", NULL},
    {"S5 comm->rank past nRanks", PRESET, rank_past_nranks, ncclInvalidArgument, "ncclTopoPreset: comm->rank 8 is outside [0, 8)", NULL},
    {"S6 localRanks zero", PRESET, local_ranks_zero, ncclInvalidArgument, "ncclTopoPreset: comm->localRanks 0 is outside [1, 256]", NULL},
    {"S6 localRanks 257", PRESET, local_ranks_257, ncclInvalidArgument, "ncclTopoPreset: comm->localRanks 257 is outside [1, 256]", NULL},
    {"S7 nChannels 33", PRESET, nchannels_33, ncclInvalidArgument, "ncclTopoPreset: graph->nChannels 33 is outside [1, 32]", NULL},
    {"S9 nKangaRingChannels -1", PRESET, kanga_negative, ncclInvalidArgument, "ncclTopoPreset: comm->nKangaRingChannels -1 is outside [0, 4]", NULL},
    {"S11 intra value past nRanks", PRESET, intra_past_nranks, ncclInvalidArgument,
     "ncclTopoPreset: graph->intra[6] (channel 1, position 2) is 8, outside [0, 8)", NULL},
    {"S11 negative intra value", PRESET, intra_negative, ncclInvalidArgument,
     "ncclTopoPreset: graph->intra[3] (channel 0, position 3) is -1, outside [0, 8)", NULL},
    {"S12 rank twice in a channel", PRESET, intra_rank_twice, ncclInvalidArgument,
     "ncclTopoPreset: channel 1 lists rank 3 twice (positions 0 and 3)", NULL},
    {"S13 rank missing from a channel", PRESET, intra_rank_missing, ncclInvalidArgument,
     "ncclTopoPreset: rank 1 is not in channel 1's intra order", NULL},
    {"P2 comm->nRanks zero", POSTSET, postset_nranks_zero, ncclInvalidArgument, "ncclTopoPostset: comm->nRanks 0 is not positive", NULL},
    {"P3 comm->rank out of range", POSTSET, postset_rank_out_of_range, ncclInvalidArgument, "ncclTopoPostset: comm->rank 9 is outside [0, 8)", NULL},
    {"P4 Postset without Preset", POSTSET, postset_without_preset, ncclInvalidArgument,
     "ncclTopoPostset: comm->nChannels 0 is outside [1, 32] (call ncclTopoPreset first)", NULL},
    {"P5 nKangaRingChannels 5", POSTSET, postset_kanga_five, ncclInvalidArgument, "ncclTopoPostset: comm->nKangaRingChannels 5 is outside [0, 4]", NULL},
    {"P8 ringRecv out of range", POSTSET, ring_recv_out_of_range, ncclInvalidArgument,
     "ncclTopoPostset: allTopoRanks[2]->ringRecv[1] is 8, outside [0, 8)", NULL},
    {"P8 ringSend negative", POSTSET, ring_send_negative, ncclInvalidArgument,
     "ncclTopoPostset: allTopoRanks[5]->ringSend[0] is -1, outside [0, 8)", NULL},
    {"P9 ringPrev below -1", POSTSET, ring_prev_below_minus_one, ncclInvalidArgument,
     "ncclTopoPostset: allTopoRanks[0]->ringPrev[1] is -2, outside [-1, 8)", NULL},
    {"P9 ringNext past nRanks", POSTSET, ring_next_past_nranks, ncclInvalidArgument,
     "ncclTopoPostset: allTopoRanks[7]->ringNext[0] is 8, outside [-1, 8)", NULL},
    {"P10 ranks of a node disagree on a head", POSTSET, node_disagrees_on_head, ncclInternalError,
     "ncclTopoPostset: rank 6 of node 1 has channel 1 head 6 but the node's first rank 4 has head 7", NULL},
    {"P11 ranks of a node disagree on a tail", POSTSET, node_disagrees_on_tail, ncclInternalError,
     "ncclTopoPostset: rank 3 of node 0 has channel 0 tail 2 but the node's first rank 0 has tail 3", NULL},
    {"P12 UltraServer pods", POSTSET, pods_on_two_nodes, ncclInvalidUsage,
     "ncclTopoPostset: comm->enablePod is 1 on 2 nodes: UltraServer pod ordering (ncclTopoGetP2pPodInterNodeGraph) is not "
     "reimplemented; set NCCOM_RING_POD_ORDER=node to stitch in node order",
     NULL},
    {"B6 in Postset: a lost successor", POSTSET, lost_successor, ncclInternalError,
     "Error : ring 0: rank 5 has next -1, outside [0, 8)", NULL},
    {"B8 in Postset: a two-rank cycle", POSTSET, two_rank_cycle, ncclInternalError, "Error : ring 0 does not contain rank 0", NULL},
    {"P15 corrupted ringPrev of this rank", POSTSET, corrupted_own_prev, ncclInternalError,
     "ncclTopoPostset: channel 0: rank 1 has prev 3 but the ring reaches it from 0", NULL},
    {"B3 33 rings", BUILD_RINGS, build_rings_33, ncclInvalidArgument, "ncclBuildRings: nrings 33 is outside [0, 32]", NULL},
    {"B4 no ranks", BUILD_RINGS, build_rings_no_ranks, ncclInvalidArgument, "ncclBuildRings: nranks 0 is not positive", NULL},
    {"B5 rank out of range", BUILD_RINGS, build_rings_rank_out_of_range, ncclInvalidArgument, "ncclBuildRings: rank 4 is outside [0, 4)", NULL},
    {"B6 next out of range", BUILD_RINGS, build_rings_next_out_of_range, ncclInternalError,
     "Error : ring 0: rank 1 has next 7, outside [0, 4)", NULL},
    {"B7 ring does not loop back", BUILD_RINGS, build_rings_no_loop_back, ncclInternalError,
     "Error : ring 0 does not loop back to start (3 != 1)", NULL},
    {"B8 ring misses a rank", BUILD_RINGS, build_rings_missing_rank, ncclInternalError, "Error : ring 1 does not contain rank 0", NULL},
    {"G5 graph->nChannels zero", GET_NET_DEV, net_dev_no_channels, ncclInvalidArgument, "ncclTopoGetNetDev: graph->nChannels 0 is not positive", NULL},
    {"G6 negative channelId", GET_NET_DEV, net_dev_negative_channel, ncclInvalidArgument, "ncclTopoGetNetDev: channelId -5 is negative", NULL},
    {"G7 NIC count zero", GET_NET_DEV, net_dev_count_zero, ncclInvalidArgument, "ncclTopoGetNetDev: sys->nodes[0].count 0 is outside [1, 256]", NULL},
    {"G7 NIC count 257", GET_NET_DEV, net_dev_count_257, ncclInvalidArgument, "ncclTopoGetNetDev: sys->nodes[0].count 257 is outside [1, 256]", NULL},
    {"G8 index past intra", GET_NET_DEV, net_dev_past_intra, ncclInvalidArgument,
     "ncclTopoGetNetDev: channel 33 x count 256 reaches past graph->intra[8192]", NULL},
    {"G9 index past inter", GET_NET_DEV, net_dev_past_inter, ncclInvalidArgument,
     "ncclTopoGetNetDev: channel 32 reaches past graph->inter[64]", NULL},
};

static ncclResult_t call(const struct row *row, struct fixture *f) {
  switch (row->call) {
  case PRESET:
    memset(&f->frag, 0xA5, sizeof f->frag);
    return ncclTopoPreset(f->comm, f->graph, &f->frag);
  case POSTSET:
    return ncclTopoPostset(f->comm, f->heads, f->all, &f->nChannels, &f->nNodes);
  case BUILD_RINGS:
    return ncclBuildRings(f->nrings, f->rings, f->rank, f->nranks, NULL, f->next);
  case GET_NET_DEV:
    return ncclTopoGetNetDev(&f->sys, 1, f->graph, f->channel, &f->dev);
  case GET_NET_DEV_NO_GRAPH:
    return ncclTopoGetNetDev(&f->sys, 1, NULL, 0, &f->dev);
  }
  return ncclInternalError;
}

static void run_row(const struct row *row) {
  struct fixture *f = fixture_new();
  hookSwitchV1 = false, hookVcore = 0, hookJbog = 1;
  row->breakIt(f);
  char before[sizeof(struct ncclComm)], fragBefore[sizeof(struct ncclTopoRanks)];
  memset(f->heads, 0x3C, sizeof f->heads);
  memset(f->rings, 0x3C, sizeof f->rings);
  f->nChannels = f->nNodes = f->dev = -777;
  memcpy(before, f->comm, sizeof before);
  char warns[4096];
  read_warns(warns, sizeof warns); /* drop anything before the call */
  if (row->check) {
    row->check(row, f);
    fixture_free(f);
    if (listing) printf("%s | ncclSuccess | (none)\n", row->name);
    return;
  }
  if (row->call == PRESET) memset(&f->frag, 0xA5, sizeof f->frag);
  memcpy(fragBefore, &f->frag, sizeof fragBefore);
  ncclResult_t res = call(row, f);
  int nWarn = read_warns(warns, sizeof warns);
  if (listing) printf("%s | %s | %s\n", row->name, result_name(res), warns);
  CHECK(res == row->want, "returned %d, want %d", (int)res, (int)row->want);
  CHECK(nWarn == 1, "%d WARN lines: %s", nWarn, warns);
  CHECK(strcmp(warns, row->warn) == 0, "WARN\n  got:  %s\n  want: %s", warns, row->warn);
  /* All-or-nothing (D11): nothing the call could write changed. */
  CHECK(memcmp(before, f->comm, sizeof before) == 0, "the communicator changed");
  if (row->call == PRESET) {
    unsigned char canary[sizeof f->frag];
    memset(canary, 0xA5, sizeof canary);
    CHECK(memcmp(canary, &f->frag, sizeof canary) == 0, "the fragment changed");
  }
  for (int i = 0; i < 8; i++) CHECK(f->heads[i] == 0x3C3C3C3C, "nodesFirstRank[%d] changed", i);
  for (size_t i = 0; i < sizeof f->rings / sizeof f->rings[0]; i++)
    CHECK(f->rings[i] == 0x3C3C3C3C, "rings[%zu] changed", i);
  CHECK(f->nChannels == -777 && f->nNodes == -777, "out-parameters changed");
  CHECK(f->dev == -777, "*dev changed");
  fixture_free(f);
}

int main(int argc, char **argv) {
  listing = argc == 2 && strcmp(argv[1], "--list") == 0;
  if (argc > 1 && !listing) {
    fprintf(stderr, "usage: faults [--list]\n");
    return 2;
  }
  char path[] = "/tmp/nccomring-faults-XXXXXX";
  int fd = mkstemp(path);
  if (fd < 0) return 2;
  close(fd);
  setenv("NCCL_DEBUG", "WARN", 1);
  setenv("NCCL_DEBUG_FILE", path, 1);
  unsetenv("NCCOM_RING_PLATFORM");
  unsetenv("NCCOM_RING_POD_ORDER");
  /* The library opens the file at its first call; follow it from there. */
  int dev;
  struct ncclTopoSystem sys = {{{1}}};
  ncclTopoGetNetDev(&sys, 0, NULL, 0, &dev);
  logFile = fopen(path, "r");
  if (logFile == NULL) return 2;
  char drop[4096];
  read_warns(drop, sizeof drop);
  for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) run_row(&rows[i]);
  fclose(logFile);
  unlink(path);
  if (failures) {
    fprintf(stderr, "faults: %d checks failed\n", failures);
    return 1;
  }
  printf("faults: %zu rows of the fault catalogue behave as documented (code, one exact WARN, caller "
         "memory untouched)\n",
         sizeof rows / sizeof rows[0]);
  return 0;
}
