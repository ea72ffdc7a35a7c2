package ring

import (
	"errors"

	"github.com/nccomring/libnccomring/abi"
	"github.com/nccomring/libnccomring/kanga"
	"github.com/nccomring/libnccomring/layout"
	"github.com/nccomring/libnccomring/nodeorder"
	"github.com/nccomring/libnccomring/record"
)

// PresetOptions carries what Preset reads from outside its arguments: the
// platform (D14) and what this rank's record carries (D25, D27), which the
// export layer reads from the environment at every call.
type PresetOptions struct {
	Platforms kanga.Resolver
	Network   bool               // NCCOM_RING_NODE_ORDER=network
	Location  nodeorder.Location // NCCOM_RING_LOCATION; Levels 0: none
	PodNode   bool               // NCCOM_RING_POD_ORDER=node
}

// Preset is ncclTopoPreset (spec §2, D4-D7, D23): it packs this rank's ring
// fragment for channels c < n = graph.NChannels, writes -1 into the four
// ring arrays for n <= c < 32 (D23), sets
// comm.Channels[c].Ring.Prev/Next, copies channels [n, min(2n, 32)) from
// [0, ...) keeping each destination's UserRanks/DevUserRanks (D6), sets
// comm.NChannels = n (D4), on TRN3-SwitchV1 lifts comm.KangaRing into
// frag (D7), and writes this rank's whole record (D25, D27, D28;
// record.Write): the policy, the location, the platform (unknown when
// NCCOM_RING_PLATFORM names none: Preset succeeds), enablePod,
// nKangaRingChannels, the graph's channel count and fingerprint, the
// pod-order setting and, on SwitchV1 only, its preconditions as the
// platform answers them.
//
// frag's other bytes are not written. Input is checked in the order of
// docs/errors.md S4-S13 before anything is written; on error nothing is.
func Preset(comm *abi.Comm, graph *abi.TopoGraph, frag *abi.TopoRanks, opt PresetOptions) error {
	nRanks, rank := comm.NRanks, comm.Rank
	localRanks, nChannels := int(comm.LocalRanks), int(graph.NChannels)
	switch {
	case nRanks <= 0:
		return abi.Errorf(abi.InvalidArgument, "ncclTopoPreset: comm->nRanks %d is not positive", nRanks)
	case rank < 0 || rank >= nRanks:
		return abi.Errorf(abi.InvalidArgument, "ncclTopoPreset: comm->rank %d is outside [0, %d)", rank, nRanks)
	case localRanks < 1 || localRanks > layout.MaxLocalRanks:
		return abi.Errorf(abi.InvalidArgument, "ncclTopoPreset: comm->localRanks %d is outside [1, %d]", localRanks, layout.MaxLocalRanks)
	case nChannels < 1 || nChannels > layout.MaxChannels:
		return abi.Errorf(abi.InvalidArgument, "ncclTopoPreset: graph->nChannels %d is outside [1, %d]", nChannels, layout.MaxChannels)
	case nChannels*localRanks > layout.MaxIntra:
		return abi.Errorf(abi.InvalidArgument, "ncclTopoPreset: graph->nChannels %d x comm->localRanks %d = %d exceeds the %d entries of graph->intra",
			nChannels, localRanks, nChannels*localRanks, layout.MaxIntra)
	}
	if err := kanga.CheckChannelCount("ncclTopoPreset", comm.NKangaRingChannels); err != nil {
		return err
	}
	// An unknown NCCOM_RING_PLATFORM no longer fails Preset (D28): the
	// record says "unknown", so that every rank's Postset refuses the job
	// alike; the export layer prints the variable's WARN.
	platform := record.Generic
	switch switchV1, err := opt.Platforms.IsSwitchV1(); {
	case errors.As(err, new(*kanga.UnknownPlatformError)):
		platform = record.Unknown
	case err != nil:
		return abi.Errorf(abi.InvalidUsage, "ncclTopoPreset: %w", err)
	case switchV1:
		platform = record.SwitchV1
	}
	switchV1 := platform == record.SwitchV1

	// position[c] is this rank's index in channel c's intra order.
	var position [layout.MaxChannels]int
	var seen positionSet
	for c := range nChannels {
		order := graph.Intra[c*localRanks : (c+1)*localRanks]
		i, err := checkIntraOrder(c, order, rank, nRanks, &seen)
		if err != nil {
			return err
		}
		position[c] = i
	}

	// The record's fields, before anything is written; the preconditions
	// only on SwitchV1, since other platforms' hooks may assert.
	fields := record.Fields{Rank: rank, Network: opt.Network, PodNode: opt.PodNode, Platform: platform,
		EnablePod: comm.EnablePod != 0, KangaChannels: comm.NKangaRingChannels, GraphChannels: int32(nChannels),
		Location: opt.Location, Fingerprint: record.Fingerprint(graph)}
	if switchV1 {
		fields.VirtualCore, fields.JbogID = opt.Platforms.Preconditions(rank)
	}

	// Commit.
	for c := range nChannels {
		order := graph.Intra[c*localRanks : (c+1)*localRanks]
		i := position[c]
		prev, next := int32(-1), int32(-1) // -1: the segment end the network leg crosses
		if i > 0 {
			prev = order[i-1]
		}
		if i < localRanks-1 {
			next = order[i+1]
		}
		frag.RingRecv[c] = order[0]
		frag.RingSend[c] = order[localRanks-1]
		frag.RingPrev[c] = prev
		frag.RingNext[c] = next
		comm.Channels[c].Ring.Prev = prev
		comm.Channels[c].Ring.Next = next
	}
	// D23: the channels this graph does not have say so, so that Postset
	// can take the smallest channel count of any rank's fragment.
	for c := nChannels; c < layout.MaxChannels; c++ {
		frag.RingRecv[c], frag.RingSend[c], frag.RingPrev[c], frag.RingNext[c] = -1, -1, -1, -1
	}
	duplicateChannels(comm, nChannels)
	comm.NChannels = int32(nChannels)
	kanga.Lift(comm, frag, switchV1)
	record.Write(frag, &fields)
	return nil
}

