/*
 * nccomring_preload.c - build/libnccomring-preload.so, the library to
 * LD_PRELOAD over libnccom for a whole job.
 *
 * build/libnccomring.so is a Go c-shared library: loading it starts the Go
 * runtime (threads, ~1.6 GB of reserved address space) in every process the
 * preload reaches, including shells, tools and data-loader workers that never
 * build a ring, and under a small RLIMIT_AS the runtime cannot start at all.
 * This library is plain C. It exports the four ring-stage functions (C and
 * C++ names, exports.map) and nothing else, does nothing at load, and loads
 * the Go library only at the first ring-stage call in the process:
 *
 *   - the library: $NCCOMRING_LIBRARY when set and not empty (read at that
 *     first call; ignored under secure execution, env.h), else
 *     libnccomring.so.0 in the directory this library was loaded from
 *     (found at load with dladdr and realpath); dlopen'ed RTLD_NOW |
 *     RTLD_LOCAL, so none of its symbols enter the global scope;
 *   - the entry points: the four nccomring_*_from functions of entry.h, which
 *     take the caller's address first. Each function here passes its own
 *     return address, a point inside the object that called it (libnccom),
 *     so the Go library looks the host's hooks up there and not here.
 *
 * One load attempt per process (pthread_once). When it fails (no such file,
 * not loadable, an entry point missing, or an RLIMIT_AS too small for the
 * Go runtime to start, which would otherwise kill the process), that call
 * and every later one return ncclSystemError, the code NCCL gives a failed
 * system or library call, and write nothing; each such call prints one WARN
 * line naming the path and the reason (dlerror()'s text, the missing entry
 * point, or the address space left) when NCCL_DEBUG asks for warnings. The
 * line is the library's own logger's (log.c, compiled into this library
 * with env.c and hostsym.c): the same NCCL_DEBUG, NCCL_DEBUG_SUBSYS and
 * NCCL_DEBUG_FILE, read at the first failing call, the same line format and
 * destinations, but stderr where the library would use stdout. A child
 * forked before the first call has no library yet and loads its own; a
 * child forked after it inherits the loaded library, which refuses calls
 * from a forked child itself (docs/errors.md E1).
 *
 * The glibc floor (docs/building.md, "Platform"; make test-glibc): glibc 2.34 moved the dl* and
 * pthread functions into libc under a new default version, GLIBC_2.34; a
 * plain link would bind to it and glibc < 2.34 could not load this
 * library. The build includes glibc_floor.h in each of its files, which
 * binds them to their first version.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "entry.h"
#include "env.h"
#include "log.h"

#define DEFAULT_LIBRARY "libnccomring.so.0"
/* The address space the Go runtime needs to start under an RLIMIT_AS (Go
 * 1.26, x86-64, measured: it took about 795 MiB, died with 798 MiB left and
 * ran with 818 MiB). With less than this left it always dies at start
 * ("failed to reserve page summary memory", "out of memory", "pthread_create
 * failed"), taking the process with it. */
#define GO_RUNTIME_RESERVE_MIB 800

typedef ncclResult_t (*preset_from_t)(void *, struct ncclComm *, struct ncclTopoGraph *,
                                      struct ncclTopoRanks *);
typedef ncclResult_t (*postset_from_t)(void *, struct ncclComm *, int *, struct ncclTopoRanks **,
                                       int *, int *);
typedef ncclResult_t (*build_rings_from_t)(void *, int, int *, int, int, int *, int *);
typedef ncclResult_t (*get_net_dev_from_t)(void *, struct ncclTopoSystem *, int,
                                           struct ncclTopoGraph *, int, int *);

/* Written once by load_library under load_once, read only after it. */
static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static preset_from_t preset_from;
static postset_from_t postset_from;
static build_rings_from_t build_rings_from;
static get_net_dev_from_t get_net_dev_from;
static char library_path[PATH_MAX];
static char load_error[512]; /* empty when the library and its entry points were found */

/* libnccomring.so.0 in the directory this library's file is in: the Go
 * library beside it; empty when it cannot be known. Set once, at load
 * (find_self), before the process can change directory: dladdr gives the
 * name the loader was given, which is relative when LD_PRELOAD's was, and
 * realpath makes it absolute against the directory of that moment. (It
 * once read /proc/self/maps line by line instead, and a file mapped from a
 * path longer than its line buffer could forge the line for this library,
 * docs/security.md.) */
static char beside[PATH_MAX];

__attribute__((constructor)) static void find_self(void) {
  Dl_info info;
  static char real[PATH_MAX]; /* realpath's buffer must hold PATH_MAX bytes */
  if (!dladdr((void *)&find_self, &info) || info.dli_fname == NULL) return;
  if (realpath(info.dli_fname, real) == NULL) return;
  char *slash = strrchr(real, '/');
  if (slash == NULL) return;
  size_t dir = (size_t)(slash + 1 - real);
  if (dir + sizeof DEFAULT_LIBRARY > sizeof beside) return; /* cannot name it */
  memcpy(beside, real, dir);
  memcpy(beside + dir, DEFAULT_LIBRARY, sizeof DEFAULT_LIBRARY);
}

