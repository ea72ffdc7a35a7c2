package ring_test

import (
	"errors"
	"fmt"
	"regexp"
	"runtime"
	"strconv"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nccomring/libnccomring/abi"
	"github.com/nccomring/libnccomring/kanga"
	"github.com/nccomring/libnccomring/layout"
	"github.com/nccomring/libnccomring/nodeorder"
	"github.com/nccomring/libnccomring/record"
	"github.com/nccomring/libnccomring/ring"
)

// The helpers the package's tests share: simulated clusters and whole
// stages (Preset, the AllGather, Postset on every rank), gathered jobs and
// their verdicts, allocators, platforms and the benchmarks' jobs. A
// helper one test file alone uses stays in that file.

// cluster is a simulated cluster for tests: nodes of given sizes, ranks
// numbered node-major, one graph per node whose intra holds global ranks.
type cluster struct {
	nRanks int
	first  []int // first global rank of each node
	local  []int // local ranks of each node
	graphs []*abi.TopoGraph
}

func newCluster(local ...int) *cluster {
	cl := &cluster{local: local}
	for _, l := range local {
		cl.first = append(cl.first, cl.nRanks)
		cl.nRanks += l
		g := &abi.TopoGraph{Pattern: 4}
		for i := range g.Inter {
			g.Inter[i] = -1
		}
		cl.graphs = append(cl.graphs, g)
	}
	return cl
}

func (cl *cluster) nodeOf(rank int) int {
	for m := len(cl.first) - 1; m >= 0; m-- {
		if rank >= cl.first[m] {
			return m
		}
	}
	return -1
}

// channel sets channel c on every node from a local order and NIC pair.
func (cl *cluster) channel(c int, localOrder []int, in, out int32) *cluster {
	for m, g := range cl.graphs {
		l := len(localOrder)
		for i, v := range localOrder {
			g.Intra[c*l+i] = int32(cl.first[m] + v)
		}
		g.Inter[2*c], g.Inter[2*c+1] = in, out
	}
	return cl
}

func (cl *cluster) channels(n int) *cluster {
	for _, g := range cl.graphs {
		g.NChannels = int32(n)
	}
	return cl
}

// comm returns a zeroed communicator for rank, as a host allocates it.
func (cl *cluster) comm(rank int) *abi.Comm {
	c := new(abi.Comm)
	c.Rank, c.NRanks = int32(rank), int32(cl.nRanks)
	c.LocalRanks = int32(cl.local[cl.nodeOf(rank)])
	return c
}

// goAlloc is a ring.Allocator over Go memory, kept alive by the allocator.
type goAlloc struct {
	live  map[uintptr][]int32
	fail  int // fail this many allocations first
	calls int
}

func newGoAlloc() *goAlloc { return &goAlloc{live: map[uintptr][]int32{}} }

func (a *goAlloc) AllocInts(n int) uintptr {
	a.calls++
	if a.fail > 0 {
		a.fail--
		return 0
	}
	buf := make([]int32, n)
	p := abi.Address(buf)
	a.live[p] = buf
	return p
}

func (a *goAlloc) Free(p uintptr) { delete(a.live, p) }

// stage is the outcome of a whole ring stage.
type stage struct {
	comms     []*abi.Comm
	fragments []abi.TopoRanks
	all       []*abi.TopoRanks
	heads     [][]int32
	results   []ring.PostsetResult
	alloc     *goAlloc
}

// run drives Preset on every rank, the AllGather and Postset on every rank,
// failing the test on any error.
func (cl *cluster) run(t *testing.T, platform kanga.Resolver) *stage {
	t.Helper()
	st, err := cl.stage(platform)
	require.NoError(t, err)
	return st
}

// stage is run without a test: it returns the first error instead, so a
// worker goroutine can call it and leave failing to the test's own.
func (cl *cluster) stage(platform kanga.Resolver) (*stage, error) {
	return buildStage(cl.nRanks, platform, cl.comm, func(r int) *abi.TopoGraph { return cl.graphs[cl.nodeOf(r)] })
}

// runStage is a job of nRanks ranks, each with the communicator comm(r)
// and the graph graph(r): Preset on every rank (with
// NCCOM_RING_POD_ORDER=node), the AllGather, Postset on every rank, failing
// the test on any error.
func runStage(t *testing.T, nRanks int, platform kanga.Resolver, comm func(r int) *abi.Comm, graph func(r int) *abi.TopoGraph) *stage {
	t.Helper()
	st, err := buildStage(nRanks, platform, comm, graph)
	require.NoError(t, err)
	return st
}

