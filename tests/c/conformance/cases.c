/*
 * cases.c - the default mode: a struct spec built into a cluster, run
 * through both libraries (Preset, the AllGather with its faults, Postset,
 * GetNetDev, BuildRings) and compared; a failing case shrunk; the
 * NULL-argument calls.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "conformance.h"

/* ------------------------------------------------------------------ */
/* A materialized case                                                 */

struct world {
  struct spec sp;
  struct cluster *cl;
  int nRanks, channels;
  int *postRanks, nPost; /* ranks Postset runs on */
  struct rank_env env;   /* D25's variables and D27's answers; n == 0: none */
};

static void world_free(struct world *w) {
  cluster_free(w->cl);
  free(w->postRanks);
  rank_env_free(&w->env);
  memset(w, 0, sizeof *w);
}

/* The case's variables and answers (D25, D27), from their own stream of
 * the seed; and the NICs of spec.nics. Nothing when the spec sets none. */
static int world_env(const struct spec *sp, struct world *w) {
  int n = w->nRanks, M = sp->nodes;
  if (sp->nics > 0 && M > 1) {
    const struct ncclTopoGraph *g0 = w->cl->graphs[0];
    for (int m = 1; m < M; m++) memcpy(w->cl->graphs[m]->inter, g0->inter, sizeof g0->inter);
    if (sp->nics == 2) w->cl->graphs[M - 1]->inter[0] = g0->inter[0] + 1;
  }
  if (sp->order == 0 && sp->locations == 0 && sp->platform != 4) return 0;
  struct rng r = {mix(sp->seed ^ 0xD25D27ULL)};
  if (rank_env_alloc(&w->env, n) != 0) return -1;
  int odd = sp->oddRank % n;
  for (int k = 0; k < n && sp->order; k++) {
    const char *v = below(&r, 20) == 0 ? "NETWORK" : "network"; /* matched ignoring case, as the library does */
    if (k == odd && sp->order == 2) v = below(&r, 2) ? NULL : "rank";
    if (k == odd && sp->order == 3) v = bad_order(&r);
    if (v && (w->env.order[k] = strdup(v)) == NULL) return -1;
  }
  if (sp->locations) {
    int *nodeOf = malloc((size_t)n * sizeof(int));
    if (nodeOf == NULL) return -1;
    for (int k = 0; k < n; k++) nodeOf[k] = cluster_node_of(w->cl, k);
    int bad = spread_locations(&r, sp->locations, M, n, nodeOf, &w->env);
    free(nodeOf);
    if (bad) return -1;
  }
  if (sp->platform == 4) {
    /* Every rank's answers pass, but now and then one or two ranks' fail. */
    w->env.vcore = calloc((size_t)n, sizeof(int));
    w->env.jbog = calloc((size_t)n, sizeof(int));
    if (!w->env.vcore || !w->env.jbog) return -1;
    for (int k = 0; k < n; k++) w->env.jbog[k] = 1 + k % 3;
    for (int bad = below(&r, 4) == 0 ? 0 : 1 + below(&r, 2); bad > 0; bad--) {
      static const int vcores[] = {1, 2, -1}, jbogs[] = {0, 4, 5, -1};
      int k = below(&r, n);
      if (below(&r, 3) == 0) w->env.vcore[k] = vcores[below(&r, 3)];
      else w->env.jbog[k] = jbogs[below(&r, 4)];
    }
  }
  return 0;
}

/* Builds the cluster of a spec: node sizes, each node's channel orders (a
 * random permutation per node and channel) and NICs. */
