/*
 * shim.c - the public entry points of libnccomring and its host hooks.
 *
 * Each export refuses a call from a forked child before entering Go (P16,
 * docs/errors.md E1), starts logging (D21) and hands over to the Go half
 * (exports.go). The host's optional platform hooks (D14) and its
 * ncclTopoGetLocalNet (D19) are looked up with nccomring_host_symbol
 * (hostsym.c), never linked. shim.h says which state is whose.
 */
#include "shim.h"
#include "entry.h"
#include "_cgo_export.h"

#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>

static volatile int in_forked_child;

static void on_fork_child(void) { in_forked_child = 1; }

/*
 * The Go runtime runs goroutines on small stacks. A host signal handler
 * installed without SA_ONSTACK that fires on a thread while it runs Go code
 * runs on that stack and can overflow it (a fatal "traceback did not unwind"
 * later). At load the runtime adds SA_ONSTACK to the handlers the host has
 * already installed; for a handler installed later, rewriting the
 * process-wide disposition on every call would race with a host changing
 * its handlers from another thread. So each entry point instead blocks the
 * asynchronous signals on the calling thread, and only there, while it runs
 * Go code, and restores the thread's mask on the way out: a signal that
 * arrives meanwhile waits and is delivered on the host's own stack. The
 * synchronous signals stay open (a fault in Go is a recoverable panic, D20).
 * Cost: two pthread_sigmask calls per call.
 *
 * One exception is the Go runtime's own: the first time a thread enters Go,
 * the runtime binds itself to the thread and unblocks the signals it must
 * always see (SIGPROF among them) on it. So that first entry is an empty
 * Go function (goBindThread), after which the mask is blocked again before
 * the real work: what remains is about a microsecond of Go code, once per
 * thread, with those signals open.
 */
static sigset_t async_signals;
static __thread int thread_bound; /* this thread has entered Go before */

/* Blocks the asynchronous signals on this thread; *saved gets its mask. */
static void enter_go(sigset_t *saved) {
  pthread_sigmask(SIG_BLOCK, &async_signals, saved);
  if (!thread_bound) {
    thread_bound = 1;
    goBindThread();
    pthread_sigmask(SIG_BLOCK, &async_signals, NULL);
  }
}

/* Set by the process's first call into Go as it returns. That call's end
 * is when the Go half retires the threads its runtime started since load
 * (goFirstCallEnded, ABI note P25): once, whichever thread made it. */
static int first_call_ended;

static void leave_go(const sigset_t *saved) {
  if (!__atomic_load_n(&first_call_ended, __ATOMIC_ACQUIRE) &&
      !__atomic_exchange_n(&first_call_ended, 1, __ATOMIC_ACQ_REL))
    goFirstCallEnded();
  pthread_sigmask(SIG_SETMASK, saved, NULL);
}

static void init_async_signals(void) {
  sigfillset(&async_signals);
  static const int synchronous[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTRAP, SIGSYS, SIGABRT};
  for (size_t i = 0; i < sizeof synchronous / sizeof synchronous[0]; i++)
    sigdelset(&async_signals, synchronous[i]);
}

/*
 * The Go runtime's threads take their signal mask from the thread that
 * loaded the library (the runtime starts on a thread its constructor
 * creates, and every later runtime thread copies that one's mask). At a
 * preload that mask is empty, so the runtime's threads could take a
 * process-directed signal the host blocks in all of its own threads and
 * waits for (sigwaitinfo, sigsuspend): the host would miss it, or a
 * SIGTERM with the default action would end the process. So the loading
 * thread blocks the asynchronous signals for the span of the runtime's
 * constructor: mask_at_load, first (priority 101), and shim_load, after
 * it (the linker orders prioritised constructors first and Go's runtime
 * object before cgo's; `hostile LIB sigwait` fails if that changes), which
 * restores the thread's own mask. The runtime still opens on its threads
 * the few it must see whatever the mask (SIGCHLD, SIGPROF, SIGURG,
 * SIGSTKFLT, signals 32-34, glibc's SIGRTMIN among them, and the
 * synchronous ones); docs/operating.md, "Signals".
 */
static sigset_t loader_mask;

__attribute__((constructor(101))) static void mask_at_load(void) {
  init_async_signals();
  pthread_sigmask(SIG_BLOCK, &async_signals, &loader_mask);
}

/* Set once the loader has run this library's constructors, which also start
 * the Go runtime. A call before that (from an executable's .preinit_array)
 * would wait forever for a runtime that has not begun to start. */
static volatile int constructed;

__attribute__((constructor)) static void shim_load(void) {
  pthread_sigmask(SIG_SETMASK, &loader_mask, NULL);
  pthread_atfork(NULL, NULL, on_fork_child);
  __atomic_store_n(&constructed, 1, __ATOMIC_RELEASE);
}

/* Says once who serves the ring stage, so that an operator sees the preload
 * took effect: at NCCL_DEBUG=VERSION as NCCL prints its version line, and
 * at INFO and above as an INFO line of subsystem ENV (not at WARN, whose
 * output is the WARN lines alone). Right after logging starts. */
