package ring

import (
	"fmt"
	"slices"
	"strings"

	"github.com/nccomring/libnccomring/abi"
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
	// Sequence is the node sequence (D8 indices) when Network and the
	// caller asked for it (PostsetOptions.Sequence), else nil.
	Sequence []int32
	// Warn is the one WARN of a fallback or of nodes without a location;
	// Info the INFO line of a policy not applied (enablePod, SwitchV1);
	// Summary rank 0's INFO line: the sequence and its crossings.
	Warn, Info, Summary string
}

// maxSummaryNodes is how many nodes of the sequence Summary shows.
const maxSummaryNodes = 16

// nodeOrder decides D25's node order after gather has found the nodes
// and counted the records, and returns it with the heads in the order the
// stitch is to take them: D8's (g.nodes.heads), or the location order, in
// working memory from sc. job is the records' facts (D28). Its stages:
// the policy (orderPolicy), the nodes' places and sequence (placeNodes),
// the heads in that sequence (orderedHeads) and the Order that says so
// (appliedOrder).
func (g *gathered) nodeOrder(all []*abi.TopoRanks, n int, job facts, sc *scratch, keepSequence bool) (Order, []int32, *abi.Error) {
	heads := g.nodes.heads
	o, apply, err := g.orderPolicy(all, job, sc)
	if !apply {
		return o, heads, err
	}
	arr, ok := g.placeNodes(all, sc)
	if !ok {
		return o, nil, sc.err("ncclTopoPostset", len(all), n)
	}
	ordered := orderedHeads(arr.Sequence, heads, sc)
	if ordered == nil {
		return o, nil, sc.err("ncclTopoPostset", len(all), n)
	}
	return appliedOrder(arr, heads, keepSequence), ordered, nil
}

// orderPolicy decides whether the network order applies (D25, D28): some
// valid record asks for it, the job is neither a pod job (D15) nor on
// TRN3-SwitchV1, every fragment asks, and every valid record has the
// graph fingerprint of the first. When it does not, o says why (nothing
// when no record asks); err is only a failure to take working memory for
// the fingerprints' WARN.
func (g *gathered) orderPolicy(all []*abi.TopoRanks, job facts, sc *scratch) (o Order, apply bool, err *abi.Error) {
	c := &g.census
	if c.asking == 0 { // no valid record asks: nothing to read
		return o, false, nil
	}
	o.Asked = true
	switch {
	case job.pods:
		o.Info = fmt.Sprintf("ncclTopoPostset: NCCOM_RING_NODE_ORDER=network is not applied with comm->enablePod on %d nodes (D15): stitching in rank order", len(g.nodes.heads))
	case job.switchV1:
		o.Info = "ncclTopoPostset: NCCOM_RING_NODE_ORDER=network is not applied on TRN3-SwitchV1: stitching in rank order"
	case c.asking < len(all):
		o.Warn = g.policyWarning(all)
	case c.fingerprints:
		o.Warn, err = g.graphWarning(all, sc)
	default:
		return o, true, nil
	}
	return o, false, err
}

// policyWarning is the WARN of a policy some fragments do not ask for
// (D25, D28): the reference is the policy most valid records carry (ties:
// the lowest such rank's), the odd one out the lowest rank that differs
// from it, a rank without a valid record differing from "network".
func (g *gathered) policyWarning(all []*abi.TopoRanks) string {
	c := &g.census
	rankOrder := c.valid - c.asking
	refNetwork := c.asking > rankOrder || c.asking == rankOrder && c.flags&abi.RecordNetwork != 0
	const noRecord, asksRank, asksNetwork = 0, 1, 2
	says := [...]string{"carries no valid record", "asks for rank", "asks for network"}
	policy := func(r int) int {
		switch fields, ok := record.Read(all[r], int32(r)); {
		case !ok:
			return noRecord
		case fields.Network:
			return asksNetwork
		}
		return asksRank
	}
	ref0 := asksRank
	if refNetwork {
		ref0 = asksNetwork
	}
	// Against "network" a rank without a valid record differs (it cannot
	// follow the order); against "rank" only a rank that asks for network
	// does.
	odd, ref := -1, -1
	for r := range all {
		p := policy(r)
		switch {
		case p == ref0 && ref < 0:
			ref = r
		case p != ref0 && odd < 0 && (refNetwork || p == asksNetwork):
			odd = r
		}
	}
	return fmt.Sprintf("ncclTopoPostset: NCCOM_RING_NODE_ORDER=network is not applied: rank %d %s, unlike rank %d (%s, the most common): network on %d rank%s, rank on %d, no valid record on %d: stitching in rank order (D9) on every rank",
		odd, says[policy(odd)], ref, says[policy(ref)], c.asking, plural(c.asking), rankOrder, len(all)-c.valid)
}

