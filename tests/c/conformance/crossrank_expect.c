/*
 * crossrank_expect.c - what the cross-rank jobs must end in: the named
 * cases (issue 8's six inputs, D23, D25, D27, D28) with their expected
 * verdicts, and the verdict a random job with a record corruption or one
 * of D28's kinds must reach.
 */
#include <stdlib.h>
#include <string.h>

#include "conformance.h"

/* ---- named cases: the six inputs of issue 8, and D23's twist ---- */

/* nodes x local ranks, every channel in the same local order. */
static int x_job_uniform(struct xjob *j, int nodes, int local, int nChannels, const int *order) {
  memset(j, 0, sizeof *j);
  int sizes[64];
  for (int m = 0; m < nodes; m++) sizes[m] = local;
  j->cl = cluster_new(nodes, sizes);
  if (j->cl == NULL) return -1;
  for (int c = 0; c < nChannels; c++) cluster_set_channel(j->cl, c, order, local, -1, -1);
  cluster_set_nchannels(j->cl, nChannels);
  return x_job_graphs(j);
}

/* x_job_uniform with one corruption of the gathered buffer: kind at rank
 * and channel, value. */
static int x_job_corrupted(struct xjob *j, int nodes, int local, int nChannels, const int *order, int kind, int rank,
                           int channel, int value) {
  if (x_job_uniform(j, nodes, local, nChannels, order) != 0) return -1;
  j->kind = kind, j->rank = rank, j->channel = channel, j->value = value;
  return 0;
}

/* 4 ranks in their own order. */
static const int id4[] = {0, 1, 2, 3};

/* 1: rank 2's fragment says its predecessor is 0 (it is 1). */
static int x_case_wrong_prev(struct xjob *j) { return x_job_corrupted(j, 2, 4, 1, id4, X_PREV, 2, 0, 0); }

/* 2: rank 2's own graph differs from its node's in rank 2's prev only
 * (same head, tail and next). */
static int x_case_own_graph(struct xjob *j) {
  static const int order[] = {0, 1, 4, 2, 3}, own[] = {0, 4, 1, 2, 3};
  if (x_job_uniform(j, 2, 5, 1, order) != 0 || (j->own = malloc(sizeof *j->own)) == NULL) return -1;
  memcpy(j->own, j->cl->graphs[0], sizeof *j->own);
  for (int i = 0; i < 5; i++) j->own->intra[i] = own[i]; /* node 0's ranks are 0..4 */
  j->graphOf[2] = j->own;
  return 0;
}

/* 3: the AllGather delivers rank 0's fragment in rank 9's slot too. */
static int x_case_wrong_slot(struct xjob *j) {
  static const int order[] = {0, 7, 6, 5, 4, 3, 2, 1};
  return x_job_corrupted(j, 2, 8, 1, order, X_DUP, 9, 0, 0);
}

/* 4: ranks 0-2 are handed a 14-channel graph (odd channels reversed),
 * rank 3 its first 12 channels, as when a graph file reaches some ranks
 * only. */
static int x_case_counts(struct xjob *j) {
  static const int forward[] = {0, 1, 2, 3}, reversed[] = {0, 3, 2, 1};
  enum { many = 14, few = 12 };
  if (x_job_uniform(j, 1, 4, many, forward) != 0 || (j->own = malloc(sizeof *j->own)) == NULL) return -1;
  for (int c = 1; c < many; c += 2) cluster_set_channel(j->cl, c, reversed, 4, -1, -1);
  memcpy(j->own, j->cl->graphs[0], sizeof *j->own);
  j->own->nChannels = few;
  j->graphOf[3] = j->own;
  return 0;
}

/* D27: rank 3's slot still holds, for channels 12 and 13, what an earlier
 * 14-channel AllGather of this job left there (its ring fields of those
 * channels), as a Preset that does not mark the channels it lacks leaves
 * them: every fragment then says 14 channels, while rank 3's own comm
 * says 12. */
static void x_corrupt_stale_slots(struct ncclTopoRanks *slots) {
  static const int recv[2] = {0, 0}, send[2] = {3, 1}, prev[2] = {2, 0}, next[2] = {-1, 2};
  for (int k = 0; k < 2; k++) {
    slots[3].ringRecv[12 + k] = recv[k], slots[3].ringSend[12 + k] = send[k];
    slots[3].ringPrev[12 + k] = prev[k], slots[3].ringNext[12 + k] = next[k];
  }
}

/* 4b: input 4 with rank 3's stale slots (D27). */
static int x_case_stale_counts(struct xjob *j) {
  if (x_case_counts(j) != 0) return -1;
  j->corrupt = x_corrupt_stale_slots;
  return 0;
}

