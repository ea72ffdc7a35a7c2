//go:build !amd64

package ring

import "unsafe"

// encodeDeltas is encodeDeltasGeneric where there is no assembly for it.
func encodeDeltas(dst unsafe.Pointer, dstRow uintptr, src *int32, rows, count int, q0 int32) {
	encodeDeltasGeneric(dst, dstRow, src, rows, count, q0)
}

// decodeDeltas is decodeDeltasGeneric where there is no assembly for it.
func decodeDeltas(first, double *int32, src *int8, count int, q0 int32) {
	decodeDeltasGeneric(first, double, src, count, q0)
}
