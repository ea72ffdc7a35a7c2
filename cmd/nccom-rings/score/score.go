// Package score measures a job's rings against the network (D25): for
// each channel and each level of the locations, the inter-node edges that
// cross a group boundary against the fewest a cycle can have, the edges
// whose two ends use different NIC indices, and how many channels use each
// NIC index of a node. It reads a Job (FromDumps, or built by a planner)
// and never verifies it: a job whose ranks disagree is verify's to report.
// Pure Go, no cgo; the tools only format what it returns.
//
// Limits: a Job has at most MaxRanks ranks and layout.MaxChannels (32)
// channels; every index in it is checked before use (Check), so a crafted
// dump cannot make a computation index out of range.
package score

import (
	"fmt"
	"slices"
	"strings"

	"github.com/nccomring/libnccomring/layout"
	"github.com/nccomring/libnccomring/nodeorder"
	"github.com/nccomring/libnccomring/ringdump"
)

// MaxRanks bounds a Job: the largest job a dump directory describes
// (ringdump's 64 MiB file holds about 260,000 ranks of one channel).
const MaxRanks = 1 << 18

// Job is what scoring needs of a job, in flat arrays as NCCL's src/graph
// keeps them.
type Job struct {
	NRanks int
	NNodes int
	// Node[r] is rank r's node index (D8 order, 0..NNodes-1).
	Node []int
	// Host[m] is node m's host name; "" unknown.
	Host []string
	// Location[m] is node m's location as names (nodeorder.Parse's
	// form), "" none. When RankLocation is set it is only shown: a
	// location whose names no dump gave is shown as its hashes
	// ("#f738b38c/#..."), and never parsed.
	Location []string
	// RankLocation[r] is the location rank r's record carried, by which
	// Arrange places the nodes (D28); nil when every rank carries its
	// node's Location (a job built from node locations: plan,
	// --locations).
	RankLocation []nodeorder.Location
	// Heads[m] is node m's head rank (nodesFirstRank), to which the
	// placement rule gives ties; nil: each node's lowest rank.
	Heads []int
	// Names is every location name the job's dumps or locations file
	// gave, for location.Collisions.
	Names []string
	// Rings[c] is channel c's ring: every rank once, in ring order.
	// GraphChannels is the channel count before doubling (D10): channel
	// c >= GraphChannels repeats c-GraphChannels; 0 when unknown.
	Rings         [][]int
	GraphChannels int
	// NetDev[c*NRanks+r] is rank r's NIC index on channel c
	// (ncclTopoGetNetDev); -1 unknown.
	NetDev []int
	// Views[r] is rank r's own dump (FromDumps), so that Diff compares
	// every rank's view, not only the lowest rank's rings; nil for a job
	// built otherwise (plan, --locations keeps them).
	Views []*ringdump.Dump
}

