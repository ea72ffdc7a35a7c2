package score_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nccomring/libnccomring/cmd/nccom-rings/location"
	"github.com/nccomring/libnccomring/cmd/nccom-rings/score"
	"github.com/nccomring/libnccomring/ringdump"
)

// d25Job is D25's example (docs/spec/DECISIONS.md): 8 nodes of 4 ranks
// (ranks 4m..4m+3 on node m) under one spine, alternating between leafA
// (even nodes) and leafB (odd nodes) in rank order. Channel 0 is the ring
// in rank order (nodes 0 1 2 ... 7), channel 1 the network order (nodes 0 2
// 4 6 1 3 5 7), each node's ranks in local order. NICs: on channel 0 a
// node's first rank uses NIC 0 and the others NIC 1, so every inter-node
// edge leaves on NIC 1 and enters on NIC 0; on channel 1 every rank uses
// NIC 2.
func d25Job() *score.Job {
	j := &score.Job{NRanks: 32, NNodes: 8, NetDev: make([]int, 2*32)}
	for r := range 32 {
		j.Node = append(j.Node, r/4)
		j.NetDev[r] = 1
		if r%4 == 0 {
			j.NetDev[r] = 0
		}
		j.NetDev[32+r] = 2
	}
	for m := range 8 {
		j.Host = append(j.Host, []string{"a", "b", "c", "d", "e", "f", "g", "h"}[m])
		j.Location = append(j.Location, []string{"spine0/leafA", "spine0/leafB"}[m%2])
	}
	var rankOrder, network []int
	for r := range 32 {
		rankOrder = append(rankOrder, r)
	}
	for _, m := range []int{0, 2, 4, 6, 1, 3, 5, 7} {
		network = append(network, 4*m, 4*m+1, 4*m+2, 4*m+3)
	}
	j.Rings = [][]int{rankOrder, network}
	return j
}

func TestScoreOfD25sExample(t *testing.T) {
	s, err := score.Compute(d25Job())
	require.NoError(t, err)
	assert.Equal(t, 2, s.Depth)
	assert.Equal(t, 8, s.Located)
	assert.Equal(t, []int{0, 2, 4, 6, 1, 3, 5, 7}, s.Arranged, "leafA's nodes, then leafB's")
	require.Len(t, s.Channels, 2)

	// Rank order: every one of the 8 inter-node edges changes leaf (the
	// wrap-around 7 -> 0 too); one spine, so none crosses level 1.
	c0 := s.Channels[0]
	assert.Equal(t, []int{0, 1, 2, 3, 4, 5, 6, 7}, c0.Sequence)
	assert.Equal(t, 8, c0.InterNodeEdges)
	assert.Equal(t, []score.Level{
		{Level: 1, Groups: 1, Crossings: 0, Minimum: 0, Excess: 0},
		{Level: 2, Groups: 2, Crossings: 8, Minimum: 2, Excess: 6},
	}, c0.Levels)
	assert.Equal(t, 8, c0.NICMismatches, "every edge leaves on NIC 1 and enters on NIC 0")

	// Network order: leafA's four nodes, then leafB's: 6 -> 1 and 7 -> 0
	// change leaf, the fewest a cycle through two groups can.
	c1 := s.Channels[1]
	assert.Equal(t, []int{0, 2, 4, 6, 1, 3, 5, 7}, c1.Sequence)
	assert.Equal(t, score.Level{Level: 2, Groups: 2, Crossings: 2, Minimum: 2, Excess: 0}, c1.Levels[1])
	assert.Equal(t, 0, c1.NICMismatches)

	assert.Equal(t, []int{0, 6}, s.MaxExcess)
	level, excess, ok := s.Exceeds(5)
	assert.True(t, ok)
	assert.Equal(t, []int{2, 6}, []int{level, excess})
	_, _, ok = s.Exceeds(6)
	assert.False(t, ok)

	assert.Equal(t, 8, s.NICMismatches())
	require.Len(t, s.Mismatches, 8)
	assert.Equal(t, score.Mismatch{Channel: 0, From: 3, To: 4, FromDev: 1, ToDev: 0}, s.Mismatches[0])
	assert.Equal(t, score.Mismatch{Channel: 0, From: 31, To: 0, FromDev: 1, ToDev: 0}, s.Mismatches[7])
	// Each node: NIC 0 receives and NIC 1 sends on channel 0, NIC 2 both
	// on channel 1.
	for m := range 8 {
		assert.Equal(t, []score.NICShare{{Dev: 0, Channels: 1}, {Dev: 1, Channels: 1}, {Dev: 2, Channels: 1}}, s.NICs[m], "node %d", m)
	}
}

