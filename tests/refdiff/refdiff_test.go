// Package refdiff compares the pure-Go packages (ring, netdev, kanga) with
// the independent C reference model, build/libnccomref.so, loaded with
// purego (no cgo): the quick differential check of issue 3, run by
// `go test` without the C harness. The Go library itself is never loaded
// into this process (one Go runtime per process). make test sets
// NCCOMRING_BUILD to the build directory.
package refdiff

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"unsafe"

	"github.com/ebitengine/purego"
	"github.com/stretchr/testify/require"

	"github.com/nccomring/libnccomring/abi"
	"github.com/nccomring/libnccomring/kanga"
	"github.com/nccomring/libnccomring/layout"
	"github.com/nccomring/libnccomring/netdev"
	"github.com/nccomring/libnccomring/ring"
)

// ref is the reference model's C ABI, bound with purego.
type ref struct {
	preset     func(comm *abi.Comm, graph *abi.TopoGraph, frag *abi.TopoRanks) int32
	postset    func(comm *abi.Comm, heads *int32, all **abi.TopoRanks, nChannels, nNodes *int32) int32
	buildRings func(nrings int32, rings *int32, rank, nranks int32, prev, next *int32) int32
	getNetDev  func(sys *abi.TopoSystem, rank int32, graph *abi.TopoGraph, channel int32, dev *int32) int32
	free       func(p uintptr)
	log        *bufio.Reader // the model's NCCL_DEBUG_FILE
	info       []string      // INFO texts read by the last warn()
}

var model *ref

// load binds the reference model once. Its environment is set through
// libc's setenv (without cgo, os.Setenv does not reach C's environ) before
// its first call: WARN and INFO lines (subsystem INIT) to a file this test
// reads, TRN3-SwitchV1 so the kangaRing paths are compared too.
func load(t *testing.T) *ref {
	t.Helper()
	if model != nil {
		return model
	}
	dir := os.Getenv("NCCOMRING_BUILD")
	if dir == "" {
		t.Skip("NCCOMRING_BUILD is not set; make test sets it to the build directory")
	}
	libc, err := purego.Dlopen("libc.so.6", purego.RTLD_NOW|purego.RTLD_GLOBAL)
	require.NoError(t, err)
	var setenv func(name, value string, overwrite int32) int32
	purego.RegisterLibFunc(&setenv, libc, "setenv")
	logPath := filepath.Join(os.TempDir(), fmt.Sprintf("nccomring-refdiff-%d.log", os.Getpid()))
	setenv("NCCL_DEBUG", "INFO", 1)
	setenv("NCCL_DEBUG_SUBSYS", "INIT", 1)
	setenv("NCCL_DEBUG_FILE", logPath, 1)
	setenv("NCCOM_RING_PLATFORM", "trn3-switchv1", 1)

	lib, err := purego.Dlopen(filepath.Join(dir, "libnccomref.so"), purego.RTLD_NOW|purego.RTLD_LOCAL)
	require.NoError(t, err, "build it with make build/libnccomref.so")
	m := &ref{}
	purego.RegisterLibFunc(&m.preset, lib, "ncclTopoPreset")
	purego.RegisterLibFunc(&m.postset, lib, "ncclTopoPostset")
	purego.RegisterLibFunc(&m.buildRings, lib, "ncclBuildRings")
	purego.RegisterLibFunc(&m.getNetDev, lib, "ncclTopoGetNetDev")
	purego.RegisterLibFunc(&m.free, libc, "free")
	// The model opens its log at its first call: make one, then follow it.
	var dev int32
	m.getNetDev(nil, 0, nil, 0, &dev)
	f, err := os.Open(logPath)
	require.NoError(t, err)
	t.Cleanup(func() { f.Close(); os.Remove(logPath) })
	m.log = bufio.NewReader(f)
	m.warn()
	model = m
	return m
}

// warn returns the text of the WARN lines the model printed since the last
// call, without the "host:pid:tid [rank] NCCL WARN " prefix; the INFO texts
// of the same lines are left in m.info.
func (m *ref) warn() string {
	var out []string
	m.info = nil
	for {
		line, err := m.log.ReadString('\n')
		if line != "" {
			if _, text, ok := strings.Cut(line, " NCCL WARN "); ok {
				out = append(out, strings.TrimSuffix(text, "\n"))
			} else if _, text, ok := strings.Cut(line, " NCCL INFO "); ok {
				m.info = append(m.info, strings.TrimSuffix(text, "\n"))
			}
		}
		if err != nil {
			return strings.Join(out, "\n")
		}
	}
}

// infoWith returns the INFO texts of the last warn() that start with prefix.
func (m *ref) infoWith(prefix string) []string {
	var out []string
	for _, t := range m.info {
		if strings.HasPrefix(t, prefix) {
			out = append(out, t)
		}
	}
	return out
}

