// Package refdiff compares the pure-Go packages (ring, netdev, kanga,
// nodeorder) with the independent C reference model, build/libnccomref.so,
// loaded with purego (no cgo): the quick differential check of issue 3, run
// by `go test` without the C harness. The Go library itself is never loaded
// into this process (one Go runtime per process). make test sets
// NCCOMRING_BUILD to the build directory.
//
// The model reads NCCOM_RING_PLATFORM and NCCOM_RING_POD_ORDER once per
// process, so this process runs on TRN3-SwitchV1 with NCCOM_RING_POD_ORDER
// unset, and TestOtherProcessSettings runs the comparison again in two
// child processes of this test binary: generic, and generic with
// NCCOM_RING_POD_ORDER=node (REFDIFF_PLATFORM, REFDIFF_POD_ORDER). D25's
// variables, which the model reads at every Preset, are set per rank
// before each of its Presets, and the same settings go to ring.Preset as
// ring.PresetOptions.
package refdiff

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"github.com/nccomring/libnccomring/internal/quote"
	"math/rand/v2"
	"os"
	"os/exec"
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
	"github.com/nccomring/libnccomring/nodeorder"
	"github.com/nccomring/libnccomring/ring"
)

// ref is the reference model's C ABI, bound with purego.
type ref struct {
	preset     func(comm *abi.Comm, graph *abi.TopoGraph, frag *abi.TopoRanks) int32
	postset    func(comm *abi.Comm, heads *int32, all **abi.TopoRanks, nChannels, nNodes *int32) int32
	buildRings func(nrings int32, rings *int32, rank, nranks int32, prev, next *int32) int32
	getNetDev  func(sys *abi.TopoSystem, rank int32, graph *abi.TopoGraph, channel int32, dev *int32) int32
	free       func(p uintptr)
	setenv     func(name, value string, overwrite int32) int32
	unsetenv   func(name string) int32
	log        *bufio.Reader // the model's NCCL_DEBUG_FILE
	info       []string      // INFO texts read by the last warn()
	platform   kanga.Platform
	podNode    bool // NCCOM_RING_POD_ORDER=node in this process
}

// setVar sets (or, for "", unsets) a variable in C's environment, where the
// model reads it.
func (m *ref) setVar(name, value string) {
	if value == "" {
		m.unsetenv(name)
	} else {
		m.setenv(name, value, 1)
	}
}

var model *ref

// load binds the reference model once. Its environment is set through
// libc's setenv (without cgo, os.Setenv does not reach C's environ) before
// its first call: WARN and INFO lines (subsystem INIT) to a file this test
// reads; TRN3-SwitchV1, so the kangaRing paths are compared too, unless
// REFDIFF_PLATFORM=generic; NCCOM_RING_POD_ORDER from REFDIFF_POD_ORDER.
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
	m := &ref{platform: kanga.SwitchV1}
	purego.RegisterLibFunc(&m.setenv, libc, "setenv")
	purego.RegisterLibFunc(&m.unsetenv, libc, "unsetenv")
	logPath := filepath.Join(os.TempDir(), fmt.Sprintf("nccomring-refdiff-%d.log", os.Getpid()))
	m.setVar("NCCL_DEBUG", "INFO")
	m.setVar("NCCL_DEBUG_SUBSYS", "INIT")
	m.setVar("NCCL_DEBUG_FILE", logPath)
	platform := "trn3-switchv1"
	if os.Getenv("REFDIFF_PLATFORM") == "generic" {
		platform, m.platform = "generic", kanga.Generic
	}
	m.setVar("NCCOM_RING_PLATFORM", platform)
	m.podNode = os.Getenv("REFDIFF_POD_ORDER") == "node"
	m.setVar("NCCOM_RING_POD_ORDER", os.Getenv("REFDIFF_POD_ORDER"))
	m.setVar("NCCOM_RING_NODE_ORDER", "")
	m.setVar("NCCOM_RING_LOCATION", "")

	lib, err := purego.Dlopen(filepath.Join(dir, "libnccomref.so"), purego.RTLD_NOW|purego.RTLD_LOCAL)
	require.NoError(t, err, "build it with make build/libnccomref.so")
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
	// Both ends stay open for the whole process (every test reads the
	// model's lines through m.log), so the file goes at once: a cleanup of
	// the first test to load would leave the later ones reading nothing.
	os.Remove(logPath)
	m.log = bufio.NewReader(f)
	m.warn()
	model = m
	return m
}

