package ring

import "github.com/nccomring/libnccomring/abi"

// stitch is D9's stitch (upstream's connectRings) of channel c, the one
// place Postset and its diagnosis take it from. next and prev hold every
// rank's ringNext[c] and ringPrev[c] (nRanks ints each); heads are the
// nodes' first ranks in node order (D8), each node represented by its
// first rank's fragment. For each node m in node order, node m's tail
// (ringSend) is followed by node m+1's head (ringRecv), the last node wraps
// to the first and one node closes on itself; then, again in node order,
// node m's head is preceded by node m-1's tail. A slot written twice keeps
// the later node's value, as upstream's loops do.
//
// It reports whether every value it overwrote was in [-1, nRanks) (P9):
// the walk checks the others. Every head and tail must be in range.
func stitch(all []*abi.TopoRanks, heads []int32, c int, next, prev []int32) bool {
	nNodes, size := len(heads), uint32(len(next))
	var most uint32 // the largest overwritten value plus one, unsigned
	for m, h := range heads {
		tail := all[h].RingSend[c]
		most = max(most, uint32(next[tail]+1))
		next[tail] = all[heads[(m+1)%nNodes]].RingRecv[c]
	}
	for m, h := range heads {
		head := all[h].RingRecv[c]
		most = max(most, uint32(prev[head]+1))
		prev[head] = all[heads[(m+nNodes-1)%nNodes]].RingSend[c]
	}
	return most <= size
}
