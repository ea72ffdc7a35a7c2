package ring_test

import (
	"bytes"
	"errors"
	"runtime"
	"slices"
	"testing"

	"github.com/nccomring/libnccomring/record"

	"github.com/nccomring/libnccomring/abi"
	"github.com/nccomring/libnccomring/internal/fuzzseed"
	"github.com/nccomring/libnccomring/kanga"
	"github.com/nccomring/libnccomring/ring"
)

// Native fuzz targets for Preset, Postset and BuildRings (issue 4). Each
// decodes its bytes into an input that is often valid and often broken in
// one place, then checks the contract either way: on success the outputs
// obey the spec (checked against an independent reading of the inputs), on
// error nothing was written (D11). The seed corpus, testdata/fuzz/<target>/,
// holds the fault catalogue, one file per failure, named after it (the bytes
// follow each target's decoding below). Plain `go test` (and so `make
// test`) runs the corpus and a fixed set of inputs derived from it
// (internal/fuzzseed); `make fuzz` fuzzes.

func FuzzPreset(f *testing.F) {
	fuzzseed.New(f).Fuzz(func(t *testing.T, data []byte) {
		r := &reader{data}
		cl := fuzzCluster(r)
		rank := r.byte() % cl.nRanks
		comm := cl.comm(rank)
		graph := *cl.graphs[cl.nodeOf(rank)]
		switch kind, a, b := r.byte()%7, r.byte(), r.byte(); kind {
		case 1:
			graph.Intra[a%len(graph.Intra)] = int32(b) - 2
		case 2:
			graph.Intra[a%64] = graph.Intra[b%64]
		case 3:
			graph.NChannels = int32(a%40) - 2
		case 4:
			comm.NKangaRingChannels = int32(a%8) - 2
		case 5:
			comm.LocalRanks = int32(a % 300)
		case 6:
			comm.Rank, comm.NRanks = int32(a)-3, int32(b%20)-1
		}
		checkPreset(t, comm, &graph)
	})
}

// requireCommUntouched checks a failed call: an *abi.Error, and comm's
// bytes as they were before it.
func requireCommUntouched(t *testing.T, err error, before []byte, comm *abi.Comm) {
	t.Helper()
	var e *abi.Error
	if !errors.As(err, &e) {
		t.Fatalf("error %v is not an *abi.Error", err)
	}
	if !bytes.Equal(before, bytesOf(comm)) {
		t.Fatalf("comm written on error %v", err)
	}
}

// checkPreset runs Preset and checks the contract against an independent
// reading of the graph.
func checkPreset(t *testing.T, comm *abi.Comm, graph *abi.TopoGraph) {
	before := bytes.Clone(bytesOf(comm))
	var frag abi.TopoRanks
	canary(&frag)
	err := ring.Preset(comm, graph, &frag, ring.PresetOptions{Platforms: kanga.Fixed(kanga.SwitchV1)})
	if err != nil {
		requireCommUntouched(t, err, before, comm)
		var untouched abi.TopoRanks
		canary(&untouched)
		if frag != untouched {
			t.Fatalf("fragment written on error %v", err)
		}
		return
	}
	n, L, rank := int(graph.NChannels), int(comm.LocalRanks), comm.Rank
	if comm.NChannels != int32(n) {
		t.Fatalf("comm.NChannels %d, want %d", comm.NChannels, n)
	}
	for c := range n {
		order := graph.Intra[c*L : (c+1)*L]
		i := -1
		for j, v := range order {
			if v == rank {
				if i >= 0 {
					t.Fatalf("channel %d lists rank %d twice and Preset accepted it", c, rank)
				}
				i = j
			}
		}
		prev, next := int32(-1), int32(-1)
		if i > 0 {
			prev = order[i-1]
		}
		if i < L-1 {
			next = order[i+1]
		}
		if frag.RingRecv[c] != order[0] || frag.RingSend[c] != order[L-1] || frag.RingPrev[c] != prev || frag.RingNext[c] != next {
			t.Fatalf("channel %d fragment %d %d %d %d, want %d %d %d %d", c, frag.RingRecv[c], frag.RingSend[c],
				frag.RingPrev[c], frag.RingNext[c], order[0], order[L-1], prev, next)
		}
		for _, ch := range []int{c, c + n} {
			if ch < 32 && (comm.Channels[ch].Ring.Prev != prev || comm.Channels[ch].Ring.Next != next) {
				t.Fatalf("channels[%d] prev/next %d/%d, want %d/%d", ch, comm.Channels[ch].Ring.Prev, comm.Channels[ch].Ring.Next, prev, next)
			}
		}
	}
	// Past channel n: -1 in the four ring arrays (D23), the canary
	// everywhere else but the kangaRing lift (D7).
	var want abi.TopoRanks
	canary(&want)
	copy(want.RingRecv[:n], frag.RingRecv[:n])
	copy(want.RingSend[:n], frag.RingSend[:n])
	copy(want.RingPrev[:n], frag.RingPrev[:n])
	copy(want.RingNext[:n], frag.RingNext[:n])
	for c := n; c < len(want.RingRecv); c++ {
		want.RingRecv[c], want.RingSend[c], want.RingPrev[c], want.RingNext[c] = -1, -1, -1, -1
	}
	for k := range int(comm.NKangaRingChannels) {
		want.JbogKangaringPath[k] = [4]int32(comm.KangaRing[k][:4])
	}
	// The record (D25, D27, D28), whole: on SwitchV1 it carries the
	// preconditions.
	record.Write(&want, &record.Fields{Rank: rank, Platform: record.SwitchV1, JbogID: kanga.SwitchV1.JbogID,
		VirtualCore: kanga.SwitchV1.VirtualCoreSize, Fingerprint: record.Fingerprint(graph),
		EnablePod: comm.EnablePod != 0, KangaChannels: comm.NKangaRingChannels, GraphChannels: int32(n)})
	if frag != want {
		t.Fatalf("Preset wrote bytes D5/D7/D23/D25 do not name")
	}
}