func TestScoreWithoutLocationsOrOnOneNode(t *testing.T) {
	j := d25Job()
	for m := range j.Location {
		j.Location[m] = ""
	}
	s, err := score.Compute(j)
	require.NoError(t, err)
	assert.Equal(t, 0, s.Depth)
	assert.Empty(t, s.Channels[0].Levels)
	assert.Equal(t, 8, s.Channels[0].InterNodeEdges)

	// One node: no inter-node edge, nothing to cross.
	one := &score.Job{NRanks: 2, NNodes: 1, Node: []int{0, 0}, Host: []string{"a"}, Location: []string{"s/l"},
		Rings: [][]int{{1, 0}}, NetDev: []int{-1, -1}}
	s, err = score.Compute(one)
	require.NoError(t, err)
	assert.Equal(t, []int{0}, s.Channels[0].Sequence)
	assert.Equal(t, 0, s.Channels[0].InterNodeEdges)
	assert.Equal(t, []score.Level{{Level: 1, Groups: 1}, {Level: 2, Groups: 1}}, s.Channels[0].Levels)
}

func TestScoreStartsInsideANodesRun(t *testing.T) {
	// A ring from rank 1 of node 0 (ranks 0,1) through node 1 (2,3): the
	// two halves of node 0's run are one visit, so 2 inter-node edges.
	j := &score.Job{NRanks: 4, NNodes: 2, Node: []int{0, 0, 1, 1}, Host: []string{"a", "b"},
		Location: []string{"s/x", "s/y"}, Rings: [][]int{{1, 2, 3, 0}}, NetDev: []int{5, 5, -1, 5}}
	s, err := score.Compute(j)
	require.NoError(t, err)
	c := s.Channels[0]
	assert.Equal(t, []int{0, 1}, c.Sequence)
	assert.Equal(t, 2, c.InterNodeEdges)
	assert.Equal(t, 2, c.Levels[1].Crossings)
	assert.Equal(t, 0, c.Levels[1].Excess)
	assert.Equal(t, 1, c.NICUnknown, "1 -> 2 has no NIC for rank 2")
	assert.Equal(t, 0, c.NICMismatches, "3 -> 0: NIC 5 both")
}

func TestScoreRefusesWhatItCannotIndex(t *testing.T) {
	for name, edit := range map[string]func(j *score.Job){
		"a node out of range":  func(j *score.Job) { j.Node[3] = 8 },
		"a rank twice":         func(j *score.Job) { j.Rings[0][1] = 0 },
		"a short ring":         func(j *score.Job) { j.Rings[1] = j.Rings[1][:31] },
		"a short NIC table":    func(j *score.Job) { j.NetDev = j.NetDev[:40] },
		"no channel":           func(j *score.Job) { j.Rings = nil },
		"a bad location":       func(j *score.Job) { j.Location[2] = "spine0//leafA" },
		"a rank outside":       func(j *score.Job) { j.Rings[0][5] = 32 },
		"more nodes than rank": func(j *score.Job) { j.NNodes = 33 },
	} {
		j := d25Job()
		edit(j)
		_, err := score.Compute(j)
		assert.Error(t, err, name)
	}
}

