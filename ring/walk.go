package ring

import "sync/atomic"

// The one ring walker (spec §3, D16, D24), used by ncclBuildRings and by
// Postset. A ring table is ring-major: next[r*nRanks + v] is rank v's
// successor on ring r, and, when the table has one, prev[r*nRanks + v] its
// predecessor.
//
// A ring is whole when the walk from start along next stays in [0, nRanks),
// comes back to start after exactly nRanks steps and never earlier, and
// (with prev) every rank it reaches names the rank it came from as its
// prev. Coming back to start only at step nRanks means every rank was
// visited once (a walk that met another rank twice would loop without ever
// reaching start again), so membership costs one compare per step and no
// bitmap; and whether a ring is whole does not depend on start.
//
// The walk that checks a ring also records it, into the caller's working
// memory: the caller copies the rings out only once every one is whole, so
// nothing of the caller's is written unless all are (validate, then
// commit), and each ring is walked once. (A second walk to write them cost
// ncclBuildRings 1.8x as much on rings in random order, where every step
// is a cache miss.)
//
// Rings are walked four at a time (lanes): their chains of dependent loads
// are independent, so four lookups are in flight at once instead of one.
// That pays on every architecture with out-of-order loads, in cache or not.
// A call of fewer rings than a multiple of four walks the last one again
// in the spare lanes.

const lanes = 4

// ringTable is a ring-major successor table and, for Postset, the matching
// predecessor table (nil for ncclBuildRings, which never reads prev).
type ringTable struct {
	next, prev []int32
	nRanks     int
}

// laneRows returns the rows of rings first..first+3, the last ring < end
// repeated in the lanes past it.
func (t ringTable) laneRows(table []int32, first, end int) (rows [lanes][]int32) {
	if table == nil {
		return rows
	}
	for k := range rows {
		r := min(first+k, end-1)
		rows[k] = table[r*t.nRanks:][:t.nRanks:t.nRanks]
	}
	return rows
}

// whole reports whether every ring r < nRings is whole, walked from start,
// and records ring r's walk into walks[r*nRanks ...], ring-major like the
// table (the caller's working memory; what it holds is meaningful only
// when whole returns true). nRanks >= 1 and start in [0, nRanks) are the
// caller's.
func (t ringTable) whole(nRings int, start int32, walks []int32) bool {
	for r := 0; r < nRings; r += lanes {
		if !t.whole4(t.laneRows(t.next, r, nRings), t.laneRows(t.prev, r, nRings), t.laneRows(walks, r, nRings), start) {
			return false
		}
	}
	return true
}

// whole4 is whole for one set of lanes; prev rows are nil when the table
// has none (a branch the same way on every step, which costs nothing).
func (t ringTable) whole4(next, prev, walks [lanes][]int32, start int32) bool {
	// Every row is nRanks long: reslicing each to the first's length lets
	// the compiler drop most bounds checks inside the loop.
	na := next[0]
	nb, nc, nd := next[1][:len(na)], next[2][:len(na)], next[3][:len(na)]
	pa, pb, pc, pd := prev[0], prev[1], prev[2], prev[3]
	if pa != nil {
		pa, pb, pc, pd = pa[:len(na)], pb[:len(na)], pc[:len(na)], pd[:len(na)]
	}
	wa := walks[0][:len(na)]
	wb, wc, wd := walks[1][:len(wa)], walks[2][:len(wa)], walks[3][:len(wa)]
	size := uint(len(na))
	a, b, c, d := start, start, start, start
	wa[0], wb[0], wc[0], wd[0] = a, b, c, d
	for i := 1; i < len(wa); i++ {
		va, vb, vc, vd := na[a], nb[b], nc[c], nd[d]
		if uint(va) >= size || uint(vb) >= size || uint(vc) >= size || uint(vd) >= size ||
			va == start || vb == start || vc == start || vd == start {
			return false
		}
		if pa != nil && (pa[va] != a || pb[vb] != b || pc[vc] != c || pd[vd] != d) {
			return false
		}
		wa[i], wb[i], wc[i], wd[i] = va, vb, vc, vd
		a, b, c, d = va, vb, vc, vd
	}
	if na[a] != start || nb[b] != start || nc[c] != start || nd[d] != start {
		return false
	}
	return pa == nil || (pa[start] == a && pb[start] == b && pc[start] == c && pd[start] == d)
}

// follow walks from start along next for at most steps ranks, calling
// visit with each rank in turn, and stops early when visit returns false
// or the next rank is outside [0, len(next)). It returns how many ranks it
// visited and the rank it would have gone to next. It is the one-ring,
// one-step-at-a-time walk of the failure paths: the WARNs of
// ncclBuildRings and the diagnosis of Postset.
func follow(next []int32, start int32, steps int, visit func(step int, v int32) bool) (visited int, after int32) {
	cur := start
	for visited < steps {
		if !visit(visited, cur) {
			return visited, cur
		}
		visited++
		cur = next[cur]
		if uint32(cur) >= uint32(len(next)) {
			break
		}
	}
	return visited, cur
}

// probeWritable stores each end of s back into itself with an atomic add
// of 0, which the compiler cannot drop: memory the caller gave that is not
// writable (a stale pointer, a buffer too short) faults here, before any
// write, and becomes ncclInternalError naming the address (D20).
func probeWritable(s []int32) {
	if len(s) > 0 {
		atomic.AddInt32(&s[0], 0)
		atomic.AddInt32(&s[len(s)-1], 0)
	}
}
