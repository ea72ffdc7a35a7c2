package ring

import (
	"unsafe"

	"github.com/nccomring/libnccomring/abi"
	"github.com/nccomring/libnccomring/layout"
)

// nodeWalk is the fast path's walk for jobs of small nodes (issue 13): node
// by node, and inside a node four channels at a time, each channel's ring
// walked from the node's head to its tail (its intra-node run) with the
// walk's state in registers. A node's fragment lines are loaded from
// memory once, prefetched while the node before it is walked, and read
// from cache by the node's n runs; its ranks are checked as the runs meet
// them, with no pass of their own. fastWalk, which walks every channel
// side by side, keeps each channel's state in memory and runs about twice
// the instructions per step; it takes nodes of more than nodeWalkMaxRanks
// ranks, whose lines would not stay in cache for n runs.
//
// It walks the nodes of nodes (heads, self) and writes the rings in node
// order: ring c is rings[c*nRanks:(c+1)*nRanks], from node self's head
// (node self's run first, then node self+1's, and so on); or, when
// nodes.deltas is set (blockFast's nodes of at most deltaMaxRanks ranks,
// walkFast), nodes.deltas[c*nRanks:(c+1)*nRanks] in delta form (deltas.go)
// from node 0's head, each node's runs walked into tmp (n rows of its size,
// in L1) and encoded from there. nodes.at[c] is start's position in ring
// c, so that the ring from start (userRanks) is the rotation of ring c by
// at[c]. False means only that the fast path does not take the fragments
// (fastWalk's contract).
//
// The proof, by runs (fastWalk's is by steps). The nodes are D8's: pass
// 1's, or blockFast's blocks, each of whose ranks must have its node's
// channel-0 head (inBlock). Node m's run on channel c starts at h, node
// m's ringRecv[c], in range, and takes exactly L (node m's size) steps.
// Every rank it meets has node m's channel-0 head, so it lies in node m.
// The run meets every rank of node m, so it checks each rank's ringRecv
// and ringSend against node m's head's on channel c (scanFragments'
// agreement, P10, P11; a run of four channels c..c+3 checks all four
// where channel c's run meets the rank), and every rank is checked on
// every channel. Every next it follows is in [0, nRanks), and every
// rank's ringPrev[c] is the rank before it, except the head's, which must
// be -1 (Preset's; the stitch overwrites it). So the run repeats no rank: the first repeat
// would be of the head (any other has one prev), whose prev is no rank.
// It meets L distinct ranks of node m, all of them; the last must be the
// tail t = ringSend[c] and its next -1 (Preset's; the stitch overwrites
// it). So every node's head and tail are in range and in their node, the
// stitched links are the links the runs followed, and every channel's ring
// visits every rank once, crossing from each node's tail to the next
// node's head: the exact path's walk from start passes with the same
// ring, rotated. Heads' prevs and tails' nexts other than -1 are left to
// the exact path.
func nodeWalk(nodes *nodeTable, nr nodeRanks, rings, tmp []int32, n int, start int32, frags fragArray) bool {
	heads, self, deltas, at := nodes.heads, int32(nodes.self), nodes.deltas, &nodes.at
	nRanks := int(frags.size)
	nNodes := int32(len(heads))
	_ = rings[n*nRanks-1]
	if deltas != nil {
		_, _ = deltas[n*nRanks-1], tmp[n*nr.size(0)-1]
	}
	// The fragments of the node nodesAhead on are prefetched while node m
	// is walked, spread over its runs (prefetchShare); the first nodes'
	// before the walk starts.
	m := self
	for range min(nNodes, nodesAhead) {
		frags.prefetch(&nr, nr.first(m), nr.first(m)+nr.size(m), n)
		m = nr.after(m, nNodes)
	}
	ahead := m
	pos := 0 // the ring position of node m's head (ints: from node self's)
	m = self
	for range nNodes {
		l := nr.size(m)
		if !nr.inBlock(frags, heads, m) {
			return false
		}
		// Node m's runs go into the rings, row c at rows[c*rowInts:], or
		// with deltas into tmp, encoded below.
		rows, rowInts := rings[pos:], nRanks
		if deltas != nil {
			pos, rows, rowInts = nr.first(m), tmp, l
		}
		hf := frags.at(heads[m])
		aheadFirst, aheadSize := nr.first(ahead), nr.size(ahead)
		for c := 0; c < n; {
			share := prefetchShare{nr: &nr, from: aheadFirst + c*aheadSize/n, to: aheadFirst + min(c+4, n)*aheadSize/n, n: n}
			if c+4 <= n {
				if !frags.walkIntraQuad(c, heads[m], hf, unsafe.Pointer(&rows[c*rowInts]), uintptr(4*rowInts), l, share) {
					return false
				}
				c += 4
				continue
			}
			frags.prefetch(share.nr, share.from, share.to, n)
			if !frags.walkIntra(c, heads[m], hf, rows[c*rowInts:c*rowInts+l]) {
				return false
			}
			c++
		}
		// start lies in node self, walked first.
		if m == self && !findStart(rows, rowInts, l, n, start, int32(pos), at) {
			return false
		}
		if deltas != nil {
			encodeDeltas(unsafe.Pointer(&deltas[pos]), uintptr(nRanks), &tmp[0], n, l, int32(pos))
		}
		pos += l
		m, ahead = nr.after(m, nNodes), nr.after(ahead, nNodes)
	}
	return true
}