static int world_build(const struct spec *sp, struct world *w) {
  memset(w, 0, sizeof *w);
  w->sp = *sp;
  struct rng r = {sp->seed};
  int *sizes = malloc((size_t)sp->nodes * sizeof(int));
  if (sizes == NULL) return -1;
  for (int m = 0; m < sp->nodes; m++) sizes[m] = sp->unequal ? 1 + below(&r, sp->local) : sp->local;
  w->cl = cluster_new_numbered(sp->nodes, sizes, sp->numbering, numbering_seed(sp->seed));
  free(sizes);
  if (w->cl == NULL) return -1;
  w->nRanks = w->cl->nRanks;
  w->channels = sp->channels;
  for (int m = 0; m < sp->nodes; m++) {
    struct ncclTopoGraph *g = w->cl->graphs[m];
    int L = w->cl->localRanks[m];
    int nc = sp->channels < 1 ? 1 : sp->channels > MAXCHANNELS ? MAXCHANNELS : sp->channels;
    for (int c = 0; c < nc && c * L + L <= NCCOM_RING_MAX_INTRA; c++) {
      random_local_order(&r, w->cl, m, c, L);
      g->inter[2 * c] = below(&r, 9) - 1;
      g->inter[2 * c + 1] = below(&r, 9) - 1;
    }
    g->nChannels = sp->channels;
    g->crossracktorack = below(&r, 3);
  }
  w->cl->enablePod = sp->pod;
  if (world_env(sp, w) != 0) return -1;

  /* The Postset sample: every rank of small clusters, else rank 0, the last
   * rank, the fault's rank and random ones. */
  int want = sp->postRanks == 0 || sp->postRanks >= w->nRanks ? w->nRanks : sp->postRanks;
  w->postRanks = malloc((size_t)want * sizeof(int));
  if (w->postRanks == NULL) return -1;
  if (want == w->nRanks) {
    for (int i = 0; i < want; i++) w->postRanks[i] = i;
    w->nPost = want;
  } else {
    int cand[4] = {0, w->nRanks - 1, sp->faultRank % w->nRanks, below(&r, w->nRanks)};
    for (int i = 0; w->nPost < want; i++) {
      int v = i < 4 ? cand[i] : below(&r, w->nRanks), dup = 0;
      for (int j = 0; j < w->nPost; j++) dup |= w->postRanks[j] == v;
      if (!dup) w->postRanks[w->nPost++] = v;
    }
  }
  return 0;
}

static int fault_rank(const struct world *w) { return w->sp.faultRank % w->nRanks; }
static int fault_channel(const struct world *w) {
  return w->sp.faultChannel % (w->channels < 1 ? 1 : w->channels);
}

/* The graph a rank's Preset sees: its node's, or, on the node of a graph
 * fault, a copy with the fault applied in scratch. */
static const struct ncclTopoGraph *graph_for(const struct world *w, int rank, struct ncclTopoGraph *g) {
  int m = cluster_node_of(w->cl, rank);
  int graphFault = w->sp.fault == F_INTRA_VALUE || w->sp.fault == F_INTRA_DUP || w->sp.fault == F_NCHANNELS;
  if (!graphFault || cluster_node_of(w->cl, fault_rank(w)) != m) return w->cl->graphs[m];
  memcpy(g, w->cl->graphs[m], sizeof *g);
  int L = w->cl->localRanks[m], c = fault_channel(w);
  switch (w->sp.fault) {
  case F_INTRA_VALUE:
    g->intra[c * L + (unsigned)w->sp.faultValue % (unsigned)L] = w->sp.faultValue % 2 ? -1 : w->nRanks;
    break;
  case F_INTRA_DUP:
    if (L > 1) {
      int i = 1 + (int)((unsigned)w->sp.faultValue % (unsigned)(L - 1));
      g->intra[c * L + i] = g->intra[c * L + i - 1];
    }
    break;
  case F_NCHANNELS:
    g->nChannels = w->sp.faultValue;
    break;
  default:
    break;
  }
  return g;
}

/* A communicator as a host hands it over: canary bytes everywhere the ring
 * stage must not care about, then the fields it reads. */
