package ring

import "unsafe"

// Postset's rings in delta form (issue 13). A job numbered node-major in
// nodes of L ranks (blockFast) has node m's ranks at ring positions
// [m*L, (m+1)*L) of every channel when the rings are written from node 0's
// head: the rank at position q lies in the same block of L as q, so it
// differs from q by less than L. With L at most deltaMaxRanks (128) the
// difference fits a signed byte, and nodeWalk keeps each ring as those
// bytes, q's rank minus q, instead of as ints: a quarter of the working
// memory written by the walk and read back by the commit, which at 65,536
// ranks and more is memory traffic the floor does not pay (BENCHMARKS.md).
// The commit decodes them as it writes userRanks, rotated to this rank.
//
// Every byte is exact only once the whole walk has passed (a rank of
// another block met in node m's run fails the walk later, at that block's
// inBlock check); until then a difference out of range is saturated, and
// nothing reads it.

// deltaMaxRanks is the largest node size whose rings nodeWalk keeps in
// delta form, at most deltaLimit. A variable, so that the tests run the
// int rows and the delta rows on the same fragments.
var deltaMaxRanks int32 = deltaLimit

// deltaLimit is the largest node size whose differences all fit an int8:
// they lie in [-127, 127] for nodes of 128 ranks, and a node of 129 could
// need +128, which would saturate.
const deltaLimit = 128

// takesDeltas reports whether nodeWalk keeps the rings of nodes numbered
// in blocks of block ranks (0: not so numbered) in delta form.
func takesDeltas(block int32) bool {
	return block > 0 && block <= min(deltaMaxRanks, deltaLimit)
}

// workRings is Postset's working rings, n of nRanks positions each: ring c
// at positions [c*nRanks, (c+1)*nRanks) of ints, or, when deltas is not
// nil, of deltas, each the rank at its position in the ring minus that
// position.
type workRings struct {
	ints   []int32
	deltas []int8
	nRanks int
}

// rank is the rank at position p of ring c.
func (w workRings) rank(c, p int) int32 {
	i := c*w.nRanks + p
	if w.deltas != nil {
		return int32(p) + int32(w.deltas[i])
	}
	return w.ints[i]
}

// commit writes ring c, rotated to start at position at, into first and
// (when it is not nil) double: commitRing for ints, decodeDeltas, which
// writes both at once, for deltas.
func (w workRings) commit(c int, first, double []int32, at int) {
	if w.deltas == nil {
		commitRing(first, double, w.ints[c*w.nRanks:(c+1)*w.nRanks], at)
		return
	}
	ring := w.deltas[c*w.nRanks : (c+1)*w.nRanks]
	if double == nil { // each int stored twice to one address, in L1 by then
		double = first
	}
	_, _ = first[len(ring)-1], double[len(ring)-1]
	tail := len(ring) - at // positions [at, nRanks) first, then [0, at)
	if tail > 0 {
		decodeDeltas(&first[0], &double[0], &ring[at], tail, int32(at))
	}
	if at > 0 {
		decodeDeltas(&first[tail], &double[tail], &ring[0], at, 0)
	}
}

// encodeDeltasGeneric writes rows rows of count ints, one after the other
// at src, as deltas: row i's element k, minus q0+k, saturated to an int8,
// at dst + i*dstRow + k. encodeDeltas is it in assembly.
func encodeDeltasGeneric(dst unsafe.Pointer, dstRow uintptr, src *int32, rows, count int, q0 int32) {
	in := unsafe.Slice(src, rows*count)
	for i := range rows {
		out := unsafe.Slice((*int8)(unsafe.Add(dst, uintptr(i)*dstRow)), count)
		for k := range out {
			out[k] = int8(min(max(in[i*count+k]-q0-int32(k), -128), 127))
		}
	}
}

// decodeDeltasGeneric writes q0+k plus src's k-th delta to first[k] and
// double[k], for k in [0, count). decodeDeltas is it in assembly.
func decodeDeltasGeneric(first, double *int32, src *int8, count int, q0 int32) {
	in := unsafe.Slice(src, count)
	a, b := unsafe.Slice(first, count), unsafe.Slice(double, count)
	for k, d := range in {
		r := q0 + int32(k) + int32(d)
		a[k], b[k] = r, r
	}
}
