package ring_test

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/nccomring/libnccomring/abi"
	"github.com/nccomring/libnccomring/ring"
)

// The delta form (deltas.go) by hand: position q holds its rank minus q.
func TestDeltasByHand(t *testing.T) {
	for _, generic := range []bool{false, true} {
		// Node 1 of 4 ranks at positions 4..7, holding 7, 4, 6, 5.
		dst := make([]int8, 4)
		ring.EncodeDeltas(generic, dst, 4, []int32{7, 4, 6, 5}, 1, 4, 4)
		if want := []int8{3, -1, 0, -2}; !slices.Equal(dst, want) {
			t.Fatalf("generic %v: encoded %v, want %v", generic, dst, want)
		}
		// Beyond an int8, saturated: 300-0 and 0-200 (from position 200).
		sat := make([]int8, 2)
		ring.EncodeDeltas(generic, sat, 1, []int32{300, 0}, 2, 1, 200)
		if want := []int8{100, -128}; !slices.Equal(sat, want) {
			t.Fatalf("generic %v: saturated %v, want %v", generic, sat, want)
		}
		first, double := make([]int32, 4), make([]int32, 4)
		ring.DecodeDeltas(generic, first, double, []int8{3, -1, 0, -2}, 4)
		if want := []int32{7, 4, 6, 5}; !slices.Equal(first, want) || !slices.Equal(double, want) {
			t.Fatalf("generic %v: decoded %v and %v, want %v", generic, first, double, want)
		}
	}
}

// The assembly kernels against the generic Go, on every length from 0 to
// 70 (the 16-wide loop and every tail), rows at odd strides, values in
// range and out of it (saturated alike), and positions near the int32
// edges; and a ring's deltas decode to its ranks.
func TestDeltaKernelsMatchGeneric(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 3))
	for iter := range 3000 {
		count, rows := rng.IntN(71), 1+rng.IntN(5)
		dstRow := count + rng.IntN(9)
		q0 := int32(rng.IntN(1 << 20))
		if iter%10 == 0 {
			q0 = int32(rng.Uint32() >> 1)
		}
		spread := []int32{127, 200, 1 << 30}[iter%3]
		src := make([]int32, rows*count)
		for i := range src {
			q := q0 + int32(i%max(count, 1))
			src[i] = q + int32(rng.Int64N(2*int64(spread)+1)) - spread
		}
		var enc [2][]int8
		for k, generic := range []bool{false, true} {
			enc[k] = make([]int8, rows*dstRow+3)
			for i := range enc[k] {
				enc[k][i] = 99
			}
			ring.EncodeDeltas(generic, enc[k], dstRow, src, rows, count, q0)
		}
		if !slices.Equal(enc[0], enc[1]) {
			t.Fatalf("iter %d (%d rows of %d, stride %d, q0 %d): encodings differ:\n%v\n%v", iter, rows, count, dstRow, q0, enc[0], enc[1])
		}
		for i := range rows {
			for k := count; k < dstRow; k++ {
				if enc[0][i*dstRow+k] != 99 {
					t.Fatalf("iter %d: byte %d past row %d written", iter, k, i)
				}
			}
		}
		for i := range rows {
			row := enc[0][i*dstRow : i*dstRow+count]
			var dec [2][2][]int32
			for k, generic := range []bool{false, true} {
				dec[k] = [2][]int32{make([]int32, count+2), make([]int32, count+2)}
				ring.DecodeDeltas(generic, dec[k][0], dec[k][1], row, q0)
			}
			if !slices.Equal(dec[0][0], dec[1][0]) || !slices.Equal(dec[0][1], dec[0][0]) || !slices.Equal(dec[1][1], dec[1][0]) {
				t.Fatalf("iter %d, row %d: decodings differ", iter, i)
			}
			if spread == 127 && !slices.Equal(dec[0][0][:count], src[i*count:(i+1)*count]) {
				t.Fatalf("iter %d, row %d: decoded %v, want %v", iter, i, dec[0][0][:count], src[i*count:(i+1)*count])
			}
		}
	}
}

