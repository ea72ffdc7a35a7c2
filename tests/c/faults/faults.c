/*
 * faults - the fault catalogue through the C ABI of build/libnccomring.so
 * (issue 4; docs/errors.md; D4-D20).
 *
 * Every row is one failure a real job can hit, named after it. The row sets
 * up a 2-node x 4-rank cluster (channel 0 runs 0 1 2 3 on each node,
 * channel 1 runs 3 2 1 0; a few rows rebuild it as 4 nodes of one rank, or
 * with another channel-0 order), breaks one thing, makes one call on rank 1
 * and checks: the return code; exactly one WARN line with the exact text of
 * docs/errors.md (NCCL_DEBUG=WARN, captured through NCCL_DEBUG_FILE); and
 * that every byte of caller memory the call could write (the
 * canary-filled communicator with its channels, the fragment,
 * nodesFirstRank, the out-parameters, rings, *dev) is unchanged. Rows that
 * model an input the ring stage accepts (unequal nodes, one rank per node,
 * 20 or 32 channels, fragments with fewer channels) check the result
 * instead.
 *
 * The P10 rows each change one field of one rank's gathered fragment (the
 * issue-8 "one corruption"); their texts are the diagnosis of
 * docs/errors.md ("Diagnosis (D24)"), worked out by hand next to each row.
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
#include "../common/host.h"
#include "../common/stage_setup.h"

static bool hookSwitchV1;
static int hookVcore, hookJbog = 1, hookJbogRank = -1; /* hookJbogRank: the one rank hookJbog is for; -1 all */
bool neuronIsTrn3SwitchV1Family(void);
int nec_get_virtual_core_size(void);
int neuronTrnSwitchV1JbogId(int rank);
bool neuronIsTrn3SwitchV1Family(void) { return hookSwitchV1; }
int nec_get_virtual_core_size(void) { return hookVcore; }
int neuronTrnSwitchV1JbogId(int rank) { return rank < 0 ? 0 : hookJbogRank < 0 || rank == hookJbogRank ? hookJbog : 1; }

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
/* D28: Postset reads comm->nKangaRingChannels only when no fragment holds
 * a valid record and its own platform is TRN3-SwitchV1 (P5). */
static void postset_kanga_five(struct fixture *f) {
  hookSwitchV1 = true;
  preset_rank1(f);
  for (int r = 0; r < 8; r++) memset((unsigned char *)&f->frags[r] + NCCOM_RING_RECORD_OFFSET, 0, 64);
  f->comm->nKangaRingChannels = 5;
}
static void ring_recv_out_of_range(struct fixture *f) { preset_rank1(f), f->frags[2].ringRecv[1] = 8; }
static void ring_send_negative(struct fixture *f) { preset_rank1(f), f->frags[5].ringSend[0] = -1; }
static void ring_prev_below_minus_one(struct fixture *f) { preset_rank1(f), f->frags[0].ringPrev[1] = -2; }
static void ring_next_past_nranks(struct fixture *f) { preset_rank1(f), f->frags[7].ringNext[0] = 8; }
static void node_disagrees_on_head(struct fixture *f) { preset_rank1(f), f->frags[6].ringRecv[1] = 6; }
static void node_disagrees_on_tail(struct fixture *f) { preset_rank1(f), f->frags[3].ringSend[0] = 2; }
static void lost_successor(struct fixture *f) { preset_rank1(f), f->frags[5].ringNext[0] = -1; }
static void two_rank_cycle(struct fixture *f) { preset_rank1(f), f->frags[2].ringNext[0] = 1; }
static void corrupted_own_prev(struct fixture *f) { preset_rank1(f), f->frags[1].ringPrev[0] = 3; }

/* D23: a fragment with no channel (P7a), found before any range check. */
static void fragment_without_channels(struct fixture *f) { preset_rank1(f), f->frags[6].ringRecv[0] = -1; }
static void fragment_head_minus_seven(struct fixture *f) {
  preset_rank1(f);
  f->frags[3].ringRecv[0] = -7;
  f->frags[5].ringSend[1] = 9; /* a P8 failure too: P7a is checked first */
}