static void x_corrupt_two_links(struct ncclTopoRanks *slots) {
  slots[52].ringPrev[0] = 53;
  slots[52].ringNext[0] = 54;
}

/* 5: 8x8, rank 52's fragment says prev 53 and next 54 on channel 0. */
static int x_case_two_links(struct xjob *j) {
  static const int order[] = {0, 1, 2, 3, 4, 5, 6, 7};
  if (x_job_uniform(j, 8, 8, 1, order) != 0) return -1;
  j->corrupt = x_corrupt_two_links;
  return 0;
}

/* 6: channel 1's ring 4 -> 5 -> 4 ..., which rank 0 walks at INFO. */
static int x_case_walk(struct xjob *j) { return x_job_corrupted(j, 2, 4, 2, id4, X_NEXT, 5, 1, 4); }

/* D23: ringRecv[2] = -1 in one fragment says it has 2 channels. */
static int x_case_fewer(struct xjob *j) { return x_job_corrupted(j, 2, 4, 3, id4, X_RECV, 6, 2, -1); }

/* Input 4's rings: channel c is channel c % n of the graph, n = 12 or,
 * with the stale slots, 14; odd ones reversed. */
static int x_rings_counts(const struct xverdict *v, int n, char *why, size_t size) {
  static const int forward[] = {0, 1, 2, 3}, reversed[] = {0, 3, 2, 1};
  for (int c = 0; c < v->nChannels; c++) {
    const int *want = c % (v->nChannels / 2) % 2 ? reversed : forward;
    for (int i = 0; i < n; i++)
      if (v->ring[c * n + i] != want[i]) {
        snprintf(why, size, "rank 0's channel %d userRanks[%d] is %d, want %d", c, i, v->ring[c * n + i], want[i]);
        return 1;
      }
  }
  return 0;
}

/* ---- named cases of D25 and D27 ---- */

/* The local order of channel c in the D25 cases: forward on even channels,
 * backward from local rank 0 on odd ones. */
static const int d25Forward[] = {0, 1, 2, 3}, d25Backward[] = {0, 3, 2, 1};

/* nodes x 4 ranks, 2 channels (forward, backward); every rank network and
 * the location loc(node) (NULL: unset), its own NCCOM_RING_NODE_ORDER
 * unset when it is `unsetRank`. */
static int x_job_d25(struct xjob *j, int nodes, const char *(*loc)(int node), int unsetRank) {
  if (x_job_uniform(j, nodes, 4, 2, d25Forward) != 0) return -1;
  cluster_set_channel(j->cl, 1, d25Backward, 4, -1, -1);
  int n = j->nRanks;
  if (rank_env_alloc(&j->env, n) != 0) return -1;
  for (int k = 0; k < n; k++) {
    const char *l = loc(cluster_node_of(j->cl, k));
    if ((k != unsetRank && (j->env.order[k] = strdup("network")) == NULL) ||
        (l && (j->env.location[k] = strdup(l)) == NULL))
      return -1;
  }
  j->carries = 1;
  return 0;
}

static const char *alternating(int node) { return node % 2 ? "spine0/leafB" : "spine0/leafA"; }
static const char *grouped(int node) { return node < 4 ? "spine0/leafA" : "spine0/leafB"; }

/* D25's example: 8 nodes of 4 ranks whose locations alternate between
 * spine0/leafA and spine0/leafB in rank order. */
static int x_case_d25_example(struct xjob *j) { return x_job_d25(j, 8, alternating, -1); }
/* The same nodes already grouped in rank order: D8's order, the same rings. */
static int x_case_d25_grouped(struct xjob *j) { return x_job_d25(j, 8, grouped, -1); }
/* One rank of 32, rank 13, without NCCOM_RING_NODE_ORDER. */
static int x_case_d25_one_rank(struct xjob *j) { return x_job_d25(j, 8, alternating, 13); }

/* Network on every rank of 4 nodes, and no location anywhere: every node
 * is placed last, in D8's order, and the summary has no level. */
static const char *nowhere(int node) {
  (void)node;
  return NULL;
}
static int x_case_d25_nowhere(struct xjob *j) { return x_job_d25(j, 4, nowhere, -1); }

/* A node without a location: node 1's ranks 4 and 5 have none, rank 6 an
 * invalid one and rank 7 spine0/leafA, so node 1 has none (3 of 4). */
