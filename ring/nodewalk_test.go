package ring_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/nccomring/libnccomring/abi"
	"github.com/nccomring/libnccomring/ring"
)

// The node walk's four-channel loop (nodewalk.go): the assembly against
// the generic Go, step for step, on the bench's fragments as Preset makes
// them and with one field of one rank corrupted. Both must give the same
// answer, write the same rows (also when they stop early) and leave the
// same next ranks.
func TestQuadStepsAssemblyMatchesGeneric(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 13))
	const nRanks = 128
	clean := benchCluster(t, nRanks)
	frags := make([]abi.TopoRanks, nRanks)
	passed, failed := 0, 0
	for iter := range 4000 {
		copy(frags, clean)
		node := rng.IntN(nRanks / benchLocal)
		c := 4 * rng.IntN(benchChannels/4)
		head := &frags[node*benchLocal]
		head0 := head.RingRecv[0]
		recv, send := [4]int32(head.RingRecv[c:c+4]), [4]int32(head.RingSend[c:c+4])
		if iter%2 == 1 { // one field of one rank of the node, or of any rank
			who := node*benchLocal + rng.IntN(benchLocal)
			if rng.IntN(8) == 0 {
				who = rng.IntN(nRanks)
			}
			v := int32(rng.IntN(nRanks+4)) - 2
			if rng.IntN(8) == 0 {
				v = int32(rng.Uint32())
			}
			ringField(&frags[who], rng.IntN(4))[c+rng.IntN(4)] = v
		}
		// As walkIntraQuad leaves them: each row's head, and its next.
		const row = nRanks + 7
		var next [4]int32
		outs := [2][]int32{make([]int32, 4*row), make([]int32, 4*row)}
		for i, h := range recv {
			for _, out := range outs {
				out[i*row] = h
			}
			next[i] = frags[h].RingNext[c+i]
		}
		left := rng.IntN(benchLocal) // a clean run has steps to the tail
		if iter%2 == 1 {
			left = rng.IntN(benchLocal + 2) // and past it
		}
		nexts := [2][4]int32{next, next}
		var oks [2]bool
		for k, generic := range []bool{false, true} {
			oks[k] = ring.QuadSteps(generic, frags, c, outs[k], row, left, &nexts[k], head0, recv, send)
		}
		name := fmt.Sprintf("iter %d, node %d, channels %d..%d, %d steps", iter, node, c, c+3, left)
		if oks[0] != oks[1] || !slices.Equal(outs[0], outs[1]) || (oks[0] && nexts[0] != nexts[1]) {
			t.Fatalf("%s: assembly %v %v, generic %v %v", name, oks[0], nexts[0], oks[1], nexts[1])
		}
		if oks[0] {
			passed++
		} else {
			failed++
		}
		// A clean node's run: the rows hold its ranks in ring order.
		if iter%2 == 0 {
			if !oks[0] {
				t.Fatalf("%s: a clean run failed", name)
			}
			for i := range 4 {
				for j := 1; j <= left; j++ {
					if want := frags[outs[0][i*row+j-1]].RingNext[c+i]; outs[0][i*row+j] != want {
						t.Fatalf("%s: channel %d step %d is rank %d, want %d", name, c+i, j, outs[0][i*row+j], want)
					}
				}
			}
		}
	}
	t.Logf("%d runs passed, %d stopped at a check", passed, failed)
	if failed < 500 {
		t.Fatalf("only %d of the corrupted runs stopped: the corruptions do not reach the checks", failed)
	}
}

// membersCluster is the fragments Preset makes for nodes of the given
// members (global ranks), channels channels each, channel c running a
// node's members rotated by c.
func membersCluster(t *testing.T, members [][]int, channels int) []abi.TopoRanks {
	t.Helper()
	frags, _ := orderCluster(t, members, channels, func(c, i, l int) int { return (i + c) % l })
	return frags
}

// TestPostsetNodeWalkBlocksAreD8Nodes: ranks that look numbered node-major
// (ranks 0..3 one node, each block's first rank's head in its block) but
// are not: the node with head 12 has rank 5, so D8's order (by first
// appearance) is the nodes of heads 0, 4, 12, 8, not the blocks' 0, 4, 8,
// 12. The fast path must give the exact path's rings and nodesFirstRank.
func TestPostsetNodeWalkBlocksAreD8Nodes(t *testing.T) {
	members := [][]int{{0, 1, 2, 3}, {4, 6, 7, 13}, {8, 9, 10, 11}, {12, 5, 14, 15}}
	frags := membersCluster(t, members, 8)
	all := make([]*abi.TopoRanks, len(frags))
	for r := range frags {
		all[r] = &frags[r]
	}
	for _, rank := range []int{0, 5, 8, 13} {
		comm := abi.Comm{Rank: int32(rank), NRanks: int32(len(frags)), NChannels: 8}
		requireSamePaths(t, &comm, all, generic)
		heads := make([]int32, len(frags))
		if _, err := ring.Postset(&comm, heads, all, ring.PostsetOptions{Platforms: generic, Alloc: newGoAlloc(), PodOrder: podNode}); err != nil {
			t.Fatal(err)
		}
		if want := []int32{0, 4, 12, 8}; !slices.Equal(heads[:4], want) {
			t.Fatalf("rank %d: nodesFirstRank %v, want %v", rank, heads[:4], want)
		}
	}
}

// commitRing, Postset's copy of a ring into a channel's userRanks and its
// doubled channel's: the ring rotated to start at position at, in both,
// at lengths either side of its chunk, at every alignment of the
// destinations, with the ints around them untouched.
func TestCommitRingRotates(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	for _, n := range []int{1, 5, 17, 4095, 4096, 4097, 16383, 16384, 16385, 20000} {
		src := make([]int32, n)
		for i := range src {
			src[i] = int32(rng.Uint32())
		}
		for _, at := range []int{0, 1, n / 2, n - 1, rng.IntN(n)} {
			requireRotatedCommit(t, src, at, func(first, double []int32) { ring.CommitRing(first, double, src, at) })
		}
	}
}

// requireRotatedCommit checks a commit of the ring ranks from position at
// into a channel's userRanks (first) and its doubled channel's (double) at
// every alignment of the destinations, also with no doubled channel
// (nChannels > 16): each destination holds the ring rotated to start at
// at, and the ints around them are untouched.
func requireRotatedCommit(t *testing.T, ranks []int32, at int, commit func(first, double []int32)) {
	t.Helper()
	n := len(ranks)
	want := append(slices.Clone(ranks[at:]), ranks[:at]...)
	for off := range 4 {
		var bufs [2][]int32
		for k := range bufs {
			bufs[k] = slices.Repeat([]int32{-7}, n+off+3)
		}
		double := bufs[1][off : off+n]
		if off == 3 {
			double = nil
		}
		commit(bufs[0][off:off+n], double)
		for k, buf := range bufs {
			w := want
			if k == 1 && double == nil {
				w = slices.Repeat([]int32{-7}, n)
			}
			if !slices.Equal(buf[off:off+n], w) {
				t.Fatalf("n %d, at %d, offset %d: destination %d is not the ring from at", n, at, off, k)
			}
			for i, v := range buf {
				if (i < off || i >= off+n) && v != -7 {
					t.Fatalf("n %d, at %d, offset %d: int %d outside destination %d is %d", n, at, off, i, k, v)
				}
			}
		}
	}
}
