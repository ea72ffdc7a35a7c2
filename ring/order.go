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
	var rankLoc []nodeorder.Location
	if w.asking == len(all) && !pods && !switchV1 {
		if rankLoc = locationBlock(sc, len(all)); rankLoc == nil {
			return o, nil, sc.err("ncclTopoPostset", len(all), n)
		}
	}
	notAsking, firstNot := 0, -1
	for r, f := range all {
		if fields, ok := record.Read(f, int32(r)); ok && fields.Network {
			o.Asked = true
			if rankLoc != nil {
				rankLoc[r] = fields.Location
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

	mem := sc.ints(nodeorder.ArrangeInts(len(all), nNodes) + 2*nNodes)
	if mem == nil {
		return o, nil, sc.err("ncclTopoPostset", len(all), n)
	}
	nodeOf, ordered := mem[:len(all)], mem[len(all):][:nNodes]
	for r, f := range all {
		nodeOf[r] = w.nodes.byHead[f.RingRecv[0]]
	}
	arr := nodeorder.Arrange(rankLoc, nodeOf, heads, mem[len(all)+nNodes:])
	seq, groups, unplaced := arr.Sequence, arr.Groups, arr.Unplaced
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

// locationBlock is room for nRanks locations from sc, or nil.
func locationBlock(sc *scratch, nRanks int) []nodeorder.Location {
	const words = int(unsafe.Sizeof(nodeorder.Location{}) / 4)
	block := sc.ints(words * nRanks)
	if block == nil {
		return nil
	}
	return unsafe.Slice((*nodeorder.Location)(unsafe.Pointer(&block[0])), nRanks)
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