// graphWarning is the WARN of valid records whose graph fingerprints
// differ (D25 over every record, D28): reordering nodes would change their
// NICs.
func (g *gathered) graphWarning(all []*abi.TopoRanks, sc *scratch) (string, *abi.Error) {
	t, err := tallyValid(all, sc, func(f record.Fields) int64 { return int64(f.Fingerprint) })
	if err != nil {
		return "", err
	}
	node := func(r int32) int32 { return g.nodes.byHead[all[r].RingRecv[0]] }
	ref := t.values[0]
	show := func(v int64) string { return fmt.Sprintf("0x%08x", v) }
	return fmt.Sprintf("ncclTopoPostset: NCCOM_RING_NODE_ORDER=network is not applied: rank %d (node %d) has graph fingerprint %s, unlike rank %d (node %d; %s, the most common): %s; reordering nodes would change their NICs: stitching in rank order (D9) on every rank",
		t.oddRank, node(t.oddRank), show(t.oddVal), ref.first, node(ref.first), show(ref.value), t.counts(show)), nil
}

// placeNodes places every node and orders them (nodeorder's Arrangement),
// in working memory from sc; false when there is none. Every fragment
// holds a valid record that asks (orderPolicy), so each is decoded without
// a second check. When every rank carries its head's location (the census
// saw), a node's location is its head's (nodeorder.NodeLocation's rule,
// without reading the others), which gather kept in g.places as it opened
// the node (g.places is there: rank 0's record asks); else every rank's is
// read and each node placed (arrangeRanks).
func (g *gathered) placeNodes(all []*abi.TopoRanks, sc *scratch) (nodeorder.Arrangement, bool) {
	if g.census.elsewhere {
		arr := g.arrangeRanks(all, sc)
		return arr, arr.Sequence != nil
	}
	nNodes := len(g.nodes.heads)
	mem := sc.ints(nodeorder.NodesInts(nNodes) - nodeorder.CompactInts(nNodes))
	if mem == nil {
		return nodeorder.Arrangement{}, false
	}
	return nodeorder.ArrangeCompact(g.places.Nodes(nNodes), mem), true
}

// arrangeRanks places every node from its ranks' locations and orders
// them (nodeorder.Arrange), in working memory from sc; a zero Arrangement
// when there is none.
func (g *gathered) arrangeRanks(all []*abi.TopoRanks, sc *scratch) nodeorder.Arrangement {
	heads := g.nodes.heads
	block := sc.ints(nodeorder.LocationInts(len(all)))
	if block == nil {
		return nodeorder.Arrangement{}
	}
	rankLoc := nodeorder.Locations(block)
	mem := sc.ints(nodeorder.ArrangeInts(len(all), len(heads)) + len(all))
	if mem == nil {
		return nodeorder.Arrangement{}
	}
	nodeOf := mem[:len(all)]
	for r, f := range all {
		rankLoc[r] = record.LocationOf(f)
		nodeOf[r] = g.nodes.byHead[f.RingRecv[0]]
	}
	return nodeorder.Arrange(rankLoc, nodeOf, heads, mem[len(all):])
}

// orderedHeads is the nodes' heads in the order of seq (node indices),
// in working memory from sc; nil when there is none.
func orderedHeads(seq, heads []int32, sc *scratch) []int32 {
	ordered := sc.ints(len(heads))
	if ordered == nil {
		return nil
	}
	for i, m := range seq {
		ordered[i] = heads[m]
	}
	return ordered
}

// appliedOrder is the Order of a network order applied as arr says: the
// sequence (a copy, when the caller keeps it), the WARN of nodes without a
// location and rank 0's summary.
func appliedOrder(arr nodeorder.Arrangement, heads []int32, keepSequence bool) Order {
	seq, nNodes, unplaced := arr.Sequence, len(heads), arr.Unplaced
	o := Order{Asked: true, Network: true}
	if keepSequence {
		o.Sequence = slices.Clone(seq)
	}
	if unplaced > 0 && nNodes > 1 { // one node has nowhere to go (D28)
		m := seq[nNodes-unplaced]
		o.Warn = fmt.Sprintf("ncclTopoPostset: NCCOM_RING_NODE_ORDER=network: node %d (head rank %d) has no location (%d of %d nodes have none, NCCOM_RING_LOCATION unset or invalid on most of their ranks): they come after all others, in rank order",
			m, heads[m], unplaced, nNodes)
	}
	o.Summary = summary(seq, heads, arr.Groups)
	return o
}

// summary is rank 0's INFO line of a sequence: its first nodes as
// node:head, then each level's crossings per ring against its groups.
// Every group of the sequence is contiguous (nodeorder's construction, its
// tests measure it with nodeorder.Crossings), so a level of two or more
// groups has as many crossings as groups; the tools measure real rings.
func summary(seq, heads []int32, g nodeorder.Groups) string {
	var b strings.Builder
	b.WriteString("ncclTopoPostset: NCCOM_RING_NODE_ORDER=network: nodes")
	for _, m := range seq[:min(len(seq), maxSummaryNodes)] {
		fmt.Fprintf(&b, " %d:%d", m, heads[m])
	}
	if len(seq) > maxSummaryNodes {
		fmt.Fprintf(&b, " ... (%d more)", len(seq)-maxSummaryNodes)
	}
	b.WriteString("; per ring")
	for level, groups := range g.Count[:g.Depth] {
		crossings := groups
		if groups < 2 {
			crossings = 0
		}
		fmt.Fprintf(&b, ", level %d: %d crossings of %d groups", level+1, crossings, groups)
	}
	return b.String()
}
