package ring

import "unsafe"

// encodeDeltas is encodeDeltasGeneric in assembly (deltas_amd64.s), sixteen
// ints at a time with SSE2's saturating packs.
//
//go:noescape
func encodeDeltas(dst unsafe.Pointer, dstRow uintptr, src *int32, rows, count int, q0 int32)

// decodeDeltas is decodeDeltasGeneric in assembly (deltas_amd64.s),
// sixteen deltas at a time, sign-extended with SSE2's unpacks and shifts.
//
//go:noescape
func decodeDeltas(first, double *int32, src *int8, count int, q0 int32)