/* Rebuilds the fixture as nNodes nodes of `local` ranks each, channel c
 * running orders[c] (local indices) on every node, and re-runs Preset on
 * every rank and on rank 1's communicator. */
static void rebuild(struct fixture *f, int nNodes, int local, int nCh, const int orders[][4]) {
  int locals[8];
  for (int m = 0; m < nNodes; m++) locals[m] = local;
  cluster_free(f->cl);
  f->cl = cluster_new(nNodes, locals);
  for (int c = 0; c < nCh; c++) cluster_set_channel(f->cl, c, orders[c], local, c, c);
  cluster_set_nchannels(f->cl, nCh);
  memcpy(f->graph, f->cl->graphs[cluster_node_of(f->cl, 1)], sizeof *f->graph);
  struct ncclComm *c = malloc(sizeof *c);
  for (int r = 0; r < f->cl->nRanks; r++) {
    comm_for(f, r, c);
    if (ncclTopoPreset(c, f->cl->graphs[cluster_node_of(f->cl, r)], &f->frags[r]) != ncclSuccess)
      abort();
  }
  free(c);
  preset_rank1(f);
}
/* 4 nodes of one rank, two channels: ranks 0 1 2 3 each head and tail of
 * their node on both channels, every ringPrev/ringNext -1. */
static void one_rank_nodes(struct fixture *f) {
  static const int only[2][4] = {{0}, {0}};
  rebuild(f, 4, 1, 2, only);
}

/* ---- P10, one corrupted field each (2 x 4 fixture unless said) ----
 * Node 0 is ranks 0-3, node 1 ranks 4-7 (by ringRecv[0], D8). Channel 0:
 * heads 0/4, tails 3/7, prev/next along 0 1 2 3 and 4 5 6 7. Channel 1:
 * heads 3/7, tails 0/4, along 3 2 1 0 and 7 6 5 4. Votes: each
 * contradiction one to its subject, one to its other rank. */

/* head's node, channel 0: rank 5's ringRecv[0] = 6 opens node 2 = {5}
 * (nodesFirstRank[2] = 6). Channel 0: node 1 = {4 6 7}: 4's next 5 is not
 * in node 1 (4, 5); 6's prev 5 (6, 5). Node 2: hd = 6, not in node 2,
 * R = {5}, c = 0: (5, 6) "makes node 2 on its own"; tail 7 not in node 2
 * (5, 7); 5's next 6 (5, 6); 5's prev 4 (5, 4). Rank 5: 6 votes. */
static void head_makes_node_of_its_own(struct fixture *f) { preset_rank1(f), f->frags[5].ringRecv[0] = 6; }
/* head's node, the node's ranks follow a head of another node: channel 0
 * runs 1 0 2 3 (rank 1 is node 0's head), and rank 1's ringRecv[0] = 4 moves
 * it to node 1. Node 0 = {0 2 3} has hd = 1 (held by all 3), not in node 0:
 * subject 1, listed first; then 0's prev 1 (0, 1). Node 1 = {1 4 5 6 7}:
 * 1's tail 3 != 7 (1); 1's next 0 (1, 0); 1's prev -1 (1). Rank 1: 5 votes. */
static void head_moved_to_another_node(struct fixture *f) {
  static const int orders[2][4] = {{1, 0, 2, 3}, {3, 2, 1, 0}};
  rebuild(f, 2, 4, 2, orders);
  f->frags[1].ringRecv[0] = 4;
}
/* head's node, channel 1, one-rank nodes: rank 2's ringRecv[1] = 1. Node 2
 * = {2}: hd = 1, in node 1 (2, 1); 2's prev -1 but head 1 (2). Rank 2: 2. */
