package ring

import (
	"fmt"
	"slices"
	"strings"
	"unsafe"

	"github.com/nccomring/libnccomring/abi"
	"github.com/nccomring/libnccomring/kanga"
	"github.com/nccomring/libnccomring/nodeorder"
	"github.com/nccomring/libnccomring/record"
)

// This file is what Postset decides from the records of the gathered
// fragments (D25, D27): the node sequence the stitch follows, and the one
// verdict on the pod-order setting and TRN3-SwitchV1's preconditions. Every
// input is a gathered fragment, so every rank decides alike (D24), and a
// fallback is never a refusal: a rank that does not run this library
// stitches in D8's order too.

// Order is the inter-node order of a Postset (D25), for the caller's log
// lines and dumps; its texts are the same on every rank.
type Order struct {
	Asked   bool // some rank's record asks for NCCOM_RING_NODE_ORDER=network
	Network bool // and it was applied: the stitch followed Sequence
	// Sequence is the node sequence (D8 indices) when Network, else nil.
	Sequence []int32
	// Warn is the one WARN of a fallback or of nodes without a location;
	// Info the INFO line of a policy not applied (enablePod, SwitchV1);
	// Summary rank 0's INFO line: the sequence and its crossings.
	Warn, Info, Summary string
}

// maxSummaryNodes is how many nodes of the sequence Summary shows.
const maxSummaryNodes = 16

// nodeOrder decides D25's node order after gather has found the nodes,
// and returns it with the heads in the order the stitch is to take them:
// D8's (w.nodes.heads), or the location order, in working memory from sc.
func (w *links) nodeOrder(all []*abi.TopoRanks, n int, switchV1 bool, enablePod int32, sc *scratch) (Order, []int32, *abi.Error) {
	heads := w.nodes.heads
	var o Order
	if w.asking == 0 { // no record asks: nothing to read (gather counted them)
		return o, heads, nil
	}
	// Every rank's record is read once here, and only the nodes' first
	// ranks' again, for their fingerprints (a record's checksum is most of
	// the cost, about 70 ns): when the order may apply (every record
	// may ask, no pods, not SwitchV1), its location is kept for
	// nodeLocations; otherwise no memory is taken for them.
	nNodes := len(heads)
	pods := podJob(enablePod, nNodes)
	var lt locationTables
	if w.asking == len(all) && !pods && !switchV1 {
		var ok bool
		if lt, ok = newLocationTables(sc, len(all), nNodes); !ok {
			return o, nil, sc.err("ncclTopoPostset", len(all), n)
		}
	}
	notAsking, firstNot := 0, -1
	for r, f := range all {
		if fields, ok := record.Read(f, int32(r)); ok && fields.Network {
			o.Asked = true
			if lt.rank != nil {
				lt.rank[r] = fields.Location
			}
		} else if notAsking++; firstNot < 0 {
			firstNot = r
		}
	}
	switch {
	case !o.Asked:
		return o, heads, nil
	case pods:
		o.Info = fmt.Sprintf("ncclTopoPostset: NCCOM_RING_NODE_ORDER=network is not applied with comm->enablePod on %d nodes (D15): stitching in rank order", nNodes)
		return o, heads, nil
	case switchV1:
		o.Info = "ncclTopoPostset: NCCOM_RING_NODE_ORDER=network is not applied on TRN3-SwitchV1: stitching in rank order"
		return o, heads, nil
	case notAsking > 0:
		o.Warn = fmt.Sprintf("ncclTopoPostset: NCCOM_RING_NODE_ORDER=network is not applied: rank %d does not ask for it (%d of %d ranks do not, or carry no valid record): stitching in rank order (D9) on every rank",
			firstNot, notAsking, len(all))
		return o, heads, nil
	}
	first, _ := record.Read(all[heads[0]], heads[0])
	differ, firstDiffer := 0, -1
	for m, h := range heads {
		if f, _ := record.Read(all[h], h); f.Fingerprint != first.Fingerprint {
			if differ++; firstDiffer < 0 {
				firstDiffer = m
			}
		}
	}
	if differ > 0 {
		o.Warn = fmt.Sprintf("ncclTopoPostset: NCCOM_RING_NODE_ORDER=network is not applied: node %d (head rank %d) has another graph than node 0 (%d of %d nodes do), so reordering would change their NICs: stitching in rank order (D9) on every rank",
			firstDiffer, heads[firstDiffer], differ, nNodes)
		return o, heads, nil
	}

	locs := w.nodeLocations(all, lt)
	block := sc.ints((nodeorder.MaxLevels + 3) * nNodes)
	if block == nil {
		return o, nil, sc.err("ncclTopoPostset", len(all), n)
	}
	groups := nodeorder.NewGroups(locs, block[:nodeorder.MaxLevels*nNodes], block[nodeorder.MaxLevels*nNodes:][:nNodes])
	seq := block[(nodeorder.MaxLevels+1)*nNodes:][:nNodes]
	unplaced := nodeorder.Sequence(locs, groups, seq)
	ordered := block[(nodeorder.MaxLevels+2)*nNodes:][:nNodes]
	for i, m := range seq {
		ordered[i] = heads[m]
	}
	o.Network, o.Sequence = true, slices.Clone(seq)
	if unplaced > 0 {
		m := seq[nNodes-unplaced]
		o.Warn = fmt.Sprintf("ncclTopoPostset: NCCOM_RING_NODE_ORDER=network: node %d (head rank %d) has no location (%d of %d nodes have none, NCCOM_RING_LOCATION unset or invalid on most of their ranks): they come after all others, in rank order",
			m, heads[m], unplaced, nNodes)
	}
	o.Summary = summary(seq, heads, groups)
	return o, ordered, nil
}