static void comm_init(const struct world *w, int rank, struct ncclComm *c, int **callerBufs) {
  memset(c, 0x5A, sizeof *c);
  int m = cluster_node_of(w->cl, rank);
  struct rng r = {w->sp.seed ^ 0xC0FFEEULL};
  for (int ch = 0; ch < MAXCHANNELS; ch++) {
    c->channels[ch].ring.userRanks = NULL;
    c->channels[ch].ring.devUserRanks = (int *)(uintptr_t)(0xDE000000u + (unsigned)ch); /* never touched */
    if (callerBufs) {
      callerBufs[ch] = NULL;
      if (w->sp.userBufs && below(&r, 3) == 0) {
        /* as long as the comm's nRanks says (F_NRANKS may claim more) */
        size_t len = (size_t)(w->sp.fault == F_NRANKS && w->sp.faultValue > w->nRanks ? w->sp.faultValue : w->nRanks);
        callerBufs[ch] = malloc(len * sizeof(int));
        memset(callerBufs[ch], 0x77, len * sizeof(int));
        c->channels[ch].ring.userRanks = callerBufs[ch];
      }
    }
  }
  c->nKangaRingChannels = w->sp.kanga;
  uint64_t k = mix(w->sp.seed ^ (uint64_t)rank);
  for (int p = 0; p < MAX_KANGA_PATHS; p++)
    for (int i = 0; i < NCCOM_RING_KANGA_WIDTH; i++)
      c->kangaRing[p][i] = (int)((k >> ((p * 64 + i) % 52)) & 4095) + 4096 * p;
  c->topo = &w->cl->systems[m];
  c->rank = rank;
  c->nRanks = w->nRanks;
  c->localRanks = w->cl->localRanks[m];
  c->enablePod = w->sp.pod;
  if (rank != fault_rank(w)) return;
  switch (w->sp.fault) {
  case F_LOCALRANKS: c->localRanks = w->sp.faultValue; break;
  case F_KANGA_COUNT: c->nKangaRingChannels = w->sp.faultValue; break;
  case F_RANK: c->rank = w->sp.faultValue; break;
  case F_NRANKS: c->nRanks = w->sp.faultValue; break;
  default: break;
  }
}

/* ------------------------------------------------------------------ */
/* Running one case                                                    */

struct ncclComm *commA, *commB;
static int run_preset(const struct world *w, int lib, int rank, struct ncclComm *c, int **bufs,
                      struct ncclTopoRanks *frag, struct outcome *o) {
  static struct ncclTopoGraph scratch;
  /* The libraries take a non-const graph; neither writes it (spec §2). */
  struct ncclTopoGraph *g = (struct ncclTopoGraph *)(uintptr_t)graph_for(w, rank, &scratch);
  comm_init(w, rank, c, bufs);
  memset(frag, 0xA5, sizeof *frag);
  set_rank_env(&w->env, rank);
  call_begin("ncclTopoPreset", lib);
  o->res = libs[lib].api.preset(c, w->sp.fault == F_NULL_GRAPH && rank == fault_rank(w) ? NULL : g, frag);
  call_end(o);
  return o->res;
}

static int check_get_net_dev(const struct world *w, int rank, int nChannels) {
  struct rng r = {w->sp.seed ^ 0xD00DULL ^ (uint64_t)rank};
  static struct ncclTopoGraph g;
  int m = cluster_node_of(w->cl, rank);
  memcpy(&g, w->cl->graphs[m], sizeof g);
  struct ncclTopoSystem sys = w->cl->systems[m];
  int ids[80], n = 0;
  ids[n++] = -1;
  for (int c = 0; c < nChannels + 2 && n < 70; c++) ids[n++] = c;
  ids[n++] = 1000 + below(&r, 1000);
  ids[n++] = INT_MAX;
  for (int mode = 0; mode < 6; mode++) {
    /* 0: as built; 1: graph NULL (the host's ncclTopoGetLocalNet, D19);
     * 2: bad count; 3: bad nChannels; 4: sys NULL; 5: dev NULL. */
    if (realMode && mode != 0) break;
    struct ncclTopoSystem s = sys;
    struct ncclTopoGraph *gp = &g;
    int nch = g.nChannels;
    if (mode == 2) {
      static const int counts[] = {0, -1, 257, 1, 256};
      s.nodes[0].count = counts[below(&r, 5)];
    }
    if (mode == 3) {
      static const int chans[] = {0, -3, 40, 64, 33};
      g.nChannels = chans[below(&r, 5)];
    }
    for (int i = 0; i < n; i++) {
      if (mode != 0 && i % 7 != 0) continue;
      struct outcome o[2];
      int dev[2] = {-12345, -12345};
      for (int lib = 0; lib < 2; lib++) {
        call_begin("ncclTopoGetNetDev", lib);
        o[lib].res = libs[lib].api.get_net_dev(mode == 4 ? NULL : &s, rank, mode == 1 ? NULL : gp, ids[i],
                                               mode == 5 ? NULL : &dev[lib]);
        call_end(&o[lib]);
      }
      char call[96];
      snprintf(call, sizeof call, "ncclTopoGetNetDev(channelId %d, %s)", ids[i],
               (const char *[]){"graph", "graph NULL", "bad sys count", "bad graph nChannels", "sys NULL",
                                "dev NULL"}[mode]);
      if (compare_outcome(call, rank, &o[0], &o[1])) return 1;
      if (dev[0] != dev[1]) return differ("%s on rank %d: *dev candidate %d, reference %d", call, rank, dev[0], dev[1]);
    }
    g.nChannels = nch;
  }
  return 0;
}