// dumpsOf writes j's dumps as a job would: each rank its node, its
// NICs, the ring from itself, and its node's location, its record's
// hashes with the name; each node's head is its lowest rank.
func dumpsOf(j *score.Job) []ringdump.File {
	var files []ringdump.File
	var heads []int
	for m := range j.NNodes {
		heads = append(heads, slices.Index(j.Node, m))
	}
	for r := range j.NRanks {
		d := &ringdump.Dump{Format: 1, Rank: r, NRanks: j.NRanks, ResultName: "ncclSuccess", Host: j.Host[j.Node[r]],
			Wiring: &ringdump.Wiring{NNodes: j.NNodes, Node: j.Node[r], NChannels: len(j.Rings), GraphChannels: len(j.Rings),
				NodesFirstRank: heads, Order: recordOrder(j.Location[j.Node[r]])}}
		for c, ring := range j.Rings {
			d.Channels = append(d.Channels, ringdump.Channel{Channel: c, UserRanks: ring})
			d.SetNetDev(c, j.NetDev[c*j.NRanks+r])
		}
		files = append(files, ringdump.File{Path: "rank", Dump: d})
	}
	return files
}

// recordOrder is the order of a dump whose record carried location (its
// hashes computed here, fnv1a) and whose name was known.
func recordOrder(location string) *ringdump.Order {
	o := &ringdump.Order{Asked: "rank", Location: location, FromRecord: true}
	if location != "" {
		for _, name := range strings.Split(location, "/") {
			o.LocationHashes = append(o.LocationHashes, fnv1a(name))
		}
	}
	return o
}

// fnv1a is 32-bit FNV-1a, written out here to check the tools' hashes.
func fnv1a(s string) uint32 {
	h := uint32(0x811c9dc5)
	for _, c := range []byte(s) {
		h = (h ^ uint32(c)) * 0x01000193
	}
	return h
}