static pthread_once_t announce_once = PTHREAD_ONCE_INIT;

static void announce(void) {
  char text[1200];
  snprintf(text, sizeof text,
           "libnccomring %s serves the ring stage (ncclTopoPreset, ncclTopoPostset, "
           "ncclBuildRings, ncclTopoGetNetDev), loaded from %s",
           NCCOMRING_VERSION, nccomring_own_path());
  if (nccomring_log_level == NCCOMRING_LOG_VERSION)
    nccomring_log(NCCOMRING_LOG_VERSION, 0, -1, text);
  else if (nccomring_log_level >= NCCOMRING_LOG_INFO)
    nccomring_log(NCCOMRING_LOG_INFO, NCCOMRING_SUBSYS_ENV, -1, text);
}

/* Returns nonzero, after one WARN saying why, when the call cannot enter Go:
 * before the library's constructors ran (E3) or in a forked child (E1).
 * comm->rank is read only then, for the WARN: a bad comm pointer must reach
 * Go's fault recovery. */
static int refuse(const char *fn, const struct ncclComm *comm, int rank, void *caller) {
  nccomring_log_init(caller, NCCOMRING_LOG_TO_STDOUT);
  pthread_once(&announce_once, announce);
  const char *why;
  if (!__atomic_load_n(&constructed, __ATOMIC_ACQUIRE))
    why = "called before the loader ran libnccomring's constructors (from a .preinit_array "
          "function?); the Go runtime has not started, call it later";
  else if (in_forked_child)
    why = "called in a child process after fork() without exec; the Go runtime cannot run "
          "there, call it before fork() or after exec()";
  else
    return 0;
  if (comm && __atomic_load_n(&constructed, __ATOMIC_ACQUIRE)) rank = comm->rank;
  char text[320];
  snprintf(text, sizeof text, "%s: %s", fn, why);
  nccomring_log(NCCOMRING_LOG_WARN, 0, rank, text);
  return 1;
}

/* Enters Go for a call of fn (enter_go), unless refuse says it cannot; then
 * returns nonzero, and Go is not entered. */
static int enter_call(const char *fn, const struct ncclComm *comm, int rank, void *caller,
                      sigset_t *saved) {
  if (refuse(fn, comm, rank, caller)) return 1;
  enter_go(saved);
  return 0;
}

/*
 * The entry points. Each public function passes its own return address, a
 * point inside the object that called it, for the hook lookups (P18). The
 * nccomring_*_from variants take that address from their caller instead:
 * the preload shim (build/libnccomring-preload.so) calls them with the
 * address its own caller gave it, so that hooks are still looked up in
 * libnccom and not in the shim (entry.h).
 */
ncclResult_t nccomring_topo_preset_from(void *caller, struct ncclComm *comm,
                                        struct ncclTopoGraph *graph,
                                        struct ncclTopoRanks *topoRanks) {
  sigset_t mask;
  if (enter_call("ncclTopoPreset", comm, -1, caller, &mask)) return ncclInvalidUsage;
  ncclResult_t res = (ncclResult_t)goTopoPreset(comm, graph, topoRanks, caller);
  leave_go(&mask);
  return res;
}

ncclResult_t nccomring_topo_postset_from(void *caller, struct ncclComm *comm,
                                         int *nodesFirstRank,
                                         struct ncclTopoRanks **allTopoRanks, int *nChannels,
                                         int *nNodes) {
  sigset_t mask;
  if (enter_call("ncclTopoPostset", comm, -1, caller, &mask)) return ncclInvalidUsage;
  ncclResult_t res =
      (ncclResult_t)goTopoPostset(comm, nodesFirstRank, allTopoRanks, nChannels, nNodes, caller);
  leave_go(&mask);
  return res;
}

ncclResult_t nccomring_build_rings_from(void *caller, int nrings, int *rings, int rank,
                                        int nranks, int *prev, int *next) {
  sigset_t mask;
  if (enter_call("ncclBuildRings", NULL, rank, caller, &mask)) return ncclInvalidUsage;
  ncclResult_t res = (ncclResult_t)goBuildRings(nrings, rings, rank, nranks, prev, next);
  leave_go(&mask);
  return res;
}

ncclResult_t nccomring_topo_get_net_dev_from(void *caller, struct ncclTopoSystem *sys, int rank,
                                             struct ncclTopoGraph *graph, int channelId,
                                             int *dev) {
  sigset_t mask;
  if (enter_call("ncclTopoGetNetDev", NULL, rank, caller, &mask)) return ncclInvalidUsage;
  ncclResult_t res = (ncclResult_t)goTopoGetNetDev(sys, rank, graph, channelId, dev, caller);
  leave_go(&mask);
  return res;
}

ncclResult_t ncclTopoPreset(struct ncclComm *comm, struct ncclTopoGraph *graph,
                            struct ncclTopoRanks *topoRanks) {
  return nccomring_topo_preset_from(__builtin_return_address(0), comm, graph, topoRanks);
}

