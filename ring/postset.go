package ring

import (
	"github.com/nccomring/libnccomring/abi"
	"github.com/nccomring/libnccomring/kanga"
	"github.com/nccomring/libnccomring/layout"
)

// Allocator provides the userRanks buffers Postset allocates for channels
// whose ring.userRanks is NULL (D12). The export layer uses C malloc/free, so
// the host frees them with free(); tests use Go memory they keep alive.
type Allocator interface {
	// AllocInts returns the address of n ints, or 0 when out of memory.
	AllocInts(n int) uintptr
	// Free releases an address AllocInts returned.
	Free(p uintptr)
}

// PostsetOptions carries what Postset reads from outside its arguments.
type PostsetOptions struct {
	Platforms kanga.Resolver
	// PodOrder is asked only when comm->enablePod is set on more than one
	// node, so NCCOM_RING_POD_ORDER is read (and reported) only when it matters.
	PodOrder func() PodOrder
	Alloc    Allocator
}

// PostsetResult is what a successful Postset committed, for the caller's
// out-parameters and INFO lines.
type PostsetResult struct {
	NChannels   int  // min(2n, 32)
	NNodes      int  // nodes found (D8)
	PodFallback bool // enablePod was set and the node-order stitch was used (D15)
	KangaInts   int  // ints written per kangaRing path; 0 exactly when not SwitchV1
}

// Postset is ncclTopoPostset (spec §3-§4, D8-D15). all holds comm.NRanks
// fragments (the AllGather result) and nodesFirstRank has room for
// comm.NRanks ints. It finds the nodes, stitches each channel's ring, walks
// it from this rank, doubles the channels (cap 32) and writes, for this rank,
// every channel's prev/next and userRanks, comm.NChannels/NNodes/Node,
// nodesFirstRank and, on TRN3-SwitchV1, comm.KangaRing.
//
// Input is checked in the order of docs/errors.md P2-P16 and nothing is
// written unless every check passed (D11). Cost: O(nRanks * n) time and
// scratch: one sequential pass over the fragments' ring arrays (each cache
// line read once), the distinct rings walked side by side so their memory
// accesses overlap, the doubled channels copied.
func Postset(comm *abi.Comm, nodesFirstRank []int32, all []*abi.TopoRanks, opt PostsetOptions) (PostsetResult, error) {
	var res PostsetResult
	nRanks, rank := int(comm.NRanks), comm.Rank
	nChannels := int(comm.NChannels)
	switch {
	case nRanks <= 0:
		return res, abi.Errorf(abi.InvalidArgument, "ncclTopoPostset: comm->nRanks %d is not positive", nRanks)
	case rank < 0 || int(rank) >= nRanks:
		return res, abi.Errorf(abi.InvalidArgument, "ncclTopoPostset: comm->rank %d is outside [0, %d)", rank, nRanks)
	case nChannels < 1 || nChannels > layout.MaxChannels:
		return res, abi.Errorf(abi.InvalidArgument, "ncclTopoPostset: comm->nChannels %d is outside [1, %d] (call ncclTopoPreset first)", nChannels, layout.MaxChannels)
	}
	if err := kanga.CheckChannelCount("ncclTopoPostset", comm.NKangaRingChannels); err != nil {
		return res, err
	}
	platform, err := opt.Platforms.Platform(rank)
	if err != nil {
		return res, abi.Errorf(abi.InvalidUsage, "ncclTopoPostset: %w", err)
	}
	all = all[:nRanks]
	nodesFirstRank = nodesFirstRank[:nRanks]
	for r, f := range all {
		if f == nil {
			return res, abi.Errorf(abi.InvalidArgument, "ncclTopoPostset: allTopoRanks[%d] is NULL", r)
		}
	}

	sc := getScratch()
	defer putScratch(sc)
	// One pass over the fragments: ranges, nodes and their agreement, and
	// every rank's successor into the next tables (stitched below).
	nodes, next, err := scanFragments(all, nChannels, rank, sc)
	if err != nil {
		return res, err
	}
	nNodes := len(nodes.heads)
	if comm.EnablePod != 0 && nNodes > 1 {
		if opt.PodOrder == nil || opt.PodOrder() != PodOrderNode {
			return res, abi.Errorf(abi.InvalidUsage, "ncclTopoPostset: comm->enablePod is %d on %d nodes: UltraServer pod ordering (ncclTopoGetP2pPodInterNodeGraph) is not reimplemented; set %s=node to stitch in node order",
				comm.EnablePod, nNodes, PodOrderEnvVar)
		}
		res.PodFallback = true
	}
	if err := kanga.CheckMaterialize(rank, platform); err != nil {
		return res, err
	}

	stitchTails(all, nodes.heads, nChannels, next)
	rings := sc.ints(&sc.rings, nChannels*nRanks)
	if err := walkAll(nChannels, rings, rank, next, nChannels, 1); err != nil {
		return res, err
	}
	// Every ring is whole; now this rank's own prev must agree with its ring
	// (P15), checked after all walks as docs/errors.md orders it. Past this
	// check a ring alone gives this rank's neighbours: it starts here, its
	// second rank is the next and its last the prev.
	prevOfRank := stitchedPrev(all, nodes.heads, rank, nChannels)
	for c := range nChannels {
		if prev, from := prevOfRank[c], rings[(c+1)*nRanks-1]; prev != from {
			return res, abi.Errorf(abi.InternalError, "ncclTopoPostset: channel %d: rank %d has prev %d but the ring reaches it from %d", c, rank, prev, from)
		}
	}

	// D10: double, then clamp to ncclMaxNchannels() = 32; ncclMinNchannels()
	// is 0, so no cyclic copies are ever added.
	total := min(2*nChannels, layout.MaxChannels)
	if err := allocUserRanks(comm, total, nRanks, opt.Alloc); err != nil {
		return res, err
	}

	// Commit.
	for c := range total {
		ch := &comm.Channels[c].Ring
		src := c % nChannels // the doubled half repeats the first (D10)
		ring := rings[src*nRanks : (src+1)*nRanks]
		ch.Prev, ch.Next = ring[nRanks-1], ring[1%nRanks]
		copy(abi.Ints(ch.UserRanks, nRanks), ring)
	}
	comm.NChannels = int32(total)
	comm.NNodes = int32(nNodes)
	comm.Node = int32(nodes.self)
	copy(nodesFirstRank, nodes.heads)
	res.KangaInts = kanga.Materialize(comm, all, platform)
	res.NChannels, res.NNodes = total, nNodes
	return res, nil
}

