package ring_test

import (
	"fmt"
	"math/rand/v2"
	"regexp"
	"runtime"
	"sort"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nccomring/libnccomring/abi"
	"github.com/nccomring/libnccomring/internal/fuzzseed"
	"github.com/nccomring/libnccomring/layout"
	"github.com/nccomring/libnccomring/ring"
)

// Issue 8: one AllGather, one verdict (D23, D24). Every rank calls Postset
// on the same gathered fragments; the tests below call it for every rank
// and require one result, one WARN text, one channel count and one set of
// rings.

// Input 1: 2x4, one channel, identity order; rank 2's fragment says
// ringPrev[0] = 0 (its predecessor is 1).
func TestWrongPrevOfOneRankFailsEveryRankNamingIt(t *testing.T) {
	j := gatherCluster(t, newCluster(4, 4).channel(0, []int{0, 1, 2, 3}, 0, 0).channels(1))
	j.fragments[2].RingPrev[0] = 0
	v := oneVerdict(t, postsetEveryRank(t, j))
	requireNamesRank(t, v, 2)
	assert.Equal(t, "ncclTopoPostset: rank 2, channel 0: ringPrev is 0 but rank 0's ringNext is 1", v.text)
}

// Input 2: 2 nodes x 5 ranks, channel 0 order [0 1 4 2 3] except on rank
// 2, whose own graph says [0 4 1 2 3]: same head, tail and next, only its
// prev differs.
func TestRankWithItsOwnGraphFailsEveryRankNamingIt(t *testing.T) {
	cl := newCluster(5, 5).channel(0, []int{0, 1, 4, 2, 3}, 0, 0).channels(1)
	odd := &abi.TopoGraph{Pattern: 4, NChannels: 1}
	copy(odd.Intra[:], []int32{0, 4, 1, 2, 3})
	j := gather(t, 10, func(int) int { return 5 }, func(r int) *abi.TopoGraph {
		if r == 2 {
			return odd
		}
		return cl.graphs[cl.nodeOf(r)]
	}, 0)
	v := oneVerdict(t, postsetEveryRank(t, j))
	requireNamesRank(t, v, 2)
	assert.Equal(t, "ncclTopoPostset: rank 2, channel 0: ringPrev is 1 but rank 1's ringNext is 4", v.text)
}

// Input 3: 2x8, channel 0 order [0 7 6 5 4 3 2 1]; the AllGather delivers
// rank 0's fragment in rank 9's slot.
func TestFragmentInTheWrongSlotFailsEveryRankNamingTheSlot(t *testing.T) {
	j := gatherCluster(t, newCluster(8, 8).channel(0, []int{0, 7, 6, 5, 4, 3, 2, 1}, 0, 0).channels(1))
	j.fragments[9] = j.fragments[0]
	v := oneVerdict(t, postsetEveryRank(t, j))
	requireNamesRank(t, v, 9)
}

// Input 4: 1x4; ranks 0-2 hold a 14-channel graph (odd channels reversed),
// rank 3 a 12-channel one (its first 12 channels). D23: every rank uses 12
// channels, doubled to 24, whatever the AllGather buffer held before Preset.
func TestDifferentChannelCountsAgreeOnTheSmallest(t *testing.T) {
	g14, g12 := alternatingGraph(14), alternatingGraph(12)
	for _, fill := range []byte{0x00, 0xA5} {
		t.Run(fmt.Sprintf("buffer 0x%02X", fill), func(t *testing.T) {
			j := gather(t, 4, func(int) int { return 4 }, func(r int) *abi.TopoGraph {
				if r == 3 {
					return g12
				}
				return g14
			}, fill)
			requireAlternatingRings(t, oneVerdict(t, postsetEveryRank(t, j)), 12)
		})
	}
}

