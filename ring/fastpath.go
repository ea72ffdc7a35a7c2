package ring

import (
	"unsafe"

	"github.com/nccomring/libnccomring/abi"
)

// Postset's optimistic fast path (issue 13): the rings walked straight off
// the fragments, without the link table of scanFragments and stitch. It
// accepts only fragments for which it can prove that the exact path
// (scanFragments, stitch, postsetWalk) succeeds with the same nodes and the
// same rings; for anything else it says no, and Postset runs the exact path
// from the start, which gives the canonical error (D23, D24) or the rings
// of the cases the fast path does not take. So no error text depends on it.
//
// What it takes: every channel's ring leaves a node only through that
// node's tail (its ringSend) and enters the next node (in D8's node order)
// at its head (its ringRecv), and both lie in their own node. That is every
// consistent job whatever the numbering of the ranks (node-major or not),
// the sizes of the nodes or the channels' orders inside them. A ring whose
// ringNext leaves a node anywhere else, or a node whose head or tail is
// a rank of another node, is left to the exact path, whatever it decides.
//
// It also takes only fragments at one stride from each other (rank r's at
// allTopoRanks[0] + r*stride: one AllGather buffer, of fragments or of
// structs holding them), so that a step finds a fragment without loading
// its pointer; and nodes of one size numbered node-major (blockFast) skip
// the pass over every rank that finds the nodes otherwise.
//
// Two walks prove it. Jobs whose nodes have at most nodeWalkMaxRanks ranks
// (every real one) take nodeWalk (nodewalk.go): node by node, each
// channel's run from the node's head to its tail; its proof is there.
// Larger nodes take fastWalk, below: every channel side by side.
//
// fastWalk's proof. The nodes are D8's: pass 1 finds them as scanFragments does
// (each rank's channel-0 head, in range, nodes in order of first
// appearance); blockFast takes node m to be the ranks [m*L, (m+1)*L), its
// head in that block, and the walk checks that every rank of the block has
// that head, which makes the blocks D8's nodes in rank order. Every rank is
// checked once, by position (fastWalk's check): its channel-0 head is its
// node's, and its ringRecv and ringSend on every channel are those of its
// node's head's fragment (scanFragments' agreement, P10, P11, with the
// head's fragment's own channel-0 head checked by the same compare).
//
// Then every channel is walked from start, all side by side, tracking the
// node m it is in. At each rank cur (channel c) it checks that cur's
// channel-0 head is node m's, so m is cur's node, and so (the agreement)
// cur's ringRecv[c] and ringSend[c] are node m's. cur is taken as a head
// when it is node m's ringRecv[c], as a tail when it is node m's
// ringSend[c]. Its prev is the tail of node m-1 if it is a head, else its
// ringPrev[c], and must be the rank the walk came from; its next is the
// head of node m+1 if it is a tail (the walk moves to node m+1), else its
// ringNext[c]; a value the stitch would overwrite must be in [-1, nRanks)
// (stitch's check), every next in [0, nRanks), and the walk must be back
// at start after exactly nRanks steps and never earlier, having left a
// node exactly nNodes times.
//
// The next it follows is a function of cur (m is cur's node), so a walk
// that is back at start first after nRanks steps visits every rank once
// (walk.go). Each crossing leaves from a distinct rank, the tail of its
// own node, and a node has one tail on a channel: nNodes crossings are one
// from every node, so every node's tail lies in that node, and (each
// crossing checked at the rank it enters) so does every node's head; they
// are all in range, which is endsInRange. Tails and heads of distinct
// nodes are then distinct ranks, so the stitch overwrites exactly the next
// of each tail and the prev of each head, with the values the walk used,
// and every other link is the fragment's: the walk followed the exact
// path's links and made its checks, so the exact path passes with the same
// rings from the same start.

// fastChan is one channel's walk.
type fastChan struct {
	cur, from  int32 // where the walk is, and the rank it came from
	head0      int32 // node m's channel-0 head (heads[m])
	recv, send int32 // node m's head and tail on this channel
	prevTail   int32 // node m-1's tail on this channel
	firstPrev  int32 // start's prev, checked against the last rank
	m          int32 // the node the walk is in
	crossings  int32
}

