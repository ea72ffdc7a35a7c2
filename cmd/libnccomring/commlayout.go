package main

import (
	"fmt"
	"os"
	"sync"
	"unsafe"

	"github.com/nccomring/libnccomring/abi"
	"github.com/nccomring/libnccomring/layout"
)

// commLayout is where the host's ncclComm keeps the ASSUMED fields: D3's
// offsets, or the layout profile (`nccom-abi profile LIB`) that
// NCCOM_RING_LAYOUT names, read (the variable, params.go, and the file) at
// the first call and kept for the process. A profile that cannot be read
// or fails validation is an error every export returns (docs/errors.md E4).
var commLayout = sync.OnceValues(func() (layout.CommOffsets, error) {
	r, _ := layoutParam.get()
	path, set := r.value, r.set
	if !set {
		return layout.D3Offsets, nil
	}
	data, err := os.ReadFile(path)
	if err == nil {
		var o layout.CommOffsets
		if o, err = layout.ParseProfile(data); err == nil {
			return o, nil
		}
	}
	return layout.D3Offsets, fmt.Errorf("%s=%s: %v; write one with `nccom-abi profile LIB`, or unset it for D3's offsets", LayoutEnvVar, path, err)
})

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
