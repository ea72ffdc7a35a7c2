package main

/*
#include <stdlib.h>
#include "shim.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/nccomring/libnccomring/abi"
	"github.com/nccomring/libnccomring/kanga"
	"github.com/nccomring/libnccomring/ring"
)

// Every export starts with
//
//	defer recoverExport(fn, &rank, &res, debug.SetPanicOnFault(true))
//	if err := enter(fn, kind, rank); err != nil {
//		return fail(rank, err)
//	}
//
// The deferred recoverExport only recovers: a wild pointer becomes a
// recoverable panic instead of a fatal fault, and a panic becomes
// ncclInternalError with one WARN (D20) instead of aborting the host. rank
// is read only when the WARN is printed, so it can be filled in after the
// defer is armed. A plain deferred call (no closure) costs nothing on the
// fast path. enter is the prologue, under that guard.
func recoverExport(fn string, rank *int32, res *C.ncclResult_t, panicOnFault bool) {
	debug.SetPanicOnFault(panicOnFault)
	if r := recover(); r != nil {
		text := fmt.Sprintf("%s: internal error: %v", fn, r)
		// A fault through a caller's pointer (D20): name the address, which
		// Go's own text ("nil pointer dereference") does not.
		// The runtime gives no address for the first page, which it reports
		// as a nil dereference.
		if fault, ok := r.(interface{ Addr() uintptr }); ok {
			text = fmt.Sprintf("%s: invalid memory access at address %#x (a stale or too short pointer from the caller?); nothing was written", fn, fault.Addr())
		} else if e, ok := r.(runtime.Error); ok && strings.Contains(e.Error(), "nil pointer dereference") {
			text = fmt.Sprintf("%s: invalid memory access below address 0x1000 (a pointer from the caller that is nearly NULL?); nothing was written", fn)
		}
		warn(*rank, text)
		*res = C.ncclInternalError
	}
}

// firstCallStarted is set by the process's first call into Go, at entry.
var firstCallStarted atomic.Bool

// enter is every export's prologue: the process's first call prints what
// logging could not print before it (logVariables: the WARNs of variables
// read at load, the ENV line of the variables); then every export checks
// the layout profile (E4) and, but for ncclBuildRings, which touches none
// of the structs, the layout self-check (E5), in that order, before it
// reads an argument. rank is the call's as far as it is known at entry:
// the rank argument, else -1. (The first call's end has its own step,
// goFirstCallEnded, which the C half calls as that call returns.)
func enter(fn string, kind exportKind, rank int32) error {
	if !firstCallStarted.Load() && firstCallStarted.CompareAndSwap(false, true) {
		logVariables(rank)
	}
	if err := layoutError(fn); err != nil {
		return err
	}
	if kind == buildRingsExport {
		return nil
	}
	return abiCheckError(fn, kind, rank)
}

// fail prints err's WARN line and returns its code; nil is ncclSuccess.
func fail(rank int32, err error) C.ncclResult_t {
	if err == nil {
		return C.ncclSuccess
	}
	e := abiError(err)
	warnAt(1, rank, e.Text) // the export's line that failed, in libnccom's style
	return C.ncclResult_t(e.Code)
}

// abiError is err's code and WARN text: its *abi.Error, or an internal
// error with err's text.
func abiError(err error) *abi.Error {
	var e *abi.Error
	if !errors.As(err, &e) {
		e = abi.Errorf(abi.InternalError, "%v", err)
	}
	return e
}

// platformWarned makes an unknown NCCOM_RING_PLATFORM one WARN per process
// (D14, D28, docs/errors.md S10).
var platformWarned atomic.Bool

func nullArgument(fn, name string) error {
	return abi.Errorf(abi.InvalidArgument, "%s: %s is NULL", fn, name)
}

// rankOf is the rank a call on comm is about, for the log prefix (P14).
func rankOf(comm *abi.Comm) int32 {
	if comm == nil {
		return -1
	}
	return comm.Rank
}

// warn prints a WARN line. In libnccom's style (D26) the line names the
// file and line that called warn.
func warn(rank int32, text string) { warnAt(1, rank, text) }

// warnAt is warn naming the line skip frames above its own caller (0: the
// caller of warnAt).
func warnAt(skip int, rank int32, text string) {
	if C.nccomring_log_level < C.NCCOMRING_LOG_WARN {
		return
	}
	logLine(skip+2, C.NCCOMRING_LOG_WARN, 0, rank, text)
}

func infoEnabled(subsys C.int) bool {
	return C.nccomring_log_level >= C.NCCOMRING_LOG_INFO && C.nccomring_log_subsys&subsys != 0
}

func info(subsys C.int, rank int32, text string) {
	if infoEnabled(subsys) {
		logLine(2, C.NCCOMRING_LOG_INFO, subsys, rank, text)
	}
}

// logLine prints one line; skip is runtime.Caller's, from logLine, of the
// line the CCOM style names (1: logLine's caller).
func logLine(skip int, level, subsys C.int, rank int32, text string) {
	file, n, line := sourceLine(skip)
	s := C.CString(text)
	defer C.free(unsafe.Pointer(s))
	C.nccomring_log_at(file, n, line, level, subsys, C.int(rank), s)
}

// sourceLine is the file and line of the caller skip frames above
// sourceLine's caller (0: that caller), as nccomring_log_at takes them:
// the runtime's own bytes of the file name, no copy (they are in the
// binary, not on the Go heap, and not NUL-terminated), and their length.
// Only the CCOM style shows them (D26); in NCCL's the runtime is not asked.
func sourceLine(skip int) (file *C.char, n C.size_t, line C.int) {
	if C.nccomring_log_style != C.NCCOMRING_STYLE_CCOM {
		return nil, 0, 0
	}
	_, f, l, ok := runtime.Caller(skip + 1)
	if !ok || f == "" {
		f, l = "?", 0
	}
	return (*C.char)(unsafe.Pointer(unsafe.StringData(f))), C.size_t(len(f)), C.int(l)
}

// logChannelCount prints D23's INFO line: the channel count every rank
// uses and the first rank whose fragment has it (docs/errors.md P7a). It is
// printed whether or not the call goes on to succeed.
func logChannelCount(rank int32, res ring.PostsetResult) {
	if res.GraphChannels == 0 || !infoEnabled(C.NCCOMRING_SUBSYS_INIT) {
		return
	}
	info(C.NCCOMRING_SUBSYS_INIT, rank, fmt.Sprintf("ncclTopoPostset: %d channels, the smallest channel count of any fragment, first held by rank %d (D23)", res.GraphChannels, res.CountRank))
}

// logOrder prints a committed Postset's lines about the records (D28: no
// valid record, other ring stages) and the node order (D25): its WARN (a
// fallback, nodes without a location) and its INFO line (a policy not
// applied) on every rank, identical on each; on rank 0 the sequence and
// its crossings.
func logOrder(rank int32, res ring.PostsetResult) {
	if res.RecordsWarn != "" {
		warn(rank, res.RecordsWarn)
	}
	if res.RecordsInfo != "" {
		info(C.NCCOMRING_SUBSYS_INIT, rank, res.RecordsInfo)
	}
	o := res.Order
	if o.Warn != "" {
		warn(rank, o.Warn)
	}
	if o.Info != "" {
		info(C.NCCOMRING_SUBSYS_INIT, rank, o.Info)
	}
	if rank == 0 && o.Summary != "" {
		info(C.NCCOMRING_SUBSYS_INIT, rank, o.Summary)
	}
}

// warnOwnChannels is D27's WARN after a committed Postset, on a rank whose
// own graph has more channels than the job's (docs/errors.md P7a).
func warnOwnChannels(rank int32, res ring.PostsetResult) {
	if text := res.OwnChannelsWarning(); text != "" {
		warn(rank, text)
	}
}

// logWalks prints rank 0's walks of the failing rings before the WARN
// (D24, docs/errors.md "Diagnosis"), as upstream prints a ring before it
// checks it.
func logWalks(rank int32, err error) {
	var failed *ring.RingsError
	if !errors.As(err, &failed) || !infoEnabled(C.NCCOMRING_SUBSYS_INIT) {
		return
	}
	for _, line := range failed.Walks {
		info(C.NCCOMRING_SUBSYS_INIT, rank, line)
	}
}

// logPostset prints a committed Postset's INFO lines (P12), in the order of
// docs/errors.md: on rank 0 one Channel line per ring (D17), then the pod
// fallback (D15), then the kangaRing paths on SwitchV1 (D13, P13).
func logPostset(comm *abi.Comm, res ring.PostsetResult) {
	if !infoEnabled(C.NCCOMRING_SUBSYS_INIT) {
		return
	}
	rank := comm.Rank
	if rank == 0 {
		nRanks := int(comm.NRanks)
		for c := range res.NChannels {
			ranks := abi.Ints(comm.Channels[c].Ring.UserRanks, nRanks)
			info(C.NCCOMRING_SUBSYS_INIT, rank, ring.ChannelLine(c, res.NChannels, ranks))
		}
	}
	if res.PodFallback {
		info(C.NCCOMRING_SUBSYS_INIT, rank, ring.PodFallbackLine(res.NNodes))
	}
	if res.KangaInts > 0 { // SwitchV1: at least one rank's path was copied
		for _, line := range kanga.PathLines(comm, res.KangaPaths, res.KangaInts) {
			info(C.NCCOMRING_SUBSYS_INIT, rank, line)
		}
	}
}

// hostPlatform answers one call's platform questions (D14, P18): from the
// host's hooks when it defines neuronIsTrn3SwitchV1Family (looked up anew
// in the calling object, then globally), else from NCCOM_RING_PLATFORM.
// Preconditions is asked only after IsSwitchV1 said true, and from the same
// source.
type hostPlatform struct {
	fn       string
	rank     int32
	caller   unsafe.Pointer
	fromHost bool
}

// platformPool recycles hostPlatforms: ring.Preset and ring.Postset take
// them as a kanga.Resolver, and an interface's value escapes to the Go heap,
// so a fresh one per call would be garbage on every call (issue 13: no GC
// at steady state).
var platformPool = sync.Pool{New: func() any { return new(hostPlatform) }}

func newHostPlatform(fn string, rank int32, caller unsafe.Pointer) *hostPlatform {
	p := platformPool.Get().(*hostPlatform)
	*p = hostPlatform{fn: fn, rank: rank, caller: caller}
	return p
}

// release returns p to the pool once the call is over; nothing keeps it.
func (p *hostPlatform) release() {
	*p = hostPlatform{}
	platformPool.Put(p)
}

// warnUnknown prints an unknown NCCOM_RING_PLATFORM's WARN once per
// process, after a Preset that carried it in its record as "unknown"
// (D28: Preset no longer fails on it; every Postset refuses the job).
func (p *hostPlatform) warnUnknown() {
	if p.fromHost {
		return
	}
	if _, _, err := envPlatform(); err != nil && platformWarned.CompareAndSwap(false, true) {
		warn(p.rank, fmt.Sprintf("%s: %v: this rank's record says its platform is unknown, and every rank's ncclTopoPostset will refuse the job (D28)", p.fn, err))
	}
}

func (p *hostPlatform) IsSwitchV1() (bool, error) {
	if answer := C.nccomring_host_family(p.caller); answer >= 0 {
		p.fromHost = true
		return answer != 0, nil
	}
	platform, set, err := envPlatform()
	if err == nil && !set {
		assumedGeneric.Do(func() {
			info(C.NCCOMRING_SUBSYS_INIT, p.rank, fmt.Sprintf("%s: the host defines no neuronIsTrn3SwitchV1Family and %s is unset: assuming a generic platform (no kangaRing)", p.fn, kanga.EnvVar))
		})
	}
	return platform.SwitchV1, err
}

func (p *hostPlatform) Preconditions(rank int32) (virtualCoreSize, jbogID int32) {
	if !p.fromHost {
		platform, _, _ := envPlatform()
		return platform.VirtualCoreSize, platform.JbogID
	}
	var vcore, jbog C.int
	C.nccomring_host_preconditions(p.caller, C.int(rank), &vcore, &jbog)
	return int32(vcore), int32(jbog)
}

// assumedGeneric makes the "assuming a generic platform" INFO line one per
// process.
var assumedGeneric sync.Once

// envPlatform is NCCOM_RING_PLATFORM (params.go: read at the first call
// that needs it, kept for the process; docs/errors.md Environment).
func envPlatform() (platform kanga.Platform, set bool, err error) {
	r, _ := platformParam.get()
	return r.value, r.set, r.err
}

// presetOptions is what rank's Preset carries in its record (D25, D27),
// from the registry: NCCOM_RING_NODE_ORDER and NCCOM_RING_LOCATION, read at
// every Preset, and NCCOM_RING_POD_ORDER, read once. A value that is not
// taken as given is one WARN on this rank when it is read (P8).
func presetOptions(rank int32, platforms kanga.Resolver) ring.PresetOptions {
	opt := ring.PresetOptions{Platforms: platforms}
	opt.Network = warnedValue(rank, nodeOrderParam)
	opt.Location = warnedValue(rank, locationParam)
	opt.PodNode = warnedValue(rank, podOrderParam) == ring.PodOrderNode
	return opt
}

// warnedValue is p's value in effect, with one WARN on rank when this read
// parsed a value its parser did not take as given.
func warnedValue[T any](rank int32, p *param[T]) T {
	r, fresh := p.get()
	if fresh && r.err != nil {
		warn(rank, r.err.Error())
	}
	return r.value
}

// cAllocator allocates userRanks with C malloc, so hosts free them with
// free() (D12). It goes through nccomring_malloc, plain C: cgo's C.malloc
// never returns NULL but aborts the process when memory runs out, which
// would make Postset's ncclSystemError path (P16) a crash instead.
type cAllocator struct{}

func (cAllocator) AllocInts(n int) uintptr {
	return uintptr(C.nccomring_malloc(C.size_t(n) * C.size_t(unsafe.Sizeof(C.int(0)))))
}

func (cAllocator) Free(p uintptr) { C.free(abi.Pointer(p)) }