// summary is rank 0's INFO line of a sequence: its first nodes as
// node:head, then each level's crossings per ring against its groups.
func summary(seq, heads []int32, g nodeorder.Groups) string {
	var b strings.Builder
	b.WriteString("ncclTopoPostset: NCCOM_RING_NODE_ORDER=network: nodes")
	for _, m := range seq[:min(len(seq), maxSummaryNodes)] {
		fmt.Fprintf(&b, " %d:%d", m, heads[m])
	}
	if len(seq) > maxSummaryNodes {
		fmt.Fprintf(&b, " ... (%d more)", len(seq)-maxSummaryNodes)
	}
	crossings, groups := nodeorder.Crossings(g, seq)
	b.WriteString("; per ring")
	for level := range g.Depth {
		fmt.Fprintf(&b, ", level %d: %d crossings of %d groups", level+1, crossings[level], groups[level])
	}
	return b.String()
}

// locationTables is nodeLocations' working memory, one block from the
// call's scratch: rank[r] is rank r's location (nodeOrder fills it as it
// reads the records), node[m] node m's, and nodeOf, members and start
// group the ranks by node.
type locationTables struct {
	rank, node             []nodeorder.Location
	nodeOf, members, start []int32
}

// newLocationTables takes the tables for nRanks ranks on nNodes nodes from
// sc; false when there is no memory.
func newLocationTables(sc *scratch, nRanks, nNodes int) (locationTables, bool) {
	const words = int(unsafe.Sizeof(nodeorder.Location{}) / 4)
	block := sc.ints(words*(nRanks+nNodes) + 2*nRanks + nNodes + 1)
	if block == nil {
		return locationTables{}, false
	}
	asLocations := func(s []int32) []nodeorder.Location {
		return unsafe.Slice((*nodeorder.Location)(unsafe.Pointer(&s[0])), len(s)/words)
	}
	rest := block[words*(nRanks+nNodes):]
	return locationTables{
		rank: asLocations(block[:words*nRanks]), node: asLocations(block[words*nRanks:][:words*nNodes]),
		nodeOf: rest[:nRanks], members: rest[nRanks : 2*nRanks], start: rest[2*nRanks:][:nNodes+1],
	}, true
}

