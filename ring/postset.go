package ring

import (
	"runtime"
	"strings"
	"sync/atomic"

	"github.com/nccomring/libnccomring/abi"
	"github.com/nccomring/libnccomring/kanga"
	"github.com/nccomring/libnccomring/layout"
)

// Allocator provides the userRanks buffers Postset allocates for channels
// whose ring.userRanks is NULL (D12). The export layer uses C malloc/free, so
// the host frees them with free(); tests use Go memory they keep alive.
type Allocator interface {
	// AllocInts returns the address of n ints, or 0 when out of memory.
	AllocInts(n int) uintptr
	// Free releases an address AllocInts returned.
	Free(p uintptr)
}

// PostsetOptions carries what Postset reads from outside its arguments.
type PostsetOptions struct {
	Platforms kanga.Resolver
	// PodOrder is asked only when comm->enablePod is set on more than one
	// node, so NCCOM_RING_POD_ORDER is read (and reported) only when it matters.
	PodOrder func() PodOrder
	// Alloc provides the userRanks buffers the caller keeps (D12).
	Alloc Allocator
	// Scratch provides the call's working memory, released before it
	// returns: the library passes C malloc, so running out is
	// ncclSystemError and the Go heap stays untouched; nil is the Go heap.
	Scratch Allocator
	// exactOnly skips the fast path (fastpath.go), for the tests that
	// compare it with the exact path.
	exactOnly bool
}

// PostsetResult is what a successful Postset committed, for the caller's
// out-parameters and INFO lines. A failed Postset still fills GraphChannels
// and CountRank once the channel count is known (its INFO line is printed
// either way).
type PostsetResult struct {
	NChannels   int  // min(2n, 32)
	NNodes      int  // nodes found (D8)
	PodFallback bool // enablePod was set and the node-order stitch was used (D15)
	KangaInts   int  // ints written per kangaRing path; 0 exactly when not SwitchV1
	// GraphChannels is n, the channel count of D23 before doubling, and
	// CountRank the first rank whose fragment has exactly n channels (-1:
	// none has, n is comm->nChannels).
	GraphChannels, CountRank int
	fast                     bool // the fast path took the fragments (fastpath.go)
	deltas                   bool // and kept the rings as deltas (deltas.go)
}

// RingsError is a Postset failure over the fragments (D24): the one WARN,
// the same on every rank, and rank 0's INFO lines showing each failing
// ring's walk (docs/errors.md "Diagnosis"). Walks is filled only for the
// call of rank 0.
type RingsError struct {
	Err   *abi.Error
	Walks []string
}

func (e *RingsError) Error() string { return e.Err.Text }

// Unwrap lets errors.As find the *abi.Error.
func (e *RingsError) Unwrap() error { return e.Err }