func FuzzPostset(f *testing.F) {
	c := fuzzseed.New(f)
	// D23 seeds (bytes as fuzzCluster and the corruptions below decode
	// them). 1 node x 2 ranks, 3 channels; rank 1's ringRecv[2] = -1: its
	// fragment has 2 channels, so every rank has 2 (doubled: 4).
	c.Add([]byte{0, 1, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 2, 1})
	// 1 node x 2 ranks, 2 channels; comm->nChannels = 3: not consulted,
	// the fragments' 2 decide (D27).
	c.Add([]byte{0, 1, 1, 0, 0, 0, 0, 0, 0, 0, 1, 8, 0, 0, 5})
	c.Fuzz(func(t *testing.T, data []byte) {
		r := &reader{data}
		cl := fuzzCluster(r)
		frags := make([]abi.TopoRanks, cl.nRanks)
		all := make([]*abi.TopoRanks, cl.nRanks)
		for rk := range cl.nRanks {
			if err := ring.Preset(cl.comm(rk), cl.graphs[cl.nodeOf(rk)], &frags[rk], ring.PresetOptions{Platforms: generic}); err != nil {
				t.Fatalf("Preset of a valid cluster: %v", err)
			}
			all[rk] = &frags[rk]
		}
		rank := r.byte() % cl.nRanks
		comm := cl.comm(rank)
		if err := ring.Preset(comm, cl.graphs[cl.nodeOf(rank)], new(abi.TopoRanks), ring.PresetOptions{Platforms: generic}); err != nil {
			t.Fatal(err)
		}
		for range r.in(0, 3) {
			kind, who, c, v := r.byte()%9, r.byte()%cl.nRanks, r.byte()%32, int32(r.byte()%(cl.nRanks+4))-2
			switch kind {
			case 1:
				frags[who].RingRecv[c] = v
			case 2:
				all[who] = nil
			case 3:
				all[who] = &frags[int(v+2)%cl.nRanks]
			case 4:
				frags[who].RingSend[c] = v
			case 5:
				frags[who].RingNext[c] = v
			case 6:
				frags[who].RingPrev[c] = v
			case 7:
				comm.EnablePod = 1
			case 8:
				comm.NChannels = v
			}
		}
		checkPostset(t, comm, all)
	})
}