/* BuildRings on the rings Postset made (next taken from userRanks), now and
 * then with a corrupted next or rank. */
static int check_build_rings(const struct world *w, const struct ncclComm *c) {
  int n = w->nRanks, nrings = c->nChannels;
  if (c->nRanks != n || nrings < 0 || nrings > MAXCHANNELS || n > 512) return 0;
  size_t cells = (size_t)(nrings > 0 ? nrings : 1) * (size_t)n;
  int *next = malloc(cells * sizeof(int)), *rings[2];
  rings[0] = malloc(cells * sizeof(int));
  rings[1] = malloc(cells * sizeof(int));
  if (!next || !rings[0] || !rings[1]) return differ("harness out of memory");
  struct rng r = {w->sp.seed ^ 0xB1ULL};
  for (int ch = 0; ch < nrings; ch++) {
    const int *u = c->channels[ch].ring.userRanks;
    for (int i = 0; i < n; i++) next[(size_t)ch * (size_t)n + (size_t)u[i]] = u[(i + 1) % n];
  }
  int rank = c->rank;
  int mode = realMode ? 0 : below(&r, 4);
  if (mode == 1 && nrings > 0) next[below(&r, (int)cells)] = below(&r, 3) == 0 ? n + below(&r, 3) : below(&r, n);
  if (mode == 2) rank = below(&r, 2) ? -1 : n;
  if (mode == 3 && nrings > 0 && n > 1) { /* a short cycle: two ranks pointing at each other */
    int ch = below(&r, nrings), a = below(&r, n), b = (a + 1) % n;
    next[(size_t)ch * (size_t)n + (size_t)a] = b;
    next[(size_t)ch * (size_t)n + (size_t)b] = a;
  }
  struct outcome o[2];
  for (int lib = 0; lib < 2; lib++) {
    memset(rings[lib], 0x3C, cells * sizeof(int));
    call_begin("ncclBuildRings", lib);
    o[lib].res = libs[lib].api.build_rings(nrings, rings[lib], rank, n, NULL, next);
    call_end(&o[lib]);
  }
  int d = compare_outcome("ncclBuildRings", rank, &o[0], &o[1]) ||
          compare_bytes("ncclBuildRings", rank, "rings", rings[0], rings[1], cells * sizeof(int));
  free(next);
  free(rings[0]);
  free(rings[1]);
  return d;
}

/* The D25/D27 texts a run has seen, for its last line: what the cases with
 * the variables exercised. */
static const char *const envTextKeys[8] = {
    "is not rank or network",   "this rank has no location", "the most common): network on", "has graph fingerprint",
    "has no location (",        "comm->enablePod is set on", "virtual core size of rank", "JBOG id of rank"};
const char *const envTextLabels[8] = {
    "unknown NCCOM_RING_NODE_ORDER", "invalid NCCOM_RING_LOCATION", "case 4 (a policy's odd one out)",
    "case 5 (a graph's odd one out)",        "case 6 with nodes without a location", "P12", "P13", "P14"};
static void tally_text(const char *warn) {
  if (silent) return;
  for (int k = 0; k < 8; k++)
    if (strstr(warn, envTextKeys[k])) sum.envTexts[k]++;
}

/* Runs one case through both libraries. Returns 1 on the first difference
 * (described in diffText), 0 when they agree. */

