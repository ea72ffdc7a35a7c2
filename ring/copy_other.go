//go:build !amd64

package ring

import "unsafe"

// copyStreaming copies n int32s from src to dst, which do not overlap:
// copy, where there is no assembly with non-temporal stores for it.
func copyStreaming(dst, src unsafe.Pointer, n int) {
	copy(unsafe.Slice((*int32)(dst), n), unsafe.Slice((*int32)(src), n))
}