// goResult turns a Go error into what the C ABI reports.
func goResult(err error) (int32, string) {
	if err == nil {
		return 0, ""
	}
	var e *abi.Error
	if !errors.As(err, &e) {
		panic(fmt.Sprintf("not an *abi.Error: %T %v", err, err))
	}
	return int32(e.Code), e.Text
}

// countLine is the D23 INFO line (docs/errors.md "Channel count") of a
// Postset that got as far as the channel count.
func countLine(res ring.PostsetResult) []string {
	if res.GraphChannels == 0 {
		return nil
	}
	return []string{fmt.Sprintf("ncclTopoPostset: %d channels, the smallest channel count of any fragment, first held by rank %d (D23)", res.GraphChannels, res.CountRank)}
}

// cluster is a generated case: node sizes, per-node graphs, kangaRing.
type cluster struct {
	nRanks int
	first  []int
	local  []int
	graphs []*abi.TopoGraph
	kanga  int32
	fault  func(all []*abi.TopoRanks) // applied to the gathered fragments
	name   string
}

func (cl *cluster) nodeOf(rank int) int {
	for m := len(cl.first) - 1; m >= 0; m-- {
		if rank >= cl.first[m] {
			return m
		}
	}
	return 0
}

// generate makes a cluster shaped like the C harness's random cases, at
// the sizes a Go test affords: 1-12 nodes, 1-16 ranks per node (sometimes
// unequal), 1-32 channels (sometimes fewer on some nodes, D23), random
// orders and NICs, a fragment fault now and then.
func generate(rng *rand.Rand, i int) *cluster {
	nodes, local, channels := 1+rng.IntN(12), 1+rng.IntN(16), 1+rng.IntN(32)
	unequal, fewer := rng.IntN(8) == 0, rng.IntN(6) == 0
	cl := &cluster{kanga: int32(rng.IntN(5))}
	for range nodes {
		l, ch := local, channels
		if unequal {
			l = 1 + rng.IntN(local)
		}
		if fewer {
			ch = 1 + rng.IntN(channels)
		}
		g := &abi.TopoGraph{Pattern: layout.PatternRing, NChannels: int32(ch)}
		for c := range ch {
			for j, v := range rng.Perm(l) {
				g.Intra[c*l+j] = int32(cl.nRanks + v)
			}
			g.Inter[2*c], g.Inter[2*c+1] = int32(rng.IntN(9)-1), int32(rng.IntN(9)-1)
		}
		cl.first = append(cl.first, cl.nRanks)
		cl.local = append(cl.local, l)
		cl.graphs = append(cl.graphs, g)
		cl.nRanks += l
	}
	cl.name = fmt.Sprintf("case %d: %d nodes x %d ranks (unequal %v), %d channels (fewer on some nodes %v), %d kanga", i, nodes, local, unequal, channels, fewer, cl.kanga)
	if rng.IntN(5) == 0 {
		r, c, v := rng.IntN(cl.nRanks), rng.IntN(channels), int32(rng.IntN(cl.nRanks+3)-2)
		field := rng.IntN(5)
		cl.name += fmt.Sprintf(", fault %d on rank %d channel %d value %d", field, r, c, v)
		cl.fault = func(all []*abi.TopoRanks) {
			switch field {
			case 0:
				all[r].RingRecv[c] = v
			case 1:
				all[r].RingSend[c] = v
			case 2:
				all[r].RingPrev[c] = v
			case 3:
				all[r].RingNext[c] = v
			case 4:
				all[r] = nil
			}
		}
	}
	return cl
}

func (cl *cluster) comm(rank int) *abi.Comm {
	c := new(abi.Comm)
	c.Rank, c.NRanks = int32(rank), int32(cl.nRanks)
	c.LocalRanks = int32(cl.local[cl.nodeOf(rank)])
	c.NKangaRingChannels = cl.kanga
	for k := range c.KangaRing {
		for i := range c.KangaRing[k] {
			c.KangaRing[k][i] = int32(1000*rank + 100*k + i)
		}
	}
	return c
}

func bytesOf[T any](p *T) []byte {
	return unsafe.Slice((*byte)(unsafe.Pointer(p)), unsafe.Sizeof(*p))
}

// goAlloc gives Go's Postset userRanks buffers in Go memory kept alive here.
type goAlloc struct{ live [][]int32 }

func (a *goAlloc) AllocInts(n int) uintptr {
	buf := make([]int32, n)
	a.live = append(a.live, buf)
	return abi.Address(buf)
}
func (a *goAlloc) Free(uintptr) {}

