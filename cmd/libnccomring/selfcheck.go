package main

/*
#include <stdlib.h>
#include "shim.h"
*/
import "C"

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/nccomring/libnccomring/abi"
	"github.com/nccomring/libnccomring/abicheck"
	"github.com/nccomring/libnccomring/layout"
)

// The layout self-check (NCCOM_RING_ABI_CHECK, params.go): before the
// first Preset, Postset or GetNetDev of the process proceeds, the
// libnccom.so.2 mapped in it is compared, from its DWARF, with the layout
// in use (layout/'s documented fields, the ASSUMED ones from D3 or
// NCCOM_RING_LAYOUT).

type abiCheckMode int

const (
	abiEnforce abiCheckMode = iota // refuse the exports that touch a struct that differs (E5)
	abiWarn                        // one WARN, then run anyway
	abiOff                         // check nothing
)

// exportKind is an export, for its prologue (enter). The check can refuse
// the first numCheckedExports; ncclBuildRings touches none of the structs
// and is never checked.
type exportKind int

const (
	presetExport exportKind = iota
	postsetExport
	getNetDevExport
	numCheckedExports
	buildRingsExport = numCheckedExports
)

// touches lists the structs each export reads or writes (ncclChannel and
// its ncclRing go together).
var touches = [numCheckedExports][]string{
	presetExport:    {"ncclComm", "ncclTopoGraph", "ncclTopoRanks", "ncclChannel", "ncclRing"},
	postsetExport:   {"ncclComm", "ncclTopoRanks", "ncclChannel", "ncclRing"},
	getNetDevExport: {"ncclTopoGraph", "ncclTopoSystem"},
}

// abiVerdict is the check's outcome for the process: per export, why it
// must not run over the mapped libnccom ("" when nothing it touches
// differs, or nothing was verified).
type abiVerdict struct {
	mode    abiCheckMode
	refusal [numCheckedExports]string
}

var (
	abiOnce   sync.Once
	abiResult abiVerdict
	abiWarned atomic.Bool // warn mode's one WARN per process
)

// abiCheckError runs the self-check at the first call that needs it (once
// per process: later calls pay an atomic load) and returns export fn's
// refusal (docs/errors.md E5), or nil. rank is the call's, for the lines.
func abiCheckError(fn string, kind exportKind, rank int32) error {
	abiOnce.Do(func() { abiResult = runABICheck(fn, rank) })
	text := abiResult.refusal[kind]
	if text == "" {
		return nil
	}
	if abiResult.mode == abiEnforce {
		return abi.Errorf(abi.InvalidUsage, "%s: refusing to run over %s", fn, text)
	}
	if abiWarned.CompareAndSwap(false, true) {
		warn(rank, fmt.Sprintf("%s: %s=warn: running anyway over %s", fn, ABICheckEnvVar, text))
	}
	return nil
}

// abiCheckModeFromEnv is NCCOM_RING_ABI_CHECK (params.go, read here, once);
// an unknown value is reported, by this call, and enforced.
func abiCheckModeFromEnv(rank int32) abiCheckMode {
	r, fresh := abiCheckParam.get()
	if fresh && r.err != nil {
		warn(rank, r.err.Error())
	}
	return r.value
}

// selfCheckTimeout bounds the self-check in the host: the 10.5 MiB
// stand-in takes 34-53 ms (docs/checking.md), a real libnccom several times that;
// a file that takes longer is not waited for (issue 21: the first Preset
// must return, whatever libnccom the host maps). The DWARF is read on a
// goroutine of its own that stops at the deadline; the call waits at most
// selfCheckTimeout and a second more.
const selfCheckTimeout = 10 * time.Second

