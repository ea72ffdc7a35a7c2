package ring

import (
	"unsafe"

	"github.com/nccomring/libnccomring/abi"
)

// ExactOnly returns opt with Postset's fast path off: the exact path alone,
// for the differential test (fastpath.go).
func ExactOnly(opt PostsetOptions) PostsetOptions {
	opt.exactOnly = true
	return opt
}

// TookFastPath reports whether the fast path took a successful Postset's
// fragments.
func TookFastPath(res PostsetResult) bool { return res.fast }

// SetNodeWalkMaxRanks sets the largest node the fast path walks node by
// node (nodeWalk; larger nodes take fastWalk) and returns the old value,
// so that the tests run both walks on the same fragments.
func SetNodeWalkMaxRanks(n int32) int32 {
	old := nodeWalkMaxRanks
	nodeWalkMaxRanks = n
	return old
}

// QuadSteps runs left steps of nodeWalk's four-channel loop over frags
// (channels c..c+3, rows of rowInts ints from out[0]): walkQuadSteps (the
// assembly, where there is one) or, with generic, walkQuadStepsGeneric.
func QuadSteps(generic bool, frags []abi.TopoRanks, c int, out []int32, rowInts, left int, next *[4]int32, head0 int32, recv, send [4]int32) bool {
	base := uintptr(unsafe.Pointer(&frags[0]))
	stride := int(unsafe.Sizeof(frags[0]))
	if 3*rowInts+left >= len(out) {
		panic("QuadSteps: rows outside out")
	}
	walk := walkQuadSteps
	if generic {
		walk = walkQuadStepsGeneric
	}
	return walk(base, stride, uintptr(4*c), unsafe.Pointer(&out[0]), uintptr(4*rowInts), left, next, head0, uint32(len(frags)), &recv, &send)
}

// CommitRing is commitRing, Postset's copy of a ring into userRanks.
func CommitRing(first, double, ring []int32, at int) { commitRing(first, double, ring, at) }
