package nodeorder

import (
	"slices"
	"unsafe"
)

// This file is the one placement rule (D28) and the one node sequence
// (D25) that Postset and every tool (score, verify, plan, report) take:
// Arrange. It allocates nothing when given its memory (Postset's scratch),
// and costs O(nRanks + Depth * nNodes) but for nodes whose ranks disagree,
// whose ranks are sorted.

// Arrangement is what Arrange decides for a job: each node's location, the
// groups they form, the sequence the stitch follows and how many nodes have
// no location (they are Sequence's last).
type Arrangement struct {
	Node     []Location // Node[m]: node m's location (NodeLocation)
	Groups   Groups
	Sequence []int32 // the nodes (D8 indices) in stitch order
	Unplaced int
}

// ArrangeInts is how many int32s of memory Arrange takes for a job of
// nRanks ranks on nNodes nodes.
func ArrangeInts(nRanks, nNodes int) int {
	return LocationInts(nNodes) + 3*nRanks + nNodes + 1 + NodesInts(nNodes)
}

// NodesInts is how many int32s of memory ArrangeNodes takes for nNodes
// nodes; ArrangeCompact takes CompactInts(nNodes) fewer.
func NodesInts(nNodes int) int {
	return nNodes + CompactInts(nNodes) + arrangeInts(nNodes)
}

// LocationInts is how many int32s n Locations take (Locations' view).
func LocationInts(n int) int { return (1 + MaxLevels) * n }

// Arrange places every node and orders them (D25, D28). rank[r] is rank
// r's location ("no location" is Levels 0), nodeOf[r] its node (D8 index),
// heads[m] node m's head (a rank of node m, as nodesFirstRank). mem holds
// ArrangeInts(len(rank), len(heads)) int32s, or is nil to allocate;
// Arrangement's slices are carved from it. rank, nodeOf and heads are
// only read.
func Arrange(rank []Location, nodeOf, heads []int32, mem []int32) Arrangement {
	nRanks, nNodes := len(rank), len(heads)
	if len(mem) < ArrangeInts(nRanks, nNodes) {
		mem = make([]int32, ArrangeInts(nRanks, nNodes))
	}
	take := func(k int) []int32 { s := mem[:k:k]; mem = mem[k:]; return s }
	var a Arrangement
	a.Node = Locations(take(LocationInts(nNodes)))
	members, start, work := take(nRanks), take(nNodes+1), take(2*nRanks)
	GroupRanks(nodeOf, members, start)
	for m := range nNodes {
		ranks := members[start[m]:start[m+1]]
		a.Node[m] = NodeLocation(rank, ranks, heads[m], work)
	}
	return ArrangeNodes(a.Node, mem)
}

// ArrangeNodes orders nodes already placed (node[m] is node m's location,
// as NodeLocation gives it): their groups and D25's sequence (arrange:
// nodes grouped by location prefix, level by level from the top, every
// group contiguous, groups and the nodes inside a group in order of their
// lowest index; nodes without a location last, in index order). mem holds
// NodesInts(len(node)) int32s, or is nil to allocate. Postset takes it
// directly when every rank carries its head's location, the one case in
// which NodeLocation is the head's without a look at the ranks.
func ArrangeNodes(node []Location, mem []int32) Arrangement {
	n := len(node)
	if len(mem) < NodesInts(n) {
		mem = make([]int32, NodesInts(n))
	}
	c := NewCompact(n, mem[:CompactInts(n)])
	for m := range node {
		c.Set(m, node[m].Levels, &node[m].Hash)
	}
	a := ArrangeCompact(c, mem[CompactInts(n):])
	a.Node = node
	return a
}

// ArrangeCompact is ArrangeNodes over locations laid out as a Compact, as
// Postset fills one from its records without a Location array; the
// Arrangement's Node is nil. mem holds NodesInts(n) - CompactInts(n)
// int32s.
func ArrangeCompact(c Compact, mem []int32) Arrangement {
	n := len(c.Levels)
	a := Arrangement{Sequence: mem[:n:n]}
	a.Groups, a.Unplaced = arrange(c, a.Sequence, mem[n:])
	return a
}

// NodeLocation is the placement rule (D28): the location most of a node's
// ranks carry, "no location" counting as a value; a tie goes to the head's
// value when it is among the tied, else to the tied value that the lowest
// rank carries first. loc[r] is rank r's location, ranks the node's ranks
// in rank order, head its head; work holds 2*len(ranks) ints. Cost:
// O(len(ranks)) when every rank agrees with the head, else a sort.
func NodeLocation(loc []Location, ranks []int32, head int32, work []int32) Location {
	agree := true
	for _, r := range ranks {
		if loc[r] != loc[head] {
			agree = false
			break
		}
	}
	if agree {
		return loc[head]
	}
	// Ranks sorted by location, each run in rank order: a run's first is
	// the lowest rank that carries it.
	sorted := work[:len(ranks)]
	copy(sorted, ranks)
	slices.SortStableFunc(sorted, func(a, b int32) int { return Compare(&loc[a], &loc[b]) })
	best, bestCount, bestFirst := loc[head], 0, int32(-1)
	for i := 0; i < len(sorted); {
		j := i + 1
		for j < len(sorted) && loc[sorted[j]] == loc[sorted[i]] {
			j++
		}
		count, first := j-i, sorted[i]
		isHead := loc[first] == loc[head]
		if count > bestCount || count == bestCount && (isHead || best != loc[head] && first < bestFirst) {
			best, bestCount, bestFirst = loc[first], count, first
		}
		i = j
	}
	return best
}

// Compare orders locations by level count, then hash by hash.
func Compare(a, b *Location) int {
	if a.Levels != b.Levels {
		return cmpInt(int64(a.Levels), int64(b.Levels))
	}
	return slices.Compare(a.Hash[:], b.Hash[:])
}

// Locations views s, a block of int32s (working memory: Postset's from C
// malloc), as len(s)/LocationInts(1) Locations, without a copy.
func Locations(s []int32) []Location {
	if len(s) == 0 {
		return nil
	}
	return unsafe.Slice((*Location)(unsafe.Pointer(&s[0])), len(s)/LocationInts(1))
}