static void single_rank_head_in_another_node(struct fixture *f) {
  one_rank_nodes(f);
  f->frags[2].ringRecv[1] = 1;
}
/* tail's node: rank 3's ringRecv[0] = 4 moves node 0's tail into node 1
 * (rank 3 opens node 1, nodesFirstRank[1] = 4). Node 0 = {0 1 2}: tl = 3,
 * not in node 0: subject 3, listed first; 2's next 3 (2, 3). Node 1 =
 * {3 4 5 6 7}: 3's tail 3 != 7 (3); 3's next -1 (3); 3's prev 2 (3, 2).
 * Rank 3: 5 votes. */
static void tail_moved_to_another_node(struct fixture *f) { preset_rank1(f), f->frags[3].ringRecv[0] = 4; }
/* tail's node, one-rank nodes: rank 2's ringSend[0] = 1. Node 2: tl = 1 in
 * node 1 (2, 1); 2's next -1 but tail 1 (2). Rank 2: 2 votes. */
static void single_rank_tail_in_another_node(struct fixture *f) {
  one_rank_nodes(f);
  f->frags[2].ringSend[0] = 1;
}
/* next kinds. Rank 1's ringNext[0] = 5: (1, 5) not in node 0; 2's prev 1
 * but 1's next 5 (2, 1). Rank 1: 2 votes. */
static void next_into_another_node(struct fixture *f) { preset_rank1(f), f->frags[1].ringNext[0] = 5; }
/* Rank 2's ringNext[0] = 0: (2) its node's head; 3's prev 2 but 2's next 0
 * (3, 2). Rank 2: 2 votes. */
static void next_back_to_head(struct fixture *f) { preset_rank1(f), f->frags[2].ringNext[0] = 0; }
/* prev kinds. Rank 2's ringPrev[0] = -1: 1's next 2 but 2's prev -1 (1, 2);
 * (2) prev -1 but head 0. Rank 2: 2 votes. */
static void prev_lost(struct fixture *f) { preset_rank1(f), f->frags[2].ringPrev[0] = -1; }
/* Rank 2's ringPrev[0] = 6: (1, 2); (2, 6) not in node 0. Rank 2: 2. */
static void prev_from_another_node(struct fixture *f) { preset_rank1(f), f->frags[2].ringPrev[0] = 6; }
/* Rank 3's ringPrev[0] = 1: 2's next 3 but 3's prev 1 (2, 3); 3's prev 1
 * but 1's next 2 (3, 1). Rank 3: 2 votes. */
static void prev_skips_a_rank(struct fixture *f) { preset_rank1(f), f->frags[3].ringPrev[0] = 1; }
/* D28: enablePod travels in every rank's record: every Preset had it. */
static void pods_on_two_nodes(struct fixture *f) {
  struct ncclComm *c = malloc(sizeof *c);
  for (int r = 0; r < 8; r++) {
    comm_for(f, r, c);
    c->enablePod = 1;
    if (ncclTopoPreset(c, f->cl->graphs[r / 4], &f->frags[r]) != ncclSuccess) abort();
  }
  free(c);
  preset_rank1(f);
  f->comm->enablePod = 1;
}
/* D27: the preconditions travel in every rank's record, which its Preset
 * writes from the hooks; Postset names the first rank whose record fails. */
