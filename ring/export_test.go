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

// TookDeltaRings reports whether the fast path kept a successful Postset's
// rings as deltas (deltas.go).
func TookDeltaRings(res PostsetResult) bool { return res.deltas }

// SetDeltaMaxRanks sets the largest node whose rings nodeWalk keeps as
// deltas and returns the old value: 0 keeps every ring as ints.
func SetDeltaMaxRanks(n int32) int32 {
	old := deltaMaxRanks
	deltaMaxRanks = n
	return old
}

// EncodeDeltas is encodeDeltas (the assembly, where there is one) or, with
// generic, encodeDeltasGeneric: rows rows of count ints from src into dst,
// row i at dst[i*dstRow:].
func EncodeDeltas(generic bool, dst []int8, dstRow int, src []int32, rows, count int, q0 int32) {
	if rows*count == 0 {
		return
	}
	if len(src) < rows*count || len(dst) < (rows-1)*dstRow+count {
		panic("EncodeDeltas: rows outside src or dst")
	}
	encode := encodeDeltas
	if generic {
		encode = encodeDeltasGeneric
	}
	encode(unsafe.Pointer(&dst[0]), uintptr(dstRow), &src[0], rows, count, q0)
}

// DecodeDeltas is decodeDeltas (the assembly, where there is one) or, with
// generic, decodeDeltasGeneric, over all of src.
func DecodeDeltas(generic bool, first, double []int32, src []int8, q0 int32) {
	if len(src) == 0 {
		return
	}
	if len(first) < len(src) || len(double) < len(src) {
		panic("DecodeDeltas: src longer than first or double")
	}
	decode := decodeDeltas
	if generic {
		decode = decodeDeltasGeneric
	}
	decode(&first[0], &double[0], &src[0], len(src), q0)
}

// CommitDeltas is Postset's copy of a ring kept as deltas into userRanks
// (workRings.commit).
func CommitDeltas(first, double []int32, ring []int8, at int) {
	workRings{deltas: ring, nRanks: len(ring)}.commit(0, first, double, at)
}
