/*
 * generate.c - deterministic randomness and the random cases of both
 * modes: a case is a function of its seed alone, so that a printed case
 * replays.
 */
#include <stdlib.h>
#include <string.h>

#include "conformance.h"

/* ------------------------------------------------------------------ */
/* Deterministic randomness                                            */

uint64_t mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

uint64_t next_u64(struct rng *r) { return r->s = mix(r->s); }
int below(struct rng *r, int n) { return n <= 1 ? 0 : (int)(next_u64(r) % (uint64_t)n); }

/* The seed of a case's rank permutation (CLUSTER_PERMUTED): from the
 * case's seed, apart from the stream that draws its sizes and orders. */
unsigned long long numbering_seed(unsigned long long seed) { return mix(seed ^ 0x6e756d62ULL); }
/* Node m's channel c in a random local order (a Fisher-Yates shuffle from
 * r): its L ranks into graphs[m]->intra[c * L, c * L + L). */
void random_local_order(struct rng *r, struct cluster *cl, int m, int c, int L) {
  int perm[NCCL_TOPO_MAX_NODES];
  for (int i = 0; i < L; i++) perm[i] = i;
  for (int i = L - 1; i > 0; i--) {
    int k = below(r, i + 1), t = perm[i];
    perm[i] = perm[k];
    perm[k] = t;
  }
  for (int i = 0; i < L; i++) cl->graphs[m]->intra[c * L + i] = cluster_rank(cl, m, perm[i]);
}

/* A random numbering: a third of the clusters across nodes, half of those
 * round-robin, half permuted. */
static int random_numbering(struct rng *r) {
  return below(r, 3) == 0 ? CLUSTER_ROUND_ROBIN + below(r, 2) : CLUSTER_NODE_MAJOR;
}

/* NCCOM_RING_LOCATION values that are no location (errors.md: 1 to 8 names
 * of 1 to 64 bytes of [A-Za-z0-9._:-] separated by '/'), printable ASCII
 * but for one tab. */
static const char *const badLocations[] = {
    "spine0//leafA", "spine0/", "/leafA", "leaf?A", "s/l/r/a/b/c/d/e/f", "spine0/leaf A", "tab\tbed",
    "spine0/xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx", "\"quoted\"", "back\\slash",
    /* 300 bytes: a WARN quotes the first 256 and gives the length (D28) */
    "spine0/leaf0123456789/leaf0123456789/leaf0123456789/leaf0123456789/leaf0123456789/leaf0123"
    "456789/leaf0123456789/leaf0123456789/leaf0123456789/leaf0123456789/leaf0123456789/leaf0123"
    "456789/leaf0123456789/leaf0123456789/leaf0123456789/leaf0123456789/leaf0123456789/leaf0123"
    "456789/leaf0123456789/leaf0123"};
/* NCCOM_RING_NODE_ORDER values that are neither rank nor network. */
static const char *const badOrders[] = {"netwrok", "ring", "networks", "rank,network", "1", "net work"};

const char *bad_order(struct rng *r) { return badOrders[below(r, (int)(sizeof badOrders / sizeof badOrders[0]))]; }

/* One location per node from a small random tree: depth 1-3 (now and then
 * up to 8), 1-3 branches a level, the same names under different parents
 * (leaf1 under spine0 and under spine1 are different groups); now and
 * then a node's path is cut short (unequal depths). */
static int tree_locations(struct rng *r, int nodes, char **out) {
  static const char *const level[8] = {"spine", "leaf", "rack", "row", "pod", "hall", "sw", "tor"};
  int depth = below(r, 8) == 0 ? 1 + below(r, 8) : 1 + below(r, 3);
  int branch = 1 + below(r, 3);
  for (int m = 0; m < nodes; m++) {
    int d = below(r, 6) == 0 ? 1 + below(r, depth) : depth;
    char buf[256];
    int len = 0;
    for (int l = 0; l < d; l++)
      len += snprintf(buf + len, sizeof buf - (size_t)len, "%s%s%d", l ? "/" : "", level[l], below(r, branch));
    if ((out[m] = strdup(buf)) == NULL) return -1;
  }
  return 0;
}

/* Gives every rank its node's location (mode 1), some ranks none or an
 * invalid value (2), or another node's (3). nodeOf maps ranks to nodes. */