// The placement of FromDumps is D28's: the value most of a node's ranks
// carry, "no location" a value too; ties to the head's value when it is
// among them, else to the tied value the lowest rank carries.
func TestFromDumps(t *testing.T) {
	want := d25Job()
	files := dumpsOf(want)
	want.GraphChannels = 2
	want.Heads = []int{0, 4, 8, 12, 16, 20, 24, 28}
	want.Names = []string{"spine0/leafA", "spine0/leafB"}
	want.RankLocation = nil
	for r := range want.NRanks {
		files[r].Dump.Order.Location = want.Location[want.Node[r]]
	}
	// One rank of node 2 (ranks 8-11, leafA) says leafB: outvoted.
	files[9].Dump.Order = recordOrder("spine0/leafB")
	j, err := score.FromDumps(files)
	require.NoError(t, err)
	require.Len(t, j.RankLocation, 32)
	assert.Equal(t, fnv1a("leafB"), j.RankLocation[9].Hash[1])
	j.RankLocation = nil
	require.Len(t, j.Views, 32)
	for r, d := range j.Views {
		assert.Same(t, files[r].Dump, d, "rank %d's own dump", r)
	}
	j.Views = nil
	assert.Equal(t, want, j)

	// Node 2's vote (ranks 8-11): each row gives their orders (nil: no
	// order at all, no location either) and the node's head rank.
	at := func(leaf string) *ringdump.Order {
		if leaf == "" {
			return recordOrder("")
		}
		return recordOrder("spine0/" + leaf)
	}
	for _, c := range []struct {
		why    string
		orders [4]*ringdump.Order
		head   int
		want   string
	}{
		{"none 2 (one rank with no order at all), leafA and leafB 1 each: none, as Postset places it",
			[4]*ringdump.Order{at("leafA"), at("leafB"), at(""), nil}, 8, ""},
		{"leafB 2, none 2: the head's, leafB", [4]*ringdump.Order{at("leafB"), at("leafB"), at(""), nil}, 8, "spine0/leafB"},
		{"leafB 2, none 2: the head's, none", [4]*ringdump.Order{at("leafB"), at("leafB"), at(""), nil}, 10, ""},
		{"each once: the head's, none", [4]*ringdump.Order{at("leafB"), at("leafC"), at("leafA"), nil}, 11, ""},
		{"leafB 2 of 4 wins", [4]*ringdump.Order{at("leafB"), at("leafC"), at("leafA"), at("leafB")}, 11, "spine0/leafB"},
		{"leafA 2 wins", [4]*ringdump.Order{at("leafB"), at("leafC"), at("leafA"), at("leafA")}, 11, "spine0/leafA"},
		{"each once: the head's (none) wins, though leafB's rank is lower", [4]*ringdump.Order{at("leafB"), at("leafC"), at("leafA"), at("")}, 11, ""},
		{"leafC and leafA tie: the head's, leafA, though rank 8 is lower", [4]*ringdump.Order{at("leafC"), at("leafA"), at("leafC"), at("leafA")}, 9, "spine0/leafA"},
	} {
		for i, o := range c.orders {
			files[8+i].Dump.Order = o
		}
		for _, f := range files {
			f.Dump.NodesFirstRank = []int{0, 4, c.head, 12, 16, 20, 24, 28}
		}
		j, err = score.FromDumps(files)
		require.NoError(t, err)
		assert.Equal(t, c.want, j.Location[2], c.why)
	}

	// The hashes place a rank; a name that is not theirs is not shown.
	// Node 2's ranks all carry a location whose name no dump gives: it is
	// shown as its hashes.
	for r := 8; r < 12; r++ {
		files[r].Dump.Order = &ringdump.Order{Asked: "rank", FromRecord: true, NameUnknown: true,
			LocationHashes: []uint32{fnv1a("spine9"), fnv1a("leafZ")}}
	}
	files[9].Dump.Order.Location = "spine0/leafA" // not its hashes': ignored
	j, err = score.FromDumps(files)
	require.NoError(t, err)
	assert.Equal(t, fmt.Sprintf("#%08x/#%08x", fnv1a("spine9"), fnv1a("leafZ")), j.Location[2])
	s, err := score.Compute(j)
	require.NoError(t, err)
	assert.Equal(t, 2, s.Channels[0].Levels[0].Groups, "spine0 and spine9")
	assert.Equal(t, 3, s.Channels[0].Levels[1].Groups, "leafA, leafB under spine0 and leafZ under spine9")

	missing := j.SetLocations([]location.Entry{{Host: "A.ec2.internal", Location: "x/1"}, {Host: "c", Location: "x/2"}})
	assert.Equal(t, []int{1, 3, 4, 5, 6, 7}, missing)
	assert.Equal(t, []string{"x/1", "", "x/2", "", "", "", "", ""}, j.Location)
	assert.Nil(t, j.RankLocation, "every rank carries its host's")

	_, err = score.FromDumps(append(files[:5:5], files[6:]...))
	assert.EqualError(t, err, "rank 5 has no dump (of 32 ranks)")
	files[7].Dump.Wiring, files[7].Dump.ResultName = nil, "ncclInvalidArgument"
	_, err = score.FromDumps(files)
	assert.EqualError(t, err, `rank 7's ncclTopoPostset failed ("ncclInvalidArgument"): no rings to score`)
}

func TestSpans(t *testing.T) {
	for want, v := range map[string][]int{
		"":          nil,
		"4":         {4},
		"0-3 5 7-8": {0, 1, 2, 3, 5, 7, 8},
		"1 3 5":     {1, 3, 5},
		"0-1 10-12": {0, 1, 10, 11, 12},
	} {
		assert.Equal(t, want, score.Spans(v), "%v", v)
	}
}

func TestGroupNICShares(t *testing.T) {
	two := []score.NICShare{{Dev: 0, Channels: 8}, {Dev: 1, Channels: 1}}
	got := score.GroupNICShares([][]score.NICShare{two, nil, two, {{Dev: 3, Channels: 2}}})
	assert.Equal(t, []score.NICGroup{
		{Shares: "NIC index 0: 8 channels, NIC index 1: 1 channel", Nodes: []int{0, 2}},
		{Shares: "none", Nodes: []int{1}},
		{Shares: "NIC index 3: 2 channels", Nodes: []int{3}},
	}, got)
}
