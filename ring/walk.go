package ring

import "sync/atomic"

// The one ring walker (spec §3, D16, D24), used by ncclBuildRings and by
// Postset. A ring table is ring-major: entries[r*nRanks + v] is rank v's
// entry on ring r. ncclBuildRings' entries are the next alone (int32, the
// caller's table); Postset's are a link pair (uint64, pair): the next and
// the prev of the rank side by side, so the one load that finds a rank's
// successor brings its prev too, and gather writes one table, not two.
//
// A ring is whole when the walk from start along next stays in [0, nRanks),
// comes back to start after exactly nRanks steps and never earlier, and
// (with prevs) every rank it reaches names the rank it came from as its
// prev. Coming back to start only at step nRanks means every rank was
// visited once (a walk that met another rank twice would loop without ever
// reaching start again), so membership costs one compare per step and no
// bitmap; and whether a ring is whole does not depend on start.
//
// The walk that checks a ring also records it, into the caller's working
// memory: the caller copies the rings out only once every one is whole, so
// nothing of the caller's is written unless all are (validate, then
// commit), and each ring is walked once: on rings in random order every
// step is a cache miss, and a second walk to write them would pay each
// miss again (BENCHMARKS.md, "Where the time goes").
//
// Rings are walked four at a time (lanes): their chains of dependent loads
// are independent, so four lookups are in flight at once instead of one.
// That pays on every architecture with out-of-order loads, in cache or not.
// A call of fewer rings than a multiple of four walks the last one again
// in the spare lanes.

const lanes = 4

// lookahead tells the walk which memory it will need next, when the rings
// pass whole nodes in an order of their own (D25's network order): the
// nodes' first ranks in the order the rings pass them (heads), the node
// the walk starts in (from) and the ranks a node holds (span). Every span
// steps, the walk loads the pairs of the node aheadNodes past the one it
// is in, from its first rank on, a cache line at a time. A node's ranks
// sit side by side in the table (launchers number them node by node), so
// those lines are the ones the walk reaches a node later; in D8's order no
// hardware prefetcher finds them, the next node being at no nearby
// address, and each node crossing waited for a miss in every lane. If a
// node's ranks are spread out, the loads bring lines the walk does not
// want; the walk itself is the same. loaded keeps what the loads read, so
// that the compiler keeps them.
type lookahead struct {
	heads      []int32
	from, span int
	loaded     uint64
}

// aheadNodes is how far ahead the walk loads: the walk of a lane starts
// anywhere in its first node, so a node two past the one at the last hint
// is always at least a whole node ahead of every lane.
const aheadNodes = 2

// pairsPerLine is how many pairs a 64-byte cache line holds: the stride of
// a hint's loads. (On 128-byte lines a line is loaded twice.)
const pairsPerLine = 8

// entry is a ring table's entry: the next alone, or a pair.
type entry interface{ int32 | uint64 }

// pair is a rank's next (low 32 bits) and prev (high 32 bits) on one ring.
func pair(next, prev int32) uint64 { return uint64(uint32(next)) | uint64(uint32(prev))<<32 }

// nextOf and prevOf take an entry apart (prevOf is meaningful for pairs
// only).
func nextOf[E entry](x E) int32 { return int32(x) }
func prevOf[E entry](x E) int32 { return int32(uint64(x) >> 32) }

// ringTable is a ring-major table of entries over nRanks ranks.
type ringTable[E entry] struct {
	entries []E
	nRanks  int
}

// withPrev reports whether the table's entries are pairs, whose prevs the
// walk checks (ncclBuildRings' nexts have none).
func (ringTable[E]) withPrev() bool {
	var x E
	_, pairs := any(x).(uint64)
	return pairs
}

// laneRows returns the rows of rings first..first+3 of table (rows of
// nRanks entries), the last ring < end repeated in the lanes past it.
func laneRows[E entry](table []E, nRanks, first, end int) (rows [lanes][]E) {
	for k := range rows {
		r := min(first+k, end-1)
		rows[k] = table[r*nRanks:][:nRanks:nRanks]
	}
	return rows
}

// whole reports whether every ring r < nRings is whole, walked from start,
// and records ring r's walk into walks[r*nRanks ...], ring-major like the
// table (the caller's working memory; what it holds is meaningful only
// when whole returns true). nRanks >= 1 and start in [0, nRanks) are the
// caller's; ahead is nil or tells the walk what it needs next (a hint
// only: whether a ring is whole never depends on it).
func (t ringTable[E]) whole(nRings int, start int32, walks []int32, ahead *lookahead) bool {
	for r := 0; r < nRings; r += lanes {
		if !t.whole4(laneRows(t.entries, t.nRanks, r, nRings), laneRows(walks, t.nRanks, r, nRings), start, ahead) {
			return false
		}
	}
	return true
}

// whole4 is whole for one set of lanes. x is the entry of the rank a lane
// stands on: its next is where the lane goes, and the entry loaded there
// holds the prev to check against the rank the lane came from.
func (t ringTable[E]) whole4(rows [lanes][]E, walks [lanes][]int32, start int32, ahead *lookahead) bool {
	// Every row is nRanks long: reslicing each to the first's length lets
	// the compiler drop most bounds checks inside the loop.
	la := rows[0]
	lb, lc, ld := rows[1][:len(la)], rows[2][:len(la)], rows[3][:len(la)]
	wa := walks[0][:len(la)]
	wb, wc, wd := walks[1][:len(wa)], walks[2][:len(wa)], walks[3][:len(wa)]
	size, withPrev := uint32(len(la)), t.withPrev()
	a, b, c, d := start, start, start, start
	wa[0], wb[0], wc[0], wd[0] = a, b, c, d
	xa, xb, xc, xd := la[a], lb[b], lc[c], ld[d]
	hintAt, node := len(wa), 0 // the step of the next hint, and its node
	if ahead != nil {
		hintAt, node = 1, ahead.from+aheadNodes
	}
	for i := 1; i < len(wa); i++ {
		if i == hintAt {
			var loaded E
			h := int(ahead.heads[node%len(ahead.heads)])
			for k := h; k < min(h+ahead.span, len(la)); k += pairsPerLine {
				loaded |= la[k] | lb[k] | lc[k] | ld[k]
			}
			ahead.loaded |= uint64(loaded)
			hintAt, node = hintAt+ahead.span, node+1
		}
		va, vb, vc, vd := nextOf(xa), nextOf(xb), nextOf(xc), nextOf(xd)
		if uint32(va) >= size || uint32(vb) >= size || uint32(vc) >= size || uint32(vd) >= size ||
			va == start || vb == start || vc == start || vd == start {
			return false
		}
		xa, xb, xc, xd = la[va], lb[vb], lc[vc], ld[vd]
		if withPrev && (prevOf(xa) != a || prevOf(xb) != b || prevOf(xc) != c || prevOf(xd) != d) {
			return false
		}
		wa[i], wb[i], wc[i], wd[i] = va, vb, vc, vd
		a, b, c, d = va, vb, vc, vd
	}
	if nextOf(xa) != start || nextOf(xb) != start || nextOf(xc) != start || nextOf(xd) != start {
		return false
	}
	return !withPrev || (prevOf(la[start]) == a && prevOf(lb[start]) == b && prevOf(lc[start]) == c && prevOf(ld[start]) == d)
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
