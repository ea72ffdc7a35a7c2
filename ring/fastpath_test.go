package ring_test

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"runtime"
	"runtime/debug"
	"strings"
	"syscall"
	"testing"
	"unsafe"

	"github.com/nccomring/libnccomring/abi"
	"github.com/nccomring/libnccomring/kanga"
	"github.com/nccomring/libnccomring/ring"
)

// Postset's fast path (fastpath.go) against its exact path, on the same
// inputs: valid clusters of many shapes and numberings, and the same with
// one field of one rank's fragment corrupted. The outcome must be the
// same: the same error (code, text, rank 0's walks) or the same outputs
// byte for byte, and valid clusters must take the fast path.

// postsetOutcome is everything a Postset call returns or writes.
type postsetOutcome struct {
	res   ring.PostsetResult
	err   error
	comm  []byte    // the communicator, its userRanks pointers zeroed
	rings [][]int32 // the userRanks contents
	heads []int32
}

func runPostset(comm abi.Comm, all []*abi.TopoRanks, platform kanga.Resolver, exact bool) postsetOutcome {
	heads := make([]int32, max(int(comm.NRanks), 0))
	for i := range heads {
		heads[i] = -9
	}
	alloc := newGoAlloc()
	opt := ring.PostsetOptions{Platforms: platform, Alloc: alloc, PodOrder: podNode}
	if exact {
		opt = ring.ExactOnly(opt)
	}
	var o postsetOutcome
	o.res, o.err = ring.Postset(&comm, heads, all, opt)
	for c := range comm.Channels {
		if p := comm.Channels[c].Ring.UserRanks; p != 0 {
			o.rings = append(o.rings, append([]int32(nil), abi.Ints(p, int(comm.NRanks))...))
			comm.Channels[c].Ring.UserRanks = 0
		}
	}
	// The userRanks buffers are Go memory the allocator holds: it must
	// outlive the reads above (by address), or a collection frees them.
	runtime.KeepAlive(alloc)
	o.comm, o.heads = bytes.Clone(bytesOf(&comm)), heads
	return o
}

// requireSamePaths runs Postset on comm (unchanged) both ways and fails
// unless the outcomes are the same; it reports whether the fast path took
// the fragments.
func requireSamePaths(t *testing.T, comm *abi.Comm, all []*abi.TopoRanks, platform kanga.Resolver) bool {
	t.Helper()
	fast := runPostset(*comm, all, platform, false)
	exact := runPostset(*comm, all, platform, true)
	if (fast.err == nil) != (exact.err == nil) {
		t.Fatalf("fast path: %v; exact path: %v", fast.err, exact.err)
	}
	if fast.err != nil {
		var fe, ee *abi.Error
		if !errors.As(fast.err, &fe) || !errors.As(exact.err, &ee) || fe.Code != ee.Code || fe.Text != ee.Text {
			t.Fatalf("fast path: %v; exact path: %v", fast.err, exact.err)
		}
		if reflect.TypeOf(fast.err) != reflect.TypeOf(exact.err) {
			t.Fatalf("error types %T and %T", fast.err, exact.err)
		}
		var fr, er *ring.RingsError
		if errors.As(fast.err, &fr) && errors.As(exact.err, &er) && !reflect.DeepEqual(fr.Walks, er.Walks) {
			t.Fatalf("walks differ:\n%q\n%q", fr.Walks, er.Walks)
		}
	}
	took := ring.TookFastPath(fast.res)
	if ring.TookFastPath(exact.res) {
		t.Fatal("ExactOnly took the fast path")
	}
	if fast.res.NChannels != exact.res.NChannels || fast.res.NNodes != exact.res.NNodes || fast.res.PodFallback != exact.res.PodFallback ||
		fast.res.KangaInts != exact.res.KangaInts || fast.res.GraphChannels != exact.res.GraphChannels || fast.res.CountRank != exact.res.CountRank {
		t.Fatalf("results differ: fast %+v, exact %+v", fast.res, exact.res)
	}
	if !bytes.Equal(fast.comm, exact.comm) || !reflect.DeepEqual(fast.rings, exact.rings) || !reflect.DeepEqual(fast.heads, exact.heads) {
		t.Fatalf("outputs differ (fast path took it: %v, error %v)", took, fast.err)
	}
	return took
}