// Check reports the first thing about j that scoring cannot use.
func (j *Job) Check() error {
	switch {
	case j.NRanks < 1 || j.NRanks > MaxRanks:
		return fmt.Errorf("%d ranks: outside [1, %d]", j.NRanks, MaxRanks)
	case j.NNodes < 1 || j.NNodes > j.NRanks:
		return fmt.Errorf("%d nodes: outside [1, %d]", j.NNodes, j.NRanks)
	case len(j.Node) != j.NRanks:
		return fmt.Errorf("%d node indices for %d ranks", len(j.Node), j.NRanks)
	case len(j.Host) != j.NNodes || len(j.Location) != j.NNodes:
		return fmt.Errorf("%d hosts and %d locations for %d nodes", len(j.Host), len(j.Location), j.NNodes)
	case len(j.Rings) < 1 || len(j.Rings) > layout.MaxChannels:
		return fmt.Errorf("%d channels: outside [1, %d]", len(j.Rings), layout.MaxChannels)
	case len(j.NetDev) != len(j.Rings)*j.NRanks:
		return fmt.Errorf("%d NIC entries for %d channels of %d ranks", len(j.NetDev), len(j.Rings), j.NRanks)
	}
	ranks := make([]int, j.NNodes) // a node without a rank cannot be placed
	for r, m := range j.Node {
		if m < 0 || m >= j.NNodes {
			return fmt.Errorf("rank %d: node %d outside [0, %d)", r, m, j.NNodes)
		}
		ranks[m]++
	}
	if m := slices.Index(ranks, 0); m >= 0 {
		return fmt.Errorf("node %d has no rank", m)
	}
	if j.RankLocation != nil && len(j.RankLocation) != j.NRanks {
		return fmt.Errorf("%d rank locations for %d ranks", len(j.RankLocation), j.NRanks)
	}
	if j.Heads != nil {
		if len(j.Heads) != j.NNodes {
			return fmt.Errorf("%d heads for %d nodes", len(j.Heads), j.NNodes)
		}
		for m, h := range j.Heads {
			if h < 0 || h >= j.NRanks || j.Node[h] != m {
				return fmt.Errorf("node %d's head %d is not one of its ranks", m, h)
			}
		}
	}
	seen := make([]int, j.NRanks) // the channel+1 that last saw each rank
	for c, ring := range j.Rings {
		if len(ring) != j.NRanks {
			return fmt.Errorf("channel %d: a ring of %d ranks, not %d", c, len(ring), j.NRanks)
		}
		for _, r := range ring {
			if r < 0 || r >= j.NRanks || seen[r] == c+1 {
				return fmt.Errorf("channel %d: rank %d is outside [0, %d) or twice in the ring", c, r, j.NRanks)
			}
			seen[r] = c + 1
		}
	}
	return nil
}

// Level is one level of the locations in a channel: how many inter-node
// edges cross its group boundaries, and the fewest a cycle through every
// node can have.
type Level struct {
	Level     int `json:"level"` // 1 is the outermost name
	Groups    int `json:"groups"`
	Crossings int `json:"crossings"`
	Minimum   int `json:"minimum"` // Groups when 2 or more, else 0
	Excess    int `json:"excess"`  // Crossings - Minimum
}

// Channel is one channel's score.
type Channel struct {
	Channel int `json:"channel"`
	// Sequence is the nodes in the order the ring visits them, from
	// rank Rings[c][0]'s node; a node the ring enters twice is there twice.
	Sequence       []int   `json:"sequence"`
	InterNodeEdges int     `json:"interNodeEdges"`
	Levels         []Level `json:"levels"`
	// NICMismatches counts the inter-node edges whose sender's NIC index
	// differs from the receiver's; NICUnknown those where either is not
	// known.
	NICMismatches int `json:"nicMismatches"`
	NICUnknown    int `json:"nicUnknown"`
}

// Mismatch is one inter-node edge whose two ends use different NIC indices.
type Mismatch struct {
	Channel int `json:"channel"`
	From    int `json:"from"` // rank
	To      int `json:"to"`   // rank
	FromDev int `json:"fromDev"`
	ToDev   int `json:"toDev"`
}

// NICShare is how many channels carry inter-node edges through one NIC
// index of one node.
type NICShare struct {
	Dev      int `json:"dev"`
	Channels int `json:"channels"`
}

// Score is a job's score.
type Score struct {
	NRanks int `json:"nRanks"`
	NNodes int `json:"nNodes"`
	// Depth is the most names of any node's location; 0 when no node has
	// one. Located counts the nodes that have one.
	Depth   int `json:"depth"`
	Located int `json:"located"`
	// Arranged is the node sequence D25's network order gives these
	// locations (nodeorder.Arrange, the library's own rule: D28): the
	// order a job with NCCOM_RING_NODE_ORDER=network stitches.
	Arranged []int     `json:"arranged"`
	Channels []Channel `json:"channels"`
	// MaxExcess[l-1] is the largest excess of level l over the channels.
	MaxExcess []int `json:"maxExcess"`
	// Mismatches lists the first MaxMismatches NIC-index mismatches, in
	// channel then ring order.
	Mismatches []Mismatch `json:"mismatches"`
	// NICs[m] is node m's NIC indices and how many channels use each,
	// by index.
	NICs [][]NICShare `json:"nics"`
}