// nodeLocations is each node's location (D25): the one most of its ranks
// carry, ties going to its head's, else to the tied location whose first
// holder has the lowest rank. Every fragment holds a valid record, whose
// location is lt.rank's; the result is lt.node.
func (w *links) nodeLocations(all []*abi.TopoRanks, lt locationTables) []nodeorder.Location {
	nRanks, nNodes := len(all), len(w.nodes.heads)
	rankLoc, nodeLoc, nodeOf, members, start := lt.rank, lt.node, lt.nodeOf, lt.members, lt.start
	clear(start)
	for r, f := range all {
		nodeOf[r] = w.nodes.byHead[f.RingRecv[0]]
		start[nodeOf[r]+1]++
	}
	for m := range nNodes {
		start[m+1] += start[m]
	}
	for r := range nRanks { // ranks grouped by node, in rank order
		m := nodeOf[r]
		members[start[m]] = int32(r)
		start[m]++
	}
	for m := nNodes; m > 0; m-- { // start[m] is node m's start again
		start[m] = start[m-1]
	}
	start[0] = 0
	for m := range nNodes {
		ranks := members[start[m]:start[m+1]]
		slices.SortStableFunc(ranks, func(a, b int32) int { return compareLocations(&rankLoc[a], &rankLoc[b]) })
		head := w.nodes.heads[m]
		best, bestCount, bestFirst := rankLoc[head], 0, int32(-1)
		for i := 0; i < len(ranks); {
			j := i + 1
			for j < len(ranks) && rankLoc[ranks[j]] == rankLoc[ranks[i]] {
				j++
			}
			count, loc, firstHolder := j-i, rankLoc[ranks[i]], ranks[i]
			isHead := loc == rankLoc[head]
			if count > bestCount || count == bestCount && (isHead || best != rankLoc[head] && firstHolder < bestFirst) {
				best, bestCount, bestFirst = loc, count, firstHolder
			}
			i = j
		}
		nodeLoc[m] = best
	}
	return nodeLoc
}

// compareLocations orders locations by level count, then hash by hash.
func compareLocations(a, b *nodeorder.Location) int {
	if a.Levels != b.Levels {
		return int(a.Levels) - int(b.Levels)
	}
	return slices.Compare(a.Hash[:], b.Hash[:])
}

// checkRecords is D27's verdict over every record, after the fragments'
// own checks: with comm->enablePod on more than one node, pods are
// stitched in node order only when every rank's record says
// NCCOM_RING_POD_ORDER=node (P12); on TRN3-SwitchV1 the first rank whose
// record holds a failed kangaRing precondition fails every rank (P13,
// P14). A rank whose record does not say SwitchV1 (it ran no Preset of
// this library) is not checked here; its own library checks it.
func checkRecords(all []*abi.TopoRanks, nNodes int, enablePod int32, switchV1 bool) (podFallback bool, err error) {
	if podJob(enablePod, nNodes) {
		for r, f := range all {
			if fields, ok := record.Read(f, int32(r)); !ok || !fields.PodNode {
				return false, abi.Errorf(abi.InvalidUsage, "ncclTopoPostset: comm->enablePod is %d on %d nodes: UltraServer pod ordering (ncclTopoGetP2pPodInterNodeGraph) is not reimplemented; set %s=node on every rank to stitch in node order (rank %d did not)",
					enablePod, nNodes, PodOrderEnvVar, r)
			}
		}
		podFallback = true
	}
	if switchV1 {
		for r, f := range all {
			if fields, ok := record.Read(f, int32(r)); ok && fields.SwitchV1 {
				if err := kanga.CheckPreconditions(int32(r), fields.VirtualCore, fields.JbogID); err != nil {
					return podFallback, err
				}
			}
		}
	}
	return podFallback, nil
}