// diffCluster is a random valid cluster: 1-8 nodes of 1-32 ranks (all one
// size, or each its own), 1-16 channels with random orders in every node,
// ranks numbered node-major or in a random order. It returns each rank's
// fragment and a communicator per rank as Preset leaves it.
func diffCluster(t *testing.T, rng *rand.Rand, platform kanga.Resolver) ([]abi.TopoRanks, []abi.Comm) {
	t.Helper()
	nNodes := 1 + rng.IntN(8)
	sizes := make([]int, nNodes)
	uniform := rng.IntN(2) == 0
	for m := range sizes {
		sizes[m] = 1 + rng.IntN(32)
		if uniform && m > 0 {
			sizes[m] = sizes[0]
		}
	}
	nRanks := 0
	for _, l := range sizes {
		nRanks += l
	}
	numbering := rng.Perm(nRanks)
	if rng.IntN(2) == 0 {
		for i := range numbering {
			numbering[i] = i // node-major
		}
	}
	members := make([][]int, nNodes)
	next := 0
	for m, l := range sizes {
		members[m] = numbering[next : next+l]
		next += l
	}
	channels := 1 + rng.IntN(16)
	frags := make([]abi.TopoRanks, nRanks)
	comms := make([]abi.Comm, nRanks)
	for _, ranks := range members {
		g := &abi.TopoGraph{Pattern: 4, NChannels: int32(channels)}
		for i := range g.Inter {
			g.Inter[i] = int32(rng.IntN(9)) - 1
		}
		l := len(ranks)
		for c := range channels {
			for i, j := range rng.Perm(l) {
				g.Intra[c*l+i] = int32(ranks[j])
			}
		}
		for _, r := range ranks {
			comms[r] = abi.Comm{Rank: int32(r), NRanks: int32(nRanks), LocalRanks: int32(l)}
			if err := ring.Preset(&comms[r], g, &frags[r], platform); err != nil {
				t.Fatalf("Preset rank %d: %v", r, err)
			}
		}
	}
	return frags, comms
}

func TestPostsetFastPathMatchesExactPath(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 2))
	platforms := []kanga.Resolver{generic, kanga.Fixed(kanga.SwitchV1)}
	taken, broken, brokenTaken, deltaTaken := 0, 0, 0, 0
	for iter := range 1500 {
		platform := platforms[iter%2]
		built, comms := diffCluster(t, rng, platform)
		nRanks := len(built)
		// Where the fragments lie: one array (as the bench), inside
		// structs of a larger stride (one AllGather buffer of structs), or
		// each apart (the fast path leaves those to the exact path).
		layout := iter % 3
		all := make([]*abi.TopoRanks, nRanks)
		switch layout {
		case 0:
			for r := range built {
				all[r] = &built[r]
			}
		case 1:
			type gathered struct {
				pad  [3]int64
				frag abi.TopoRanks
			}
			buf := make([]gathered, nRanks)
			for r := range buf {
				buf[r].frag = built[r]
				all[r] = &buf[r].frag
			}
		case 2:
			for r := range built {
				all[r] = new(abi.TopoRanks)
				*all[r] = built[r]
			}
		}
		frag := func(r int) *abi.TopoRanks { return all[r] }
		// The fast path's two walks (nodeWalk for nodes up to its bound,
		// fastWalk above it), every other pair of iterations each; the
		// node walk's rings as deltas (deltas.go) where it takes them, or
		// as ints, every other time.
		walk, maxRanks, maxDeltas := "node walk", ring.SetNodeWalkMaxRanks(0), ring.SetDeltaMaxRanks(0)
		if iter%4 < 2 {
			ring.SetNodeWalkMaxRanks(maxRanks)
			if iter%8 < 4 {
				ring.SetDeltaMaxRanks(maxDeltas)
				walk += ", deltas"
			}
		} else {
			walk = "side-by-side walk"
		}
		name := fmt.Sprintf("iter %d, %d ranks, %s", iter, nRanks, walk)
		t.Run(name, func(t *testing.T) {
			defer ring.SetNodeWalkMaxRanks(maxRanks)
			defer ring.SetDeltaMaxRanks(maxDeltas)
			// Valid: every rank the fast path takes, the outputs the same.
			for _, rank := range []int{0, rng.IntN(nRanks), nRanks - 1} {
				if requireSamePaths(t, &comms[rank], all, platform) {
					taken++
				} else if layout != 2 || nRanks == 1 {
					t.Fatalf("rank %d: the fast path refused a valid cluster", rank)
				}
			}
			if ring.TookDeltaRings(runPostset(comms[0], all, platform, false).res) {
				if !strings.HasSuffix(walk, "deltas") {
					t.Fatal("rings kept as deltas with deltas off")
				}
				deltaTaken++
			}
			// One corruption of one rank's fragment (or of the pointers,
			// or of the communicator).
			who, c := rng.IntN(nRanks), rng.IntN(32)
			if rng.IntN(3) > 0 {
				c = rng.IntN(int(comms[0].NChannels))
			}
			v := int32(rng.IntN(nRanks+5)) - 2
			comm := comms[rng.IntN(nRanks)]
			if rng.IntN(4) == 0 {
				comm = comms[0]
			}
			f := frag(who)
			switch kind := rng.IntN(9); kind {
			case 0, 1, 2, 3:
				ringField(f, kind)[c] = v
			case 4: // swap two ranks' links on a channel
				o := frag(rng.IntN(nRanks))
				f.RingNext[c], o.RingNext[c] = o.RingNext[c], f.RingNext[c]
			case 5:
				all[who] = all[rng.IntN(nRanks)]
			case 6:
				comm.NChannels = v
			case 7:
				comm.EnablePod = 1
			case 8:
				f.RingRecv[c] = int32(rng.Uint32())
			}
			broken++
			if requireSamePaths(t, &comm, all, platform) {
				brokenTaken++
			}
		})
	}
	t.Logf("%d valid calls on the fast path (all but those of fragments apart), %d clusters' rings kept as deltas; %d corrupted inputs, %d of them taken by the fast path",
		taken, deltaTaken, broken, brokenTaken)
	if deltaTaken < 50 {
		t.Fatalf("only %d clusters' rings kept as deltas", deltaTaken)
	}
}