// buildStage is runStage returning its first error (the stage so far with
// it).
func buildStage(nRanks int, platform kanga.Resolver, comm func(r int) *abi.Comm, graph func(r int) *abi.TopoGraph) (*stage, error) {
	st := &stage{alloc: newGoAlloc(), fragments: make([]abi.TopoRanks, nRanks)}
	for r := range nRanks {
		c := comm(r)
		// Every rank says NCCOM_RING_POD_ORDER=node: the stage stitches pods
		// in node order (D27).
		if err := ring.Preset(c, graph(r), &st.fragments[r], ring.PresetOptions{Platforms: platform, PodNode: true}); err != nil {
			return st, fmt.Errorf("Preset rank %d: %w", r, err)
		}
		st.comms = append(st.comms, c)
		st.all = append(st.all, &st.fragments[r])
	}
	for r, c := range st.comms {
		heads := make([]int32, nRanks)
		res, err := ring.Postset(c, heads, st.all, ring.PostsetOptions{Platforms: platform, Alloc: st.alloc})
		if err != nil {
			return st, fmt.Errorf("Postset rank %d: %w", r, err)
		}
		st.heads = append(st.heads, heads)
		st.results = append(st.results, res)
	}
	return st, nil
}

func (st *stage) userRanks(rank, c int) []int32 {
	comm := st.comms[rank]
	return abi.Ints(comm.Channels[c].Ring.UserRanks, int(comm.NRanks))
}

func ints(v ...int32) []int32 { return v }

func seq(lo, hi int) []int {
	var s []int
	for i := lo; i < hi; i++ {
		s = append(s, i)
	}
	return s
}

var generic = kanga.Fixed(kanga.Generic)

// ringField is one of a fragment's four ring arrays, by the index the
// corruption tests draw: 0 ringRecv, 1 ringSend, 2 ringPrev, 3 ringNext.
func ringField(f *abi.TopoRanks, k int) *[layout.MaxChannels]int32 {
	switch k {
	case 0:
		return &f.RingRecv
	case 1:
		return &f.RingSend
	case 2:
		return &f.RingPrev
	default:
		return &f.RingNext
	}
}

func bytesOf[T any](p *T) []byte {
	return unsafe.Slice((*byte)(unsafe.Pointer(p)), unsafe.Sizeof(*p))
}

func canary[T any](p *T) {
	b := bytesOf(p)
	for i := range b {
		b[i] = 0xA5
	}
}

type failingPlatform struct{ err error }

func (f failingPlatform) IsSwitchV1() (bool, error) { return false, f.err }

func (f failingPlatform) Preconditions(int32) (int32, int32) {
	panic("asked the preconditions of an unknown platform")
}

// postsetFixture is a valid 2-node x 4-rank stage after Preset; each case
// breaks one fragment or comm field before rank 1's Postset.
type postsetFixture struct {
	comm  *abi.Comm
	frags []abi.TopoRanks
	all   []*abi.TopoRanks
}

func newPostsetFixture(t *testing.T) *postsetFixture {
	cl := newCluster(4, 4).channel(0, []int{0, 1, 2, 3}, 0, 0).channel(1, []int{3, 2, 1, 0}, 1, 1).channels(2)
	f := &postsetFixture{frags: make([]abi.TopoRanks, 8)}
	for r := range 8 {
		c := cl.comm(r)
		require.NoError(t, ring.Preset(c, cl.graphs[r/4], &f.frags[r], ring.PresetOptions{Platforms: generic}))
		if r == 1 {
			f.comm = c
		}
	}
	for r := range f.frags {
		f.all = append(f.all, &f.frags[r])
	}
	return f
}

type failAfter struct {
	inner *goAlloc
	after int
}

func (a *failAfter) AllocInts(n int) uintptr {
	if a.after == 0 {
		return 0
	}
	a.after--
	return a.inner.AllocInts(n)
}

func (a *failAfter) Free(p uintptr) { a.inner.Free(p) }

// noMemory is an Allocator with nothing to give.
type noMemory struct{}

func (noMemory) AllocInts(int) uintptr { return 0 }

func (noMemory) Free(uintptr) {}

// reader hands out bytes, then zeros.
type reader struct{ b []byte }