// sameComm compares two communicators: userRanks by contents, every other
// byte as is.
func sameComm(t *testing.T, what string, g, c *abi.Comm) {
	t.Helper()
	n := int(g.NRanks)
	for ch := range g.Channels {
		gu, cu := g.Channels[ch].Ring.UserRanks, c.Channels[ch].Ring.UserRanks
		require.Equal(t, gu == 0, cu == 0, "%s: channels[%d].ring.userRanks NULL in one only", what, ch)
		if gu != 0 {
			require.Equal(t, abi.Ints(gu, n), abi.Ints(cu, n), "%s: channels[%d].ring.userRanks", what, ch)
		}
	}
	gc, cc := *g, *c
	for ch := range gc.Channels {
		gc.Channels[ch].Ring.UserRanks, cc.Channels[ch].Ring.UserRanks = 0, 0
	}
	if !bytes.Equal(bytesOf(&gc), bytesOf(&cc)) {
		gb, cb := bytesOf(&gc), bytesOf(&cc)
		for i := range gb {
			require.Equal(t, gb[i], cb[i], "%s: comm byte %d differs", what, i)
		}
	}
}

func TestGoPackagesMatchReferenceModel(t *testing.T) {
	m := load(t)
	rng := rand.New(rand.NewPCG(2026, 11))
	platform := kanga.Fixed(kanga.SwitchV1)
	for i := range 300 {
		cl := generate(rng, i)
		compareCluster(t, m, cl, platform)
	}
}

func compareCluster(t *testing.T, m *ref, cl *cluster, platform kanga.Resolver) {
	n := cl.nRanks
	goFrags, cFrags := make([]abi.TopoRanks, n), make([]abi.TopoRanks, n)
	for r := range n {
		// A canary in every int of both fragments: what Preset leaves
		// unwritten must stay so.
		for _, f := range []*abi.TopoRanks{&goFrags[r], &cFrags[r]} {
			b := bytesOf(f)
			for i := range b {
				b[i] = 0x4d
			}
		}
		canary := goFrags[r]
		g := cl.graphs[cl.nodeOf(r)]
		gc, cc := cl.comm(r), cl.comm(r)
		code, text := goResult(ring.Preset(gc, g, &goFrags[r], ring.PresetOptions{Platforms: platform}))
		cCode := m.preset(cc, g, &cFrags[r])
		require.Equal(t, code, cCode, "%s: Preset rank %d code", cl.name, r)
		require.Equal(t, text, m.warn(), "%s: Preset rank %d WARN", cl.name, r)
		require.Equal(t, goFrags[r], cFrags[r], "%s: Preset rank %d fragment", cl.name, r)
		sameComm(t, cl.name+": Preset", gc, cc)
		// D23: the four ring arrays hold -1 from the graph's channel count
		// on; the tree region is not written (D5).
		f := &cFrags[r]
		for c := int(g.NChannels); cCode == 0 && c < layout.MaxChannels; c++ {
			require.Equal(t, [4]int32{-1, -1, -1, -1}, [4]int32{f.RingRecv[c], f.RingSend[c], f.RingPrev[c], f.RingNext[c]},
				"%s: Preset rank %d channel %d past graph->nChannels", cl.name, r, c)
		}
		require.Equal(t, canary.TreeToParent, f.TreeToParent, "%s: Preset rank %d tree region", cl.name, r)
		require.Equal(t, canary.TreeToChild0, f.TreeToChild0, "%s: Preset rank %d tree region", cl.name, r)
		require.Equal(t, canary.TreeToChild1, f.TreeToChild1, "%s: Preset rank %d tree region", cl.name, r)
	}
	goAll, cAll := make([]*abi.TopoRanks, n), make([]*abi.TopoRanks, n)
	for r := range n {
		goAll[r], cAll[r] = &goFrags[r], &cFrags[r]
	}
	if cl.fault != nil {
		cl.fault(goAll)
		cl.fault(cAll)
	}
	// Postset on rank 0, the last rank and one more. Every rank reaches the
	// same verdict on the same fragments (D24): the model's code, WARN,
	// nodes and channel count are the same on each.
	type verdict struct {
		code      int32
		warn      string
		heads     []int32
		nChannels int32
	}
	var first *verdict
	for _, r := range []int{0, n - 1, n / 2} {
		g := cl.graphs[cl.nodeOf(r)]
		gc, cc := cl.comm(r), cl.comm(r)
		var scratch abi.TopoRanks
		require.NoError(t, ring.Preset(gc, g, &scratch, ring.PresetOptions{Platforms: platform}))
		require.Zero(t, m.preset(cc, g, &scratch))
		m.warn()
		goHeads, cHeads := make([]int32, n), make([]int32, n)
		alloc := &goAlloc{}
		res, err := ring.Postset(gc, goHeads, goAll, ring.PostsetOptions{Platforms: platform, Alloc: alloc})
		code, text := goResult(err)
		if err == nil {
			text = res.OwnChannelsWarning() // D27: this rank's alone
		}
		var cNChannels, cNNodes int32 = -1, -1
		cCode := m.postset(cc, &cHeads[0], &cAll[0], &cNChannels, &cNNodes)
		runtime.KeepAlive(cAll)
		require.Equal(t, code, cCode, "%s: Postset rank %d code (Go: %s)", cl.name, r, text)
		cText := m.warn()
		require.Equal(t, text, cText, "%s: Postset rank %d WARN", cl.name, r)
		require.Equal(t, goHeads, cHeads, "%s: Postset rank %d nodesFirstRank", cl.name, r)
		sameComm(t, fmt.Sprintf("%s: Postset rank %d", cl.name, r), gc, cc)
		// INFO: the D23 channel-count line, printed whether or not the call
		// fails; on failure, rank 0's walks of the failing rings.
		var d23 []string
		for _, t := range m.info {
			if strings.HasSuffix(t, "(D23)") {
				d23 = append(d23, t)
			}
		}
		require.Equal(t, countLine(res), d23, "%s: Postset rank %d D23 INFO line", cl.name, r)
		var failed *ring.RingsError
		if errors.As(err, &failed) {
			require.Equal(t, failed.Walks, m.infoWith("Channel "), "%s: Postset rank %d walks", cl.name, r)
		} else if err == nil && r == 0 {
			require.Len(t, m.infoWith("Channel "), res.NChannels, "%s: Postset rank 0 Channel lines", cl.name)
		}
		v := &verdict{cCode, cText, cHeads, cNChannels}
		if err == nil {
			v.warn = "" // D27's WARN is rank-relative; the verdict is not
		}
		if first == nil {
			first = v
		} else {
			require.Equal(t, *first, *v, "%s: Postset rank %d reaches another verdict than rank 0 (D24)", cl.name, r)
		}
		if err == nil {
			require.EqualValues(t, res.NChannels, cNChannels)
			require.EqualValues(t, res.NNodes, cNNodes)
			compareNetDev(t, m, cl, r, int(gc.NChannels))
			compareBuildRings(t, m, cl, gc)
		}
		for ch := range cc.Channels {
			if p := cc.Channels[ch].Ring.UserRanks; p != 0 {
				m.free(p)
			}
		}
		// gc's userRanks are uintptrs into alloc's Go buffers: keep them
		// alive until the last read above.
		runtime.KeepAlive(alloc)
	}
}