int spread_locations(struct rng *r, int mode, int nodes, int n, const int *nodeOf, struct rank_env *e) {
  char **loc = calloc((size_t)nodes, sizeof(char *));
  if (loc == NULL || tree_locations(r, nodes, loc) != 0) {
    for (int m = 0; loc && m < nodes; m++) free(loc[m]);
    free(loc);
    return -1;
  }
  for (int k = 0; k < n; k++) {
    const char *v = loc[nodeOf[k]];
    if (mode == 2 && below(r, 4) == 0)
      v = below(r, 2) ? NULL : badLocations[below(r, (int)(sizeof badLocations / sizeof badLocations[0]))];
    else if (mode == 3 && below(r, 3) == 0)
      v = loc[below(r, nodes)];
    e->location[k] = v ? strdup(v) : NULL;
  }
  for (int m = 0; m < nodes; m++) free(loc[m]);
  free(loc);
  return 0;
}

/* A random valid-looking cluster, small most of the time, with faults now
 * and then. */
void random_spec(uint64_t seed, struct spec *s) {
  struct rng r = {seed};
  memset(s, 0, sizeof *s);
  s->seed = next_u64(&r);
  int p = below(&r, 100);
  s->nodes = p < 55 ? 1 + below(&r, 4) : p < 85 ? 5 + below(&r, 12) : p < 97 ? 17 + below(&r, 16) : 33 + below(&r, 32);
  p = below(&r, 100);
  s->local = p < 60 ? 1 + below(&r, 8) : p < 92 ? 1 + below(&r, 32) : (int[]){64, 128, 256}[below(&r, 3)];
  if (s->local >= 64 && s->nodes > 4) s->nodes = 1 + below(&r, 4);
  s->channels = 1 + below(&r, 32);
  while (s->channels * s->local > NCCOM_RING_MAX_INTRA) s->channels /= 2;
  s->unequal = below(&r, 10) == 0;
  s->userBufs = below(&r, 5) == 0;
  int nRanks = s->nodes * s->local;
  s->postRanks = nRanks <= 8 ? 0 : nRanks <= 256 ? 4 : 2;
  s->numbering = random_numbering(&r);
  if (realMode) return;
  p = below(&r, 100);
  s->platform = p < 80 ? 0 : p < 94 ? 1 : p < 97 ? 2 : 3;
  s->kanga = s->platform ? below(&r, 5) : below(&r, 10) == 0 ? below(&r, 5) : 0;
  s->pod = below(&r, 25) == 0;
  if (below(&r, 100) < 25) {
    s->fault = 1 + below(&r, F_FIRST_ROUNDS - 1);
    s->faultRank = below(&r, nRanks > 0 ? nRanks : 1);
    s->faultChannel = below(&r, 32);
    static const int values[] = {-2, -1, 0, 1, 5, 32, 33, 257};
    s->faultValue = below(&r, 3) == 0 ? values[below(&r, 8)] : below(&r, nRanks + 2) - 1;
  }
  /* D25, D27, drawn after everything else so that the draws above stay as
   * they were: mostly no variable; sometimes NCCOM_RING_NODE_ORDER=network
   * on every rank, or on all but one; locations from a small tree, on some
   * ranks unset, invalid or another node's; NICs that differ per node or
   * not; SwitchV1 with per-rank answers; a record corrupted after the
   * AllGather. Only on clusters where comparing every rank's Preset is
   * cheap (the model's duplicate check is quadratic in the node size). */
  if (nRanks <= 1024 && s->local <= 32) {
    p = below(&r, 100);
    s->order = p < 80 ? 0 : p < 92 ? 1 : p < 96 ? 2 : 3;
    s->oddRank = below(&r, nRanks);
    p = below(&r, 100);
    if (s->order) s->locations = p < 10 ? 0 : p < 60 ? 1 : p < 80 ? 2 : 3;
    else s->locations = p < 8 ? 1 + below(&r, 3) : 0;
    p = below(&r, 100);
    s->nics = s->order ? (p < 70 ? 1 : p < 85 ? 0 : 2) : 0;
    if (s->platform == 0 && below(&r, 100) < 5) s->platform = 4, s->kanga = below(&r, 5);
  }
  if (s->fault == F_NONE && below(&r, 100) < 4) {
    s->fault = F_REC_FLIP + below(&r, 2);
    s->faultRank = below(&r, nRanks > 0 ? nRanks : 1);
    s->faultValue = below(&r, 64);
  }
}

/* Node sizes of a spec; the rng goes on to draw the channel orders, so
 * both come from the spec's seed alone. Returns nRanks. */
int x_sizes(const struct xspec *s, struct rng *r, int *sizes) {
  int n = 0;
  for (int m = 0; m < s->nodes; m++) {
    sizes[m] = s->unequal ? 1 + below(r, s->local) : s->local;
    n += sizes[m];
  }
  return n;
}

int x_nranks(const struct xspec *s) {
  struct rng r = {s->seed};
  int sizes[64];
  return x_sizes(s, &r, sizes);
}

