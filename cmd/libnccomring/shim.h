/*
 * shim.h - the C half of libnccomring's export layer (internal).
 *
 * The four public symbols are defined in C (shim.c) so that they can refuse a
 * call in a forked child before entering Go (P16), and so that the Go
 * runtime's own symbols stay local (exports.map). Logging (D21) is C too: the
 * fork refusal must be able to print without Go.
 */
#ifndef NCCOMRING_SHIM_H
#define NCCOMRING_SHIM_H

#include "nccom_ring.h"

/* NCCL_DEBUG levels (D21). */
enum {
  NCCOMRING_LOG_NONE = 0,
  NCCOMRING_LOG_VERSION = 1,
  NCCOMRING_LOG_WARN = 2,
  NCCOMRING_LOG_INFO = 3,
  NCCOMRING_LOG_ABORT = 4,
  NCCOMRING_LOG_TRACE = 5
};

/* NCCL_DEBUG_SUBSYS bits. */
enum {
  NCCOMRING_SUBSYS_INIT = 1 << 0,
  NCCOMRING_SUBSYS_COLL = 1 << 1,
  NCCOMRING_SUBSYS_P2P = 1 << 2,
  NCCOMRING_SUBSYS_SHM = 1 << 3,
  NCCOMRING_SUBSYS_NET = 1 << 4,
  NCCOMRING_SUBSYS_GRAPH = 1 << 5,
  NCCOMRING_SUBSYS_TUNING = 1 << 6,
  NCCOMRING_SUBSYS_ENV = 1 << 7,
  NCCOMRING_SUBSYS_ALLOC = 1 << 8,
  NCCOMRING_SUBSYS_CALL = 1 << 9,
  NCCOMRING_SUBSYS_ALL = ~0
};

/* Parsed once per process by nccomring_log_init (every export calls it). */
extern int nccomring_log_level;
extern int nccomring_log_subsys;

/* caller: a code address in the object that made the first call, where
 * libnccom's ncclDebugFile is looked up (the first call's wins). */
void nccomring_log_init(void *caller);
/* Prints one line "<host>:<pid>:<tid> [<rank>] NCCL WARN|INFO <text>". WARN
 * lines print at level >= WARN whatever the subsystem; INFO lines need level
 * >= INFO and subsys enabled. */
void nccomring_log(int level, int subsys, int rank, const char *text);

/* Host hooks (D14, D19, P18), looked up on every call in the object that
 * called the export (caller: a return address in it), then globally.
 * nccomring_host_family returns what the host's neuronIsTrn3SwitchV1Family
 * answers (1 SwitchV1, 0 not), or -1 when the host defines none (a return
 * value, not an out-parameter: a Go variable whose address went to C would
 * be moved to the Go heap on every call). nccomring_host_preconditions asks
 * nec_get_virtual_core_size (0 when absent) and neuronTrnSwitchV1JbogId(rank)
 * (1 when absent); it is called only on SwitchV1 (spec §4). */
int nccomring_host_family(void *caller);
void nccomring_host_preconditions(void *caller, int rank, int *virtualCoreSize, int *jbogId);

/* The host's ncclTopoGetLocalNet (D19, P17). Returns 1 and stores its result
 * in *result when the host defines one (outside this library), else 0. */
int nccomring_host_get_local_net(void *caller, struct ncclTopoSystem *sys, int rank, int *dev,
                                 ncclResult_t *result);

/* A host symbol (P18's lookup: the calling object, then globally; cxxName
 * may be NULL), or NULL. */
void *nccomring_host_symbol(void *caller, const char *name, const char *cxxName);

/* The paths of the objects mapped in the process, in load order, the
 * executable left out (selfcheck.c): *paths gets *len bytes of
 * NUL-terminated paths, which the caller frees; NULL when there are none.
 * Returns -1, with nothing to free, when memory runs out. */
int nccomring_loaded_objects(char **paths, size_t *len);

/* The path this library was loaded from. */
const char *nccomring_own_path(void);

/* malloc as C calls it: NULL when memory runs out (cgo's C.malloc aborts). */
void *nccomring_malloc(size_t bytes);

#endif
