package main

/*
#include "shim.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"
	"sync/atomic"

	"github.com/nccomring/libnccomring/abi"
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