static const char *one_without(int node) {
  static const char *const loc[] = {"spine0/leafB", NULL, "spine0/leafA", "spine0/leafB"};
  return loc[node];
}
static int x_case_d25_no_location(struct xjob *j) {
  if (x_job_d25(j, 4, one_without, -1) != 0) return -1;
  free(j->env.location[6]);
  free(j->env.location[7]);
  j->env.location[6] = strdup("spine0/leaf?A");
  j->env.location[7] = strdup("spine0/leafA");
  return j->env.location[6] && j->env.location[7] ? 0 : -1;
}

/* D25's plurality and its ties: 4 nodes of 2 ranks whose head is the odd
 * rank (channel order 1 0). Node 0: 0 s0/l1, 1 s0/l0 (a tie: the head's,
 * s0/l0); node 1: 2 s0/l1/deep/er, 3 s0/l1 (the head's; the deeper location
 * is no node's, so the summary stops at level 2); node 2: 4 s0/l0, 5 none
 * (the head's: no location); node 3: both s0/l1. */
static int x_case_d25_ties(struct xjob *j) {
  static const int order[] = {1, 0};
  static const char *const loc[] = {"s0/l1", "s0/l0", "s0/l1/deep/er", "s0/l1", "s0/l0", NULL, "s0/l1", "s0/l1"};
  if (x_job_uniform(j, 4, 2, 1, order) != 0 || rank_env_alloc(&j->env, 8) != 0) return -1;
  for (int k = 0; k < 8; k++)
    if ((j->env.order[k] = strdup("network")) == NULL || (loc[k] && (j->env.location[k] = strdup(loc[k])) == NULL))
      return -1;
  j->carries = 1;
  return 0;
}

/* D27: on TRN3-SwitchV1, node 2 (ranks 8-11) answers JBOG id 4. */
static int x_case_jbog4(struct xjob *j) {
  if (x_job_uniform(j, 4, 4, 1, id4) != 0 || rank_env_alloc(&j->env, 16) != 0) return -1;
  j->env.vcore = calloc(16, sizeof(int));
  j->env.jbog = calloc(16, sizeof(int));
  if (!j->env.vcore || !j->env.jbog) return -1;
  for (int k = 0; k < 16; k++) j->env.jbog[k] = k / 4 == 2 ? 4 : 1 + k % 3;
  j->switchV1 = j->carries = 1;
  return 0;
}

/* D27, D28: enablePod on 2x4, and rank 5's record damaged after the
 * AllGather (its checksum word changed): unreadable in a pod job. (A
 * record zeroed, another ring stage's, is not checked: D28.) */
static void x_corrupt_damaged_record(struct ncclTopoRanks *slots) {
  ((unsigned char *)&slots[5])[NCCOM_RING_RECORD_OFFSET + offsetof(struct nccomRingRecord, checksum)] ^= 1;
}
static int x_case_pod_record(struct xjob *j) {
  if (x_job_uniform(j, 2, 4, 1, id4) != 0) return -1;
  j->pod = 1;
  j->corrupt = x_corrupt_damaged_record;
  j->carries = podOrderNode;
  return 0;
}

/* ---- named cases of D28: every per-rank input from the gathered bytes ---- */

/* 2x4 in local order 0 1 2 3, with one corruption: kind at rank (and, with
 * oddNode, every rank of its node), value. */
static int x_job_d28(struct xjob *j, int kind, int rank, int value, int oddNode) {
  if (x_job_corrupted(j, 2, 4, 1, id4, kind, rank, 0, value) != 0) return -1;
  j->oddNode = oddNode;
  return 0;
}

/* 2x4, node 1's family hook says TRN3-SwitchV1 to its Presets. */
static int x_case_platform_node(struct xjob *j) { return x_job_d28(j, X_PLATFORM, 4, 0, 1); }

/* 2x4, rank 5's comm->enablePod is set for its Preset. */
static int x_case_pod_one_rank(struct xjob *j) { return x_job_d28(j, X_ENABLEPOD, 5, 0, 0); }

/* 2x4, rank 5's comm->enablePod set after its Preset, for Postset only:
 * Postset no longer reads it (D28). */
static void x_pod_for_postset(int rank, struct ncclComm *c) {
  if (rank == 5) c->enablePod = 1;
}
static int x_case_pod_postset_only(struct xjob *j) {
  if (x_job_d28(j, X_NONE, 0, 0, 0) != 0) return -1;
  j->beforePostset = x_pod_for_postset;
  return 0;
}

/* 2x4 on TRN3-SwitchV1, nKangaRingChannels 2 but 3 on rank 1. */
static int x_case_kanga_one_rank(struct xjob *j) {
  if (x_job_d28(j, X_KANGA, 1, 0, 0) != 0) return -1;
  j->switchV1 = j->carries = 1;
  j->kanga = 2, j->oddKanga = 3;
  return 0;
}

