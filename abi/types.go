//go:build ignore

// The input to cgo -godefs for ztypes.go: the ring-stage structs of fixed
// layout and the result codes, as include/nccom_ring.h declares them.
// `make generate` writes ztypes.go from it (internal/mkgodefs says how and
// why the output is edited: C pointers become uintptr). The doc comments
// below are copied onto the generated declarations.

package abi

/*
#include "nccom_ring.h"
*/
import "C"

// The ncclResult_t values of D1.
const (
	Success            Result = C.ncclSuccess
	UnhandledCudaError Result = C.ncclUnhandledCudaError
	SystemError        Result = C.ncclSystemError
	InternalError      Result = C.ncclInternalError
	InvalidArgument    Result = C.ncclInvalidArgument
	InvalidUsage       Result = C.ncclInvalidUsage
)

// Ring mirrors struct ncclRing. UserRanks is the int * to
// comm->nRanks ints, C memory (D12); DevUserRanks belongs to the device
// runtime and is never touched.
type Ring C.struct_ncclRing

// Channel mirrors struct ncclChannel; only Ring is the ring
// stage's, the rest is runtime state that Preset's doubling copies (D6).
type Channel C.struct_ncclChannel

// TopoRanks mirrors struct ncclTopoRanks, one rank's fragment.
type TopoRanks C.struct_ncclTopoRanks

// TopoGraph mirrors struct ncclTopoGraph. Intra is indexed
// [c*localRanks + i] and holds global ranks; Inter[2c] is the NIC channel c
// enters on, Inter[2c+1] the one it leaves on.
type TopoGraph C.struct_ncclTopoGraph

// Record mirrors struct nccomRingRecord, the ring stage's 64 bytes at
// +832 of each fragment (D25, D27).
type Record C.struct_nccomRingRecord

// The record's constants (D25, D28).
const (
	RecordOffset          = C.NCCOM_RING_RECORD_OFFSET
	RecordMagic           = C.NCCOM_RING_RECORD_MAGIC
	RecordVersion         = C.NCCOM_RING_RECORD_VERSION
	RecordNetwork         = C.NCCOM_RING_RECORD_NETWORK
	RecordPodNode         = C.NCCOM_RING_RECORD_POD_NODE
	RecordSwitchV1        = C.NCCOM_RING_RECORD_SWITCHV1
	RecordUnknownPlatform = C.NCCOM_RING_RECORD_PLATFORM_UNKNOWN
	RecordEnablePod       = C.NCCOM_RING_RECORD_ENABLE_POD
	RecordLevelsShift     = C.NCCOM_RING_RECORD_LEVELS_SHIFT
	RecordKangaShift      = C.NCCOM_RING_RECORD_KANGA_SHIFT
	RecordChannelsShift   = C.NCCOM_RING_RECORD_CHANNELS_SHIFT
	MaxLocationLevels     = C.NCCOM_RING_MAX_LOCATION_LEVELS
)
