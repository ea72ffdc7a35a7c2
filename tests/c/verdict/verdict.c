/*
 * verdict - issue 8, "one AllGather, one verdict", through the C ABI of
 * build/libnccomring.so (D23, D24; docs/errors.md, "ncclTopoPostset").
 *
 * Every rank of a job runs ncclTopoPostset on the same gathered 960-byte
 * fragments. This host plays every rank in one process: Preset on every rank
 * straight into the gathered buffer (as the AllGather's own slot), the
 * corruption of the case, then Postset on every rank with its own
 * communicator. It asserts one verdict: the same result code on every rank;
 * on failure exactly one WARN per call with the same text after
 * "NCCL WARN " (the line's [rank] prefix is the caller's), the caller's
 * communicator untouched (D11); on success the same nChannels, nNodes,
 * nodesFirstRank and rings (each rank's userRanks the same cycle started at
 * itself, prev/next its last and second entries).
 *
 * The process logs at NCCL_DEBUG=INFO, NCCL_DEBUG_SUBSYS=INIT into a file
 * (NCCL_DEBUG_FILE) that it reads back after each call, so every call's
 * whole log is checked in order: the D23 count line on every rank, rank 0's
 * walk lines of the failing rings before its WARN (or its Channel lines on
 * success), nothing else.
 *
 * Every expected text below was worked out by hand from docs/errors.md
 * ("Diagnosis (D24)", "Walks on rank 0"); the comments show the working.
 */
#if !defined(_GNU_SOURCE) && !defined(_POSIX_C_SOURCE)
#define _POSIX_C_SOURCE 200809L
#endif
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../common/cluster.h"
#include "../common/host.h"

static int failures;
static const char *current;
static FILE *logFile;