/* 1x4 on TRN3-SwitchV1, nKangaRingChannels 2 on every rank's Preset, and
 * rank 2's comm says 0 at Postset: the records' 2 paths are built (D28). */
static void x_no_paths_for_postset(int rank, struct ncclComm *c) {
  if (rank == 2) c->nKangaRingChannels = 0;
}
static int x_case_kanga_paths(struct xjob *j) {
  if (x_job_uniform(j, 1, 4, 1, id4) != 0) return -1;
  j->switchV1 = j->carries = 1;
  j->kanga = 2;
  j->beforePostset = x_no_paths_for_postset;
  return 0;
}

/* 2x4 on TRN3-SwitchV1, rank 3's record as version 1 of the library writes it. */
static int x_case_version1(struct xjob *j) {
  if (x_job_d28(j, X_REC_VERSION, 3, 0, 0) != 0) return -1;
  j->switchV1 = j->carries = 1;
  return 0;
}

/* 2x4, rank 6's fragment without the magic (another ring stage's). */
static int x_case_no_magic(struct xjob *j) { return x_job_d28(j, X_REC_NONE, 6, 0, 0); }

/* 2x4, a host that does not gather bytes +832...+895: every record zeroed. */
static void x_corrupt_no_records(struct ncclTopoRanks *slots) {
  for (int r = 0; r < 8; r++) memset((unsigned char *)&slots[r] + NCCOM_RING_RECORD_OFFSET, 0, 64);
}
static int x_case_no_records(struct xjob *j) {
  if (x_job_d28(j, X_NONE, 0, 0, 0) != 0) return -1;
  j->corrupt = x_corrupt_no_records;
  return 0;
}

/* 2x4, NCCOM_RING_PLATFORM="trn4\tswitchv2" for node 1's Presets only,
 * run in a process without the hooks (xEnvPlatforms[2]). */
static int x_case_env_unknown_node(struct xjob *j) { return x_job_d28(j, X_ENV_PLATFORM, 4, 5, 1); }

/* 2x4, NCCOM_RING_PLATFORM=trn3-switchv1 for rank 6's Preset only. */
static int x_case_env_switchv1_rank(struct xjob *j) { return x_job_d28(j, X_ENV_PLATFORM, 6, 0, 0); }

/* D25's grouped 8x4 with network on every rank, and rank 9 (node 2)
 * handed its node's graph with another NIC: another fingerprint. */
static int x_case_graph_one_rank(struct xjob *j) {
  if (x_job_d25(j, 8, grouped, -1) != 0 || (j->own = malloc(sizeof *j->own)) == NULL) return -1;
  memcpy(j->own, j->cl->graphs[2], sizeof *j->own);
  j->own->inter[0] += 1;
  j->graphOf[9] = j->own;
  j->kind = X_GRAPH, j->rank = 9;
  return 0;
}

/* Rank 0's rings follow the node sequence seq: on channel c, node seq[i]'s
 * ranks in its channel c % n order (forward or backward), node after node;
 * and, when leaves, each ring crosses between nodes of other leaves
 * (leaf(node)) exactly `crossings` times, the wrap-around included. */
static int x_rings_follow(const struct xverdict *v, int n, const int *seq, int nodes, const char *(*leaf)(int),
                          int crossings, char *why, size_t size) {
  int graphChannels = v->nChannels / 2;
  for (int c = 0; c < v->nChannels; c++) {
    const int *local = c % graphChannels % 2 ? d25Backward : d25Forward;
    for (int i = 0; i < nodes; i++)
      for (int k = 0; k < 4; k++) {
        int want = 4 * seq[i] + local[k], got = v->ring[c * n + 4 * i + k];
        if (got != want) {
          snprintf(why, size, "rank 0's channel %d userRanks[%d] is %d, want %d (nodes in the order of D25)", c,
                   4 * i + k, got, want);
          return 1;
        }
      }
    int cross = 0;
    for (int i = 0; leaf && i < n; i++) cross += strcmp(leaf(v->ring[c * n + i] / 4), leaf(v->ring[c * n + (i + 1) % n] / 4)) != 0;
    if (leaf && cross != crossings) {
      snprintf(why, size, "rank 0's channel %d crosses between leaves %d times, want %d", c, cross, crossings);
      return 1;
    }
  }
  return 0;
}

