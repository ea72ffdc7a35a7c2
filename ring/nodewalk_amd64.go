package ring

import "unsafe"

// walkQuadSteps is walkQuadStepsGeneric in assembly (nodewalk_amd64.s):
// the same reads, writes and answer, with none of the loop's values
// spilled to the stack.
//
//go:noescape
func walkQuadSteps(base uintptr, stride int, coff uintptr, out unsafe.Pointer, row uintptr, left int, next *[4]int32,
	head0 int32, size uint32, r0, r1, r2, r3, s0, s1, s2, s3 int32) bool
