/*
 * conformance - the ABI conformance harness: runs the same clusters through a
 * candidate and a reference library that export libnccom's four ring-stage
 * functions, and compares every output byte, return code and WARN line.
 *
 *   conformance [--candidate LIB] [--reference LIB] [--seed S] [--count N]
 *               [--case 'SPEC'] [--real]
 *
 * Defaults: candidate libnccomring.so beside this program (build/), reference
 * $NCCOM_REF_LIB or libnccomref.so beside it, a time-based seed (printed, so a failure replays),
 * 20000 random clusters after the cases of regressions.inc. Both libraries
 * are dlopen'ed by path with RTLD_LOCAL and their symbols found with dlsym
 * (the C name, else the C++-mangled name a C++ build would export).
 *
 * Compared per cluster: every rank's Preset (return code, WARN, the
 * canary-filled 960-byte fragment, the whole canary-filled communicator);
 * Postset on every rank of small clusters and on sampled ranks of large ones
 * (return code, WARN, the communicator with channels[0..32) prev/next and
 * userRanks contents, nodesFirstRank, the nChannels/nNodes out-parameters,
 * kangaRing); GetNetDev for every channel and some bad ones; BuildRings on
 * the resulting rings, sometimes corrupted. Faults are injected into the
 * inputs (spec.h). On the first difference the case is shrunk and printed
 * as a struct spec initializer to paste into regressions.inc.
 *
 * --real relaxes what only this project's reference model can match: WARN
 * texts are compared only for the spec's two exact BuildRings strings, and
 * only fault-free, generic-platform clusters with a graph are run. Use it
 * against a real libnccom.so.2 (README: "Conformance against a real libnccom").
 *
 * Exit status: 0 no difference, 1 a difference, 2 usage or load error,
 * 3 a library crashed (the case is printed).
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../common/cluster.h"
#include "spec.h"

/* ------------------------------------------------------------------ */
/* Libraries                                                           */

struct lib {
  const char *role, *path;
  void *handle;
  struct ring_api api;
  int mangled; /* symbols found by their C++ names */
};

static struct lib libs[2] = {{.role = "candidate"}, {.role = "reference"}};

static void *find_symbol(struct lib *l, const char *cname, const char *cxxname) {
  void *p = dlsym(l->handle, cname);
  if (p) return p;
  p = dlsym(l->handle, cxxname);
  if (p) {
    l->mangled = 1;
    return p;
  }
  fprintf(stderr,
          "conformance: the %s %s does not export %s (nor %s) to dlsym.\n"
          "  A libnccom built with -fvisibility=hidden or without extern \"C\" keeps it out of\n"
          "  .dynsym; check with: nm -D --defined-only %s | grep -i ncclTopo\n",
          l->role, l->path, cname, cxxname, l->path);
  exit(2);
}

static void load(struct lib *l) {
  l->handle = dlopen(l->path, RTLD_NOW | RTLD_LOCAL);
  if (l->handle == NULL) {
    fprintf(stderr, "conformance: cannot load the %s %s: %s\n", l->role, l->path, dlerror());
    exit(2);
  }
  /* Function pointers from dlsym: POSIX guarantees the conversion. */
  void *p;
  p = find_symbol(l, "ncclTopoPreset", "_Z14ncclTopoPresetP8ncclCommP13ncclTopoGraphP13ncclTopoRanks");
  memcpy(&l->api.preset, &p, sizeof p);
  p = find_symbol(l, "ncclTopoPostset", "_Z15ncclTopoPostsetP8ncclCommPiPP13ncclTopoRanksS1_S1_");
  memcpy(&l->api.postset, &p, sizeof p);
  p = find_symbol(l, "ncclBuildRings", "_Z14ncclBuildRingsiPiiiS_S_");
  memcpy(&l->api.build_rings, &p, sizeof p);
  p = find_symbol(l, "ncclTopoGetNetDev", "_Z17ncclTopoGetNetDevP14ncclTopoSystemiP13ncclTopoGraphiPi");
  memcpy(&l->api.get_net_dev, &p, sizeof p);
}