// requireAlternatingRings checks a verdict on alternatingGraph's job: a
// success with n channels doubled, channel c running graph channel c mod n.
func requireAlternatingRings(t *testing.T, v outcome, n int) {
	t.Helper()
	require.Equal(t, abi.Success, v.code, v.text)
	require.Equal(t, 2*n, v.nChannels)
	for c, ring := range v.rings {
		want := ints(0, 1, 2, 3)
		if c%n%2 == 1 {
			want = ints(0, 3, 2, 1)
		}
		assert.Equal(t, want, ring, "channel %d", c)
	}
}

// alternatingGraph is one node of 4 ranks with n channels: 0 1 2 3 on
// even channels, 0 3 2 1 on odd ones.
func alternatingGraph(n int) *abi.TopoGraph {
	g := &abi.TopoGraph{Pattern: 4, NChannels: int32(n)}
	for c := range n {
		order := []int32{0, 1, 2, 3}
		if c%2 == 1 {
			order = []int32{0, 3, 2, 1}
		}
		copy(g.Intra[c*4:], order)
	}
	return g
}

// D27: only the fragments count. Input 4's job, where ranks 0-2 are told
// by one WARN that their own graphs have more channels than the job's;
// then the same job with rank 3's slot stale in channels 12 and 13 (what
// an earlier 14-channel AllGather of this job left there, as a Preset that
// does not mark the channels it lacks leaves them): every fragment says 14,
// but rank 3's record says its graph has 12, so its fragment is not what
// its Preset wrote (D28): ncclInternalError on every rank, naming it,
// whatever each rank's comm->nChannels.
func TestOnlyTheFragmentsCountChannels(t *testing.T) {
	g14, g12 := alternatingGraph(14), alternatingGraph(12)
	j := gather(t, 4, func(int) int { return 4 }, func(r int) *abi.TopoGraph {
		if r == 3 {
			return g12
		}
		return g14
	}, 0)
	all := []*abi.TopoRanks{&j.fragments[0], &j.fragments[1], &j.fragments[2], &j.fragments[3]}
	alloc := newGoAlloc()
	defer runtime.KeepAlive(alloc)
	opt := ring.PostsetOptions{Platforms: generic, Alloc: alloc}
	own14 := "ncclTopoPostset: this rank's graph has 14 channels (comm->nChannels), the job 12 (the smallest channel count of any fragment, first held by rank 3): give its ncclTopoGetNetDev a graph of 12 channels, or its channels use the NICs of another graph channel (D27, D28)"
	for r, want := range []string{own14, own14, own14, ""} {
		comm := *j.comms[r]
		res, err := ring.Postset(&comm, make([]int32, 4), all, opt)
		require.NoError(t, err, "rank %d", r)
		assert.Equal(t, 12, res.GraphChannels, "rank %d", r)
		assert.Equal(t, want, res.OwnChannelsWarning(), "rank %d", r)
	}

	for k, fields := range [2][4]int32{{0, 3, 2, -1}, {0, 1, 0, 2}} { // rank 3 in 0 1 2 3 and in 0 3 2 1
		f := &j.fragments[3]
		f.RingRecv[12+k], f.RingSend[12+k], f.RingPrev[12+k], f.RingNext[12+k] = fields[0], fields[1], fields[2], fields[3]
	}
	for r, stale := range []int32{0, 28, 14, 12} {
		j.comms[r].NChannels = stale
	}
	v := oneVerdict(t, postsetEveryRank(t, j))
	assert.Equal(t, abi.InternalError, v.code)
	assert.Equal(t, "ncclTopoPostset: rank 3's fragment has 14 channels, but its record says its graph has 12: the fragment is not what its ncclTopoPreset wrote (D28)", v.text)
}

// Input 5: 8x8, rank 52's fragment says prev 53 and next 54 on channel 0.
func TestTwoWrongLinksOfOneRankNameIt(t *testing.T) {
	local := make([]int, 8)
	for i := range local {
		local[i] = 8
	}
	j := gatherCluster(t, newCluster(local...).channel(0, seq(0, 8), 0, 0).channels(1))
	j.fragments[52].RingPrev[0], j.fragments[52].RingNext[0] = 53, 54
	v := oneVerdict(t, postsetEveryRank(t, j))
	requireNamesRank(t, v, 52)
	assert.Equal(t, "ncclTopoPostset: rank 52, channel 0: ringNext is 54 but rank 54's ringPrev is 53; rank 53 is reached by nobody", v.text)
}

