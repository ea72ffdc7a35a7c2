package ring

import "unsafe"

// walkQuadSteps is walkQuadStepsGeneric in assembly (nodewalk_amd64.s):
// the same reads, writes and answer, with none of the loop's values
// spilled to the stack and the four-channel agreement one vector compare.
//
//go:noescape
func walkQuadSteps(base uintptr, stride int, coff uintptr, out unsafe.Pointer, row uintptr, left int, next *[4]int32,
	head0 int32, size uint32, recv, send *[4]int32) bool
