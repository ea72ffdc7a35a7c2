package simulate

import (
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nccomring/libnccomring/cmd/nccom-rings/plan"
	"github.com/nccomring/libnccomring/cmd/nccom-rings/score"
)

// engine is the built engine, or the test skips saying what installs it.
func engine(t *testing.T) string {
	t.Helper()
	if os.Getenv("NCCOMRING_BUILD") == "" {
		if abs, err := filepath.Abs("../../../build"); err == nil {
			t.Setenv("NCCOMRING_BUILD", abs)
		}
	}
	e, err := FindEngine()
	if err != nil {
		t.Skipf("skipped: %v", err)
	}
	return e
}

const nicGbps = 100
const nicBps = nicGbps * 1e9 / 8

var spray = Model{NICGbps: nicGbps}

func ratio(t *testing.T, s string) Oversubscription {
	o, err := ParseOversubscription(s)
	require.NoError(t, err)
	return o
}

// handJob is a job of nodes at leaves[m] ("spine0/" + the leaf), local
// ranks each, ranks numbered node by node in the order given by seq
// (rank k on node seq[k/local]), and rings given as rank lists; every
// rank on NIC nicOf(channel, rank).
func handJob(leaves []string, seq []int, local int, rings [][]int, nicOf func(c, r int) int) *score.Job {
	n := len(seq) * local
	j := &score.Job{NRanks: n, NNodes: len(leaves), Node: make([]int, n), Rings: rings,
		Host: make([]string, len(leaves)), Location: make([]string, len(leaves))}
	for m, l := range leaves {
		j.Host[m], j.Location[m] = fmt.Sprintf("n%d", m), "spine0/"+l
	}
	for r := range n {
		j.Node[r] = seq[r/local]
	}
	for c := range rings {
		for r := range n {
			j.NetDev = append(j.NetDev, nicOf(c, r))
		}
	}
	return j
}

func rankRing(n int) []int {
	ring := make([]int, n)
	for i := range ring {
		ring[i] = i
	}
	return ring
}

func identity(n int) []int { return rankRing(n) }

func nic0(int, int) int { return 0 }

// Closed form 1: one ring on a non-blocking tree runs at its NIC share.
// Four nodes over two leaves, a rank each, one NIC each: one channel's
// edges have a NIC each (the full rate); two channels on the same NIC
// share it (half each).
func TestClosedFormNICShare(t *testing.T) {
	e := engine(t)
	leaves := []string{"leafA", "leafB", "leafA", "leafB"}
	for channels := 1; channels <= 2; channels++ {
		rings := make([][]int, channels)
		for c := range rings {
			rings[c] = rankRing(4)
		}
		st, err := Solve(e, handJob(leaves, identity(4), 1, rings, nic0), "flat", spray, ratio(t, "1"))
		require.NoError(t, err)
		require.Len(t, st.Rates, 4*channels)
		for i, r := range st.Rates {
			assert.InEpsilon(t, nicBps/float64(channels), r, 0.01, "channels %d flow %d", channels, i)
		}
	}
}

// Closed form 2: k ring edges sharing one uplink of capacity U run at
// U/k. Eight nodes alternating between two leaves, one rank and one NIC
// each: all 8 edges cross, 4 up each leaf. At 4:1 a leaf's uplinks carry
// 4 x 100 / 4 = 100 Gbit/s: 25 each. At 8:1, 12.5.
func TestClosedFormSharedUplink(t *testing.T) {
	e := engine(t)
	leaves := []string{"leafA", "leafB", "leafA", "leafB", "leafA", "leafB", "leafA", "leafB"}
	job := handJob(leaves, identity(8), 1, [][]int{rankRing(8)}, nic0)
	for _, r := range []float64{4, 8} {
		st, err := Solve(e, job, "flat", spray, ratio(t, strconv.FormatFloat(r, 'g', -1, 64)))
		require.NoError(t, err)
		u, k := 4*nicBps/r, 4.0
		for i, rate := range st.Rates {
			assert.InEpsilon(t, u/k, rate, 0.01, "%g:1 flow %d", r, i)
		}
		b := st.Bottlenecks()
		require.NotEmpty(t, b)
		assert.Equal(t, "nic", b[0].Level)
		assert.Equal(t, "L2", b[1].Level)
		assert.InEpsilon(t, 4*nicGbps/r, b[1].UsedGbps, 0.01)
		assert.Equal(t, 4, b[1].Flows)
	}
}

