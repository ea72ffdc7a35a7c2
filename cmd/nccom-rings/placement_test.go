package main

import (
	"fmt"
	"math/rand/v2"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nccomring/libnccomring/abi"
	"github.com/nccomring/libnccomring/cmd/nccom-rings/plan"
	"github.com/nccomring/libnccomring/cmd/nccom-rings/score"
	"github.com/nccomring/libnccomring/cmd/nccom-rings/verify"
	"github.com/nccomring/libnccomring/internal/cli"
	"github.com/nccomring/libnccomring/kanga"
	"github.com/nccomring/libnccomring/layout"
	"github.com/nccomring/libnccomring/nodeorder"
	"github.com/nccomring/libnccomring/ring"
	"github.com/nccomring/libnccomring/ringdump"
)

// Issue 33, "One placement rule" (D28): the library's Postset and every
// tool (score, verify, plan) place nodes and order them alike. Each is
// checked against a model written here from D28's and D25's text, on
// strings (names, not hashes), that shares no code with nodeorder.

// modelPlace is D28's rule: the value most of a node's ranks carry, ""
// (no location) a value too; a tie goes to the head's value when it is
// among the tied, else to the tied value the lowest rank carries first.
// ranks is the node's ranks in rank order.
func modelPlace(loc []string, ranks []int, head int) string {
	count := map[string]int{}
	first := map[string]int{}
	most := 0
	for _, r := range ranks {
		count[loc[r]]++
		most = max(most, count[loc[r]])
		if _, ok := first[loc[r]]; !ok {
			first[loc[r]] = r
		}
	}
	if count[loc[head]] == most {
		return loc[head]
	}
	best, bestFirst := "", len(loc)
	for v, c := range count {
		if c == most && first[v] < bestFirst {
			best, bestFirst = v, first[v]
		}
	}
	return best
}

// modelKey is node location l's group at level (0-based): its first
// level+1 names, or, when it has fewer, its whole path marked as ended
// there (a shorter path is a group of its own below its depth); "" for
// no location.
func modelKey(l string, level int) string {
	if l == "" {
		return ""
	}
	names := strings.Split(l, "/")
	if len(names) <= level {
		return l + "/<end>"
	}
	return strings.Join(names[:level+1], "/")
}

// modelSequence is D25's sequence over node locations: the located nodes
// grouped level by level from the top, each group contiguous, groups and
// the nodes inside one in order of their lowest index; then the nodes
// without a location in index order.
func modelSequence(node []string) []int {
	var located, none []int
	for m, l := range node {
		if l == "" {
			none = append(none, m)
		} else {
			located = append(located, m)
		}
	}
	return append(modelGroup(node, located, 0), none...)
}

func modelGroup(node []string, nodes []int, level int) []int {
	if len(nodes) <= 1 || level == nodeorder.MaxLevels {
		return nodes
	}
	var keys []string // in order of their lowest node
	members := map[string][]int{}
	for _, m := range nodes {
		k := modelKey(node[m], level)
		if _, ok := members[k]; !ok {
			keys = append(keys, k)
		}
		members[k] = append(members[k], m)
	}
	var out []int
	for _, k := range keys {
		out = append(out, modelGroup(node, members[k], level+1)...)
	}
	return out
}

// modelCrossings is, per level, the cyclic sequence's edges between
// different groups and the number of groups (the nodes without a location
// one more), over the deepest node location's levels.
func modelCrossings(node []string, seq []int) (crossings, groups []int) {
	depth := 0
	for _, l := range node {
		if l != "" {
			depth = max(depth, len(strings.Split(l, "/")))
		}
	}
	for level := range depth {
		distinct := map[string]bool{}
		c := 0
		for i, m := range seq {
			distinct[modelKey(node[m], level)] = true
			if len(seq) > 1 && modelKey(node[m], level) != modelKey(node[seq[(i+1)%len(seq)]], level) {
				c++
			}
		}
		crossings, groups = append(crossings, c), append(groups, len(distinct))
	}
	return crossings, groups
}

// fnv is 32-bit FNV-1a, written out here.
func fnv(s string) uint32 {
	h := uint32(0x811c9dc5)
	for _, c := range []byte(s) {
		h = (h ^ uint32(c)) * 0x01000193
	}
	return h
}