// findStart sets at[c] to start's position in ring c, for channels
// 0..n-1, from node self's runs: row c at rows[c*rowInts:], l ranks, at
// ring position pos. False if a run does not hold start.
func findStart(rows []int32, rowInts, l, n int, start, pos int32, at *[layout.MaxChannels]int32) bool {
	for c := range n {
		at[c] = -1
		for k, r := range rows[c*rowInts : c*rowInts+l] {
			if r == start {
				at[c] = pos + int32(k)
				break
			}
		}
		if at[c] < 0 {
			return false
		}
	}
	return true
}

// inBlock reports whether every rank of node m's block has m's channel-0
// head (blockFast's numbering; always true for nodes found by pass 1). The
// runs then meet exactly the block's ranks, so the blocks are D8's nodes in
// D8's order: without it a rank of another block could stand in for one of
// node m's, and the nodes' order (by their lowest rank) could differ.
func (nr *nodeRanks) inBlock(frags fragArray, heads []int32, m int32) bool {
	if nr.block == 0 {
		return true
	}
	first := m * nr.block
	for r := first; r < first+nr.block; r++ {
		if frags.at(r).RingRecv[0] != heads[m] {
			return false
		}
	}
	return true
}

// nodesAhead is how far ahead of the walk nodeWalk prefetches, in nodes:
// one node's lines (8 KiB to 16 KiB for 32 ranks) fit the core's L1 beside
// the node being walked, and arrive while it is walked (BENCHMARKS.md).
const nodesAhead = 1

// prefetchShare is the fragments a run of walkIntraQuad prefetches, at
// positions [from, to) of nr, one before each of its to-from pieces: a
// miss buffer is taken by each prefetched line until it is in, and a
// burst of them stalls the walk's own loads.
type prefetchShare struct {
	nr          *nodeRanks
	from, to, n int
}

// walkIntra is node head0's run on channel c (nodeWalk), into row, whose
// length is the node's size; hf is head0's fragment.
func (fa fragArray) walkIntra(c int, head0 int32, hf *abi.TopoRanks, row []int32) bool {
	c &= layout.MaxChannels - 1
	h, t := hf.RingRecv[c], hf.RingSend[c]
	if uint32(h) >= fa.size {
		return false
	}
	f := fa.at(h)
	if (f.RingRecv[0]^head0)|(f.RingRecv[c]^h)|(f.RingSend[c]^t) != 0 || f.RingPrev[c] != -1 {
		return false
	}
	row[0] = h
	next := f.RingNext[c]
	for j := 1; j < len(row); j++ {
		if uint32(next) >= fa.size {
			return false
		}
		row[j] = next
		f = fa.at(next)
		if (f.RingRecv[0]^head0)|(f.RingRecv[c]^h)|(f.RingSend[c]^t)|(f.RingPrev[c]^row[j-1]) != 0 {
			return false
		}
		next = f.RingNext[c]
	}
	return row[len(row)-1] == t && next == -1
}