// The time formula by hand: 8 ranks, one channel at 25 Gbit/s (4:1
// above): AllReduce of 8 MiB is 2 x 7 steps of 1 MiB at 3.125e9 B/s plus
// 10 us each; AllGather 7 steps. Bus bandwidth factors as nccl-tests'.
func TestSecondsByHand(t *testing.T) {
	e := engine(t)
	leaves := []string{"leafA", "leafB", "leafA", "leafB", "leafA", "leafB", "leafA", "leafB"}
	st, err := Solve(e, handJob(leaves, identity(8), 1, [][]int{rankRing(8)}, nic0), "flat", spray, ratio(t, "4"))
	require.NoError(t, err)
	const mib = 1 << 20
	assert.InEpsilon(t, 14*(10e-6+mib/3.125e9), st.Seconds("allreduce", 8*mib, 10e-6), 1e-3)
	assert.InEpsilon(t, 7*(10e-6+mib/3.125e9), st.Seconds("allgather", 8*mib, 10e-6), 1e-3)
	assert.InEpsilon(t, 14.0/8, BusFactor("allreduce", 8), 1e-12)
	assert.InEpsilon(t, 7.0/8, BusFactor("reducescatter", 8), 1e-12)
}

// The wrap edge counts: a ring of two leaves' nodes grouped (A A B B)
// crosses twice, once on the wrap edge from the last node to the first.
// At 4:1 with 2 nodes a leaf, an uplink of 2 x 100 / 4 = 50 carries one
// edge each way: 50, not the NIC's 100.
func TestWrapEdge(t *testing.T) {
	e := engine(t)
	leaves := []string{"leafA", "leafA", "leafB", "leafB"}
	st, err := Solve(e, handJob(leaves, identity(4), 1, [][]int{rankRing(4)}, nic0), "flat", spray, ratio(t, "4"))
	require.NoError(t, err)
	slices.Sort(st.Rates)
	assert.InEpsilon(t, 50e9/8, st.Rates[0], 0.01) // the two crossing edges, B->A the wrap
	assert.InEpsilon(t, 50e9/8, st.Rates[1], 0.01)
	assert.InEpsilon(t, nicBps, st.Rates[3], 0.01)
}

// Spray against static: two nodes of leafA each send to a node of leafB
// on NICs 0 and 2 of 4 (destinations 4*2+0 = 8 and 4*3+2 = 14). At 2:1
// leafA has 2 x 4 NICs / 2 = 4 uplinks of 100; D-mod-k puts 8 mod 4 = 0
// and 14 mod 4 = 2 on different uplinks (100 each), while destinations
// 8 and 12 (both NIC 0) collide on uplink 0 (50 each); spray gives 100
// to both either way.
func TestSprayAgainstStatic(t *testing.T) {
	e := engine(t)
	leaves := []string{"leafA", "leafA", "leafB", "leafB"}
	// ranks 0..3 on nodes 0..3; ring 0 -> 2 -> 1 -> 3 -> 0 on channel 0.
	ring := []int{0, 2, 1, 3}
	for _, tc := range []struct {
		name      string
		nic3      int
		static    float64 // the two A->B flows' rate, Gbit/s
		staticMin float64
	}{{"different uplinks", 2, 100, 100}, {"same uplink", 0, 50, 50}} {
		nicOf := func(_, r int) int {
			if r == 3 {
				return tc.nic3
			}
			return 0
		}
		// Node 0..3 each has 4 NICs: say so with NIC 3 on a second channel.
		job := handJob(leaves, identity(4), 1, [][]int{ring}, nicOf)
		job.Rings = append(job.Rings, ring)
		job.NetDev = append(job.NetDev, 3, 3, 3, 3)
		job.NetDev[3] = tc.nic3
		for _, static := range []bool{false, true} {
			m := spray
			m.Static = static
			st, err := Solve(e, job, "flat", m, ratio(t, "2"))
			require.NoError(t, err)
			// flows of channel 0 in ring order: 0->2 (A->B), 2->1 (B->A),
			// 1->3 (A->B), 3->0 (B->A).
			want := 100.0
			if static {
				want = tc.static
			}
			assert.InEpsilon(t, want*1e9/8, st.Rates[0], 0.01, "%s static=%v flow 0->2", tc.name, static)
			assert.InEpsilon(t, want*1e9/8, st.Rates[2], 0.01, "%s static=%v flow 1->3", tc.name, static)
		}
	}
}