int run_case(const struct spec *sp) {
  struct world w;
  char text[CASE_TEXT];
  format_spec(text, sizeof text, sp);
  case_begin(text, CASE_SPEC);
  if (world_build(sp, &w) != 0) {
    world_free(&w);
    case_end();
    return differ("harness out of memory building the case");
  }
  set_platform(sp);
  int n = w.nRanks, d = 0;
  if (!silent && w.env.n > 0) sum.envCases++;
  /* A comm that claims more ranks (F_NRANKS) gets arrays that long, as its
   * host would pass them: the extra fragment pointers are NULL. */
  size_t room = (size_t)(sp->fault == F_NRANKS && sp->faultValue > n ? sp->faultValue : n);
  struct ncclTopoRanks *frags[2] = {calloc((size_t)n, sizeof(struct ncclTopoRanks)),
                                    calloc((size_t)n, sizeof(struct ncclTopoRanks))};
  struct ncclTopoRanks **all[2] = {calloc(room, sizeof(void *)), calloc(room, sizeof(void *))};
  int *heads[2] = {malloc(room * sizeof(int)), malloc(room * sizeof(int))};
  int *bufs[2][MAXCHANNELS];
  if (!frags[0] || !frags[1] || !all[0] || !all[1] || !heads[0] || !heads[1]) {
    d = differ("harness out of memory");
    goto out;
  }

  /* Preset on every rank, compared on every rank of nodes up to 32 ranks.
   * On larger nodes the reference model's O(L^2) duplicate check makes that
   * too slow for 20,000 cases, so it is compared on the first 4 and the last
   * rank of each node, the fault's rank and the Postset ranks; elsewhere the
   * candidate's fragment stands for both (Postset still gets equal input).
   * A case that sets D25's variables runs every Preset in both libraries:
   * each prints a variable's WARN when it reads a new value, so both must
   * read every rank's. */
  for (int r = 0; r < n && !d; r++) {
    struct outcome o[2];
    struct ncclComm *c[2] = {commA, commB};
    int m = cluster_node_of(w.cl, r), local = cluster_local_of(w.cl, r), L = w.cl->localRanks[m];
    int compare = L <= 32 || local < 4 || local == L - 1 || r == fault_rank(&w) || w.env.n > 0;
    for (int i = 0; i < w.nPost && !compare; i++) compare = w.postRanks[i] == r;
    if (!compare) {
      run_preset(&w, 0, r, commA, NULL, &frags[0][r], &o[0]);
      if (o[0].res != ncclSuccess) {
        compare = 1; /* an error is always compared */
      } else {
        frags[1][r] = frags[0][r];
        continue;
      }
    }
    for (int lib = 0; lib < 2; lib++) run_preset(&w, lib, r, c[lib], NULL, &frags[lib][r], &o[lib]);
    d = compare_outcome("ncclTopoPreset", r, &o[0], &o[1]) || compare_fragments(r, &frags[0][r], &frags[1][r], w.channels) ||
        compare_comms("ncclTopoPreset", r, commA, commB, NULL, NULL);
    tally_text(o[0].warn);
    if (!d && o[0].res != ncclSuccess) goto out; /* both refused alike: the case ends here */
  }
  if (d) goto out;

  /* The AllGather, then fragment faults. */
  for (int lib = 0; lib < 2; lib++) {
    for (int r = 0; r < n; r++) all[lib][r] = &frags[lib][r];
    int fr = fault_rank(&w), fc = fault_channel(&w), v = sp->faultValue;
    switch (sp->fault) {
    case F_FRAG_RECV: frags[lib][fr].ringRecv[fc] = v; break;
    case F_FRAG_SEND: frags[lib][fr].ringSend[fc] = v; break;
    case F_FRAG_PREV: frags[lib][fr].ringPrev[fc] = v; break;
    case F_FRAG_NEXT: frags[lib][fr].ringNext[fc] = v; break;
    case F_FRAG_NULL: all[lib][fr] = NULL; break;
    case F_FRAG_SWAP: all[lib][fr] = &frags[lib][(unsigned)v % (unsigned)n]; break;
    case F_REC_FLIP: ((unsigned char *)&frags[lib][fr])[NCCOM_RING_RECORD_OFFSET + (unsigned)v % 64] ^= 0xFF; break;
    case F_REC_ZERO: memset((unsigned char *)&frags[lib][fr] + NCCOM_RING_RECORD_OFFSET, 0, sizeof(int)); break;
    default: break;
    }
  }

  /* Postset on the sampled ranks, each on the comm its own Preset left. */
  for (int i = 0; i < w.nPost && !d; i++) {
    int r = w.postRanks[i];
    struct ncclComm *c[2] = {commA, commB};
    struct outcome o[2];
    int nch[2] = {-777, -777}, nnodes[2] = {-777, -777};
    for (int lib = 0; lib < 2; lib++) {
      struct ncclTopoRanks scratchFrag;
      if (run_preset(&w, lib, r, c[lib], bufs[lib], &scratchFrag, &o[lib]) != ncclSuccess) {
        d = differ("ncclTopoPreset on rank %d failed when repeated for Postset", r);
        break;
      }
      if (sp->fault == F_COMM_NCHANNELS) c[lib]->nChannels = sp->faultValue;
      for (size_t k = 0; k < room; k++) heads[lib][k] = -999;
      call_begin("ncclTopoPostset", lib);
      o[lib].res = libs[lib].api.postset(c[lib], heads[lib], all[lib], &nch[lib], &nnodes[lib]);
      call_end(&o[lib]);
    }
    if (!d)
      d = compare_outcome("ncclTopoPostset", r, &o[0], &o[1]) ||
          compare_comms("ncclTopoPostset", r, commA, commB, bufs[0], bufs[1]) ||
          compare_bytes("ncclTopoPostset", r, "nodesFirstRank", heads[0], heads[1], room * sizeof(int)) ||
          (nch[0] != nch[1] && differ("ncclTopoPostset on rank %d: *nChannels candidate %d, reference %d", r, nch[0], nch[1])) ||
          (nnodes[0] != nnodes[1] && differ("ncclTopoPostset on rank %d: *nNodes candidate %d, reference %d", r, nnodes[0], nnodes[1]));
    if (!d && i == 0) tally_text(o[0].warn);
    if (!d && o[0].res == ncclSuccess) {
      d = check_get_net_dev(&w, r, commA->nChannels);
      if (!d && i == 0) d = check_build_rings(&w, commA);
    }
    free_lib_bufs(commA, bufs[0]);
    free_lib_bufs(commB, bufs[1]);
  }
out:
  for (int lib = 0; lib < 2; lib++) {
    free(frags[lib]);
    free(all[lib]);
    free(heads[lib]);
  }
  clear_rank_env();
  world_free(&w);
  case_end();
  return d;
}