/* A random valid cluster of at most 64 ranks and one random corruption:
 * one ring field of one rank and channel (in range, -1 or out of range;
 * now and then a channel past the graph's, whose -1 marks D23 reads), or a
 * fragment in two slots, or two slots swapped. */
void random_xspec(uint64_t seed, struct xspec *s) {
  struct rng r = {seed};
  memset(s, 0, sizeof *s);
  s->seed = next_u64(&r);
  s->nodes = 1 + below(&r, 8);
  s->local = 1 + below(&r, 8);
  s->unequal = below(&r, 10) == 0;
  /* few channels half the time: a corrupted channel is then more often the
   * one the diagnosis reads first */
  s->channels = below(&r, 2) ? 1 + below(&r, 4) : 1 + below(&r, MAXCHANNELS);
  static const int fills[] = {0x00, 0xA5, 0xFF};
  s->fill = fills[below(&r, 3)];
  int n = x_nranks(s);
  s->kind = X_RECV + below(&r, 6);
  if (n == 1 && s->kind >= X_DUP) s->kind = X_RECV + below(&r, 4); /* one slot: nothing to copy or swap */
  s->rank = below(&r, n);
  s->channel = below(&r, 10) == 0 ? below(&r, MAXCHANNELS) : below(&r, s->channels);
  if (s->kind >= X_DUP) {
    s->value = (s->rank + 1 + below(&r, n - 1)) % n; /* another slot */
  } else {
    int p = below(&r, 100);
    s->value = p < 60 ? below(&r, n) : p < 75 ? -1 : p < 90 ? n + below(&r, 3) : -2 - below(&r, 2);
  }
  s->numbering = random_numbering(&r);
  /* D25, D27, drawn last so that the draws above stay as they were: the
   * policy on every rank in 4 jobs of 10 (a quarter of those with mixed,
   * missing or invalid locations), and then a third of the time a
   * corruption of one record instead (now and then without the policy,
   * where it must change nothing); one job in ten on TRN3-SwitchV1 (where
   * the policy is not applied); with --pod-order node, enablePod in a
   * quarter of the jobs. */
  s->policy = below(&r, 10) < 4 ? 1 + (below(&r, 4) == 0) : 0;
  if (below(&r, s->policy ? 3 : 20) == 0) {
    s->kind = n > 1 ? X_REC_FLIP + below(&r, 3) : X_REC_FLIP;
    s->value = s->kind == X_REC_COPY ? (s->rank + 1 + below(&r, n - 1)) % n : below(&r, 64);
  }
  s->platform = below(&r, 10) == 0;
  if (podOrderNode) s->pod = below(&r, 4) == 0;
  /* D28, drawn after all of the above: a record corruption on
   * TRN3-SwitchV1 now and then (where every record is needed), and in a
   * quarter of the jobs of two or more ranks one of D28's kinds instead
   * of the corruption drawn: one rank's (or node's) own platform,
   * enablePod, nKangaRingChannels (mostly on SwitchV1, where it counts)
   * or graph; NCCOM_RING_PLATFORM on that rank (or node) alone, its
   * Preset run in a process without the hooks; a fragment whose channel
   * count is not its record's; a record of another version; a fragment
   * without the magic. */
  if (s->kind >= X_REC_FLIP && below(&r, 4) == 0) s->platform = 1;
  if (n > 1 && below(&r, 4) == 0) {
    static const int kinds[] = {X_PLATFORM,    X_ENABLEPOD,   X_KANGA,    X_GRAPH,
                                X_STALE_COUNT, X_REC_VERSION, X_REC_NONE, X_ENV_PLATFORM};
    s->kind = kinds[below(&r, sizeof kinds / sizeof kinds[0])];
    s->value = below(&r, 1 << 12);
    s->platform = s->kind == X_KANGA ? below(&r, 4) != 0 : below(&r, 4) == 0;
  }
}

/* Greedy shrinking, both modes: keeps the first of smaller()'s candidates
 * for case c that is smaller by size() and still fails, until none is.
 * size() only ever falls, so it ends. */
void shrink_case(void *c, size_t caseSize, int (*smaller)(const void *c, void *tries),
                 long long (*size)(const void *c), int (*fails)(const void *c)) {
  unsigned char *tries = malloc(SHRINK_TRIES * caseSize);
  if (tries == NULL) return; /* the case as found */
  for (int progress = 1; progress;) {
    progress = 0;
    int n = smaller(c, tries);
    for (int i = 0; i < n && !progress; i++) {
      void *t = tries + (size_t)i * caseSize;
      if (size(t) < size(c) && fails(t)) {
        memcpy(c, t, caseSize);
        progress = 1;
      }
      sum.shrinkTries++;
      progress_tick();
    }
  }
  free(tries);
}