ncclResult_t ncclTopoPostset(struct ncclComm *comm, int *nodesFirstRank,
                             struct ncclTopoRanks **allTopoRanks, int *nChannels,
                             int *nNodes) {
  return nccomring_topo_postset_from(__builtin_return_address(0), comm, nodesFirstRank,
                                     allTopoRanks, nChannels, nNodes);
}

ncclResult_t ncclBuildRings(int nrings, int *rings, int rank, int nranks, int *prev,
                            int *next) {
  return nccomring_build_rings_from(__builtin_return_address(0), nrings, rings, rank, nranks, prev,
                                    next);
}

ncclResult_t ncclTopoGetNetDev(struct ncclTopoSystem *sys, int rank,
                               struct ncclTopoGraph *graph, int channelId, int *dev) {
  return nccomring_topo_get_net_dev_from(__builtin_return_address(0), sys, rank, graph, channelId,
                                         dev);
}

/*
 * C++ linkage aliases. Upstream NCCL declares these four functions in C++
 * without extern "C", so a C++ host (or a C++ build of libnccom) compiled
 * against such a declaration references the Itanium-mangled names below.
 * Each is an alias of the C entry point above (same address, same fork
 * check); include/nccom_ring.h declares them for C++ hosts that define
 * NCCOM_RING_CXX_LINKAGE, and exports.map exports them. The names come from
 * g++ on the documented declarations; `c++filt` gives back exactly:
 *   ncclTopoPreset(ncclComm*, ncclTopoGraph*, ncclTopoRanks*)
 *   ncclTopoPostset(ncclComm*, int*, ncclTopoRanks**, int*, int*)
 *   ncclBuildRings(int, int*, int, int, int*, int*)
 *   ncclTopoGetNetDev(ncclTopoSystem*, int, ncclTopoGraph*, int, int*)
 * (tests/c/cxx checks both directions.)
 */
ncclResult_t nccomring_cxx_topo_preset(struct ncclComm *, struct ncclTopoGraph *,
                                       struct ncclTopoRanks *)
    __asm__("_Z14ncclTopoPresetP8ncclCommP13ncclTopoGraphP13ncclTopoRanks")
    __attribute__((alias("ncclTopoPreset")));
ncclResult_t nccomring_cxx_topo_postset(struct ncclComm *, int *, struct ncclTopoRanks **, int *,
                                        int *)
    __asm__("_Z15ncclTopoPostsetP8ncclCommPiPP13ncclTopoRanksS1_S1_")
    __attribute__((alias("ncclTopoPostset")));
ncclResult_t nccomring_cxx_build_rings(int, int *, int, int, int *, int *)
    __asm__("_Z14ncclBuildRingsiPiiiS_S_") __attribute__((alias("ncclBuildRings")));
ncclResult_t nccomring_cxx_topo_get_net_dev(struct ncclTopoSystem *, int, struct ncclTopoGraph *,
                                            int, int *)
    __asm__("_Z17ncclTopoGetNetDevP14ncclTopoSystemiP13ncclTopoGraphiPi")
    __attribute__((alias("ncclTopoGetNetDev")));

/* ---- host hooks ---- */

int nccomring_host_family(void *caller) {
  ncclRingIsTrn3SwitchV1Family_t family = (ncclRingIsTrn3SwitchV1Family_t)nccomring_host_symbol(
      caller, "neuronIsTrn3SwitchV1Family", "_Z26neuronIsTrn3SwitchV1Familyv");
  if (family == NULL) return -1;
  return family() ? 1 : 0;
}

void nccomring_host_preconditions(void *caller, int rank, int *virtualCoreSize, int *jbogId) {
  ncclRingVirtualCoreSize_t vcore = (ncclRingVirtualCoreSize_t)nccomring_host_symbol(
      caller, "nec_get_virtual_core_size", "_Z25nec_get_virtual_core_sizev");
  ncclRingSwitchV1JbogId_t jbog = (ncclRingSwitchV1JbogId_t)nccomring_host_symbol(
      caller, "neuronTrnSwitchV1JbogId", "_Z23neuronTrnSwitchV1JbogIdi");
  *virtualCoreSize = vcore ? vcore() : 0;
  *jbogId = jbog ? jbog(rank) : 1;
}

int nccomring_host_get_local_net(void *caller, struct ncclTopoSystem *sys, int rank, int *dev,
                                 ncclResult_t *result) {
  ncclRingGetLocalNet_t fn = (ncclRingGetLocalNet_t)nccomring_host_symbol(
      caller, "ncclTopoGetLocalNet", "_Z19ncclTopoGetLocalNetP14ncclTopoSystemiPi");
  if (fn == NULL) return 0;
  *result = fn(sys, rank, dev);
  return 1;
}

void *nccomring_malloc(size_t bytes) { return malloc(bytes); }

/* The version of this library (include/nccom_ring.h, the one source). */
const char *nccomring_version(void) { return NCCOMRING_VERSION; }

/* The path this library was loaded from, for the VERSION line. */
const char *nccomring_own_path(void) {
  Dl_info mine;
  return dladdr((void *)&shim_load, &mine) && mine.dli_fname ? mine.dli_fname : "?";
}