/* ------------------------------------------------------------------ */
/* Host hooks both libraries find with dlsym (D14, D19): this program is */
/* linked with -rdynamic. Each case sets them.                         */

static bool hookSwitchV1;
static int hookVcore, hookJbogMode;

bool neuronIsTrn3SwitchV1Family(void);
int nec_get_virtual_core_size(void);
int neuronTrnSwitchV1JbogId(int rank);
ncclResult_t ncclTopoGetLocalNet(struct ncclTopoSystem *sys, int rank, int *dev);

bool neuronIsTrn3SwitchV1Family(void) { return hookSwitchV1; }
int nec_get_virtual_core_size(void) { return hookVcore; }
int neuronTrnSwitchV1JbogId(int rank) { return hookJbogMode ? rank % 5 : 1; }
ncclResult_t ncclTopoGetLocalNet(struct ncclTopoSystem *sys, int rank, int *dev) {
  *dev = 500 + rank + (sys ? 1 : 0);
  return rank % 3 == 0 ? ncclSystemError : ncclSuccess;
}

/* ------------------------------------------------------------------ */
/* WARN capture: both libraries log to NCCL_DEBUG_FILE=/proc/self/fd/N, */
/* the write end of a pipe; the harness drains it after every call.    */

static int warnPipe[2];

static void drain(char *out, size_t size) {
  size_t n = 0;
  for (;;) {
    char buf[4096];
    ssize_t got = read(warnPipe[0], buf, sizeof buf);
    if (got <= 0) break;
    for (ssize_t i = 0; i < got && n + 1 < size; i++) out[n++] = buf[i];
  }
  if (out) out[n < size ? n : size - 1] = '\0';
}

/* The comparable part of captured WARN lines: "[rank] NCCL WARN text" of
 * each line (host, pid and tid are the same process anyway). */
static void warn_text(const char *raw, char *out, size_t size) {
  size_t n = 0;
  out[0] = '\0';
  for (const char *line = raw; *line;) {
    const char *end = strchr(line, '\n');
    if (end == NULL) end = line + strlen(line);
    const char *br = memchr(line, '[', (size_t)(end - line));
    if (br) {
      int w = snprintf(out + n, size - n, "%.*s\n", (int)(end - br), br);
      if (w > 0 && (size_t)w < size - n) n += (size_t)w;
    }
    line = *end ? end + 1 : end;
  }
}

/* Only the spec's two exact strings (D16) are comparable with a real
 * libnccom. */
static int spec_string(const char *text) {
  return strstr(text, "does not loop back to start") || strstr(text, "does not contain rank");
}

/* ------------------------------------------------------------------ */
/* Crash reporting: a library that faults takes the harness down; say  */
/* which call of which case did it.                                    */

static const struct spec *currentSpec;
static const char *currentCall = "setup";
static int currentLib = -1;

static void print_spec(FILE *f, const struct spec *s);

static void on_crash(int sig) {
  char msg[256];
  int n = snprintf(msg, sizeof msg, "\nconformance: signal %d in %s of the %s library; case:\n", sig,
                   currentCall, currentLib >= 0 ? libs[currentLib].role : "(harness)");
  if (write(2, msg, (size_t)n) < 0) _exit(3);
  if (currentSpec) print_spec(stderr, currentSpec);
  _exit(3);
}

/* ------------------------------------------------------------------ */
/* Deterministic randomness                                            */

static uint64_t mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

struct rng {
  uint64_t s;
};

static uint64_t next_u64(struct rng *r) { return r->s = mix(r->s); }
static int below(struct rng *r, int n) { return n <= 1 ? 0 : (int)(next_u64(r) % (uint64_t)n); }

/* ------------------------------------------------------------------ */
/* A materialized case                                                 */

struct world {
  struct spec sp;
  struct cluster *cl;
  int nRanks, channels;
  int *postRanks, nPost; /* ranks Postset runs on */
};

