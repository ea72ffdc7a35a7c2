package ring

import "unsafe"

// ncclBuildRings' fast path (issue 13): one ring-major successor table,
// every ring checked by a read-only walk, then every ring written by a
// second walk, so that a failing call writes nothing (B6-B8) and no call
// needs working memory. Four rings walk side by side in each pass: their
// chains of dependent loads are independent, so four lookups are in flight
// at once instead of one (eight in the check, which only reads). A plain C walk with a visited bitmap does one
// pass, but its one chain waits on every load.
//
// A walk from start that first comes back to start at exactly nRanks steps
// has visited every rank once (a walk that repeated some other rank would
// cycle without ever reaching start again), so membership costs one compare
// per step and no bitmap.

// ringsWhole reports whether every ring r < nRings of the ring-major table
// tab (nRanks ints per ring) is a Hamiltonian cycle through start: every
// next in [0, nRanks), back at start after exactly nRanks steps and never
// earlier. It only reads tab. len(tab) >= nRings*nRanks, nRanks >= 1 and
// start in [0, nRanks) are the caller's.
func ringsWhole(tab []int32, nRings, nRanks int, start int32) bool {
	_ = tab[nRings*nRanks-1]
	r := 0
	for ; r+8 <= nRings; r += 8 {
		if !whole8(&tab[r*nRanks], nRanks, start) {
			return false
		}
	}
	for ; r+4 <= nRings; r += 4 {
		if !whole4(&tab[r*nRanks], nRanks, start) {
			return false
		}
	}
	for ; r < nRings; r++ {
		if !whole1(&tab[r*nRanks], nRanks, start) {
			return false
		}
	}
	return true
}

// at is row[v] for a row of the table whose v is known to be in range
// (start, or a value a range check let through): no bounds check in the
// walks' dependent chains.
func at(row unsafe.Pointer, v int32) int32 {
	return *(*int32)(unsafe.Add(row, uintptr(uint32(v))*4))
}

// whole1 is ringsWhole for the one ring whose table starts at row.
func whole1(row *int32, nRanks int, start int32) bool {
	p, n := unsafe.Pointer(row), uint32(nRanks)
	cur := start
	for range nRanks - 1 {
		v := at(p, cur)
		if uint32(v) >= n || v == start {
			return false
		}
		cur = v
	}
	return at(p, cur) == start
}

// whole4 is ringsWhole for the four rings whose tables start at row.
func whole4(row *int32, nRanks int, start int32) bool {
	n := uint32(nRanks)
	pa := unsafe.Pointer(row)
	pb := unsafe.Add(pa, 4*nRanks)
	pc := unsafe.Add(pb, 4*nRanks)
	pd := unsafe.Add(pc, 4*nRanks)
	a, b, c, d := start, start, start, start
	for range nRanks - 1 {
		va, vb, vc, vd := at(pa, a), at(pb, b), at(pc, c), at(pd, d)
		if uint32(va) >= n || uint32(vb) >= n || uint32(vc) >= n || uint32(vd) >= n ||
			va == start || vb == start || vc == start || vd == start {
			return false
		}
		a, b, c, d = va, vb, vc, vd
	}
	return at(pa, a) == start && at(pb, b) == start && at(pc, c) == start && at(pd, d) == start
}

// whole8 is ringsWhole for the eight rings whose tables start at row:
// eight chains in flight, which pays where the rings' lookups miss the
// cache (rings in a random order); the write pass stays four wide, where
// eight chains would not fit the registers.
func whole8(row *int32, nRanks int, start int32) bool {
	n := uint32(nRanks)
	p0 := unsafe.Pointer(row)
	s := uintptr(4 * nRanks)
	p1, p2, p3 := unsafe.Add(p0, s), unsafe.Add(p0, 2*s), unsafe.Add(p0, 3*s)
	p4, p5, p6, p7 := unsafe.Add(p0, 4*s), unsafe.Add(p0, 5*s), unsafe.Add(p0, 6*s), unsafe.Add(p0, 7*s)
	a, b, c, d, e, f, g, h := start, start, start, start, start, start, start, start
	for range nRanks - 1 {
		va, vb, vc, vd := at(p0, a), at(p1, b), at(p2, c), at(p3, d)
		ve, vf, vg, vh := at(p4, e), at(p5, f), at(p6, g), at(p7, h)
		if uint32(va) >= n || uint32(vb) >= n || uint32(vc) >= n || uint32(vd) >= n ||
			uint32(ve) >= n || uint32(vf) >= n || uint32(vg) >= n || uint32(vh) >= n ||
			va == start || vb == start || vc == start || vd == start ||
			ve == start || vf == start || vg == start || vh == start {
			return false
		}
		a, b, c, d, e, f, g, h = va, vb, vc, vd, ve, vf, vg, vh
	}
	return at(p0, a) == start && at(p1, b) == start && at(p2, c) == start && at(p3, d) == start &&
		at(p4, e) == start && at(p5, f) == start && at(p6, g) == start && at(p7, h) == start
}

// writeRings writes the walk from start of every ring r < nRings into
// out[r*nRanks ...]: the second pass, over a table ringsWhole accepted, so
// every value it follows is in range.
func writeRings(out, tab []int32, nRings, nRanks int, start int32) {
	total := nRings * nRanks
	out, tab = out[:total:total], tab[:total:total]
	r := 0
	for ; r+4 <= nRings; r += 4 {
		write4(out[r*nRanks:(r+4)*nRanks], &tab[r*nRanks], nRanks, start)
	}
	for ; r < nRings; r++ {
		write1(out[r*nRanks:(r+1)*nRanks], &tab[r*nRanks], start)
	}
}

// write1 writes one ring's walk into out (len(out) ranks).
func write1(out []int32, row *int32, start int32) {
	p := unsafe.Pointer(row)
	cur := start
	for i := range out {
		out[i] = cur
		cur = at(p, cur)
	}
}

// write4 writes four rings' walks into out (4*nRanks ints, ring-major).
func write4(out []int32, row *int32, nRanks int, start int32) {
	oa, ob, oc, od := out[:nRanks], out[nRanks:2*nRanks], out[2*nRanks:3*nRanks], out[3*nRanks:4*nRanks]
	ob, oc, od = ob[:len(oa)], oc[:len(oa)], od[:len(oa)]
	pa := unsafe.Pointer(row)
	pb := unsafe.Add(pa, 4*nRanks)
	pc := unsafe.Add(pb, 4*nRanks)
	pd := unsafe.Add(pc, 4*nRanks)
	a, b, c, d := start, start, start, start
	for i := range oa {
		oa[i], ob[i], oc[i], od[i] = a, b, c, d
		a, b, c, d = at(pa, a), at(pb, b), at(pc, c), at(pd, d)
	}
}