// postsetFast finds the nodes and walks channels 0..n-1 from start into
// w.rings; false means only that the fast path does not take these
// fragments (w may be partly written), and the exact path must run. Its
// working memory is Postset's block: w.nodeOf and w.heads as scanFragments
// uses them, w.links (which the exact path rewrites whole) for each rank's
// node and the ranks in node order.
func postsetFast(all []*abi.TopoRanks, n int, start int32, w *postsetMemory) (nodeTable, bool) {
	nRanks := len(all)
	size := uint32(nRanks)
	frags, ok := oneStride(all)
	if !ok {
		return nodeTable{}, false
	}
	// Ranks that look numbered node-major in nodes of one size are tried as
	// blocks first; if the blocks turn out not to be the nodes (nodes of
	// other sizes, or ranks out of rank order, whose first rank's node
	// happens to divide nRanks), the nodes are found rank by rank below.
	if nodes, taken, ok := blockFast(all, frags, n, start, w); taken && ok {
		return nodes, true
	}
	// Pass 1: D8's node detection, as scanFragments makes it, and each
	// rank's node.
	nodeOf := w.nodeOf[:nRanks]
	for i := range nodeOf {
		nodeOf[i] = -1
	}
	nodeIdx, members := w.links[:nRanks], w.links[nRanks:2*nRanks]
	heads := w.heads[:0]
	self := -1
	for r, f := range all {
		h := f.RingRecv[0]
		if uint32(h) >= size {
			return nodeTable{}, false
		}
		m := nodeOf[h]
		if m < 0 {
			m = int32(len(heads))
			nodeOf[h] = m
			heads = heads[:m+1]
			heads[m] = h
		}
		nodeIdx[r] = m
		if int32(r) == start {
			self = int(m)
		}
	}
	// Each node's ranks, node after node in members: node m's are
	// members[ends[m-1]:ends[m]] (ends[-1] = 0), ends in w.nodeOf, which
	// pass 1 no longer needs.
	nNodes := len(heads)
	ends := nodeOf[:nNodes]
	clear(ends)
	for _, m := range nodeIdx {
		ends[m]++
	}
	sum := int32(0)
	for m, k := range ends {
		ends[m] = sum
		sum += k
	}
	for r, m := range nodeIdx {
		members[ends[m]] = int32(r)
		ends[m]++
	}
	most := int32(0)
	for m := range ends {
		most = max(most, ends[m]-int32(nr0(ends, m)))
	}
	nodes := nodeTable{heads: heads, self: self}
	if !walkFast(all, frags, nodeRanks{ends: ends, members: members, nodeOf: nodeIdx, most: most}, w, n, start, &nodes) {
		return nodeTable{}, false
	}
	return nodes, true
}

// blockFast is postsetFast for ranks numbered node-major in nodes of one
// size L (rank 0's node is its first L ranks), without pass 1: node m is
// taken to be the block of ranks [m*L, (m+1)*L), its head the channel-0
// head of the block's first rank, which must lie in the block (so the heads
// are distinct); the walk checks that every rank of each block has that
// head, so D8's nodes are the blocks, in rank order. taken false: the
// ranks do not look so numbered; ok false: the walk did not take them as
// blocks. Either way the general fast path is tried.
func blockFast(all []*abi.TopoRanks, frags fragArray, n int, start int32, w *postsetMemory) (nodes nodeTable, taken, ok bool) {
	nRanks := len(all)
	L := 1
	for L < nRanks && all[L].RingRecv[0] == all[0].RingRecv[0] {
		L++
	}
	if nRanks%L != 0 {
		return nodeTable{}, false, false
	}
	nNodes := nRanks / L
	heads := w.heads[:nNodes]
	for m := range heads {
		h := all[m*L].RingRecv[0]
		if h < int32(m*L) || h >= int32((m+1)*L) {
			return nodeTable{}, false, false
		}
		heads[m] = h
	}
	self := int(start) / L
	nodes = nodeTable{heads: heads, self: self}
	if !walkFast(all, frags, nodeRanks{block: int32(L), most: int32(L)}, w, n, start, &nodes) {
		return nodeTable{}, true, false
	}
	return nodes, true, true
}

// nodeRanks is where fastWalk finds each node's ranks, for its prefetches
// and its checks: the ranks in node order, node m's at positions
// [ends[m-1], ends[m]) (ends[-1] = 0) of members, each rank's node in
// nodeOf; or with block > 0 rank r at position r, in node r/block
// (blockFast). most is the largest node's size.
type nodeRanks struct {
	ends, members, nodeOf []int32
	block, most           int32
}

// first is node m's first position.
func (nr *nodeRanks) first(m int32) int {
	switch {
	case nr.block > 0:
		return int(m * nr.block)
	case m > 0:
		return int(nr.ends[m-1])
	}
	return 0
}

// size is node m's number of ranks.
func (nr *nodeRanks) size(m int32) int {
	if nr.block > 0 {
		return int(nr.block)
	}
	return int(nr.ends[m] - nr0(nr.ends, int(m)))
}

// after is the node after m in ring order, of nNodes.
func (nr *nodeRanks) after(m, nNodes int32) int32 {
	if m++; m == nNodes {
		return 0
	}
	return m
}

