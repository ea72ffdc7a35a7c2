//go:build !amd64

package ring

import "unsafe"

// walkQuadSteps is walkQuadStepsGeneric where there is no assembly for it.
func walkQuadSteps(base uintptr, stride int, coff uintptr, out unsafe.Pointer, row uintptr, left int, next *[4]int32,
	head0 int32, size uint32, recv, send *[4]int32) bool {
	return walkQuadStepsGeneric(base, stride, coff, out, row, left, next, head0, size, recv, send)
}