// A ring kept as deltas committed into userRanks: rotated to start at
// position at, in both destinations, the ints around them untouched, as
// commitRing does for a ring of ints.
func TestCommitDeltasRotates(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	for _, n := range []int{1, 5, 16, 17, 31, 4096, 20001} {
		ranks, deltas := make([]int32, n), make([]int8, n)
		for q := range n {
			d := rng.IntN(255) - 127
			if q+d < 0 || q+d >= n {
				d = 0
			}
			ranks[q], deltas[q] = int32(q+d), int8(d)
		}
		for _, at := range []int{0, 1, n / 2, n - 1, rng.IntN(n)} {
			requireRotatedCommit(t, ranks, at, func(first, double []int32) { ring.CommitDeltas(first, double, deltas, at) })
		}
	}
}

// Nodes of 128 ranks are the largest kept as deltas: a ring that runs a
// node backwards puts rank m*128+127 at position m*128 (+127) and rank
// m*128 at position m*128+127 (-127). Nodes of 129 keep their rings as
// ints, also with the bound set higher (a difference of +128 would not fit
// an int8). Either way the outputs are the exact path's, on every rank
// probed, also with one field of one rank corrupted.
func TestPostsetDeltaRingsAtTheirBound(t *testing.T) {
	rng := rand.New(rand.NewPCG(17, 4))
	defer ring.SetDeltaMaxRanks(ring.SetDeltaMaxRanks(1 << 20))
	for _, l := range []int{128, 129} {
		const nNodes, channels = 3, 6
		members := make([][]int, nNodes)
		for m := range members {
			for i := range l {
				members[m] = append(members[m], m*l+i)
			}
		}
		frags, comms := orderCluster(t, members, channels, func(c, i, l int) int {
			if c%2 == 0 {
				return l - 1 - i // backwards
			}
			return (i + 5*c) % l
		})
		nRanks := nNodes * l
		all := make([]*abi.TopoRanks, nRanks)
		for r := range frags {
			all[r] = &frags[r]
		}
		for _, rank := range []int{0, 1, l - 1, l, nRanks - 1, rng.IntN(nRanks)} {
			comm := comms[rank]
			if !requireSamePaths(t, &comm, all, generic) {
				t.Fatalf("nodes of %d, rank %d: the fast path refused a valid cluster", l, rank)
			}
			res := runPostset(comm, all, generic, false)
			if got, want := ring.TookDeltaRings(res.res), l <= 128; got != want {
				t.Fatalf("nodes of %d, rank %d: rings kept as deltas %v, want %v", l, rank, got, want)
			}
		}
		for range 200 {
			f := &frags[rng.IntN(nRanks)]
			c, field := rng.IntN(channels), rng.IntN(4)
			saved := ringField(f, field)[c]
			ringField(f, field)[c] = int32(rng.IntN(nRanks+2)) - 1
			comm := comms[rng.IntN(nRanks)]
			requireSamePaths(t, &comm, all, generic)
			ringField(f, field)[c] = saved
		}
	}
}

// orderCluster is every rank's fragment, and its communicator as Preset
// leaves it, for nodes of the given ranks, with position i of channel c's
// run through a node of l ranks its order(c, i, l)-th rank.
func orderCluster(t *testing.T, members [][]int, channels int, order func(c, i, l int) int) ([]abi.TopoRanks, []abi.Comm) {
	t.Helper()
	nRanks := 0
	for _, m := range members {
		nRanks += len(m)
	}
	frags, comms := make([]abi.TopoRanks, nRanks), make([]abi.Comm, nRanks)
	for _, ranks := range members {
		l := len(ranks)
		g := &abi.TopoGraph{Pattern: 4, NChannels: int32(channels)}
		for c := range channels {
			for i := range l {
				g.Intra[c*l+i] = int32(ranks[order(c, i, l)])
			}
		}
		for _, r := range ranks {
			comms[r] = abi.Comm{Rank: int32(r), NRanks: int32(nRanks), LocalRanks: int32(l)}
			if err := ring.Preset(&comms[r], g, &frags[r], generic); err != nil {
				t.Fatalf("Preset rank %d: %v", r, err)
			}
		}
	}
	return frags, comms
}