// TestPostsetNodeWalkLeavesOtherEndsToExactPath: the node walk takes the
// ends of each node's run as Preset writes them (the head's ringPrev and
// the tail's ringNext -1). Other values in range are the stitch's to
// overwrite, so the exact path passes them, and the fast path must leave
// them to it: the same outputs, not on the fast path.
func TestPostsetNodeWalkLeavesOtherEndsToExactPath(t *testing.T) {
	const nRanks = 96
	for _, end := range []string{"head's ringPrev", "tail's ringNext"} {
		frags := benchCluster(t, nRanks)
		all := make([]*abi.TopoRanks, nRanks)
		for r := range frags {
			all[r] = &frags[r]
		}
		comm := abi.Comm{Rank: 40, NRanks: nRanks, LocalRanks: benchLocal}
		if err := ring.Preset(&comm, benchGraph(32), new(abi.TopoRanks), generic); err != nil {
			t.Fatal(err)
		}
		if !requireSamePaths(t, &comm, all, generic) {
			t.Fatal("the fast path refused the clean cluster")
		}
		// Node 1's head on channel 5 points back at its tail, as a ring
		// inside the node would.
		head := &frags[frags[32].RingRecv[5]]
		tail := &frags[frags[32].RingSend[5]]
		if end == "head's ringPrev" {
			head.RingPrev[5] = frags[32].RingSend[5]
		} else {
			tail.RingNext[5] = frags[32].RingRecv[5]
		}
		if requireSamePaths(t, &comm, all, generic) {
			t.Fatalf("%s not -1: the fast path took it", end)
		}
		if _, err := ring.Postset(&comm, make([]int32, nRanks), all, ring.PostsetOptions{Platforms: generic, Alloc: newGoAlloc(), PodOrder: podNode}); err != nil {
			t.Fatalf("%s not -1: the exact path fails: %v", end, err)
		}
	}
}

