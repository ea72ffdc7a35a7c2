//go:build !amd64

package ring

import "unsafe"

// walkQuadSteps is walkQuadStepsGeneric where there is no assembly for it.
func walkQuadSteps(base uintptr, stride int, coff uintptr, out unsafe.Pointer, row uintptr, left int, next *[4]int32,
	head0 int32, size uint32, r0, r1, r2, r3, s0, s1, s2, s3 int32) bool {
	return walkQuadStepsGeneric(base, stride, coff, out, row, left, next, head0, size, r0, r1, r2, r3, s0, s1, s2, s3)
}