#define CHECK(cond, ...)                                                  \
  do {                                                                    \
    if (!(cond)) {                                                        \
      failures++;                                                         \
      fprintf(stderr, "verdict: %s: FAIL %s: ", current, #cond);          \
      fprintf(stderr, __VA_ARGS__);                                       \
      fputc('\n', stderr);                                                \
    }                                                                     \
  } while (0)

/* ---- the log of one call ---- */

enum { MAX_LINES = 48, LINE_LEN = 1024 };
struct logline {
  char kind; /* 'W' or 'I' */
  int rank;  /* the [rank] of the prefix */
  char text[LINE_LEN];
};
struct calllog {
  int n;
  struct logline lines[MAX_LINES];
};

/* Reads the lines the library wrote since the last read. A line that is not
 * "<host>:<pid>:<tid> [<rank>] NCCL WARN|INFO <text>" counts as a failure. */
static void read_log(struct calllog *out) {
  static char line[16384];
  out->n = 0;
  clearerr(logFile);
  while (fgets(line, sizeof line, logFile)) {
    line[strcspn(line, "\n")] = '\0';
    char *open = strstr(line, " [");
    char *close = open ? strstr(open, "] NCCL ") : NULL;
    if (close == NULL || (strncmp(close, "] NCCL WARN ", 12) != 0 && strncmp(close, "] NCCL INFO ", 12) != 0)) {
      CHECK(0, "not an NCCL log line: %s", line);
      continue;
    }
    if (out->n == MAX_LINES) {
      CHECK(0, "more than %d log lines in one call", MAX_LINES);
      continue;
    }
    struct logline *l = &out->lines[out->n++];
    l->kind = close[7];
    l->rank = atoi(open + 2);
    snprintf(l->text, sizeof l->text, "%s", close + 12);
  }
}

/* ---- one job: every rank's communicator and the gathered fragments ---- */

struct job {
  int nNodes, local, nRanks;
  struct cluster *cl;             /* graphs (intra orders) and systems */
  struct ncclComm **comms;        /* [nRanks] */
  struct ncclTopoRanks *frags;    /* [nRanks] the AllGather buffer */
  struct ncclTopoRanks **all;     /* [nRanks] */
  /* Postset's outcome per rank */
  ncclResult_t *res;
  int *nChannels, *nNodesOut, *heads; /* heads: [nRanks * nRanks] */
  struct calllog *logs;           /* [nRanks] */
};

/* nNodes nodes of `local` ranks; channel c runs orders[c] (local indices) on
 * every node. */
static struct job *job_new(int nNodes, int local, int nCh, const int *const *orders) {
  struct job *j = calloc(1, sizeof *j);
  int *locals = malloc((size_t)nNodes * sizeof(int));
  for (int m = 0; m < nNodes; m++) locals[m] = local;
  j->nNodes = nNodes, j->local = local, j->nRanks = nNodes * local;
  j->cl = cluster_new(nNodes, locals);
  free(locals);
  for (int c = 0; c < nCh; c++) cluster_set_channel(j->cl, c, orders[c], local, -1, -1);
  cluster_set_nchannels(j->cl, nCh);
  size_t n = (size_t)j->nRanks;
  j->comms = calloc(n, sizeof *j->comms);
  j->frags = malloc(n * sizeof *j->frags);
  j->all = calloc(n, sizeof *j->all);
  j->res = calloc(n, sizeof *j->res);
  j->nChannels = calloc(n, sizeof(int));
  j->nNodesOut = calloc(n, sizeof(int));
  j->heads = calloc(n * n, sizeof(int));
  j->logs = calloc(n, sizeof *j->logs);
  if (!j->cl || !j->comms || !j->frags || !j->all || !j->res || !j->nChannels || !j->nNodesOut ||
      !j->heads || !j->logs) {
    fprintf(stderr, "verdict: out of memory\n");
    exit(2);
  }
  return j;
}

static void job_free(struct job *j) {
  for (int r = 0; r < j->nRanks; r++) {
    if (j->comms[r] == NULL) continue;
    for (int c = 0; c < MAXCHANNELS; c++) free(j->comms[r]->channels[c].ring.userRanks);
    free(j->comms[r]);
  }
  cluster_free(j->cl);
  free(j->comms), free(j->frags), free(j->all), free(j->res);
  free(j->nChannels), free(j->nNodesOut), free(j->heads), free(j->logs);
  free(j);
}

/* Preset on every rank (a zeroed communicator, as libnrt allocates it) into
 * its slot of the gathered buffer, pre-filled with `fill`. graphOf(r), when
 * given, replaces the rank's node graph. */
static void job_preset(struct job *j, unsigned char fill, struct ncclTopoGraph *(*graphOf)(struct job *, int)) {
  memset(j->frags, fill, (size_t)j->nRanks * sizeof *j->frags);
  for (int r = 0; r < j->nRanks; r++) {
    int m = r / j->local;
    struct ncclComm *comm = calloc(1, sizeof *comm);
    if (comm == NULL) exit(2);
    comm->rank = r;
    comm->nRanks = j->nRanks;
    comm->localRanks = j->local;
    comm->topo = &j->cl->systems[m];
    j->comms[r] = comm;
    struct ncclTopoGraph *g = graphOf ? graphOf(j, r) : NULL;
    ncclResult_t res = ncclTopoPreset(comm, g ? g : j->cl->graphs[m], &j->frags[r]);
    CHECK(res == ncclSuccess, "Preset on rank %d returned %d", r, (int)res);
    j->all[r] = &j->frags[r];
    /* Preset's own INFO lines (the platform it assumes) are not this
     * test's; a successful Preset prints no WARN. */
    static struct calllog drop;
    read_log(&drop);
    for (int i = 0; i < drop.n; i++)
      CHECK(drop.lines[i].kind == 'I', "Preset on rank %d printed a WARN: %s", r, drop.lines[i].text);
  }
}

/* Postset on every rank with its own communicator; on failure the
 * communicator must be byte for byte what it was (D11). */
static void job_postset(struct job *j) {
  size_t n = (size_t)j->nRanks;
  struct ncclComm *before = malloc(sizeof *before);
  for (int r = 0; r < j->nRanks; r++) {
    int *heads = &j->heads[(size_t)r * n];
    memset(heads, 0x3C, n * sizeof(int));
    j->nChannels[r] = j->nNodesOut[r] = -777;
    memcpy(before, j->comms[r], sizeof *before);
    j->res[r] = ncclTopoPostset(j->comms[r], heads, j->all, &j->nChannels[r], &j->nNodesOut[r]);
    read_log(&j->logs[r]);
    if (j->res[r] != ncclSuccess) {
      CHECK(memcmp(before, j->comms[r], sizeof *before) == 0, "rank %d: the failed call changed its comm", r);
      CHECK(j->nChannels[r] == -777 && j->nNodesOut[r] == -777, "rank %d: out-parameters written", r);
      CHECK(heads[0] == 0x3C3C3C3C, "rank %d: nodesFirstRank written", r);
    }
  }
  free(before);
}

/* The D23 count line when every fragment and comm agree on n channels. */
static void count_line(char *out, size_t size, int n, int firstRank) {
  snprintf(out, size, "ncclTopoPostset: %d channels, the smallest channel count of any fragment, first held by rank %d (D23)",
           n, firstRank);
}

/* A fragment's channel count (D23): its leading channels with ringRecv >= 0. */
static int fragment_channels(const struct ncclTopoRanks *f) {
  int k = 0;
  while (k < MAXCHANNELS && f->ringRecv[k] >= 0) k++;
  return k;
}

/* Checks one call's log against the expected sequence (kinds 'I'/'W' and
 * texts), every line carrying the caller's rank. */
static void expect_log(const struct job *j, int r, int nWant, const char *const *kinds, const char *const *texts) {
  const struct calllog *lg = &j->logs[r];
  CHECK(lg->n == nWant, "rank %d logged %d lines, want %d", r, lg->n, nWant);
  for (int i = 0; i < lg->n && i < nWant; i++) {
    const struct logline *l = &lg->lines[i];
    CHECK(l->kind == kinds[i][0] && strcmp(l->text, texts[i]) == 0,
          "rank %d line %d\n  got:  %c %s\n  want: %c %s", r, i, l->kind, l->text, kinds[i][0], texts[i]);
    CHECK(l->rank == r, "rank %d line %d has prefix [%d]", r, i, l->rank);
  }
  for (int i = nWant; i < lg->n; i++) fprintf(stderr, "  extra: %c %s\n", lg->lines[i].kind, lg->lines[i].text);
}

/* One verdict, a failure: every rank returns `want` and logs the count line
 * and the WARN; rank 0 logs the walk lines in between. */
static void expect_failure(struct job *j, ncclResult_t want, const char *countLine, const char *warn, int nWalks,
                           const char *const *walks) {
  int agree = 0;
  for (int r = 0; r < j->nRanks; r++) {
    CHECK(j->res[r] == want, "rank %d returned %d, want %d", r, (int)j->res[r], (int)want);
    agree += j->res[r] == want;
    const char *kinds[MAX_LINES], *texts[MAX_LINES];
    int k = 0;
    kinds[k] = "I", texts[k++] = countLine;
    for (int w = 0; r == 0 && w < nWalks; w++) kinds[k] = "I", texts[k++] = walks[w];
    kinds[k] = "W", texts[k++] = warn;
    expect_log(j, r, k, kinds, texts);
  }
  printf("  %d of %d ranks: %d, WARN \"%s\"\n", agree, j->nRanks, (int)want, warn);
}

/* One verdict, a success: every rank returns ncclSuccess with wantChannels
 * and wantNodes; ring c of every rank is the cycle succ[c % n] (next of each
 * rank), its userRanks that cycle from itself, prev/next its last and second
 * entries; rank 0 also logs one Channel line per channel. */
static void expect_success(struct job *j, const char *countLine, int wantChannels, int wantNodes,
                           const int *wantHeads, const int *const *succ, int n) {
  int nR = j->nRanks, agree = 0;
  for (int r = 0; r < nR; r++) {
    CHECK(j->res[r] == ncclSuccess, "rank %d returned %d", r, (int)j->res[r]);
    if (j->res[r] != ncclSuccess) continue;
    agree++;
    const struct ncclComm *comm = j->comms[r];
    CHECK(j->nChannels[r] == wantChannels && comm->nChannels == wantChannels, "rank %d nChannels %d/%d, want %d", r,
          j->nChannels[r], comm->nChannels, wantChannels);
    CHECK(j->nNodesOut[r] == wantNodes && comm->nNodes == wantNodes, "rank %d nNodes %d/%d, want %d", r,
          j->nNodesOut[r], comm->nNodes, wantNodes);
    CHECK(comm->node == r / j->local, "rank %d node %d", r, comm->node);
    for (int m = 0; m < wantNodes; m++)
      CHECK(j->heads[(size_t)r * (size_t)nR + (size_t)m] == wantHeads[m], "rank %d nodesFirstRank[%d] %d, want %d", r,
            m, j->heads[(size_t)r * (size_t)nR + (size_t)m], wantHeads[m]);
    for (int c = 0; c < wantChannels; c++) {
      const struct ncclRing *ring = &comm->channels[c].ring;
      const int *s = succ[c % n];
      CHECK(ring->userRanks != NULL, "rank %d channel %d has no userRanks", r, c);
      if (ring->userRanks == NULL) continue;
      CHECK(ring->userRanks[0] == r, "rank %d channel %d userRanks[0] %d", r, c, ring->userRanks[0]);
      for (int i = 0; i + 1 < nR; i++)
        CHECK(ring->userRanks[i + 1] == s[ring->userRanks[i]], "rank %d channel %d userRanks[%d] %d, want %d", r, c,
              i + 1, ring->userRanks[i + 1], s[ring->userRanks[i]]);
      CHECK(s[ring->userRanks[nR - 1]] == r, "rank %d channel %d does not close", r, c);
      CHECK(ring->next == ring->userRanks[1 % nR] && ring->prev == ring->userRanks[nR - 1],
            "rank %d channel %d prev/next %d/%d, userRanks give %d/%d", r, c, ring->prev, ring->next,
            ring->userRanks[nR - 1], ring->userRanks[1 % nR]);
    }
    /* The count line; D27's WARN on a rank whose own graph (comm->nChannels
     * as its Preset set it, here its own fragment's count) has another count
     * than the job's n, in either direction (D28); on rank 0 ncclBuildRings'
     * Channel lines (D17). */
    static char channelLines[MAXCHANNELS][LINE_LEN], ownWarn[LINE_LEN];
    const char *kinds[MAX_LINES], *texts[MAX_LINES];
    int k = 0;
    kinds[k] = "I", texts[k++] = countLine;
    int own = fragment_channels(&j->frags[r]), first = 0;
    while (fragment_channels(&j->frags[first]) != n) first++;
    if (own != n) {
      snprintf(ownWarn, sizeof ownWarn,
               "ncclTopoPostset: this rank's graph has %d channels (comm->nChannels), the job %d (the smallest "
               "channel count of any fragment, first held by rank %d): give its ncclTopoGetNetDev a graph of %d "
               "channels, or its channels use the NICs of another graph channel (D27, D28)",
               own, n, first, n);
      kinds[k] = "W", texts[k++] = ownWarn;
    }
    for (int c = 0; r == 0 && c < wantChannels; c++) {
      int used = snprintf(channelLines[c], LINE_LEN, "Channel %02d/%02d : ", c, wantChannels);
      for (int i = 0, cur = 0; i < nR && used < LINE_LEN; i++, cur = succ[c % n][cur])
        used += snprintf(channelLines[c] + used, (size_t)(LINE_LEN - used), " %3d", cur);
      kinds[k] = "I", texts[k++] = channelLines[c];
    }
    expect_log(j, r, k, kinds, texts);
  }
  printf("  %d of %d ranks: ncclSuccess, %d channels, %d nodes\n", agree, nR, wantChannels, wantNodes);
}

/* A walk line of "Walks on rank 0": the prefix, " %3d" per rank of
 * ranks[0..len), then the tail (" ... (%d more)", " (next is -1)" or ""). */
static const char *walk_line(char *out, int c, int n, const int *ranks, int len, const char *tail) {
  int used = snprintf(out, LINE_LEN, "Channel %02d/%02d : ", c, n);
  for (int i = 0; i < len; i++) used += snprintf(out + used, (size_t)(LINE_LEN - used), " %3d", ranks[i]);
  snprintf(out + used, (size_t)(LINE_LEN - used), "%s", tail);
  return out;
}

/* A test begins: its name, on stdout and in its failures. */
static void begin(const char *name) {
  current = name;
  printf("%s\n", current);
}

/* ---- the six inputs of issue 8 ---- */

/* Input 1. 2 nodes x 4, one channel 0 1 2 3 (node 1: 4 5 6 7); after
 * Preset rank 2's fragment says ringPrev[0] = 0 (its predecessor is 1).
 * Diagnosis, channel 0, node 0 (head 0, tail 3): rank 1's next 2, but 2's
 * prev is 0: (1, 2) "ringNext is 2 but rank 2's ringPrev is 0" (no rank has
 * prev 1, so no "reached by nobody"); rank 2's prev 0, but 0's next is 1:
 * (2, 0). Votes: 2 has 2, 0 and 1 one each: rank 2, with its own detail.
 * Stitched: next runs 0 1 2 3 | 4 5 6 7 | 0, a cycle, but prev[2] = 0, so
 * channel 0 fails and rank 0 prints its walk, all 8 ranks. */
static void wrong_prev_of_one_rank_fails_every_rank_naming_it(void) {
  begin(__func__);
  static const int id[4] = {0, 1, 2, 3};
  const int *orders[1] = {id};
  struct job *j = job_new(2, 4, 1, orders);
  job_preset(j, 0, NULL);
  CHECK(j->frags[2].ringPrev[0] == 1, "Preset gave rank 2 prev %d, want 1", j->frags[2].ringPrev[0]);
  j->frags[2].ringPrev[0] = 0;
  job_postset(j);
  char count[LINE_LEN], walk[LINE_LEN];
  count_line(count, sizeof count, 1, 0);
  static const int ranks[8] = {0, 1, 2, 3, 4, 5, 6, 7};
  const char *walks[1] = {walk_line(walk, 0, 1, ranks, 8, "")};
  CHECK(strcmp(walk, "Channel 00/01 :    0   1   2   3   4   5   6   7") == 0, "walk line %s", walk);
  expect_failure(j, ncclInternalError, count, "ncclTopoPostset: rank 2, channel 0: ringPrev is 0 but rank 0's ringNext is 1",
                 1, walks);
  job_free(j);
}

/* Input 2. 2 nodes x 5, channel 0 runs 0 1 4 2 3 on every rank but rank 2,
 * whose own graph says 0 4 1 2 3: same head 0, tail 3 and next 3 for rank
 * 2, but its prev is 1 instead of 4. Diagnosis, node 0 = {0 1 2 3 4}: rank
 * 2's prev 1, but 1's next is 4: (2, 1) "ringPrev is 1 but rank 1's
 * ringNext is 4"; rank 4's next 2, but 2's prev is 1: (4, 2), and no rank
 * has prev 4. Votes: 2 has 2: rank 2. Walk: 0 1 4 2 3, node 0's tail 3 to
 * node 1's head 5, 5 6 9 7 8, and back to 0. */
static struct ncclTopoGraph *rank2Graph;
static struct ncclTopoGraph *own_graph_of_rank_2(struct job *j, int r) {
  (void)j;
  return r == 2 ? rank2Graph : NULL;
}
static void rank_with_its_own_intra_order_fails_every_rank_naming_it(void) {
  begin(__func__);
  static const int order[5] = {0, 1, 4, 2, 3};
  const int *orders[1] = {order};
  struct job *j = job_new(2, 5, 1, orders);
  rank2Graph = malloc(sizeof *rank2Graph);
  memcpy(rank2Graph, j->cl->graphs[0], sizeof *rank2Graph);
  static const int own[5] = {0, 4, 1, 2, 3};
  memcpy(rank2Graph->intra, own, sizeof own);
  job_preset(j, 0, own_graph_of_rank_2);
  CHECK(j->frags[2].ringRecv[0] == 0 && j->frags[2].ringSend[0] == 3 && j->frags[2].ringPrev[0] == 1 &&
            j->frags[2].ringNext[0] == 3,
        "rank 2's fragment %d %d %d %d, want 0 3 1 3", j->frags[2].ringRecv[0], j->frags[2].ringSend[0],
        j->frags[2].ringPrev[0], j->frags[2].ringNext[0]);
  job_postset(j);
  char count[LINE_LEN], walk[LINE_LEN];
  count_line(count, sizeof count, 1, 0);
  static const int ranks[10] = {0, 1, 4, 2, 3, 5, 6, 9, 7, 8};
  const char *walks[1] = {walk_line(walk, 0, 1, ranks, 10, "")};
  expect_failure(j, ncclInternalError, count, "ncclTopoPostset: rank 2, channel 0: ringPrev is 1 but rank 1's ringNext is 4",
                 1, walks);
  job_free(j);
  free(rank2Graph);
}

/* Input 3. 2 nodes x 8, channel 0 runs 0 7 6 5 4 3 2 1 (node 1: 8 15 ... 9);
 * the AllGather delivers rank 0's fragment in rank 9's slot. Slot 9 says
 * head 0, so node 0 = {0..7, 9} (9 ranks) and node 1 = {8, 10..15}, whose
 * tail is still 9. Node 0 (head 0, tail 1): 9's next 7, but 7's prev is 0:
 * (9, 7) "ringNext is 7 but rank 7's ringPrev is 0" (no rank has prev 9);
 * 9's prev -1 but head 0: (9). Node 1: its tail 9 is in node 0 (9); 10's
 * next 9 is in node 0 (10, 9). Votes: 9 has 4: rank 9, its first detail.
 * Stitched next: 0 7 6 5 4 3 2 1, tail 1 to head 8, 8 15 14 ... 10 9, and
 * tail 9 to head 0: a cycle, but slot 9's prev is -1. */
static void fragment_delivered_in_two_slots_fails_every_rank_naming_the_copy(void) {
  begin(__func__);
  static const int order[8] = {0, 7, 6, 5, 4, 3, 2, 1};
  const int *orders[1] = {order};
  struct job *j = job_new(2, 8, 1, orders);
  job_preset(j, 0, NULL);
  j->frags[9] = j->frags[0];
  job_postset(j);
  char count[LINE_LEN], walk[LINE_LEN];
  count_line(count, sizeof count, 1, 0);
  static const int ranks[16] = {0, 7, 6, 5, 4, 3, 2, 1, 8, 15, 14, 13, 12, 11, 10, 9};
  const char *walks[1] = {walk_line(walk, 0, 1, ranks, 16, "")};
  expect_failure(j, ncclInternalError, count, "ncclTopoPostset: rank 9, channel 0: ringNext is 7 but rank 7's ringPrev is 0",
                 1, walks);
  job_free(j);
}

/* Input 4. 1 node x 4; ranks 0-2 are handed a 14-channel graph (even
 * channels 0 1 2 3, odd channels 3 2 1 0), rank 3 its 12-channel prefix.
 * D23: Preset writes -1 from channel 14 (ranks 0-2) or 12 (rank 3) on, so
 * the four arrays are fully written whatever the buffer held; n = min(14,
 * 14, 14, 12) = 12, first held by rank 3 (D27: no comm->nChannels); every
 * rank doubles to 24, and ranks 0-2, whose own graphs have 14, are told so
 * (D27's WARN). One node closes on itself: even channels 0>1>2>3>0, odd
 * 0>3>2>1>0; channel c + 12 repeats channel c (same parity). */
static struct ncclTopoGraph *prefixGraph;
static struct ncclTopoGraph *prefix_graph_of_rank_3(struct job *j, int r) {
  (void)j;
  return r == 3 ? prefixGraph : NULL;
}
static void graphs_with_different_channel_counts_agree_on_the_smallest(unsigned char fill) {
  static char name[128];
  snprintf(name, sizeof name, "graphs_with_different_channel_counts_agree_on_the_smallest (buffer 0x%02X)", fill);
  begin(name);
  static const int fwd[4] = {0, 1, 2, 3}, rev[4] = {3, 2, 1, 0};
  const int *orders[14];
  for (int c = 0; c < 14; c++) orders[c] = c % 2 == 0 ? fwd : rev;
  struct job *j = job_new(1, 4, 14, orders);
  prefixGraph = malloc(sizeof *prefixGraph);
  memcpy(prefixGraph, j->cl->graphs[0], sizeof *prefixGraph);
  prefixGraph->nChannels = 12;
  job_preset(j, fill, prefix_graph_of_rank_3);
  CHECK(j->comms[0]->nChannels == 14 && j->comms[3]->nChannels == 12, "Preset set nChannels %d and %d",
        j->comms[0]->nChannels, j->comms[3]->nChannels);
  CHECK(j->frags[0].ringRecv[13] == 3 && j->frags[0].ringRecv[14] == -1 && j->frags[3].ringRecv[11] == 3 &&
            j->frags[3].ringRecv[12] == -1 && j->frags[3].ringNext[31] == -1,
        "Preset's channel counts in the fragments (D23)");
  job_postset(j);
  char count[LINE_LEN];
  count_line(count, sizeof count, 12, 3);
  /* The count line, read from the log: every rank prints it. */
  if (j->logs[0].n > 0) printf("  rank 0: NCCL INFO %s\n", j->logs[0].lines[0].text);
  CHECK(strcmp(count, "ncclTopoPostset: 12 channels, the smallest channel count of any fragment, first held by rank 3 (D23)") == 0,
        "count line %s", count);
  static const int even[4] = {1, 2, 3, 0}, odd[4] = {3, 0, 1, 2};
  const int *succ[12];
  for (int c = 0; c < 12; c++) succ[c] = c % 2 == 0 ? even : odd;
  static const int heads[1] = {0};
  expect_success(j, count, 24, 1, heads, succ, 12);
  /* The rings as numbers, not only as a cycle: rank 2's channel 13 (odd). */
  const struct ncclRing *ring = &j->comms[2]->channels[13].ring;
  CHECK(ring->userRanks && ring->userRanks[0] == 2 && ring->userRanks[1] == 1 && ring->userRanks[2] == 0 &&
            ring->userRanks[3] == 3 && ring->prev == 3 && ring->next == 1,
        "rank 2 channel 13");
  job_free(j);
  free(prefixGraph);
}

/* Input 5. 8 nodes x 8, identity; rank 52 (node 6 = 48..55, head 48, tail
 * 55) says prev 53 and next 54. Node 6: 51's next 52, but 52's prev is 53:
 * (51, 52); 52's next 54, but 54's prev is 53: (52, 54), and 53 has prev 52
 * while no rank's next is 53: "rank 53 is reached by nobody"; 52's prev 53,
 * but 53's next is 54: (52, 53); 53's prev 52, but 52's next is 54: (53,
 * 52). Votes: 52 has 4: rank 52, its first detail. Walk from 0 along the
 * stitched next: 0 .. 52, 54 .. 63, 0: 64 ranks, none left over. */
static void wrong_prev_and_next_of_one_rank_name_it_and_the_rank_nobody_reaches(void) {
  begin(__func__);
  static const int id[8] = {0, 1, 2, 3, 4, 5, 6, 7};
  const int *orders[1] = {id};
  struct job *j = job_new(8, 8, 1, orders);
  job_preset(j, 0, NULL);
  j->frags[52].ringPrev[0] = 53;
  j->frags[52].ringNext[0] = 54;
  job_postset(j);
  char count[LINE_LEN], walk[LINE_LEN];
  count_line(count, sizeof count, 1, 0);
  int ranks[64], k = 0;
  for (int r = 0; r <= 52; r++) ranks[k++] = r;
  for (int r = 54; r <= 63; r++) ranks[k++] = r;
  ranks[k++] = 0;
  const char *walks[1] = {walk_line(walk, 0, 1, ranks, k, "")};
  expect_failure(j, ncclInternalError, count,
                 "ncclTopoPostset: rank 52, channel 0: ringNext is 54 but rank 54's ringPrev is 53; rank 53 is reached "
                 "by nobody",
                 1, walks);
  job_free(j);
}

/* Input 6. 3 nodes x 32, two identity channels; rank 40 (node 1 = 32..63)
 * says ringNext[1] = 42. Channel 0 holds, channel 1 fails, so rank 0
 * prints one walk line, "Channel 01/02", and no other rank prints any:
 * 0 .. 40, 42 .. 64 are the first 64 ranks, 96 - 64 = 32 are left.
 * Diagnosis, channel 1: 40's next 42, but 42's prev is 41: (40, 42), and 41
 * (prev 40) is nobody's next; 41's prev 40, but 40's next is 42: (41, 40).
 * Votes: 40 has 2. */
static void failing_ring_walk_is_printed_by_rank_zero_before_its_warn(void) {
  begin(__func__);
  int id[32];
  for (int i = 0; i < 32; i++) id[i] = i;
  const int *orders[2] = {id, id};
  struct job *j = job_new(3, 32, 2, orders);
  job_preset(j, 0, NULL);
  j->frags[40].ringNext[1] = 42;
  job_postset(j);
  char count[LINE_LEN], walk[LINE_LEN];
  count_line(count, sizeof count, 2, 0);
  int ranks[64], k = 0;
  for (int r = 0; r <= 40; r++) ranks[k++] = r;
  for (int r = 42; k < 64; r++) ranks[k++] = r;
  CHECK(ranks[63] == 64, "the 64th rank of the walk is %d", ranks[63]);
  const char *walks[1] = {walk_line(walk, 1, 2, ranks, 64, " ... (32 more)")};
  CHECK(strncmp(walk, "Channel 01/02 :    0   1   2", 28) == 0, "walk line %s", walk);
  expect_failure(j, ncclInternalError, count,
                 "ncclTopoPostset: rank 40, channel 1: ringNext is 42 but rank 42's ringPrev is 41; rank 41 is reached "
                 "by nobody",
                 1, walks);
  job_free(j);
}

/* Walks, continued: 2 nodes x 4, three channels: 0 1 2 3, 3 2 1 0 and
 * 0 1 2 3. Rank 5's ringNext[1] = -1 and rank 2's ringNext[2] = 1.
 * Channel 0 holds: no line. Channel 1 from rank 0 (node 0's tail, stitched
 * to node 1's head 7): 0 7 6 5, and 5's next is -1. Channel 2: 0 1 2, then
 * 2's next 1: 1 2 1 2 1, eight ranks in all, as ncclBuildRings would print a
 * short cycle. The WARN is channel 1's: node 1 (head 7, tail 4): 4's prev
 * 5, but 5's next is -1: (4, 5); 5's next -1 but the tail is 4: (5).
 * Votes: 5 has 2. */
static void walks_show_a_lost_next_and_a_short_cycle_of_failing_rings_only(void) {
  begin(__func__);
  static const int fwd[4] = {0, 1, 2, 3}, rev[4] = {3, 2, 1, 0};
  const int *orders[3] = {fwd, rev, fwd};
  struct job *j = job_new(2, 4, 3, orders);
  job_preset(j, 0, NULL);
  j->frags[5].ringNext[1] = -1;
  j->frags[2].ringNext[2] = 1;
  job_postset(j);
  char count[LINE_LEN], walk1[LINE_LEN], walk2[LINE_LEN];
  count_line(count, sizeof count, 3, 0);
  static const int lost[4] = {0, 7, 6, 5}, cycle[8] = {0, 1, 2, 1, 2, 1, 2, 1};
  const char *walks[2] = {walk_line(walk1, 1, 3, lost, 4, " (next is -1)"), walk_line(walk2, 2, 3, cycle, 8, "")};
  CHECK(strcmp(walk1, "Channel 01/03 :    0   7   6   5 (next is -1)") == 0, "walk line %s", walk1);
  expect_failure(j, ncclInternalError, count, "ncclTopoPostset: rank 5, channel 1: ringNext is -1 but node 1's tail is 4", 2,
                 walks);
  job_free(j);
}

int main(int argc, char **argv) {
  /* The lines this test reads are NCCL's (D21): chosen here, not left to
   * whether a libnccom is loaded in the process (D26). */
  setenv("NCCOM_RING_LOG_STYLE", "nccl", 1);
  (void)argv;
  if (argc > 1) {
    fprintf(stderr, "usage: verdict\n");
    return 2;
  }
  char path[] = "/tmp/nccomring-verdict-XXXXXX";
  if (log_to_temp_file(path, "INFO") != 0) return 2;
  setenv("NCCL_DEBUG_SUBSYS", "INIT", 1);
  unsetenv("NCCOM_RING_PLATFORM");
  unsetenv("NCCOM_RING_POD_ORDER");
  unsetenv("NCCOM_RING_DUMP"); /* its INFO lines and files are not this test's */
  /* The library opens the file for appending at its first call (docs/operating.md,
   * "Where the log lines go"); this reader follows it from offset 0. */
  logFile = fopen(path, "r");
  if (logFile == NULL) return 2;

  wrong_prev_of_one_rank_fails_every_rank_naming_it();
  rank_with_its_own_intra_order_fails_every_rank_naming_it();
  fragment_delivered_in_two_slots_fails_every_rank_naming_the_copy();
  graphs_with_different_channel_counts_agree_on_the_smallest(0x00);
  graphs_with_different_channel_counts_agree_on_the_smallest(0xA5);
  wrong_prev_and_next_of_one_rank_name_it_and_the_rank_nobody_reaches();
  failing_ring_walk_is_printed_by_rank_zero_before_its_warn();
  walks_show_a_lost_next_and_a_short_cycle_of_failing_rings_only();

  fclose(logFile);
  unlink(path);
  if (failures) {
    fprintf(stderr, "verdict: %d checks failed\n", failures);
    return 1;
  }
  printf("verdict: the inputs of issue 8 reach one verdict on every rank\n");
  return 0;
}
