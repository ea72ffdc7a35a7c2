package ring

import "github.com/nccomring/libnccomring/abi"

// The stitch of D9 (upstream's connectRings), both halves, for one channel:
// the one place Postset's fast path and its diagnosis take it from. heads
// are the nodes' first ranks in node order (D8); each node is represented
// by its first rank's fragment. Applied in node order, later nodes
// overwrite earlier ones, as upstream's loops do.

// stitchNext calls set(tail, head) for each node m in node order: node m's
// tail on channel c (ringSend) is followed by node m+1's head (ringRecv);
// the last node wraps to the first, and one node closes on itself.
func stitchNext(all []*abi.TopoRanks, heads []int32, c int, set func(tail, head int32)) {
	nNodes := len(heads)
	for m, h := range heads {
		set(all[h].RingSend[c], all[heads[(m+1)%nNodes]].RingRecv[c])
	}
}

// stitchPrev calls set(head, tail) for each node m in node order: node m's
// head on channel c is preceded by node m-1's tail.
func stitchPrev(all []*abi.TopoRanks, heads []int32, c int, set func(head, tail int32)) {
	nNodes := len(heads)
	for m, h := range heads {
		set(all[h].RingRecv[c], all[heads[(m+nNodes-1)%nNodes]].RingSend[c])
	}
}

// stitchNode is both halves for node m on every channel c < n at once,
// in the order the fast path wants them (each fragment's lines read once
// per node rather than once per channel): set(c, tail, head, headPrev)
// with node m's tail on c followed by node m+1's head, and node m's head on
// c preceded by node m-1's tail (headPrev). Within a channel the nodes come
// in node order, as in stitchNext and stitchPrev, and a slot written twice
// keeps the later node's value, as there.
func stitchNode(all []*abi.TopoRanks, heads []int32, m, n int, set func(c int, tail, head, recv, headPrev int32)) {
	nNodes := len(heads)
	self, after, before := all[heads[m]], all[heads[(m+1)%nNodes]], all[heads[(m+nNodes-1)%nNodes]]
	for c := range n {
		set(c, self.RingSend[c], after.RingRecv[c], self.RingRecv[c], before.RingSend[c])
	}
}
