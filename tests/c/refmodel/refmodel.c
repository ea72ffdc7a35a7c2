/*
 * refmodel.c - independent plain-C reference model of the host-side ring stage
 * of libnccom 2.31.24 (ncclTopoPreset, ncclTopoPostset, ncclBuildRings,
 * ncclTopoGetNetDev).
 *
 * Written from docs/spec/ring-construction.txt, docs/spec/DECISIONS.md
 * (D1..D22), docs/errors.md (order of checks, result codes, WARN texts) and the
 * README's ABI notes (P1..P20) alone. It follows the algorithm shape of
 * upstream NVIDIA NCCL 2.8 as the spec describes it (fragment packing, flat
 * [c*nRanks + r] tables, connectRings-style stitch, quadratic ring membership
 * check) and is the conformance baseline, not an optimised implementation.
 *
 * Build (from the repository root):
 *   gcc -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -O2 -fPIC -shared \
 *     -Wl,--version-script=tests/c/refmodel/exports.map \
 *     -Wl,-soname,libnccomref.so -o build/libnccomref.so \
 *     tests/c/refmodel/refmodel.c -ldl -lpthread
 */
#include <ctype.h>
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>

#include "refmodel_layout.h"

#define REF_EXPORT __attribute__((visibility("default")))

/* Prototypes of the four exports (the spec's C ABI). */
REF_EXPORT ncclResult_t ncclTopoPreset(struct ncclComm *comm, struct ncclTopoGraph *graph,
                                       struct ncclTopoRanks *topoRanks);
REF_EXPORT ncclResult_t ncclTopoPostset(struct ncclComm *comm, int *nodesFirstRank,
                                        struct ncclTopoRanks **allTopoRanks, int *nChannels,
                                        int *nNodes);
REF_EXPORT ncclResult_t ncclBuildRings(int nrings, int *rings, int rank, int nranks, int *prev,
                                       int *next);
REF_EXPORT ncclResult_t ncclTopoGetNetDev(struct ncclTopoSystem *sys, int rank,
                                          struct ncclTopoGraph *graph, int channelId, int *dev);

/* ===================================================================== */
/* Logging (D21, P14, P15, errors.md "Environment")                       */
/* ===================================================================== */

enum { LOG_NONE = 0, LOG_VERSION = 1, LOG_WARN = 2, LOG_INFO = 3, LOG_ABORT = 4, LOG_TRACE = 5 };

/* Subsystem bits, NCCL's values. */
#define SUB_INIT 0x1ULL
#define SUB_COLL 0x2ULL
#define SUB_P2P 0x4ULL
#define SUB_SHM 0x8ULL
#define SUB_NET 0x10ULL
#define SUB_GRAPH 0x20ULL
#define SUB_TUNING 0x40ULL
#define SUB_ENV 0x80ULL
#define SUB_ALLOC 0x100ULL
#define SUB_CALL 0x200ULL
#define SUB_ALL (~0ULL)

static pthread_once_t g_dbg_once = PTHREAD_ONCE_INIT;
static int g_level = LOG_NONE;
static unsigned long long g_mask = SUB_INIT | SUB_ENV;
static FILE *g_out = NULL;
static char g_host[1024] = "unknown";
static pthread_mutex_t g_log_mu = PTHREAD_MUTEX_INITIALIZER;

/* Writes one complete line with one fwrite + fflush under the mutex. */
static void emit_line(const char *kind, int rank, const char *text) {
  char *line = NULL;
  int tid = (int)syscall(SYS_gettid);
  int len = asprintf(&line, "%s:%d:%d [%d] NCCL %s %s\n", g_host, (int)getpid(), tid, rank,
                     kind, text);
  if (len < 0 || line == NULL) return;
  FILE *out = g_out ? g_out : stdout;
  pthread_mutex_lock(&g_log_mu);
  fwrite(line, 1, (size_t)len, out);
  fflush(out);
  pthread_mutex_unlock(&g_log_mu);
  free(line);
}

static char *vformat(const char *fmt, va_list ap) {
  char *s = NULL;
  if (vasprintf(&s, fmt, ap) < 0) return NULL;
  return s;
}