// duplicateChannels copies channels [n, min(2n, 32)) from [0, ...) (the
// spec's memcpy, D6), except that every destination keeps its own userRanks
// and devUserRanks pointers so that no two channels share a buffer.
func duplicateChannels(comm *abi.Comm, n int) {
	for c := n; c < min(2*n, layout.MaxChannels); c++ {
		dst := &comm.Channels[c]
		userRanks, devUserRanks := dst.Ring.UserRanks, dst.Ring.DevUserRanks
		*dst = comm.Channels[c-n]
		dst.Ring.UserRanks, dst.Ring.DevUserRanks = userRanks, devUserRanks
	}
}

// checkIntraOrder checks one channel's intra slice (P3; docs/errors.md
// S11-S13): every value a rank, none twice, and rank present. It returns the
// position of rank.
func checkIntraOrder(c int, order []int32, rank, nRanks int32, seen *positionSet) (int, error) {
	localRanks := len(order)
	seen.reset()
	self := -1
	for i, v := range order {
		if v < 0 || v >= nRanks {
			return 0, abi.Errorf(abi.InvalidArgument, "ncclTopoPreset: graph->intra[%d] (channel %d, position %d) is %d, outside [0, %d)",
				c*localRanks+i, c, i, v, nRanks)
		}
		if j, dup := seen.add(v, int32(i)); dup {
			return 0, abi.Errorf(abi.InvalidArgument, "ncclTopoPreset: channel %d lists rank %d twice (positions %d and %d)", c, v, j, i)
		}
		if v == rank {
			self = i
		}
	}
	if self < 0 {
		return 0, abi.Errorf(abi.InvalidArgument, "ncclTopoPreset: rank %d is not in channel %d's intra order", rank, c)
	}
	return self, nil
}

// positionSet maps the ranks of one intra slice (at most 256) to their
// positions: an open-addressing table twice that size, so duplicate
// detection is O(localRanks) whatever nRanks is. A slot is in use when its
// generation is the set's; reset starts a new generation instead of clearing.
type positionSet struct {
	gen   uint32
	slots [2 * layout.MaxLocalRanks]struct {
		rank, pos int32
		gen       uint32
	}
}

func (s *positionSet) reset() { s.gen++ }

// add records rank at pos and returns (earlier position, true) if rank was
// already present.
func (s *positionSet) add(rank, pos int32) (int32, bool) {
	mask := uint32(len(s.slots) - 1)
	for h := uint32(rank) * 2654435761 & mask; ; h = (h + 1) & mask {
		slot := &s.slots[h]
		if slot.gen != s.gen {
			slot.rank, slot.pos, slot.gen = rank, pos, s.gen
			return 0, false
		}
		if slot.rank == rank {
			return slot.pos, true
		}
	}
}
