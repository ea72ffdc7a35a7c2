package nodeorder

// GroupRanks lists the ranks of each node, in rank order, by a counting
// sort on nodeOf (nodeOf[r] is rank r's node, in [0, nNodes)): node m's
// ranks are members[start[m]:start[m+1]]. members has room for
// len(nodeOf) ints, start exactly nNodes+1. Arrange and ring's diagnosis
// both group ranks by it.
func GroupRanks(nodeOf, members, start []int32) {
	clear(start)
	for _, m := range nodeOf {
		start[m+1]++
	}
	for m := 1; m < len(start); m++ {
		start[m] += start[m-1]
	}
	for r, m := range nodeOf { // start[m] moves to node m+1's start
		members[start[m]] = int32(r)
		start[m]++
	}
	copy(start[1:], start[:len(start)-1])
	start[0] = 0
}