// Input 6: rank 0 carries the walk of each failing ring, as upstream
// prints it before its WARN; the other ranks carry none.
func TestRankZeroShowsTheFailingRingsWalk(t *testing.T) {
	cl := newCluster(4, 4)
	cl.channel(0, []int{0, 1, 2, 3}, 0, 0).channel(1, []int{0, 1, 2, 3}, 0, 0).channels(2)
	j := gatherCluster(t, cl)
	j.fragments[5].RingNext[1] = 4 // channel 1: 4 -> 5 -> 4 ...
	out := postsetEveryRank(t, j)
	oneVerdict(t, out)
	require.Equal(t, []string{"Channel 01/02 :    0   1   2   3   4   5   4   5"}, out[0].walks)
	for r := 1; r < len(out); r++ {
		assert.Empty(t, out[r].walks, "rank %d", r)
	}
}

func TestLongWalkIsCutAfter64Ranks(t *testing.T) {
	j := gatherCluster(t, newCluster(100).channel(0, seq(0, 100), 0, 0).channels(1))
	j.fragments[99].RingPrev[0] = 97 // 98's ringNext is 99: prev mismatch, the ring itself is whole
	out := postsetEveryRank(t, j)
	require.Len(t, out[0].walks, 1)
	want := "Channel 00/01 : "
	for r := range 64 {
		want += fmt.Sprintf(" %3d", r)
	}
	assert.Equal(t, want+" ... (36 more)", out[0].walks[0])
}

// The walk is cut after 64 ranks even when the 65th is rank 0 again:
// rank 63's ringNext 0 closes 0..63 on itself in a node of 100.
func TestWalkCutWhereItComesBackToRankZero(t *testing.T) {
	j := gatherCluster(t, newCluster(100).channel(0, seq(0, 100), 0, 0).channels(1))
	j.fragments[63].RingNext[0] = 0
	out := postsetEveryRank(t, j)
	v := oneVerdict(t, out)
	assert.Equal(t, "ncclTopoPostset: rank 63, channel 0: ringNext is 0, its node's head", v.text)
	want := "Channel 00/01 : "
	for r := range 64 {
		want += fmt.Sprintf(" %3d", r)
	}
	assert.Equal(t, []string{want + " ... (36 more)"}, out[0].walks)
}

func TestFragmentWithNoChannelIsAnInternalError(t *testing.T) {
	j := gatherCluster(t, newCluster(2, 2).channel(0, []int{0, 1}, 0, 0).channels(1))
	j.fragments[3].RingRecv[0] = -1
	v := oneVerdict(t, postsetEveryRank(t, j))
	assert.Equal(t, abi.InternalError, v.code)
	assert.Equal(t, "ncclTopoPostset: rank 3: ringRecv[0] is -1, so its fragment has no channel", v.text)
}

func TestPresetMarksChannelsItDoesNotHave(t *testing.T) {
	j := gatherCluster(t, newCluster(2).channel(0, []int{0, 1}, 0, 0).channel(1, []int{1, 0}, 0, 0).channels(2))
	f := &j.fragments[0]
	assert.EqualValues(t, []int32{0, 1, -1, -1}, f.RingRecv[:4])
	for c := 2; c < layout.MaxChannels; c++ {
		require.EqualValues(t, -1, f.RingRecv[c])
		require.EqualValues(t, -1, f.RingSend[c])
		require.EqualValues(t, -1, f.RingPrev[c])
		require.EqualValues(t, -1, f.RingNext[c])
	}
}