// hashed is l as the ranks carry it, hashed here.
func hashed(l string) nodeorder.Location {
	var out nodeorder.Location
	if l == "" {
		return out
	}
	for i, name := range strings.Split(l, "/") {
		out.Hash[i] = fnv(name)
		out.Levels++
	}
	return out
}

// placementPool holds the locations a random job draws from: several
// levels, shorter paths beside longer ones, one leaf name under two
// spines, and no location.
var placementPool = []string{"", "s0", "s0/a", "s0/b", "s0/a/x", "s0/a/y", "s1/a", "s1/b", "s1/a/x", "s2/c/z/w"}

// placementJob is a random job: node m has size[m] ranks (node-major),
// head[m] its head (channel 0's first rank: a rank of the node drawn at
// random), and loc[r] each rank's NCCOM_RING_LOCATION; env[r] what its
// process's environment holds at Postset (another rank's value for some:
// one process playing several ranks).
type placementJob struct {
	size, first, head []int
	loc, env          []string
}

func newPlacementJob(rng *rand.Rand) placementJob {
	var j placementJob
	nodes := 1 + rng.IntN(7)
	if rng.IntN(8) > 0 {
		nodes++ // mostly 2 to 8 nodes
	}
	n := 0
	for range nodes {
		l := 1 + rng.IntN(7)
		j.size, j.first = append(j.size, l), append(j.first, n)
		j.head = append(j.head, n+rng.IntN(l))
		main := placementPool[rng.IntN(len(placementPool))]
		for range l {
			v := main
			if rng.IntN(100) >= 55 {
				v = placementPool[rng.IntN(len(placementPool))]
			}
			j.loc = append(j.loc, v)
		}
		n += l
	}
	for r := range n {
		e := j.loc[r]
		if rng.IntN(6) == 0 {
			e = j.loc[rng.IntN(n)]
		}
		j.env = append(j.env, e)
	}
	return j
}

func (j placementJob) nRanks() int { return len(j.loc) }

// ranksOf is node m's ranks, in rank order.
func (j placementJob) ranksOf(m int) []int {
	var rs []int
	for i := range j.size[m] {
		rs = append(rs, j.first[m]+i)
	}
	return rs
}

// graph is node m's graph: 2 channels over its ranks, channel 0 from its
// head, channel 1 the other way; every node the same NICs (one graph
// fingerprint, so the network order applies).
func (j placementJob) graph(m int) *abi.TopoGraph {
	l, first, h := j.size[m], j.first[m], j.head[m]-j.first[m]
	g := &abi.TopoGraph{Pattern: 4, MinChannels: 1, MaxChannels: layout.MaxChannels, NChannels: 2}
	for i := range g.Inter {
		g.Inter[i] = -1
	}
	for i := range l {
		g.Intra[i] = int32(first + (h+i)%l)
		g.Intra[l+i] = int32(first + (h-i+l)%l)
	}
	g.Inter[0], g.Inter[1], g.Inter[2], g.Inter[3] = 0, 0, 1, 1
	return g
}