// walkIntraQuad is walkIntra of channels c..c+3 (c a multiple of 4) side
// by side, steps ranks each, into the rows at out (channel c+i's at
// out + i*row bytes): four chains of dependent loads in flight at once.
// The steps after the heads are walkQuadSteps', in pieces between which
// it prefetches share. Every rank of the node is met once on channel c,
// and that is where its ringRecv and ringSend on channels c..c+3 are
// checked, four at a time.
func (fa fragArray) walkIntraQuad(c int, head0 int32, hf *abi.TopoRanks, out unsafe.Pointer, row uintptr, steps int, share prefetchShare) bool {
	c &= layout.MaxChannels - 4
	recv, send := (*[4]int32)(hf.RingRecv[c:]), (*[4]int32)(hf.RingSend[c:])
	for i, h := range recv {
		if uint32(h) >= fa.size {
			return false
		}
		f := fa.at(h)
		if f.RingRecv[0] != head0 || f.RingPrev[c+i] != -1 {
			return false
		}
	}
	if f := fa.at(recv[0]); *(*[4]int32)(f.RingRecv[c:]) != *recv || *(*[4]int32)(f.RingSend[c:]) != *send {
		return false
	}
	var next [4]int32
	for i, h := range recv {
		*(*int32)(unsafe.Add(out, uintptr(i)*row)) = h
		next[i] = fa.at(h).RingNext[c+i]
	}
	pieces := max(share.to-share.from, 1)
	done := 0
	for piece := range pieces {
		fa.prefetch(share.nr, share.from+piece, min(share.from+piece+1, share.to), share.n)
		upto := (steps - 1) * (piece + 1) / pieces
		if !walkQuadSteps(fa.base, fa.stride, uintptr(4*c), unsafe.Add(out, 4*done), row, upto-done, &next, head0, fa.size, recv, send) {
			return false
		}
		done = upto
	}
	last := unsafe.Add(out, 4*(steps-1))
	for i, t := range send {
		if *(*int32)(unsafe.Add(last, uintptr(i)*row)) != t || next[i] != -1 {
			return false
		}
	}
	return true
}

// walkQuadStepsGeneric takes left steps of four channels' runs through a
// node (walkIntraQuad): channel c+i (coff = 4c bytes) is at next[i], and
// its row at out + i*row bytes holds the rank before it at out. Each step
// checks that next[i] is a rank (below size), writes it after the row's
// last, and checks that its fragment's channel-0 head is head0 and its
// ringPrev[c+i] is the row's rank before it, and that channel c's rank's
// ringRecv and ringSend on channels c..c+3 are recv and send; then
// next[i] is its ringNext[c+i]. False at the first step whose checks fail
// (its ranks are then written); true with next[i] the next of each row's
// last rank. The prev is read back from the row rather than kept, which
// leaves the registers to the four chains and the loop's constants.
func walkQuadStepsGeneric(base uintptr, stride int, coff uintptr, out unsafe.Pointer, row uintptr, left int, next *[4]int32,
	head0 int32, size uint32, recv, send *[4]int32) bool {
	c := int(coff/4) & (layout.MaxChannels - 4)
	fa := fragArray{base: base, stride: stride, size: size}
	for ; left > 0; left-- {
		for _, nx := range next {
			if uint32(nx) >= size {
				return false
			}
		}
		out = unsafe.Add(out, 4)
		bad := false
		for i, nx := range next {
			at := unsafe.Add(out, uintptr(i)*row)
			*(*int32)(at) = nx
			f := fa.at(nx)
			bad = bad || f.RingRecv[0] != head0 || f.RingPrev[c+i] != *(*int32)(unsafe.Add(at, -4))
			if i == 0 {
				bad = bad || *(*[4]int32)(f.RingRecv[c:]) != *recv || *(*[4]int32)(f.RingSend[c:]) != *send
			}
			next[i] = f.RingNext[c+i]
		}
		if bad {
			return false
		}
	}
	return true
}

// fragArray is the fragments as one array at a stride: rank r's at
// base + r*stride (fastWalk checks it), size ranks.
type fragArray struct {
	base   uintptr
	stride int
	size   uint32
}

// oneStride returns all as a fragArray, or false when the fragments do not
// lie at one stride from each other (one AllGather buffer of fragments or
// of structs holding them): a step then finds a fragment without loading
// its pointer, one load fewer in its chain of dependent loads.
func oneStride(all []*abi.TopoRanks) (fragArray, bool) {
	fa := fragArray{base: uintptr(unsafe.Pointer(all[0])), size: uint32(len(all))}
	if len(all) > 1 {
		fa.stride = int(uintptr(unsafe.Pointer(all[1])) - fa.base)
	}
	for r, f := range all {
		if uintptr(unsafe.Pointer(f)) != fa.base+uintptr(r*fa.stride) {
			return fragArray{}, false
		}
	}
	return fa, true
}

// at is rank r's fragment (r in range): fragAt's.
func (fa fragArray) at(r int32) *abi.TopoRanks { return fragAt(fa.base, r, fa.stride) }

// prefetch asks for the ring lines of the fragments at positions [from, to)
// of nr, for channels 0..n-1.
func (fa fragArray) prefetch(nr *nodeRanks, from, to, n int) {
	lastByte := uintptr(4 * (n - 1))
	for k := from; k < to; k++ {
		r, _ := nr.at(k)
		prefetchFrag(fa.base+uintptr(int(r)*fa.stride), lastByte)
	}
}