/* How big a case is: shrinking only ever moves to a strictly smaller one,
 * so it ends. */
static long long spec_size(const struct spec *s) {
  long long v = s->faultValue < 0 ? -(long long)s->faultValue : s->faultValue;
  return ((long long)s->nodes * s->local * s->channels) * 1000000 + (long long)s->faultRank * 1000 +
         s->faultChannel * 100 + v * 10 + s->unequal + s->platform + s->kanga + s->pod + s->userBufs +
         (s->fault != 0) + (s->postRanks != 1) + s->numbering + s->order + (s->oddRank != 0) + s->locations +
         s->nics;
}

/* The smaller cases shrinking tries, into tries[]; returns how many. */
static int spec_smaller(const void *c, void *out) {
  const struct spec *s = c;
  struct spec *tries = out;
  int n = 0;
  SHRINK_CLUSTER(s, tries, n);
  SHRINK_TRY(s, tries, n, platform, 0) SHRINK_TRY(s, tries, n, kanga, 0)
  SHRINK_TRY(s, tries, n, kanga, s->kanga > 1 ? s->kanga - 1 : 0) SHRINK_TRY(s, tries, n, pod, 0)
  SHRINK_TRY(s, tries, n, userBufs, 0) SHRINK_TRY(s, tries, n, fault, 0) SHRINK_TRY(s, tries, n, order, 0)
  SHRINK_TRY(s, tries, n, order, s->order > 1 ? 1 : s->order) SHRINK_TRY(s, tries, n, oddRank, 0)
  SHRINK_TRY(s, tries, n, locations, 0) SHRINK_TRY(s, tries, n, locations, s->locations > 1 ? 1 : s->locations)
  SHRINK_TRY(s, tries, n, nics, 0) SHRINK_TRY(s, tries, n, nics, s->nics > 1 ? 1 : s->nics)
  SHRINK_NUMBERING(s, tries, n);
  /* fault coordinates: into the shrunk cluster, then toward 0 */
  SHRINK_TRY(s, tries, n, faultRank, s->faultRank % (s->nodes * s->local))
  SHRINK_TRY(s, tries, n, faultRank, s->faultRank / 2) SHRINK_TRY(s, tries, n, faultRank, 0)
  SHRINK_TRY(s, tries, n, faultChannel, s->faultChannel % s->channels) SHRINK_TRY(s, tries, n, faultChannel, 0)
  SHRINK_TRY(s, tries, n, faultValue, 0) SHRINK_TRY(s, tries, n, faultValue, -1)
  SHRINK_TRY(s, tries, n, faultValue, s->faultValue / 2) SHRINK_TRY(s, tries, n, postRanks, 1)
  return n;
}