// corruption is one change to gathered fragments: a ring field (field 0-3:
// ringRecv, ringSend, ringPrev, ringNext) of rank r on channel c set to
// value, or slot r given slot from's fragment (duplicate), or slots r and
// from swapped.
type corruption struct {
	kind         string
	field        int
	r, c, from   int
	value        int32
	corruptRanks []int
}

func (x corruption) apply(j *job) {
	switch x.kind {
	case "duplicate":
		j.fragments[x.r] = j.fragments[x.from]
	case "swap":
		j.fragments[x.r], j.fragments[x.from] = j.fragments[x.from], j.fragments[x.r]
	default:
		ringField(&j.fragments[x.r], x.field)[x.c] = x.value
	}
}

// harmless is the model of which corruptions a job survives, from the
// uncorrupted fragments: a change that changes nothing; the ringPrev of a
// channel's head or the ringNext of its tail, which the stitch replaces
// (D9), to any value in range (P9). (A ringRecv of channel c >= 1 set
// below zero says the fragment has c channels, which its record denies:
// not what its Preset wrote, D28.) It returns whether the job survives and
// the channel count it then has.
func (x corruption) harmless(frags []abi.TopoRanks, n int) (bool, int) {
	nRanks := int32(len(frags))
	f := &frags[x.r]
	inRange := x.value >= -1 && x.value < nRanks
	switch {
	case x.kind == "duplicate" || x.kind == "swap":
		return frags[x.r] == frags[x.from], n
	case ringField(f, x.field)[x.c] == x.value:
		return true, n
	case x.field == 2 && f.RingRecv[x.c] == int32(x.r), x.field == 3 && f.RingSend[x.c] == int32(x.r):
		return inRange, n
	}
	return false, n
}

// randomCorruption picks one field of one rank and channel (in range,
// out of range or -1), or a fragment duplicated into another slot, or two
// slots swapped.
func randomCorruption(rng *rand.Rand, nRanks, nChannels int) corruption {
	r, c := rng.IntN(nRanks), rng.IntN(nChannels)
	value := func() int32 {
		switch rng.IntN(8) {
		case 0:
			return -1
		case 1:
			return int32(nRanks + rng.IntN(3))
		default:
			return int32(rng.IntN(nRanks))
		}
	}
	switch k := rng.IntN(6); k {
	case 0, 1, 2, 3:
		field := [...]string{"ringRecv", "ringSend", "ringPrev", "ringNext"}[k]
		return corruption{kind: field, field: k, r: r, c: c, value: value(), corruptRanks: []int{r}}
	case 4:
		return corruption{kind: "duplicate", r: r, from: rng.IntN(nRanks), corruptRanks: []int{r}}
	default:
		s := rng.IntN(nRanks)
		return corruption{kind: "swap", r: r, from: s, corruptRanks: []int{r, s}}
	}
}

