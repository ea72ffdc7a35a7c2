package main

/*
#include <stdlib.h>
#include "shim.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"runtime/debug"
	"strings"
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

// runABICheck finds the libnccom.so.2 mapped in the process and compares
// its layout with the one in use, printing one INFO line (ENV) on what it
// found. The memory it read (the library's DWARF) is handed back to the
// system before the call goes on: the check runs once, inside a job. When
// no libnccom's DWARF was read (none mapped, or one without debug info),
// there is nothing worth a forced collection, and none runs (issue 13: no
// GC the host did not need).
func runABICheck(fn string, rank int32) (v abiVerdict) {
	if v.mode = abiCheckModeFromEnv(rank); v.mode == abiOff {
		return v
	}
	readDWARF := true // until CheckMapped says it found none to read
	defer func() {
		if r := recover(); r != nil { // a library the DWARF reader chokes on: not verified, not fatal
			v.refusal = [numCheckedExports]string{}
			notVerified(fn, rank, fmt.Sprintf("internal error reading it: %v", r))
		}
		if readDWARF {
			debug.FreeOSMemory()
		}
	}()
	start := time.Now()
	paths, err := loadedObjects()
	if err != nil {
		readDWARF = false
		notVerified(fn, rank, err.Error())
		return v
	}
	offs, _ := commLayout() // a bad profile was refused before (E4)
	source := "D3"
	if offs != layout.D3Offsets {
		source = LayoutEnvVar
	}
	sc := abicheck.CheckMapped(paths, offs, source)
	if sc.Report == nil {
		readDWARF = false
		notVerified(fn, rank, sc.Why)
		return v
	}
	info(C.NCCOMRING_SUBSYS_ENV, rank, fmt.Sprintf("%s: %s, in %.1f ms", fn, sc.Verified(), time.Since(start).Seconds()*1e3))
	for kind := range v.refusal {
		v.refusal[kind] = sc.Refusal(touches[kind])
	}
	return v
}

func notVerified(fn string, rank int32, why string) {
	info(C.NCCOMRING_SUBSYS_ENV, rank, fmt.Sprintf("%s: the ring-stage layout in use was not verified against libnccom's DWARF: %s", fn, why))
}

// loadedObjects lists the paths of the objects mapped in the process
// (selfcheck.c).
func loadedObjects() ([]string, error) {
	var buf *C.char
	var n C.size_t
	if C.nccomring_loaded_objects(&buf, &n) != 0 {
		return nil, errors.New("out of memory listing the objects mapped in this process")
	}
	if buf == nil {
		return nil, nil
	}
	defer C.free(unsafe.Pointer(buf))
	raw := string(unsafe.Slice((*byte)(unsafe.Pointer(buf)), int(n)))
	return strings.Split(strings.TrimSuffix(raw, "\x00"), "\x00"), nil
}