// Postset is ncclTopoPostset (spec §3-§4, D8-D15, D23, D24). all holds
// comm.NRanks fragments (the AllGather result) and nodesFirstRank has room
// for comm.NRanks ints. It takes the channel count n that every fragment
// has (D23), finds the nodes, stitches each channel's ring, walks it from
// rank 0 checking every rank's prev (D24), doubles the channels (cap 32) and
// writes, for this rank, every channel's prev/next and userRanks (the ring
// from this rank), comm.NChannels/NNodes/Node, nodesFirstRank and, on
// TRN3-SwitchV1, comm.KangaRing.
//
// Input is checked in the order of docs/errors.md P2-P16 and nothing is
// written unless every check passed (D11). Whether it succeeds, n, the nodes
// and the rings depend only on the fragments, never on comm.Rank (D24); a
// failure over the fragments is a *RingsError naming the rank at fault.
// Cost: O(nRanks * n) time and scratch. A consistent job takes the fast
// path (fastpath.go, nodewalk.go): the rings walked straight off the
// fragments node by node, each node's fragment lines prefetched while the
// node before it is walked and read from memory about once, the rings of
// node-major jobs kept as one byte per rank (deltas.go). Anything else
// takes the exact path: one sequential pass over the fragments' ring
// arrays into a link table, the stitch, the walks. The rings are copied
// into userRanks, each rotated to start at this rank, the doubled
// channels as well.
func Postset(comm *abi.Comm, nodesFirstRank []int32, all []*abi.TopoRanks, opt PostsetOptions) (PostsetResult, error) {
	var res PostsetResult
	nRanks, rank := int(comm.NRanks), comm.Rank
	n := int(comm.NChannels)
	switch {
	case nRanks <= 0:
		return res, abi.Errorf(abi.InvalidArgument, "ncclTopoPostset: comm->nRanks %d is not positive", nRanks)
	case rank < 0 || int(rank) >= nRanks:
		return res, abi.Errorf(abi.InvalidArgument, "ncclTopoPostset: comm->rank %d is outside [0, %d)", rank, nRanks)
	case n < 1 || n > layout.MaxChannels:
		return res, abi.Errorf(abi.InvalidArgument, "ncclTopoPostset: comm->nChannels %d is outside [1, %d] (call ncclTopoPreset first)", n, layout.MaxChannels)
	}
	if err := kanga.CheckChannelCount("ncclTopoPostset", comm.NKangaRingChannels); err != nil {
		return res, err
	}
	switchV1, err := opt.Platforms.IsSwitchV1()
	if err != nil {
		return res, abi.Errorf(abi.InvalidUsage, "ncclTopoPostset: %w", err)
	}
	all = all[:nRanks]
	nodesFirstRank = nodesFirstRank[:nRanks]
	for r, f := range all {
		if f == nil {
			return res, abi.Errorf(abi.InvalidArgument, "ncclTopoPostset: allTopoRanks[%d] is NULL", r)
		}
	}

	// Working memory from the Allocator (C malloc in the library): running
	// out is ncclSystemError (P7b), and the Go heap is not touched.
	sc := newScratch(opt.Scratch)
	defer sc.release()
	w, ok := newPostsetMemory(sc, nRanks, n)
	if !ok {
		return res, sc.err("ncclTopoPostset", nRanks, n)
	}
	// The fast path first (fastpath.go): it takes the fragments of a
	// consistent job, proving that the exact path below would pass with
	// the same nodes and rings; for anything else the exact path runs from
	// the start and gives its answer, its error the canonical one.
	nodes, ok := nodeTable{}, false
	if !opt.exactOnly {
		nodes, ok = postsetFastOrFault(all, n, rank, &w)
	}
	if ok {
		res.GraphChannels, res.CountRank, res.fast, res.deltas = n, firstWithCount(all, n), true, nodes.deltas != nil
	} else {
		var failure *RingsError
		nodes, n, failure = postsetExact(all, n, rank, &w, &res, sc)
		if failure != nil {
			return res, failure
		}
	}
	rings := workRings{ints: w.rings[:n*nRanks], deltas: nodes.deltas, nRanks: nRanks}
	// Only now the communicator's and the platform's checks (P12-P14):
	// fragments that contradict each other fail first, on every rank alike.
	nNodes := len(nodes.heads)
	if comm.EnablePod != 0 && nNodes > 1 {
		if opt.PodOrder == nil || opt.PodOrder() != PodOrderNode {
			return res, abi.Errorf(abi.InvalidUsage, "ncclTopoPostset: comm->enablePod is %d on %d nodes: UltraServer pod ordering (ncclTopoGetP2pPodInterNodeGraph) is not reimplemented; set %s=node to stitch in node order",
				comm.EnablePod, nNodes, PodOrderEnvVar)
		}
		res.PodFallback = true
	}
	// The virtual-core and JBOG hooks are asked only on SwitchV1 (spec §4).
	if err := kanga.CheckMaterialize(rank, switchV1, opt.Platforms); err != nil {
		return res, err
	}

	// D10: double, then clamp to ncclMaxNchannels() = 32; ncclMinNchannels()
	// is 0, so no cyclic copies are ever added.
	total := min(2*n, layout.MaxChannels)
	buffers, fresh, err := userRanksBuffers(comm, total, nRanks, opt.Alloc)
	if err != nil {
		return res, err
	}
	// Until the commit is done, a panic (a caller pointer that faults, D20)
	// must not leave fresh buffers behind: the host never sees them.
	committed := false
	defer func() {
		if !committed {
			for _, p := range fresh[:total] {
				if p != 0 {
					opt.Alloc.Free(p)
				}
			}
		}
	}()

	// Commit, all-or-nothing (D11): first the writes through pointers the
	// caller gave (its userRanks buffers, nodesFirstRank), each probed at
	// both ends before any is written, so a stale or short one faults while
	// nothing has changed; only then the communicator itself. This rank
	// is at position nodes.at[c] of ring c, so userRanks is the ring
	// rotated to start there, its prev the rank before and its next the
	// one after.
	probeWritable(nodesFirstRank[:len(nodes.heads)])
	for _, buf := range buffers[:total] {
		probeWritable(abi.Ints(buf, nRanks))
	}
	for src := range n { // the doubled half repeats the first (D10)
		first, double := abi.Ints(buffers[src], nRanks), []int32(nil)
		if src+n < total {
			double = abi.Ints(buffers[src+n], nRanks)
		}
		rings.commit(src, first, double, int(nodes.at[src]))
	}
	copy(nodesFirstRank, nodes.heads)
	for c := range total {
		ch := &comm.Channels[c].Ring
		at := int(nodes.at[c%n])
		ch.Prev, ch.Next = rings.rank(c%n, (at+nRanks-1)%nRanks), rings.rank(c%n, (at+1)%nRanks)
		ch.UserRanks = buffers[c]
	}
	committed = true
	comm.NChannels = int32(total)
	comm.NNodes = int32(nNodes)
	comm.Node = int32(nodes.self)
	res.KangaInts = kanga.Materialize(comm, all, switchV1)
	res.NChannels, res.NNodes = total, nNodes
	return res, nil
}

// commitChunk is how many ints commitRing copies into each of its
// destinations in turn: 16 KiB, which the second copy reads from L1.
const commitChunk = 4096