static int x_rings_d25_example(const struct xverdict *v, int n, char *why, size_t size) {
  static const int seq[] = {0, 2, 4, 6, 1, 3, 5, 7};
  return x_rings_follow(v, n, seq, 8, alternating, 2, why, size);
}
static int x_rings_d25_rank_order(const struct xverdict *v, int n, char *why, size_t size) {
  static const int seq[] = {0, 1, 2, 3, 4, 5, 6, 7};
  return x_rings_follow(v, n, seq, 8, NULL, 0, why, size);
}
static int x_rings_d25_nowhere(const struct xverdict *v, int n, char *why, size_t size) {
  static const int seq[] = {0, 1, 2, 3};
  return x_rings_follow(v, n, seq, 4, NULL, 0, why, size);
}
static int x_rings_d25_no_location(const struct xverdict *v, int n, char *why, size_t size) {
  static const int seq[] = {0, 3, 2, 1};
  return x_rings_follow(v, n, seq, 4, NULL, 0, why, size);
}

/* Issue 8's six inputs, named after what they show, and D23's twist. */
const struct xnamed xNamed[] = {
    {"1: 2x4, rank 2's ringPrev[0] = 0: every rank fails naming rank 2",
     x_case_wrong_prev, 0x00, ncclInternalError, 2, 0, NULL, NULL, NULL, NULL, -1},
    {"2: 2x5, rank 2's own graph moves only its prev: every rank fails naming rank 2",
     x_case_own_graph, 0x00, ncclInternalError, 2, 0, NULL, NULL, NULL, NULL, -1},
    {"3: 2x8, rank 0's fragment also in rank 9's slot: every rank fails naming rank 9",
     x_case_wrong_slot, 0x00, ncclInternalError, 9, 0, NULL, NULL, NULL, NULL, -1},
    {"4: 1x4, 14-channel graphs and one 12-channel graph, buffer zeroed: every rank has 24 channels",
     x_case_counts, 0x00, ncclSuccess, -1, 24, NULL, x_rings_counts, NULL, NULL, -1},
    {"4: 1x4, 14-channel graphs and one 12-channel graph, buffer 0xA5: every rank has 24 channels",
     x_case_counts, 0xA5, ncclSuccess, -1, 24, NULL, x_rings_counts, NULL, NULL, -1},
    {"4b: 1x4, input 4 with rank 3's slot stale in channels 12-13 (14 channels, its record 12): every rank fails "
     "naming rank 3 (D28)",
     x_case_stale_counts, 0x00, ncclInternalError, 3, 0, NULL, NULL,
     "ncclTopoPostset: rank 3's fragment has 14 channels, but its record says its graph has 12: the fragment is "
     "not what its ncclTopoPreset wrote (D28)", NULL, -1},
    {"5: 8x8, rank 52 says prev 53 and next 54: every rank fails naming rank 52",
     x_case_two_links, 0x00, ncclInternalError, 52, 0, NULL, NULL, NULL, NULL, -1},
    {"6: 2x4, channel 1 cycles 4 5 4: rank 0 prints the walk before its WARN",
     x_case_walk, 0x00, ncclInternalError, 5, 0, "Channel 01/02 :    0   1   2   3   4   5   4   5", NULL, NULL, NULL, -1},
    {"D23, D28: 2x4x3, rank 6's ringRecv[2] = -1, fewer channels than its record: every rank fails naming rank 6",
     x_case_fewer, 0x00, ncclInternalError, 6, 0, NULL, NULL,
     "ncclTopoPostset: rank 6's fragment has 2 channels, but its record says its graph has 3: the fragment is not "
     "what its ncclTopoPreset wrote (D28)", NULL, -1},
    {"D25: 8x4 alternating spine0/leafA and spine0/leafB, network on every rank: every rank succeeds, "
     "each ring crosses between the leaves twice",
     x_case_d25_example, 0x00, ncclSuccess, -1, 4, NULL, x_rings_d25_example, "",
     "ncclTopoPostset: NCCOM_RING_NODE_ORDER=network: nodes 0:0 2:8 4:16 6:24 1:4 3:12 5:20 7:28; per ring, "
     "level 1: 0 crossings of 1 groups, level 2: 2 crossings of 2 groups", -1},
    {"D25: 8x4 already grouped by leaf in rank order: the rings of D8's order",
     x_case_d25_grouped, 0x00, ncclSuccess, -1, 4, NULL, x_rings_d25_rank_order, "",
     "ncclTopoPostset: NCCOM_RING_NODE_ORDER=network: nodes 0:0 1:4 2:8 3:12 4:16 5:20 6:24 7:28; per ring, "
     "level 1: 0 crossings of 1 groups, level 2: 2 crossings of 2 groups", -1},
    {"D25: rank 13 of 32 without NCCOM_RING_NODE_ORDER: every rank stitches in rank order with one WARN naming it",
     x_case_d25_one_rank, 0xA5, ncclSuccess, 13, 4, NULL, x_rings_d25_rank_order,
     "ncclTopoPostset: NCCOM_RING_NODE_ORDER=network is not applied: rank 13 asks for rank, unlike rank 0 (asks "
     "for network, the most common): network on 31 ranks, rank on 1, no valid record on 0: stitching in rank "
     "order (D9) on every rank", NULL, -1},
    {"D25: 4x4, node 1 without a location (3 of its 4 ranks): placed last, one WARN naming its head",
     x_case_d25_no_location, 0x00, ncclSuccess, -1, 4, NULL, x_rings_d25_no_location,
     "ncclTopoPostset: NCCOM_RING_NODE_ORDER=network: node 1 (head rank 4) has no location (1 of 4 nodes have "
     "none, NCCOM_RING_LOCATION unset or invalid on most of their ranks): they come after all others, in rank order",
     "ncclTopoPostset: NCCOM_RING_NODE_ORDER=network: nodes 0:0 3:12 2:8 1:4; per ring, level 1: 2 crossings of "
     "2 groups, level 2: 3 crossings of 3 groups", -1},
    {"D25: 4x2 headed by their odd ranks, ties in the plurality: the head's location (none on node 2, placed last)",
     x_case_d25_ties, 0x00, ncclSuccess, -1, 2, NULL, NULL,
     "ncclTopoPostset: NCCOM_RING_NODE_ORDER=network: node 2 (head rank 5) has no location (1 of 4 nodes have "
     "none, NCCOM_RING_LOCATION unset or invalid on most of their ranks): they come after all others, in rank order",
     "ncclTopoPostset: NCCOM_RING_NODE_ORDER=network: nodes 0:1 1:3 3:7 2:5; per ring, level 1: 2 crossings of 2 "
     "groups, level 2: 3 crossings of 3 groups", -1},
    {"D25: 4x4, network on every rank and no location anywhere: D8's rings, one WARN, a summary without levels",
     x_case_d25_nowhere, 0x00, ncclSuccess, -1, 4, NULL, x_rings_d25_nowhere,
     "ncclTopoPostset: NCCOM_RING_NODE_ORDER=network: node 0 (head rank 0) has no location (4 of 4 nodes have "
     "none, NCCOM_RING_LOCATION unset or invalid on most of their ranks): they come after all others, in rank order",
     "ncclTopoPostset: NCCOM_RING_NODE_ORDER=network: nodes 0:0 1:4 2:8 3:12; per ring", -1},
    {"D27: 4x4 on TRN3-SwitchV1, node 2 answers JBOG id 4: every rank fails naming rank 8",
     x_case_jbog4, 0x00, ncclInternalError, 8, 0, NULL, NULL, NULL, NULL, -1},
    {"D27, D28: 2x4 with enablePod, rank 5's record damaged: every rank fails naming rank 5 (unreadable in a pod "
     "job, before the pod order)",
     x_case_pod_record, 0x00, ncclInternalError, 5, 0, NULL, NULL, NULL, NULL, -1},
    {"D28: 2x4, node 1's family hook says TRN3-SwitchV1: every rank fails naming rank 4 (a 4/4 split: rank 0's is "
     "the reference)",
     x_case_platform_node, 0x00, ncclInternalError, 4, 0, NULL, NULL,
     "ncclTopoPostset: rank 4 has platform trn3-switchv1, unlike rank 0 (platform generic, the most common): "
     "generic on 4 ranks, trn3-switchv1 on 4 ranks; every rank must run on one platform (D28)", NULL, -1},
    {"D28: 2x4, comm->enablePod on rank 5's Preset only: every rank fails naming rank 5",
     x_case_pod_one_rank, 0x00, ncclInternalError, 5, 0, NULL, NULL,
     "ncclTopoPostset: rank 5 has enablePod 1, unlike rank 0 (enablePod 0, the most common): 0 on 7 ranks, 1 on "
     "1 rank; every rank must set comm->enablePod alike (D28)", NULL, -1},
    {"D28: 2x4, comm->enablePod set on rank 5 for Postset only: not read, every rank succeeds",
     x_case_pod_postset_only, 0x00, ncclSuccess, -1, 2, NULL, NULL, "", NULL, -1},
    {"D28: 2x4 on TRN3-SwitchV1, nKangaRingChannels 3 on rank 1, 2 elsewhere: every rank fails naming rank 1",
     x_case_kanga_one_rank, 0x00, ncclInternalError, 1, 0, NULL, NULL,
     "ncclTopoPostset: rank 1 has nKangaRingChannels 3, unlike rank 0 (nKangaRingChannels 2, the most common): 2 "
     "on 7 ranks, 3 on 1 rank; every rank on TRN3-SwitchV1 must have the same count (D28)", NULL, -1},
    {"D28: 1x4 on TRN3-SwitchV1, nKangaRingChannels 2 at Preset, 0 in rank 2's comm at Postset: the records' 2 "
     "paths on every rank",
     x_case_kanga_paths, 0x00, ncclSuccess, -1, 2, NULL, NULL, "", "built 2 kangaring paths", -1},
    {"D28: 2x4 on TRN3-SwitchV1, rank 3's record of version 1: every rank fails naming rank 3 and the version",
     x_case_version1, 0x00, ncclInternalError, 3, 0, NULL, NULL,
     "ncclTopoPostset: rank 3's record is unreadable (version 1, this library reads version 2; 1 of 8 records "
     "are): on TRN3-SwitchV1 every rank's record is needed (D28)", NULL, -1},
    {"D28: 2x4, rank 6's fragment without the magic (another ring stage): every rank succeeds with one INFO",
     x_case_no_magic, 0x00, ncclSuccess, -1, 2, NULL, NULL, "",
     "ncclTopoPostset: rank 6's fragment carries no record of this library (1 of 8 fragments: another ring stage, "
     "such as libnccom's own): not checked here, their own library checks them (D28)", -1},
    {"D28: 2x4, no record gathered: every rank succeeds in rank order with one WARN",
     x_case_no_records, 0xA5, ncclSuccess, -1, 2, NULL, NULL,
     "ncclTopoPostset: no fragment holds a valid record of this library (0 of 8 carry its magic, damaged or of "
     "another version): the host did not gather bytes +832...+895 of struct ncclTopoRanks, or its ranks run another "
     "version of this library; each rank takes its platform from itself and nodes are stitched in rank order (D28)",
     NULL, -1},
    {"D28: 2x4, NCCOM_RING_PLATFORM names no platform on node 1 only (no hooks there): every rank fails naming rank 4",
     x_case_env_unknown_node, 0x00, ncclInternalError, 4, 0, NULL, NULL,
     "ncclTopoPostset: rank 4's NCCOM_RING_PLATFORM named no platform (4 of 8 valid records say so): set it to "
     "generic or trn3-switchv1 on every rank (D28)", NULL, -1},
    {"D28: 2x4, NCCOM_RING_PLATFORM=trn3-switchv1 on rank 6 only (no hooks there): every rank fails naming rank 6",
     x_case_env_switchv1_rank, 0x00, ncclInternalError, 6, 0, NULL, NULL,
     "ncclTopoPostset: rank 6 has platform trn3-switchv1, unlike rank 0 (platform generic, the most common): generic "
     "on 7 ranks, trn3-switchv1 on 1 rank; every rank must run on one platform (D28)", NULL, -1},
    {"D28: 8x4 grouped, network on every rank, rank 9 with another graph NIC: rank order, one WARN naming rank 9",
     x_case_graph_one_rank, 0x00, ncclSuccess, 9, 4, NULL, x_rings_d25_rank_order, NULL, NULL, -1},
};
const size_t xNamedCount = sizeof xNamed / sizeof xNamed[0];