// checkPostset runs Postset and checks the contract: on error nothing is
// written; on success every channel is a Hamiltonian cycle read from this
// rank whose neighbours are this rank's prev/next, the doubled channels
// repeat the first half, and nodesFirstRank lists distinct heads.
func checkPostset(t *testing.T, comm *abi.Comm, all []*abi.TopoRanks) {
	before := bytes.Clone(bytesOf(comm))
	n := len(all)
	heads := make([]int32, n)
	for i := range heads {
		heads[i] = -9
	}
	alloc := newGoAlloc()
	defer runtime.KeepAlive(alloc) // the userRanks read below are its Go memory
	nChannels := comm.NChannels
	res, err := ring.Postset(comm, heads, all, ring.PostsetOptions{Platforms: generic, Alloc: alloc})
	if err != nil {
		requireCommUntouched(t, err, before, comm)
		for _, h := range heads {
			if h != -9 {
				t.Fatalf("nodesFirstRank written on error %v", err)
			}
		}
		if len(alloc.live) != 0 {
			t.Fatalf("userRanks left allocated on error %v", err)
		}
		return
	}
	// D27: n is the smallest of every fragment's count (its leading
	// channels with ringRecv >= 0); comm->nChannels plays no part.
	want := 32
	for _, f := range all {
		k := 0
		for k < len(f.RingRecv) && f.RingRecv[k] >= 0 {
			k++
		}
		want = min(want, k)
	}
	if res.GraphChannels != want {
		t.Fatalf("channel count %d, want %d: the smallest of every fragment's (comm->nChannels %d)", res.GraphChannels, want, nChannels)
	}
	nChannels = int32(res.GraphChannels)
	total := min(2*int(nChannels), 32)
	if res.NChannels != total || comm.NChannels != int32(total) {
		t.Fatalf("nChannels %d/%d, want %d", res.NChannels, comm.NChannels, total)
	}
	seen := map[int32]bool{}
	for _, h := range heads[:res.NNodes] {
		if seen[h] {
			t.Fatalf("nodesFirstRank repeats %d", h)
		}
		seen[h] = true
	}
	for c := range total {
		ring := abi.Ints(comm.Channels[c].Ring.UserRanks, n)
		if ring[0] != comm.Rank {
			t.Fatalf("channel %d starts at %d", c, ring[0])
		}
		visited := make([]bool, n)
		for _, v := range ring {
			if v < 0 || int(v) >= n || visited[v] {
				t.Fatalf("channel %d is not a permutation: %v", c, ring)
			}
			visited[v] = true
		}
		if comm.Channels[c].Ring.Next != ring[1%n] || comm.Channels[c].Ring.Prev != ring[n-1] {
			t.Fatalf("channel %d prev/next %d/%d do not match the ring %v", c, comm.Channels[c].Ring.Prev, comm.Channels[c].Ring.Next, ring)
		}
		if c >= int(nChannels) && !slices.Equal(ring, abi.Ints(comm.Channels[c-int(nChannels)].Ring.UserRanks, n)) {
			t.Fatalf("channel %d does not repeat channel %d", c, c-int(nChannels))
		}
	}
}

func FuzzBuildRings(f *testing.F) {
	fuzzseed.New(f).Fuzz(func(t *testing.T, data []byte) {
		r := &reader{data}
		nrings, rank, nranks := r.in(0, 34)-1, r.in(0, 15)-1, r.in(0, 12)
		total := max(nrings, 0) * max(nranks, 0)
		next := make([]int32, total)
		for i := range next {
			next[i] = int32(r.byte()%(nranks+3)) - 1
		}
		rings := make([]int32, total)
		for i := range rings {
			rings[i] = -77
		}
		err := ring.BuildRings(nrings, rank, nranks, rings, next, nil)
		if err != nil {
			for _, v := range rings {
				if v != -77 {
					t.Fatalf("rings written on error %v", err)
				}
			}
			return
		}
		for rr := range nrings {
			walk := rings[rr*nranks : (rr+1)*nranks]
			seen := make([]bool, nranks)
			for i, v := range walk {
				if v < 0 || int(v) >= nranks || seen[v] {
					t.Fatalf("ring %d is not a permutation: %v", rr, walk)
				}
				seen[v] = true
				if want := next[rr*nranks+int(walk[(i+nranks-1)%nranks])]; i > 0 && v != want {
					t.Fatalf("ring %d step %d is %d, next says %d", rr, i, v, want)
				}
			}
			if walk[0] != int32(rank) || next[rr*nranks+int(walk[nranks-1])] != int32(rank) {
				t.Fatalf("ring %d does not start and end at rank %d: %v", rr, rank, walk)
			}
		}
	})
}
