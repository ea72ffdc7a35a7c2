/*
 * shim.h - the C half of libnccomring's export layer (internal).
 *
 * The four public symbols are defined in C (shim.c) so that they can refuse a
 * call in a forked child before entering Go (P16), and so that the Go
 * runtime's own symbols stay local (exports.map). Logging (D21) is C too: the
 * fork refusal must be able to print without Go. The Go files include this
 * header for everything of C's they use.
 *
 * Process state: who owns what. Each piece of state that outlives a call
 * has one owner, which alone writes it; the others read it, or ask.
 *
 *   C, shim.c    whether the loader ran the constructors (E3); whether this
 *                is a forked child (E1); the asynchronous signals blocked
 *                while Go runs (and in the loading thread while the
 *                runtime's constructor starts its threads, which inherit
 *                that mask), and whether this thread has entered Go; the
 *                call boundary: whether the process's first call into Go
 *                has ended (then goFirstCallEnded runs, once). Set at load,
 *                at fork, per thread, at the first call.
 *   C, log.c     NCCL_DEBUG, NCCL_DEBUG_SUBSYS, NCCL_DEBUG_FILE and
 *                NCCOM_RING_LOG_STYLE as parsed: the level, subsystem mask
 *                and line style (D26; Go reads them), the host
 *                name, libnccom's ncclDebugFile or the opened file (a
 *                regular file only: docs/security.md), the lock around
 *                stdout. Once per process, at the first call of any
 *                export (nccomring_log_init), before Go is entered.
 *   C, env.c     the reader every variable goes through (nccomring_env,
 *                by zenv.h's list, generated from params.go's registry), which
 *                ignores the path-valued ones under secure execution
 *                (AT_SECURE); one bit per variable: whether its WARN about
 *                that was printed.
 *   C, hostsym.c nothing: host symbols are looked up anew at every call.
 *   C, selfcheck.c nothing: the mapped objects are listed anew at each ask
 *                (the self-check's and the layout profile's, once each).
 *   Go           the values of the library's own variables, each read and
 *                kept as the registry says (params.go: NCCOM_RING_PLATFORM,
 *                _POD_ORDER, _LAYOUT, _ABI_CHECK, _GOMAXPROCS, _DUMP,
 *                _NODE_ORDER, _LOCATION); the
 *                layout in use, with the profile's build ID checked
 *                against the libnccom.so.2 mapped (commlayout.go); the
 *                self-check's verdict, reached within its time bound, and
 *                the goroutine that reads the DWARF, which alone touches
 *                what it read (selfcheck.go); each rank's dump as encoded,
 *                in C memory (dump.go); the runtime's GOMAXPROCS and the threads
 *                retired (footprint.go);
 *                whether the first call started (entry.go, enter) and
 *                the flags that keep a line to one per process
 *                (platformWarned, assumedGeneric, abiWarned); the pool of
 *                hostPlatforms.
 *
 * The preload shim (preload/) is a separate library with state of its own:
 * its own file's directory (found at load), its one load attempt, and its
 * own logger's and reader's (log.c is compiled into it, with env.c and
 * hostsym.c).
 */
#ifndef NCCOMRING_SHIM_H
#define NCCOMRING_SHIM_H

#include "env.h"
#include "hostsym.h"
#include "log.h"
#include "nccom_ring.h"

#include <stddef.h>
#include <stdint.h>

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

/* One object mapped in the process as its loaded segments describe it
 * (selfcheck.c): its path as the loader has it, and its DT_SONAME and GNU
 * build ID read from memory, not from the file at the path. */
struct nccomring_object {
  char *path;
  char soname[256];            /* "" when it has none */
  int soname_known;            /* 0: it could not be read from memory */
  unsigned char build_id[64];
  size_t build_id_len;         /* 0: no GNU build ID is mapped */
  uintptr_t map_addr;          /* inside its first PT_LOAD mapped from its file; 0: none */
};

/* The objects mapped in the process, in load order, the executable left
 * out: *objs gets *n of them, which the caller frees with
 * nccomring_free_objects; NULL when there are none. Returns -1, with
 * nothing to free, when memory runs out. */
int nccomring_loaded_objects(struct nccomring_object **objs, size_t *n);
void nccomring_free_objects(struct nccomring_object *objs, size_t n);

/* The path this library was loaded from. */
const char *nccomring_own_path(void);

/* malloc as C calls it: NULL when memory runs out (cgo's C.malloc aborts). */
void *nccomring_malloc(size_t bytes);

#endif
