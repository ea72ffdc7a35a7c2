// Package abi holds the Go mirrors of the ring-stage C structs of
// include/nccom_ring.h (spec §2-§5, D2, D3), kept in this one file.
//
// The mirrors are laid out byte for byte like the C structs, so a C pointer
// converts to a mirror pointer and fields are read and written in place, with
// no copy. C pointer members are held as uintptr: the Go garbage collector
// never sees them and no write barrier runs on C memory. Never store a Go
// pointer into a mirror that lives in C memory.
//
// The assertions in assert.go break the build when a mirror drifts from
// package layout; cmd/libnccomring cross-checks both against the C header.
package abi

import (
	"unsafe"

	"github.com/nccomring/libnccomring/layout"
)

// Ring mirrors struct ncclRing (24 bytes).
type Ring struct {
	Prev         int32
	Next         int32
	UserRanks    uintptr // int*: comm->nRanks ints, C-allocated (D12)
	DevUserRanks uintptr // int*: device runtime's; never touched
}

// Channel mirrors struct ncclChannel (512 bytes); only Ring is the ring
// stage's, the rest is runtime state that Preset's doubling copies (D6).
type Channel struct {
	Ring   Ring
	Opaque [layout.ChannelSize - layout.RingSize]byte
}

// TopoRanks mirrors struct ncclTopoRanks (960 bytes), one rank's fragment.
type TopoRanks struct {
	RingRecv          [layout.MaxChannels]int32
	RingSend          [layout.MaxChannels]int32
	RingPrev          [layout.MaxChannels]int32
	RingNext          [layout.MaxChannels]int32
	TreeToParent      [layout.MaxChannels]int32
	TreeToChild0      [layout.MaxChannels]int32
	TreeToChild1      [layout.MaxChannels]int32
	JbogKangaringPath [layout.MaxKangaPaths][layout.KangaPathWidth]int32
}

// TopoGraph mirrors struct ncclTopoGraph (33080 bytes).
type TopoGraph struct {
	ID              int32
	Pattern         int32
	CrossNic        int32
	CollNet         int32
	MinChannels     int32
	MaxChannels     int32
	NChannels       int32
	SpeedIntra      float32
	SpeedInter      float32
	TypeIntra       int32
	TypeInter       int32
	SameChannels    int32
	NHops           int32
	Intra           [layout.MaxIntra]int32 // [c*localRanks + i], global ranks
	Inter           [layout.MaxInter]int32 // [2c] entry NIC, [2c+1] exit NIC
	CrossRackToRack int32
}

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