func (r *reader) byte() int {
	if len(r.b) == 0 {
		return 0
	}
	v := r.b[0]
	r.b = r.b[1:]
	return int(v)
}

// in returns a value in [lo, hi].
func (r *reader) in(lo, hi int) int { return lo + r.byte()%(hi-lo+1) }

// fuzzCluster decodes a cluster: 1-4 nodes of 1-6 ranks, 1-8 channels, each
// node's channel orders shuffled by the bytes.
func fuzzCluster(r *reader) *cluster {
	nodes, local, channels := r.in(1, 4), r.in(1, 6), r.in(1, 8)
	sizes := make([]int, nodes)
	for i := range sizes {
		sizes[i] = local
	}
	cl := newCluster(sizes...)
	for c := range channels {
		order := seq(0, local)
		for i := local - 1; i > 0; i-- {
			j := r.byte() % (i + 1)
			order[i], order[j] = order[j], order[i]
		}
		cl.channel(c, order, int32(r.in(-1, 7)), int32(r.in(-1, 7)))
	}
	return cl.channels(channels)
}

const orderLocal = 4

// orderCluster is nodes nodes of 4 ranks, NICs (2c, 2c+1) on channel c.
func orderCluster(nodes int) *cluster {
	sizes := make([]int, nodes)
	for m := range sizes {
		sizes[m] = orderLocal
	}
	return newCluster(sizes...).channel(0, []int{0, 1, 2, 3}, 0, 1).channel(1, []int{3, 2, 1, 0}, 2, 3).channels(2)
}

// orderJob gathers cl with each rank's Preset options: network on the
// ranks network says, the location loc gives its node ("" none).
func orderJob(t *testing.T, cl *cluster, network func(r int) bool, loc func(m int) string) *job {
	t.Helper()
	return gatherWith(t, cl.nRanks, func(r int) int { return cl.local[cl.nodeOf(r)] },
		func(r int) *abi.TopoGraph { return cl.graphs[cl.nodeOf(r)] },
		func(r int) ring.PresetOptions {
			opt := ring.PresetOptions{Platforms: generic, Network: network(r)}
			if v := loc(cl.nodeOf(r)); v != "" {
				l, err := nodeorder.Parse(v)
				require.NoError(t, err)
				opt.Location = l
			}
			return opt
		}, 0)
}

func everyRank(int) bool { return true }
func noRank(int) bool    { return false }

// alternating puts even nodes under leafA and odd ones under leafB.
func alternating(m int) string { return []string{"spine0/leafA", "spine0/leafB"}[m%2] }

func requireNCCLError(t *testing.T, err error, code abi.Result, text string) {
	t.Helper()
	require.Error(t, err)
	var e *abi.Error
	require.ErrorAs(t, err, &e)
	assert.Equal(t, code, e.Code)
	assert.Equal(t, text, e.Text)
}

// countingPlatform counts the platform questions a call asks (D14).
type countingPlatform struct {
	switchV1              bool
	family, preconditions int
}

func (p *countingPlatform) IsSwitchV1() (bool, error) { p.family++; return p.switchV1, nil }

func (p *countingPlatform) Preconditions(int32) (int32, int32) {
	p.preconditions++
	return 0, 1
}

// job is the gathered fragments of one job, and each rank's own view of
// the graph (its comm after Preset).
type job struct {
	comms     []*abi.Comm
	fragments []abi.TopoRanks
	all       []*abi.TopoRanks // the AllGather's pointers; nil: &fragments[r]
	platform  kanga.Resolver   // Postset's; nil: generic
}

// rewriteRecords changes every valid record of j as edit says and writes
// it back, as each rank's Preset would have written it with those settings
// (the comm fields a record carries, D28: enablePod, nKangaRingChannels,
// the platform).
func rewriteRecords(j *job, edit func(r int, f *record.Fields)) {
	for r := range j.fragments {
		if f, ok := record.Read(&j.fragments[r], int32(r)); ok {
			edit(r, &f)
			record.Write(&j.fragments[r], &f)
		}
	}
}

// gather runs Preset for every rank with its own graph (graphOf), into
// fragments pre-filled with fill (what the AllGather buffer held before).
func gather(t *testing.T, nRanks int, localRanks func(r int) int, graphOf func(r int) *abi.TopoGraph, fill byte) *job {
	return gatherWith(t, nRanks, localRanks, graphOf, func(int) ring.PresetOptions { return ring.PresetOptions{Platforms: generic} }, fill)
}