// stitchedPrev returns this rank's prev on every channel after D9's stitch:
// its fragment's ringPrev, replaced by the previous node's tail for each node
// that names it as the channel's head, in node order (so the last such node
// wins, as in upstream's connectRings loop). With consistent fragments only
// its own node does.
func stitchedPrev(all []*abi.TopoRanks, heads []int32, rank int32, nChannels int) [layout.MaxChannels]int32 {
	var prev [layout.MaxChannels]int32
	copy(prev[:nChannels], all[rank].RingPrev[:nChannels])
	nNodes := len(heads)
	for m, h := range heads {
		node, previous := all[h], all[heads[(m+nNodes-1)%nNodes]]
		for c := range nChannels {
			if node.RingRecv[c] == rank {
				prev[c] = previous.RingSend[c]
			}
		}
	}
	return prev
}

// allocUserRanks gives every channel c < total a userRanks buffer of nRanks
// ints, allocating the NULL ones (D12). On failure it frees what it
// allocated, leaving comm as it was.
func allocUserRanks(comm *abi.Comm, total, nRanks int, alloc Allocator) error {
	var fresh [layout.MaxChannels]uintptr
	for c := range total {
		if comm.Channels[c].Ring.UserRanks != 0 {
			continue
		}
		p := alloc.AllocInts(nRanks)
		if p == 0 {
			for _, q := range fresh[:c] {
				if q != 0 {
					alloc.Free(q)
				}
			}
			return abi.Errorf(abi.SystemError, "ncclTopoPostset: malloc of %d bytes for channels[%d].ring.userRanks failed", 4*nRanks, c)
		}
		fresh[c] = p
	}
	for c, p := range fresh[:total] {
		if p != 0 {
			comm.Channels[c].Ring.UserRanks = p
		}
	}
	return nil
}
