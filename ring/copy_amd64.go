package ring

import "unsafe"

// copyStreaming copies n int32s from src to dst, which do not overlap,
// with non-temporal stores (copy_amd64.s).
//
//go:noescape
func copyStreaming(dst, src unsafe.Pointer, n int)