// gatherWith is gather with each rank's Preset options.
func gatherWith(t *testing.T, nRanks int, localRanks func(r int) int, graphOf func(r int) *abi.TopoGraph, opts func(r int) ring.PresetOptions, fill byte) *job {
	t.Helper()
	j := &job{fragments: make([]abi.TopoRanks, nRanks)}
	for r := range nRanks {
		b := bytesOf(&j.fragments[r])
		for i := range b {
			b[i] = fill
		}
		c := &abi.Comm{Rank: int32(r), NRanks: int32(nRanks), LocalRanks: int32(localRanks(r))}
		require.NoError(t, ring.Preset(c, graphOf(r), &j.fragments[r], opts(r)), "Preset rank %d", r)
		j.comms = append(j.comms, c)
	}
	return j
}

// gatherCluster gathers a cluster whose ranks share their node's graph.
func gatherCluster(t *testing.T, cl *cluster) *job {
	return gather(t, cl.nRanks, func(r int) int { return cl.local[cl.nodeOf(r)] },
		func(r int) *abi.TopoGraph { return cl.graphs[cl.nodeOf(r)] }, 0)
}

// outcome is one rank's Postset.
type outcome struct {
	code      abi.Result
	text      string
	walks     []string
	nChannels int
	nNodes    int
	rings     [][]int32 // each channel's userRanks, rotated to start at rank 0
	order     ring.Order
}

// inputs are j's Postset arguments: the gathered pointers (j.all, or one
// to each fragment) and the platform (j.platform, or generic).
func (j *job) inputs() ([]*abi.TopoRanks, kanga.Resolver) {
	all, platform := j.all, j.platform
	if all == nil {
		for r := range j.fragments {
			all = append(all, &j.fragments[r])
		}
	}
	if platform == nil {
		platform = generic
	}
	return all, platform
}

// postsetEveryRank runs Postset for every rank on the same fragments, each
// on a copy of its own comm.
func postsetEveryRank(t *testing.T, j *job) []outcome {
	t.Helper()
	all, platform := j.inputs()
	out := make([]outcome, len(j.comms))
	for r, own := range j.comms {
		comm := *own
		alloc := newGoAlloc()
		res, err := ring.Postset(&comm, make([]int32, len(all)), all, ring.PostsetOptions{Platforms: platform, Alloc: alloc, Sequence: true})
		o := &out[r]
		if err != nil {
			var e *abi.Error
			require.True(t, errors.As(err, &e), "rank %d: %v is not an *abi.Error", r, err)
			o.code, o.text = e.Code, e.Text
			var re *ring.RingsError
			if errors.As(err, &re) {
				o.walks = re.Walks
			}
			continue
		}
		o.nChannels, o.nNodes, o.order = res.NChannels, res.NNodes, res.Order
		n := len(all)
		for c := range res.NChannels {
			ranks := abi.Ints(comm.Channels[c].Ring.UserRanks, n)
			at := 0
			for i, v := range ranks {
				if v == 0 {
					at = i
				}
			}
			o.rings = append(o.rings, append(append([]int32{}, ranks[at:]...), ranks[:at]...))
			require.EqualValues(t, ranks[n-1], comm.Channels[c].Ring.Prev, "rank %d ch %d prev", r, c)
			require.EqualValues(t, ranks[1%n], comm.Channels[c].Ring.Next, "rank %d ch %d next", r, c)
			require.EqualValues(t, r, ranks[0], "rank %d ch %d starts at the rank", r, c)
		}
		// The userRanks buffers are Go memory the allocator holds and the
		// comm knows only by address: it must outlive the reads above.
		runtime.KeepAlive(alloc)
	}
	return out
}

// oneVerdict requires every rank's outcome to equal rank 0's (walks are
// rank 0's alone) and returns it.
func oneVerdict(t *testing.T, out []outcome) outcome {
	t.Helper()
	first := out[0]
	for r, o := range out[1:] {
		o.walks = first.walks
		require.Equal(t, first, o, "rank %d disagrees with rank 0", r+1)
	}
	return first
}

// requireNamesRank checks a failed verdict: ncclInternalError and a WARN
// that names rank S first.
func requireNamesRank(t *testing.T, v outcome, rank int) {
	t.Helper()
	require.Equal(t, abi.InternalError, v.code, v.text)
	require.Equal(t, rank, namedRank(v.text), "the WARN names rank %d: %s", rank, v.text)
}