/* $NCCOMRING_LIBRARY (never under secure execution: nccomring_env ignores
 * it there, env.h), else libnccomring.so.0 beside this library (or the
 * bare name, searched by the loader, when this library's file is unknown).
 * Returns -1, with load_error set, for a name too long to hold: a cut name
 * could be another file. */
static int choose_library(void) {
  const char *chosen = nccomring_env(NCCOMRING_ENV_LIBRARY);
  if (chosen) {
    if (strlen(chosen) >= sizeof library_path) {
      snprintf(load_error, sizeof load_error, "NCCOMRING_LIBRARY is longer than %d bytes; not loaded",
               (int)sizeof library_path - 1);
      snprintf(library_path, sizeof library_path, "%.*s", 64, chosen);
      return -1;
    }
    memcpy(library_path, chosen, strlen(chosen) + 1);
    return 0;
  }
  const char *path = beside[0] ? beside : DEFAULT_LIBRARY;
  memcpy(library_path, path, strlen(path) + 1); /* both fit: sizeof beside == sizeof library_path */
  return 0;
}

static void *entry_point(void *handle, const char *name) {
  if (load_error[0]) return NULL; /* keep the first miss */
  dlerror();
  void *p = dlsym(handle, name);
  if (p == NULL) {
    const char *why = dlerror();
    snprintf(load_error, sizeof load_error, "no entry point %s (%s)", name,
             why ? why : "not defined");
  }
  return p;
}

/* Fills load_error and returns -1 when RLIMIT_AS leaves too little address
 * space for the Go runtime to start: loading it would kill the process.
 * Above the threshold the runtime may still fail near the limit (each of its
 * threads needs a stack); below it, it always does. */