// TestPostsetFastPathLargeShapes: the bench's shape (32 ranks a node, 16
// channels) at a few thousand ranks, and corrupted in one field.
func TestPostsetFastPathLargeShapes(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 8))
	for k, nRanks := range []int{4096, 8192} {
		if k == 1 { // the side-by-side walk (fastWalk) on the second
			defer ring.SetNodeWalkMaxRanks(ring.SetNodeWalkMaxRanks(0))
		}
		frags := benchCluster(t, nRanks)
		all := make([]*abi.TopoRanks, nRanks)
		for r := range frags {
			all[r] = &frags[r]
		}
		rank := rng.IntN(nRanks)
		comm := abi.Comm{Rank: int32(rank), NRanks: int32(nRanks), LocalRanks: benchLocal}
		if err := ring.Preset(&comm, benchGraph(rank/benchLocal*benchLocal), new(abi.TopoRanks), generic); err != nil {
			t.Fatal(err)
		}
		if !requireSamePaths(t, &comm, all, generic) {
			t.Fatalf("%d ranks: the fast path refused the bench's cluster", nRanks)
		}
		for range 20 {
			f := &frags[rng.IntN(nRanks)]
			c, saved := rng.IntN(benchChannels), [4]int32{}
			saved[0], saved[1], saved[2], saved[3] = f.RingRecv[c], f.RingSend[c], f.RingPrev[c], f.RingNext[c]
			v := int32(rng.IntN(nRanks+2)) - 1
			ringField(f, rng.IntN(4))[c] = v
			requireSamePaths(t, &comm, all, generic)
			f.RingRecv[c], f.RingSend[c], f.RingPrev[c], f.RingNext[c] = saved[0], saved[1], saved[2], saved[3]
		}
	}
}

// TestPostsetFastPathFaultsLikeExactPath: a fragment pointer into memory
// that is gone (D20) faults at the address the exact path faults at, the
// fast path's own fault (if any) being only a refusal.
func TestPostsetFastPathFaultsLikeExactPath(t *testing.T) {
	pages, err := syscall.Mmap(-1, 0, 2*4096, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		t.Skip(err)
	}
	gone := [2]*abi.TopoRanks{(*abi.TopoRanks)(unsafe.Pointer(&pages[0])), (*abi.TopoRanks)(unsafe.Pointer(&pages[4096]))}
	if err := syscall.Munmap(pages); err != nil {
		t.Fatal(err)
	}
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	// Two bad fragments: the exact path faults on the first in rank order,
	// the fast path may meet the other first (blockFast reads each
	// block's first rank).
	for _, bad := range [][2]int{{0, 0}, {1, 1}, {5, 5}, {31, 31}, {100, 127}, {40, 64}, {33, 96}} {
		frags := benchCluster(t, 128)
		all := make([]*abi.TopoRanks, len(frags))
		for r := range frags {
			all[r] = &frags[r]
		}
		all[bad[0]], all[bad[1]] = gone[0], gone[1]
		comm := abi.Comm{Rank: 0, NRanks: 128, LocalRanks: benchLocal}
		if err := ring.Preset(&comm, benchGraph(0), new(abi.TopoRanks), generic); err != nil {
			t.Fatal(err)
		}
		fault := func(exact bool) (addr uintptr) {
			defer func() {
				if f, ok := recover().(interface{ Addr() uintptr }); ok {
					addr = f.Addr()
				}
			}()
			runPostset(comm, all, generic, exact)
			return 0
		}
		if f, e := fault(false), fault(true); f != e || e == 0 {
			t.Fatalf("bad fragments of ranks %v: the fast path faults at %#x, the exact path at %#x", bad, f, e)
		}
	}
}

// TestPostsetFastPathTakesBlockLookalikes: ranks that look numbered
// node-major in nodes of rank 0's node's size, but are not (nodes of
// other sizes, or out of rank order): the blocks are refused, and the
// fast path finds the nodes rank by rank and takes the job.
func TestPostsetFastPathTakesBlockLookalikes(t *testing.T) {
	for _, members := range [][][]int{
		{{0, 1}, {2, 5}, {4, 3}, {6, 7}},
		{{0, 1, 2}, {3, 4}, {6, 5}, {7, 8}},
	} {
		frags := membersCluster(t, members, 4)
		all := make([]*abi.TopoRanks, len(frags))
		for r := range frags {
			all[r] = &frags[r]
		}
		for rank := range frags {
			comm := abi.Comm{Rank: int32(rank), NRanks: int32(len(frags)), NChannels: 4}
			if !requireSamePaths(t, &comm, all, generic) {
				t.Fatalf("nodes %v, rank %d: the fast path refused a consistent job", members, rank)
			}
		}
	}
}
