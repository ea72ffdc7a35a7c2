package ring

import "unsafe"

// Postset's walk (issue 13): every channel's stitched ring from one start,
// over the ring-major link table scanFragments and stitch build (channel
// c's pairs {next, prev} of rank v at links[c*2*nRanks + 2*v]), written into
// rings[c*nRanks ...] as it goes. Four channels walk side by side: their
// chains of dependent loads are independent, so four lookups are in flight
// at once, and four channels' tables (32 bytes a rank) stay in cache.
//
// A ring passes when every next is in [0, nRanks), the walk is back at
// start after exactly nRanks steps and never earlier (so every rank is on
// it once: walk.go), and every rank's prev is the rank the walk came from
// (D24). Passing does not depend on start: a ring that passes is one cycle
// through every rank with mutual links, from wherever it is walked. On a
// failure the caller knows only that some ring failed; the canonical error
// comes from diagnose.

// postsetWalk walks channels 0..n-1 from start into rings and reports
// whether every one passed. rings holds n*nRanks ints, links 2*n*nRanks.
func postsetWalk(links, rings []int32, n, nRanks int, start int32) bool {
	_, _ = links[2*n*nRanks-1], rings[n*nRanks-1]
	c := 0
	for ; c+4 <= n; c += 4 {
		if !pairWalk4(&links[2*c*nRanks], rings[c*nRanks:(c+4)*nRanks], nRanks, start) {
			return false
		}
	}
	for ; c < n; c++ {
		if !pairWalk1(&links[2*c*nRanks], rings[c*nRanks:(c+1)*nRanks], start) {
			return false
		}
	}
	return true
}

// pairNext and pairPrev are the next and prev of rank v in a channel's
// pair table at p; v is known to be in range (start, or a value a range
// check let through), so there is no bounds check in the dependent chains.
func pairNext(p unsafe.Pointer, v int32) int32 {
	return *(*int32)(unsafe.Add(p, uintptr(uint32(v))*8))
}

func pairPrev(p unsafe.Pointer, v int32) int32 {
	return *(*int32)(unsafe.Add(p, uintptr(uint32(v))*8+4))
}

// pairWalk1 walks the one channel whose pair table starts at tab into out
// (len(out) = nRanks ranks).
func pairWalk1(tab *int32, out []int32, start int32) bool {
	p, n := unsafe.Pointer(tab), uint32(len(out))
	cur := start
	last := len(out) - 1
	for i := range last {
		out[i] = cur
		v := pairNext(p, cur)
		if uint32(v) >= n || v == start || pairPrev(p, v) != cur {
			return false
		}
		cur = v
	}
	out[last] = cur
	return pairNext(p, cur) == start && pairPrev(p, start) == cur
}

// pairWalk4 walks the four channels whose pair tables start at tab (one
// after the other, 2*nRanks ints each) into out (4*nRanks ints, channel
// after channel).
func pairWalk4(tab *int32, out []int32, nRanks int, start int32) bool {
	oa, ob, oc, od := out[:nRanks], out[nRanks:2*nRanks], out[2*nRanks:3*nRanks], out[3*nRanks:4*nRanks]
	ob, oc, od = ob[:len(oa)], oc[:len(oa)], od[:len(oa)]
	n := uint32(nRanks)
	pa := unsafe.Pointer(tab)
	pb := unsafe.Add(pa, 8*nRanks)
	pc := unsafe.Add(pb, 8*nRanks)
	pd := unsafe.Add(pc, 8*nRanks)
	a, b, c, d := start, start, start, start
	last := nRanks - 1
	for i := range oa[:last] {
		oa[i], ob[i], oc[i], od[i] = a, b, c, d
		va, vb, vc, vd := pairNext(pa, a), pairNext(pb, b), pairNext(pc, c), pairNext(pd, d)
		if uint32(va) >= n || uint32(vb) >= n || uint32(vc) >= n || uint32(vd) >= n ||
			va == start || vb == start || vc == start || vd == start {
			return false
		}
		if (pairPrev(pa, va)^a)|(pairPrev(pb, vb)^b)|(pairPrev(pc, vc)^c)|(pairPrev(pd, vd)^d) != 0 {
			return false
		}
		a, b, c, d = va, vb, vc, vd
	}
	oa[last], ob[last], oc[last], od[last] = a, b, c, d
	return pairNext(pa, a) == start && pairNext(pb, b) == start && pairNext(pc, c) == start && pairNext(pd, d) == start &&
		pairPrev(pa, start) == a && pairPrev(pb, start) == b && pairPrev(pc, start) == c && pairPrev(pd, start) == d
}
