package ring

import (
	"fmt"
	"slices"

	"github.com/nccomring/libnccomring/abi"
	"github.com/nccomring/libnccomring/kanga"
	"github.com/nccomring/libnccomring/layout"
	"github.com/nccomring/libnccomring/nodeorder"
	"github.com/nccomring/libnccomring/record"
)

// PostsetOptions carries what Postset reads from outside its arguments.
type PostsetOptions struct {
	Platforms kanga.Resolver
	// Alloc provides the userRanks buffers the caller keeps (D12).
	Alloc Allocator
	// Scratch provides the call's working memory, released before it
	// returns: the library passes C malloc, so running out is
	// ncclSystemError and the Go heap stays untouched; nil is the Go heap.
	Scratch Allocator
	// Sequence asks for Order.Sequence, a copy on the Go heap (for dumps
	// and tests); without it a call allocates nothing there.
	Sequence bool
}

// PostsetResult is what a successful Postset committed, for the caller's
// out-parameters and INFO lines. A failed Postset still fills GraphChannels,
// CountRank and OwnChannels once the channel count is known (its INFO line
// is printed either way).
type PostsetResult struct {
	NChannels   int   // min(2n, 32)
	NNodes      int   // nodes found (D8)
	PodFallback bool  // enablePod was set and the node-order stitch was used (D15)
	KangaInts   int   // ints written per kangaRing path; 0 exactly when not SwitchV1
	KangaPaths  int32 // the job's nKangaRingChannels (D28: as its records say)
	// GraphChannels is n, the job's channel count before doubling (D27):
	// the smallest of any fragment; CountRank the first rank whose
	// fragment has it; OwnChannels comm->nChannels as the call found it
	// (this rank's graph's count, as its Preset set it).
	GraphChannels, CountRank, OwnChannels int
	// Order is the inter-node order the stitch followed (D25).
	Order Order
	// RecordsWarn is D28's WARN when no fragment holds a valid record;
	// RecordsInfo its INFO when some fragments are another ring stage's.
	// Both are the same on every rank.
	RecordsWarn, RecordsInfo string
	// Own is what the calling rank's own gathered record says, and OwnValid
	// whether it is valid (D28: a dump holds the record's policy and
	// location, not the environment's).
	Own      record.Fields
	OwnValid bool
}

