package main

/*
#include <stdlib.h>
#include "shim.h"
*/
import "C"

import (
	"runtime"
	"runtime/metrics"
	"strconv"
	"sync"
	"syscall"
	"unsafe"
)

// The library's own parallelism (issue 13, docs/operating.md "A light guest").
//
// Every call runs on the caller's thread and the ring stage has no parallel
// work, so the only thing GOMAXPROCS sizes inside the library is the Go
// runtime itself: its garbage collector starts a mark worker per processor,
// and the runtime defaults to one processor per core (or to GOMAXPROCS from
// the environment, which the host set for itself or for its own Go
// programs, not for a guest). On a node of 128 cores with 32 ranks per node
// that would be thousands of threads taken from the job at init. So the
// runtime inside the library runs on procsEnvVar processors, procsDefault
// unless set, whatever the cores or GOMAXPROCS say. Nothing of the host's
// own is changed: a C host has no GOMAXPROCS, and a Go host's runtime is
// its own. The variable is read once, at load (params.go's procsParam): the
// runtime's parallelism is set before the first call, and a later change
// would not make the threads already started go away. A value it did not
// take as given is one WARN at the first call (logVariables).
func init() {
	procs, _ := procsParam.get()
	runtime.GOMAXPROCS(procs.value)
	retireIdleThreads()
}

// retireIdleThreads ends the runtime's idle worker threads (ABI note P25).
//
// The runtime comes up with as many processors as GOMAXPROCS or the cores
// say, and before init can lower that it has already started a worker
// thread for some of them (one or two more at GOMAXPROCS=128 than at 2,
// more on a loaded machine). The Go runtime never ends an idle thread: it
// parks it for later. The one documented way to end a thread is for a
// goroutine locked to it to return without unlocking (runtime.LockOSThread),
// so each goroutine started here takes an idle thread, locks it and
// returns; the runtime ends that thread, and starts a new one only when
// work needs it. Threads that are not idle (the system monitor, the
// template thread, a host thread inside a call) never run these
// goroutines. The count is every thread the runtime knows of, an upper
// bound on the idle ones: a goroutine that finds no idle thread costs one
// thread start and end, tens of microseconds, once.
//
// It runs at load and once more when the first call ends (goFirstCallEnded,
// which the C half calls as that call returns), for the threads the runtime
// started between the two; never at a later call, so the steady state
// starts and ends no threads.
func retireIdleThreads() {
	threads, _ := runtime.ThreadCreateProfile(nil)
	for range threads {
		go retireThread()
	}
}

// runtimeFirstThread is the thread the runtime started on (its m0, which
// the library's constructor created), read as the package is initialised,
// which the runtime does on that thread.
var runtimeFirstThread = syscall.Gettid()

// retireThread ends the idle thread it runs on, except the runtime's first:
// the runtime never ends that one, and a goroutine that returned locked to
// it would park it for good, a thread that stays and can never run Go
// again, so the runtime would start another in its place (one more thread
// in nearly every process: 6 instead of 5 at 65,536 ranks).
func retireThread() {
	runtime.LockOSThread()
	if syscall.Gettid() == runtimeFirstThread {
		runtime.UnlockOSThread()
	}
}

// footprintSamples are what logFootprint reads: cheap counters of the
// runtime (runtime/metrics reads them without stopping the world). Calls
// may come from several host threads: footprintMu guards the samples.
var (
	footprintMu      sync.Mutex
	footprintSamples = []metrics.Sample{
		{Name: "/memory/classes/heap/objects:bytes"},
		{Name: "/memory/classes/total:bytes"},
		{Name: "/gc/cycles/total:gc-cycles"},
		{Name: "/sched/gomaxprocs:threads"},
		{Name: "/gc/heap/allocs:objects"},
		{Name: "/gc/heap/allocs:bytes"},
	}
)

// footprintLineMax bounds the footprint line: its numbers are at most 20
// digits each.
const footprintLineMax = 512

// logFootprint prints, at NCCL_DEBUG=TRACE with ALLOC in NCCL_DEBUG_SUBSYS
// only, one line after a call: the Go heap in use, all memory the Go
// runtime has mapped, the garbage collections so far, the runtime's
// processors and the Go heap allocations so far (objects and bytes). It is
// how an operator (and BENCHMARKS.md's footprint table, through
// tests/c/bench/footprint.c) sees what the guest costs without attaching a
// debugger. The line is built in C memory, so that printing it allocates
// nothing on the Go heap and the allocation counts it prints are the
// calls' own.
func logFootprint(fn string, rank int32) {
	if C.nccomring_log_level < C.NCCOMRING_LOG_TRACE || C.nccomring_log_subsys&C.NCCOMRING_SUBSYS_ALLOC == 0 {
		return
	}
	cline := C.malloc(footprintLineMax)
	if cline == nil {
		return
	}
	defer C.free(cline)
	footprintMu.Lock()
	metrics.Read(footprintSamples)
	v := func(i int) uint64 { return footprintSamples[i].Value.Uint64() }
	line := unsafe.Slice((*byte)(cline), footprintLineMax)[:0]
	line = append(line, fn...)
	line = append(line, ": footprint: Go heap "...)
	line = strconv.AppendUint(line, v(0)/1024, 10)
	line = append(line, " kB in use, "...)
	line = strconv.AppendUint(line, v(1)/1024, 10)
	line = append(line, " kB mapped by the Go runtime, "...)
	line = strconv.AppendUint(line, v(2), 10)
	line = append(line, " GC cycles so far, GOMAXPROCS "...)
	line = strconv.AppendUint(line, v(3), 10)
	line = append(line, ", "...)
	line = strconv.AppendUint(line, v(4), 10)
	line = append(line, " objects of "...)
	line = strconv.AppendUint(line, v(5), 10)
	line = append(line, " bytes allocated so far\x00"...)
	footprintMu.Unlock()
	file, n, at := sourceLine(0)
	C.nccomring_log_at(file, n, at, C.NCCOMRING_LOG_TRACE, C.NCCOMRING_SUBSYS_ALLOC, C.int(rank), (*C.char)(cline))
}