// MaxMismatches bounds Score.Mismatches; the counts are whole.
const MaxMismatches = 20

// Compute scores j. Cost: O(len(Rings) * (NRanks + NNodes*Depth)) time,
// O(NRanks + NNodes*Depth) memory besides the result.
func Compute(j *Job) (*Score, error) {
	if err := j.Check(); err != nil {
		return nil, err
	}
	s := &Score{NRanks: j.NRanks, NNodes: j.NNodes}
	arr, err := j.Arrange()
	if err != nil {
		return nil, err
	}
	s.Located = j.NNodes - arr.Unplaced
	s.Arranged = ringdump.Ints(arr.Sequence)
	groups := arr.Groups
	s.Depth = groups.Depth
	s.MaxExcess = make([]int, s.Depth)

	// used[m]: node m's NIC indices and the channels each carries; a node
	// has few NICs, so a short list per node. The channels come in order,
	// so lastChannel is enough to count each channel once.
	type use struct{ dev, lastChannel, channels int }
	used := make([][]use, j.NNodes)
	mark := func(m, dev, c int) {
		if dev < 0 {
			return
		}
		for i := range used[m] {
			if u := &used[m][i]; u.dev == dev {
				if u.lastChannel != c {
					u.lastChannel, u.channels = c, u.channels+1
				}
				return
			}
		}
		used[m] = append(used[m], use{dev, c, 1})
	}

	seq := make([]int32, 0, j.NRanks)
	for c, ring := range j.Rings {
		ch := Channel{Channel: c}
		seq = seq[:0]
		n := len(ring)
		for i, r := range ring {
			next := ring[(i+1)%n]
			from, to := j.Node[r], j.Node[next]
			if i == 0 || int32(from) != seq[len(seq)-1] {
				seq = append(seq, int32(from))
			}
			if from == to {
				continue
			}
			ch.InterNodeEdges++
			fd, td := j.NetDev[c*j.NRanks+r], j.NetDev[c*j.NRanks+next]
			mark(from, fd, c)
			mark(to, td, c)
			switch {
			case fd < 0 || td < 0:
				ch.NICUnknown++
			case fd != td:
				ch.NICMismatches++
				if len(s.Mismatches) < MaxMismatches {
					s.Mismatches = append(s.Mismatches, Mismatch{Channel: c, From: r, To: next, FromDev: fd, ToDev: td})
				}
			}
		}
		// The ring ends where it began: rank ring[0] may sit inside its
		// node's run, whose two halves are one visit.
		if len(seq) > 1 && seq[0] == seq[len(seq)-1] {
			seq = seq[:len(seq)-1]
		}
		for _, m := range seq {
			ch.Sequence = append(ch.Sequence, int(m))
		}
		crossings, count := nodeorder.Crossings(groups, seq)
		for l := range s.Depth {
			lv := Level{Level: l + 1, Groups: count[l], Crossings: crossings[l]}
			if lv.Groups >= 2 {
				lv.Minimum = lv.Groups
			}
			lv.Excess = lv.Crossings - lv.Minimum
			s.MaxExcess[l] = max(s.MaxExcess[l], lv.Excess)
			ch.Levels = append(ch.Levels, lv)
		}
		s.Channels = append(s.Channels, ch)
	}
	s.NICs = make([][]NICShare, j.NNodes)
	for m, us := range used {
		s.NICs[m] = []NICShare{}
		for _, u := range us {
			s.NICs[m] = append(s.NICs[m], NICShare{Dev: u.dev, Channels: u.channels})
		}
		slices.SortFunc(s.NICs[m], func(a, b NICShare) int { return a.Dev - b.Dev })
	}
	if s.Mismatches == nil {
		s.Mismatches = []Mismatch{}
	}
	return s, nil
}

