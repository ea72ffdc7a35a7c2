package main

/*
#include "shim.h"
*/
import "C"

import (
	"fmt"
	"sync"
	"unsafe"

	"github.com/nccomring/libnccomring/abi"
	"github.com/nccomring/libnccomring/abicheck"
	"github.com/nccomring/libnccomring/layout"
)

// commLayout is where the host's ncclComm keeps the ASSUMED fields: D3's
// offsets, or the layout profile (`nccom-abi profile LIB`) that
// NCCOM_RING_LAYOUT names, read (the variable, params.go, and the file) at
// the first call and kept for the process. A profile that cannot be read
// (a link, not a regular file, larger than layout.MaxProfileSize: it is
// another user's file as much as ours), fails validation, was written for
// another build than the libnccom.so.2 mapped in the process, or places a
// field beyond the ncclComm the host is known to have (checkProfileBound),
// is an error every export returns (docs/errors.md E4).
var commLayout = sync.OnceValues(func() (layout.CommOffsets, error) {
	r, _ := layoutParam.get()
	path, set := r.value, r.set
	if !set {
		return layout.D3Offsets, nil
	}
	p, err := layout.ReadProfile(path)
	note := ""
	if err == nil {
		note, err = checkProfileBuild(p, path)
	}
	if err == nil {
		err = checkProfileBound(p)
	}
	if err != nil {
		return layout.D3Offsets, fmt.Errorf("%s=%s: %v; write one with `nccom-abi profile LIB`, or unset it for D3's offsets", LayoutEnvVar, path, err)
	}
	if note != "" {
		info(C.NCCOMRING_SUBSYS_ENV, -1, note)
	}
	return p.Comm, nil
})

// checkProfileBuild compares the profile's build ID with the GNU build ID
// of the libnccom.so.2 mapped in the process, as mapped (selfcheck.c
// reads it from the loaded object's memory, not from the file at its
// path): they must be equal, "" (no build ID) equal to "" only. With no
// libnccom.so.2 mapped (a host that links or dlopens libnccomring
// itself, and defines ncclComm itself) there is no build to compare: the
// offsets are used as given (within checkProfileBound's bound), and note
// is the INFO line (ENV) that says so, as the self-check then verifies
// nothing either.
func checkProfileBuild(p layout.Profile, path string) (note string, err error) {
	objs, err := loadedObjects()
	if err != nil {
		return "", fmt.Errorf("its build ID cannot be compared with libnccom's: %v", err)
	}
	lib, ok := abicheck.FindMapped(objs, abicheck.LibnccomSONAME)
	if !ok {
		return fmt.Sprintf("%s=%s: no %s is mapped in this process, so the profile's build ID (%s) was compared with none; its offsets are used as given",
			LayoutEnvVar, path, abicheck.LibnccomSONAME, orNone(p.BuildID)), nil
	}
	if p.BuildID != lib.BuildID {
		return "", fmt.Errorf("it is for build ID %s, and the %s mapped in this process (%s) has build ID %s",
			orNone(p.BuildID), abicheck.LibnccomSONAME, lib.Path, orNone(lib.BuildID))
	}
	return "", nil
}

// checkProfileBound keeps the profile inside the ncclComm the host is
// known to have (issue 34): the library writes nChannels, nNodes and node
// at the profile's offsets, and the size the profile declares is the
// profile's word only. Every field must end within the
// layout.CommMinSize bytes D3 says every host allocates; a profile with a
// field beyond them is taken only when the libnccom.so.2 mapped in the
// process gives a larger sizeof(ncclComm) in its DWARF (read as the
// self-check reads it, mappedLibnccom: so at this call, and not at all
// under NCCOM_RING_ABI_CHECK=off), and then every field must end within
// that size and the profile declare no larger one.
func checkProfileBound(p layout.Profile) error {
	err := p.Inside(layout.CommMinSize, false, "ncclComm that every host allocates (D3)")
	if err == nil {
		return nil
	}
	var why string
	if abiCheckModeFromEnv(-1) == abiOff {
		why = ABICheckEnvVar + "=off, so no libnccom's DWARF is read"
	} else {
		read := mappedLibnccom()
		if size, ok := read.CommSize(); ok {
			return p.Inside(size, true, fmt.Sprintf("ncclComm in the DWARF of %s, the %s mapped in this process", read.Library, abicheck.LibnccomSONAME))
		}
		why = read.Why
	}
	return fmt.Errorf("%v, and no larger ncclComm is known: %s", err, why)
}

func orNone(id string) string {
	if id == "" {
		return "none"
	}
	return id
}

// layoutError is the error of a bad profile for export fn, or nil.
func layoutError(fn string) error {
	if _, err := commLayout(); err != nil {
		return abi.Errorf(abi.InvalidUsage, "%s: %v", fn, err)
	}
	return nil
}

// commView is the communicator the ring stage runs on. When the host keeps
// the ASSUMED fields where D3 puts them, that is the host's struct itself.
// Otherwise it is a copy of the documented prefix (CommMinSize bytes: never
// more than D3 says a host allocates) whose ASSUMED fields hold the host's
// values, read at the profile's offsets; commit then writes back what the
// ring stage writes: the channels, kangaRing, and nChannels, nNodes and
// node at the profile's offsets. A failed call writes nothing back (D11).
type commView struct {
	host, comm *abi.Comm
	offs       layout.CommOffsets
}

// newCommView returns the view by value: it lives on the export's stack
// (issue 13: no Go-heap allocation per call).
func newCommView(host *abi.Comm) commView {
	v := commView{host: host, comm: host, offs: layout.D3Offsets}
	offs, _ := commLayout()
	if host == nil || offs == layout.D3Offsets {
		return v
	}
	local := new(abi.Comm)
	copy(commBytes(local), commBytes(host))
	local.Topo = *(*uintptr)(fieldAt(host, offs.Topo))
	local.Rank = *(*int32)(fieldAt(host, offs.Rank))
	local.NRanks = *(*int32)(fieldAt(host, offs.NRanks))
	local.Node = *(*int32)(fieldAt(host, offs.Node))
	local.NNodes = *(*int32)(fieldAt(host, offs.NNodes))
	local.NChannels = *(*int32)(fieldAt(host, offs.NChannels))
	v.comm, v.offs = local, offs
	return v
}

// commit writes a successful call's outputs back to the host's struct.
func (v *commView) commit() {
	if v.comm == v.host {
		return
	}
	v.host.Channels = v.comm.Channels
	v.host.KangaRing = v.comm.KangaRing
	*(*int32)(fieldAt(v.host, v.offs.NChannels)) = v.comm.NChannels
	*(*int32)(fieldAt(v.host, v.offs.NNodes)) = v.comm.NNodes
	*(*int32)(fieldAt(v.host, v.offs.Node)) = v.comm.Node
}

func commBytes(c *abi.Comm) []byte {
	return unsafe.Slice((*byte)(unsafe.Pointer(c)), layout.CommMinSize)
}

func fieldAt(c *abi.Comm, offset int) unsafe.Pointer { return unsafe.Add(unsafe.Pointer(c), offset) }
