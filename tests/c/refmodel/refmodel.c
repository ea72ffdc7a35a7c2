/*
 * refmodel.c - independent plain-C reference model of the host-side ring stage
 * of libnccom 2.31.24 (ncclTopoPreset, ncclTopoPostset, ncclBuildRings,
 * ncclTopoGetNetDev).
 *
 * Written from docs/spec/ring-construction.txt, docs/spec/DECISIONS.md
 * (D1..D28; D28's texts and order as the Go library fixed them, README.md
 * beside this file), docs/errors.md (order of checks, result codes, WARN texts), the
 * words of struct nccomRingRecord in include/nccom_ring.h (typed into
 * refmodel_layout.h, not included) and docs/abi-notes.md's ABI notes (P1..P25)
 * alone; where docs/errors.md leaves a text or an order open, docs/abi-notes.md
 * beside this file says which reading the model took. It follows the
 * algorithm shape of
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

/* A value from the environment as WARN texts show it (errors.md): in double
 * quotes, with \" \\ \n \r \t and \xHH for every other byte outside
 * printable ASCII; a value longer than 256 bytes is cut there, its whole
 * length given after the closing quote, "... (N bytes)" (D28). The caller
 * frees it; NULL when memory runs out. */
#define QUOTE_MAX 256
static char *quoted(const char *v) {
  size_t len = strlen(v), shown = len < QUOTE_MAX ? len : QUOTE_MAX;
  char *out = malloc(4 * shown + 3 + 40), *o = out;
  if (out == NULL) return NULL;
  *o++ = '"';
  for (const unsigned char *p = (const unsigned char *)v; p < (const unsigned char *)v + shown; p++) {
    if (*p == '"' || *p == '\\') { *o++ = '\\'; *o++ = (char)*p; }
    else if (*p == '\n') { *o++ = '\\'; *o++ = 'n'; }
    else if (*p == '\r') { *o++ = '\\'; *o++ = 'r'; }
    else if (*p == '\t') { *o++ = '\\'; *o++ = 't'; }
    else if (*p < 0x20 || *p >= 0x7f) o += sprintf(o, "\\x%02x", *p);
    else *o++ = (char)*p;
  }
  *o++ = '"';
  *o = '\0';
  if (shown < len) sprintf(o, "... (%zu bytes)", len);
  return out;
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
    if (!found) {
      char *q = quoted(tok);
      if (q) pend(format("NCCL_DEBUG_SUBSYS: unknown subsystem %s ignored", q));
      free(q);
    }
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
    char *q = quoted(lvl);
    if (q) pend(format("NCCL_DEBUG=%s is not one of VERSION, WARN, INFO, ABORT, TRACE; using WARN", q));
    free(q);
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
      /* Appending, as the library does: a harness may read the file and
       * empty it after every call (tests/c/conformance). */
      FILE *f = fopen(path, "a");
      if (f != NULL) g_out = f;
      else {
        int e = errno;
        char *q = quoted(path);
        if (q) pend(format("NCCL_DEBUG_FILE=%s cannot be opened (%s); logging to stdout", q, strerror(e)));
        free(q);
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
/* Platform (D14, P7, P18)                                                */
/* ===================================================================== */

typedef bool (*family_fn_t)(void);      /* bool: only the low byte is defined */
typedef int (*vcore_fn_t)(void);
typedef int (*jbog_fn_t)(int);
typedef ncclResult_t (*localnet_fn_t)(struct ncclTopoSystem *, int, int *);

/* A host symbol (docs/abi-notes.md P18, D19): looked up on every call, nothing cached
 * and a miss never remembered. First in the object that called the export,
 * found from the call's return address (dladdr, then dlopen(RTLD_NOLOAD) and
 * dlsym, which also searches that object's dependencies), then globally;
 * in each scope by its C name and then by the name a C++ build without
 * extern "C" gives it. The model's own symbols never count. */
static void *own_base(void) {
  Dl_info di;
  if (dladdr((const void *)&own_base, &di) == 0) return NULL;
  return di.dli_fbase;
}

static void *not_own(void *p, void *self) {
  if (p == NULL) return NULL;
  Dl_info di;
  if (self != NULL && dladdr(p, &di) != 0 && di.dli_fbase == self) return NULL;
  return p;
}

static void *lookup_in(void *handle, const char *name, const char *cxxName, void *self) {
  void *p = not_own(dlsym(handle, name), self);
  return p ? p : not_own(dlsym(handle, cxxName), self);
}

static void *host_dlsym(const void *caller, const char *name, const char *cxxName) {
  void *self = own_base();
  void *p = NULL;
  Dl_info di;
  if (caller != NULL && dladdr(caller, &di) != 0 && di.dli_fname != NULL &&
      di.dli_fname[0] != '\0' && di.dli_fbase != self) {
    void *h = dlopen(di.dli_fname, RTLD_LAZY | RTLD_NOLOAD);
    if (h != NULL) {
      p = lookup_in(h, name, cxxName, self);
      dlclose(h); /* the object stays loaded: NOLOAD only counted a reference */
    }
  }
  return p ? p : lookup_in(RTLD_DEFAULT, name, cxxName, self);
}

#define FAMILY_NAMES "neuronIsTrn3SwitchV1Family", "_Z26neuronIsTrn3SwitchV1Familyv"
#define VCORE_NAMES "nec_get_virtual_core_size", "_Z25nec_get_virtual_core_sizev"
#define JBOG_NAMES "neuronTrnSwitchV1JbogId", "_Z23neuronTrnSwitchV1JbogIdi"
#define LOCALNET_NAMES "ncclTopoGetLocalNet", "_Z19ncclTopoGetLocalNetP14ncclTopoSystemiPi"

enum { PLAT_GENERIC = 0, PLAT_SWITCHV1 = 1, PLAT_UNKNOWN = 2 };
static pthread_once_t g_plat_env_once = PTHREAD_ONCE_INIT;
static int g_plat_env = PLAT_GENERIC;
static char *g_plat_env_value = NULL;
static atomic_int g_plat_warned = 0;
static int g_plat_env_unset = 0;       /* NCCOM_RING_PLATFORM unset or empty (P20) */
static atomic_int g_plat_assumed = 0;  /* the "assuming a generic platform" INFO line was due */

static void plat_env_once(void) {
  const char *v = getenv("NCCOM_RING_PLATFORM");
  g_plat_env_unset = (v == NULL || v[0] == '\0');
  if (g_plat_env_unset || strcasecmp(v, "generic") == 0) g_plat_env = PLAT_GENERIC;
  else if (strcasecmp(v, "trn3-switchv1") == 0) g_plat_env = PLAT_SWITCHV1;
  else {
    g_plat_env = PLAT_UNKNOWN;
    g_plat_env_value = strdup(v);
  }
}

/* Platform facts of one call. The family hook is looked up and called on
 * every call that asks (never cached); the environment is read once per
 * process, at the first call whose host has no family hook. `caller` is
 * the export's return address, for the lookups (P18). An unknown
 * NCCOM_RING_PLATFORM is no failure (D28): Preset writes "unknown" into
 * its record, so that every rank's Postset refuses the job alike, and
 * prints the variable's WARN only once it has succeeded. */
struct platform {
  int kind; /* PLAT_* */
  int switchv1;
  int from_host;
  const void *caller;
};

static void get_platform(const char *fn, int wrank, const void *caller, struct platform *pl) {
  pl->from_host = 0;
  pl->switchv1 = 0;
  pl->kind = PLAT_GENERIC;
  pl->caller = caller;
  family_fn_t family;
  void *p = host_dlsym(caller, FAMILY_NAMES);
  memcpy(&family, &p, sizeof p);
  if (family != NULL) {
    pl->from_host = 1;
    pl->switchv1 = family() ? 1 : 0;
    pl->kind = pl->switchv1 ? PLAT_SWITCHV1 : PLAT_GENERIC;
    return;
  }
  pthread_once(&g_plat_env_once, plat_env_once);
  pl->kind = g_plat_env;
  pl->switchv1 = (g_plat_env == PLAT_SWITCHV1);
  /* errors.md "Environment": neither the hook nor the variable gives the
   * platform: one INFO line per process, at the first such call. */
  if (g_plat_env_unset && atomic_exchange(&g_plat_assumed, 1) == 0)
    ref_info(SUB_INIT, wrank,
             "%s: the host defines no neuronIsTrn3SwitchV1Family and NCCOM_RING_PLATFORM is unset: "
             "assuming a generic platform (no kangaRing)",
             fn);
}

/* D28: after a successful Preset whose platform came from an unknown
 * NCCOM_RING_PLATFORM, the variable's WARN, once per process. */
static void warn_unknown_platform(int wrank, const struct platform *pl) {
  if (pl->from_host || pl->kind != PLAT_UNKNOWN || atomic_exchange(&g_plat_warned, 1) != 0) return;
  char *q = quoted(g_plat_env_value ? g_plat_env_value : "");
  if (q)
    ref_warn(wrank,
             "ncclTopoPreset: NCCOM_RING_PLATFORM=%s is not one of generic, trn3-switchv1: this rank's record "
             "says its platform is unknown, and every rank's ncclTopoPostset will refuse the job (D28)",
             q);
  free(q);
}

/* The virtual-core and JBOG hooks: asked by Preset (D27: it writes the
 * answers into its record), and only when the platform is TRN3-SwitchV1.
 * Absent hooks give 0 and 1 (errors.md); so does a platform from
 * NCCOM_RING_PLATFORM, which fixes them (D14: "trn3-switchv1: SwitchV1,
 * virtual-core size 0, JBOG id 1"), so the two hooks are not asked then. */
static int platform_vcore_size(const struct platform *pl) {
  if (!pl->from_host || !pl->switchv1) return 0;
  vcore_fn_t fn;
  void *p = host_dlsym(pl->caller, VCORE_NAMES);
  memcpy(&fn, &p, sizeof p);
  return fn != NULL ? fn() : 0;
}

static int platform_jbog_id(const struct platform *pl, int rank) {
  if (!pl->from_host || !pl->switchv1) return 1;
  jbog_fn_t fn;
  void *p = host_dlsym(pl->caller, JBOG_NAMES);
  memcpy(&fn, &p, sizeof p);
  return fn != NULL ? fn(rank) : 1;
}

/* ===================================================================== */
/* The record (D25, D27): hashes, and the variables Preset reads          */
/* ===================================================================== */

#define FNV_BASIS 2166136261u
#define FNV_PRIME 16777619u

/* 32-bit FNV-1a over words, each folded least significant byte first. */
static uint32_t fnv_word(uint32_t h, uint32_t w) {
  for (int b = 0; b < 4; b++) {
    h ^= (w >> (8 * b)) & 0xffu;
    h *= FNV_PRIME;
  }
  return h;
}

/* A name's hash: FNV-1a over its bytes. */
static uint32_t fnv_bytes(const char *p, size_t n) {
  uint32_t h = FNV_BASIS;
  for (size_t i = 0; i < n; i++) {
    h ^= (unsigned char)p[i];
    h *= FNV_PRIME;
  }
  return h;
}

/* The graph's fingerprint: nChannels, then inter[0 .. min(2n, 64)). */
static uint32_t graph_fingerprint(const struct ncclTopoGraph *graph) {
  int n = graph->nChannels;
  int k = 2 * n < REF_INTER_ENTRIES ? 2 * n : REF_INTER_ENTRIES;
  uint32_t h = fnv_word(FNV_BASIS, (uint32_t)n);
  for (int i = 0; i < k; i++) h = fnv_word(h, (uint32_t)graph->inter[i]);
  return h;
}

#define CHECKSUM_WORD 7 /* the checksum's index among the 16 words (+28) */

/* The checksum, version 2 (the header's words): FNV-1a's arithmetic on
 * whole words in four lanes, lane k over words k, k+4, k+8 and k+12 (the
 * checksum word taken as 0), the lanes then folded in order. */
static uint32_t record_checksum(const struct nccomRingRecord *rec) {
  uint32_t w[16], lane[4] = {FNV_BASIS, FNV_BASIS, FNV_BASIS, FNV_BASIS};
  memcpy(w, rec, sizeof w);
  w[CHECKSUM_WORD] = 0;
  for (int i = 0; i < 16; i++) lane[i % 4] = (lane[i % 4] ^ w[i]) * FNV_PRIME;
  uint32_t h = lane[0] * FNV_PRIME;
  for (int k = 1; k < 4; k++) h = (h ^ lane[k]) * FNV_PRIME;
  return h;
}

/* Version 1's checksum, byte by byte over the 16 words (the checksum word
 * as 0): only so that a record of that version can be named as one (D28). */
static uint32_t record_checksum_v1(const struct nccomRingRecord *rec) {
  uint32_t w[16];
  memcpy(w, rec, sizeof w);
  w[CHECKSUM_WORD] = 0;
  uint32_t h = FNV_BASIS;
  for (int i = 0; i < 16; i++) h = fnv_word(h, w[i]);
  return h;
}

static int record_levels(const struct nccomRingRecord *rec) {
  return (rec->flags >> REF_RECORD_LEVELS_SHIFT) & 0xF;
}
static int record_kanga(const struct nccomRingRecord *rec) { return (rec->flags >> REF_RECORD_KANGA_SHIFT) & 0x7; }
static int record_channels(const struct nccomRingRecord *rec) {
  return (rec->flags >> REF_RECORD_CHANNELS_SHIFT) & 0x3F;
}

/* D28's three kinds of fragment. */
enum { REC_NONE = 0, REC_VALID, REC_UNREADABLE };

/* Rank r's record, copied into rec, and its kind: without the magic
 * another ring stage's; valid when it is version 2 with its checksum,
 * rank r, no flag bit but the named ones, a level count of 0..8, 0..4
 * kangaRing paths, 1..32 channels, not both SwitchV1 and unknown, and
 * location words past the count 0; else unreadable. *version is what an
 * unreadable record's WARN quotes: its version word when it is another
 * version whose checksum holds (version 1's byte-wise one for version 1,
 * version 2's for any other), else -1 (damaged, or this version but not
 * as its Preset wrote it). */
static int record_kind(const struct ncclTopoRanks *T, int r, struct nccomRingRecord *rec, int *version) {
  memcpy(rec, (const unsigned char *)T + REF_RECORD_OFFSET, sizeof *rec);
  *version = -1;
  if (rec->magic != REF_RECORD_MAGIC) return REC_NONE;
  if (rec->version != REF_RECORD_VERSION || rec->checksum != record_checksum(rec)) {
    if (rec->version == 1 ? rec->checksum == record_checksum_v1(rec) : rec->checksum == record_checksum(rec))
      *version = rec->version;
    return REC_UNREADABLE;
  }
  const int known = REF_RECORD_NETWORK | REF_RECORD_POD_NODE | REF_RECORD_SWITCHV1 | REF_RECORD_UNKNOWN |
                    REF_RECORD_ENABLE_POD | (0xF << REF_RECORD_LEVELS_SHIFT) | (0x7 << REF_RECORD_KANGA_SHIFT) |
                    (0x3F << REF_RECORD_CHANNELS_SHIFT);
  if (rec->rank != r || (rec->flags & ~known) != 0 || record_levels(rec) > REF_MAX_LEVELS ||
      record_kanga(rec) > REF_MAX_KANGA_PATHS || record_channels(rec) < 1 ||
      record_channels(rec) > REF_MAXCHANNELS ||
      ((rec->flags & REF_RECORD_SWITCHV1) && (rec->flags & REF_RECORD_UNKNOWN)))
    return REC_UNREADABLE;
  for (int l = record_levels(rec); l < REF_MAX_LEVELS; l++)
    if (rec->location[l] != 0) return REC_UNREADABLE;
  return REC_VALID;
}

/* ---- "the value quoted" ----
 * D25's WARNs quote values as every other: quoted() above (errors.md,
 * Environment: printable ASCII as is but for \" and \\, \n \r \t, every
 * other byte \xHH). */
static char *quote(const char *p, size_t n) {
  char *s = malloc(n + 1);
  if (s == NULL) return NULL;
  memcpy(s, p, n);
  s[n] = '\0';
  char *q = quoted(s);
  free(s);
  return q;
}

/* ---- NCCOM_RING_LOCATION (D25) ---- */

struct location {
  int levels; /* 0: none */
  uint32_t hash[REF_MAX_LEVELS];
};

static int name_byte_ok(unsigned char b) {
  return (b >= 'A' && b <= 'Z') || (b >= 'a' && b <= 'z') || (b >= '0' && b <= '9') || b == '.' || b == '_' ||
         b == ':' || b == '-';
}

/* Parses 1 to 8 names of 1 to 64 bytes of [A-Za-z0-9._:-] separated by
 * '/'. Returns NULL and fills loc when the value is a location, else what
 * is wrong, malloc'ed, as it follows the quoted value in the WARN (the
 * names counted first, then each name in order: its length, then its first
 * byte outside the set). errors.md gives the WARN as `name %d has ...`;
 * the rest is the library's wording. */
static char *parse_location(const char *v, struct location *loc) {
  memset(loc, 0, sizeof *loc);
  int names = 1;
  for (const char *p = v; *p; p++) names += *p == '/';
  if (names > REF_MAX_LEVELS) return format(" has %d names; at most %d", names, REF_MAX_LEVELS);
  const char *start = v;
  for (int i = 0; i < names; i++) {
    const char *end = strchr(start, '/');
    if (end == NULL) end = start + strlen(start);
    size_t len = (size_t)(end - start);
    if (len < 1 || len > 64) return format(": name %d has %zu bytes; 1 to 64", i + 1, len);
    for (size_t b = 0; b < len; b++) {
      if (name_byte_ok((unsigned char)start[b])) continue;
      char *q = quote(start + b, 1);
      char *s = q ? format(": name %d has %s at byte %zu; only A-Z a-z 0-9 . _ : -", i + 1, q, b + 1) : NULL;
      free(q);
      return s;
    }
    loc->hash[i] = fnv_bytes(start, len);
    start = end + 1;
  }
  loc->levels = names;
  return NULL;
}

/* ---- what one Preset reads from the environment (D25, D27) ----
 * NCCOM_RING_NODE_ORDER and NCCOM_RING_LOCATION at every Preset, each WARN
 * printed when the value is first read and not again while it stays the
 * same; NCCOM_RING_POD_ORDER once per process, at the first Preset. Empty
 * counts as unset (P20); NCCOM_RING_NODE_ORDER and NCCOM_RING_POD_ORDER
 * are matched ignoring case. */
struct preset_env {
  int network, podNode;
  struct location loc;
};

static pthread_mutex_t g_env_mu = PTHREAD_MUTEX_INITIALIZER;
static char *g_seen_order, *g_seen_location; /* the values last read; NULL: unset */
static int g_pod_read, g_pod_node;

static const char *env_value(const char *name) {
  const char *v = getenv(name);
  return v != NULL && v[0] != '\0' ? v : NULL;
}

/* 1 when v is not the value last read into *seen; remembers v. */
static int value_changed(char **seen, const char *v) {
  if (v == NULL ? *seen == NULL : *seen != NULL && strcmp(*seen, v) == 0) return 0;
  free(*seen);
  *seen = v ? strdup(v) : NULL;
  return 1;
}

static void read_preset_env(int rank, struct preset_env *pe) {
  memset(pe, 0, sizeof *pe);
  pthread_mutex_lock(&g_env_mu);
  const char *v = env_value("NCCOM_RING_NODE_ORDER");
  int changed = value_changed(&g_seen_order, v);
  if (v != NULL && strcasecmp(v, "network") == 0) {
    pe->network = 1;
  } else if (v != NULL && strcasecmp(v, "rank") != 0 && changed) {
    char *q = quote(v, strlen(v));
    if (q) ref_warn(rank, "NCCOM_RING_NODE_ORDER=%s is not rank or network; stitching this rank's nodes in rank order", q);
    free(q);
  }
  v = env_value("NCCOM_RING_LOCATION");
  changed = value_changed(&g_seen_location, v);
  if (v != NULL) {
    char *bad = parse_location(v, &pe->loc);
    if (bad != NULL && changed) {
      char *q = quote(v, strlen(v));
      if (q) ref_warn(rank, "NCCOM_RING_LOCATION=%s%s; this rank has no location", q, bad);
      free(q);
    }
    free(bad);
  }
  if (!g_pod_read) {
    g_pod_read = 1;
    v = env_value("NCCOM_RING_POD_ORDER");
    g_pod_node = v != NULL && strcasecmp(v, "node") == 0;
    char *q = v != NULL && !g_pod_node ? quoted(v) : NULL;
    if (q) ref_warn(rank, "NCCOM_RING_POD_ORDER=%s is not 'node'; pods are refused", q);
    free(q);
  }
  pe->podNode = g_pod_node;
  pthread_mutex_unlock(&g_env_mu);
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

/* Ring r's line shows rings[(r % nstored) * nranks ...]: Postset keeps its n
 * rings once and labels the doubled channels (D10). */
static void print_channel_lines(int wrank, int nrings, const int *rings, int nranks, int nstored) {
  if (!info_enabled(SUB_INIT)) return;
  for (int r = 0; r < nrings; r++) {
    const int *ring = rings + (size_t)(r % nstored) * (size_t)nranks;
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
  /* B5a, after B5: the nrings*nranks ints of rings and of next must not
   * overlap. The model walks into scratch, so aliasing would not corrupt its
   * own walk; the contract refuses it all the same. Empty tables never
   * overlap (nrings == 0 succeeds below). */
  const long long cells = (long long)nrings * (long long)nranks;
  if (cells > 0) {
    uintptr_t a = (uintptr_t)rings, b = (uintptr_t)next;
    uintptr_t dist = a > b ? a - b : b - a;
    if ((unsigned long long)dist < (unsigned long long)cells * sizeof(int)) {
      ref_warn(rank,
               "ncclBuildRings: rings and next overlap (%lld ints each); the rings would be written "
               "over the table they are read from",
               cells);
      return ncclInvalidArgument;
    }
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
  if (rank == 0) print_channel_lines(rank, nrings, scratch, nranks, nrings);
  free(scratch);
  return ncclSuccess;
}

/* ===================================================================== */
/* ncclTopoPreset (D4..D7, D23, D25, D27; errors.md S1..S13)              */
/* ===================================================================== */

REF_EXPORT ncclResult_t ncclTopoPreset(struct ncclComm *comm, struct ncclTopoGraph *graph,
                                       struct ncclTopoRanks *topoRanks) {
  const void *caller = __builtin_return_address(0); /* P18: hooks are looked up there first */
  dbg_init();
  if (comm == NULL) { ref_warn(-1, "ncclTopoPreset: comm is NULL"); return ncclInvalidArgument; }
  const int rank = comm->rank;
  if (graph == NULL) { ref_warn(rank, "ncclTopoPreset: graph is NULL"); return ncclInvalidArgument; }
  if (topoRanks == NULL) {
    ref_warn(rank, "ncclTopoPreset: topoRanks is NULL");
    return ncclInvalidArgument;
  }
  /* D25, D27: the variables, read at every Preset whatever its result.
   * errors.md does not place the reading among the checks; the library
   * reads them here, once the three pointers are known (after S3, before
   * S4), so the model does too. */
  struct preset_env env;
  read_preset_env(rank, &env);
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
  /* D28: an unknown NCCOM_RING_PLATFORM no longer fails Preset; the
   * record says so, and its WARN follows the success below. */
  struct platform pl;
  get_platform("ncclTopoPreset", rank, caller, &pl);

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

  /* The record (D25, D27, D28), whole, whatever the variables: every
   * per-rank fact Postset decides from travels in it. On SwitchV1 this
   * rank's preconditions are asked here (and only here), so that Postset
   * checks every rank's. */
  struct nccomRingRecord rec;
  memset(&rec, 0, sizeof rec);
  rec.magic = REF_RECORD_MAGIC;
  rec.version = REF_RECORD_VERSION;
  rec.rank = rank;
  rec.flags = (env.network ? REF_RECORD_NETWORK : 0) | (env.podNode ? REF_RECORD_POD_NODE : 0) |
              (pl.kind == PLAT_SWITCHV1 ? REF_RECORD_SWITCHV1 : 0) | (pl.kind == PLAT_UNKNOWN ? REF_RECORD_UNKNOWN : 0) |
              (comm->enablePod != 0 ? REF_RECORD_ENABLE_POD : 0) | (env.loc.levels << REF_RECORD_LEVELS_SHIFT) |
              (nK << REF_RECORD_KANGA_SHIFT) | (n << REF_RECORD_CHANNELS_SHIFT);
  rec.fingerprint = graph_fingerprint(graph);
  if (pl.switchv1) {
    rec.virtualCoreSize = platform_vcore_size(&pl);
    rec.jbogId = platform_jbog_id(&pl, rank);
  }
  for (int l = 0; l < env.loc.levels; l++) rec.location[l] = env.loc.hash[l];
  rec.checksum = record_checksum(&rec);

  /* Commit. */
  for (int c = 0; c < n; c++) {
    topoRanks->ringRecv[c] = recv[c];
    topoRanks->ringSend[c] = send[c];
    topoRanks->ringPrev[c] = prv[c];
    topoRanks->ringNext[c] = nxt[c];
    comm->channels[c].ring.prev = prv[c];
    comm->channels[c].ring.next = nxt[c];
  }
  /* D23: channels the graph does not have are marked -1 in the four ring
   * arrays (a fragment's channel count is its number of leading channels with
   * ringRecv >= 0); the tree region stays unwritten (D5) but for the record. */
  for (int c = n; c < REF_MAXCHANNELS; c++) {
    topoRanks->ringRecv[c] = -1;
    topoRanks->ringSend[c] = -1;
    topoRanks->ringPrev[c] = -1;
    topoRanks->ringNext[c] = -1;
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
  memcpy((unsigned char *)topoRanks + REF_RECORD_OFFSET, &rec, sizeof rec);
  /* D7: kangaRing fragment on TRN3-SwitchV1 only. */
  if (pl.switchv1 && nK > 0) {
    for (int k = 0; k < nK; k++)
      memcpy(topoRanks->JbogKangaringPath[k], comm->kangaRing[k], 4 * sizeof(int));
  }
  comm->nChannels = n; /* D4 */
  warn_unknown_platform(rank, &pl);
  return ncclSuccess;
}

/* ===================================================================== */
/* ncclTopoPostset (D8..D15, D23..D25, D27; errors.md P1..P16)            */
/* ===================================================================== */

/* Working memory of one Postset call.
 *
 * `work` is the block errors.md P7b describes: (2 + 2 n0) * N ints from C
 * malloc, n0 being rank 0's fragment's channel count (D27: the job's count
 * n is at most that), holding every fragment's channel count, every rank's
 * node and, for the n channels used, the stitched next and prev tables,
 * flat [c*N + r] as upstream gathers them. `book` is the model's own
 * bookkeeping: its nodes, the node order and this rank's walks
 * ((17 + n0) N + 1 ints), with every rank's record (`recs`, N records);
 * running out there has a model-only text. `diag` is taken on the failure
 * path only, for the diagnosis (4N ints; running out there is P7b's text
 * with its size). */
struct postset_scratch {
  int *work;
  int *count;     /* [N]: every fragment's channel count (D23) */
  int *nodeOf;    /* [N]: node of every rank (the node of its own ringRecv[0]) */
  int *next;      /* [n*N]: stitched next (D9) */
  int *prev;      /* [n*N]: stitched prev (D9) */
  int *rings;     /* [n*N]: this rank's walk of every ring */
  int *book;
  int *headNode;  /* [N]: node index of a head rank, -1 when not seen (the D8 map) */
  int *firsts;    /* [N]: nodesFirstRank being built */
  int *byNode;    /* [N]: the ranks grouped by node, in rank order within a node */
  int *nodeStart; /* [N+1]: node m's ranks are byNode[nodeStart[m] .. nodeStart[m+1]) */
  int *mark;      /* [N]: work array, kept all zero between uses */
  int *kinds;     /* [N]: rank r's record's kind (REC_*, D28) */
  int *versions;  /* [N]: its version as an unreadable record's WARN quotes it, -1: damaged */
  int *seq;       /* [N]: the node order's node indices */
  int *S;         /* [N]: the first ranks of the nodes in stitch order */
  int *nodeLoc;   /* [N]: the node order's work space */
  int *gmin;      /* [8N]: the node order's work space */
  struct nccomRingRecord *recs; /* [N]: every rank's record as read (meaningful when valid) */
  int *diag;
  int *tally;     /* [N]: work array, kept all zero between uses */
  int *aim;       /* [N]: work array, kept all zero between uses */
  int *low1;      /* [N]: work array, kept all -1 between uses */
  int *low2;      /* [N]: work array, kept all -1 between uses */
};

static void postset_free(struct postset_scratch *s) {
  free(s->work);
  free(s->book);
  free(s->recs);
  free(s->diag);
}

/* P7b: the working memory, or its failure (bytes, N, n0). */
static ncclResult_t working_memory(int **out, size_t ints, int N, int C, int wrank) {
  size_t bytes = ints * sizeof(int);
  *out = malloc(bytes ? bytes : 1);
  if (*out == NULL) {
    ref_warn(wrank,
             "ncclTopoPostset: malloc of %zu bytes of working memory for %d ranks x %d channels "
             "failed",
             bytes, N, C);
    return ncclSystemError;
  }
  return ncclSuccess;
}

/* D23: a fragment's channel count is its number of leading channels whose
 * ringRecv is >= 0. */
static int fragment_channels(const struct ncclTopoRanks *T) {
  int k = 0;
  while (k < REF_MAXCHANNELS && T->ringRecv[k] >= 0) k++;
  return k;
}

/* The read-only view of the gathered fragments that the checks and the
 * diagnosis share. Nothing here depends on the calling rank (D24). */
struct frags {
  struct ncclTopoRanks *const *F;
  int N, n, M;
  const int *nodeOf, *firsts, *byNode, *nodeStart;
  const int *S; /* [M] the first ranks of the nodes in stitch order (D8's, or D25's) */
};

/* Work arrays of the diagnosis, each left as it was found (see
 * postset_scratch). */
struct work {
  int *mark, *tally, *aim, *low1, *low2;
};

/* D9 stitch of channel c into next[0..N) and prev[0..N) over the stitch
 * order S: every rank's own ringNext/ringPrev, then for i = 0..M-1 node
 * S[i]'s tail gets node S[i+1]'s head as next, then for i = 0..M-1 node
 * S[i]'s head gets node S[i-1]'s tail as prev (later nodes overwrite
 * earlier ones, as upstream). */
static void stitch_channel(const struct frags *g, int c, int *next, int *prev) {
  for (int r = 0; r < g->N; r++) {
    next[r] = g->F[r]->ringNext[c];
    prev[r] = g->F[r]->ringPrev[c];
  }
  const int M = g->M;
  for (int i = 0; i < M; i++) {
    const struct ncclTopoRanks *H = g->F[g->S[i]];
    const struct ncclTopoRanks *Hn = g->F[g->S[(i + 1) % M]];
    next[H->ringSend[c]] = Hn->ringRecv[c];
  }
  for (int i = 0; i < M; i++) {
    const struct ncclTopoRanks *H = g->F[g->S[i]];
    const struct ncclTopoRanks *Hp = g->F[g->S[(i - 1 + M) % M]];
    prev[H->ringRecv[c]] = Hp->ringSend[c];
  }
}

/* P10 ring condition of one channel: the stitched next is one cycle through
 * all N ranks, and every rank's stitched prev is the rank whose next it is.
 * mark[] must be all zero and is left so. */
static int ring_fails(int N, const int *next, const int *prev, int *mark) {
  int fails = 0, cur = 0, steps = 0;
  for (; steps < N; steps++) {
    if (cur < 0 || mark[cur]) { fails = 1; break; }
    mark[cur] = 1;
    cur = next[cur];
  }
  if (!fails && cur != 0) fails = 1;
  /* clear the marks along the same walk */
  cur = 0;
  for (int i = 0; i < steps && cur >= 0 && mark[cur]; i++) {
    mark[cur] = 0;
    cur = next[cur];
  }
  for (int t = 0; t < N && !fails; t++)
    if (prev[next[t]] != t) fails = 1;
  return fails;
}

/* Upstream's agreement check on channel c: every rank holds its node's first
 * rank's ringRecv[c] and ringSend[c]. */
static int agreement_fails(const struct frags *g, int c) {
  for (int r = 0; r < g->N; r++) {
    const struct ncclTopoRanks *H = g->F[g->firsts[g->nodeOf[r]]];
    if (g->F[r]->ringRecv[c] != H->ringRecv[c] || g->F[r]->ringSend[c] != H->ringSend[c]) return 1;
  }
  return 0;
}

/* "Walks on rank 0": the walk from rank 0 along the stitched next, as
 * ncclBuildRings prints a ring before it checks it (a short cycle repeats). */
#define WALK_MAX_RANKS 64
static void print_walk_line(int wrank, int c, int n, const int *next, int N) {
  char buf[64 + WALK_MAX_RANKS * 16 + 64];
  int len = snprintf(buf, sizeof buf, "Channel %02d/%02d : ", c, n);
  int cur = 0;
  for (int step = 0; step < N; step++) {
    if (step == WALK_MAX_RANKS) {
      len += snprintf(buf + len, sizeof buf - (size_t)len, " ... (%d more)", N - WALK_MAX_RANKS);
      break;
    }
    len += snprintf(buf + len, sizeof buf - (size_t)len, " %3d", cur);
    int v = next[cur];
    if (v < 0) {
      len += snprintf(buf + len, sizeof buf - (size_t)len, " (next is -1)");
      break;
    }
    cur = v;
  }
  ref_info(SUB_INIT, wrank, "%s", buf);
}

/* ---- The records' census, the job's facts and the odd one out (D28) ---- */

/* What the valid records of a job say, and how many of each kind there
 * are; counted once the fragments are known to agree (the same on every
 * rank: nothing here reads the calling rank's state). */
struct census {
  int valid, none, unreadable;
  int firstValid, firstNone, firstUnreadable;
  int unreadableVersion;  /* the first unreadable record's version, -1: damaged */
  int others, firstOther, otherVersion; /* unreadable records of another version: how many, the first, its version */
  int flags0;             /* the first valid record's flags */
  uint32_t fingerprint0;  /* and its graph fingerprint */
  int mixed;              /* some valid record's platform, enablePod, kangaRing count or policy differs */
  int fingerprints;       /* some valid record's fingerprint differs from the first's */
  int asking, podNode, switchV1, enablePod; /* valid records saying so */
  int countRank;          /* the first rank whose fragment's channel count is not its record's, or -1 */
  int countOwn, countRecord;
};

/* The flags whose difference between valid records matters (D25, D28). */
#define JOB_BITS \
  (REF_RECORD_SWITCHV1 | REF_RECORD_UNKNOWN | REF_RECORD_ENABLE_POD | (0x7 << REF_RECORD_KANGA_SHIFT) | REF_RECORD_NETWORK)

static void take_census(int N, const int *kinds, const int *versions, const struct nccomRingRecord *recs,
                        const int *count, struct census *c) {
  memset(c, 0, sizeof *c);
  c->firstValid = c->firstNone = c->firstUnreadable = c->countRank = -1;
  c->unreadableVersion = -1;
  c->firstOther = -1;
  for (int r = 0; r < N; r++) {
    if (kinds[r] == REC_NONE) {
      if (c->none++ == 0) c->firstNone = r;
      continue;
    }
    if (kinds[r] == REC_UNREADABLE) {
      if (c->unreadable++ == 0) c->firstUnreadable = r, c->unreadableVersion = versions[r];
      if (versions[r] >= 0 && c->others++ == 0) c->firstOther = r, c->otherVersion = versions[r];
      continue;
    }
    const struct nccomRingRecord *rec = &recs[r];
    if (c->valid++ == 0) c->firstValid = r, c->flags0 = rec->flags, c->fingerprint0 = rec->fingerprint;
    c->mixed |= ((rec->flags ^ c->flags0) & JOB_BITS) != 0;
    c->fingerprints |= rec->fingerprint != c->fingerprint0;
    c->asking += (rec->flags & REF_RECORD_NETWORK) != 0;
    c->podNode += (rec->flags & REF_RECORD_POD_NODE) != 0;
    c->switchV1 += (rec->flags & REF_RECORD_SWITCHV1) != 0;
    c->enablePod += (rec->flags & REF_RECORD_ENABLE_POD) != 0;
    if (c->countRank < 0 && count[r] != record_channels(rec))
      c->countRank = r, c->countOwn = count[r], c->countRecord = record_channels(rec);
  }
}

/* The job's facts (D28): from the valid records when there are any;
 * otherwise (records == 0) the caller takes the calling rank's own. */
struct job {
  int records;  /* some fragment holds a valid record */
  int switchV1; /* some valid record says TRN3-SwitchV1 */
  int pods;     /* more than one node, and some valid record carries enablePod */
  int paths;    /* nKangaRingChannels, as the first valid record says */
};

/* One field's values over the valid records, for a WARN naming the odd
 * one out: the reference is the value most records hold (ties: the one
 * the lowest rank holds), the odd one out the lowest rank holding another.
 * Values are 32-bit (a platform, a flag, a count, a fingerprint). */
struct tallied {
  uint32_t value;
  int count, first;
};
struct tally {
  struct tallied *v; /* by count, most first; ties by first holder */
  int nv;
  int odd;           /* -1: every valid record agrees */
  uint32_t oddValue;
};

static int cmp_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}
static int cmp_tallied(const void *a, const void *b) {
  const struct tallied *x = a, *y = b;
  if (x->count != y->count) return y->count - x->count;
  return x->first - y->first;
}

/* Tallies value() over the valid records; 0, or -1 when memory ran out. */
static int tally_of(int N, const int *kinds, const struct nccomRingRecord *recs,
                    uint32_t (*value)(const struct nccomRingRecord *), struct tally *t) {
  memset(t, 0, sizeof *t);
  t->odd = -1;
  uint64_t *keys = malloc((size_t)N * sizeof *keys + 1);
  t->v = malloc((size_t)N * sizeof *t->v + 1);
  if (keys == NULL || t->v == NULL) {
    free(keys);
    free(t->v);
    t->v = NULL;
    return -1;
  }
  int k = 0;
  for (int r = 0; r < N; r++)
    if (kinds[r] == REC_VALID) keys[k++] = (uint64_t)value(&recs[r]) << 32 | (uint32_t)r;
  qsort(keys, (size_t)k, sizeof *keys, cmp_u64);
  for (int i = 0; i < k;) {
    int j = i + 1;
    while (j < k && keys[j] >> 32 == keys[i] >> 32) j++;
    t->v[t->nv++] = (struct tallied){(uint32_t)(keys[i] >> 32), j - i, (int)(uint32_t)keys[i]};
    i = j;
  }
  free(keys);
  qsort(t->v, (size_t)t->nv, sizeof *t->v, cmp_tallied);
  for (int i = 1; i < t->nv; i++)
    if (t->odd < 0 || t->v[i].first < t->odd) t->odd = t->v[i].first, t->oddValue = t->v[i].value;
  return 0;
}

/* How a value shows in a WARN. */
typedef void (*show_fn)(char *buf, size_t size, uint32_t v);
static void show_int(char *buf, size_t size, uint32_t v) { snprintf(buf, size, "%d", (int)v); }
static void show_hex(char *buf, size_t size, uint32_t v) { snprintf(buf, size, "0x%08x", v); }
static void show_platform(char *buf, size_t size, uint32_t v) {
  snprintf(buf, size, "%s", v == PLAT_SWITCHV1 ? "trn3-switchv1" : v == PLAT_UNKNOWN ? "unknown" : "generic");
}

static const char *plural(int n) { return n == 1 ? "" : "s"; }

/* The values and their counts, the most common first: at most four, then
 * how many other values on how many ranks. */
static void tally_counts(FILE *f, const struct tally *t, show_fn show) {
  char b[32];
  int listed = t->nv < 4 ? t->nv : 4, rest = 0;
  for (int i = 0; i < listed; i++) {
    show(b, sizeof b, t->v[i].value);
    fprintf(f, "%s%s on %d rank%s", i ? ", " : "", b, t->v[i].count, plural(t->v[i].count));
  }
  for (int i = listed; i < t->nv; i++) rest += t->v[i].count;
  if (t->nv > listed) fprintf(f, ", %d other values on %d rank%s", t->nv - listed, rest, plural(rest));
}

static uint32_t value_platform(const struct nccomRingRecord *r) {
  return r->flags & REF_RECORD_SWITCHV1 ? PLAT_SWITCHV1 : r->flags & REF_RECORD_UNKNOWN ? PLAT_UNKNOWN : PLAT_GENERIC;
}
static uint32_t value_pod(const struct nccomRingRecord *r) { return (r->flags & REF_RECORD_ENABLE_POD) != 0; }
static uint32_t value_kanga(const struct nccomRingRecord *r) { return (uint32_t)record_kanga(r); }
static uint32_t value_fingerprint(const struct nccomRingRecord *r) { return r->fingerprint; }

/* ---- Node order (D25, D28; errors.md "Node order") ---- */

/* The cases, in the order they are tried. */
enum {
  ORDER_RANK = 1,  /* no valid record asks for network */
  ORDER_POD,       /* a pod job (D28: from the records) */
  ORDER_SWITCHV1,  /* TRN3-SwitchV1 (D28: from the records) */
  ORDER_NOT_ASKED, /* some rank has no valid record asking for network */
  ORDER_GRAPHS,    /* the valid records' graph fingerprints differ */
  ORDER_NETWORK    /* the order applies */
};

/* The decision, and what its lines after the commit print. */
struct order {
  int kase;
  int *seq;       /* [M] node indices (D8's numbering) in stitch order */
  int *S;         /* [M] their first ranks */
  char *warn;     /* NOT_ASKED, GRAPHS: the WARN (malloc'ed) */
  int unplaced;   /* NETWORK: nodes without a location (the last ones of seq) */
  int deepest;    /* NETWORK: the deepest node location's level count */
  int crossings[REF_MAX_LEVELS], groups[REF_MAX_LEVELS];
};

static int same_location(const struct nccomRingRecord *a, const struct nccomRingRecord *b) {
  int levels = record_levels(a);
  if (record_levels(b) != levels) return 0;
  for (int l = 0; l < levels; l++)
    if (a->location[l] != b->location[l]) return 0;
  return 1;
}

/* Whether two located nodes, with the locations of records a and b, are in
 * one group at level l (1..8): the same prefix of l hashes when both have
 * at least l levels; the same full location when both have fewer (a
 * location shorter than a level is a group of its own at that level). */
static int same_group(const struct nccomRingRecord *a, const struct nccomRingRecord *b, int l) {
  int la = record_levels(a), lb = record_levels(b);
  if ((la < l) != (lb < l)) return 0;
  if (la < l) return same_location(a, b);
  for (int k = 0; k < l; k++)
    if (a->location[k] != b->location[k]) return 0;
  return 1;
}

/* D28's placement rule: node m's location is the one most of its ranks'
 * records carry, "no location" counting as a value; among those tied for
 * most, its first rank's if it is one of them, else the one whose lowest
 * holder is the lowest rank. Returns a rank whose record holds it, or -1
 * when it has 0 levels (no location). O(|R|^2) per node. */
static int node_location(const struct frags *g, const struct nccomRingRecord *recs, int m) {
  const int *R = g->byNode + g->nodeStart[m];
  const int nR = g->nodeStart[m + 1] - g->nodeStart[m];
  const int first = g->firsts[m];
  int best = -1, bestHeld = 0, firstHeld = 0;
  for (int i = 0; i < nR; i++) {
    int lowest = 1, held = 0;
    for (int j = 0; j < nR; j++) {
      if (!same_location(&recs[R[j]], &recs[R[i]])) continue;
      if (j < i) lowest = 0;
      held++;
    }
    if (same_location(&recs[R[i]], &recs[first])) firstHeld = held;
    if (lowest && held > bestHeld) best = R[i], bestHeld = held; /* R is in rank order */
  }
  if (firstHeld == bestHeld) best = first;
  return record_levels(&recs[best]) > 0 ? best : -1;
}

/* What a rank's fragment says of the policy, for the policy's WARN. */
static const char *policy_says(const int *kinds, const struct nccomRingRecord *recs, int r) {
  if (kinds[r] != REC_VALID) return "carries no valid record";
  return recs[r].flags & REF_RECORD_NETWORK ? "asks for network" : "asks for rank";
}

/* Decides S from the records alone (D28: the job's facts included).
 * nodeLoc[M] and gmin[8 M] are work space: node m's location's record
 * (-1: none), and at level l + 1 the lowest D8 index of its group.
 * Returns -1 when memory for a WARN's text ran out. */
static int decide_order(const struct frags *g, const struct nccomRingRecord *recs, const int *kinds,
                        const struct census *cs, const struct job *job, int *nodeLoc, int *gmin, struct order *o) {
  const int N = g->N, M = g->M;
  for (int m = 0; m < M; m++) o->seq[m] = m, o->S[m] = g->firsts[m];
  o->kase = ORDER_RANK;
  if (cs->asking == 0) return 0;
  if (job->pods) { o->kase = ORDER_POD; return 0; }
  if (job->switchV1) { o->kase = ORDER_SWITCHV1; return 0; }
  if (cs->asking < N) {
    /* The reference: the policy most valid records carry (ties: the
     * lowest valid rank's); the odd one out the lowest rank that does not
     * carry it: against network a rank without a valid record too, against
     * rank only one that asks for network. */
    o->kase = ORDER_NOT_ASKED;
    const int rankOrder = cs->valid - cs->asking;
    const int refNetwork =
        cs->asking > rankOrder || (cs->asking == rankOrder && (cs->flags0 & REF_RECORD_NETWORK));
    int odd = -1, ref = -1;
    for (int r = 0; r < N; r++) {
      int holds = kinds[r] == REC_VALID && ((recs[r].flags & REF_RECORD_NETWORK) != 0) == refNetwork;
      if (holds && ref < 0) ref = r;
      int asks = kinds[r] == REC_VALID && (recs[r].flags & REF_RECORD_NETWORK);
      if (!holds && odd < 0 && (refNetwork || asks)) odd = r;
    }
    o->warn = format("ncclTopoPostset: NCCOM_RING_NODE_ORDER=network is not applied: rank %d %s, unlike rank %d "
                     "(%s, the most common): network on %d rank%s, rank on %d, no valid record on %d: stitching "
                     "in rank order (D9) on every rank",
                     odd, policy_says(kinds, recs, odd), ref, policy_says(kinds, recs, ref), cs->asking,
                     plural(cs->asking), rankOrder, N - cs->valid);
    return o->warn ? 0 : -1;
  }
  if (cs->fingerprints) {
    /* D28: over every valid record (here every rank's), not the heads only. */
    o->kase = ORDER_GRAPHS;
    struct tally t;
    if (tally_of(N, kinds, recs, value_fingerprint, &t) != 0) return -1;
    char *text = NULL, odd[32], ref[32];
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (f != NULL) {
      show_hex(odd, sizeof odd, t.oddValue);
      show_hex(ref, sizeof ref, t.v[0].value);
      fprintf(f, "ncclTopoPostset: NCCOM_RING_NODE_ORDER=network is not applied: rank %d (node %d) has graph "
                 "fingerprint %s, unlike rank %d (node %d; %s, the most common): ",
              t.odd, g->nodeOf[t.odd], odd, t.v[0].first, g->nodeOf[t.v[0].first], ref);
      tally_counts(f, &t, show_hex);
      fprintf(f, "; reordering nodes would change their NICs: stitching in rank order (D9) on every rank");
      if (fclose(f) != 0) free(text), text = NULL;
    }
    free(t.v);
    o->warn = text;
    return text ? 0 : -1;
  }

  o->kase = ORDER_NETWORK;
  o->deepest = 0;
  for (int m = 0; m < M; m++) {
    nodeLoc[m] = node_location(g, recs, m);
    if (nodeLoc[m] >= 0 && record_levels(&recs[nodeLoc[m]]) > o->deepest) o->deepest = record_levels(&recs[nodeLoc[m]]);
  }
  /* Every group at every level, by the lowest D8 index of its nodes: a node
   * takes the group of the first earlier node in the same group. */
  for (int l = 1; l <= REF_MAX_LEVELS; l++) {
    int *gm = gmin + (size_t)(l - 1) * (size_t)M;
    for (int m = 0; m < M; m++) {
      gm[m] = -1;
      if (nodeLoc[m] < 0) continue;
      gm[m] = m;
      for (int k = 0; k < m; k++)
        if (nodeLoc[k] >= 0 && same_group(&recs[nodeLoc[k]], &recs[nodeLoc[m]], l)) { gm[m] = gm[k]; break; }
    }
  }
  /* The located nodes ordered by their groups' lowest indices, level by
   * level from the top (so every group is contiguous, groups and the nodes
   * inside a group in order of their lowest D8 index), by insertion; then
   * the nodes without a location in D8 order. */
  int placed = 0;
  for (int m = 0; m < M; m++) {
    if (nodeLoc[m] < 0) continue;
    int at = placed++;
    while (at > 0) {
      int p = o->seq[at - 1], cmp = 0;
      for (int l = 0; l < REF_MAX_LEVELS && cmp == 0; l++)
        cmp = gmin[(size_t)l * (size_t)M + (size_t)p] - gmin[(size_t)l * (size_t)M + (size_t)m];
      if (cmp <= 0) break;
      o->seq[at] = p;
      at--;
    }
    o->seq[at] = m;
  }
  o->unplaced = M - placed;
  for (int m = 0; m < M; m++)
    if (nodeLoc[m] < 0) o->seq[placed++] = m;
  for (int i = 0; i < M; i++) o->S[i] = g->firsts[o->seq[i]];
  /* Per level: the edges of the cyclic sequence whose nodes are in other
   * groups, and the groups (the nodes without a location count as one). */
  for (int l = 1; l <= o->deepest; l++) {
    const int *gm = gmin + (size_t)(l - 1) * (size_t)M;
    int cross = 0, groups = o->unplaced > 0;
    for (int i = 0; i < M; i++) cross += gm[o->seq[i]] != gm[o->seq[(i + 1) % M]];
    for (int m = 0; m < M; m++) groups += gm[m] == m;
    o->crossings[l - 1] = cross;
    o->groups[l - 1] = groups;
  }
  return 0;
}

/* What the decision prints after the commit (errors.md "Node order"):
 * its WARN on every rank (a fallback, or nodes without a location when
 * there is more than one node: D28), its INFO line of a policy not
 * applied on every rank, the summary on rank 0. */
static void order_warns(int wrank, const struct order *o, int M) {
  if (o->warn) ref_warn(wrank, "%s", o->warn);
  else if (o->kase == ORDER_NETWORK && o->unplaced > 0 && M > 1)
    ref_warn(wrank,
             "ncclTopoPostset: NCCOM_RING_NODE_ORDER=network: node %d (head rank %d) has no location (%d of %d "
             "nodes have none, NCCOM_RING_LOCATION unset or invalid on most of their ranks): they come after all "
             "others, in rank order",
             o->seq[M - o->unplaced], o->S[M - o->unplaced], o->unplaced, M);
}

static void order_infos(int wrank, const struct order *o, int M) {
  if (o->kase == ORDER_POD)
    ref_info(SUB_INIT, wrank,
             "ncclTopoPostset: NCCOM_RING_NODE_ORDER=network is not applied with comm->enablePod on %d nodes "
             "(D15): stitching in rank order",
             M);
  else if (o->kase == ORDER_SWITCHV1)
    ref_info(SUB_INIT, wrank,
             "ncclTopoPostset: NCCOM_RING_NODE_ORDER=network is not applied on TRN3-SwitchV1: stitching in rank "
             "order");
  if (o->kase != ORDER_NETWORK || wrank != 0 || !info_enabled(SUB_INIT)) return;
  char buf[64 + 16 * 24 + 32 + REF_MAX_LEVELS * 64];
  int len = snprintf(buf, sizeof buf, "ncclTopoPostset: NCCOM_RING_NODE_ORDER=network: nodes");
  for (int i = 0; i < M && i < 16; i++) len += snprintf(buf + len, sizeof buf - (size_t)len, " %d:%d", o->seq[i], o->S[i]);
  if (M > 16) len += snprintf(buf + len, sizeof buf - (size_t)len, " ... (%d more)", M - 16);
  len += snprintf(buf + len, sizeof buf - (size_t)len, "; per ring");
  for (int l = 1; l <= o->deepest; l++)
    len += snprintf(buf + len, sizeof buf - (size_t)len, ", level %d: %d crossings of %d groups", l,
                    o->crossings[l - 1], o->groups[l - 1]);
  ref_info(SUB_INIT, wrank, "%s", buf);
}

/* ---- Diagnosis (D24, errors.md "Diagnosis") ---- */

struct contra {
  int subject, other; /* other is -1 when there is none */
  char *detail;
};

struct contra_list {
  struct contra *v;
  int len, cap, oom;
};

static void contra_add(struct contra_list *l, int subject, int other, char *detail) {
  if (detail == NULL) { l->oom = 1; return; }
  if (l->len == l->cap) {
    int cap = l->cap ? 2 * l->cap : 16;
    struct contra *nv = realloc(l->v, (size_t)cap * sizeof *nv);
    if (nv == NULL) { free(detail); l->oom = 1; return; }
    l->v = nv;
    l->cap = cap;
  }
  l->v[l->len].subject = subject;
  l->v[l->len].other = other;
  l->v[l->len].detail = detail;
  l->len++;
}

static void contra_clear(struct contra_list *l) {
  for (int i = 0; i < l->len; i++) free(l->v[i].detail);
  l->len = 0;
}

static int val_of(const struct frags *g, int r, int c, int tail) {
  return tail ? g->F[r]->ringSend[c] : g->F[r]->ringRecv[c];
}
static int far_of(const struct frags *g, int r, int c, int tail) {
  return tail ? g->F[r]->ringNext[c] : g->F[r]->ringPrev[c];
}

/* The agreed head (tail = 0) or tail (tail = 1) of node m on channel c, and
 * how many of its ranks hold it. tally[] must be all zero and is left so. */
static int agreed_value(const struct frags *g, int m, int c, int tail, int *tally, int *held) {
  const int *R = g->byNode + g->nodeStart[m];
  const int nR = g->nodeStart[m + 1] - g->nodeStart[m];
  int most = 0;
  for (int i = 0; i < nR; i++) {
    int v = val_of(g, R[i], c, tail);
    tally[v]++;
    if (tally[v] > most) most = tally[v];
  }
  /* among the values tied for most, those that name a rank of node m whose
   * own far-end field (ringPrev for a head, ringNext for a tail) is -1 */
  int confirmed = 0;
  for (int i = 0; i < nR && !confirmed; i++) {
    int v = val_of(g, R[i], c, tail);
    if (tally[v] == most && g->nodeOf[v] == m && far_of(g, v, c, tail) == -1) confirmed = 1;
  }
#define KEPT(v) \
  (tally[(v)] == most && (!confirmed || (g->nodeOf[(v)] == m && far_of(g, (v), c, tail) == -1)))
  int first = g->firsts[m], pick = -1;
  if (g->nodeOf[first] == m && KEPT(val_of(g, first, c, tail))) {
    pick = val_of(g, first, c, tail);
  } else {
    for (int i = 0; i < nR; i++) {
      int v = val_of(g, R[i], c, tail);
      if (KEPT(v) && (pick < 0 || v < pick)) pick = v;
    }
  }
#undef KEPT
  *held = tally[pick];
  for (int i = 0; i < nR; i++) tally[val_of(g, R[i], c, tail)] = 0;
  return pick;
}

/* Lists the contradictions of node m on channel c, in the documented order.
 * mark[], tally[] and aim[] must be all zero and are left so. */
static void node_contradictions(const struct frags *g, int m, int c, struct contra_list *l,
                                const struct work *w) {
  int *mark = w->mark, *tally = w->tally, *aim = w->aim, *low1 = w->low1, *low2 = w->low2;
  struct ncclTopoRanks *const *F = g->F;
  const int *R = g->byNode + g->nodeStart[m];
  const int nR = g->nodeStart[m + 1] - g->nodeStart[m];
  const int before = l->len;
  int heldH, heldT;
  const int hd = agreed_value(g, m, c, 0, tally, &heldH);
  const int tl = agreed_value(g, m, c, 1, tally, &heldT);

  for (int i = 0; i < nR; i++) {
    int s = R[i];
    if (F[s]->ringRecv[c] != hd)
      contra_add(l, s, -1,
                 format("ringRecv (head) is %d but node %d's head is %d (held by %d of its %d ranks)",
                        F[s]->ringRecv[c], m, hd, heldH, nR));
  }
  for (int i = 0; i < nR; i++) {
    int s = R[i];
    if (F[s]->ringSend[c] != tl)
      contra_add(l, s, -1,
                 format("ringSend (tail) is %d but node %d's tail is %d (held by %d of its %d ranks)",
                        F[s]->ringSend[c], m, tl, heldT, nR));
  }
  if (g->nodeOf[hd] != m) {
    if (nR == 1 && R[0] != hd && c == 0)
      contra_add(l, R[0], hd,
                 format("ringRecv[0] is %d, a rank of node %d: it makes node %d on its own", hd,
                        g->nodeOf[hd], m));
    else if (nR == 1 && R[0] != hd)
      contra_add(l, R[0], hd,
                 format("ringRecv (head) is %d, a rank of node %d, not of its own node %d", hd,
                        g->nodeOf[hd], m));
    else
      contra_add(l, hd, -1,
                 format("node %d's ranks have it as their head, but its ringRecv[0] is %d, which "
                        "puts it in node %d",
                        m, F[hd]->ringRecv[0], g->nodeOf[hd]));
  }
  if (g->nodeOf[tl] != m) {
    if (nR == 1 && R[0] != tl)
      contra_add(l, R[0], tl,
                 format("ringSend (tail) is %d, a rank of node %d, not of its own node %d", tl,
                        g->nodeOf[tl], m));
    else
      contra_add(l, tl, -1,
                 format("node %d's ranks have it as their tail, but its ringRecv[0] is %d, which "
                        "puts it in node %d",
                        m, F[tl]->ringRecv[0], g->nodeOf[tl]));
  }

  /* For "rank o is reached by nobody": aim[v] = 1 when some rank of R has
   * ringNext[c] == v; low1[s] and low2[s] are the two lowest ranks o of R
   * with ringPrev[c] == s that no rank of R aims at (R is in rank order). */
  for (int i = 0; i < nR; i++) {
    int b = F[R[i]]->ringNext[c];
    if (b >= 0) aim[b] = 1;
  }
  for (int i = 0; i < nR; i++) {
    int o = R[i], a = F[o]->ringPrev[c];
    if (a < 0 || aim[o]) continue;
    if (low1[a] < 0) low1[a] = o;
    else if (low2[a] < 0) low2[a] = o;
  }
  for (int i = 0; i < nR; i++) {
    int s = R[i];
    if (s != tl) {
      int b = F[s]->ringNext[c];
      if (b == -1) {
        contra_add(l, s, -1, format("ringNext is -1 but node %d's tail is %d", m, tl));
      } else if (g->nodeOf[b] != m) {
        contra_add(l, s, b,
                   format("ringNext is %d, a rank of node %d, not of its own node %d", b,
                          g->nodeOf[b], m));
      } else if (b == hd) {
        contra_add(l, s, -1, format("ringNext is %d, its node's head", b));
      } else if (F[b]->ringPrev[c] != s) {
        int nobody = low1[s] != b ? low1[s] : low2[s];
        if (nobody >= 0)
          contra_add(l, s, b,
                     format("ringNext is %d but rank %d's ringPrev is %d; rank %d is reached by nobody",
                            b, b, F[b]->ringPrev[c], nobody));
        else
          contra_add(l, s, b,
                     format("ringNext is %d but rank %d's ringPrev is %d", b, b, F[b]->ringPrev[c]));
      }
    }
    if (s != hd) {
      int a = F[s]->ringPrev[c];
      if (a == -1) {
        contra_add(l, s, -1, format("ringPrev is -1 but node %d's head is %d", m, hd));
      } else if (g->nodeOf[a] != m) {
        contra_add(l, s, a,
                   format("ringPrev is %d, a rank of node %d, not of its own node %d", a,
                          g->nodeOf[a], m));
      } else if (a == tl) {
        contra_add(l, s, -1, format("ringPrev is %d, its node's tail", a));
      } else if (F[a]->ringNext[c] != s) {
        contra_add(l, s, a,
                   format("ringPrev is %d but rank %d's ringNext is %d", a, a, F[a]->ringNext[c]));
      }
    }
  }
  for (int i = 0; i < nR; i++) {
    int b = F[R[i]]->ringNext[c], a = F[R[i]]->ringPrev[c];
    if (b >= 0) aim[b] = 0;
    if (a >= 0) low1[a] = low2[a] = -1;
  }

  if (l->len != before) return;
  /* segment: walk from hd along ringNext[c] through ranks of R, stopping after
   * tl, after |R| steps or at a rank already reached */
  int cur = hd;
  for (int steps = 0; steps < nR; steps++) {
    if (cur < 0 || g->nodeOf[cur] != m || mark[cur]) break;
    mark[cur] = 1;
    if (cur == tl) break;
    cur = F[cur]->ringNext[c];
  }
  int missing = -1;
  for (int i = 0; i < nR; i++) {
    if (!mark[R[i]] && missing < 0) missing = R[i];
    mark[R[i]] = 0;
  }
  if (missing >= 0)
    contra_add(l, missing, -1,
               format("not on node %d's segment from head %d to tail %d", m, hd, tl));
}

/* The stitched fallback on channel c (whose stitched ring fails). */
static char *stitched_detail(int N, const int *next, const int *prev, int *mark, int *who) {
  for (int s = 0; s < N; s++) {
    int x = next[s];
    if (x < 0) { *who = s; return format("after the stitch its next is %d", x); }
    if (prev[x] != s) {
      *who = s;
      return format("after the stitch its next is %d but rank %d's prev is %d", x, x, prev[x]);
    }
  }
  for (int s = 0; s < N; s++) {
    int p = prev[s];
    if (p < 0) { *who = s; return format("after the stitch its prev is %d", p); }
    if (next[p] != s) {
      *who = s;
      return format("after the stitch its prev is %d but rank %d's next is %d", p, p, next[p]);
    }
  }
  int reached = 0, cur = 0;
  while (cur >= 0 && !mark[cur]) {
    mark[cur] = 1;
    reached++;
    cur = next[cur];
  }
  int off = -1;
  for (int s = 0; s < N; s++) {
    if (!mark[s] && off < 0) off = s;
    mark[s] = 0;
  }
  *who = off < 0 ? 0 : off;
  return format("not on the ring through rank 0 (%d of %d ranks reached)", reached, N);
}

/* The one WARN of a P10 failure: "rank S, channel c: detail". Returns NULL
 * when out of memory. */
static char *diagnose(const struct frags *g, const int *next, const int *prev, const struct work *w) {
  int *mark = w->mark, *tally = w->tally;
  struct contra_list l = {0};
  char *out = NULL;
  for (int c = 0; c < g->n && out == NULL && !l.oom; c++) {
    for (int m = 0; m < g->M; m++) node_contradictions(g, m, c, &l, w);
    if (l.oom || l.len == 0) continue;
    /* votes: one to the subject, one to the other rank (tally[] as counter) */
    for (int i = 0; i < l.len; i++) {
      tally[l.v[i].subject]++;
      if (l.v[i].other >= 0) tally[l.v[i].other]++;
    }
    int S = -1;
    for (int r = 0; r < g->N; r++)
      if (tally[r] > 0 && (S < 0 || tally[r] > tally[S])) S = r;
    for (int i = 0; i < l.len; i++) {
      tally[l.v[i].subject] = 0;
      if (l.v[i].other >= 0) tally[l.v[i].other] = 0;
    }
    const struct contra *pick = NULL;
    for (int i = 0; i < l.len && pick == NULL; i++)
      if (l.v[i].subject == S) pick = &l.v[i];
    if (pick != NULL) {
      out = format("ncclTopoPostset: rank %d, channel %d: %s", S, c, pick->detail);
    } else {
      for (int i = 0; i < l.len && pick == NULL; i++)
        if (l.v[i].other == S) pick = &l.v[i];
      out = format("ncclTopoPostset: rank %d, channel %d: rank %d's %s", S, c, pick->subject,
                   pick->detail);
    }
    if (out == NULL) l.oom = 1;
  }
  int oom = l.oom;
  contra_clear(&l);
  free(l.v);
  if (out != NULL || oom) return out;
  /* No contradiction of any kind: the stitched rings decide. */
  const size_t NN = (size_t)g->N;
  for (int c = 0; c < g->n; c++) {
    const int *nx = next + (size_t)c * NN, *pv = prev + (size_t)c * NN;
    if (!ring_fails(g->N, nx, pv, mark)) continue;
    int who = 0;
    char *detail = stitched_detail(g->N, nx, pv, mark, &who);
    if (detail == NULL) return NULL;
    out = format("ncclTopoPostset: rank %d, channel %d: %s", who, c, detail);
    free(detail);
    return out;
  }
  /* Unreachable: an agreement failure always lists a contradiction. */
  return format("ncclTopoPostset: rank 0, channel 0: the fragments are not consistent");
}

/* ---- D28's verdict over the records ---- */

/* One field every valid record must share: its tally, and the WARN naming
 * the odd one out when they split. Returns 1 on a split (*text the WARN,
 * NULL when memory ran out), else 0. */
static int field_splits(int N, const int *kinds, const struct nccomRingRecord *recs, const char *name,
                        uint32_t (*value)(const struct nccomRingRecord *), show_fn show, const char *why,
                        char **text) {
  struct tally t;
  if (tally_of(N, kinds, recs, value, &t) != 0) return 1;
  if (t.odd < 0) {
    free(t.v);
    return 0;
  }
  char odd[32], ref[32];
  size_t len = 0;
  show(odd, sizeof odd, t.oddValue);
  show(ref, sizeof ref, t.v[0].value);
  FILE *f = open_memstream(text, &len);
  if (f != NULL) {
    fprintf(f, "ncclTopoPostset: rank %d has %s %s, unlike rank %d (%s %s, the most common): ", t.odd, name, odd,
            t.v[0].first, name, ref);
    tally_counts(f, &t, show);
    fprintf(f, "; %s (D28)", why);
    if (fclose(f) != 0) free(*text), *text = NULL;
  }
  free(t.v);
  return 1;
}

/* D28's checks of the records, in its order, once the fragments' own
 * checks and the ring walks passed: the channel-count match, unreadable
 * records (on SwitchV1 or in a pod job), an unknown platform, the
 * platform, enablePod (more than one node), nKangaRingChannels (on
 * SwitchV1), D27's preconditions and pod order. Returns ncclSuccess, or
 * the first failure's code with *text its WARN (malloc'ed; NULL when
 * memory ran out). Only the fragments are read, so every rank reaches the
 * same verdict. */
static ncclResult_t records_verdict(int N, int M, const int *kinds, const struct nccomRingRecord *recs,
                                    const struct census *cs, const struct job *job, char **text) {
  *text = NULL;
  if (cs->countRank >= 0) {
    *text = format("ncclTopoPostset: rank %d's fragment has %d channels, but its record says its graph has %d: the "
                   "fragment is not what its ncclTopoPreset wrote (D28)",
                   cs->countRank, cs->countOwn, cs->countRecord);
    return ncclInternalError;
  }
  /* With no valid record the facts are each rank's own: an unreadable
   * record then refuses nothing, or the ranks would part (D24). */
  if (cs->unreadable > 0 && job->records && (job->switchV1 || job->pods)) {
    char what[96], where[64];
    if (cs->unreadableVersion >= 0)
      snprintf(what, sizeof what, "version %d, this library reads version %d", cs->unreadableVersion,
               REF_RECORD_VERSION);
    else
      snprintf(what, sizeof what, "damaged");
    if (job->switchV1) snprintf(where, sizeof where, "on TRN3-SwitchV1");
    else snprintf(where, sizeof where, "with comm->enablePod on %d nodes", M);
    *text = format("ncclTopoPostset: rank %d's record is unreadable (%s; %d of %d records are): %s every rank's "
                   "record is needed (D28)",
                   cs->firstUnreadable, what, cs->unreadable, N, where);
    return ncclInternalError;
  }
  /* An unknown platform in any valid record: the lowest such rank, and
   * how many of the valid records say so. */
  int unknown = 0, firstUnknown = -1;
  for (int r = 0; r < N; r++) {
    if (kinds[r] != REC_VALID || !(recs[r].flags & REF_RECORD_UNKNOWN)) continue;
    if (unknown++ == 0) firstUnknown = r;
  }
  if (unknown > 0) {
    *text = format("ncclTopoPostset: rank %d's NCCOM_RING_PLATFORM named no platform (%d of %d valid records say "
                   "so): set it to generic or trn3-switchv1 on every rank (D28)",
                   firstUnknown, unknown, cs->valid);
    return ncclInternalError;
  }
  if (cs->mixed) {
    /* Valid records disagree on some fact: each fact every valid record
     * must share. */
    if (field_splits(N, kinds, recs, "platform", value_platform, show_platform,
                     "every rank must run on one platform", text) ||
        (M > 1 && field_splits(N, kinds, recs, "enablePod", value_pod, show_int,
                               "every rank must set comm->enablePod alike", text)) ||
        (job->switchV1 && field_splits(N, kinds, recs, "nKangaRingChannels", value_kanga, show_int,
                                       "every rank on TRN3-SwitchV1 must have the same count", text)))
      return ncclInternalError;
  }
  /* P13, P14: kangaRing preconditions (D13, D27), over every valid record
   * that says SwitchV1: the lowest rank that fails one is named. */
  for (int r = 0; r < N; r++) {
    const struct nccomRingRecord *rec = &recs[r];
    if (kinds[r] != REC_VALID || !(rec->flags & REF_RECORD_SWITCHV1)) continue;
    if (rec->virtualCoreSize != 0) {
      *text = format("ncclTopoPostset: kangaRing precondition failed: virtual core size of rank %d is %d, expected 0",
                     r, rec->virtualCoreSize);
      return ncclInternalError;
    }
    if (rec->jbogId < 1 || rec->jbogId > 3) {
      *text = format("ncclTopoPostset: kangaRing precondition failed: JBOG id of rank %d is %d, expected 1, 2 or 3",
                     r, rec->jbogId);
      return ncclInternalError;
    }
  }
  /* P12: UltraServer pods (D15, D27), stitched in node order only when
   * every valid record says NCCOM_RING_POD_ORDER=node; another ring
   * stage's fragment is not checked here (D28), an unreadable one failed
   * above. */
  if (job->pods) {
    for (int r = 0; r < N; r++) {
      if (kinds[r] != REC_VALID || (recs[r].flags & REF_RECORD_POD_NODE)) continue;
      *text = format("ncclTopoPostset: comm->enablePod is set on %d nodes: UltraServer pod ordering "
                     "(ncclTopoGetP2pPodInterNodeGraph) is not reimplemented; set NCCOM_RING_POD_ORDER=node on "
                     "every rank to stitch in node order (rank %d did not)",
                     M, r);
      return ncclInvalidUsage;
    }
  }
  return ncclSuccess;
}

REF_EXPORT ncclResult_t ncclTopoPostset(struct ncclComm *comm, int *nodesFirstRank,
                                        struct ncclTopoRanks **allTopoRanks, int *nChannels,
                                        int *nNodes) {
  const void *caller = __builtin_return_address(0); /* P18: only when no record was gathered (D28) */
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
  if (N <= 0) {
    ref_warn(rank, "ncclTopoPostset: comm->nRanks %d is not positive", N);
    return ncclInvalidArgument;
  }
  if (rank < 0 || rank >= N) {
    ref_warn(rank, "ncclTopoPostset: comm->rank %d is outside [0, %d)", rank, N);
    return ncclInvalidArgument;
  }
  /* D28: comm->nKangaRingChannels, comm->enablePod and the platform are not
   * read here: every rank's travel in its record. comm->nChannels is read
   * only for D27's own-count WARN, which changes no result. */
  const int ownCount = comm->nChannels;

  struct ncclTopoRanks **F = allTopoRanks;
  /* Pass A (P7) */
  for (int r = 0; r < N; r++) {
    if (F[r] == NULL) {
      ref_warn(rank, "ncclTopoPostset: allTopoRanks[%d] is NULL", r);
      return ncclInvalidArgument;
    }
  }
  /* From here on nothing before the commit reads comm->rank (D24, D28).
   * The job's channel count is the smallest of any fragment's, so rank
   * 0's bounds it. */
  const int C = fragment_channels(F[0]);

  struct postset_scratch s;
  memset(&s, 0, sizeof s);
  const size_t NN = (size_t)N;
  /* P7b */
  /* The library's block: its link tables, node tables and the walks it
   * records (2 + 3C ints a rank); this model uses the first 2 + 2C. */
  ncclResult_t res = working_memory(&s.work, (2 + 3 * (size_t)C) * NN, N, C, rank);
  if (res != ncclSuccess) return res;
  s.count = s.work;
  s.nodeOf = s.work + NN;
  s.next = s.work + 2 * NN;
  s.prev = s.next + (size_t)C * NN;
  s.book = calloc((18 + (size_t)C) * NN + 1, sizeof(int));
  s.recs = calloc(NN, sizeof *s.recs);
  if (s.book == NULL || s.recs == NULL) {
    ref_warn(rank, "ncclTopoPostset: malloc of %zu bytes of scratch failed",
             ((18 + (size_t)C) * NN + 1) * sizeof(int) + NN * sizeof *s.recs);
    postset_free(&s);
    return ncclSystemError;
  }
  s.headNode = s.book;
  s.firsts = s.book + NN;
  s.byNode = s.book + 2 * NN;
  s.mark = s.book + 3 * NN;
  s.nodeStart = s.book + 4 * NN;
  s.rings = s.book + 5 * NN + 1;
  s.kinds = s.rings + (size_t)C * NN;
  s.versions = s.kinds + NN;
  s.seq = s.versions + NN;
  s.S = s.seq + NN;
  s.nodeLoc = s.S + NN;
  s.gmin = s.nodeLoc + NN;

  /* D23, D27: the channel count (P7a), from the fragments alone. */
  for (int r = 0; r < N; r++) s.count[r] = fragment_channels(F[r]);
  for (int r = 0; r < N; r++) {
    if (s.count[r] == 0) {
      ref_warn(rank, "ncclTopoPostset: rank %d: ringRecv[0] is %d, so its fragment has no channel", r,
               F[r]->ringRecv[0]);
      postset_free(&s);
      return ncclInternalError;
    }
  }
  int n = C, holder = 0;
  for (int r = 0; r < N; r++)
    if (s.count[r] < n) n = s.count[r], holder = r;

  /* Ranges (P8, P9): channel by channel, then rank by rank, then field order. */
  for (int c = 0; c < n; c++) {
    for (int r = 0; r < N; r++) {
      const struct ncclTopoRanks *T = F[r];
      const char *field = NULL;
      int v = 0, lo = 0;
      if (T->ringRecv[c] < 0 || T->ringRecv[c] >= N) field = "ringRecv", v = T->ringRecv[c];
      else if (T->ringSend[c] < 0 || T->ringSend[c] >= N) field = "ringSend", v = T->ringSend[c];
      else if (T->ringPrev[c] < -1 || T->ringPrev[c] >= N) field = "ringPrev", v = T->ringPrev[c], lo = -1;
      else if (T->ringNext[c] < -1 || T->ringNext[c] >= N) field = "ringNext", v = T->ringNext[c], lo = -1;
      if (field != NULL) {
        ref_info(SUB_INIT, rank,
                 "ncclTopoPostset: %d channels, the smallest channel count of any fragment, first held "
                 "by rank %d (D23)",
                 n, holder);
        ref_warn(rank, "ncclTopoPostset: rank %d, channel %d: %s is %d, outside [%d, %d)", r, c, field,
                 v, lo, N);
        postset_free(&s);
        return ncclInvalidArgument;
      }
    }
  }

  /* Nodes (D8): in order of first appearance of each ringRecv[0]. */
  int M = 0;
  for (int i = 0; i < N; i++) s.headNode[i] = -1;
  for (int r = 0; r < N; r++) {
    int h = F[r]->ringRecv[0];
    if (s.headNode[h] < 0) {
      s.headNode[h] = M;
      s.firsts[M] = h;
      M++;
    }
    s.nodeOf[r] = s.headNode[h];
  }
  /* the ranks of every node, in rank order (counting sort) */
  for (int m = 0; m <= M; m++) s.nodeStart[m] = 0;
  for (int r = 0; r < N; r++) s.nodeStart[s.nodeOf[r] + 1]++;
  for (int m = 0; m < M; m++) s.nodeStart[m + 1] += s.nodeStart[m];
  for (int r = 0; r < N; r++) s.byNode[s.nodeStart[s.nodeOf[r]] + s.mark[s.nodeOf[r]]++] = r;
  for (int m = 0; m < M; m++) s.mark[m] = 0;

  /* Consistency (P10), first upstream's agreement on every channel. */
  const int nFinal = 2 * n < REF_MAXCHANNELS ? 2 * n : REF_MAXCHANNELS; /* D10 */
  struct frags g = {F, N, n, M, s.nodeOf, s.firsts, s.byNode, s.nodeStart, s.firsts};
  int inconsistent = 0;
  for (int c = 0; c < n && !inconsistent; c++) inconsistent = agreement_fails(&g, c);

  /* The records (D25, D27, D28): every rank's, its kind, and their
   * census; the job's facts and the node order are decided from them once
   * the nodes are found and every fragment agrees with its node;
   * otherwise (a failing call) the stitch follows D8's order. */
  for (int r = 0; r < N; r++) s.kinds[r] = record_kind(F[r], r, &s.recs[r], &s.versions[r]);
  struct census cs;
  take_census(N, s.kinds, s.versions, s.recs, s.count, &cs);
  struct job job = {0};
  struct order ord;
  memset(&ord, 0, sizeof ord);
  ord.seq = s.seq;
  ord.S = s.S;
  ord.kase = ORDER_RANK;
  for (int m = 0; m < M; m++) s.seq[m] = m, s.S[m] = s.firsts[m];
  if (!inconsistent) {
    if (cs.valid > 0) {
      job.records = 1;
      job.switchV1 = cs.switchV1 > 0;
      job.pods = M > 1 && cs.enablePod > 0;
      job.paths = (cs.flags0 >> REF_RECORD_KANGA_SHIFT) & 0x7;
    } else {
      /* D28: no fragment holds a valid record (the host did not gather
       * +832...+895): the one case where this rank's own state decides,
       * its platform (an unknown NCCOM_RING_PLATFORM counting as generic:
       * Preset printed its WARN) and, on SwitchV1, its
       * nKangaRingChannels. Nothing says enablePod: no pod job. */
      struct platform pl;
      get_platform("ncclTopoPostset", rank, caller, &pl);
      if (pl.switchv1) {
        const int nK = comm->nKangaRingChannels;
        if (nK < 0 || nK > REF_MAX_KANGA_PATHS) {
          ref_info(SUB_INIT, rank,
                   "ncclTopoPostset: %d channels, the smallest channel count of any fragment, first held "
                   "by rank %d (D23)",
                   n, holder);
          ref_warn(rank, "ncclTopoPostset: comm->nKangaRingChannels %d is outside [0, 4]", nK);
          postset_free(&s);
          return ncclInvalidArgument;
        }
        job.switchV1 = 1;
        job.paths = nK;
      }
    }
    if (decide_order(&g, s.recs, s.kinds, &cs, &job, s.nodeLoc, s.gmin, &ord) != 0) {
      ref_warn(rank, "ncclTopoPostset: out of memory formatting the node order's WARN");
      postset_free(&s);
      return ncclSystemError;
    }
  }
  g.S = s.S;
  /* P7a's INFO line: printed whatever follows (D23). */
  ref_info(SUB_INIT, rank,
           "ncclTopoPostset: %d channels, the smallest channel count of any fragment, first held "
           "by rank %d (D23)",
           n, holder);

  /* Stitch every channel over S and check its ring. */
  int ringFail[REF_MAXCHANNELS] = {0};
  for (int c = 0; c < n; c++) {
    stitch_channel(&g, c, s.next + (size_t)c * NN, s.prev + (size_t)c * NN);
    ringFail[c] = ring_fails(N, s.next + (size_t)c * NN, s.prev + (size_t)c * NN, s.mark);
    if (ringFail[c]) inconsistent = 1;
  }
  if (inconsistent) {
    if (rank == 0 && info_enabled(SUB_INIT)) {
      for (int c = 0; c < n; c++)
        if (ringFail[c]) print_walk_line(rank, c, n, s.next + (size_t)c * NN, N);
    }
    res = working_memory(&s.diag, 4 * NN, N, C, rank);
    if (res != ncclSuccess) { free(ord.warn); postset_free(&s); return res; }
    s.tally = s.diag;
    s.aim = s.diag + NN;
    s.low1 = s.diag + 2 * NN;
    s.low2 = s.diag + 3 * NN;
    for (size_t i = 0; i < 2 * NN; i++) s.tally[i] = 0;
    for (size_t i = 0; i < 2 * NN; i++) s.low1[i] = -1;
    const struct work w = {s.mark, s.tally, s.aim, s.low1, s.low2};
    char *text = diagnose(&g, s.next, s.prev, &w);
    if (text == NULL) {
      ref_warn(rank, "ncclTopoPostset: out of memory formatting the diagnosis");
      free(ord.warn);
      postset_free(&s);
      return ncclSystemError;
    }
    ref_warn(rank, "%s", text);
    free(text);
    free(ord.warn);
    postset_free(&s);
    return ncclInternalError;
  }

  /* D28's verdict over the records, in its order; the first that fails is
   * every rank's. */
  char *verdict = NULL;
  res = records_verdict(N, M, s.kinds, s.recs, &cs, &job, &verdict);
  if (res != ncclSuccess) {
    if (verdict) ref_warn(rank, "%s", verdict);
    else ref_warn(rank, "ncclTopoPostset: out of memory formatting the records' verdict");
    free(verdict);
    free(ord.warn);
    postset_free(&s);
    return verdict ? res : ncclSystemError;
  }

  /* This rank's walks (they cannot fail now: every ring is one cycle
   * through all N ranks); the doubled channels repeat ring c - n (D10). */
  for (int c = 0; c < n; c++) {
    const int *nx = s.next + (size_t)c * NN;
    int *ring = s.rings + (size_t)c * NN;
    int cur = rank;
    for (int i = 0; i < N; i++) {
      ring[i] = cur;
      cur = nx[cur];
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
      free(ord.warn);
      postset_free(&s);
      return ncclSystemError;
    }
  }
  /* Then the writes; nothing below can fail. prev is the ring's last rank,
   * next its second. */
  for (int c = 0; c < n; c++) {
    const int *ring = s.rings + (size_t)c * NN;
    int p = ring[N - 1];
    int x = ring[1 % N];
    comm->channels[c].ring.prev = p;
    comm->channels[c].ring.next = x;
    if (c + n < REF_MAXCHANNELS) {
      comm->channels[c + n].ring.prev = p;
      comm->channels[c + n].ring.next = x;
    }
  }
  for (int c = 0; c < nFinal; c++) {
    if (fresh[c] != NULL) comm->channels[c].ring.userRanks = fresh[c];
    memcpy(comm->channels[c].ring.userRanks, s.rings + (size_t)(c % n) * NN, NN * sizeof(int));
  }
  comm->nChannels = nFinal;
  *nChannels = nFinal;
  comm->nNodes = M;
  *nNodes = M;
  comm->node = s.nodeOf[rank];
  memcpy(nodesFirstRank, s.firsts, (size_t)M * sizeof(int));
  /* D13, D28: the job's platform and nKangaRingChannels, as the records say. */
  const int nv = N < 16 ? N : 16;
  if (job.switchV1) {
    for (int k = 0; k < job.paths; k++)
      for (int v = 0; v < nv; v++)
        memcpy(&comm->kangaRing[k][4 * v], F[v]->JbogKangaringPath[k], 4 * sizeof(int));
  }

  /* D27, D28: a rank whose own graph's count (comm->nChannels as its
   * Preset set it) is not the job's, in either direction, is told so (its
   * GetNetDev sees only its own graph); the result stands. */
  if (ownCount != n)
    ref_warn(rank,
             "ncclTopoPostset: this rank's graph has %d channels (comm->nChannels), the job %d (the smallest "
             "channel count of any fragment, first held by rank %d): give its ncclTopoGetNetDev a graph of %d "
             "channels, or its channels use the NICs of another graph channel (D27, D28)",
             ownCount, n, holder, n);
  /* D28's notes on the records, the same on every rank: none valid (WARN),
   * or some of another ring stage (INFO). */
  if (cs.valid == 0)
    ref_warn(rank,
             "ncclTopoPostset: no fragment holds a valid record of this library (%d of %d carry its magic, damaged "
             "or of another version): the host did not gather bytes +832...+895 of struct ncclTopoRanks, or its "
             "ranks run another version of this library; each rank takes its platform from itself and nodes are "
             "stitched in rank order (D28)",
             N - cs.none, N);
  else if (cs.others > 0)
    ref_warn(rank,
             "ncclTopoPostset: rank %d's record is of version %d, this library reads version %d (%d of %d records are "
             "of another version): those ranks run another version of this library; this job needs nothing they "
             "carry, so every rank goes on (D28)",
             cs.firstOther, cs.otherVersion, REF_RECORD_VERSION, cs.others, N);
  if (cs.valid > 0 && cs.none > 0)
    ref_info(SUB_INIT, rank,
             "ncclTopoPostset: rank %d's fragment carries no record of this library (%d of %d fragments: another "
             "ring stage, such as libnccom's own): not checked here, their own library checks them (D28)",
             cs.firstNone, cs.none, N);
  order_warns(rank, &ord, M);

  /* INFO lines after the commit (P12); the D23 count line came first.
   * errors.md does not place the node order's INFO lines among the others;
   * the library prints them first, so the model does too. */
  order_infos(rank, &ord, M);
  if (rank == 0) print_channel_lines(rank, nFinal, s.rings, N, n);
  if (job.pods)
    ref_info(SUB_INIT, rank,
             "ncclTopoPostset: enablePod set on %d nodes: stitching in node order "
             "(NCCOM_RING_POD_ORDER=node)",
             M);
  if (job.switchV1 && info_enabled(SUB_INIT)) {
    ref_info(SUB_INIT, rank, "built %d kangaring paths", job.paths);
    for (int k = 0; k < job.paths; k++) {
      char buf[16 * 4 * 12 + 16];
      int len = 0;
      buf[0] = 0;
      for (int i = 0; i < 4 * nv; i++)
        len += snprintf(buf + len, sizeof buf - (size_t)len, i ? " %d" : "%d", comm->kangaRing[k][i]);
      ref_info(SUB_INIT, rank, "kangaring path[%d]=%s", k, buf);
    }
  }
  free(ord.warn);
  postset_free(&s);
  return ncclSuccess;
}

/* ===================================================================== */
/* ncclTopoGetNetDev (D18, D19, P10, P17; errors.md G1..G9)               */
/* ===================================================================== */

REF_EXPORT ncclResult_t ncclTopoGetNetDev(struct ncclTopoSystem *sys, int rank,
                                          struct ncclTopoGraph *graph, int channelId, int *dev) {
  const void *caller = __builtin_return_address(0); /* P18, D19 */
  dbg_init();
  if (dev == NULL) { ref_warn(rank, "ncclTopoGetNetDev: dev is NULL"); return ncclInvalidArgument; }
  if (graph == NULL) {
    localnet_fn_t localnet; /* D19, P18: looked up on every such call */
    void *p = host_dlsym(caller, LOCALNET_NAMES);
    memcpy(&localnet, &p, sizeof p);
    if (localnet != NULL) return localnet(sys, rank, dev); /* G2: passed through */
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