// run runs the ring stage of j on every rank (ring.Preset with its
// location and the network order, then ring.Postset) and returns every
// rank's dump, as the library writes it (D28: its own record, the name
// only when the environment's hashes to it), and rank 0's result.
func (j placementJob) run(t *testing.T) ([]ringdump.File, ring.PostsetResult) {
	t.Helper()
	n := j.nRanks()
	nodeOf := make([]int, n)
	for m := range j.size {
		for _, r := range j.ranksOf(m) {
			nodeOf[r] = m
		}
	}
	frags := make([]abi.TopoRanks, n)
	all := make([]*abi.TopoRanks, n)
	comm := new(abi.Comm)
	for r := range n {
		*comm = abi.Comm{Rank: int32(r), NRanks: int32(n), LocalRanks: int32(j.size[nodeOf[r]])}
		opt := ring.PresetOptions{Platforms: kanga.Fixed{}, Network: true, Location: hashed(j.loc[r])}
		require.NoError(t, ring.Preset(comm, j.graph(nodeOf[r]), &frags[r], opt), "Preset rank %d", r)
		all[r] = &frags[r]
	}
	buffers := make([]int32, layout.MaxChannels*n)
	heads := make([]int32, n)
	var files []ringdump.File
	var res0 ring.PostsetResult
	for r := range n {
		*comm = abi.Comm{Rank: int32(r), NRanks: int32(n), LocalRanks: int32(j.size[nodeOf[r]])}
		for c := range comm.Channels {
			comm.Channels[c].Ring.UserRanks = abi.Address(buffers[c*n : (c+1)*n])
		}
		res, err := ring.Postset(comm, heads, all, ring.PostsetOptions{Platforms: kanga.Fixed{}, Sequence: true})
		runtime.KeepAlive(buffers)
		require.NoError(t, err, "Postset rank %d", r)
		if r == 0 {
			res0 = res
		}
		d := &ringdump.Dump{Rank: r, NRanks: n, ResultName: "ncclSuccess", Version: "test", Host: fmt.Sprintf("host%d", nodeOf[r]), PID: 1,
			Wiring: &ringdump.Wiring{NNodes: res.NNodes, Node: int(comm.Node), NodesFirstRank: ringdump.Ints(heads[:res.NNodes]),
				GraphChannels: res.GraphChannels, NChannels: res.NChannels}}
		for c := range res.NChannels {
			ch := comm.Channels[c].Ring
			d.Channels = append(d.Channels, ringdump.Channel{Channel: c, Prev: int(ch.Prev), Next: int(ch.Next),
				UserRanks: ringdump.Ints(buffers[c*n : (c+1)*n])})
			d.SetNetDev(c, c)
		}
		own := ringdump.Own{Valid: res.OwnValid, Network: res.Own.Network, Location: res.Own.Location, Env: j.env[r]}
		d.Order = ringdump.OrderOf(own, res.Order.Asked, res.Order.Network, res.Order.Warn+res.Order.Info, res.Order.Sequence)
		files = append(files, ringdump.File{Path: fmt.Sprintf("rank-%06d", r), Dump: d})
	}
	return files, res0
}

// summaryLevel reads Postset's INFO line (ring.Order.Summary): each
// level's crossings and groups.
var summaryLevel = regexp.MustCompile(`level (\d+): (\d+) crossings of (\d+) groups`)

func summaryCounts(t *testing.T, summary string) (crossings, groups []int) {
	t.Helper()
	for i, m := range summaryLevel.FindAllStringSubmatch(summary, -1) {
		require.Equal(t, strconv.Itoa(i+1), m[1], summary)
		c, _ := strconv.Atoi(m[2])
		g, _ := strconv.Atoi(m[3])
		crossings, groups = append(crossings, c), append(groups, g)
	}
	return crossings, groups
}

// atMinimum: every level's crossings are the fewest a cycle can have.
func atMinimum(crossings, groups []int) bool {
	for l := range crossings {
		if groups[l] >= 2 && crossings[l] != groups[l] || groups[l] < 2 && crossings[l] != 0 {
			return false
		}
	}
	return true
}

// placementCoverage counts what the random jobs exercised, so that the
// test fails if they stop exercising it.
type placementCoverage struct {
	ties, headNotTied, headOutvoted, unlocatedRanks, unlocatedNodes, deep, shorter, unknownNames, atMinimum int
}

func TestOnePlacementRuleForTheLibraryAndEveryTool(t *testing.T) {
	rng := rand.New(rand.NewPCG(33, 28))
	var cov placementCoverage
	const jobs = 520
	for i := range jobs {
		j := newPlacementJob(rng)
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			checkPlacementJob(t, j, i%40 == 0, &cov)
		})
		if t.Failed() {
			break
		}
	}
	t.Logf("%+v", cov)
	for name, n := range map[string]int{"ties": cov.ties, "a head outside the tie": cov.headNotTied, "a head outvoted": cov.headOutvoted,
		"ranks without a location": cov.unlocatedRanks, "nodes without a location": cov.unlocatedNodes,
		"jobs of 3 or more levels": cov.deep, "shorter paths beside longer": cov.shorter, "names unknown": cov.unknownNames} {
		assert.GreaterOrEqual(t, n, 20, name)
	}
	assert.Equal(t, jobs, cov.atMinimum, "D25: every job's rings cross each level the fewest times")
}

