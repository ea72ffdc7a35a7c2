package ring

import "github.com/nccomring/libnccomring/abi"

// stitch is D9's stitch (upstream's connectRings) of channels [lo, hi),
// the one place Postset and its diagnosis take it from. pairs hold every
// rank's ringNext[c] and ringPrev[c] (walk.go's pair), ring-major from
// channel lo (pairs[(c-lo)*nRanks + r]); heads are the nodes' first ranks in node order
// (D8), each node represented by its first rank's fragment. For each node
// m in node order, node m's tail (ringSend) is followed by node m+1's head
// (ringRecv), the last node wraps to the first and one node closes on
// itself; and node m's head is preceded by node m-1's tail. Within a
// channel a slot written twice keeps the later node's value, as upstream's
// loops do. Node by node, every channel at once: each head's fragment is
// read once, not once per channel.
//
// It reports whether every value it overwrote was in [-1, nRanks) (P9):
// the walk checks the others. Every head and tail must be in range.
func stitch(all []*abi.TopoRanks, heads []int32, lo, hi int, pairs []uint64) bool {
	nRanks, nNodes := len(all), len(heads)
	var most uint32 // the largest overwritten value plus one, unsigned
	for m, h := range heads {
		self, after, before := all[h], all[heads[(m+1)%nNodes]], all[heads[(m+nNodes-1)%nNodes]]
		for c := lo; c < hi; c++ {
			at := (c - lo) * nRanks
			tail, head := at+int(self.RingSend[c]), at+int(self.RingRecv[c])
			most = max(most, uint32(nextOf(pairs[tail])+1), uint32(prevOf(pairs[head])+1))
			pairs[tail] = pair(after.RingRecv[c], prevOf(pairs[tail])) // tail == head: a node of one rank
			pairs[head] = pair(nextOf(pairs[head]), before.RingSend[c])
		}
	}
	return most <= uint32(nRanks)
}
