package score

import (
	"fmt"

	"github.com/nccomring/libnccomring/internal/quote"
	"github.com/nccomring/libnccomring/nodeorder"

	"github.com/nccomring/libnccomring/cmd/nccom-rings/location"
	"github.com/nccomring/libnccomring/layout"
	"github.com/nccomring/libnccomring/ringdump"
)

// FromDumps is the job a directory of dumps describes (ringdump.ReadDir's
// files, sorted by rank): every rank's node and NICs from its own dump, the
// rings from the lowest rank's userRanks, each node's host from its lowest
// rank and its location the one most of its ranks recorded
// (NCCOM_RING_LOCATION, ties to the lowest rank's), as Postset places a
// node. A rank with two files counts its first. It needs one successful
// dump per rank, all of one job; the error says which rank is missing,
// failed or disagrees on the job's shape.
func FromDumps(files []ringdump.File) (*Job, error) {
	if len(files) == 0 {
		return nil, fmt.Errorf("no dump")
	}
	first := files[0].Dump
	nRanks := first.NRanks
	if nRanks < 1 || nRanks > MaxRanks {
		return nil, fmt.Errorf("rank %d's dump says %d ranks: outside [1, %d]", first.Rank, nRanks, MaxRanks)
	}
	byRank := make([]*ringdump.Dump, nRanks)
	for _, f := range files {
		d := f.Dump
		if d.NRanks != nRanks {
			return nil, fmt.Errorf("rank %d's dump says %d ranks, rank %d's %d: dumps of two jobs?", d.Rank, d.NRanks, first.Rank, nRanks)
		}
		if d.Rank < 0 || d.Rank >= nRanks {
			return nil, fmt.Errorf("a dump of rank %d, outside [0, %d)", d.Rank, nRanks)
		}
		if byRank[d.Rank] == nil {
			byRank[d.Rank] = d
		}
	}
	for r, d := range byRank {
		switch {
		case d == nil:
			return nil, fmt.Errorf("rank %d has no dump (of %d ranks)", r, nRanks)
		case d.Result != 0 || d.Wiring == nil:
			return nil, fmt.Errorf("rank %d's ncclTopoPostset failed (%s): no rings to score", r, quote.String(d.ResultName))
		}
	}
	ref := byRank[0]
	nNodes, nChannels := ref.NNodes, len(ref.Channels)
	switch {
	case nNodes < 1 || nNodes > nRanks:
		return nil, fmt.Errorf("rank 0's dump says %d nodes: outside [1, %d]", nNodes, nRanks)
	case nChannels < 1 || nChannels > layout.MaxChannels:
		return nil, fmt.Errorf("rank 0's dump has %d channels: outside [1, %d]", nChannels, layout.MaxChannels)
	}
	j := &Job{
		NRanks: nRanks, NNodes: nNodes, GraphChannels: ref.GraphChannels,
		Node:     make([]int, nRanks),
		Host:     make([]string, nNodes),
		Location: make([]string, nNodes),
		Rings:    make([][]int, nChannels),
		NetDev:   make([]int, nChannels*nRanks),
	}
	for i := range j.NetDev {
		j.NetDev[i] = -1
	}
	for c := range j.Rings {
		j.Rings[c] = ref.Channels[c].UserRanks
	}
	members := make([][]int, nNodes)
	for r, d := range byRank {
		if d.NNodes != nNodes {
			return nil, fmt.Errorf("rank %d's dump says %d nodes, rank 0's %d", r, d.NNodes, nNodes)
		}
		if d.Node < 0 || d.Node >= nNodes {
			return nil, fmt.Errorf("rank %d's node %d is outside [0, %d)", r, d.Node, nNodes)
		}
		j.Node[r] = d.Node
		members[d.Node] = append(members[d.Node], r)
		for _, nd := range d.NetDevs {
			if nd.Channel >= 0 && nd.Channel < nChannels {
				j.NetDev[nd.Channel*nRanks+r] = nd.Dev
			}
		}
	}
	for m, ranks := range members {
		if len(ranks) == 0 {
			return nil, fmt.Errorf("node %d has no rank", m)
		}
		j.Host[m] = byRank[ranks[0]].Host
		// A location Preset could not parse is none, as the library
		// takes it (D25: one WARN on that rank, then no location).
		j.Location[m] = majority(ranks, func(r int) string {
			if o := byRank[r].Order; o != nil {
				if _, err := nodeorder.Parse(o.Location); err == nil {
					return o.Location
				}
			}
			return ""
		})
	}
	return j, j.Check()
}

// majority is the non-empty value most of ranks give, ties to the one the
// lowest rank gives; "" when none gives one. Linear: a crafted dump
// directory may put every rank on one node.
func majority(ranks []int, value func(int) string) string {
	counts := make(map[string]int)
	best, most := "", 0
	for _, r := range ranks {
		if v := value(r); v != "" {
			counts[v]++
		}
	}
	for _, r := range ranks { // in rank order, so a tie goes to the lowest
		if v := value(r); v != "" && counts[v] > most {
			best, most = v, counts[v]
		}
	}
	return best
}

// SetLocations replaces every node's location by the one entries give its
// host (location.Key: lowercase, up to the first dot). It returns the
// nodes whose host entries do not list; they have no location then.
func (j *Job) SetLocations(entries []location.Entry) (missing []int) {
	j.Location, missing = location.Locate(j.Host, entries)
	return missing
}