static char *format(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *format(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  char *s = vformat(fmt, ap);
  va_end(ap);
  return s;
}

/* Pending environment warnings, collected while parsing and printed once the
 * output stream is known. */
#define MAX_PENDING 64
static char *g_pending[MAX_PENDING];
static int g_npending = 0;
static void pend(char *s) {
  if (s == NULL) return;
  if (g_npending < MAX_PENDING) g_pending[g_npending++] = s;
  else free(s);
}

struct subsys_name { const char *name; unsigned long long bit; };
static const struct subsys_name g_subsys[] = {
  {"INIT", SUB_INIT}, {"COLL", SUB_COLL}, {"P2P", SUB_P2P}, {"SHM", SUB_SHM},
  {"NET", SUB_NET}, {"GRAPH", SUB_GRAPH}, {"TUNING", SUB_TUNING}, {"ENV", SUB_ENV},
  {"ALLOC", SUB_ALLOC}, {"CALL", SUB_CALL}, {"ALL", SUB_ALL},
};

static void parse_subsys(const char *env) {
  const char *s = env;
  int invert = 0;
  if (*s == '^') { invert = 1; s++; }
  unsigned long long mask = 0;
  char *copy = strdup(s);
  if (copy == NULL) { g_mask = SUB_INIT | SUB_ENV; return; }
  char *save = NULL;
  for (char *tok = strtok_r(copy, ",", &save); tok != NULL; tok = strtok_r(NULL, ",", &save)) {
    int found = 0;
    for (size_t i = 0; i < sizeof(g_subsys) / sizeof(g_subsys[0]); i++) {
      if (strcasecmp(tok, g_subsys[i].name) == 0) { mask |= g_subsys[i].bit; found = 1; break; }
    }
    if (!found) pend(format("NCCL_DEBUG_SUBSYS: unknown subsystem %s ignored", tok));
  }
  free(copy);
  g_mask = invert ? ~mask : mask;
}

/* %h -> host name, %p -> pid, %% -> %, any other %x is kept as is. */
static char *expand_path(const char *p) {
  size_t cap = strlen(p) + 64, len = 0;
  char *out = malloc(cap);
  if (out == NULL) return NULL;
  for (const char *c = p; *c; c++) {
    char tmp[64];
    const char *add = NULL;
    size_t addlen = 0;
    if (c[0] == '%' && c[1] == 'h') { add = g_host; addlen = strlen(g_host); c++; }
    else if (c[0] == '%' && c[1] == 'p') {
      snprintf(tmp, sizeof tmp, "%d", (int)getpid());
      add = tmp; addlen = strlen(tmp); c++;
    } else if (c[0] == '%' && c[1] == '%') { add = "%"; addlen = 1; c++; }
    else { tmp[0] = *c; tmp[1] = 0; add = tmp; addlen = 1; }
    if (len + addlen + 1 > cap) {
      cap = (len + addlen + 1) * 2;
      char *n = realloc(out, cap);
      if (n == NULL) { free(out); return NULL; }
      out = n;
    }
    memcpy(out + len, add, addlen);
    len += addlen;
  }
  out[len] = 0;
  return out;
}

static void dbg_init_once(void) {
  if (gethostname(g_host, sizeof(g_host)) != 0) strcpy(g_host, "unknown");
  g_host[sizeof(g_host) - 1] = 0;
  char *dot = strchr(g_host, '.');
  if (dot) *dot = 0; /* NCCL prints the host name up to the first '.' */

  const char *lvl = getenv("NCCL_DEBUG");
  if (lvl == NULL || lvl[0] == '\0') g_level = LOG_NONE; /* empty is unset */
  else if (strcasecmp(lvl, "VERSION") == 0) g_level = LOG_VERSION;
  else if (strcasecmp(lvl, "WARN") == 0) g_level = LOG_WARN;
  else if (strcasecmp(lvl, "INFO") == 0) g_level = LOG_INFO;
  else if (strcasecmp(lvl, "ABORT") == 0) g_level = LOG_ABORT;
  else if (strcasecmp(lvl, "TRACE") == 0) g_level = LOG_TRACE;
  else {
    g_level = LOG_WARN;
    pend(format("NCCL_DEBUG=%s is not one of VERSION, WARN, INFO, ABORT, TRACE; using WARN", lvl));
  }
  g_out = stdout;
  if (g_level < LOG_WARN) return; /* nothing can be printed: no file is opened */

  const char *sub = getenv("NCCL_DEBUG_SUBSYS");
  if (sub == NULL || sub[0] == '\0') g_mask = SUB_INIT | SUB_ENV;
  else parse_subsys(sub);

  const char *file = getenv("NCCL_DEBUG_FILE");
  if (file != NULL && file[0] != '\0') {
    char *path = expand_path(file);
    if (path != NULL) {
      FILE *f = fopen(path, "w");
      if (f != NULL) g_out = f;
      else {
        int e = errno;
        pend(format("NCCL_DEBUG_FILE=%s cannot be opened (%s); logging to stdout", path, strerror(e)));
      }
      free(path);
    }
  }
  for (int i = 0; i < g_npending; i++) {
    emit_line("WARN", -1, g_pending[i]);
    free(g_pending[i]);
    g_pending[i] = NULL;
  }
  g_npending = 0;
}

static void dbg_init(void) { pthread_once(&g_dbg_once, dbg_init_once); }

static void ref_warn(int rank, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void ref_warn(int rank, const char *fmt, ...) {
  dbg_init();
  if (g_level < LOG_WARN) return;
  va_list ap;
  va_start(ap, fmt);
  char *text = vformat(fmt, ap);
  va_end(ap);
  if (text == NULL) return;
  emit_line("WARN", rank, text);
  free(text);
}

static int info_enabled(unsigned long long subsys) {
  dbg_init();
  return g_level >= LOG_INFO && (g_mask & subsys) != 0;
}

static void ref_info(unsigned long long subsys, int rank, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void ref_info(unsigned long long subsys, int rank, const char *fmt, ...) {
  if (!info_enabled(subsys)) return;
  va_list ap;
  va_start(ap, fmt);
  char *text = vformat(fmt, ap);
  va_end(ap);
  if (text == NULL) return;
  emit_line("INFO", rank, text);
  free(text);
}

/* ===================================================================== */
/* Platform (D14, P7, P18) and the pod-order switch (D15, P8)             */
/* ===================================================================== */

typedef bool (*family_fn_t)(void);      /* bool: only the low byte is defined */
typedef int (*vcore_fn_t)(void);
typedef int (*jbog_fn_t)(int);
typedef ncclResult_t (*localnet_fn_t)(struct ncclTopoSystem *, int, int *);

static pthread_once_t g_hooks_once = PTHREAD_ONCE_INIT;
static family_fn_t g_family_hook;
static vcore_fn_t g_vcore_hook;
static jbog_fn_t g_jbog_hook;

/* A host symbol by its C name, else by the name a C++ build without
 * extern "C" gives it (README P18). */
static void *host_dlsym(const char *name, const char *cxxName) {
  void *p = dlsym(RTLD_DEFAULT, name);
  return p ? p : dlsym(RTLD_DEFAULT, cxxName);
}

static void hooks_once(void) {
  void *p;
  p = host_dlsym("neuronIsTrn3SwitchV1Family", "_Z26neuronIsTrn3SwitchV1Familyv");
  memcpy(&g_family_hook, &p, sizeof p);
  p = host_dlsym("nec_get_virtual_core_size", "_Z25nec_get_virtual_core_sizev");
  memcpy(&g_vcore_hook, &p, sizeof p);
  p = host_dlsym("neuronTrnSwitchV1JbogId", "_Z23neuronTrnSwitchV1JbogIdi");
  memcpy(&g_jbog_hook, &p, sizeof p);
}

enum { PLAT_GENERIC = 0, PLAT_SWITCHV1 = 1, PLAT_UNKNOWN = -1 };
static pthread_once_t g_plat_env_once = PTHREAD_ONCE_INIT;
static int g_plat_env = PLAT_GENERIC;
static char *g_plat_env_value = NULL;
static atomic_int g_plat_warned = 0;

static void plat_env_once(void) {
  const char *v = getenv("NCCOM_RING_PLATFORM");
  if (v == NULL || v[0] == '\0' || strcasecmp(v, "generic") == 0) g_plat_env = PLAT_GENERIC;
  else if (strcasecmp(v, "trn3-switchv1") == 0) g_plat_env = PLAT_SWITCHV1;
  else {
    g_plat_env = PLAT_UNKNOWN;
    g_plat_env_value = strdup(v);
  }
}

/* Platform facts of one call. The host hooks, when present, are called on
 * every call (never cached); the environment is read once per process. */
struct platform {
  int switchv1;
  int from_host;
};

static ncclResult_t get_platform(const char *fn, int wrank, struct platform *pl) {
  pthread_once(&g_hooks_once, hooks_once);
  pl->from_host = 0;
  pl->switchv1 = 0;
  if (g_family_hook != NULL) {
    pl->from_host = 1;
    pl->switchv1 = g_family_hook() ? 1 : 0;
    return ncclSuccess;
  }
  pthread_once(&g_plat_env_once, plat_env_once);
  if (g_plat_env == PLAT_UNKNOWN) {
    if (atomic_exchange(&g_plat_warned, 1) == 0)
      ref_warn(wrank, "%s: NCCOM_RING_PLATFORM=%s is not one of generic, trn3-switchv1", fn,
               g_plat_env_value ? g_plat_env_value : "");
    return ncclInvalidUsage;
  }
  pl->switchv1 = (g_plat_env == PLAT_SWITCHV1);
  return ncclSuccess;
}

static int platform_vcore_size(const struct platform *pl) {
  if (pl->from_host && g_vcore_hook != NULL) return g_vcore_hook();
  return 0;
}

static int platform_jbog_id(const struct platform *pl, int rank) {
  if (pl->from_host && g_jbog_hook != NULL) return g_jbog_hook(rank);
  return 1;
}

static pthread_once_t g_pod_once = PTHREAD_ONCE_INIT;
static int g_pod_node = 0;
static void pod_once(void) {
  const char *v = getenv("NCCOM_RING_POD_ORDER");
  if (v == NULL || v[0] == '\0') { g_pod_node = 0; return; }
  if (strcasecmp(v, "node") == 0) { g_pod_node = 1; return; }
  g_pod_node = 0;
  ref_warn(-1, "NCCOM_RING_POD_ORDER=%s is not 'node'; pods are refused", v);
}

static pthread_once_t g_localnet_once = PTHREAD_ONCE_INIT;
static localnet_fn_t g_localnet;
static void localnet_once(void) {
  void *p = host_dlsym("ncclTopoGetLocalNet", "_Z19ncclTopoGetLocalNetP14ncclTopoSystemiPi");
  memcpy(&g_localnet, &p, sizeof p);
}

/* ===================================================================== */
/* Ring walk (D16, errors.md B6..B8) and Channel lines (D17, P11)         */
/* ===================================================================== */

/* Walks every ring into out[r*nranks ...] and validates it; writes only `out`
 * (scratch). Checks B6, B7, B8 in that order, ring by ring. */
static ncclResult_t build_rings_core(int nrings, int *out, int rank, int nranks, const int *next,
                                     int wrank) {
  for (int r = 0; r < nrings; r++) {
    int *ring = out + (size_t)r * (size_t)nranks;
    const int *nx = next + (size_t)r * (size_t)nranks;
    int cur = rank;
    for (int step = 0; step < nranks; step++) {
      ring[step] = cur;
      int v = nx[cur];
      if (v < 0 || v >= nranks) {
        ref_warn(wrank, "Error : ring %d: rank %d has next %d, outside [0, %d)", r, cur, v, nranks);
        return ncclInternalError;
      }
      cur = v;
    }
    if (cur != rank) {
      ref_warn(wrank, "Error : ring %d does not loop back to start (%d != %d)", r, cur, rank);
      return ncclInternalError;
    }
    /* Upstream shape on purpose: for each rank i, scan the ring (O(nranks^2)). */
    for (int i = 0; i < nranks; i++) {
      int found = 0;
      for (int j = 0; j < nranks; j++) {
        if (ring[j] == i) { found = 1; break; }
      }
      if (!found) {
        ref_warn(wrank, "Error : ring %d does not contain rank %d", r, i);
        return ncclInternalError;
      }
    }
  }
  return ncclSuccess;
}

#define CHANNEL_LINE_MAX 4096

static void print_channel_lines(int wrank, int nrings, const int *rings, int nranks) {
  if (!info_enabled(SUB_INIT)) return;
  for (int r = 0; r < nrings; r++) {
    const int *ring = rings + (size_t)r * (size_t)nranks;
    char buf[CHANNEL_LINE_MAX + 64];
    int len = snprintf(buf, sizeof buf, "Channel %02d/%02d : ", r, nrings);
    int truncated = 0;
    for (int i = 0; i < nranks; i++) {
      /* ranks are appended while the line is shorter than 4096 characters;
       * if any remain then, " ..." ends it (P11) */
      if (len >= CHANNEL_LINE_MAX) {
        truncated = 1;
        break;
      }
      len += snprintf(buf + len, sizeof buf - (size_t)len, " %3d", ring[i]);
    }
    if (truncated) {
      memcpy(buf + len, " ...", 4);
      len += 4;
    }
    buf[len] = 0;
    ref_info(SUB_INIT, wrank, "%s", buf);
  }
}

/* ===================================================================== */
/* ncclBuildRings (D16, D17, P9; errors.md B1..B8)                        */
/* ===================================================================== */

REF_EXPORT ncclResult_t ncclBuildRings(int nrings, int *rings, int rank, int nranks, int *prev,
                                       int *next) {
  (void)prev; /* never read (D16, P9) */
  dbg_init();
  if (rings == NULL) { ref_warn(rank, "ncclBuildRings: rings is NULL"); return ncclInvalidArgument; }
  if (next == NULL) { ref_warn(rank, "ncclBuildRings: next is NULL"); return ncclInvalidArgument; }
  if (nrings < 0 || nrings > REF_MAXCHANNELS) {
    ref_warn(rank, "ncclBuildRings: nrings %d is outside [0, 32]", nrings);
    return ncclInvalidArgument;
  }
  if (nranks <= 0) {
    ref_warn(rank, "ncclBuildRings: nranks %d is not positive", nranks);
    return ncclInvalidArgument;
  }
  if (rank < 0 || rank >= nranks) {
    ref_warn(rank, "ncclBuildRings: rank %d is outside [0, %d)", rank, nranks);
    return ncclInvalidArgument;
  }
  if (nrings == 0) return ncclSuccess;

  size_t bytes = (size_t)nrings * (size_t)nranks * sizeof(int);
  int *scratch = malloc(bytes);
  if (scratch == NULL) {
    ref_warn(rank, "ncclBuildRings: malloc of %zu bytes of scratch failed", bytes);
    return ncclSystemError;
  }
  ncclResult_t res = build_rings_core(nrings, scratch, rank, nranks, next, rank);
  if (res != ncclSuccess) { free(scratch); return res; }
  memcpy(rings, scratch, bytes); /* all rings checked: commit */
  if (rank == 0) print_channel_lines(rank, nrings, scratch, nranks);
  free(scratch);
  return ncclSuccess;
}

/* ===================================================================== */
/* ncclTopoPreset (D4..D7; errors.md S1..S13)                             */
/* ===================================================================== */

REF_EXPORT ncclResult_t ncclTopoPreset(struct ncclComm *comm, struct ncclTopoGraph *graph,
                                       struct ncclTopoRanks *topoRanks) {
  dbg_init();
  if (comm == NULL) { ref_warn(-1, "ncclTopoPreset: comm is NULL"); return ncclInvalidArgument; }
  const int rank = comm->rank;
  if (graph == NULL) { ref_warn(rank, "ncclTopoPreset: graph is NULL"); return ncclInvalidArgument; }
  if (topoRanks == NULL) {
    ref_warn(rank, "ncclTopoPreset: topoRanks is NULL");
    return ncclInvalidArgument;
  }
  const int N = comm->nRanks;
  const int L = comm->localRanks;
  const int n = graph->nChannels;
  const int nK = comm->nKangaRingChannels;
  if (N <= 0) {
    ref_warn(rank, "ncclTopoPreset: comm->nRanks %d is not positive", N);
    return ncclInvalidArgument;
  }
  if (rank < 0 || rank >= N) {
    ref_warn(rank, "ncclTopoPreset: comm->rank %d is outside [0, %d)", rank, N);
    return ncclInvalidArgument;
  }
  if (L < 1 || L > REF_TOPO_MAX_NODES) {
    ref_warn(rank, "ncclTopoPreset: comm->localRanks %d is outside [1, 256]", L);
    return ncclInvalidArgument;
  }
  if (n < 1 || n > REF_MAXCHANNELS) {
    ref_warn(rank, "ncclTopoPreset: graph->nChannels %d is outside [1, 32]", n);
    return ncclInvalidArgument;
  }
  if (n * L > REF_INTRA_ENTRIES) { /* unreachable after S6/S7 (32*256 == 8192), kept for order */
    ref_warn(rank,
             "ncclTopoPreset: graph->nChannels %d x comm->localRanks %d = %d exceeds the 8192 "
             "entries of graph->intra",
             n, L, n * L);
    return ncclInvalidArgument;
  }
  if (nK < 0 || nK > REF_MAX_KANGA_PATHS) {
    ref_warn(rank, "ncclTopoPreset: comm->nKangaRingChannels %d is outside [0, 4]", nK);
    return ncclInvalidArgument;
  }
  struct platform pl;
  ncclResult_t pres = get_platform("ncclTopoPreset", rank, &pl);
  if (pres != ncclSuccess) return pres;

  /* Compute into scratch (small: on the stack). */
  int recv[REF_MAXCHANNELS], send[REF_MAXCHANNELS], prv[REF_MAXCHANNELS], nxt[REF_MAXCHANNELS];
  for (int c = 0; c < n; c++) {
    const int *slice = &graph->intra[c * L];
    int pos = -1;
    for (int i = 0; i < L; i++) {
      int v = slice[i];
      if (v < 0 || v >= N) {
        ref_warn(rank,
                 "ncclTopoPreset: graph->intra[%d] (channel %d, position %d) is %d, outside [0, %d)",
                 c * L + i, c, i, v, N);
        return ncclInvalidArgument;
      }
      for (int j = 0; j < i; j++) {
        if (slice[j] == v) {
          ref_warn(rank, "ncclTopoPreset: channel %d lists rank %d twice (positions %d and %d)", c,
                   v, j, i);
          return ncclInvalidArgument;
        }
      }
      if (v == rank) pos = i;
    }
    if (pos < 0) {
      ref_warn(rank, "ncclTopoPreset: rank %d is not in channel %d's intra order", rank, c);
      return ncclInvalidArgument;
    }
    recv[c] = slice[0];
    send[c] = slice[L - 1];
    prv[c] = pos > 0 ? slice[pos - 1] : -1;
    nxt[c] = pos < L - 1 ? slice[pos + 1] : -1;
  }

  /* Commit. */
  for (int c = 0; c < n; c++) {
    topoRanks->ringRecv[c] = recv[c];
    topoRanks->ringSend[c] = send[c];
    topoRanks->ringPrev[c] = prv[c];
    topoRanks->ringNext[c] = nxt[c];
    comm->channels[c].ring.prev = prv[c];
    comm->channels[c].ring.next = nxt[c];
  }
  /* D6: channels [n, min(2n,32)) become copies of [0, ...), keeping their own
   * userRanks/devUserRanks pointers. */
  int nEnd = 2 * n < REF_MAXCHANNELS ? 2 * n : REF_MAXCHANNELS;
  for (int d = n; d < nEnd; d++) {
    struct ncclChannel *dst = &comm->channels[d];
    int *ur = dst->ring.userRanks;
    int *dur = dst->ring.devUserRanks;
    memcpy(dst, &comm->channels[d - n], sizeof(struct ncclChannel));
    dst->ring.userRanks = ur;
    dst->ring.devUserRanks = dur;
  }
  /* D7: kangaRing fragment on TRN3-SwitchV1 only. */
  if (pl.switchv1 && nK > 0) {
    for (int k = 0; k < nK; k++)
      memcpy(topoRanks->JbogKangaringPath[k], comm->kangaRing[k], 4 * sizeof(int));
  }
  comm->nChannels = n; /* D4 */
  return ncclSuccess;
}

/* ===================================================================== */
/* ncclTopoPostset (D8..D15; errors.md P1..P16)                           */
/* ===================================================================== */

struct postset_scratch {
  int *headNode;   /* [N]: node index of a head rank, -1 when not seen (the D8 map) */
  int *firsts;     /* [N]: nodesFirstRank being built */
  int *ringRecv;   /* [n*N] */
  int *ringSend;   /* [n*N] */
  int *ringPrev;   /* [nFinal*N], stitched in place */
  int *ringNext;   /* [nFinal*N], stitched in place */
  int *rings;      /* [nFinal*N] */
};

static void postset_free(struct postset_scratch *s) {
  free(s->headNode);
  free(s->firsts);
  free(s->ringRecv);
  free(s->ringSend);
  free(s->ringPrev);
  free(s->ringNext);
  free(s->rings);
}

static int *scratch_alloc(size_t count, int wrank, ncclResult_t *res) {
  size_t bytes = count * sizeof(int);
  int *p = malloc(bytes ? bytes : 1);
  if (p == NULL) {
    ref_warn(wrank, "ncclTopoPostset: malloc of %zu bytes of scratch failed", bytes);
    *res = ncclSystemError;
  }
  return p;
}

REF_EXPORT ncclResult_t ncclTopoPostset(struct ncclComm *comm, int *nodesFirstRank,
                                        struct ncclTopoRanks **allTopoRanks, int *nChannels,
                                        int *nNodes) {
  dbg_init();
  if (comm == NULL) { ref_warn(-1, "ncclTopoPostset: comm is NULL"); return ncclInvalidArgument; }
  const int rank = comm->rank;
  if (nodesFirstRank == NULL) {
    ref_warn(rank, "ncclTopoPostset: nodesFirstRank is NULL");
    return ncclInvalidArgument;
  }
  if (allTopoRanks == NULL) {
    ref_warn(rank, "ncclTopoPostset: allTopoRanks is NULL");
    return ncclInvalidArgument;
  }
  if (nChannels == NULL) {
    ref_warn(rank, "ncclTopoPostset: nChannels is NULL");
    return ncclInvalidArgument;
  }
  if (nNodes == NULL) { ref_warn(rank, "ncclTopoPostset: nNodes is NULL"); return ncclInvalidArgument; }
  const int N = comm->nRanks;
  const int n = comm->nChannels;
  const int nK = comm->nKangaRingChannels;
  if (N <= 0) {
    ref_warn(rank, "ncclTopoPostset: comm->nRanks %d is not positive", N);
    return ncclInvalidArgument;
  }
  if (rank < 0 || rank >= N) {
    ref_warn(rank, "ncclTopoPostset: comm->rank %d is outside [0, %d)", rank, N);
    return ncclInvalidArgument;
  }
  if (n < 1 || n > REF_MAXCHANNELS) {
    ref_warn(rank, "ncclTopoPostset: comm->nChannels %d is outside [1, 32] (call ncclTopoPreset first)",
             n);
    return ncclInvalidArgument;
  }
  if (nK < 0 || nK > REF_MAX_KANGA_PATHS) {
    ref_warn(rank, "ncclTopoPostset: comm->nKangaRingChannels %d is outside [0, 4]", nK);
    return ncclInvalidArgument;
  }
  struct platform pl;
  ncclResult_t res = get_platform("ncclTopoPostset", rank, &pl);
  if (res != ncclSuccess) return res;

  struct ncclTopoRanks **F = allTopoRanks;
  /* Pass A */
  for (int r = 0; r < N; r++) {
    if (F[r] == NULL) {
      ref_warn(rank, "ncclTopoPostset: allTopoRanks[%d] is NULL", r);
      return ncclInvalidArgument;
    }
  }

  struct postset_scratch s;
  memset(&s, 0, sizeof s);
  res = ncclSuccess;
  s.headNode = scratch_alloc((size_t)N, rank, &res);
  if (res == ncclSuccess) s.firsts = scratch_alloc((size_t)N, rank, &res);
  if (res != ncclSuccess) { postset_free(&s); return res; }
  for (int i = 0; i < N; i++) s.headNode[i] = -1;

  /* Pass B: ranges, then node membership and agreement (D8, D11). */
  int M = 0;
  for (int r = 0; r < N; r++) {
    const struct ncclTopoRanks *T = F[r];
    for (int c = 0; c < n; c++) {
      if (T->ringRecv[c] < 0 || T->ringRecv[c] >= N) {
        ref_warn(rank, "ncclTopoPostset: allTopoRanks[%d]->ringRecv[%d] is %d, outside [0, %d)", r,
                 c, T->ringRecv[c], N);
        postset_free(&s);
        return ncclInvalidArgument;
      }
      if (T->ringSend[c] < 0 || T->ringSend[c] >= N) {
        ref_warn(rank, "ncclTopoPostset: allTopoRanks[%d]->ringSend[%d] is %d, outside [0, %d)", r,
                 c, T->ringSend[c], N);
        postset_free(&s);
        return ncclInvalidArgument;
      }
      if (T->ringPrev[c] < -1 || T->ringPrev[c] >= N) {
        ref_warn(rank, "ncclTopoPostset: allTopoRanks[%d]->ringPrev[%d] is %d, outside [-1, %d)", r,
                 c, T->ringPrev[c], N);
        postset_free(&s);
        return ncclInvalidArgument;
      }
      if (T->ringNext[c] < -1 || T->ringNext[c] >= N) {
        ref_warn(rank, "ncclTopoPostset: allTopoRanks[%d]->ringNext[%d] is %d, outside [-1, %d)", r,
                 c, T->ringNext[c], N);
        postset_free(&s);
        return ncclInvalidArgument;
      }
    }
    int h = T->ringRecv[0];
    int m = s.headNode[h];
    if (m < 0) {
      m = M++;
      s.headNode[h] = m;
      s.firsts[m] = h;
    }
    const struct ncclTopoRanks *H = F[h];
    for (int c = 0; c < n; c++) {
      if (T->ringRecv[c] != H->ringRecv[c]) {
        ref_warn(rank,
                 "ncclTopoPostset: rank %d of node %d has channel %d head %d but the node's first "
                 "rank %d has head %d",
                 r, m, c, T->ringRecv[c], h, H->ringRecv[c]);
        postset_free(&s);
        return ncclInternalError;
      }
      if (T->ringSend[c] != H->ringSend[c]) {
        ref_warn(rank,
                 "ncclTopoPostset: rank %d of node %d has channel %d tail %d but the node's first "
                 "rank %d has tail %d",
                 r, m, c, T->ringSend[c], h, H->ringSend[c]);
        postset_free(&s);
        return ncclInternalError;
      }
    }
  }
  const int myNode = s.headNode[F[rank]->ringRecv[0]];

  /* P12: UltraServer pods (D15, P8). */
  int podStitch = 0;
  if (comm->enablePod != 0 && M > 1) {
    pthread_once(&g_pod_once, pod_once);
    if (!g_pod_node) {
      ref_warn(rank,
               "ncclTopoPostset: comm->enablePod is %d on %d nodes: UltraServer pod ordering "
               "(ncclTopoGetP2pPodInterNodeGraph) is not reimplemented; set "
               "NCCOM_RING_POD_ORDER=node to stitch in node order",
               comm->enablePod, M);
      postset_free(&s);
      return ncclInvalidUsage;
    }
    podStitch = 1;
  }
  /* P13, P14: kangaRing preconditions (D13). */
  if (pl.switchv1) {
    int vcs = platform_vcore_size(&pl);
    if (vcs != 0) {
      ref_warn(rank, "ncclTopoPostset: kangaRing precondition failed: virtual core size is %d, expected 0",
               vcs);
      postset_free(&s);
      return ncclInternalError;
    }
    int jb = platform_jbog_id(&pl, rank);
    if (jb < 1 || jb > 3) {
      ref_warn(rank,
               "ncclTopoPostset: kangaRing precondition failed: JBOG id of rank %d is %d, expected "
               "1, 2 or 3",
               rank, jb);
      postset_free(&s);
      return ncclInternalError;
    }
  }

  /* Gather every fragment into flat [c*N + r] tables. */
  const int nFinal = 2 * n < REF_MAXCHANNELS ? 2 * n : REF_MAXCHANNELS; /* D10 */
  const size_t NN = (size_t)N;
  s.ringRecv = scratch_alloc((size_t)n * NN, rank, &res);
  if (res == ncclSuccess) s.ringSend = scratch_alloc((size_t)n * NN, rank, &res);
  if (res == ncclSuccess) s.ringPrev = scratch_alloc((size_t)nFinal * NN, rank, &res);
  if (res == ncclSuccess) s.ringNext = scratch_alloc((size_t)nFinal * NN, rank, &res);
  if (res == ncclSuccess) s.rings = scratch_alloc((size_t)nFinal * NN, rank, &res);
  if (res != ncclSuccess) { postset_free(&s); return res; }
  for (int c = 0; c < n; c++) {
    for (int r = 0; r < N; r++) {
      size_t ix = (size_t)c * NN + (size_t)r;
      s.ringRecv[ix] = F[r]->ringRecv[c];
      s.ringSend[ix] = F[r]->ringSend[c];
      s.ringPrev[ix] = F[r]->ringPrev[c];
      s.ringNext[ix] = F[r]->ringNext[c];
    }
  }
  /* Stitch (upstream connectRings shape, D9). */
  for (int c = 0; c < n; c++) {
    const int *recvC = s.ringRecv + (size_t)c * NN;
    const int *sendC = s.ringSend + (size_t)c * NN;
    int *prevC = s.ringPrev + (size_t)c * NN;
    int *nextC = s.ringNext + (size_t)c * NN;
    for (int m = 0; m < M; m++) {
      int recvRank = recvC[s.firsts[m]];
      int prevSendRank = sendC[s.firsts[(m - 1 + M) % M]];
      prevC[recvRank] = prevSendRank;
      int sendRank = sendC[s.firsts[m]];
      int nextRecvRank = recvC[s.firsts[(m + 1) % M]];
      nextC[sendRank] = nextRecvRank;
    }
  }
  /* Duplicate the tables for the doubled channels (D10: same rings, same
   * direction; ncclMinNchannels() == 0 adds nothing). */
  for (int c = n; c < nFinal; c++) {
    memcpy(s.ringPrev + (size_t)c * NN, s.ringPrev + (size_t)(c - n) * NN, NN * sizeof(int));
    memcpy(s.ringNext + (size_t)c * NN, s.ringNext + (size_t)(c - n) * NN, NN * sizeof(int));
  }
  /* Our own BuildRings over the full doubled set (B6..B8, ring index c). */
  res = build_rings_core(nFinal, s.rings, rank, N, s.ringNext, rank);
  if (res != ncclSuccess) { postset_free(&s); return res; }
  /* P15 (P5): this rank's stitched prev must be the rank the ring reaches it from. */
  for (int c = 0; c < n; c++) {
    int p = s.ringPrev[(size_t)c * NN + (size_t)rank];
    int from = s.rings[(size_t)c * NN + (NN - 1)];
    if (p != from) {
      ref_warn(rank, "ncclTopoPostset: channel %d: rank %d has prev %d but the ring reaches it from %d",
               c, rank, p, from);
      postset_free(&s);
      return ncclInternalError;
    }
  }

  /* Commit phase. First the allocations of NULL userRanks (D12, P16). */
  int *fresh[REF_MAXCHANNELS] = {0};
  for (int c = 0; c < nFinal; c++) {
    if (comm->channels[c].ring.userRanks != NULL) continue;
    size_t bytes = NN * sizeof(int);
    fresh[c] = malloc(bytes);
    if (fresh[c] == NULL) {
      for (int k = 0; k < c; k++) free(fresh[k]);
      ref_warn(rank, "ncclTopoPostset: malloc of %d bytes for channels[%d].ring.userRanks failed",
               bytes > (size_t)INT_MAX ? INT_MAX : (int)bytes, c);
      postset_free(&s);
      return ncclSystemError;
    }
  }
  /* Then the writes; nothing below can fail. */
  for (int c = 0; c < n; c++) {
    int p = s.ringPrev[(size_t)c * NN + (size_t)rank];
    int x = s.ringNext[(size_t)c * NN + (size_t)rank];
    comm->channels[c].ring.prev = p;
    comm->channels[c].ring.next = x;
    if (c + n < REF_MAXCHANNELS) {
      comm->channels[c + n].ring.prev = p;
      comm->channels[c + n].ring.next = x;
    }
  }
  for (int c = 0; c < nFinal; c++) {
    if (fresh[c] != NULL) comm->channels[c].ring.userRanks = fresh[c];
    memcpy(comm->channels[c].ring.userRanks, s.rings + (size_t)c * NN, NN * sizeof(int));
  }
  comm->nChannels = nFinal;
  *nChannels = nFinal;
  comm->nNodes = M;
  *nNodes = M;
  comm->node = myNode;
  memcpy(nodesFirstRank, s.firsts, (size_t)M * sizeof(int));
  const int nv = N < 16 ? N : 16;
  if (pl.switchv1) {
    for (int k = 0; k < nK; k++)
      for (int v = 0; v < nv; v++)
        memcpy(&comm->kangaRing[k][4 * v], F[v]->JbogKangaringPath[k], 4 * sizeof(int));
  }

  /* INFO lines, only after the commit (P12). */
  if (rank == 0) print_channel_lines(rank, nFinal, s.rings, N);
  if (podStitch)
    ref_info(SUB_INIT, rank,
             "ncclTopoPostset: enablePod set on %d nodes: stitching in node order "
             "(NCCOM_RING_POD_ORDER=node)",
             M);
  if (pl.switchv1 && info_enabled(SUB_INIT)) {
    ref_info(SUB_INIT, rank, "built %d kangaring paths", nK);
    for (int k = 0; k < nK; k++) {
      char buf[16 * 4 * 12 + 16];
      int len = 0;
      buf[0] = 0;
      for (int i = 0; i < 4 * nv; i++)
        len += snprintf(buf + len, sizeof buf - (size_t)len, i ? " %d" : "%d", comm->kangaRing[k][i]);
      ref_info(SUB_INIT, rank, "kangaring path[%d]=%s", k, buf);
    }
  }
  postset_free(&s);
  return ncclSuccess;
}

/* ===================================================================== */
/* ncclTopoGetNetDev (D18, D19, P10, P17; errors.md G1..G9)               */
/* ===================================================================== */

REF_EXPORT ncclResult_t ncclTopoGetNetDev(struct ncclTopoSystem *sys, int rank,
                                          struct ncclTopoGraph *graph, int channelId, int *dev) {
  dbg_init();
  if (dev == NULL) { ref_warn(rank, "ncclTopoGetNetDev: dev is NULL"); return ncclInvalidArgument; }
  if (graph == NULL) {
    pthread_once(&g_localnet_once, localnet_once);
    if (g_localnet != NULL) return g_localnet(sys, rank, dev); /* G2: passed through */
    ref_warn(rank,
             "ncclTopoGetNetDev: graph is NULL and the host process provides no "
             "ncclTopoGetLocalNet to fall back on");
    return ncclInternalError;
  }
  if (sys == NULL) { ref_warn(rank, "ncclTopoGetNetDev: sys is NULL"); return ncclInvalidArgument; }
  const int nCh = graph->nChannels;
  if (nCh <= 0) {
    ref_warn(rank, "ncclTopoGetNetDev: graph->nChannels %d is not positive", nCh);
    return ncclInvalidArgument;
  }
  if (channelId < 0) {
    ref_warn(rank, "ncclTopoGetNetDev: channelId %d is negative", channelId);
    return ncclInvalidArgument;
  }
  const int count = sys->nodes[0].count;
  if (count < 1 || count > REF_TOPO_MAX_NODES) {
    ref_warn(rank, "ncclTopoGetNetDev: sys->nodes[0].count %d is outside [1, 256]", count);
    return ncclInvalidArgument;
  }
  const int c = channelId % nCh;
  if ((long long)c * count >= REF_INTRA_ENTRIES) {
    ref_warn(rank, "ncclTopoGetNetDev: channel %d x count %d reaches past graph->intra[8192]", c,
             count);
    return ncclInvalidArgument;
  }
  if (c >= REF_INTER_ENTRIES / 2) {
    ref_warn(rank, "ncclTopoGetNetDev: channel %d reaches past graph->inter[64]", c);
    return ncclInvalidArgument;
  }
  const int dir = graph->intra[c * count] != rank ? 1 : 0;
  *dev = graph->inter[2 * c + dir];
  return ncclSuccess;
}
