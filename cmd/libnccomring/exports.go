// Command libnccomring is the export layer of build/libnccomring.so: the four
// C entry points of libnccom 2.31.24's ring stage (include/nccom_ring.h).
// shim.c defines the public symbols and refuses calls from a forked child;
// the functions here recover panics (D20), run the prologue every export
// shares (enter, entry.go: the first call's notes, a bad layout profile
// (E4), a layout that differs from the host's libnccom (selfcheck.go, E5)),
// check NULL pointers, view C memory through package abi and call the pure
// packages, and with NCCOM_RING_DUMP set hand what Postset committed to
// dump.go. Nothing else lives here.
//
// Build with -buildmode=c-shared and exports.map (see the Makefile).
package main

/*
#cgo CFLAGS: -I${SRCDIR}/../../include -D_GNU_SOURCE -std=gnu11 -Wall -Wextra -Werror
#cgo LDFLAGS: -ldl -lpthread
#include <stdlib.h>
#include "shim.h"
*/
import "C"

import (
	"runtime/debug"
	"sync/atomic"
	"unsafe"

	"github.com/nccomring/libnccomring/abi"
	"github.com/nccomring/libnccomring/netdev"
	"github.com/nccomring/libnccomring/ring"
)

func main() {}

// goBindThread is each thread's first entry into Go: empty, so that the
// runtime binds itself to the thread (and unblocks the signals it always
// wants there) before any real work runs with the host's signals blocked
// (shim.c, enter_go).
//
//export goBindThread
func goBindThread() {}

// goFirstCallEnded runs once, as the process's first call into Go returns
// to the C half (shim.c, leave_go): it retires the threads the runtime
// started since load (footprint.go, P25).
//
//export goFirstCallEnded
func goFirstCallEnded() {
	retireIdleThreads()
}

//export goTopoPreset
func goTopoPreset(comm *C.struct_ncclComm, graph *C.struct_ncclTopoGraph, topoRanks *C.struct_ncclTopoRanks, caller unsafe.Pointer) (res C.ncclResult_t) {
	const fn = "ncclTopoPreset"
	rank := int32(-1)
	defer recoverExport(fn, &rank, &res, debug.SetPanicOnFault(true))
	if err := enter(fn, presetExport, rank); err != nil {
		return fail(rank, err)
	}
	view := newCommView((*abi.Comm)(unsafe.Pointer(comm))) // may fault on a wild pointer: armed guard first
	c := view.comm
	rank = rankOf(c)
	switch {
	case comm == nil:
		return fail(rank, nullArgument(fn, "comm"))
	case graph == nil:
		return fail(rank, nullArgument(fn, "graph"))
	case topoRanks == nil:
		return fail(rank, nullArgument(fn, "topoRanks"))
	}
	platform := newHostPlatform(fn, rank, caller)
	defer platform.release()
	err := ring.Preset(c, (*abi.TopoGraph)(unsafe.Pointer(graph)), (*abi.TopoRanks)(unsafe.Pointer(topoRanks)), presetOptions(rank, platform))
	if err == nil {
		view.commit()
		platform.warnUnknown()
	}
	return fail(rank, err)
}

//export goTopoPostset
func goTopoPostset(comm *C.struct_ncclComm, nodesFirstRank *C.int, allTopoRanks **C.struct_ncclTopoRanks, nChannels *C.int, nNodes *C.int, caller unsafe.Pointer) (res C.ncclResult_t) {
	const fn = "ncclTopoPostset"
	rank := int32(-1)
	defer recoverExport(fn, &rank, &res, debug.SetPanicOnFault(true))
	if err := enter(fn, postsetExport, rank); err != nil {
		return fail(rank, err)
	}
	view := newCommView((*abi.Comm)(unsafe.Pointer(comm))) // may fault on a wild pointer: armed guard first
	c := view.comm
	rank = rankOf(c)
	heads, result, err := postset(&view, nodesFirstRank, allTopoRanks, nChannels, nNodes, caller)
	res = fail(rank, err)
	if dir, on := dumpDir(); on && c != nil {
		dumpPostset(dir, c, heads, result, err) // after the commit; never changes res
	}
	return res
}