static int check_address_space(void) {
  struct rlimit limit;
  if (getrlimit(RLIMIT_AS, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY) return 0;
  unsigned long long used = 0; /* VmSize: the first field of statm, in pages */
  char text[128];
  FILE *statm = fopen("/proc/self/statm", "re");
  if (statm) {
    if (fgets(text, sizeof text, statm))
      used = strtoull(text, NULL, 10) * (unsigned long long)sysconf(_SC_PAGESIZE);
    fclose(statm);
  }
  unsigned long long cap = (unsigned long long)limit.rlim_cur;
  unsigned long long left = cap > used ? (cap - used) >> 20 : 0;
  if (left >= GO_RUNTIME_RESERVE_MIB) return 0;
  snprintf(load_error, sizeof load_error,
           "RLIMIT_AS (ulimit -v) leaves %llu MiB of address space and the Go runtime needs "
           "about %d MiB to start; not loaded",
           left, GO_RUNTIME_RESERVE_MIB);
  return -1;
}

static void load_library(void) {
  if (choose_library() != 0 || check_address_space() != 0) return;
  void *handle = dlopen(library_path, RTLD_NOW | RTLD_LOCAL);
  if (handle == NULL) {
    const char *why = dlerror();
    snprintf(load_error, sizeof load_error, "%s", why ? why : "dlopen failed");
    return;
  }
  /* A handle that lacks an entry point stays open: if it is a Go library,
   * closing it would not unmap it anyway. */
  void *preset = entry_point(handle, "nccomring_topo_preset_from");
  void *postset = entry_point(handle, "nccomring_topo_postset_from");
  void *rings = entry_point(handle, "nccomring_build_rings_from");
  void *netdev = entry_point(handle, "nccomring_topo_get_net_dev_from");
  if (load_error[0]) return;
  preset_from = (preset_from_t)preset;
  postset_from = (postset_from_t)postset;
  build_rings_from = (build_rings_from_t)rings;
  get_net_dev_from = (get_net_dev_from_t)netdev;
}

/* One WARN for a call that cannot be served: NCCL's line, from the logger
 * the library uses (log.h), which reads NCCL_DEBUG and the rest at the
 * first such call. caller: the code address the export was called from,
 * where the logger looks for libnccom's ncclDebugFile. Kept out of line:
 * its buffer stays off the exports' frames. */
__attribute__((noinline)) static void warn_not_loaded(const char *fn, int rank, void *caller) {
  nccomring_log_init(caller, NCCOMRING_LOG_TO_STDERR);
  if (nccomring_log_level < NCCOMRING_LOG_WARN) return;
  char shown[1024]; /* quoted, cut with "... beyond */
  char text[sizeof shown + sizeof load_error + 128];
  snprintf(text, sizeof text, "%s: cannot load the ring stage from %s: %s", fn,
           nccomring_quote(shown, sizeof shown, library_path), load_error);
  nccomring_log(NCCOMRING_LOG_WARN, 0, rank, text);
}

/* Loads the library at the first call in the process; returns 0 when its
 * entry points are there, else -1 after the WARN. */
static int ready(const char *fn, int rank, void *caller) {
  pthread_once(&load_once, load_library);
  if (load_error[0] == '\0') return 0;
  warn_not_loaded(fn, rank, caller);
  return -1;
}

/*
 * The four exports. Each passes __builtin_return_address(0), its own return
 * address, which lies in the object that called it. KEEP_FRAME after the
 * call keeps the compiler from turning the call into a jump (a sibling
 * call, which GCC makes at -O2 otherwise): the shim's frame stays on the
 * stack while the Go library runs, so the address handed over is the one in
 * that frame and a backtrace reads libnccom, shim, library (test-preload
 * checks the machine code with objdump). The rank in a WARN is the rank
 * argument where there is one; comm is never read here (a bad pointer is
 * the Go library's to report).
 */
#define KEEP_FRAME(rc) __asm__ __volatile__("" : "+r"(rc))

ncclResult_t ncclTopoPreset(struct ncclComm *comm, struct ncclTopoGraph *graph,
                            struct ncclTopoRanks *topoRanks) {
  if (ready("ncclTopoPreset", -1, __builtin_return_address(0)) != 0) return ncclSystemError;
  ncclResult_t rc = preset_from(__builtin_return_address(0), comm, graph, topoRanks);
  KEEP_FRAME(rc);
  return rc;
}

ncclResult_t ncclTopoPostset(struct ncclComm *comm, int *nodesFirstRank,
                             struct ncclTopoRanks **allTopoRanks, int *nChannels, int *nNodes) {
  if (ready("ncclTopoPostset", -1, __builtin_return_address(0)) != 0) return ncclSystemError;
  ncclResult_t rc = postset_from(__builtin_return_address(0), comm, nodesFirstRank, allTopoRanks,
                                 nChannels, nNodes);
  KEEP_FRAME(rc);
  return rc;
}

ncclResult_t ncclBuildRings(int nrings, int *rings, int rank, int nranks, int *prev, int *next) {
  if (ready("ncclBuildRings", rank, __builtin_return_address(0)) != 0) return ncclSystemError;
  ncclResult_t rc =
      build_rings_from(__builtin_return_address(0), nrings, rings, rank, nranks, prev, next);
  KEEP_FRAME(rc);
  return rc;
}

ncclResult_t ncclTopoGetNetDev(struct ncclTopoSystem *sys, int rank, struct ncclTopoGraph *graph,
                               int channelId, int *dev) {
  if (ready("ncclTopoGetNetDev", rank, __builtin_return_address(0)) != 0) return ncclSystemError;
  ncclResult_t rc =
      get_net_dev_from(__builtin_return_address(0), sys, rank, graph, channelId, dev);
  KEEP_FRAME(rc);
  return rc;
}

/*
 * The names a C++ build of libnccom (upstream NCCL declares these functions
 * in C++ without extern "C") calls and exports. Each is a second name of the
 * C function above, so it has the same frame and the same return address;
 * c++filt reads them as
 *   ncclTopoPreset(ncclComm*, ncclTopoGraph*, ncclTopoRanks*)
 *   ncclTopoPostset(ncclComm*, int*, ncclTopoRanks**, int*, int*)
 *   ncclBuildRings(int, int*, int, int, int*, int*)
 *   ncclTopoGetNetDev(ncclTopoSystem*, int, ncclTopoGraph*, int, int*)
 */
#define CXX_NAME(cname, mangled) __asm__(mangled) __attribute__((alias(cname)))

ncclResult_t preload_cxx_preset(struct ncclComm *, struct ncclTopoGraph *, struct ncclTopoRanks *)
    CXX_NAME("ncclTopoPreset", "_Z14ncclTopoPresetP8ncclCommP13ncclTopoGraphP13ncclTopoRanks");
ncclResult_t preload_cxx_postset(struct ncclComm *, int *, struct ncclTopoRanks **, int *, int *)
    CXX_NAME("ncclTopoPostset", "_Z15ncclTopoPostsetP8ncclCommPiPP13ncclTopoRanksS1_S1_");
ncclResult_t preload_cxx_build_rings(int, int *, int, int, int *, int *)
    CXX_NAME("ncclBuildRings", "_Z14ncclBuildRingsiPiiiS_S_");
ncclResult_t preload_cxx_get_net_dev(struct ncclTopoSystem *, int, struct ncclTopoGraph *, int,
                                     int *)
    CXX_NAME("ncclTopoGetNetDev", "_Z17ncclTopoGetNetDevP14ncclTopoSystemiP13ncclTopoGraphiPi");