// TestSingleCorruptionsGiveOneVerdict is the cross-rank property in Go:
// random clusters, one random corruption each, Postset on every rank.
// Every rank must agree; the job must fail exactly when the corruption is
// not harmless (the model above), and then the WARN must name a corrupted
// rank in at least 99% of the clusters (docs/errors.md "What cannot be
// attributed"); when it survives, the rings are exactly the uncorrupted
// job's (channel c being graph channel c mod the count it has). With
// -short (make mutate runs every mutant's tests so), the first 600 of the
// 3000 clusters, with the same bounds in proportion.
func TestSingleCorruptionsGiveOneVerdict(t *testing.T) {
	trials := 3000
	if testing.Short() {
		trials = 600
	}
	rng := rand.New(rand.NewPCG(8, 24))
	failed, named, survived := 0, 0, 0
	missed := map[string]int{}
	for trial := range trials {
		nNodes, local, nChannels := 1+rng.IntN(5), 1+rng.IntN(7), 1+rng.IntN(6)
		sizes := make([]int, nNodes)
		for i := range sizes {
			sizes[i] = local
		}
		cl := newCluster(sizes...)
		for c := range nChannels {
			cl.channel(c, rng.Perm(local), 0, 0)
		}
		j := gatherCluster(t, cl.channels(nChannels))
		clean := oneVerdict(t, postsetEveryRank(t, j))
		require.Equal(t, abi.Success, clean.code, clean.text)
		bad := randomCorruption(rng, cl.nRanks, nChannels)
		harmless, count := bad.harmless(j.fragments, nChannels)
		bad.apply(j)
		v := oneVerdict(t, postsetEveryRank(t, j))
		label := fmt.Sprintf("trial %d (%dx%d, %d ch) %+v", trial, nNodes, local, nChannels, bad)
		if v.code == abi.Success {
			require.True(t, harmless, "%s: accepted, but the model says it must fail", label)
			survived++
			require.Equal(t, min(2*count, 32), v.nChannels, label)
			require.Equal(t, clean.nNodes, v.nNodes, label)
			for c, ring := range v.rings {
				require.Equal(t, clean.rings[c%count], ring, "%s: channel %d", label, c)
			}
			continue
		}
		require.False(t, harmless, "%s: failed, but the model says it is harmless: %s", label, v.text)
		failed++
		hit := false
		for _, r := range bad.corruptRanks {
			hit = hit || namedRank(v.text) == r
		}
		if hit {
			named++
		} else {
			missed[bad.kind]++
			if testing.Verbose() {
				t.Logf("%s: %s", label, v.text)
			}
		}
	}
	rate := float64(named) / float64(failed)
	kinds := make([]string, 0, len(missed))
	for k := range missed {
		kinds = append(kinds, fmt.Sprintf("%s %d", k, missed[k]))
	}
	sort.Strings(kinds)
	t.Logf("%d of %d failing clusters name the corrupted rank (%.1f%%); missed: %v; %d survived", named, failed, 100*rate, kinds, survived)
	require.Greater(t, failed, trials/3)
	require.Greater(t, survived, trials/30)
	require.GreaterOrEqual(t, rate, 0.99)
}

// FuzzPostsetEveryRank fuzzes the cross-rank property: a decoded cluster
// (fuzzCluster), up to three corruptions of the gathered fragments (any
// ring field of any rank and channel, in or out of range; a fragment
// duplicated into another slot; two slots swapped), then Postset on every
// rank: one verdict (D24), and on failure a WARN that names a rank in range.
func FuzzPostsetEveryRank(f *testing.F) {
	c := fuzzseed.New(f)
	for _, seed := range [][]byte{
		{1, 3, 1, 0, 1, 2, 0, 0, 0, 0, 1, 3, 2, 1, 0, 1},       // one node, a wrong prev
		{2, 4, 2, 9, 9, 9, 9, 9, 9, 9, 9, 2, 4, 6, 2, 1, 1, 0}, // two nodes, a duplicated slot
		{3, 2, 3, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 3, 0, 2, 1, 2, 7},
	} {
		c.Add(seed)
	}
	c.Fuzz(func(t *testing.T, data []byte) {
		r := &reader{data}
		cl := fuzzCluster(r)
		j := gatherCluster(t, cl)
		n := cl.nRanks
		for range r.in(0, 3) {
			kind, who, c, v := r.byte()%6, r.byte()%n, r.byte()%32, int32(r.byte()%(n+4))-2
			f := &j.fragments[who]
			switch kind {
			case 0, 1, 2, 3:
				ringField(f, int(kind))[c] = v
			case 4:
				*f = j.fragments[int(v+2)%n]
			case 5:
				other := int(v+2) % n
				j.fragments[who], j.fragments[other] = j.fragments[other], j.fragments[who]
			}
		}
		v := oneVerdict(t, postsetEveryRank(t, j))
		if v.code == abi.InternalError {
			if s := namedRank(v.text); s < 0 || s >= n {
				if !regexp.MustCompile(`^ncclTopoPostset: (comm|kangaRing)`).MatchString(v.text) {
					t.Fatalf("the WARN names no rank of the job: %s", v.text)
				}
			}
		}
	})
}
