/* cluster.c - simulated clusters and the ring stage driver (see cluster.h). */
#if !defined(_GNU_SOURCE) && !defined(_POSIX_C_SOURCE)
#define _POSIX_C_SOURCE 200809L /* setenv, unsetenv under -std=c11 */
#endif
#include "cluster.h"
#include "stage_setup.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct cluster *cluster_new(int nNodes, const int *localRanks) {
  struct cluster *cl = calloc(1, sizeof *cl);
  if (cl == NULL) return NULL;
  cl->nNodes = nNodes;
  cl->localRanks = calloc((size_t)nNodes, sizeof(int));
  cl->firstRank = calloc((size_t)nNodes, sizeof(int));
  cl->graphs = calloc((size_t)nNodes, sizeof(struct ncclTopoGraph *));
  cl->systems = calloc((size_t)nNodes, sizeof(struct ncclTopoSystem));
  if (!cl->localRanks || !cl->firstRank || !cl->graphs || !cl->systems) {
    cluster_free(cl);
    return NULL;
  }
  for (int m = 0; m < nNodes; m++) {
    cl->localRanks[m] = localRanks[m];
    cl->firstRank[m] = cl->nRanks;
    cl->nRanks += localRanks[m];
    cl->systems[m].nodes[0].count = localRanks[m];
    cl->graphs[m] = calloc(1, sizeof(struct ncclTopoGraph));
    if (cl->graphs[m] == NULL) {
      cluster_free(cl);
      return NULL;
    }
    cl->graphs[m]->pattern = NCCL_TOPO_PATTERN_RING;
    cl->graphs[m]->minChannels = 1;
    cl->graphs[m]->maxChannels = MAXCHANNELS;
    for (int i = 0; i < NCCOM_RING_MAX_INTER; i++) cl->graphs[m]->inter[i] = -1;
  }
  return cl;
}

