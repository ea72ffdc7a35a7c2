//go:build ignore

// The input to cgo -godefs for ztypes.go: the header's own view of what
// package abi mirrors by hand (ncclComm, ncclTopoSystem, and the structs
// they hold) and the header's constants, for the tests to compare with abi
// and package layout. `make generate` writes ztypes.go from it. The doc
// comments below are copied onto the generated declarations.

package headercheck

/*
#include "nccom_ring.h"
*/
import "C"

// The header's constants (D2), named as package layout names them.
const (
	MaxChannels    = C.MAXCHANNELS
	MaxLocalRanks  = C.NCCL_TOPO_MAX_NODES
	MaxKangaPaths  = C.MAX_KANGA_PATHS
	PatternRing    = C.NCCL_TOPO_PATTERN_RING
	MaxIntra       = C.NCCOM_RING_MAX_INTRA
	MaxInter       = C.NCCOM_RING_MAX_INTER
	KangaRingWidth = C.NCCOM_RING_KANGA_WIDTH
)

// Ring is struct ncclRing as the header lays it out.
type Ring C.struct_ncclRing

// Channel is struct ncclChannel as the header lays it out.
type Channel C.struct_ncclChannel

// TopoNodeSet is struct ncclTopoNodeSet as the header lays it out.
type TopoNodeSet C.struct_ncclTopoNodeSet

// TopoSystem is struct ncclTopoSystem as the header lays it out.
type TopoSystem C.struct_ncclTopoSystem

// Comm is struct ncclComm as the header lays it out.
type Comm C.struct_ncclComm