// at is the rank at position k and its node.
func (nr *nodeRanks) at(k int) (rank, node int32) {
	if nr.block > 0 {
		return int32(k), int32(k) / nr.block
	}
	r := nr.members[k]
	return r, nr.nodeOf[r]
}

// nr0 is ends[m-1], or 0 for m = 0.
func nr0(ends []int32, m int) int32 {
	if m == 0 {
		return 0
	}
	return ends[m-1]
}

// agrees reports whether the fragment at position k has its node's
// channel-0 head and the ringRecv and ringSend of its node's head's
// fragment on channels 0..n-1 (scanFragments' agreement, P10, P11, without
// its stores). The two 4n-byte runs are compared as byte strings, which the
// runtime's memequal does a vector at a time rather than a word at a time.
func (nr *nodeRanks) agrees(frags fragArray, heads []int32, k, n int) bool {
	r, m := nr.at(k)
	f, h := frags.at(r), heads[m]
	first := frags.at(h)
	return f.RingRecv[0] == h && int32Run(&f.RingRecv, n) == int32Run(&first.RingRecv, n) &&
		int32Run(&f.RingSend, n) == int32Run(&first.RingSend, n)
}

// int32Run is a[:n]'s bytes, as a string for comparing, not for keeping.
func int32Run(a *[32]int32, n int) string {
	return unsafe.String((*byte)(unsafe.Pointer(a)), 4*n)
}

// nodeWalkMaxRanks is the largest node nodeWalk takes: its fragment lines
// (five or so per rank) stay in the core's cache while its n runs read
// them. Larger nodes take fastWalk, whose channels go side by side. A
// variable, so that the tests run both walks on the same fragments.
var nodeWalkMaxRanks int32 = 1024

// walkFast is the walk of postsetFast over the nodes of nodes (heads,
// self), nodeWalk's or fastWalk's (by the largest node's size), into
// w.rings (or nodes.deltas) and nodes.at (fastWalk walks from start, so it
// leaves the fresh table's 0s); false: the walk does not take the
// fragments (frags, all at one stride: oneStride).
func walkFast(all []*abi.TopoRanks, frags fragArray, nr nodeRanks, w *postsetMemory, n int, start int32, nodes *nodeTable) bool {
	rings := w.rings[:n*len(all)]
	if nr.most <= nodeWalkMaxRanks {
		// Nodes of a block numbering small enough keep their rings as
		// deltas (deltas.go), each node's runs walked into w.links first:
		// blockFast does not use it.
		var tmp []int32
		if takesDeltas(nr.block) {
			tmp = w.links[:n*int(nr.block)]
			nodes.deltas = unsafe.Slice((*int8)(unsafe.Pointer(unsafe.SliceData(rings))), len(rings))
		}
		return nodeWalk(nodes, nr, rings, tmp, n, start, frags)
	}
	return fastWalk(all, nodes.heads, nr, rings, n, start, int32(nodes.self), frags)
}