// commitRing copies ring, rotated to start at position at, into first and
// (when it is not nil) double, a chunk into each in turn, so that the ring
// (walked into scratch long before, out of the cache by now at large
// sizes) is read from memory once for both.
func commitRing(first, double, ring []int32, at int) {
	to := 0 // where the chunk goes
	for _, seg := range [2][]int32{ring[at:], ring[:at]} {
		for len(seg) > 0 {
			k := min(len(seg), commitChunk)
			copy(first[to:], seg[:k])
			if double != nil {
				copy(double[to:], seg[:k])
			}
			seg, to = seg[k:], to+k
		}
	}
}

// postsetFastOrFault is postsetFast, false as well when it faults on a
// pointer from the caller (D20, with debug.SetPanicOnFault as the library
// sets it): the exact path then runs and faults where it faults, so the
// address its error names does not depend on the fast path.
func postsetFastOrFault(all []*abi.TopoRanks, n int, rank int32, w *postsetMemory) (nodes nodeTable, ok bool) {
	defer func() {
		if r := recover(); r != nil {
			if _, fault := r.(interface{ Addr() uintptr }); !fault {
				if e, isRuntime := r.(runtime.Error); !isRuntime || !strings.Contains(e.Error(), "nil pointer dereference") {
					panic(r)
				}
			}
			nodes, ok = nodeTable{}, false
		}
	}()
	return postsetFast(all, n, rank, w)
}

// postsetExact is Postset's exact path over the fragments (scanFragments,
// stitch, postsetWalk): the nodes, D23's channel count n and the rings in
// w.rings, walked from rank, or the failure every rank reports (D24). It
// sets res.GraphChannels and res.CountRank either way.
func postsetExact(all []*abi.TopoRanks, n int, rank int32, w *postsetMemory, res *PostsetResult, sc *scratch) (nodeTable, int, *RingsError) {
	nRanks := len(all)
	// One pass over the fragments: ranges, nodes and their agreement, and
	// every rank's links into the link table (stitched below). It assumes
	// every fragment has comm->nChannels channels; a fragment with fewer
	// fails its range check, and the pass runs again with D23's count.
	nodes, links, ok := scanFragments(all, n, rank, w)
	res.CountRank = -1
	if !ok {
		count, first := channelCount(all, n)
		if count == 0 {
			return nodeTable{}, n, &RingsError{Err: abi.Errorf(abi.InternalError, "ncclTopoPostset: rank %d: ringRecv[0] is %d, so its fragment has no channel", first, all[first].RingRecv[0])}
		}
		if count < n {
			n, res.CountRank = count, first
			nodes, links, ok = scanFragments(all, n, rank, w)
		}
	}
	res.GraphChannels = n
	if res.CountRank < 0 {
		res.CountRank = firstWithCount(all, n)
	}
	if !ok {
		return nodeTable{}, n, postsetFailure(all, n, rank, sc)
	}
	rings := w.rings[:n*nRanks]
	// One walk per channel from this rank, checking every rank's prev on
	// the way: whether it passes is the same from any start (the verdict is
	// every rank's, D24), and from here ring c is this rank's userRanks.
	if !stitch(all, nodes.heads, n, links) || !postsetWalk(links, rings, n, nRanks, rank) {
		return nodeTable{}, n, postsetFailure(all, n, rank, sc)
	}
	return nodes, n, nil
}

// postsetFailure is the failure over the fragments that every rank reports
// the same way (D24), with rank 0's walks of the failing rings.
func postsetFailure(all []*abi.TopoRanks, n int, rank int32, sc *scratch) *RingsError {
	e := &RingsError{Err: diagnose(all, n, sc)}
	if rank == 0 && e.Err.Code == abi.InternalError {
		e.Walks = walkLines(all, n, sc)
	}
	return e
}

// userRanksBuffers returns the userRanks buffer of every channel c <
// total: the caller's, or a fresh one of nRanks ints where it is NULL (D12;
// fresh[c] is then that buffer, else 0). Nothing is published into comm. On
// failure it frees what it allocated.
func userRanksBuffers(comm *abi.Comm, total, nRanks int, alloc Allocator) (buffers, fresh [layout.MaxChannels]uintptr, err error) {
	for c := range total {
		buffers[c] = comm.Channels[c].Ring.UserRanks
		if buffers[c] != 0 {
			continue
		}
		p := alloc.AllocInts(nRanks)
		if p == 0 {
			for _, q := range fresh[:c] {
				if q != 0 {
					alloc.Free(q)
				}
			}
			return buffers, fresh, abi.Errorf(abi.SystemError, "ncclTopoPostset: malloc of %d bytes for channels[%d].ring.userRanks failed", 4*nRanks, c)
		}
		buffers[c], fresh[c] = p, p
	}
	return buffers, fresh, nil
}

// probeWritable stores each end of s back into itself with an atomic add
// of 0, which the compiler cannot drop: memory the caller gave that is not
// writable (a stale pointer, a buffer too short) faults here, before any
// write, and becomes ncclInternalError naming the address (D20).
func probeWritable(s []int32) {
	if len(s) > 0 {
		atomic.AddInt32(&s[0], 0)
		atomic.AddInt32(&s[len(s)-1], 0)
	}
}
