package score

import (
	"fmt"
	"strings"

	"github.com/nccomring/libnccomring/internal/quote"
	"github.com/nccomring/libnccomring/nodeorder"

	"github.com/nccomring/libnccomring/cmd/nccom-rings/location"
	"github.com/nccomring/libnccomring/layout"
	"github.com/nccomring/libnccomring/ringdump"
)

// FromDumps is the job a directory of dumps describes (ringdump.ReadDir's
// files, sorted by rank): every rank's node, NICs and location (the hashes
// its record carried: ringdump.Order.Place) from its own dump, the rings
// and node heads from the lowest rank's, each node's host from its lowest
// rank; each rank's whole dump in Views (for Diff). The nodes are placed
// by Arrange, as Postset places them (D28); a location's names only show
// it. A rank with two files counts its first.
// It needs one successful dump per rank, all of one job; the error says
// which rank is missing, failed or disagrees on the job's shape.
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
		Node:         make([]int, nRanks),
		Host:         make([]string, nNodes),
		Location:     make([]string, nNodes),
		RankLocation: make([]nodeorder.Location, nRanks),
		Rings:        make([][]int, nChannels),
		NetDev:       make([]int, nChannels*nRanks),
	}
	for i := range j.NetDev {
		j.NetDev[i] = -1
	}
	for c := range j.Rings {
		j.Rings[c] = ref.Channels[c].UserRanks
	}
	for r, d := range byRank {
		if d.NNodes != nNodes {
			return nil, fmt.Errorf("rank %d's dump says %d nodes, rank 0's %d", r, d.NNodes, nNodes)
		}
		if d.Node < 0 || d.Node >= nNodes {
			return nil, fmt.Errorf("rank %d's node %d is outside [0, %d)", r, d.Node, nNodes)
		}
		j.Node[r] = d.Node
		j.RankLocation[r] = d.Order.Place()
		for _, nd := range d.NetDevs {
			if nd.Channel >= 0 && nd.Channel < nChannels {
				j.NetDev[nd.Channel*nRanks+r] = nd.Dev
			}
		}
	}
	if len(ref.NodesFirstRank) != nNodes {
		return nil, fmt.Errorf("rank 0's dump has %d node heads (nodesFirstRank) for %d nodes", len(ref.NodesFirstRank), nNodes)
	}
	j.Heads = ref.NodesFirstRank
	j.Views = byRank
	if err := j.Check(); err != nil {
		return nil, err
	}
	for r := nRanks - 1; r >= 0; r-- { // each host its node's lowest rank's
		j.Host[j.Node[r]] = byRank[r].Host
	}
	// Placed as Postset places them (D28): by the hashes the records
	// carried; the names only show them.
	arr, err := j.Arrange()
	if err != nil {
		return nil, err
	}
	names := NamesOf(byRank)
	for m, l := range arr.Node {
		j.Location[m] = names.Show(l)
	}
	j.Names = names.All
	return j, nil
}

// Names is the location names a job's dumps give, by the location their
// hashes are (D28: the hashes place a rank, the names only show it).
type Names struct {
	byLocation map[nodeorder.Location]string // the lowest rank's name of each
	All        []string                      // every name given, once each, in rank order
}

// NamesOf reads the names of dumps (by rank; nil entries skipped): a
// rank's name counts when it parses to the location the rank is placed by
// (ringdump.Order.Place), as the library writes it only then.
func NamesOf(dumps []*ringdump.Dump) *Names {
	n := &Names{byLocation: map[nodeorder.Location]string{}}
	seen := map[string]bool{}
	for _, d := range dumps {
		if d == nil || d.Wiring == nil || d.Order == nil || d.Order.Location == "" {
			continue
		}
		o := d.Order
		if l, err := nodeorder.Parse(o.Location); err != nil || l != o.Place() {
			continue
		}
		if _, ok := n.byLocation[o.Place()]; !ok {
			n.byLocation[o.Place()] = o.Location
		}
		if !seen[o.Location] {
			seen[o.Location] = true
			n.All = append(n.All, o.Location)
		}
	}
	return n
}

// Show is l as a person reads it: its names when some dump gave them, ""
// for no location, else its hashes ("#f738b38c/#0a1b2c3d": D28's "name
// unknown"), which no name can be mistaken for.
func (n *Names) Show(l nodeorder.Location) string {
	if !l.Found() {
		return ""
	}
	if name, ok := n.byLocation[l]; ok {
		return name
	}
	return HashText(l)
}

// HashText is l as its hashes, "#f738b38c/#0a1b2c3d".
func HashText(l nodeorder.Location) string {
	parts := make([]string, 0, nodeorder.MaxLevels)
	for _, h := range l.Hash[:min(l.Levels, nodeorder.MaxLevels)] {
		parts = append(parts, fmt.Sprintf("#%08x", h))
	}
	return strings.Join(parts, "/")
}

// SetLocations replaces every node's location by the one entries give its
// host (location.Key: lowercase, up to the first dot), every rank
// carrying its node's. It returns the nodes whose host entries do not
// list; they have no location then.
func (j *Job) SetLocations(entries []location.Entry) (missing []int) {
	j.Location, missing = location.Locate(j.Host, entries)
	j.RankLocation, j.Names = nil, nil
	for _, l := range j.Location {
		if l != "" {
			j.Names = append(j.Names, l)
		}
	}
	return missing
}