var namedRankPattern = regexp.MustCompile(`^ncclTopoPostset: rank (\d+)`)

// namedRank is the rank a diagnosis WARN names, or -1.
func namedRank(text string) int {
	m := namedRankPattern.FindStringSubmatch(text)
	if m == nil {
		return -1
	}
	r, _ := strconv.Atoi(m[1])
	return r
}

// benchGraph is the graph of the node whose first rank is first: channel c
// runs the node's 32 ranks rotated by c, reversed on odd channels.
func benchGraph(first int) *abi.TopoGraph {
	g := &abi.TopoGraph{NChannels: benchChannels}
	for c := range benchChannels {
		for i := range benchLocal {
			v := (c + i) % benchLocal
			if c%2 == 1 {
				v = (c + benchLocal - i) % benchLocal
			}
			g.Intra[c*benchLocal+i] = int32(first + v)
		}
	}
	return g
}

// benchRecords is what every rank's record carries in a benchmark: located
// gives it a location (NCCOM_RING_LOCATION, its spine and leaf), network
// asks for the network order too (NCCOM_RING_NODE_ORDER=network, D25).
type benchRecords struct{ located, network bool }

// benchPostset is the bench's stage of n ranks ready for rank 0's Postset:
// the communicator fresh from Preset with its 32 userRanks buffers held
// (copy it into a scratch comm before each call), every fragment, room for
// nodesFirstRank, and options whose scratch is reused across calls.
type benchPostset struct {
	preset *abi.Comm
	all    []*abi.TopoRanks
	heads  []int32
	opt    ring.PostsetOptions
}

func newBenchPostset(tb testing.TB, n int, rec benchRecords) benchPostset {
	tb.Helper()
	frags := benchCluster(tb, n, rec)
	all := make([]*abi.TopoRanks, n)
	for r := range frags {
		all[r] = &frags[r]
	}
	preset := &abi.Comm{Rank: 0, NRanks: int32(n), LocalRanks: benchLocal}
	if err := ring.Preset(preset, benchGraph(0), new(abi.TopoRanks), ring.PresetOptions{Platforms: generic}); err != nil {
		tb.Fatal(err)
	}
	alloc := newGoAlloc()
	for c := range preset.Channels {
		preset.Channels[c].Ring.UserRanks = alloc.AllocInts(n)
	}
	return benchPostset{preset: preset, all: all, heads: make([]int32, n),
		opt: ring.PostsetOptions{Platforms: generic, Alloc: alloc, Scratch: &reusedBlock{}}}
}

// reusedBlock is a scratch Allocator that hands out its Go buffers again
// and again, as the C malloc of the library reuses freed blocks: it keeps Go
// allocation out of the measured calls. Blocks live at the same time are
// distinct buffers (the network order takes three).
type reusedBlock struct {
	bufs [][]int32
	live []bool
}

func (r *reusedBlock) AllocInts(n int) uintptr {
	for i, b := range r.bufs {
		if !r.live[i] && cap(b) >= n {
			r.live[i] = true
			return abi.Address(b[:n])
		}
	}
	r.bufs, r.live = append(r.bufs, make([]int32, n)), append(r.live, true)
	return abi.Address(r.bufs[len(r.bufs)-1])
}

func (r *reusedBlock) Free(p uintptr) {
	for i, b := range r.bufs {
		if abi.Address(b) == p {
			r.live[i] = false
		}
	}
}

// edit sets rank's ring field (ringField's order: 0 ringRecv, 1 ringSend,
// 2 ringPrev, 3 ringNext) on channel 1 to v.
type edit struct {
	rank, field int
	v           int32
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// d28Job is cl's job, each rank's Preset given opt(r) and its comm edited
// by edit (before Preset: what Preset sees is what it records).
func d28Job(t *testing.T, cl *cluster, opt func(r int) ring.PresetOptions, edit func(r int, c *abi.Comm)) *job {
	t.Helper()
	j := &job{fragments: make([]abi.TopoRanks, cl.nRanks)}
	for r := range cl.nRanks {
		c := &abi.Comm{Rank: int32(r), NRanks: int32(cl.nRanks), LocalRanks: int32(cl.local[cl.nodeOf(r)])}
		if edit != nil {
			edit(r, c)
		}
		require.NoError(t, ring.Preset(c, cl.graphs[cl.nodeOf(r)], &j.fragments[r], opt(r)), "Preset rank %d", r)
		j.comms = append(j.comms, c)
	}
	return j
}