/* Checks a named case's expectation against library lib's verdict. */
int x_expect(const struct xnamed *k, int lib, int n, char *why, size_t size) {
  const struct xverdict *v = &xv[lib];
  if (v->res != k->res) {
    snprintf(why, size, "returned %d, want %d; WARN: %s", (int)v->res, (int)k->res, v->warn[0] ? v->warn : "(none)");
    return 1;
  }
  int rank = k->podRank >= 0 && podOrderNode ? k->podRank : k->rank;
  if ((k->res != ncclSuccess || rank >= 0) && x_named_rank(v->warn) != rank) {
    snprintf(why, size, "the WARN does not name rank %d: %s", rank, v->warn[0] ? v->warn : "(none)");
    return 1;
  }
  if (k->warn && strcmp(v->warn, k->warn) != 0) {
    snprintf(why, size, "the WARN is \"%s\", want \"%s\"", v->warn, k->warn);
    return 1;
  }
  if (k->info) {
    char want[1024];
    snprintf(want, sizeof want, "NCCL INFO %s\n", k->info);
    if (strstr(v->log, want) == NULL) {
      snprintf(why, size, "rank 0 does not print \"%s\"; it printed:\n%.2500s", k->info, v->log);
      return 1;
    }
  }
  if (k->res == ncclSuccess && v->nChannels != k->channels) {
    snprintf(why, size, "*nChannels is %d, want %d", v->nChannels, k->channels);
    return 1;
  }
  if (k->walk) {
    char want[512];
    snprintf(want, sizeof want, "NCCL INFO %s\n", k->walk);
    const char *at = strstr(v->log, want), *w = strstr(v->log, "NCCL WARN");
    if (at == NULL || w == NULL || at > w) {
      snprintf(why, size, "rank 0 does not print \"%s\" before its WARN; it printed:\n%s", k->walk, v->log);
      return 1;
    }
  }
  return k->rings && k->res == ncclSuccess ? k->rings(v, n, why, size) : 0;
}