// warn returns the text of the WARN lines the model printed since the last
// call, without the "host:pid:tid [rank] NCCL WARN " prefix; the INFO texts
// of the same lines are left in m.info. (The model writes D21's line form
// only: it has no D26 style to choose.)
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

// cluster is a generated case: node sizes, per-node graphs, kangaRing, and
// D25's settings per rank.
type cluster struct {
	nRanks   int
	first    []int
	local    []int
	graphs   []*abi.TopoGraph
	kanga    int32
	pod      int32                      // comm->enablePod on every rank
	network  []bool                     // [nRanks] NCCOM_RING_NODE_ORDER=network
	location []string                   // [nRanks] NCCOM_RING_LOCATION ("": unset)
	fault    func(all []*abi.TopoRanks) // applied to the gathered fragments
	name     string
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
// orders and NICs, a fragment fault now and then; and, drawn last, D25's
// settings: NCCOM_RING_NODE_ORDER=network on every rank (or all but one)
// in a third of the clusters, each node's location from a small tree
// (some ranks another node's, or none), every node with the same NICs most
// of the time; enablePod now and then; a record fault now and then.
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
	cl.network, cl.location = make([]bool, cl.nRanks), make([]string, cl.nRanks)
	if rng.IntN(3) == 0 {
		locs := treeLocations(rng, nodes)
		odd, mixed, sameNICs := -1, rng.IntN(4) == 0, rng.IntN(5) != 0
		if rng.IntN(5) == 0 {
			odd = rng.IntN(cl.nRanks)
		}
		for r := range cl.nRanks {
			cl.network[r] = r != odd
			cl.location[r] = locs[cl.nodeOf(r)]
			if mixed && rng.IntN(3) == 0 {
				cl.location[r] = []string{"", locs[rng.IntN(nodes)]}[rng.IntN(2)]
			}
		}
		if sameNICs {
			for _, g := range cl.graphs[1:] {
				g.Inter = cl.graphs[0].Inter
			}
		}
		cl.name += fmt.Sprintf(", network on every rank but %d (mixed locations %v, same NICs %v)", odd, mixed, sameNICs)
	} else if rng.IntN(10) == 0 {
		locs := treeLocations(rng, nodes)
		for r := range cl.nRanks {
			cl.location[r] = locs[cl.nodeOf(r)]
		}
		cl.name += ", locations only"
	}
	if rng.IntN(8) == 0 {
		cl.pod = 1
		cl.name += ", enablePod"
	}
	if cl.fault == nil && rng.IntN(10) == 0 {
		r, b, zero := rng.IntN(cl.nRanks), rng.IntN(64), rng.IntN(2) == 0
		cl.name += fmt.Sprintf(", record fault on rank %d (zero %v, byte %d)", r, zero, b)
		cl.fault = func(all []*abi.TopoRanks) {
			at := unsafe.Offsetof(abi.TopoRanks{}.TreeToChild1) + 16*4 // the record, +832 (D25)
			rec := bytesOf(all[r])[at : at+64]
			if zero {
				copy(rec[:4], []byte{0, 0, 0, 0})
			} else {
				rec[b] ^= 0xff
			}
		}
	}
	return cl
}

// treeLocations gives each node a location from a small random tree: depth
// 1-3 (now and then up to 8), 1-3 branches a level, the same names under
// different parents, now and then a path cut short.
func treeLocations(rng *rand.Rand, nodes int) []string {
	level := []string{"spine", "leaf", "rack", "row", "pod", "hall", "sw", "tor"}
	depth, branch := 1+rng.IntN(3), 1+rng.IntN(3)
	if rng.IntN(8) == 0 {
		depth = 1 + rng.IntN(8)
	}
	out := make([]string, nodes)
	for m := range out {
		d := depth
		if rng.IntN(6) == 0 {
			d = 1 + rng.IntN(depth)
		}
		names := make([]string, d)
		for l := range names {
			names[l] = fmt.Sprintf("%s%d", level[l], rng.IntN(branch))
		}
		out[m] = strings.Join(names, "/")
	}
	return out
}

func (cl *cluster) comm(rank int) *abi.Comm {
	c := new(abi.Comm)
	c.Rank, c.NRanks = int32(rank), int32(cl.nRanks)
	c.LocalRanks = int32(cl.local[cl.nodeOf(rank)])
	c.NKangaRingChannels = cl.kanga
	c.EnablePod = cl.pod
	for k := range c.KangaRing {
		for i := range c.KangaRing[k] {
			c.KangaRing[k][i] = int32(1000*rank + 100*k + i)
		}
	}
	return c
}

