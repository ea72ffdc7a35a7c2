/*
 * expected - hand-computed ring-stage results, checked through the C ABI of
 * build/libnccomring.so (issue 2, "Expected values"; spec §2-§5, D5-D13).
 *
 * Every expected number below was worked out by hand from the spec's
 * pseudocode and D9's stitch rule; the comments show the working.
 */
#ifndef _DEFAULT_SOURCE
#define _DEFAULT_SOURCE /* mmap's MAP_ANONYMOUS */
#endif
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "../common/cluster.h"
#include "../common/stage_setup.h"

static int failures;

#define CHECK(cond, ...)                                          \
  do {                                                            \
    if (!(cond)) {                                                \
      failures++;                                                 \
      fprintf(stderr, "%s:%d: FAIL %s: ", __FILE__, __LINE__, #cond); \
      fprintf(stderr, __VA_ARGS__);                               \
      fputc('\n', stderr);                                        \
    }                                                             \
  } while (0)

/* Platform hook (D14, P18), found by the library through dlsym because this
 * program is linked with -rdynamic. */
static bool switchV1;
bool neuronIsTrn3SwitchV1Family(void) { return switchV1; }

/* The host's own ncclTopoGetLocalNet (D19): GetNetDev with graph == NULL
 * defers to it and passes its answer through unchanged (P17). */
static int localNetCalls;
ncclResult_t ncclTopoGetLocalNet(struct ncclTopoSystem *sys, int rank, int *dev);
ncclResult_t ncclTopoGetLocalNet(struct ncclTopoSystem *sys, int rank, int *dev) {
  localNetCalls++;
  *dev = 40 + rank + (sys ? sys->nodes[0].count : 0);
  return (ncclResult_t)7; /* not a D1 code: proves it is passed through as is */
}

static void expect_ring(const struct stage *st, int rank, int c, int prev, int next,
                        const int *userRanks) {
  const struct ncclRing *ring = &st->comms[rank]->channels[c].ring;
  CHECK(ring->prev == prev, "rank %d ch%d prev %d, want %d", rank, c, ring->prev, prev);
  CHECK(ring->next == next, "rank %d ch%d next %d, want %d", rank, c, ring->next, next);
  for (int i = 0; i < st->nRanks; i++)
    CHECK(ring->userRanks[i] == userRanks[i], "rank %d ch%d userRanks[%d] %d, want %d", rank, c,
          i, ring->userRanks[i], userRanks[i]);
}

static int run(struct cluster *cl, struct stage *st) {
  if (stage_run(&linked_ring_api, cl, st) != 0) {
    CHECK(0, "%s", st->failure);
    return -1;
  }
  CHECK(stage_check(cl, st) == 0, "invariants");
  return 0;
}

/* 1 node x 8 ranks, channels [0..7] and [0,7,6,...,1]. One node closes on
 * itself (D9): ch0's tail 7 feeds its head 0, so rank 0 has prev 7 next 1;
 * ch1's tail is 1, so prev 1 next 7. Doubling gives 4 channels (D10). */
static void one_node_eight_ranks(void) {
  int local = 8, fwd[8] = {0, 1, 2, 3, 4, 5, 6, 7}, rev[8] = {0, 7, 6, 5, 4, 3, 2, 1};
  struct cluster *cl = cluster_new(1, &local);
  cluster_set_channel(cl, 0, fwd, 8, -1, -1);
  cluster_set_channel(cl, 1, rev, 8, -1, -1);
  cluster_set_nchannels(cl, 2);
  struct stage st;
  if (run(cl, &st) == 0) {
    CHECK(st.comms[0]->nChannels == 4 && st.nChannels[0] == 4, "nChannels %d/%d, want 4",
          st.comms[0]->nChannels, st.nChannels[0]);
    expect_ring(&st, 0, 0, 7, 1, fwd);
    expect_ring(&st, 0, 1, 1, 7, rev);
    expect_ring(&st, 0, 2, 7, 1, fwd);
    expect_ring(&st, 0, 3, 1, 7, rev);
  }
  stage_free(&st);
  cluster_free(cl);
}

/* 2 nodes x 4 ranks, ch1 reversed, inter = {c, c}. Node 0's ch0 tail 3 feeds
 * node 1's head 4: rank 3 ch0 prev 2 (local) next 4, and 3 is not ch0's head
 * (0), so dir = 1 and netDev = inter[2*0+1] = 0. */
static void two_nodes_four_ranks(void) {
  int local[2] = {4, 4}, fwd[4] = {0, 1, 2, 3}, rev[4] = {3, 2, 1, 0};
  struct cluster *cl = cluster_new(2, local);
  cluster_set_channel(cl, 0, fwd, 4, 0, 0);
  cluster_set_channel(cl, 1, rev, 4, 1, 1);
  cluster_set_nchannels(cl, 2);
  struct stage st;
  if (run(cl, &st) == 0) {
    int want[8] = {3, 4, 5, 6, 7, 0, 1, 2};
    expect_ring(&st, 3, 0, 2, 4, want);
    CHECK(st.netDev[3 * MAXCHANNELS + 0] == 0, "rank 3 ch0 netDev %d, want 0",
          st.netDev[3 * MAXCHANNELS + 0]);
    /* ch1 on rank 3: node 0 runs 3 2 1 0, so 3 is the head: its prev is node
     * 1's tail 4, netDev = inter[2] = 1 (dir 0). */
    int want1[8] = {3, 2, 1, 0, 7, 6, 5, 4};
    expect_ring(&st, 3, 1, 4, 2, want1);
    CHECK(st.netDev[3 * MAXCHANNELS + 1] == 1, "rank 3 ch1 netDev %d, want 1",
          st.netDev[3 * MAXCHANNELS + 1]);
  }
  stage_free(&st);
  cluster_free(cl);
}

/* 2 nodes x 4, channel 3's local order 2 3 0 1: from rank 0, local next 1 is
 * node 0's tail, which feeds node 1's head 6; 6 7 4 5, then 5 feeds node 0's
 * head 2; 2 3 and back to 0. */
static void channel_three_rotated(void) {
  int local[2] = {4, 4}, fwd[4] = {0, 1, 2, 3}, rot[4] = {2, 3, 0, 1};
  struct cluster *cl = cluster_new(2, local);
  for (int c = 0; c < 3; c++) cluster_set_channel(cl, c, fwd, 4, c, c);
  cluster_set_channel(cl, 3, rot, 4, 3, 3);
  cluster_set_nchannels(cl, 4);
  struct stage st;
  if (run(cl, &st) == 0) {
    int want[8] = {0, 1, 6, 7, 4, 5, 2, 3};
    expect_ring(&st, 0, 3, 3, 1, want);
    expect_ring(&st, 0, 7, 3, 1, want); /* the doubled copy of channel 3 */
  }
  stage_free(&st);
  cluster_free(cl);
}

/* 2 nodes x 8 with intra 0 7 6 5 4 3 2 1: node 0's tail 1 feeds node 1's head
 * 8, which runs 8 15 14 ... 9, and 9 feeds 0. */
static void two_nodes_eight_reversed(void) {
  int local[2] = {8, 8}, rev[8] = {0, 7, 6, 5, 4, 3, 2, 1};
  struct cluster *cl = cluster_new(2, local);
  cluster_set_channel(cl, 0, rev, 8, 0, 0);
  cluster_set_nchannels(cl, 1);
  struct stage st;
  if (run(cl, &st) == 0) {
    int want[16] = {0, 7, 6, 5, 4, 3, 2, 1, 8, 15, 14, 13, 12, 11, 10, 9};
    expect_ring(&st, 0, 0, 9, 7, want);
  }
  stage_free(&st);
  cluster_free(cl);
}

/* One rank per node, 4 nodes, inter {0,1} and {2,3}: every rank is its own
 * channel head (intra[c] == rank), so dir = 0 and netDev = inter[2c]: 0 on
 * ch0 and ch2, 2 on ch1 and ch3. */
static void one_rank_per_node(void) {
  int local[4] = {1, 1, 1, 1}, only[1] = {0};
  struct cluster *cl = cluster_new(4, local);
  cluster_set_channel(cl, 0, only, 1, 0, 1);
  cluster_set_channel(cl, 1, only, 1, 2, 3);
  cluster_set_nchannels(cl, 2);
  struct stage st;
  if (run(cl, &st) == 0) {
    for (int r = 0; r < 4; r++) {
      CHECK(st.comms[r]->nChannels == 4, "rank %d nChannels %d", r, st.comms[r]->nChannels);
      for (int c = 0; c < 4; c++) {
        int want = c % 2 == 0 ? 0 : 2;
        CHECK(st.netDev[r * MAXCHANNELS + c] == want, "rank %d ch%d netDev %d, want %d", r, c,
              st.netDev[r * MAXCHANNELS + c], want);
      }
      int want[4] = {r, (r + 1) % 4, (r + 2) % 4, (r + 3) % 4};
      expect_ring(&st, r, 0, (r + 3) % 4, (r + 1) % 4, want);
    }
  }
  stage_free(&st);
  cluster_free(cl);
}

/* A 20-channel graph: Preset copies channels [20, 32) from [0, 12) (D6),
 * Postset ends at exactly 32 channels (D10), and no byte of the comm past
 * channels[31] changes except the fields Postset owns (node, nNodes,
 * nChannels). */
static void twenty_channels(void) {
  struct cluster *cl = cluster_rotated_2x4(20, 1);
  struct stage st;
  if (stage_run(&linked_ring_api, cl, &st) == 0) {
    CHECK(stage_check(cl, &st) == 0, "invariants");
    for (int r = 0; r < st.nRanks; r++) {
      const struct ncclComm *comm = st.comms[r];
      CHECK(comm->nChannels == 32 && st.nChannels[r] == 32, "rank %d nChannels %d", r,
            comm->nChannels);
      /* Everything after channels[31] is zero, as calloc left it, except the
       * fields Postset writes and the ones the host set. */
      struct ncclComm expect;
      memcpy(&expect, comm, sizeof expect);
      expect.node = expect.nNodes = expect.nChannels = 0;
      expect.rank = expect.nRanks = expect.localRanks = 0;
      expect.topo = NULL;
      /* kangaRing keeps the rows the host gave it (not SwitchV1). */
      for (int k = 0; k < MAX_KANGA_PATHS; k++)
        for (int i = 0; i < NCCOM_RING_KANGA_WIDTH; i++) {
          CHECK(comm->kangaRing[k][i] == cluster_kanga_value(st.nRanks, r, k, i), "rank %d kangaRing[%d][%d] changed", r, k, i);
          expect.kangaRing[k][i] = 0;
        }
      const unsigned char *p = (const unsigned char *)&expect;
      size_t bad = 0;
      for (size_t i = offsetof(struct ncclComm, nKangaRingChannels); i < sizeof expect; i++)
        bad += p[i] != 0;
      CHECK(bad == 0, "rank %d: %zu bytes past channels[31] changed", r, bad);
    }
  } else {
    CHECK(0, "%s", st.failure);
  }
  stage_free(&st);
  cluster_free(cl);
}

/* FNV-1a over 32-bit words, least significant byte first (D25's hashes). */
static unsigned fnv_words(const unsigned *w, int n) {
  unsigned h = 2166136261u;
  for (int i = 0; i < n; i++)
    for (int b = 0; b < 4; b++) h = (h ^ ((w[i] >> (8 * b)) & 0xffu)) * 16777619u;
  return h;
}

/* The record's checksum, version 2, as include/nccom_ring.h words it:
 * four lanes from 2166136261, lane k taking words k, k+4, k+8, k+12 (the
 * checksum word, 7, as 0) as lane = (lane ^ word) * 16777619; then
 * ((((lane0 * P) ^ lane1) * P ^ lane2) * P ^ lane3) * P. */
static unsigned record_checksum(const unsigned *w) {
  unsigned lane[4] = {2166136261u, 2166136261u, 2166136261u, 2166136261u};
  for (int i = 0; i < 16; i++) lane[i % 4] = (lane[i % 4] ^ (i == 7 ? 0 : w[i])) * 16777619u;
  return ((((lane[0] * 16777619u) ^ lane[1]) * 16777619u ^ lane[2]) * 16777619u ^ lane[3]) * 16777619u;
}

/* Preset writes only the bytes D5/D7/D23/D25 name (issue 2, item 4; issue 8;
 * issue 22): a fragment pre-filled with 0xA5 gets
 * ringRecv/ringSend/ringPrev/ringNext[c] from the graph for c < n = 3, -1
 * (bytes 0xFF) in the same four arrays for 3 <= c < 32 (D23: the fragment
 * carries its channel count), on TRN3-SwitchV1 JbogKangaringPath[k <
 * nKangaRingChannels] and, on every platform, the whole record at +832
 * (D28: version 2; the platform, enablePod, nKangaRingChannels and the
 * channel count in its flags; on SwitchV1 the preconditions, here the
 * defaults of a host without those hooks, virtual core size 0 and JBOG id
 * 1), and keeps 0xA5 everywhere else: the tree region (bytes 512..831)
 * and, off SwitchV1, the kangaRing paths (896..959). Channel 0 runs the node backwards and
 * channels 1 and 2 forwards, so a channel's values cannot pass for
 * another's; every channel's opaque runtime state holds its own bytes, so
 * the doubling (D6) must copy channel c - 3's into channel c for
 * 3 <= c < 6 and leave the rest, and their userRanks pointers, alone. */
static void preset_canary(bool onSwitchV1) {
  int local = 8;
  struct cluster *cl = cluster_new(1, &local);
  int forward[8] = {0, 1, 2, 3, 4, 5, 6, 7}, backward[8] = {7, 6, 5, 4, 3, 2, 1, 0};
  for (int c = 0; c < 3; c++) cluster_set_channel(cl, c, c == 0 ? backward : forward, 8, -1, -1);
  cluster_set_nchannels(cl, 3);
  struct ncclComm *comm = calloc(1, sizeof *comm);
  comm->rank = 5;
  comm->nRanks = 8;
  comm->localRanks = 8;
  comm->nKangaRingChannels = 2;
  for (int k = 0; k < MAX_KANGA_PATHS; k++)
    for (int i = 0; i < NCCOM_RING_KANGA_WIDTH; i++) comm->kangaRing[k][i] = 100 * k + i;
  static int buffers[MAXCHANNELS][8];
  for (int c = 0; c < MAXCHANNELS; c++) {
    memset(comm->channels[c].opaque, 0x10 + c, sizeof comm->channels[c].opaque);
    comm->channels[c].ring.userRanks = buffers[c];
    comm->channels[c].ring.devUserRanks = buffers[MAXCHANNELS - 1 - c];
  }
  struct ncclTopoRanks frag;
  memset(&frag, 0xA5, sizeof frag);
  switchV1 = onSwitchV1;
  ncclResult_t res = ncclTopoPreset(comm, cl->graphs[0], &frag);
  switchV1 = false;
  CHECK(res == ncclSuccess, "Preset returned %d", (int)res);

  /* Rank 5: position 2 of channel 0 (7 6 5 4 ...), position 5 of the others. */
  struct ncclTopoRanks want;
  memset(&want, 0xA5, sizeof want);
  for (int c = 0; c < 3; c++) {
    want.ringRecv[c] = c == 0 ? 7 : 0;
    want.ringSend[c] = c == 0 ? 0 : 7;
    want.ringPrev[c] = c == 0 ? 6 : 4;
    want.ringNext[c] = c == 0 ? 4 : 6;
  }
  for (int c = 3; c < MAXCHANNELS; c++)
    want.ringRecv[c] = want.ringSend[c] = want.ringPrev[c] = want.ringNext[c] = -1;
  if (onSwitchV1)
    for (int k = 0; k < 2; k++)
      for (int i = 0; i < 4; i++) want.JbogKangaringPath[k][i] = 100 * k + i;
  /* flags: SwitchV1 0x4, nKangaRingChannels 2 in bits 12..14, 3 channels in
   * bits 16..21; no policy, location, pod order or enablePod */
  unsigned record[16] = {0};
  unsigned graph[7] = {3}; /* the fingerprint: nChannels, then inter[0..6) */
  for (int i = 0; i < 6; i++) graph[1 + i] = (unsigned)cl->graphs[0]->inter[i];
  unsigned head[8] = {0xD25A11CEu, 2, 5, (onSwitchV1 ? 0x4u : 0) | 2u << 12 | 3u << 16, fnv_words(graph, 7),
                      onSwitchV1 ? 1u : 0, 0, 0};
  memcpy(record, head, sizeof head);
  record[7] = record_checksum(record);
  memcpy((unsigned char *)&want + 832, record, sizeof record);
  const unsigned char *a = (const unsigned char *)&frag, *b = (const unsigned char *)&want;
  for (size_t i = 0; i < sizeof frag; i++)
    CHECK(a[i] == b[i], "SwitchV1=%d: fragment byte %zu is 0x%02x, want 0x%02x", onSwitchV1, i,
          a[i], b[i]);
  /* The same bytes by offset (D2), so the expectation does not rest on the
   * struct alone: ringRecv[0] at +0 is 7 and ringSend[1] at +132 is 7,
   * ringRecv[3] at +12 and ringNext[31] at +508 are -1, the first tree byte
   * (+512) is still the canary. */
  static const struct { size_t at; int v; } ints[] = {
      {0, 7}, {132, 7}, {12, -1}, {128 + 12, -1}, {256 + 12, -1}, {384 + 12, -1}, {384 + 31 * 4, -1}};
  for (size_t k = 0; k < sizeof ints / sizeof ints[0]; k++) {
    int v;
    memcpy(&v, a + ints[k].at, sizeof v);
    CHECK(v == ints[k].v, "SwitchV1=%d: int at +%zu is %d, want %d", onSwitchV1, ints[k].at, v, ints[k].v);
  }
  CHECK(a[512] == 0xA5 && a[831] == 0xA5,
        "SwitchV1=%d: the tree region was written past the record", onSwitchV1);
  CHECK(comm->nChannels == 3, "comm->nChannels %d", comm->nChannels);
  for (int c = 0; c < MAXCHANNELS; c++) {
    const struct ncclRing *ring = &comm->channels[c].ring;
    int src = c < 6 ? c % 3 : c; /* whose runtime state channel c holds */
    int wantPrev = c >= 6 ? 0 : src == 0 ? 6 : 4, wantNext = c >= 6 ? 0 : src == 0 ? 4 : 6;
    CHECK(ring->prev == wantPrev && ring->next == wantNext, "channel %d prev/next %d/%d, want %d/%d", c,
          ring->prev, ring->next, wantPrev, wantNext);
    CHECK(ring->userRanks == buffers[c] && ring->devUserRanks == buffers[MAXCHANNELS - 1 - c],
          "channel %d's userRanks/devUserRanks pointers changed", c);
    for (size_t i = 0; i < sizeof comm->channels[c].opaque; i++)
      if ((unsigned char)comm->channels[c].opaque[i] != 0x10 + src) {
        CHECK(0, "channel %d opaque byte %zu is 0x%02x, want 0x%02x (channel %d's)", c, i,
              (unsigned char)comm->channels[c].opaque[i], 0x10 + src, src);
        break;
      }
  }
  free(comm);
  cluster_free(cl);
}

static void get_net_dev_falls_back_to_host(void) {
  struct ncclTopoSystem sys = {{{3}}};
  int dev = -1;
  ncclResult_t res = ncclTopoGetNetDev(&sys, 2, NULL, 0, &dev);
  CHECK((int)res == 7 && dev == 45 && localNetCalls == 1, "fallback gave %d, dev %d, calls %d",
        (int)res, dev, localNetCalls);
}

/* D20 (docs/errors.md E2a): a pointer from the caller that faults inside
 * Go is recovered in every export: ncclInternalError, the process lives, and
 * nothing the call could write has changed. The pointers lead into a region
 * mapped PROT_NONE (larger than any struct read through them, so no read
 * lands past it, and kept mapped, so nothing else can be mapped there), or,
 * for ncclTopoPreset, to 0x10 (a comm whose fields lie on unmappable low
 * pages). Without the recover, the first of these calls would kill the
 * process. */
static void panics_do_not_cross_into_c(void) {
  const size_t badSize = 64 * 1024;
  void *bad = mmap(NULL, badSize, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (bad == MAP_FAILED) {
    CHECK(0, "mmap of a PROT_NONE region failed");
    return;
  }
  struct ncclTopoGraph *graph = calloc(1, sizeof *graph);
  struct ncclComm *comm = calloc(1, sizeof *comm), *before = malloc(sizeof *before);
  struct ncclTopoRanks frag, canary;
  memset(&canary, 0xA5, sizeof canary);

  /* ncclTopoPreset: the comm itself is wild. */
  struct ncclComm *wild[] = {(struct ncclComm *)(uintptr_t)0x10, (struct ncclComm *)bad};
  for (size_t i = 0; i < sizeof wild / sizeof wild[0]; i++) {
    memcpy(&frag, &canary, sizeof frag);
    ncclResult_t res = ncclTopoPreset(wild[i], graph, &frag);
    CHECK(res == ncclInternalError, "Preset with comm %p returned %d", (void *)wild[i], (int)res);
    CHECK(memcmp(&frag, &canary, sizeof frag) == 0, "Preset with comm %p wrote the fragment", (void *)wild[i]);
  }

  /* ncclTopoPostset: every argument check passes (a 1 x 2 comm after
   * Preset), then the fragment pointers lead into the region. */
  graph->pattern = NCCL_TOPO_PATTERN_RING;
  graph->nChannels = 1;
  graph->intra[0] = 0, graph->intra[1] = 1;
  comm->rank = 0, comm->nRanks = 2, comm->localRanks = 2;
  CHECK(ncclTopoPreset(comm, graph, &frag) == ncclSuccess, "Preset of the Postset case");
  memcpy(before, comm, sizeof *before);
  struct ncclTopoRanks *all[2] = {(struct ncclTopoRanks *)bad, (struct ncclTopoRanks *)bad};
  int heads[2] = {-5, -5}, nChannels = -7, nNodes = -7;
  ncclResult_t res = ncclTopoPostset(comm, heads, all, &nChannels, &nNodes);
  CHECK(res == ncclInternalError, "Postset with wild fragments returned %d", (int)res);
  CHECK(memcmp(before, comm, sizeof *before) == 0, "Postset with wild fragments wrote the communicator");
  CHECK(heads[0] == -5 && heads[1] == -5 && nChannels == -7 && nNodes == -7,
        "Postset with wild fragments wrote nodesFirstRank or an out-parameter");

  /* ncclBuildRings: next leads into the region. */
  int rings[4] = {-9, -9, -9, -9};
  res = ncclBuildRings(1, rings, 0, 4, NULL, (int *)bad);
  CHECK(res == ncclInternalError, "BuildRings with a wild next returned %d", (int)res);
  CHECK(rings[0] == -9 && rings[1] == -9 && rings[2] == -9 && rings[3] == -9, "BuildRings wrote rings");

  /* ncclTopoGetNetDev: sys leads into the region. */
  int dev = -3;
  res = ncclTopoGetNetDev((struct ncclTopoSystem *)bad, 0, graph, 0, &dev);
  CHECK(res == ncclInternalError, "GetNetDev with a wild sys returned %d", (int)res);
  CHECK(dev == -3, "GetNetDev with a wild sys wrote *dev");

  free(before);
  free(comm);
  free(graph);
  munmap(bad, badSize);
}

int main(void) {
  one_node_eight_ranks();
  two_nodes_four_ranks();
  channel_three_rotated();
  two_nodes_eight_reversed();
  one_rank_per_node();
  twenty_channels();
  preset_canary(false);
  preset_canary(true);
  get_net_dev_falls_back_to_host();
  panics_do_not_cross_into_c();
  if (failures) {
    fprintf(stderr, "expected: %d checks failed\n", failures);
    return 1;
  }
  printf("expected: all hand-computed cases passed\n");
  return 0;
}