// runABICheck compares the layout in use with the libnccom.so.2 mapped in
// the process (its structs read once, mappedLibnccom), printing one line
// (ENV) on what it found: INFO when it compared them, or when there was
// nothing to compare (none mapped, one without DWARF); WARN when it could
// not verify what the calls run over (the file is not the mapped library,
// or it was refused within the limits, or the time ran out:
// abicheck.SelfCheck's Warn). Before that line, one WARN when the file
// read could be shown to be the one mapped by its build ID only
// (abicheck.SelfCheck's Weaker); the check goes on.
func runABICheck(fn string, rank int32) (v abiVerdict) {
	if v.mode = abiCheckModeFromEnv(rank); v.mode == abiOff {
		return v
	}
	defer func() {
		if r := recover(); r != nil { // not verified, not fatal
			v.refusal = [numCheckedExports]string{}
			notVerified(fn, rank, fmt.Sprintf("internal error reading it: %v", r), true)
		}
	}()
	start := time.Now()
	read := mappedLibnccom()
	offs, _ := commLayout() // a bad profile was refused before (E4)
	source := "D3"
	if offs != layout.D3Offsets {
		source = LayoutEnvVar
	}
	sc := read.Check(offs, source)
	if sc.Weaker != "" {
		warn(rank, fmt.Sprintf("%s: the file read for the %s mapped in this process (%s) is shown to be it by its build ID only, not by its device and inode: %s; the self-check goes on, weaker",
			fn, abicheck.LibnccomSONAME, sc.Library, sc.Weaker))
	}
	if sc.Report == nil {
		notVerified(fn, rank, sc.Why, sc.Warn)
		return v
	}
	// The read may have run at an earlier call (a layout profile's bound).
	took := read.took + time.Since(later(start, read.end))
	info(C.NCCOMRING_SUBSYS_ENV, rank, fmt.Sprintf("%s: %s, in %.1f ms", fn, sc.Verified(), took.Seconds()*1e3))
	for kind := range v.refusal {
		v.refusal[kind] = sc.Refusal(touches[kind])
	}
	return v
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// mappedRead is the process's one read of the libnccom.so.2 mapped in it
// (abicheck.ReadMapped): when it ended and how long it took.
type mappedRead struct {
	abicheck.MappedStructs
	took time.Duration
	end  time.Time
}

// mappedLibnccom reads the libnccom.so.2 mapped in the process and its
// ring-stage structs, once, at the first call that needs them: the
// self-check's (runABICheck), or a layout profile's that places a field
// beyond the ncclComm every host allocates (commlayout.go,
// checkProfileBound). The memory it read (the library's DWARF) is handed
// back to the system before the call goes on: the read runs once, inside a
// job. When no libnccom's DWARF was read (none mapped, one without debug
// info), there is nothing worth a forced collection, and none runs (issue
// 13: no GC the host did not need).
var mappedLibnccom = sync.OnceValue(func() (r mappedRead) {
	start := time.Now()
	defer func() {
		if p := recover(); p != nil { // not read, not fatal
			r.MappedStructs = abicheck.MappedStructs{Why: fmt.Sprintf("internal error reading it: %v", p), Warn: true}
		}
		r.end = time.Now()
		r.took = r.end.Sub(start)
		if r.Defs != nil || r.Warn {
			debug.FreeOSMemory()
		}
	}()
	objs, err := loadedObjects()
	if err != nil {
		r.Why = err.Error()
		return r
	}
	r.MappedStructs = readWithin(objs, selfCheckTimeout)
	return r
})

// readWithin runs abicheck.ReadMapped on a goroutine with a deadline of
// limit and waits for it at most limit and a second: a read that does not
// end is "not verified" (a WARN), never a hang of the host's call.
func readWithin(objs []abicheck.MappedObject, limit time.Duration) abicheck.MappedStructs {
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel() // also stops a read still going when the wait gives up
	done := make(chan abicheck.MappedStructs, 1)
	go func() {
		defer func() {
			if r := recover(); r != nil {
				done <- abicheck.MappedStructs{Why: fmt.Sprintf("internal error reading it: %v", r), Warn: true}
			}
		}()
		done <- abicheck.ReadMapped(ctx, objs)
	}()
	timer := time.NewTimer(limit + time.Second)
	defer timer.Stop()
	select {
	case m := <-done:
		return m
	case <-timer.C:
		return abicheck.MappedStructs{Why: fmt.Sprintf("reading its DWARF did not finish within %v", limit), Warn: true}
	}
}

// notVerified says why the layout in use was not verified: a WARN when
// what the calls run over is unknown (warn), else an INFO line (ENV).
func notVerified(fn string, rank int32, why string, warnLevel bool) {
	text := fmt.Sprintf("%s: the ring-stage layout in use was not verified against libnccom's DWARF: %s", fn, why)
	if warnLevel {
		warn(rank, text)
		return
	}
	info(C.NCCOMRING_SUBSYS_ENV, rank, text)
}

// loadedObjects lists the objects mapped in the process with their
// SONAME and build ID as mapped (selfcheck.c).
func loadedObjects() ([]abicheck.MappedObject, error) {
	var objs *C.struct_nccomring_object
	var n C.size_t
	if C.nccomring_loaded_objects(&objs, &n) != 0 {
		return nil, errors.New("out of memory listing the objects mapped in this process")
	}
	if objs == nil {
		return nil, nil
	}
	defer C.nccomring_free_objects(objs, n)
	out := make([]abicheck.MappedObject, 0, int(n))
	for _, o := range unsafe.Slice(objs, int(n)) {
		m := abicheck.MappedObject{
			Path:        C.GoString(o.path),
			SONAMEKnown: o.soname_known != 0,
			Addr:        uint64(o.map_addr),
		}
		if m.SONAMEKnown {
			m.SONAME = C.GoString(&o.soname[0])
		}
		if k := int(o.build_id_len); k > 0 && k <= len(o.build_id) {
			m.BuildID = hex.EncodeToString(C.GoBytes(unsafe.Pointer(&o.build_id[0]), C.int(k)))
		}
		out = append(out, m)
	}
	return out, nil
}