// Done when 2 (issue 38): D25's example (testdata/d25, DECISIONS.md D25),
// 256 MiB, spray, flat: the rank order's busbw at most 0.65 x the
// network order's at 2:1, within 10% at 1:1; the network order's varies
// less than 10% from 1:1 to 4:1; the output lists the algorithm and
// every guessed parameter.
func TestD25DoneWhen(t *testing.T) {
	e := engine(t)
	hosts := []string{"trn001", "trn002", "trn003", "trn004", "trn005", "trn006", "trn007", "trn008"}
	var locs []string
	for m := range hosts {
		locs = append(locs, "spine0/leaf"+string(rune('A'+m%2)))
	}
	cl := plan.Cluster{Hosts: hosts, Locations: locs, RanksPerNode: 4}
	var ords []Order
	for _, o := range []string{"rank", "network"} {
		res, err := plan.Rings(cl, o == "network")
		require.NoError(t, err)
		ords = append(ords, Order{Name: o, Job: res.Job})
	}
	opt := Options{Model: Model{NICGbps: 100, LatencySeconds: 15e-6}, Algorithms: []string{"flat"},
		Bytes: []int64{256 << 20}, Engine: e}
	for _, s := range []string{"1", "2", "4"} {
		opt.Oversubscriptions = append(opt.Oversubscriptions, ratio(t, s))
	}
	rep, err := Simulate(ords, opt)
	require.NoError(t, err)
	busbw := map[string]float64{}
	for _, p := range rep.Predictions {
		assert.Equal(t, "flat", p.Algorithm)
		if p.Collective == "allreduce" {
			busbw[p.Order+" "+p.Oversubscription] = p.BusbwGbps
		}
	}
	t.Logf("AllReduce busbw, Gbit/s: %v", busbw)
	assert.LessOrEqual(t, busbw["rank 2"], 0.65*busbw["network 2"])
	assert.InEpsilon(t, busbw["network 1"], busbw["rank 1"], 0.10)
	for _, s := range []string{"2", "4"} {
		assert.InEpsilon(t, busbw["network 1"], busbw["network "+s], 0.10)
	}
	said := strings.Join(rep.Assumptions, "\n")
	for _, want := range []string{"100 Gbit/s", "15 us", "spray", "intra-node", "oversubscription"} {
		assert.Contains(t, said, want)
	}
}

// smpiCase is a cluster for the SMPI comparison: each node's leaf, in
// rank order, local ranks each, one NIC, the uplinks at ratio r.
type smpiCase struct {
	name   string
	leaves []string
	local  int
	r      float64
	static bool
}

// TestAgainstSMPI: the ratio of the time of the rank order (the hostfile
// as given) to the network order's (the nodes grouped by leaf) predicted
// by the engine, against the same ratio of SMPI's own ring AllReduce
// (smpi/allreduce:lr: a logical ring ReduceScatter, then AllGather, in
// rank order) on the same tree, SMPI's factors 1, within 10%. Issue 38:
// D25's example at 2:1 and 4:1, and an uneven 3-leaf case with an odd
// node count; and D25's at 2:1 with static routing, where the rank
// order's four crossings out of a leaf all go to odd nodes and so, by
// D-mod-k over the leaf's 2 uplinks, share one of them.
func TestAgainstSMPI(t *testing.T) {
	e := engine(t)
	smpicc, err1 := exec.LookPath("smpicc")
	smpirun, err2 := exec.LookPath("smpirun")
	if err1 != nil || err2 != nil {
		t.Skip("skipped: smpicc or smpirun not found (Debian's libsimgrid-dev installs them)")
	}
	dir := t.TempDir()
	prog := filepath.Join(dir, "smpi_allreduce")
	out, err := exec.Command(smpicc, "-O1", "-o", prog, "testdata/smpi_allreduce.c").CombinedOutput()
	require.NoError(t, err, "%s", out)
	ab := []string{"leafA", "leafB"}
	d25 := slices.Concat(ab, ab, ab, ab)
	uneven := []string{"leafA", "leafB", "leafC", "leafA", "leafB", "leafC", "leafA", "leafB", "leafA"}
	for _, c := range []smpiCase{{"d25 2:1", d25, 4, 2, false}, {"d25 4:1", d25, 4, 4, false},
		{"uneven 3 leaves 2:1", uneven, 2, 2, false}, {"d25 2:1 static", d25, 4, 2, true}} {
		t.Run(c.name, func(t *testing.T) {
			grouped := identity(len(c.leaves))
			slices.SortStableFunc(grouped, func(a, b int) int { return strings.Compare(c.leaves[a], c.leaves[b]) })
			var model, smpi [2]float64
			for i, seq := range [][]int{identity(len(c.leaves)), grouped} {
				n := len(seq) * c.local
				job := handJob(c.leaves, seq, c.local, [][]int{rankRing(n)}, nic0)
				m := spray
				m.Static = c.static
				st, err := Solve(e, job, "flat", m, ratio(t, strconv.FormatFloat(c.r, 'g', -1, 64)))
				require.NoError(t, err)
				const bytes = 4 << 20
				model[i] = st.Seconds("allreduce", bytes, 0)
				smpi[i] = runSMPI(t, smpirun, prog, filepath.Join(dir, fmt.Sprintf("%d", i)), c, seq, bytes)
			}
			t.Logf("rank/network time: engine %.3f (%.4g/%.4g s), SMPI %.3f (%.4g/%.4g s)",
				model[0]/model[1], model[0], model[1], smpi[0]/smpi[1], smpi[0], smpi[1])
			assert.InEpsilon(t, smpi[0]/smpi[1], model[0]/model[1], 0.10)
			if c.static { // by hand: 4 flows on one 100 Gbit/s uplink against a NIC of its own
				assert.InEpsilon(t, 4.0, model[0]/model[1], 0.01)
			}
		})
	}
}