// checkPlacementJob runs j and checks Postset, score, verify and plan
// against the model; withCLI runs nccom-rings score --max-excess 0 on its
// dumps too.
func checkPlacementJob(t *testing.T, j placementJob, withCLI bool, cov *placementCoverage) {
	nodes := len(j.size)
	place := make([]string, nodes)
	for m := range nodes {
		place[m] = modelPlace(j.loc, j.ranksOf(m), j.head[m])
		countPlacement(j, m, place[m], cov)
	}
	seq := modelSequence(place)
	crossings, groups := modelCrossings(place, seq)
	countJob(j, place, cov)

	// The library: Postset's sequence and INFO line.
	files, res := j.run(t)
	require.True(t, res.Order.Network, "%s %s", res.Order.Warn, res.Order.Info)
	require.Equal(t, seq, ringdump.Ints(res.Order.Sequence), "Postset's sequence; places %q", place)
	// Its placement shows in the WARN about nodes without a location:
	// the first of them in the sequence, and how many.
	unplaced := 0
	for _, l := range place {
		if l == "" {
			unplaced++
		}
	}
	switch {
	case nodes == 1: // D28: a job of one node prints no location WARN
	case unplaced == 0:
		assert.Empty(t, res.Order.Warn)
	default:
		m := seq[nodes-unplaced]
		assert.Contains(t, res.Order.Warn, fmt.Sprintf("node %d (head rank %d) has no location (%d of %d nodes have none", m, j.head[m], unplaced, nodes))
	}
	libCrossings, libGroups := summaryCounts(t, res.Order.Summary)
	assert.Equal(t, crossings, libCrossings, res.Order.Summary)
	assert.Equal(t, groups, libGroups, res.Order.Summary)

	// score: its placement, its network order, its crossings.
	job, err := score.FromDumps(files)
	require.NoError(t, err)
	arr, err := job.Arrange()
	require.NoError(t, err)
	for m := range nodes {
		assert.Equal(t, hashed(place[m]), arr.Node[m], "score's node %d", m)
		assert.Equal(t, shownAs(j, files, place[m]), job.Location[m], "score's name of node %d", m)
	}
	s, err := score.Compute(job)
	require.NoError(t, err)
	assert.Equal(t, seq, s.Arranged, "score's sequence")
	for _, c := range s.Channels {
		for l, lv := range c.Levels {
			assert.Equal(t, crossings[l], lv.Crossings, "channel %d level %d", c.Channel, l+1)
			assert.Equal(t, groups[l], lv.Groups, "channel %d level %d", c.Channel, l+1)
		}
	}
	if atMinimum(libCrossings, libGroups) {
		cov.atMinimum++
		_, _, over := s.Exceeds(0)
		assert.False(t, over, "the library's INFO says every level is at its fewest")
		if withCLI {
			dir := t.TempDir()
			for _, f := range files {
				_, err := ringdump.Write(dir, f.Dump)
				require.NoError(t, err)
			}
			// As a gate, score fails a job with a node it cannot
			// locate: its "group of its own" is no knowledge.
			unlocated := 0
			for m := range nodes {
				if job.Location[m] == "" {
					unlocated++
				}
			}
			code, out, errOut := runTool("score", "--max-excess", "0", dir)
			if unlocated == 0 {
				assert.Equal(t, cli.ExitOK, code, out+errOut)
			} else {
				assert.Equal(t, cli.ExitFinding, code, out+errOut)
				assert.Contains(t, out, fmt.Sprintf("nccom-rings score: --max-excess 0 not met: %d of %d nodes have no location", unlocated, nodes))
			}
		}
	}

	// verify: the ranks it names are those whose location is not their
	// node's, and it finds the decided sequence the placement's.
	rep := verify.Check("dir", files, nil)
	var named []int
	for _, f := range rep.Findings {
		require.Equal(t, verify.KindLocation, f.Kind, f.Message)
		named = append(named, f.Rank)
	}
	var want []int
	for m := range nodes {
		for _, r := range j.ranksOf(m) {
			if j.loc[r] != place[m] {
				want = append(want, r)
			}
		}
	}
	assert.Equal(t, want, named, "verify's placement")

	// plan: the same nodes, every rank carrying its node's placement,
	// one to three ranks a host.
	cl := plan.Cluster{RanksPerNode: 1 + len(seq)%3, Locations: place}
	for m := range nodes {
		cl.Hosts = append(cl.Hosts, fmt.Sprintf("h%d", m))
	}
	pr, err := plan.Run(cl, true, nil)
	require.NoError(t, err)
	assert.Equal(t, seq, ringdump.Ints(pr.Order.Sequence), "plan's Postset")
	order, err := plan.NetworkOrder(place)
	require.NoError(t, err)
	assert.Equal(t, seq, order, "plan's --emit-hostfile order")
	ps, err := score.Compute(pr.Job)
	require.NoError(t, err)
	assert.Equal(t, seq, ps.Arranged, "plan's score")
	for l, lv := range ps.Channels[0].Levels {
		assert.Equal(t, crossings[l], lv.Crossings, "plan, level %d", l+1)
	}
}