static void preset_every_rank(struct fixture *f) {
  struct ncclComm *c = malloc(sizeof *c);
  for (int r = 0; r < 8; r++) {
    comm_for(f, r, c);
    if (ncclTopoPreset(c, f->cl->graphs[r / 4], &f->frags[r]) != ncclSuccess) abort();
  }
  free(c);
  preset_rank1(f);
}
static void switchv1_virtual_core_size(struct fixture *f) {
  hookSwitchV1 = true, hookVcore = 2;
  preset_every_rank(f);
}
static void switchv1_jbog_id_zero(struct fixture *f) {
  hookSwitchV1 = true, hookJbog = 0, hookJbogRank = 6;
  preset_every_rank(f);
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

/* D23: node 1's ranks were handed a 1-channel graph, node 0's the 2-channel
 * one. Ranks 4-7's fragments have ringRecv[1] = -1, so n = 1 (first held by
 * rank 4) and rank 1's Postset succeeds with min(2 * 1, 32) = 2 channels,
 * both the identity ring 1 2 3 4 5 6 7 0: prev 0, next 2. Channel 1's -1
 * entries are never read (they would be P8 failures). */
static void node_with_fewer_channels(const struct row *row, struct fixture *f) {
  struct ncclTopoGraph *g = malloc(sizeof *g);
  memcpy(g, f->cl->graphs[1], sizeof *g);
  g->nChannels = 1;
  struct ncclComm *c = malloc(sizeof *c);
  for (int r = 4; r < 8; r++) {
    comm_for(f, r, c);
    if (ncclTopoPreset(c, g, &f->frags[r]) != ncclSuccess) abort();
  }
  free(c);
  free(g);
  preset_rank1(f);
  CHECK(f->frags[4].ringRecv[1] == -1 && f->frags[7].ringNext[1] == -1 && f->frags[0].ringRecv[1] == 3,
        "Preset's fragments: rank 4 ringRecv[1] %d, rank 7 ringNext[1] %d, rank 0 ringRecv[1] %d",
        f->frags[4].ringRecv[1], f->frags[7].ringNext[1], f->frags[0].ringRecv[1]);
  CHECK(f->comm->nChannels == 2, "rank 1's comm->nChannels after Preset %d, want 2", f->comm->nChannels);
  ncclResult_t res = ncclTopoPostset(f->comm, f->heads, f->all, &f->nChannels, &f->nNodes);
  char warns[4096];
  int nWarn = read_warns(warns, sizeof warns);
  CHECK(res == ncclSuccess, "returned %d", (int)res);
  /* D27, D28: rank 1's own graph has 2 channels, the job 1: one WARN, success. */
  CHECK(nWarn == 1 &&
            strcmp(warns, "ncclTopoPostset: this rank's graph has 2 channels (comm->nChannels), the job 1 (the smallest "
                          "channel count of any fragment, first held by rank 4): give its ncclTopoGetNetDev a graph of 1 "
                          "channels, or its channels use the NICs of another graph channel (D27, D28)") == 0,
        "%d WARN lines: %s", nWarn, warns);
  if (res != ncclSuccess) return;
  CHECK(f->nChannels == 2 && f->comm->nChannels == 2, "nChannels %d / comm %d, want 2", f->nChannels,
        f->comm->nChannels);
  CHECK(f->nNodes == 2 && f->comm->nNodes == 2 && f->comm->node == 0, "nNodes %d, node %d", f->nNodes,
        f->comm->node);
  CHECK(f->heads[0] == 0 && f->heads[1] == 4, "nodesFirstRank %d %d", f->heads[0], f->heads[1]);
  int want[8] = {1, 2, 3, 4, 5, 6, 7, 0};
  for (int ch = 0; ch < 2; ch++) {
    const struct ncclRing *ring = &f->comm->channels[ch].ring;
    CHECK(ring->prev == 0 && ring->next == 2, "channel %d prev %d next %d, want 0 2", ch, ring->prev,
          ring->next);
    for (int i = 0; ring->userRanks && i < 8; i++)
      CHECK(ring->userRanks[i] == want[i], "channel %d userRanks[%d] %d, want %d", ch, i,
            ring->userRanks[i], want[i]);
  }
}

/* D27, D28: comm->nChannels changes no result. Rank 1's communicator never
 * went through Preset (nChannels 0, the canary's 0x5A5A5A5A, 99, or 2):
 * every time the fragments' 2 channels decide, doubled to 4: channel 0 (and
 * 2) 1 2 3 4 5 6 7 0; channel 1 (and 3), each node reversed and stitched
 * tail 0 -> head 7, tail 4 -> head 3: 1 0 7 6 5 4 3 2. Only D27's WARN to
 * this rank says that its count is not the job's (in either direction). */
static void comm_nchannels_is_not_read(const struct row *row, struct fixture *f) {
  (void)row;
  static const int want[2][8] = {{1, 2, 3, 4, 5, 6, 7, 0}, {1, 0, 7, 6, 5, 4, 3, 2}};
  const int stale[4] = {0, 0x5A5A5A5A, 99, 2};
  for (int k = 0; k < 4; k++) {
    for (int ch = 0; ch < MAXCHANNELS; ch++) free(f->comm->channels[ch].ring.userRanks);
    comm_for(f, 1, f->comm);
    f->comm->nChannels = stale[k];
    ncclResult_t res = ncclTopoPostset(f->comm, f->heads, f->all, &f->nChannels, &f->nNodes);
    char warns[4096];
    int nWarn = read_warns(warns, sizeof warns);
    char want1[1024] = "";
    if (stale[k] != 2)
      snprintf(want1, sizeof want1,
               "ncclTopoPostset: this rank's graph has %d channels (comm->nChannels), the job 2 (the smallest channel "
               "count of any fragment, first held by rank 0): give its ncclTopoGetNetDev a graph of 2 channels, or "
               "its channels use the NICs of another graph channel (D27, D28)",
               stale[k]);
    CHECK(res == ncclSuccess && nWarn == (stale[k] != 2) && strcmp(warns, want1) == 0,
          "comm->nChannels %d: returned %d, %d WARN lines: %s", stale[k], (int)res, nWarn, warns);
    if (res != ncclSuccess) continue;
    CHECK(f->nChannels == 4 && f->comm->nChannels == 4, "comm->nChannels %d: nChannels %d / comm %d, want 4", stale[k],
          f->nChannels, f->comm->nChannels);
    for (int ch = 0; ch < 4; ch++)
      for (int i = 0; i < 8; i++)
        CHECK(f->comm->channels[ch].ring.userRanks[i] == want[ch % 2][i],
              "comm->nChannels %d: channel %d userRanks[%d] %d, want %d", stale[k], ch, i,
              f->comm->channels[ch].ring.userRanks[i], want[ch % 2][i]);
  }
}

/* D28: with valid records Postset takes nKangaRingChannels from them (0
 * here, generic), not from the calling rank's comm: 5 there is not read. */
static void postset_kanga_not_read(const struct row *row, struct fixture *f) {
  (void)row;
  preset_rank1(f);
  f->comm->nKangaRingChannels = 5;
  ncclResult_t res = ncclTopoPostset(f->comm, f->heads, f->all, &f->nChannels, &f->nNodes);
  char warns[4096];
  int nWarn = read_warns(warns, sizeof warns);
  CHECK(res == ncclSuccess && nWarn == 0 && f->nChannels == 4, "returned %d, %d channels, %d WARN lines: %s", (int)res,
        f->nChannels, nWarn, warns);
}

static void twenty_channel_graph(const struct row *row, struct fixture *f) {
  (void)f;
  struct cluster *cl = cluster_rotated_2x4(20, 3);
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
    /* Ranks 1 and 2 hold 0 2 1 3: (0, 1) "ringNext is 1 but rank 1's ringPrev
     * is 2; rank 2 is reached by nobody", (1, 3), (2, 0), (3, 2): two votes
     * each, the tie goes to the lowest rank, 0. */
    {"intra order disagreement inside one node", POSTSET, intra_order_disagreement_in_one_node, ncclInternalError,
     "ncclTopoPostset: rank 0, channel 0: ringNext is 1 but rank 1's ringPrev is 2; rank 2 is reached by nobody", NULL},
    /* Slot 2 holds rank 5's fragment, so rank 2 joins node 1 = {2 4 5 6 7}:
     * (1, 2), (3, 2) in node 0; in node 1 2's next 6 (2, 6) and 2's prev 4
     * (2, 4). Rank 2: 4 votes. */
    {"fragment from a rank of another node", POSTSET, fragment_from_another_nodes_rank, ncclInternalError,
     "ncclTopoPostset: rank 2, channel 0: ringNext is 6 but rank 6's ringPrev is 5", NULL},
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
     "ncclTopoPostset: kangaRing precondition failed: virtual core size of rank 0 is 2, expected 0", NULL},
    {"SwitchV1 precondition: JBOG id", POSTSET, switchv1_jbog_id_zero, ncclInternalError,
     "ncclTopoPostset: kangaRing precondition failed: JBOG id of rank 6 is 0, expected 1, 2 or 3", NULL},
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
    {"D27 Postset without Preset: comm->nChannels changes no result", PRESET, none, ncclSuccess, NULL, comm_nchannels_is_not_read},
    {"D28 Postset's comm->nKangaRingChannels 5 with valid records: not read", PRESET, none, ncclSuccess, NULL,
     postset_kanga_not_read},
    {"P5 nKangaRingChannels 5, no record gathered, SwitchV1", POSTSET, postset_kanga_five, ncclInvalidArgument,
     "ncclTopoPostset: comm->nKangaRingChannels 5 is outside [0, 4]", NULL},
    {"P7a a fragment with no channel", POSTSET, fragment_without_channels, ncclInternalError,
     "ncclTopoPostset: rank 6: ringRecv[0] is -1, so its fragment has no channel", NULL},
    {"P7a a negative head before any range check", POSTSET, fragment_head_minus_seven, ncclInternalError,
     "ncclTopoPostset: rank 3: ringRecv[0] is -7, so its fragment has no channel", NULL},
    {"D23 one node's fragments have fewer channels", PRESET, none, ncclSuccess, NULL, node_with_fewer_channels},
    {"P8 ringRecv out of range", POSTSET, ring_recv_out_of_range, ncclInvalidArgument,
     "ncclTopoPostset: rank 2, channel 1: ringRecv is 8, outside [0, 8)", NULL},
    {"P8 ringSend negative", POSTSET, ring_send_negative, ncclInvalidArgument,
     "ncclTopoPostset: rank 5, channel 0: ringSend is -1, outside [0, 8)", NULL},
    {"P9 ringPrev below -1", POSTSET, ring_prev_below_minus_one, ncclInvalidArgument,
     "ncclTopoPostset: rank 0, channel 1: ringPrev is -2, outside [-1, 8)", NULL},
    {"P9 ringNext past nRanks", POSTSET, ring_next_past_nranks, ncclInvalidArgument,
     "ncclTopoPostset: rank 7, channel 0: ringNext is 8, outside [-1, 8)", NULL},
    /* head: rank 6's ringRecv[1] = 6 against 7 held by ranks 4, 5, 7. */
    {"P10 ranks of a node disagree on a head", POSTSET, node_disagrees_on_head, ncclInternalError,
     "ncclTopoPostset: rank 6, channel 1: ringRecv (head) is 6 but node 1's head is 7 (held by 3 of its 4 ranks)", NULL},
    /* tail: rank 3's ringSend[0] = 2 against 3 held by ranks 0, 1, 2 (3 is the
     * tail, so its own next is not read). */
    {"P10 ranks of a node disagree on a tail", POSTSET, node_disagrees_on_tail, ncclInternalError,
     "ncclTopoPostset: rank 3, channel 0: ringSend (tail) is 2 but node 0's tail is 3 (held by 3 of its 4 ranks)", NULL},
    {"P10 a rank's channel-0 head makes a node of its own", POSTSET, head_makes_node_of_its_own, ncclInternalError,
     "ncclTopoPostset: rank 5, channel 0: ringRecv[0] is 6, a rank of node 1: it makes node 2 on its own", NULL},
    {"P10 a node's head moved to another node", POSTSET, head_moved_to_another_node, ncclInternalError,
     "ncclTopoPostset: rank 1, channel 0: node 0's ranks have it as their head, but its ringRecv[0] is 4, which puts it "
     "in node 1",
     NULL},
    {"P10 a one-rank node's head on channel 1 is another node's", POSTSET, single_rank_head_in_another_node,
     ncclInternalError, "ncclTopoPostset: rank 2, channel 1: ringRecv (head) is 1, a rank of node 1, not of its own node 2",
     NULL},
    {"P10 a node's tail moved to another node", POSTSET, tail_moved_to_another_node, ncclInternalError,
     "ncclTopoPostset: rank 3, channel 0: node 0's ranks have it as their tail, but its ringRecv[0] is 4, which puts it "
     "in node 1",
     NULL},
    {"P10 a one-rank node's tail is another node's", POSTSET, single_rank_tail_in_another_node, ncclInternalError,
     "ncclTopoPostset: rank 2, channel 0: ringSend (tail) is 1, a rank of node 1, not of its own node 2", NULL},
    {"P10 ringNext into another node", POSTSET, next_into_another_node, ncclInternalError,
     "ncclTopoPostset: rank 1, channel 0: ringNext is 5, a rank of node 1, not of its own node 0", NULL},
    {"P10 ringNext back to the node's head", POSTSET, next_back_to_head, ncclInternalError,
     "ncclTopoPostset: rank 2, channel 0: ringNext is 0, its node's head", NULL},
    {"P10 ringPrev lost", POSTSET, prev_lost, ncclInternalError,
     "ncclTopoPostset: rank 2, channel 0: ringPrev is -1 but node 0's head is 0", NULL},
    {"P10 ringPrev from another node", POSTSET, prev_from_another_node, ncclInternalError,
     "ncclTopoPostset: rank 2, channel 0: ringPrev is 6, a rank of node 1, not of its own node 0", NULL},
    {"P10 ringPrev skips a rank", POSTSET, prev_skips_a_rank, ncclInternalError,
     "ncclTopoPostset: rank 3, channel 0: ringPrev is 1 but rank 1's ringNext is 2", NULL},
    {"P12 UltraServer pods", POSTSET, pods_on_two_nodes, ncclInvalidUsage,
     "ncclTopoPostset: comm->enablePod is set on 2 nodes: UltraServer pod ordering (ncclTopoGetP2pPodInterNodeGraph) is not "
     "reimplemented; set NCCOM_RING_POD_ORDER=node on every rank to stitch in node order (rank 0 did not)",
     NULL},
    /* Rank 5's ringNext[0] = -1: (5) next -1; 6's prev 5 (6, 5). Rank 5: 2. */
    {"P10 a lost successor", POSTSET, lost_successor, ncclInternalError,
     "ncclTopoPostset: rank 5, channel 0: ringNext is -1 but node 1's tail is 7", NULL},
    /* Rank 2's ringNext[0] = 1: (2, 1), and rank 3 (prev 2) is nobody's next;
     * 3's prev 2 (3, 2). Rank 2: 2 votes. */
    {"P10 a two-rank cycle", POSTSET, two_rank_cycle, ncclInternalError,
     "ncclTopoPostset: rank 2, channel 0: ringNext is 1 but rank 1's ringPrev is 0; rank 3 is reached by nobody", NULL},
    /* Rank 1's ringPrev[0] = 3 (the caller's own): 0's next 1 (0, 1); (1) its
     * node's tail. Rank 1: 2 votes. */
    {"P10 corrupted ringPrev of this rank", POSTSET, corrupted_own_prev, ncclInternalError,
     "ncclTopoPostset: rank 1, channel 0: ringPrev is 3, its node's tail", NULL},
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
  hookSwitchV1 = false, hookVcore = 0, hookJbog = 1, hookJbogRank = -1;
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
  /* The lines this test reads are NCCL's (D21): chosen here, not left to
   * whether a libnccom is loaded in the process (D26). */
  setenv("NCCOM_RING_LOG_STYLE", "nccl", 1);
  listing = argc == 2 && strcmp(argv[1], "--list") == 0;
  if (argc > 1 && !listing) {
    fprintf(stderr, "usage: faults [--list]\n");
    return 2;
  }
  char path[] = "/tmp/nccomring-faults-XXXXXX";
  if (log_to_temp_file(path, "WARN") != 0) return 2;
  unsetenv("NCCOM_RING_PLATFORM");
  unsetenv("NCCOM_RING_POD_ORDER");
  unsetenv("NCCOM_RING_DUMP"); /* its INFO lines and files are not this test's */
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