/* splitmix64: the permutation of CLUSTER_PERMUTED depends on the seed alone. */
static unsigned long long cluster_mix(unsigned long long *s) {
  unsigned long long x = (*s += 0x9e3779b97f4a7c15ULL);
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

struct cluster *cluster_new_numbered(int nNodes, const int *localRanks, int numbering,
                                     unsigned long long seed) {
  if (numbering < 0 || numbering >= CLUSTER_NUMBERINGS) return NULL;
  struct cluster *cl = cluster_new(nNodes, localRanks);
  if (cl == NULL || numbering == CLUSTER_NODE_MAJOR) return cl;
  size_t n = (size_t)cl->nRanks;
  cl->numbering = numbering;
  cl->nodeOf = malloc((n ? n : 1) * sizeof(int));
  cl->localOf = malloc((n ? n : 1) * sizeof(int));
  cl->rankAt = malloc((n ? n : 1) * sizeof(int));
  cl->slot = malloc((size_t)(nNodes > 0 ? nNodes : 1) * sizeof(int));
  if (!cl->nodeOf || !cl->localOf || !cl->rankAt || !cl->slot) {
    cluster_free(cl);
    return NULL;
  }
  /* slot[m]: where node m's local indices start in rankAt (the node-major
   * numbering's first rank). */
  for (int m = 0, at = 0; m < nNodes; m++) {
    cl->slot[m] = at;
    at += localRanks[m];
  }
  if (numbering == CLUSTER_ROUND_ROBIN) {
    /* Round k gives the next rank to every node that has a local index k. */
    int r = 0;
    for (int k = 0; r < cl->nRanks; k++)
      for (int m = 0; m < nNodes; m++)
        if (k < localRanks[m]) cl->rankAt[cl->slot[m] + k] = r++;
  } else {
    /* Fisher-Yates over the slots, taken node-major. */
    for (int s = 0; s < cl->nRanks; s++) cl->rankAt[s] = s;
    for (int s = cl->nRanks - 1; s > 0; s--) {
      int j = (int)(cluster_mix(&seed) % (unsigned long long)(s + 1)), t = cl->rankAt[s];
      cl->rankAt[s] = cl->rankAt[j];
      cl->rankAt[j] = t;
    }
  }
  for (int m = 0; m < nNodes; m++) {
    for (int i = 0; i < localRanks[m]; i++) {
      int r = cl->rankAt[cl->slot[m] + i];
      cl->nodeOf[r] = m;
      cl->localOf[r] = i;
    }
    cl->firstRank[m] = localRanks[m] > 0 ? cl->rankAt[cl->slot[m]] : -1;
  }
  return cl;
}

void cluster_free(struct cluster *cl) {
  if (cl == NULL) return;
  free(cl->nodeOf);
  free(cl->localOf);
  free(cl->rankAt);
  free(cl->slot);
  for (int m = 0; cl->graphs && m < cl->nNodes; m++) free(cl->graphs[m]);
  free(cl->graphs);
  free(cl->systems);
  free(cl->firstRank);
  free(cl->localRanks);
  free(cl);
}

int cluster_node_of(const struct cluster *cl, int rank) {
  return cl->nodeOf ? cl->nodeOf[rank] : stage_node_of(cl, rank);
}

int cluster_rank(const struct cluster *cl, int m, int i) {
  return cl->rankAt ? cl->rankAt[cl->slot[m] + i] : cl->firstRank[m] + i;
}

int cluster_local_of(const struct cluster *cl, int rank) {
  return cl->localOf ? cl->localOf[rank] : rank - cl->firstRank[stage_node_of(cl, rank)];
}

void cluster_node_order(const struct cluster *cl, int *index) {
  for (int m = 0; m < cl->nNodes; m++) index[m] = -1;
  for (int r = 0, next = 0; r < cl->nRanks && next < cl->nNodes; r++) {
    int m = cluster_node_of(cl, r);
    if (index[m] < 0) index[m] = next++;
  }
}

void cluster_set_channel(struct cluster *cl, int c, const int *localOrder, int len, int nicIn,
                         int nicOut) {
  for (int m = 0; m < cl->nNodes; m++) {
    struct ncclTopoGraph *g = cl->graphs[m];
    for (int i = 0; i < len; i++) g->intra[c * len + i] = cluster_rank(cl, m, localOrder[i]);
    g->inter[2 * c] = nicIn;
    g->inter[2 * c + 1] = nicOut;
  }
}

void cluster_set_nchannels(struct cluster *cl, int nChannels) {
  for (int m = 0; m < cl->nNodes; m++) cl->graphs[m]->nChannels = nChannels;
}

struct cluster *cluster_default(int nNodes) { return cluster_default_sized(nNodes, 32); }

struct cluster *cluster_default_sized(int nNodes, int cores) {
  enum { maxNics = 8, channels = 8 };
  if (nNodes < 1 || cores < 1 || cores > NCCL_TOPO_MAX_NODES) return NULL;
  int nics = cores < maxNics ? cores : maxNics;
  int *local = malloc((size_t)nNodes * sizeof(int));
  if (local == NULL) return NULL;
  for (int m = 0; m < nNodes; m++) local[m] = cores;
  struct cluster *cl = cluster_new(nNodes, local);
  free(local);
  if (cl == NULL) return NULL;
  for (int c = 0; c < channels; c++) {
    /* Core i sits on NIC i * nics / cores (4 cores a NIC at 32). */
    int order[NCCL_TOPO_MAX_NODES];
    int start = (c * cores / channels) % cores, step = c % 2 == 0 ? 1 : cores - 1;
    for (int i = 0; i < cores; i++) order[i] = (start + i * step) % cores;
    cluster_set_channel(cl, c, order, cores, order[0] * nics / cores,
                        order[cores - 1] * nics / cores);
  }
  cluster_set_nchannels(cl, channels);
  return cl;
}

struct cluster *cluster_rotated_2x4(int channels, int outStep) {
  int local[2] = {4, 4}, order[4];
  struct cluster *cl = cluster_new(2, local);
  if (cl == NULL) return NULL;
  for (int c = 0; c < channels; c++) {
    for (int i = 0; i < 4; i++) order[i] = (c + i) % 4;
    cluster_set_channel(cl, c, order, 4, c % 8, (c + outStep) % 8);
  }
  cluster_set_nchannels(cl, channels);
  return cl;
}

void stage_free(struct stage *st) {
  for (int r = 0; st->comms && r < st->nRanks; r++) {
    if (st->comms[r] == NULL) continue;
    for (int c = 0; c < MAXCHANNELS; c++) free(st->comms[r]->channels[c].ring.userRanks);
    free(st->comms[r]);
  }
  free(st->comms);
  free(st->fragments);
  free(st->all);
  free(st->nodesFirstRank);
  free(st->nChannels);
  free(st->nNodes);
  free(st->netDev);
  memset(st, 0, sizeof *st);
}

/* Sets (on) or unsets rank r's own environment of D25, around each of its
 * calls, as a process of its own would hold it: NCCOM_RING_NODE_ORDER and
 * its node's NCCOM_RING_LOCATION (read at every Preset, and by the wiring
 * dump at Postset). */
static void rank_env(const struct cluster *cl, int r, int on) {
  const char *loc = cl->locations ? cl->locations[cluster_node_of(cl, r)] : NULL;
  if (cl->network) on ? setenv("NCCOM_RING_NODE_ORDER", "network", 1) : unsetenv("NCCOM_RING_NODE_ORDER");
  if (loc) on ? setenv("NCCOM_RING_LOCATION", loc, 1) : unsetenv("NCCOM_RING_LOCATION");
}

int stage_run(const struct ring_api *api, const struct cluster *cl, struct stage *st) {
  if (stage_setup(cl, st) != 0) return -1;
  int n = cl->nRanks;
  /* stage_setup places ranks node-major (stage_node_of); a cluster numbered
   * across nodes gives each comm its own node's size and system. */
  for (int r = 0; cl->nodeOf && r < n; r++) {
    int m = cluster_node_of(cl, r);
    st->comms[r]->localRanks = cl->localRanks[m];
    st->comms[r]->topo = &cl->systems[m];
  }

  /* Preset on every rank, each into its own fragment. */
  struct ncclTopoRanks *own = calloc((size_t)n, sizeof *own);
  if (own == NULL) return stage_fail(st, ncclSystemError, "host allocation", -1);
  for (int r = 0; r < n; r++) {
    rank_env(cl, r, 1);
    ncclResult_t res = api->preset(st->comms[r], cl->graphs[cluster_node_of(cl, r)], &own[r]);
    rank_env(cl, r, 0);
    if (res != ncclSuccess) {
      free(own);
      return stage_fail(st, res, "ncclTopoPreset", r);
    }
    if (cl->progress) cl->progress("Preset", r + 1, n);
  }
  stage_gather(st, own);
  free(own);

  for (int r = 0; r < n; r++) {
    rank_env(cl, r, 1);
    ncclResult_t res = api->postset(st->comms[r], &st->nodesFirstRank[(size_t)r * (size_t)n],
                                    st->all, &st->nChannels[r], &st->nNodes[r]);
    rank_env(cl, r, 0);
    if (res != ncclSuccess) return stage_fail(st, res, "ncclTopoPostset", r);
    if (cl->progress) cl->progress("Postset", r + 1, n);
  }

  for (int r = 0; r < n; r++) {
    int m = cluster_node_of(cl, r);
    for (int c = 0; c < st->comms[r]->nChannels; c++) {
      ncclResult_t res = api->get_net_dev(st->comms[r]->topo, r, cl->graphs[m], c,
                                          &st->netDev[r * MAXCHANNELS + c]);
      if (res != ncclSuccess) return stage_fail(st, res, "ncclTopoGetNetDev", r);
    }
    if (cl->progress) cl->progress("GetNetDev", r + 1, n);
  }
  return 0;
}

/* ---- invariants ---- */

static int violations;

__attribute__((format(printf, 1, 2))) static void violation(const char *fmt, ...) {
  if (violations++ >= 20) return;
  va_list ap;
  va_start(ap, fmt);
  fputs("invariant violated: ", stderr);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
}

static const struct ncclRing *ring_of(const struct stage *st, int r, int c) {
  return &st->comms[r]->channels[c].ring;
}

static void check_channel(const struct cluster *cl, const struct stage *st, int c, int graphC,
                          char *seen) {
  int n = st->nRanks;
  if (n <= 0) return;
  /* One Hamiltonian cycle: from rank 0, next visits every rank once and
   * returns. */
  memset(seen, 0, (size_t)n);
  int cur = 0;
  for (int step = 0; step < n; step++) {
    if (cur < 0 || cur >= n) {
      violation("channel %d: next leads to %d, not a rank", c, cur);
      return;
    }
    if (seen[cur]) {
      violation("channel %d: rank %d reached twice within %d steps", c, cur, n);
      return;
    }
    seen[cur] = 1;
    cur = ring_of(st, cur, c)->next;
  }
  if (cur != 0) violation("channel %d: %d steps from rank 0 end at %d", c, n, cur);

  for (int r = 0; r < n; r++) {
    const struct ncclRing *ring = ring_of(st, r, c);
    int s = ring->next;
    if (s >= 0 && s < n && ring_of(st, s, c)->prev != r)
      violation("channel %d: rank %d's next is %d but %d's prev is %d", c, r, s, s,
                ring_of(st, s, c)->prev);
    /* userRanks: starts at the rank and follows next. */
    if (ring->userRanks == NULL) {
      violation("channel %d: rank %d has no userRanks", c, r);
      continue;
    }
    if (ring->userRanks[0] != r) violation("channel %d: rank %d's userRanks[0] is %d", c, r, ring->userRanks[0]);
    for (int i = 0; i + 1 < n; i++) {
      int u = ring->userRanks[i];
      if (u < 0 || u >= n || ring_of(st, u, c)->next != ring->userRanks[i + 1]) {
        violation("channel %d: rank %d's userRanks[%d..%d] = %d %d is not a next step", c, r, i,
                  i + 1, u, ring->userRanks[i + 1]);
        break;
      }
    }
    /* NIC: inter[2c + (intra head != rank)] of the rank's own node graph. */
    int m = cluster_node_of(cl, r);
    const struct ncclTopoGraph *g = cl->graphs[m];
    int head = g->intra[graphC * cl->localRanks[m]];
    int want = g->inter[2 * graphC + (head != r)];
    int got = st->netDev[r * MAXCHANNELS + c];
    if (got != want)
      violation("channel %d: rank %d's NIC is %d, the head/direction rule gives %d", c, r, got,
                want);
  }
}

/* Whether two locations ("" or NULL for none) have the same first `level`
 * names. */
static int same_prefix(const char *a, const char *b, int level) {
  if (a == NULL) a = "";
  if (b == NULL) b = "";
  for (int names = 0;; a++, b++) {
    if (*a != *b) return (*a == '\0' || *a == '/') && (*b == '\0' || *b == '/') && names + 1 >= level;
    if (*a == '\0') return 1;
    if (*a == '/' && ++names >= level) return 1;
  }
}

int cluster_location_depth(const struct cluster *cl) {
  int depth = 0;
  for (int m = 0; cl->locations && m < cl->nNodes; m++) {
    const char *p = cl->locations[m];
    int names = p && *p ? 1 : 0;
    for (; p && *p; p++) names += *p == '/';
    if (names > depth) depth = names;
  }
  return depth;
}

int cluster_location_groups(const struct cluster *cl, int level) {
  int groups = 0;
  for (int m = 0; cl->locations && m < cl->nNodes; m++) {
    int first = 1; /* m is the first node of its group */
    for (int k = 0; k < m && first; k++) first = !same_prefix(cl->locations[k], cl->locations[m], level);
    groups += first;
  }
  return groups;
}

int stage_crossings(const struct cluster *cl, const struct stage *st, int c, int level) {
  const int *ring = st->comms[0]->channels[c].ring.userRanks;
  int n = st->nRanks, crossings = 0;
  for (int i = 0; cl->locations && ring && i < n; i++)
    crossings += !same_prefix(cl->locations[cluster_node_of(cl, ring[i])],
                              cl->locations[cluster_node_of(cl, ring[(i + 1) % n])], level);
  return crossings;
}

int stage_check(const struct cluster *cl, const struct stage *st) {
  violations = 0;
  int n = st->nRanks;
  int graphChannels = cl->graphs[0]->nChannels;
  int want = graphChannels * 2 < MAXCHANNELS ? graphChannels * 2 : MAXCHANNELS;
  /* D8's node numbers: order of first appearance (the identity node-major). */
  int *order = malloc((size_t)(cl->nNodes > 0 ? cl->nNodes : 1) * sizeof(int));
  if (order == NULL) return ++violations;
  cluster_node_order(cl, order);
  for (int r = 0; r < n; r++) {
    const struct ncclComm *comm = st->comms[r];
    if (comm->nChannels != want || st->nChannels[r] != want)
      violation("rank %d: nChannels %d (out-parameter %d), want min(2 x %d, 32) = %d", r,
                comm->nChannels, st->nChannels[r], graphChannels, want);
    if (comm->nNodes != cl->nNodes || st->nNodes[r] != cl->nNodes)
      violation("rank %d: nNodes %d (out-parameter %d), want %d", r, comm->nNodes,
                st->nNodes[r], cl->nNodes);
    if (comm->node != order[cluster_node_of(cl, r)])
      violation("rank %d: node %d, want %d", r, comm->node, order[cluster_node_of(cl, r)]);
    for (int m = 0; m < cl->nNodes; m++) {
      int head = cl->graphs[m]->intra[0], at = order[m];
      if (at < 0 || at >= st->nNodes[r]) continue;
      if (st->nodesFirstRank[(size_t)r * (size_t)n + (size_t)at] != head)
        violation("rank %d: nodesFirstRank[%d] is %d, want node %d's channel-0 head %d", r, at,
                  st->nodesFirstRank[(size_t)r * (size_t)n + (size_t)at], m, head);
    }
  }
  free(order);
  if (violations) return violations;

  char *seen = malloc((size_t)n);
  if (seen == NULL) return ++violations;
  for (int c = 0; c < want; c++) check_channel(cl, st, c, c % graphChannels, seen);
  free(seen);

  /* kangaRing on SwitchV1 (D13): row k holds rank v's row k, 0..3, for
   * v < min(16, nRanks); the rest of the row is as the rank set it. */
  for (int r = 0; cl->switchV1 && r < n; r++) {
    const struct ncclComm *comm = st->comms[r];
    for (int k = 0; k < comm->nKangaRingChannels; k++)
      for (int i = 0; i < NCCOM_RING_KANGA_WIDTH; i++) {
        int v = i / 4, want = v < n ? cluster_kanga_value(n, v, k, i % 4) : cluster_kanga_value(n, r, k, i);
        if (comm->kangaRing[k][i] != want) {
          violation("rank %d: kangaRing[%d][%d] is %d, want %d", r, k, i, comm->kangaRing[k][i], want);
          k = MAX_KANGA_PATHS;
          break;
        }
      }
  }

  /* The doubled half repeats the first (D10). */
  for (int c = graphChannels; c < want; c++) {
    for (int r = 0; r < n; r++) {
      const struct ncclRing *a = ring_of(st, r, c), *b = ring_of(st, r, c - graphChannels);
      if (a->prev != b->prev || a->next != b->next ||
          (a->userRanks && b->userRanks &&
           memcmp(a->userRanks, b->userRanks, (size_t)n * sizeof(int)) != 0)) {
        violation("rank %d: channel %d does not repeat channel %d", r, c, c - graphChannels);
        break;
      }
    }
  }
  return violations;
}