// shownAs is how score shows location l: its name when some rank's dump
// gives it (the name hashes to its record's), "" for none, else its
// hashes.
func shownAs(j placementJob, files []ringdump.File, l string) string {
	if l == "" {
		return ""
	}
	for r, f := range files {
		if j.loc[r] == l && f.Dump.Order.Location == l {
			return l
		}
	}
	var parts []string
	for _, name := range strings.Split(l, "/") {
		parts = append(parts, fmt.Sprintf("#%08x", fnv(name)))
	}
	return strings.Join(parts, "/")
}

// countPlacement counts what node m's placement exercised.
func countPlacement(j placementJob, m int, placed string, cov *placementCoverage) {
	count := map[string]int{}
	most := 0
	for _, r := range j.ranksOf(m) {
		count[j.loc[r]]++
		most = max(most, count[j.loc[r]])
		if j.loc[r] == "" {
			cov.unlocatedRanks++
		}
	}
	tied := 0
	for _, c := range count {
		if c == most {
			tied++
		}
	}
	if tied > 1 {
		cov.ties++
		if count[j.loc[j.head[m]]] != most {
			cov.headNotTied++
		}
	}
	if j.loc[j.head[m]] != placed {
		cov.headOutvoted++
	}
	if placed == "" {
		cov.unlocatedNodes++
	}
}

// countJob counts what the job's node locations exercised.
func countJob(j placementJob, place []string, cov *placementCoverage) {
	lengths := map[int]bool{}
	for _, l := range place {
		if l != "" {
			lengths[len(strings.Split(l, "/"))] = true
		}
	}
	if len(lengths) > 1 {
		cov.shorter++
	}
	if slices.ContainsFunc(place, func(l string) bool { return strings.Count(l, "/") >= 2 }) {
		cov.deep++
	}
	for r := range j.loc {
		if j.loc[r] != "" && j.env[r] != j.loc[r] {
			cov.unknownNames++
		}
	}
}

// The job of issue 33's report: the library ordered it optimally (its
// INFO line: level 2, 3 crossings of 3 groups), but score placed node 0
// by its lowest rank, not its head, and said 4 crossings, 1 over, so
// --max-excess 0 exited 1. Nodes of 2 ranks, each headed by its second;
// node 0's ranks tie between leaf a and leaf b, and its head holds b.
func TestScoreAgreesWithTheLibraryOnATieToTheHead(t *testing.T) {
	j := placementJob{size: []int{2, 2, 2, 2}, first: []int{0, 2, 4, 6}, head: []int{1, 3, 5, 7},
		loc: []string{"s/a", "s/b", "s/a", "s/a", "s/b", "s/b", "s/c", "s/c"}}
	j.env = j.loc
	files, res := j.run(t)
	assert.Equal(t, []int32{0, 2, 1, 3}, res.Order.Sequence, "leaf b's nodes 0 and 2, then a's, then c's")
	assert.Contains(t, res.Order.Summary, "level 2: 3 crossings of 3 groups")
	dir := t.TempDir()
	for _, f := range files {
		_, err := ringdump.Write(dir, f.Dump)
		require.NoError(t, err)
	}
	code, out, errOut := runTool("score", "--max-excess", "0", dir)
	assert.Equal(t, cli.ExitOK, code, errOut)
	assert.Contains(t, out, "; level 2: 3 crossings (3 groups: fewest 3);")
	assert.NotContains(t, out, "over")
}

// writeDump writes f's dump into dir, as the library would.
func writeDump(dir string, f ringdump.File) (string, error) { return ringdump.Write(dir, f.Dump) }