// Arrange places j's nodes and orders them by the one rule the library
// follows (nodeorder.Arrange, D28): from RankLocation, or when it is nil
// from every rank carrying its node's Location; ties go to Heads (nil:
// each node's lowest rank). j must pass Check.
func (j *Job) Arrange() (nodeorder.Arrangement, error) {
	rankLoc, err := j.RankLocations()
	if err != nil {
		return nodeorder.Arrangement{}, err
	}
	nodeOf := make([]int32, j.NRanks)
	heads := make([]int32, j.NNodes)
	for m := range heads {
		heads[m] = -1
	}
	for r, m := range j.Node {
		nodeOf[r] = int32(m)
		if heads[m] < 0 {
			heads[m] = int32(r)
		}
	}
	for m, h := range j.Heads {
		heads[m] = int32(h)
	}
	return nodeorder.Arrange(rankLoc, nodeOf, heads, nil), nil
}

// RankLocations is each rank's location as Arrange takes it:
// RankLocation, or when it is nil every rank's node's Location parsed.
func (j *Job) RankLocations() ([]nodeorder.Location, error) {
	if j.RankLocation != nil {
		return j.RankLocation, nil
	}
	locs, err := ParseLocations(j.Location)
	if err != nil {
		return nil, err
	}
	rankLoc := make([]nodeorder.Location, j.NRanks)
	for r, m := range j.Node {
		rankLoc[r] = locs[m]
	}
	return rankLoc, nil
}

// ParseLocations is each node's location as nodeorder computes with it:
// texts[m] parsed, none for "".
func ParseLocations(texts []string) ([]nodeorder.Location, error) {
	locs := make([]nodeorder.Location, len(texts))
	for m, text := range texts {
		if text == "" {
			continue
		}
		l, err := nodeorder.Parse(text)
		if err != nil {
			return nil, fmt.Errorf("node %d: %w", m, err)
		}
		locs[m] = l
	}
	return locs, nil
}

// Exceeds reports the first level whose excess is more than n on some
// channel, and that excess; ok is false when none is.
func (s *Score) Exceeds(n int) (level, excess int, ok bool) {
	for l, e := range s.MaxExcess {
		if e > n {
			return l + 1, e, true
		}
	}
	return 0, 0, false
}

// NICMismatches is the mismatches over every channel.
func (s *Score) NICMismatches() int {
	n := 0
	for _, c := range s.Channels {
		n += c.NICMismatches
	}
	return n
}

// Spans writes an increasing list of indices (nodes, channels) as ranges,
// "0-3 5 7-8", as the tool and the report show them.
func Spans(v []int) string {
	var parts []string
	for i := 0; i < len(v); {
		j := i
		for j+1 < len(v) && v[j+1] == v[j]+1 {
			j++
		}
		if j > i {
			parts = append(parts, fmt.Sprintf("%d-%d", v[i], v[j]))
		} else {
			parts = append(parts, fmt.Sprint(v[i]))
		}
		i = j + 1
	}
	return strings.Join(parts, " ")
}

// NICGroup is the nodes whose channels use the NIC indices alike.
type NICGroup struct {
	Shares string // "NIC index 0: 8 channels, NIC index 1: 1 channel", or "none"
	Nodes  []int
}

// GroupNICShares groups the nodes of nics (Score.NICs, by node) by the text
// of their shares, the groups in the order of their first node: what the
// tool prints and the report tabulates.
func GroupNICShares(nics [][]NICShare) []NICGroup {
	var groups []NICGroup
	at := map[string]int{}
	for m, shares := range nics {
		var b strings.Builder
		for i, s := range shares {
			if i > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "NIC index %d: %d channel", s.Dev, s.Channels)
			if s.Channels != 1 {
				b.WriteString("s")
			}
		}
		if b.Len() == 0 {
			b.WriteString("none")
		}
		i, ok := at[b.String()]
		if !ok {
			i = len(groups)
			at[b.String()] = i
			groups = append(groups, NICGroup{Shares: b.String()})
		}
		groups[i].Nodes = append(groups[i].Nodes, m)
	}
	return groups
}