/* The rank a failing random job's WARN must name: the corrupted slot's,
 * or, for D28's kinds of one rank's own state, the odd one out. */
int x_want_named(const struct xjob *j) {
  if (j->kind == X_ENV_PLATFORM && xEnvPlatformKind[((unsigned)j->value >> 1) % 5] == 2)
    for (int k = 0; k < j->nRanks; k++) /* an unknown platform: the lowest rank that has it */
      if (x_odd(j, k)) return k;
  return (j->kind >= X_PLATFORM && j->kind <= X_GRAPH) || j->kind == X_ENV_PLATFORM ? x_odd_one_out(j) : j->rank;
}

/* The one verdict a random job with a record corruption or one of D28's
 * kinds must reach (D25, D27, D28): the WARN names the rank it must, or
 * nothing changes (success without a WARN; with a fragment without the
 * magic, D28's INFO naming it). Where the outcome depends on more than
 * this (a job of one rank, whose lone record decides; pods refused
 * anyway), only the one verdict is asserted. Returns 2 when the WARN
 * named the rank, 1 when nothing changed or nothing more is asserted, 0
 * otherwise (why says what was wanted). */
int x_expect_random(const struct xjob *j, char *why, size_t size) {
  const struct xverdict *v = &xv[0];
  const int n = j->nRanks, M = j->cl->nNodes, sw = j->switchV1, podJob = j->pod && M > 1, policy = j->env.n > 0;
  const int odd = x_odd_one_out(j);
  const int none = j->kind == X_REC_NONE || (j->kind == X_REC_FLIP && (unsigned)j->value % 64 < 4);
  int named = -2; /* the rank the WARN must name; -1 nothing changes; -2 not asserted */
  switch (j->kind) {
  case X_PLATFORM: named = odd >= 0 ? odd : -2; break;                /* platform */
  case X_ENABLEPOD: named = odd >= 0 && M > 1 ? odd : -2; break;      /* enablePod, more than one node */
  case X_KANGA: named = odd >= 0 && sw ? odd : -2; break;             /* nKangaRingChannels on SwitchV1 */
  case X_GRAPH:                                                       /* the policy's graph fingerprints */
    named = odd >= 0 && policy && !sw && !podJob ? odd : !policy && !podJob ? -1 : -2;
    break;
  case X_STALE_COUNT: named = j->rank; break;                         /* the channel-count match */
  case X_ENV_PLATFORM: {                                              /* an unknown platform, the platform */
    int kind = xEnvPlatformKind[((unsigned)j->value >> 1) % 5];
    named = kind == 2 ? x_want_named(j) : kind != sw && odd >= 0 ? odd : -2;
    break;
  }
  default:
    if (n == 1) named = -2;
    else if (none) /* another ring stage: not checked (D28, pods too), but by the policy */
      named = podJob ? (podOrderNode ? -1 : -2) : policy && !sw ? j->rank : -1;
    else if (j->kind == X_REC_VERSION) /* an error on SwitchV1 and in a pod job, else a WARN naming it */
      named = j->rank;
    else /* unreadable: an error on SwitchV1 and in a pod job; the policy's odd one out */
      named = sw || podJob || policy ? j->rank : -1;
  }
  if (named >= 0) {
    if (x_named_rank(v->warn) != named) {
      snprintf(why, size, "the WARN must name rank %d", named);
      return 0;
    }
    const char *version = j->value & 1 ? "(version 3, this library reads version 2;" : "(version 1, this library reads version 2;";
    if (j->kind == X_REC_VERSION && (sw || podJob) && strstr(v->warn, version) == NULL) {
      snprintf(why, size, "the WARN must say %s", version);
      return 0;
    }
    return 2;
  }
  if (named == -1) {
    if (v->res != ncclSuccess || v->warn[0]) {
      snprintf(why, size, "every rank must succeed without a WARN");
      return 0;
    }
    if (none && strstr(v->shared, "fragment carries no record of this library (1 of ") == NULL) {
      snprintf(why, size, "every rank must print D28's INFO on the fragment without the magic");
      return 0;
    }
  }
  return 1;
}