// runSMPI runs the AllReduce with every rank a host of its own: ranks on
// one node share its NIC's transmit and receive links and a bus between
// them that is never the bottleneck; a leaf's uplinks are one link each
// way of its NICs' rate over c.r (spray), or with c.static that many
// uplinks of one NIC's rate each way, the one to node b's leaf being
// b mod their count (D-mod-k, nodes numbered as the job numbers them,
// one NIC each). The hostfile puts rank k on node seq[k/local].
func runSMPI(t *testing.T, smpirun, prog, dir string, c smpiCase, seq []int, bytes int) float64 {
	t.Helper()
	require.NoError(t, os.MkdirAll(dir, 0o755))
	perLeaf := map[string]int{}
	for _, l := range c.leaves {
		perLeaf[l]++
	}
	var x strings.Builder
	x.WriteString("<?xml version='1.0'?>\n<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n<platform version=\"4.1\">\n<zone id=\"world\" routing=\"Full\">\n")
	n := len(seq) * c.local
	host := func(r int) string { return fmt.Sprintf("r%d", r) }
	for r := range n {
		fmt.Fprintf(&x, "<host id=%q speed=\"1Gf\"/>\n", host(r))
	}
	for m := range c.leaves {
		fmt.Fprintf(&x, "<link id=\"tx%d\" bandwidth=\"%gBps\" latency=\"0\"/>\n<link id=\"rx%d\" bandwidth=\"%gBps\" latency=\"0\"/>\n", m, nicBps, m, nicBps)
		fmt.Fprintf(&x, "<link id=\"bus%d\" bandwidth=\"1e15Bps\" latency=\"0\"/>\n", m)
	}
	leaves := slices.Sorted(func(yield func(string) bool) {
		for l := range perLeaf {
			if !yield(l) {
				return
			}
		}
	})
	uplinks := map[string]int{}
	for _, l := range leaves {
		bw := float64(perLeaf[l]) * nicBps / c.r
		uplinks[l] = 1
		if c.static {
			uplinks[l], bw = int(float64(perLeaf[l])/c.r), nicBps
		}
		for k := range uplinks[l] {
			fmt.Fprintf(&x, "<link id=\"up%s%d\" bandwidth=\"%gBps\" latency=\"0\"/>\n<link id=\"down%s%d\" bandwidth=\"%gBps\" latency=\"0\"/>\n", l, k, bw, l, k, bw)
		}
	}
	node := func(r int) int { return seq[r/c.local] }
	for a := range n {
		for b := range n {
			if a == b {
				continue
			}
			ma, mb := node(a), node(b)
			var links []string
			switch {
			case ma == mb:
				links = []string{fmt.Sprintf("bus%d", ma)}
			case c.leaves[ma] == c.leaves[mb]:
				links = []string{fmt.Sprintf("tx%d", ma), fmt.Sprintf("rx%d", mb)}
			default:
				up := fmt.Sprintf("up%s%d", c.leaves[ma], mb%uplinks[c.leaves[ma]])
				down := fmt.Sprintf("down%s%d", c.leaves[mb], mb%uplinks[c.leaves[mb]])
				links = []string{fmt.Sprintf("tx%d", ma), up, down, fmt.Sprintf("rx%d", mb)}
			}
			fmt.Fprintf(&x, "<route src=%q dst=%q symmetrical=\"NO\">", host(a), host(b))
			for _, l := range links {
				fmt.Fprintf(&x, "<link_ctn id=%q/>", l)
			}
			x.WriteString("</route>\n")
		}
	}
	x.WriteString("</zone>\n</platform>\n")
	platform, hostfile := filepath.Join(dir, "platform.xml"), filepath.Join(dir, "hostfile")
	require.NoError(t, os.WriteFile(platform, []byte(x.String()), 0o644))
	var hf strings.Builder
	for r := range n {
		hf.WriteString(host(r) + "\n")
	}
	require.NoError(t, os.WriteFile(hostfile, []byte(hf.String()), 0o644))
	cmd := exec.Command(smpirun, "-np", strconv.Itoa(n), "-platform", platform, "-hostfile", hostfile,
		"--cfg=smpi/allreduce:lr", "--cfg=smpi/bw-factor:0:1", "--cfg=smpi/lat-factor:0:1", // SIZE:FACTOR, from 0 bytes up
		"--cfg=network/weight-S:0", "--cfg=network/crosstraffic:0", "--cfg=network/TCP-gamma:0",
		"--cfg=smpi/simulate-computation:no", "--log=root.thresh:warning", prog, strconv.Itoa(bytes))
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	m := regexp.MustCompile(`seconds ([0-9.e+-]+)`).FindSubmatch(out)
	require.NotNil(t, m, "%s", out)
	s, err := strconv.ParseFloat(string(m[1]), 64)
	require.NoError(t, err)
	return s
}