// OwnChannelsWarning is D27's WARN after a committed Postset on a rank
// whose own graph's channel count (comm->nChannels as its Preset set it)
// is not the job's, in either direction (D28): its GetNetDev sees only
// that graph. It is the one text of Postset that depends on the calling
// rank's own state; the call's result stands.
func (r PostsetResult) OwnChannelsWarning() string {
	if r.OwnChannels == r.GraphChannels {
		return ""
	}
	return fmt.Sprintf("ncclTopoPostset: this rank's graph has %d channels (comm->nChannels), the job %d (the smallest channel count of any fragment, first held by rank %d): give its ncclTopoGetNetDev a graph of %d channels, or its channels use the NICs of another graph channel (D27, D28)",
		r.OwnChannels, r.GraphChannels, r.CountRank, r.GraphChannels)
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

// Postset is ncclTopoPostset (spec §3-§4, D8-D15, D23, D24, D27). all holds
// comm.NRanks fragments (the AllGather result) and nodesFirstRank has room
// for comm.NRanks ints. In the spec's order, as NCCL's connect.cc does it:
// gather the fragments (the nodes of D8, the agreement of each node's ranks
// on its heads and tails, every rank's links; fragments.go), stitch each
// channel (D9, stitch.go), walk every stitched ring from this rank with
// ncclBuildRings' walker, checking every rank's prev (D24, walk.go), double
// the channels (D10) and write, for this rank, every channel's prev/next
// and userRanks (the walk), comm.NChannels/NNodes/Node, nodesFirstRank
// and, on TRN3-SwitchV1, comm.KangaRing.
//
// Input is checked in the order of docs/errors.md P2-P16 and nothing is
// written unless every check passed (D11). Whether it succeeds, the channel
// count n, the nodes and the rings depend only on the fragments, never on
// comm.Rank or comm.NChannels (D24, D27); a failure over the fragments is a
// *RingsError naming the rank at fault (diagnose.go). Cost: O(nRanks * n)
// time and (2 + 3n) * nRanks ints of working memory.
func Postset(comm *abi.Comm, nodesFirstRank []int32, all []*abi.TopoRanks, opt PostsetOptions) (PostsetResult, error) {
	var res PostsetResult
	nRanks, rank := int(comm.NRanks), comm.Rank
	switch {
	case nRanks <= 0:
		return res, abi.Errorf(abi.InvalidArgument, "ncclTopoPostset: comm->nRanks %d is not positive", nRanks)
	case rank < 0 || int(rank) >= nRanks:
		return res, abi.Errorf(abi.InvalidArgument, "ncclTopoPostset: comm->rank %d is outside [0, %d)", rank, nRanks)
	}
	all = all[:nRanks]
	nodesFirstRank = nodesFirstRank[:nRanks]
	for r, f := range all {
		if f == nil {
			return res, abi.Errorf(abi.InvalidArgument, "ncclTopoPostset: allTopoRanks[%d] is NULL", r)
		}
	}

	// Working memory from the Allocator (C malloc in the library): running
	// out is ncclSystemError (P7b), and the Go heap is not touched. The
	// job's channel count is the smallest of any fragment (D27), so rank
	// 0's count is room enough, and the same on every rank.
	n := ownChannels(all[0])
	sc := newScratch(opt.Scratch)
	defer sc.release()
	g, ok := newGathered(sc, nRanks, n)
	if !ok {
		return res, sc.err("ncclTopoPostset", nRanks, n)
	}
	if rec := record.Of(all[0]); rec.Magic == abi.RecordMagic && rec.Flags&abi.RecordNetwork != 0 {
		places := sc.ints(nodeorder.CompactInts(nRanks)) // the nodes' locations, as gather finds them
		if places == nil {
			return res, sc.err("ncclTopoPostset", nRanks, n)
		}
		g.places = nodeorder.NewCompact(nRanks, places)
	}
	res.Own, res.OwnValid = record.Read(all[rank], rank)
	res.OwnChannels = int(comm.NChannels)
	built := g.rings(all, n, rank, sc, opt.Sequence, func() (facts, *abi.Error) { return ownFacts(comm, opt.Platforms) })
	res.GraphChannels, res.CountRank, res.Order = built.n, built.countRank, built.order
	if built.failure != nil {
		return res, built.failure
	}
	n, self, job := built.n, built.self, built.job
	// Only now the verdicts over the records (D28's order): fragments that
	// contradict each other fail first, on every rank alike.
	nNodes := len(g.nodes.heads)
	if err := g.census.verdict(all, nNodes, job, sc); err != nil {
		return res, err
	}
	res.PodFallback = job.pods
	res.RecordsWarn, res.RecordsInfo = g.census.notes(len(all))

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
	// nothing has changed; only then the communicator itself.
	probeWritable(nodesFirstRank[:nNodes])
	var out [layout.MaxChannels][]int32
	for c := range total {
		out[c] = abi.Ints(buffers[c], nRanks)
		probeWritable(out[c])
	}
	for c := range total { // the doubled half repeats the first (D10)
		copy(out[c], g.walks[(c%n)*nRanks:])
	}
	copy(nodesFirstRank, g.nodes.heads)
	for c := range total {
		ch := &comm.Channels[c].Ring
		p := g.pairs[(c%n)*nRanks+int(rank)]
		ch.Prev, ch.Next, ch.UserRanks = prevOf(p), nextOf(p), buffers[c]
	}
	committed = true
	comm.NChannels = int32(total)
	comm.NNodes = int32(nNodes)
	comm.Node = self
	res.KangaInts = kanga.Materialize(comm, all, job.switchV1, job.paths)
	res.KangaPaths = job.paths
	res.NChannels, res.NNodes = total, nNodes
	return res, nil
}

// jobRings is what rings decides over the fragments alone, the same on
// every rank (D24, D27).
type jobRings struct {
	// n is the job's channel count (D27), 0 when some fragment has no
	// channel; countRank the first rank whose fragment has n channels,
	// counted only when gather fails at rank 0's count (else 0, as it is
	// when n is 0).
	n, countRank int
	self         int32 // the calling rank's node (D8)
	job          facts // the job's facts from the records (D28)
	order        Order // the inter-node order the stitch followed (D25)
	failure      *RingsError
}

// rings is Postset over the fragments alone, one stage after the other:
// gather at the job's channel count (D27, D8, P8, P10), the census of the
// records made whole, the job's facts (D28; own gives the calling rank's
// own when no fragment holds a valid record), the node order (D25,
// order.go), the stitch of every channel (D9) in g.pairs, and the walk of
// each ring from rank, checked whole with every rank's prev (D24) and
// recorded in g.walks; or the failure every rank reports. bound is rank
// 0's channel count, the one newGathered sized g for.
func (g *gathered) rings(all []*abi.TopoRanks, bound int, rank int32, sc *scratch, keepSequence bool, own func() (facts, *abi.Error)) jobRings {
	n, countRank, self, ok := g.gatherJob(all, bound, rank)
	if n == 0 {
		return jobRings{failure: &RingsError{Err: abi.Errorf(abi.InternalError, "ncclTopoPostset: rank %d: ringRecv[0] is %d, so its fragment has no channel", countRank, all[countRank].RingRecv[0])}}
	}
	r := jobRings{n: n, countRank: countRank, self: self}
	var heads []int32 // the nodes in stitch order; nil: D8's
	if ok {
		g.countInFull(all, n)
		var err *abi.Error
		if r.job = g.census.factsOf(all, len(g.nodes.heads)); !r.job.records {
			r.job, err = own()
		}
		if err == nil {
			r.order, heads, err = g.nodeOrder(all, n, r.job, sc, keepSequence)
		}
		if err != nil {
			r.failure = &RingsError{Err: err}
			return r
		}
	}
	ok = ok && stitch(all, heads, 0, n, g.pairs)
	if !ok || !g.walk(n, rank, self, heads, r.order.Network) {
		r.failure = ringsFailure(all, n, heads, rank, sc)
	}
	return r
}

// gatherJob gathers at the job's channel count (D27): bound, rank 0's,
// the one newGathered sized g for (Postset counted it; not counted again
// here), unless gather fails at it and some fragment has fewer channels;
// only then is every fragment counted, and gather runs again at the
// smallest count, first held by countRank. n is 0 when some fragment has
// no channel (countRank is then the first such rank). self is rank's
// node, ok whether gather's checks passed.
func (g *gathered) gatherJob(all []*abi.TopoRanks, bound int, rank int32) (n, countRank int, self int32, ok bool) {
	n = bound
	if self, ok = g.gather(all, n, rank); ok {
		return n, 0, self, true
	}
	count, first := channelCount(all)
	if count == 0 {
		return 0, first, -1, false
	}
	if count < n {
		n = count
		self, ok = g.gather(all, n, rank)
	}
	return n, first, self, ok
}

// countInFull makes a quick count of the records whole (census.settled):
// every fragment counted again, in full.
func (g *gathered) countInFull(all []*abi.TopoRanks, n int) {
	if g.census.settled(all) {
		return
	}
	g.census.reset(all[0], true)
	for r, f := range all {
		g.census.add(f, all[f.RingRecv[0]], int32(r), n)
	}
}

// walk checks every stitched ring whole from rank and records it in
// g.walks (walk.go). In the network order the walk is told the nodes
// ahead (walk.go's lookahead); not when a node holds less than a cache
// line of pairs, as at one rank a node: every step then crosses a node,
// and the lanes' own loads already ask for it as early as a hint could.
// self is rank's node, heads the nodes in stitch order.
func (g *gathered) walk(n int, rank, self int32, heads []int32, network bool) bool {
	nRanks := len(g.nodes.byHead)
	var hint lookahead
	var ahead *lookahead
	if network && nRanks/len(heads) >= pairsPerLine {
		hint = lookahead{heads: heads, from: slices.Index(heads, g.nodes.heads[self]), span: nRanks / len(heads)}
		ahead = &hint
	}
	return (ringTable[uint64]{g.pairs[:n*nRanks], nRanks}).whole(n, rank, g.walks, ahead)
}

// ringsFailure is the failure of fragments that failed a check of gather,
// the stitch or the walk: the diagnosis's WARN (diagnose.go), and on rank
// 0 the walks of the failing rings.
func ringsFailure(all []*abi.TopoRanks, n int, heads []int32, rank int32, sc *scratch) *RingsError {
	failure := &RingsError{Err: diagnose(all, n, heads, sc)}
	if rank == 0 && failure.Err.Code == abi.InternalError {
		failure.Walks = walkLines(all, n, heads, sc)
	}
	return failure
}

// ownFacts is the one case where a per-rank input decides (D28): no
// fragment holds a valid record (the host did not gather +832...+895), so
// the platform is the calling rank's own (D14; an unknown
// NCCOM_RING_PLATFORM is generic here, its WARN printed by Preset) and so
// is nKangaRingChannels. No pod job: nothing says enablePod.
func ownFacts(comm *abi.Comm, platforms kanga.Resolver) (facts, *abi.Error) {
	switchV1, _ := platforms.IsSwitchV1()
	if !switchV1 {
		return facts{}, nil
	}
	if err := kanga.CheckChannelCount("ncclTopoPostset", comm.NKangaRingChannels); err != nil {
		return facts{}, err.(*abi.Error)
	}
	return facts{switchV1: true, paths: comm.NKangaRingChannels}, nil
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