// postset is goTopoPostset after the checks that come before the rank is
// known: it runs Postset on view and commits it, and returns the
// nodesFirstRank view (nil when it was not taken) for the dump.
func postset(view *commView, nodesFirstRank *C.int, allTopoRanks **C.struct_ncclTopoRanks, nChannels *C.int, nNodes *C.int, caller unsafe.Pointer) ([]int32, ring.PostsetResult, error) {
	const fn = "ncclTopoPostset"
	c := view.comm
	rank := rankOf(c)
	var result ring.PostsetResult
	switch {
	case c == nil:
		return nil, result, nullArgument(fn, "comm")
	case nodesFirstRank == nil:
		return nil, result, nullArgument(fn, "nodesFirstRank")
	case allTopoRanks == nil:
		return nil, result, nullArgument(fn, "allTopoRanks")
	case nChannels == nil:
		return nil, result, nullArgument(fn, "nChannels")
	case nNodes == nil:
		return nil, result, nullArgument(fn, "nNodes")
	}
	// The out-parameters are written after Postset commits: probe them first,
	// so that a bad one faults while nothing has changed.
	atomic.AddInt32((*int32)(unsafe.Pointer(nChannels)), 0)
	atomic.AddInt32((*int32)(unsafe.Pointer(nNodes)), 0)
	// Views of nRanks entries are only taken when nRanks is positive; Postset
	// checks it first and reads nothing through them otherwise.
	n := max(int(c.NRanks), 0)
	all := unsafe.Slice((**abi.TopoRanks)(unsafe.Pointer(allTopoRanks)), n)
	heads := unsafe.Slice((*int32)(unsafe.Pointer(nodesFirstRank)), n)
	platform := newHostPlatform(fn, rank, caller)
	defer platform.release()
	_, dumping := dumpDir()
	result, err := ring.Postset(c, heads, all, ring.PostsetOptions{
		Platforms: platform,
		Alloc:     cAllocator{},
		Scratch:   cAllocator{},
		Sequence:  dumping, // the dump's sequence; else nothing on the Go heap
	})
	logChannelCount(rank, result)
	if err != nil {
		logWalks(rank, err)
		return heads, result, err
	}
	view.commit()
	*nChannels = C.int(result.NChannels)
	*nNodes = C.int(result.NNodes)
	warnOwnChannels(rank, result)
	logOrder(rank, result)
	logPostset(c, result)
	logFootprint(fn, rank)
	return heads, result, nil
}

//export goBuildRings
func goBuildRings(nrings C.int, rings *C.int, rank C.int, nranks C.int, prev *C.int, next *C.int) (res C.ncclResult_t) {
	const fn = "ncclBuildRings"
	r32 := int32(rank)
	defer recoverExport(fn, &r32, &res, debug.SetPanicOnFault(true))
	_ = prev // never read (D16, P9)
	if err := enter(fn, buildRingsExport, r32); err != nil {
		return fail(r32, err)
	}
	switch {
	case rings == nil:
		return fail(r32, nullArgument(fn, "rings"))
	case next == nil:
		return fail(r32, nullArgument(fn, "next"))
	}
	nr, r, n := int(nrings), int(rank), int(nranks)
	if err := ring.CheckBuildRingsArgs(nr, r, n); err != nil {
		return fail(r32, err)
	}
	out := unsafe.Slice((*int32)(unsafe.Pointer(rings)), nr*n)
	in := unsafe.Slice((*int32)(unsafe.Pointer(next)), nr*n)
	if err := ring.BuildRings(nr, r, n, out, in, cAllocator{}); err != nil {
		return fail(r32, err)
	}
	if r == 0 && infoEnabled(C.NCCOMRING_SUBSYS_INIT) {
		for i := range nr {
			info(C.NCCOMRING_SUBSYS_INIT, 0, ring.ChannelLine(i, nr, out[i*n:(i+1)*n]))
		}
	}
	logFootprint(fn, r32)
	return C.ncclSuccess
}

//export goTopoGetNetDev
func goTopoGetNetDev(sys *C.struct_ncclTopoSystem, rank C.int, graph *C.struct_ncclTopoGraph, channelId C.int, dev *C.int, caller unsafe.Pointer) (res C.ncclResult_t) {
	const fn = "ncclTopoGetNetDev"
	r32 := int32(rank)
	defer recoverExport(fn, &r32, &res, debug.SetPanicOnFault(true))
	if err := enter(fn, getNetDevExport, r32); err != nil {
		return fail(r32, err)
	}
	switch {
	case dev == nil:
		return fail(r32, nullArgument(fn, "dev"))
	case graph == nil:
		var hostResult C.ncclResult_t
		if C.nccomring_host_get_local_net(caller, sys, rank, dev, &hostResult) != 0 {
			return hostResult // D19, P17: the host's answer as it is
		}
		return fail(r32, abi.Errorf(abi.InternalError, "%s: graph is NULL and the host process provides no ncclTopoGetLocalNet to fall back on", fn))
	case sys == nil:
		return fail(r32, nullArgument(fn, "sys"))
	}
	d, err := netdev.GetNetDev((*abi.TopoSystem)(unsafe.Pointer(sys)), r32, (*abi.TopoGraph)(unsafe.Pointer(graph)), int32(channelId))
	if err != nil {
		return fail(r32, err)
	}
	*dev = C.int(d)
	if _, on := dumpDir(); on {
		dumpNetDev(r32, int32(channelId), d)
	}
	return C.ncclSuccess
}
