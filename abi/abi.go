// Package abi holds the Go mirrors of the ring-stage C structs of
// include/nccom_ring.h (spec §2-§5, D2, D3) and ncclResult_t.
//
// The mirrors are laid out byte for byte like the C structs, so a C pointer
// converts to a mirror pointer and fields are read and written in place, with
// no copy. C pointer members are held as uintptr: the Go garbage collector
// never sees them and no write barrier runs on C memory. Never store a Go
// pointer into a mirror that lives in C memory.
//
// The structs of fixed layout (Ring, Channel, TopoRanks, TopoGraph) and the
// result codes are generated from the header into ztypes.go (types.go is
// the input; `make generate`). Comm and TopoSystem, below, are kept by hand:
// Comm is laid out over package layout's offsets, because the ring stage
// also reads the ASSUMED fields at a layout profile's offsets
// (cmd/libnccomring/commlayout.go), and TopoSystem is the one int the ring
// stage reads. internal/headercheck's tests check that ztypes.go is what the
// header gives now, and that the header, both kinds of mirror and package
// layout's table agree; `make` runs them after every library build.
package abi

import (
	"unsafe"

	"github.com/nccomring/libnccomring/layout"
)

// TopoSystem mirrors the prefix of struct ncclTopoSystem the ring stage reads:
// nodes[0].count at +0.
type TopoSystem struct {
	Nodes0Count int32
}

// Comm mirrors the prefix view struct ncclComm (D2, D3). Fields marked
// ASSUMED are placed by D3, not by the spec.
type Comm struct {
	Channels           [layout.MaxChannels]Channel
	NKangaRingChannels int32
	KangaRing          [layout.MaxKangaPaths][layout.KangaRingWidth]int32
	NMlaInCycle        int32
	_                  [layout.CommPeerInfo - layout.CommNMlaInCycle - 4]byte
	PeerInfo           uintptr
	Topo               uintptr // ASSUMED
	_                  [layout.CommRank - layout.CommTopo - 8]byte
	Rank               int32 // ASSUMED
	NRanks             int32 // ASSUMED
	_                  [layout.CommNode - layout.CommNRanks - 4]byte
	Node               int32 // ASSUMED
	NNodes             int32 // ASSUMED
	LocalRanks         int32
	_                  [layout.CommNChannels - layout.CommLocalRanks - 4]byte
	NChannels          int32 // ASSUMED
	_                  [layout.CommEnablePod - layout.CommNChannels - 4]byte
	EnablePod          int32
}

// Pointer turns an address held in a uintptr mirror field back into a
// pointer. The address is C memory (or Go memory the caller keeps alive), so
// no GC rule is at stake; converting through memory keeps vet's
// uintptr-conversion check meaningful for the rest of the code.
func Pointer(p uintptr) unsafe.Pointer {
	return *(*unsafe.Pointer)(unsafe.Pointer(&p))
}

// Ints views n C ints at address p as a Go slice, without copying. p must
// point to at least n int32 values that stay alive while the slice is used.
func Ints(p uintptr, n int) []int32 {
	if p == 0 || n <= 0 {
		return nil
	}
	return unsafe.Slice((*int32)(Pointer(p)), n)
}

// Address returns the address of the first element of s as a uintptr, for
// storing into a C pointer field. s must be C memory or kept alive by the
// caller for as long as the address is used.
func Address(s []int32) uintptr {
	if len(s) == 0 {
		return 0
	}
	return uintptr(unsafe.Pointer(&s[0]))
}