static void world_free(struct world *w) {
  cluster_free(w->cl);
  free(w->postRanks);
  memset(w, 0, sizeof *w);
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
  w->cl = cluster_new(sp->nodes, sizes);
  free(sizes);
  if (w->cl == NULL) return -1;
  w->nRanks = w->cl->nRanks;
  w->channels = sp->channels;
  int perm[NCCL_TOPO_MAX_NODES];
  for (int m = 0; m < sp->nodes; m++) {
    struct ncclTopoGraph *g = w->cl->graphs[m];
    int L = w->cl->localRanks[m];
    int nc = sp->channels < 1 ? 1 : sp->channels > MAXCHANNELS ? MAXCHANNELS : sp->channels;
    for (int c = 0; c < nc && c * L + L <= NCCOM_RING_MAX_INTRA; c++) {
      for (int i = 0; i < L; i++) perm[i] = i;
      for (int i = L - 1; i > 0; i--) {
        int j = below(&r, i + 1), t = perm[i];
        perm[i] = perm[j];
        perm[j] = t;
      }
      for (int i = 0; i < L; i++) g->intra[c * L + i] = w->cl->firstRank[m] + perm[i];
      g->inter[2 * c] = below(&r, 9) - 1;
      g->inter[2 * c + 1] = below(&r, 9) - 1;
    }
    g->nChannels = sp->channels;
    g->crossracktorack = below(&r, 3);
  }
  w->cl->enablePod = sp->pod;

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

static void set_platform(const struct spec *sp) {
  hookSwitchV1 = sp->platform != 0;
  hookVcore = sp->platform == 2 ? 1 : 0;
  hookJbogMode = sp->platform == 3;
}

/* ------------------------------------------------------------------ */
/* Comparison                                                          */

static int realMode;
static int silent;       /* shrinking: do not print differences */
static char diffText[2048];

__attribute__((format(printf, 1, 2))) static int differ(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(diffText, sizeof diffText, fmt, ap);
  va_end(ap);
  return 1;
}

/* Names the communicator member at a byte offset, for difference reports. */
static void comm_field(size_t off, char *out, size_t size) {
  size_t chan = sizeof(struct ncclChannel);
  if (off < MAXCHANNELS * chan) {
    size_t in = off % chan;
    snprintf(out, size, "channels[%zu].%s", off / chan,
             in < 4 ? "ring.prev" : in < 8 ? "ring.next" : in < 16 ? "ring.userRanks" : in < 24 ? "ring.devUserRanks" : "opaque");
  } else if (off < offsetof(struct ncclComm, kangaRing)) {
    snprintf(out, size, "nKangaRingChannels");
  } else if (off < offsetof(struct ncclComm, nMlaInCycle)) {
    size_t i = (off - offsetof(struct ncclComm, kangaRing)) / 4;
    snprintf(out, size, "kangaRing[%zu][%zu]", i / 64, i % 64);
  } else {
    static const struct { size_t off; const char *name; } f[] = {
        {offsetof(struct ncclComm, topo), "topo"},     {offsetof(struct ncclComm, rank), "rank"},
        {offsetof(struct ncclComm, nRanks), "nRanks"}, {offsetof(struct ncclComm, node), "node"},
        {offsetof(struct ncclComm, nNodes), "nNodes"}, {offsetof(struct ncclComm, localRanks), "localRanks"},
        {offsetof(struct ncclComm, nChannels), "nChannels"}, {offsetof(struct ncclComm, enablePod), "enablePod"}};
    for (size_t i = 0; i < sizeof f / sizeof f[0]; i++)
      if (off >= f[i].off && off < f[i].off + 4) {
        snprintf(out, size, "%s", f[i].name);
        return;
      }
    snprintf(out, size, "padding");
  }
}

struct outcome {
  ncclResult_t res;
  char warn[1024];
};

static int compare_outcome(const char *call, int rank, const struct outcome *a, const struct outcome *b) {
  if (a->res != b->res)
    return differ("%s on rank %d: candidate returned %d, reference %d\n  candidate WARN: %s  reference WARN: %s", call,
                  rank, (int)a->res, (int)b->res, a->warn[0] ? a->warn : "(none)\n", b->warn[0] ? b->warn : "(none)\n");
  if (realMode && !(spec_string(a->warn) || spec_string(b->warn))) return 0;
  if (strcmp(a->warn, b->warn) != 0)
    return differ("%s on rank %d (both returned %d): WARN differs\n  candidate: %s  reference: %s", call, rank,
                  (int)a->res, a->warn[0] ? a->warn : "(none)\n", b->warn[0] ? b->warn : "(none)\n");
  return 0;
}

static int compare_bytes(const char *call, int rank, const char *what, const void *a, const void *b, size_t n) {
  const unsigned char *x = a, *y = b;
  for (size_t i = 0; i < n; i++)
    if (x[i] != y[i])
      return differ("%s on rank %d: %s byte %zu: candidate 0x%02x, reference 0x%02x", call, rank, what, i, x[i], y[i]);
  return 0;
}

/* Compares two communicators: userRanks pointers by role (NULL, the
 * caller's buffer, or the library's) and contents; every other byte as is. */
static int compare_comms(const char *call, int rank, const struct ncclComm *a, const struct ncclComm *b,
                         int *const *bufsA, int *const *bufsB) {
  if (a->nRanks != b->nRanks) return differ("%s on rank %d: comm->nRanks candidate %d, reference %d", call, rank, a->nRanks, b->nRanks);
  int nRanks = a->nRanks; /* userRanks buffers hold comm->nRanks ints (D12) */
  for (int ch = 0; ch < MAXCHANNELS; ch++) {
    const int *ua = a->channels[ch].ring.userRanks, *ub = b->channels[ch].ring.userRanks;
    int roleA = ua == NULL ? 0 : bufsA && ua == bufsA[ch] ? 1 : 2;
    int roleB = ub == NULL ? 0 : bufsB && ub == bufsB[ch] ? 1 : 2;
    static const char *roles[] = {"NULL", "the caller's buffer", "a new buffer"};
    if (roleA != roleB)
      return differ("%s on rank %d: channels[%d].ring.userRanks is %s in the candidate, %s in the reference", call,
                    rank, ch, roles[roleA], roles[roleB]);
    if (ua && memcmp(ua, ub, (size_t)nRanks * sizeof(int)) != 0) {
      for (int i = 0; i < nRanks; i++)
        if (ua[i] != ub[i])
          return differ("%s on rank %d: channels[%d].ring.userRanks[%d]: candidate %d, reference %d", call, rank, ch,
                        i, ua[i], ub[i]);
    }
  }
  if (memcmp(a, b, sizeof *a) == 0) return 0; /* the common case: identical, pointers included */
  static struct ncclComm ca, cb;
  memcpy(&ca, a, sizeof ca);
  memcpy(&cb, b, sizeof cb);
  for (int ch = 0; ch < MAXCHANNELS; ch++) ca.channels[ch].ring.userRanks = cb.channels[ch].ring.userRanks = NULL;
  const unsigned char *x = (const unsigned char *)&ca, *y = (const unsigned char *)&cb;
  for (size_t i = 0; i < sizeof ca; i++) {
    if (x[i] != y[i]) {
      char name[64];
      comm_field(i, name, sizeof name);
      size_t base = i & ~(size_t)3;
      int va, vb;
      memcpy(&va, x + base, 4);
      memcpy(&vb, y + base, 4);
      return differ("%s on rank %d: comm byte %zu (%s): candidate %d, reference %d", call, rank, i, name, va, vb);
    }
  }
  return 0;
}

static void free_lib_bufs(struct ncclComm *c, int *const *callerBufs) {
  for (int ch = 0; ch < MAXCHANNELS; ch++) {
    int *u = c->channels[ch].ring.userRanks;
    if (u && !(callerBufs && u == callerBufs[ch])) free(u);
    if (callerBufs) free(callerBufs[ch]);
  }
}

/* ------------------------------------------------------------------ */
/* Running one case                                                    */

static struct ncclComm *commA, *commB;

/* Every call is followed by a drain, so the pipe is empty when the next
 * begins. */
static void call_begin(const char *call, int lib) {
  currentCall = call;
  currentLib = lib;
}

static void call_end(struct outcome *o) {
  char raw[4096];
  drain(raw, sizeof raw);
  warn_text(raw, o->warn, sizeof o->warn);
  currentLib = -1;
}

static int run_preset(const struct world *w, int lib, int rank, struct ncclComm *c, int **bufs,
                      struct ncclTopoRanks *frag, struct outcome *o) {
  static struct ncclTopoGraph scratch;
  /* The libraries take a non-const graph; neither writes it (spec §2). */
  struct ncclTopoGraph *g = (struct ncclTopoGraph *)(uintptr_t)graph_for(w, rank, &scratch);
  comm_init(w, rank, c, bufs);
  memset(frag, 0xA5, sizeof *frag);
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

/* Runs one case through both libraries. Returns 1 on the first difference
 * (described in diffText), 0 when they agree. */
static int run_case(const struct spec *sp) {
  struct world w;
  currentSpec = sp;
  if (world_build(sp, &w) != 0) {
    world_free(&w);
    return differ("harness out of memory building the case");
  }
  set_platform(sp);
  int n = w.nRanks, d = 0;
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
   * candidate's fragment stands for both (Postset still gets equal input). */
  for (int r = 0; r < n && !d; r++) {
    struct outcome o[2];
    struct ncclComm *c[2] = {commA, commB};
    int m = cluster_node_of(w.cl, r), local = r - w.cl->firstRank[m], L = w.cl->localRanks[m];
    int compare = L <= 32 || local < 4 || local == L - 1 || r == fault_rank(&w);
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
    d = compare_outcome("ncclTopoPreset", r, &o[0], &o[1]) ||
        compare_bytes("ncclTopoPreset", r, "fragment", &frags[0][r], &frags[1][r], sizeof(struct ncclTopoRanks)) ||
        compare_comms("ncclTopoPreset", r, commA, commB, NULL, NULL);
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
  world_free(&w);
  currentSpec = NULL;
  return d;
}

/* ------------------------------------------------------------------ */
/* Case generation, printing, parsing, shrinking                      */

static const char *faultNames[F_COUNT] = {
    "F_NONE",      "F_INTRA_VALUE", "F_INTRA_DUP", "F_NCHANNELS", "F_LOCALRANKS", "F_KANGA_COUNT",
    "F_RANK",      "F_NRANKS",      "F_NULL_GRAPH", "F_FRAG_RECV", "F_FRAG_SEND",  "F_FRAG_PREV",
    "F_FRAG_NEXT", "F_FRAG_NULL",   "F_FRAG_SWAP", "F_COMM_NCHANNELS"};

static void print_spec(FILE *f, const struct spec *s) {
  fprintf(f, "{.seed = 0x%llxULL, .nodes = %d, .local = %d, .channels = %d", s->seed, s->nodes, s->local,
          s->channels);
  if (s->unequal) fprintf(f, ", .unequal = 1");
  if (s->platform) fprintf(f, ", .platform = %d", s->platform);
  if (s->kanga) fprintf(f, ", .kanga = %d", s->kanga);
  if (s->pod) fprintf(f, ", .pod = %d", s->pod);
  if (s->userBufs) fprintf(f, ", .userBufs = 1");
  if (s->fault)
    fprintf(f, ", .fault = %s, .faultRank = %d, .faultChannel = %d, .faultValue = %d", faultNames[s->fault],
            s->faultRank, s->faultChannel, s->faultValue);
  if (s->postRanks) fprintf(f, ", .postRanks = %d", s->postRanks);
  fprintf(f, "},\n");
}

/* Parses what print_spec prints (braces, commas and "ULL" optional). */
static int parse_spec(const char *text, struct spec *s) {
  memset(s, 0, sizeof *s);
  char buf[1024];
  snprintf(buf, sizeof buf, "%s", text);
  char *save = NULL;
  for (char *tok = strtok_r(buf, ",{}", &save); tok; tok = strtok_r(NULL, ",{}", &save)) {
    char name[32], value[64];
    if (sscanf(tok, " .%31[a-zA-Z] = %63s", name, value) != 2) {
      if (strspn(tok, " \t\n") == strlen(tok)) continue;
      return -1;
    }
    long long v = 0;
    int found = 0;
    for (int i = 0; i < F_COUNT; i++)
      if (strcmp(value, faultNames[i]) == 0) v = i, found = 1;
    if (!found && strncmp(value, "F_", 2) == 0) return -1; /* an unknown fault name */
    if (!found) {
      char *end;
      v = strtoll(value, &end, 0);
      if (*end != '\0' && strcmp(end, "ULL") != 0) return -1;
    }
#define FIELD(F) else if (strcmp(name, #F) == 0) s->F = (int)v;
    if (strcmp(name, "seed") == 0) s->seed = strtoull(value, NULL, 0);
    FIELD(nodes) FIELD(local) FIELD(unequal) FIELD(channels) FIELD(platform) FIELD(kanga) FIELD(pod)
    FIELD(userBufs) FIELD(fault) FIELD(faultRank) FIELD(faultChannel) FIELD(faultValue) FIELD(postRanks)
    else return -1;
#undef FIELD
  }
  /* The ranges the generator and the harness's buffers are built for. */
  if (s->nodes < 1 || s->nodes > 64 || s->local < 1 || s->local > NCCL_TOPO_MAX_NODES || s->channels < 1 ||
      s->channels > MAXCHANNELS || s->platform < 0 || s->platform > 3 || s->kanga < -1 || s->kanga > 5 ||
      s->fault < 0 || s->fault >= F_COUNT || s->faultRank < 0 || s->faultChannel < 0 || s->postRanks < 0 ||
      (s->fault == F_NRANKS && s->faultValue > 1 << 20))
    return -1;
  return 0;
}

/* A random valid-looking cluster, small most of the time, with faults now
 * and then. */
static void random_spec(uint64_t seed, struct spec *s) {
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
  if (realMode) return;
  p = below(&r, 100);
  s->platform = p < 80 ? 0 : p < 94 ? 1 : p < 97 ? 2 : 3;
  s->kanga = s->platform ? below(&r, 5) : below(&r, 10) == 0 ? below(&r, 5) : 0;
  s->pod = below(&r, 25) == 0;
  if (below(&r, 100) < 25) {
    s->fault = 1 + below(&r, F_COUNT - 1);
    s->faultRank = below(&r, nRanks > 0 ? nRanks : 1);
    s->faultChannel = below(&r, 32);
    static const int values[] = {-2, -1, 0, 1, 5, 32, 33, 257};
    s->faultValue = below(&r, 3) == 0 ? values[below(&r, 8)] : below(&r, nRanks + 2) - 1;
  }
}

/* How big a case is: shrinking only ever moves to a strictly smaller one,
 * so it ends. */
static long long spec_size(const struct spec *s) {
  long long v = s->faultValue < 0 ? -(long long)s->faultValue : s->faultValue;
  return ((long long)s->nodes * s->local * s->channels) * 1000000 + (long long)s->faultRank * 1000 +
         s->faultChannel * 100 + v * 10 + s->unequal + s->platform + s->kanga + s->pod + s->userBufs +
         (s->fault != 0) + (s->postRanks != 1);
}

/* Greedy shrinking: keep any smaller case that still differs. */
static void shrink(struct spec *s) {
  silent = 1;
  for (int progress = 1; progress;) {
    progress = 0;
    struct spec tries[48];
    int n = 0;
#define TRY(FIELD, VALUE)                         \
  if (s->FIELD != (VALUE)) {                      \
    tries[n] = *s;                                \
    tries[n].FIELD = (VALUE);                     \
    n++;                                          \
  }
    TRY(nodes, 1) TRY(nodes, s->nodes / 2 > 0 ? s->nodes / 2 : 1) TRY(nodes, s->nodes > 1 ? s->nodes - 1 : 1)
    TRY(local, 1) TRY(local, s->local / 2 > 0 ? s->local / 2 : 1) TRY(local, s->local > 1 ? s->local - 1 : 1)
    TRY(channels, 1) TRY(channels, s->channels / 2 > 0 ? s->channels / 2 : 1)
    TRY(channels, s->channels > 1 ? s->channels - 1 : 1)
    TRY(unequal, 0) TRY(platform, 0) TRY(kanga, 0) TRY(kanga, s->kanga > 1 ? s->kanga - 1 : 0)
    TRY(pod, 0) TRY(userBufs, 0) TRY(fault, 0)
    /* fault coordinates: into the shrunk cluster, then toward 0 */
    TRY(faultRank, s->faultRank % (s->nodes * s->local)) TRY(faultRank, s->faultRank / 2) TRY(faultRank, 0)
    TRY(faultChannel, s->faultChannel % s->channels) TRY(faultChannel, 0)
    TRY(faultValue, 0) TRY(faultValue, -1) TRY(faultValue, s->faultValue / 2) TRY(postRanks, 1)
#undef TRY
    for (int i = 0; i < n && !progress; i++) {
      if (spec_size(&tries[i]) < spec_size(s) && run_case(&tries[i])) {
        *s = tries[i];
        progress = 1;
      }
    }
  }
  silent = 0;
}

/* ------------------------------------------------------------------ */

static int null_argument_calls(void) {
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
  free(g);
  return d;
}

static void usage(FILE *f, int status) {
  fputs("usage: conformance [--candidate LIB] [--reference LIB] [--seed S] [--count N]\n"
        "                   [--case 'SPEC'] [--real]\n"
        "  LIB paths default to libnccomring.so and libnccomref.so beside this program\n"
        "  (--reference defaults to $NCCOM_REF_LIB when set)\n",
        f);
  exit(status);
}

/* A whole unsigned number in base 10 or 0x16, or exit 2. */
static unsigned long long number_arg(const char *flag, const char *v, unsigned long long max) {
  char *end;
  errno = 0;
  unsigned long long x = strtoull(v, &end, 0);
  if (*v == '\0' || *v == '-' || *end != '\0' || errno != 0 || x > max) {
    fprintf(stderr, "conformance: %s wants a number in [0, %llu], got '%s'\n", flag, max, v);
    exit(2);
  }
  return x;
}

/* path beside this program's own file, so runs from any directory find the
 * build artifacts. */
static const char *beside_me(const char *name) {
  static char buf[2][4096];
  static int k;
  char exe[4096];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n <= 0) return name;
  exe[n] = '\0';
  char *slash = strrchr(exe, '/');
  if (slash == NULL) return name;
  *slash = '\0';
  char *out = buf[k++ % 2];
  if ((size_t)snprintf(out, sizeof buf[0], "%.3000s/%s", exe, name) >= sizeof buf[0]) return name;
  return out;
}

int main(int argc, char **argv) {
  setvbuf(stdout, NULL, _IOLBF, 0); /* nothing lost if a library crashes the run */
  const char *ref = getenv("NCCOM_REF_LIB");
  libs[0].path = beside_me("libnccomring.so");
  libs[1].path = ref && ref[0] ? ref : beside_me("libnccomref.so");
  uint64_t seed = (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32);
  long count = 20000;
  const char *oneCase = NULL;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--candidate") == 0 && i + 1 < argc) libs[0].path = argv[++i];
    else if (strcmp(argv[i], "--reference") == 0 && i + 1 < argc) libs[1].path = argv[++i];
    else if (strcmp(argv[i], "--seed") == 0 && i + 1 < argc) seed = number_arg("--seed", argv[++i], ~0ULL);
    else if (strcmp(argv[i], "--count") == 0 && i + 1 < argc) count = (long)number_arg("--count", argv[++i], 100000000);
    else if (strcmp(argv[i], "--case") == 0 && i + 1 < argc) oneCase = argv[++i];
    else if (strcmp(argv[i], "--real") == 0) realMode = 1;
    else if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) usage(stdout, 0);
    else usage(stderr, 2);
  }

  /* Crash reporting first: the Go runtime chains to handlers installed
   * before it loads. */
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_crash;
  sa.sa_flags = SA_ONSTACK;
  sigaction(SIGSEGV, &sa, NULL);
  sigaction(SIGBUS, &sa, NULL);
  sigaction(SIGFPE, &sa, NULL);
  sigaction(SIGABRT, &sa, NULL);

  if (pipe(warnPipe) != 0 || fcntl(warnPipe[0], F_SETFL, O_NONBLOCK) != 0) {
    perror("conformance: pipe");
    return 2;
  }
  fcntl(warnPipe[1], F_SETFL, O_NONBLOCK);
  char path[64];
  snprintf(path, sizeof path, "/proc/self/fd/%d", warnPipe[1]);
  setenv("NCCL_DEBUG", "WARN", 1);
  setenv("NCCL_DEBUG_FILE", path, 1);
  unsetenv("NCCL_DEBUG_SUBSYS");
  unsetenv("NCCOM_RING_PLATFORM");
  unsetenv("NCCOM_RING_POD_ORDER");

  load(&libs[0]);
  load(&libs[1]);
  commA = calloc(1, sizeof *commA);
  commB = calloc(1, sizeof *commB);
  printf("conformance: candidate %s%s\nconformance: reference %s%s%s\n", libs[0].path,
         libs[0].mangled ? " (C++ names)" : "", libs[1].path, libs[1].mangled ? " (C++ names)" : "",
         realMode ? " (--real: fault-free generic clusters, spec strings only)" : "");

  const struct spec regressions[] = {
#include "regressions.inc"
  };
  struct spec one;
  long cases = 0, random = 0;
  int failed = 0;
  struct spec failing;
  clock_t t0 = clock();

  if (oneCase) {
    if (parse_spec(oneCase, &one) != 0) {
      fprintf(stderr, "conformance: cannot parse --case '%s'\n", oneCase);
      return 2;
    }
    cases++;
    if (run_case(&one)) failing = one, failed = 1;
  } else {
    printf("conformance: seed 0x%llx (replay: %s --candidate %s --reference %s%s --seed 0x%llx --count %ld)\n",
           (unsigned long long)seed, argv[0], libs[0].path, libs[1].path, realMode ? " --real" : "",
           (unsigned long long)seed, count);
    if (null_argument_calls()) failed = 1, memset(&failing, 0, sizeof failing);
    for (size_t i = 0; i < sizeof regressions / sizeof regressions[0] && !failed; i++, cases++) {
      struct spec s = regressions[i];
      if (realMode) s.platform = s.kanga = s.pod = s.fault = 0;
      if (run_case(&s)) failing = s, failed = 1;
    }
    for (long i = 0; i < count && !failed; i++, cases++, random++) {
      struct spec s;
      random_spec(mix(seed + (uint64_t)i), &s);
      if (run_case(&s)) failing = s, failed = 1;
    }
  }
  double secs = (double)(clock() - t0) / CLOCKS_PER_SEC;

  if (failed) {
    printf("conformance: DIFFERENCE after %ld cases:\n  %s\n", cases, diffText);
    if (failing.nodes > 0) {
      printf("conformance: failing case: ");
      print_spec(stdout, &failing);
      shrink(&failing);
      run_case(&failing);
      printf("conformance: smallest reproducing case (paste into tests/c/conformance/regressions.inc):\n");
      print_spec(stdout, &failing);
      printf("conformance: its difference:\n  %s\n", diffText);
      printf("conformance: replay with: %s --candidate %s --reference %s%s --case '", argv[0], libs[0].path,
             libs[1].path, realMode ? " --real" : "");
      char buf[512];
      FILE *mem = fmemopen(buf, sizeof buf, "w");
      print_spec(mem, &failing);
      fclose(mem);
      buf[strcspn(buf, "\n")] = '\0';
      printf("%s'\n", buf);
    }
    return 1;
  }
  printf("conformance: %ld cases (%ld random) agree, 0 differences, %.1f s CPU\n", cases, random, secs);
  return 0;
}