// preset runs rank r's Preset in both: the model with the rank's variables
// set in C's environment, ring.Preset with the same settings as options.
func (cl *cluster) preset(t *testing.T, m *ref, r int, gc, cc *abi.Comm, goFrag, cFrag *abi.TopoRanks) (error, int32) {
	t.Helper()
	g := cl.graphs[cl.nodeOf(r)]
	opt := ring.PresetOptions{Platforms: kanga.Fixed(m.platform), Network: cl.network[r], PodNode: m.podNode}
	if cl.location[r] != "" {
		loc, err := nodeorder.Parse(cl.location[r])
		require.NoError(t, err, "%s: rank %d's location", cl.name, r)
		opt.Location = loc
	}
	order := ""
	if cl.network[r] {
		order = "network"
	}
	m.setVar("NCCOM_RING_NODE_ORDER", order)
	m.setVar("NCCOM_RING_LOCATION", cl.location[r])
	err := ring.Preset(gc, g, goFrag, opt)
	cCode := m.preset(cc, g, cFrag)
	m.setVar("NCCOM_RING_NODE_ORDER", "")
	m.setVar("NCCOM_RING_LOCATION", "")
	return err, cCode
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

// orderSeen counts what D25's decision did in the clusters compared (rank
// 0's Postset), so that a run shows what it covered.
var orderSeen struct{ applied, warned, info, pod int }

func TestGoPackagesMatchReferenceModel(t *testing.T) {
	m := load(t)
	rng := rand.New(rand.NewPCG(2026, 11))
	orderSeen.applied, orderSeen.warned, orderSeen.info, orderSeen.pod = 0, 0, 0, 0
	for i := range 300 {
		cl := generate(rng, i)
		compareCluster(t, m, cl)
	}
	t.Logf("platform %+v, NCCOM_RING_POD_ORDER=node %v: node order applied in %d clusters, a D25 WARN in %d, "+
		"a policy not applied (INFO) in %d, pods stitched in node order in %d",
		m.platform, m.podNode, orderSeen.applied, orderSeen.warned, orderSeen.info, orderSeen.pod)
	if !m.platform.SwitchV1 {
		require.Positive(t, orderSeen.applied, "no cluster applied the node order")
		require.Positive(t, orderSeen.warned, "no cluster printed a D25 WARN")
	}
	if m.podNode {
		require.Positive(t, orderSeen.pod, "no cluster stitched pods in node order")
	}
}

// TestOtherProcessSettings runs TestGoPackagesMatchReferenceModel again in
// child processes with the settings the model reads once per process: the
// generic platform (where D25's order applies), and with it
// NCCOM_RING_POD_ORDER=node (pods stitched in node order when every record
// says so, D27).
func TestOtherProcessSettings(t *testing.T) {
	if os.Getenv("REFDIFF_PLATFORM") != "" {
		t.Skip("a child process of TestOtherProcessSettings")
	}
	load(t) // skips without NCCOMRING_BUILD
	for _, pod := range []string{"", "node"} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestGoPackagesMatchReferenceModel$", "-test.count=1")
		cmd.Env = append(os.Environ(), "REFDIFF_PLATFORM=generic", "REFDIFF_POD_ORDER="+pod)
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "generic platform, NCCOM_RING_POD_ORDER=%q:\n%s", pod, out)
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// nonEmpty returns the non-empty texts of lines.
func nonEmpty(lines ...string) []string {
	var out []string
	for _, l := range lines {
		if l != "" {
			out = append(out, l)
		}
	}
	return out
}

func compareCluster(t *testing.T, m *ref, cl *cluster) {
	n := cl.nRanks
	platform := kanga.Fixed(m.platform)
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
		err, cCode := cl.preset(t, m, r, gc, cc, &goFrags[r], &cFrags[r])
		code, text := goResult(err)
		require.Equal(t, code, cCode, "%s: Preset rank %d code", cl.name, r)
		require.Equal(t, text, m.warn(), "%s: Preset rank %d WARN", cl.name, r)
		require.Equal(t, goFrags[r], cFrags[r], "%s: Preset rank %d fragment", cl.name, r)
		sameComm(t, cl.name+": Preset", gc, cc)
		// D23: the four ring arrays hold -1 from the graph's channel count
		// on; the tree region is not written (D5) but for the record (D25,
		// D28: whole on every call).
		f := &cFrags[r]
		for c := int(g.NChannels); cCode == 0 && c < layout.MaxChannels; c++ {
			require.Equal(t, [4]int32{-1, -1, -1, -1}, [4]int32{f.RingRecv[c], f.RingSend[c], f.RingPrev[c], f.RingNext[c]},
				"%s: Preset rank %d channel %d past graph->nChannels", cl.name, r, c)
		}
		require.Equal(t, canary.TreeToParent, f.TreeToParent, "%s: Preset rank %d tree region", cl.name, r)
		require.Equal(t, canary.TreeToChild0, f.TreeToChild0, "%s: Preset rank %d tree region", cl.name, r)
		require.Equal(t, canary.TreeToChild1[:16], f.TreeToChild1[:16], "%s: Preset rank %d tree region", cl.name, r)
		// D28: the record is written whole on every call.
		if cCode == 0 {
			require.EqualValues(t, uint32(0xD25A11CE), uint32(f.TreeToChild1[16]), "%s: Preset rank %d record magic", cl.name, r)
			require.EqualValues(t, 2, f.TreeToChild1[17], "%s: Preset rank %d record version", cl.name, r)
			require.EqualValues(t, r, f.TreeToChild1[18], "%s: Preset rank %d record rank", cl.name, r)
			require.EqualValues(t, g.NChannels, f.TreeToChild1[19]>>16&0x3f, "%s: Preset rank %d record channel count", cl.name, r)
		}
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
	// same verdict on the same fragments (D24): the model's code, WARN
	// (but D27's own-graph WARN), nodes and channel count are the same on
	// each.
	type verdict struct {
		code      int32
		warn      string
		heads     []int32
		nChannels int32
	}
	var first *verdict
	for _, r := range []int{0, n - 1, n / 2} {
		gc, cc := cl.comm(r), cl.comm(r)
		var scratch abi.TopoRanks
		err, cCode := cl.preset(t, m, r, gc, cc, &scratch, &scratch)
		require.NoError(t, err)
		require.Zero(t, cCode)
		m.warn()
		goHeads, cHeads := make([]int32, n), make([]int32, n)
		alloc := &goAlloc{}
		res, err := ring.Postset(gc, goHeads, goAll, ring.PostsetOptions{Platforms: platform, Alloc: alloc})
		code, text := goResult(err)
		shared := text
		if err == nil {
			// D27's own-graph WARN (this rank's alone) comes first, then
			// D25's (every rank's).
			text = strings.Join(nonEmpty(res.OwnChannelsWarning(), res.Order.Warn), "\n")
			shared = res.Order.Warn
		}
		var cNChannels, cNNodes int32 = -1, -1
		cCode = m.postset(cc, &cHeads[0], &cAll[0], &cNChannels, &cNNodes)
		runtime.KeepAlive(cAll)
		require.Equal(t, code, cCode, "%s: Postset rank %d code (Go: %s)", cl.name, r, text)
		cText := m.warn()
		require.Equal(t, text, cText, "%s: Postset rank %d WARN", cl.name, r)
		require.Equal(t, goHeads, cHeads, "%s: Postset rank %d nodesFirstRank", cl.name, r)
		sameComm(t, fmt.Sprintf("%s: Postset rank %d", cl.name, r), gc, cc)
		// INFO: the D23 channel-count line, printed whether or not the call
		// fails; on failure, rank 0's walks of the failing rings; on
		// success D25's lines (a policy not applied, every rank; the
		// sequence and its crossings, rank 0) and D15's pod line.
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
		if err == nil {
			want := []string{res.Order.Info}
			if r == 0 {
				want = append(want, res.Order.Summary)
				orderSeen.applied += btoi(res.Order.Network)
				orderSeen.warned += btoi(res.Order.Warn != "")
				orderSeen.info += btoi(res.Order.Info != "")
				orderSeen.pod += btoi(res.PodFallback)
			}
			require.Equal(t, nonEmpty(want...), m.infoWith("ncclTopoPostset: NCCOM_RING_NODE_ORDER=network"),
				"%s: Postset rank %d node-order INFO lines", cl.name, r)
			require.Equal(t, res.PodFallback, len(m.infoWith("ncclTopoPostset: enablePod set on")) == 1,
				"%s: Postset rank %d pod INFO line", cl.name, r)
		}
		v := &verdict{cCode, shared, cHeads, cNChannels}
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
	code, text := goResult(ring.BuildRings(nrings, int(c.Rank), n, goRings, next, nil))
	cCode := m.buildRings(int32(nrings), &cRings[0], c.Rank, int32(n), nil, &next[0])
	require.Equal(t, code, cCode, "%s: BuildRings (Go: %s)", cl.name, text)
	require.Equal(t, text, m.warn(), "%s: BuildRings WARN", cl.name)
	require.Equal(t, goRings, cRings, "%s: BuildRings rings", cl.name)
}

// TestVariablesMatchReferenceModel gives the model's Preset one value of
// NCCOM_RING_LOCATION or NCCOM_RING_NODE_ORDER at a time (each value read
// twice: its WARN comes once) and compares the record it writes with
// ring.Preset's for the value as nodeorder.Parse reads it, and its WARN
// with docs/errors.md's text around the quoted value (the location's
// problem as nodeorder.Parse words it; errors.md leaves it open). Values
// that are not locations: empty names, too long, bytes outside the set,
// too many names, control bytes and UTF-8 (quoted as internal/quote does:
// every byte outside printable ASCII as \xHH).
func TestVariablesMatchReferenceModel(t *testing.T) {
	m := load(t)
	g := &abi.TopoGraph{Pattern: layout.PatternRing, NChannels: 2}
	g.Inter[0], g.Inter[1], g.Inter[2], g.Inter[3] = 3, 1, 4, 1
	locations := []string{
		"spine0/leafA", "a", "1/2/3/4/5/6/7/8", "A-z.0_9:x", strings.Repeat("x", 64), "spine0//leafA", "/leafA",
		"spine0/", "/", "leaf?A", "1/2/3/4/5/6/7/8/9", "1/2/3/4/5/6/7/8/9/", "?/1/2/3/4/5/6/7/8",
		strings.Repeat("x", 65), strings.Repeat("x", 64) + "?", "a b", "a\tb", "a\"b\\c", "caf\u00e9", "a/\u00e9/\x80",
		"\xed\xa0\x80", "a\x7fb\x01\ufffd\U0001f600", "spine0/leafB",
	}
	orders := []string{"network", "Network", "rank", "RANK", "", "netwrok", "net\nwork", "caf\u00e9", "\xff", "network "}
	preset := func(order, location string) (abi.TopoRanks, string) {
		var f abi.TopoRanks
		c := &abi.Comm{NRanks: 1, LocalRanks: 1}
		m.setVar("NCCOM_RING_NODE_ORDER", order)
		m.setVar("NCCOM_RING_LOCATION", location)
		require.Zero(t, m.preset(c, g, &f))
		m.setVar("NCCOM_RING_NODE_ORDER", "")
		m.setVar("NCCOM_RING_LOCATION", "")
		return f, m.warn()
	}
	goPreset := func(opt ring.PresetOptions) abi.TopoRanks {
		var f abi.TopoRanks
		opt.Platforms, opt.PodNode = kanga.Fixed(m.platform), m.podNode
		require.NoError(t, ring.Preset(&abi.Comm{NRanks: 1, LocalRanks: 1}, g, &f, opt))
		return f
	}
	for _, v := range locations {
		loc, err := nodeorder.Parse(v)
		want := ""
		if err != nil {
			want = "NCCOM_RING_LOCATION=" + err.Error() + "; this rank has no location"
		}
		for read := range 2 {
			f, text := preset("rank", v)
			if read == 1 {
				want = "" // the same value again: no WARN
			}
			require.Equal(t, want, text, "NCCOM_RING_LOCATION=%q, read %d", v, read+1)
			require.Equal(t, goPreset(ring.PresetOptions{Location: loc}), f, "NCCOM_RING_LOCATION=%q: fragment", v)
		}
	}
	for _, v := range orders {
		network, want := strings.EqualFold(v, "network"), ""
		if !network && v != "" && !strings.EqualFold(v, "rank") {
			want = "NCCOM_RING_NODE_ORDER=" + quote.String(v) + " is not rank or network; stitching this rank's nodes in rank order"
		}
		for read := range 2 {
			f, text := preset(v, "")
			if read == 1 {
				want = ""
			}
			require.Equal(t, want, text, "NCCOM_RING_NODE_ORDER=%q, read %d", v, read+1)
			require.Equal(t, goPreset(ring.PresetOptions{Network: network}), f, "NCCOM_RING_NODE_ORDER=%q: fragment", v)
		}
	}
}