// The engine is max-min fair: on D25's rank order at 2:1 with static
// routing (flows of many different rates), every flow's rate equals
// progressive filling's, computed here independently: raise every
// unfixed flow's rate together, fix the flows of the link that fills
// first, repeat.
func TestEngineIsMaxMinFair(t *testing.T) {
	e := engine(t)
	hosts := []string{"a1", "b1", "a2", "b2", "a3", "b3", "c1", "a4", "c2"}
	locs := []string{"s0/A", "s0/B", "s0/A", "s0/B", "s0/A", "s0/B", "s1/C", "s0/A", "s1/C"}
	res, err := plan.Rings(plan.Cluster{Hosts: hosts, Locations: locs, RanksPerNode: 4}, false)
	require.NoError(t, err)
	m := spray
	m.Static = true
	o := ratio(t, "L1:4,L2:2")
	n, err := buildNetwork(res.Job, m, o)
	require.NoError(t, err)
	flows := flatFlows(res.Job, n)
	got, err := solve(e, n, flows)
	require.NoError(t, err)

	rate := make([]float64, len(flows))
	fixed := make([]bool, len(flows))
	left := make([]float64, len(n.links))
	for i, l := range n.links {
		left[i] = l.bps
	}
	for {
		share, link := math.Inf(1), -1
		for l := range n.links {
			k := 0
			for f, fl := range flows {
				if !fixed[f] && slices.Contains(fl.links, l) {
					k++
				}
			}
			if k > 0 && left[l]/float64(k) < share {
				share, link = left[l]/float64(k), l
			}
		}
		if link < 0 {
			break
		}
		for f, fl := range flows {
			if !fixed[f] && slices.Contains(fl.links, link) {
				fixed[f], rate[f] = true, share
				for _, l := range fl.links {
					left[l] -= share
				}
			}
		}
	}
	distinct := map[float64]bool{}
	for f := range flows {
		assert.InEpsilon(t, rate[f], got.rate[f], 1e-6, "flow %d: want %g got %g %v", f, rate[f], got.rate[f], fl(n, flows[f]))
		distinct[math.Round(rate[f])] = true
	}
	assert.Greater(t, len(distinct), 2, "a case with several rates")
}

func fl(n *network, f flow) []string {
	var s []string
	for _, l := range f.links {
		s = append(s, fmt.Sprintf("%s %.4g", n.links[l].name, n.links[l].bps))
	}
	return s
}