// fastWalk is the walk of postsetFast for large nodes: every channel side
// by side, one step of each in turn, so that they stay within about two
// nodes of each other and the fragment lines they read stay in cache. The
// first and the last step of each channel are step's; the others are the
// same checks, inline, without the first's and the last's cases.
func fastWalk(all []*abi.TopoRanks, heads []int32, nr nodeRanks, rings []int32, n int, start, self int32, frags fragArray) bool {
	nRanks := len(all)
	_ = rings[n*nRanks-1]
	nNodes := int32(len(heads))
	base, stride := frags.base, frags.stride
	w := walkCtx{frags: frags, heads: heads, start: start, nNodes: nNodes}
	var chans [32]fastChan
	own := all[heads[self]]
	before := all[heads[(self+nNodes-1)%nNodes]]
	for c := range n {
		chans[c] = fastChan{cur: start, from: -1, head0: heads[self], recv: own.RingRecv[c], send: own.RingSend[c],
			prevTail: before.RingSend[c], m: self}
	}
	// Prefetching and checking by position (nodeRanks): at step i the
	// walks are within about two nodes of position first(self)+i, so the
	// fragment at ahead positions beyond is prefetched, and the one at
	// position first(self)+i-1, in cache by now, is checked: its channel-0
	// head must be its node's, its ringRecv and ringSend those of its
	// node's head's fragment (scanFragments' agreement, P10, P11). Each
	// position is checked once, so every rank is.
	lastByte := uintptr(4 * (n - 1))
	ahead := int(2*nr.most) + 8
	from := nr.first(self)
	pf := (from + 1 + ahead) % nRanks
	for k := range min(2*int(nr.most)+ahead, nRanks) {
		r, _ := nr.at((from - 2*int(nr.most) + k + 2*nRanks) % nRanks)
		prefetchFrag(base+uintptr(int(r)*stride), lastByte)
	}
	ck := from // the position checked next
	out := unsafe.Pointer(unsafe.SliceData(rings))
	row := 4 * nRanks // bytes from one channel's ring to the next
	last := nRanks - 1
	for c := range n {
		if !w.step(&chans[c], c, 0, nRanks, unsafe.Add(out, c*row)) {
			return false
		}
	}
	size := frags.size
	chs := chans[:n]
	for i := 1; i < last; i++ {
		r, _ := nr.at(pf)
		prefetchFrag(base+uintptr(int(r)*stride), lastByte)
		if pf++; pf == nRanks {
			pf = 0
		}
		if !nr.agrees(frags, heads, ck, n) {
			return false
		}
		if ck++; ck == nRanks {
			ck = 0
		}
		at := 4 * i // an offset, not a pointer: one past the last ring is no pointer at all
		for c := range chs {
			st := &chs[c]
			cur := st.cur
			*(*int32)(unsafe.Add(out, at)) = cur
			at += row
			f := fragAt(base, cur, stride)
			k := c & 31
			p, nx := f.RingPrev[k], f.RingNext[k]
			if cur == st.recv { // a head: the stitch's prev
				if uint32(p+1) > size {
					return false
				}
				p = st.prevTail
			}
			if (f.RingRecv[0]^st.head0)|(p^st.from) != 0 {
				return false
			}
			if cur == st.send { // a tail: on to the next node's head
				if nx = w.cross(st, c, nx); nx < 0 {
					return false
				}
			}
			if uint32(nx) >= size || nx == start {
				return false
			}
			st.from, st.cur = cur, nx
		}
	}
	if last > 0 {
		for c := range n {
			if !w.step(&chans[c], c, last, nRanks, unsafe.Add(out, c*row)) {
				return false
			}
		}
	}
	for range nRanks - max(last-1, 0) {
		if !nr.agrees(frags, heads, ck, n) {
			return false
		}
		if ck++; ck == nRanks {
			ck = 0
		}
	}
	for c := range n {
		st := &chans[c]
		if st.cur != start || st.firstPrev != st.from || st.crossings != nNodes {
			return false
		}
	}
	return true
}

// fragAt is rank r's fragment, at base + r*stride, which oneStride checked
// is allTopoRanks[r]: a pointer the caller keeps alive (abi.Pointer), made
// from an address so that no pointer arithmetic crosses from one fragment
// to another (Go's rule for unsafe.Add, which separate allocations at one
// stride would break).
func fragAt(base uintptr, r int32, stride int) *abi.TopoRanks {
	return (*abi.TopoRanks)(abi.Pointer(base + uintptr(int(r)*stride)))
}

// walkCtx is what fastWalk's steps share.
type walkCtx struct {
	frags         fragArray
	heads         []int32
	start, nNodes int32
}

// step is one step of channel c's walk st, the i-th of nRanks, its rank
// written to row[i] (row is the channel's ring): the checks of fastWalk's
// loop, with the first step's (start's prev is kept for the end) and the
// last's (its next may be start).
func (w *walkCtx) step(st *fastChan, c, i, nRanks int, row unsafe.Pointer) bool {
	cur := st.cur
	*(*int32)(unsafe.Add(row, 4*i)) = cur
	f := w.frags.at(cur)
	if f.RingRecv[0] != st.head0 {
		return false
	}
	p, nx := f.RingPrev[c], f.RingNext[c]
	if cur == st.recv { // a head: the stitch's prev
		if uint32(p+1) > w.frags.size {
			return false
		}
		p = st.prevTail
	}
	if i == 0 {
		st.firstPrev = p
	} else if p != st.from {
		return false
	}
	if cur == st.send { // a tail: on to the next node's head
		if nx = w.cross(st, c, nx); nx < 0 {
			return false
		}
	}
	if uint32(nx) >= w.frags.size || (nx == w.start && i != nRanks-1) {
		return false
	}
	st.from, st.cur = cur, nx
	return true
}

// cross moves channel c's walk st, at its node's tail whose ringNext is
// next, to the next node, and returns that node's head; -1 if next is
// outside [-1, nRanks) (stitch's check of the value it overwrites).
func (w *walkCtx) cross(st *fastChan, c int, next int32) int32 {
	if uint32(next+1) > w.frags.size {
		return -1
	}
	m := st.m + 1
	if m == w.nNodes {
		m = 0
	}
	h := w.heads[m]
	hf := w.frags.at(h)
	st.m, st.head0, st.prevTail = m, h, st.send
	st.recv, st.send = hf.RingRecv[c], hf.RingSend[c]
	st.crossings++
	return st.recv
}