static long long spec_size_of(const void *c) { return spec_size(c); }
static int spec_fails(const void *c) { return run_case(c); }

/* Shrinks a failing case, silently: the smallest case that still differs. */
void shrink(struct spec *s) {
  silent = 1;
  sum.phase = "shrinking the failing case";
  shrink_case(s, sizeof *s, spec_smaller, spec_size_of, spec_fails);
  silent = 0;
}

/* ------------------------------------------------------------------ */

int null_argument_calls(void) {
  /* Each NULL argument, once, through both libraries. */
  struct ncclComm *c = commA;
  struct ncclTopoGraph *g = calloc(1, sizeof *g);
  struct ncclTopoRanks fr, *allp[1] = {&fr};
  int x, y, ring[1], next[1] = {0};
  struct {
    const char *name;
    int which;
  } calls[] = {{"Preset(comm NULL)", 0},     {"Preset(graph NULL)", 1},      {"Preset(topoRanks NULL)", 2},
               {"Postset(comm NULL)", 3},    {"Postset(nodesFirstRank NULL)", 4}, {"Postset(allTopoRanks NULL)", 5},
               {"Postset(nChannels NULL)", 6}, {"Postset(nNodes NULL)", 7},  {"BuildRings(rings NULL)", 8},
               {"BuildRings(next NULL)", 9}};
  int d = 0;
  if (!realMode) case_begin("the NULL-argument calls (they run first)", CASE_FIXED);
  for (size_t i = 0; i < sizeof calls / sizeof calls[0] && !d && !realMode; i++) {
    struct outcome o[2];
    for (int lib = 0; lib < 2; lib++) {
      const struct ring_api *a = &libs[lib].api;
      memset(c, 0, sizeof *c);
      c->nRanks = 1;
      c->localRanks = 1;
      call_begin(calls[i].name, lib);
      switch (calls[i].which) {
      case 0: o[lib].res = a->preset(NULL, g, &fr); break;
      case 1: o[lib].res = a->preset(c, NULL, &fr); break;
      case 2: o[lib].res = a->preset(c, g, NULL); break;
      case 3: o[lib].res = a->postset(NULL, &x, allp, &x, &y); break;
      case 4: o[lib].res = a->postset(c, NULL, allp, &x, &y); break;
      case 5: o[lib].res = a->postset(c, &x, NULL, &x, &y); break;
      case 6: o[lib].res = a->postset(c, &x, allp, NULL, &y); break;
      case 7: o[lib].res = a->postset(c, &x, allp, &x, NULL); break;
      case 8: o[lib].res = a->build_rings(1, NULL, 0, 1, NULL, next); break;
      case 9: o[lib].res = a->build_rings(1, ring, 0, 1, NULL, NULL); break;
      }
      call_end(&o[lib]);
    }
    d = compare_outcome(calls[i].name, -1, &o[0], &o[1]);
  }
  if (!realMode) case_end();
  free(g);
  return d;
}