func compareNetDev(t *testing.T, m *ref, cl *cluster, rank, nChannels int) {
	m0 := cl.nodeOf(rank)
	sys := &abi.TopoSystem{Nodes0Count: int32(cl.local[m0])}
	for _, ch := range []int32{-1, 0, 1, int32(nChannels - 1), int32(nChannels), 77} {
		goDev, cDev := int32(-5), int32(-5)
		d, err := netdev.GetNetDev(sys, int32(rank), cl.graphs[m0], ch)
		if err == nil {
			goDev = d
		}
		code, text := goResult(err)
		cCode := m.getNetDev(sys, int32(rank), cl.graphs[m0], ch, &cDev)
		require.Equal(t, code, cCode, "%s: GetNetDev rank %d channel %d", cl.name, rank, ch)
		require.Equal(t, text, m.warn())
		require.Equal(t, goDev, cDev, "%s: GetNetDev rank %d channel %d", cl.name, rank, ch)
	}
}

func compareBuildRings(t *testing.T, m *ref, cl *cluster, c *abi.Comm) {
	n, nrings := int(c.NRanks), int(c.NChannels)
	next := make([]int32, nrings*n)
	for ch := range nrings {
		u := abi.Ints(c.Channels[ch].Ring.UserRanks, n)
		for i := range n {
			next[ch*n+int(u[i])] = u[(i+1)%n]
		}
	}
	if len(next) > 1 && n > 1 {
		next[len(next)/3] = next[len(next)/2] // a corruption that usually breaks one ring
	}
	goRings, cRings := make([]int32, nrings*n), make([]int32, nrings*n)
	code, text := goResult(ring.BuildRings(nrings, int(c.Rank), n, goRings, next))
	cCode := m.buildRings(int32(nrings), &cRings[0], c.Rank, int32(n), nil, &next[0])
	require.Equal(t, code, cCode, "%s: BuildRings (Go: %s)", cl.name, text)
	require.Equal(t, text, m.warn(), "%s: BuildRings WARN", cl.name)
	require.Equal(t, goRings, cRings, "%s: BuildRings rings", cl.name)
}
