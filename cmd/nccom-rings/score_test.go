package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nccomring/libnccomring/internal/cli"
	"github.com/nccomring/libnccomring/internal/quote"
	"github.com/nccomring/libnccomring/ringdump"
)

// D25's example (docs/spec/DECISIONS.md D25; testdata/d25 says so): 8
// hosts of 4 ranks alternating between spine0/leafA and spine0/leafB in
// the hostfile's order.
const (
	d25Hosts     = "testdata/d25/hosts"
	d25Locations = "testdata/d25/locations"
)

// planD25 plans D25's example with both orders into dir/rank and
// dir/network, and the hostfile in network order into dir/hosts.
func planD25(t *testing.T) (dir string, rep planReport) {
	t.Helper()
	dir = t.TempDir()
	code, out, errOut := runTool("plan", "--locations", d25Locations, "--hosts", d25Hosts, "--ranks-per-node", "4",
		"--dump", dir, "--emit-hostfile", filepath.Join(dir, "hosts"), "--json")
	require.Equal(t, cli.ExitOK, code, errOut)
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	return dir, rep
}

// leafCrossings is level 2's crossings of every channel of a score.
func leafCrossings(t *testing.T, channels int, got func(c int) int) []int {
	t.Helper()
	var v []int
	for c := range channels {
		v = append(v, got(c))
	}
	return v
}

func repeat(n, v int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = v
	}
	return s
}

func TestPlanAndScoreOfD25sExample(t *testing.T) {
	dir, rep := planD25(t)
	assert.Equal(t, 32, rep.NRanks)
	assert.Empty(t, rep.Unlocated)
	require.Len(t, rep.Plans, 2)
	rank, network := rep.Plans[0], rep.Plans[1]
	assert.Equal(t, "rank", rank.Order)
	assert.False(t, rank.NetworkApplied)
	assert.Equal(t, []int{0, 1, 2, 3, 4, 5, 6, 7}, rank.Sequence)
	assert.Equal(t, "network", network.Order)
	assert.True(t, network.NetworkApplied)
	assert.Equal(t, []int{0, 2, 4, 6, 1, 3, 5, 7}, network.Sequence)
	// The default graph's 8 channels, doubled to 16 (D10): 8 leaf
	// crossings on every ring in rank order, 2 in network order.
	assert.Equal(t, repeat(16, 8), leafCrossings(t, 16, func(c int) int { return rank.Score.Channels[c].Levels[1].Crossings }))
	assert.Equal(t, repeat(16, 2), leafCrossings(t, 16, func(c int) int { return network.Score.Channels[c].Levels[1].Crossings }))

	// score on the dumps plan wrote says the same, from the dumps'
	// locations.
	code, out, errOut := runTool("score", filepath.Join(dir, "rank"))
	assert.Equal(t, cli.ExitOK, code, errOut)
	assert.Equal(t, "nccom-rings score: 32 ranks, 8 nodes, 16 channels; locations from the dumps: 8 of 8 nodes located, 2 levels\n"+
		"  channels 0-15: 8 inter-node edges; level 1: 0 crossings (1 group: fewest 0); level 2: 8 crossings (2 groups: fewest 2; 6 over); 8 NIC-index mismatches\n"+
		"  NIC-index mismatches: 128 of 128 inter-node edges, first on channel 0: rank 3 (NIC index 3) -> rank 4 (NIC index 0) (every one: as when the graph's channels leave a node on another NIC than they enter it on)\n"+
		"  channels per NIC index, nodes 0-7: NIC index 0: 8 channels, NIC index 1: 8 channels, NIC index 2: 8 channels, NIC index 3: 8 channels\n"+
		"  level 2: up to 6 crossings over the fewest a ring can have (nccom-rings plan --order network shows what D25's order would give)\n", out)
	code, out, _ = runTool("score", filepath.Join(dir, "network"), "--json")
	assert.Equal(t, cli.ExitOK, code)
	var sr scoreReport
	require.NoError(t, json.Unmarshal([]byte(out), &sr))
	assert.Equal(t, "dumps", sr.LocationsFrom)
	assert.Equal(t, repeat(16, 2), leafCrossings(t, 16, func(c int) int { return sr.Score.Channels[c].Levels[1].Crossings }))
	assert.Equal(t, []int{0, 0}, sr.Score.MaxExcess)

	// The emitted hostfile, planned in rank order, gives the network
	// order's 2 (trn001 trn003 trn005 trn007, then the even ones).
	hosts, err := os.ReadFile(filepath.Join(dir, "hosts"))
	require.NoError(t, err)
	assert.Contains(t, string(hosts), "trn001 slots=4\ntrn003 slots=4\ntrn005 slots=4\ntrn007 slots=4\ntrn002 slots=4\n")
	code, out, errOut = runTool("plan", "--locations", d25Locations, "--hosts", filepath.Join(dir, "hosts"), "--ranks-per-node", "4", "--order", "rank", "--json")
	require.Equal(t, cli.ExitOK, code, errOut)
	var again planReport
	require.NoError(t, json.Unmarshal([]byte(out), &again))
	require.Len(t, again.Plans, 1)
	assert.Equal(t, repeat(16, 2), leafCrossings(t, 16, func(c int) int { return again.Plans[0].Score.Channels[c].Levels[1].Crossings }))

	// The side-by-side table.
	code, out, _ = runTool("plan", "--locations", d25Locations, "--hosts", d25Hosts, "--ranks-per-node", "4")
	assert.Equal(t, cli.ExitOK, code)
	assert.Contains(t, out, "graph: the embedded default cluster's (ringstage's: 8 ring channels, min(8, L) NICs)\n")
	assert.Contains(t, out, "rank     8 -> 16   0 (fewest 0)            8 (fewest 2)            128 of 128 edges      0 1 2 3 4 5 6 7\n")
	assert.Contains(t, out, "network  8 -> 16   0 (fewest 0)            2 (fewest 2)            128 of 128 edges      0 2 4 6 1 3 5 7\n")
}

func TestScoreMaxExcessAndLocationsFile(t *testing.T) {
	dir, _ := planD25(t)
	rankDir := filepath.Join(dir, "rank")
	code, out, _ := runTool("score", rankDir, "--max-excess", "5")
	assert.Equal(t, cli.ExitFinding, code)
	assert.True(t, strings.HasSuffix(out, "nccom-rings score: level 2 is 6 over its fewest, more than --max-excess 5\n"), out)
	code, _, _ = runTool("score", rankDir, "--max-excess", "6")
	assert.Equal(t, cli.ExitOK, code)

	// A file that puts the first four hosts under one leaf and the last
	// four under another: rank order crosses leaves twice (trn004 ->
	// trn005 and the wrap-around), the fewest; trn009 is no host of the
	// job, and TRN008.ec2.internal is trn008.
	locs := filepath.Join(t.TempDir(), "locations")
	require.NoError(t, os.WriteFile(locs, []byte("trn001 s/a\ntrn002 s/a\ntrn003 s/a\ntrn004 s/a\ntrn005 s/b\ntrn006 s/b\ntrn007 s/b\nTRN008.ec2.internal s/b\ntrn009 s/c\n"), 0o644))
	code, out, errOut := runTool("score", rankDir, "--locations", locs, "--max-excess", "0", "--json")
	assert.Equal(t, cli.ExitOK, code, errOut)
	var sr scoreReport
	require.NoError(t, json.Unmarshal([]byte(out), &sr))
	assert.Equal(t, locs, sr.LocationsFrom)
	assert.Equal(t, []int{}, sr.Unlocated)
	assert.Equal(t, repeat(16, 2), leafCrossings(t, 16, func(c int) int { return sr.Score.Channels[c].Levels[1].Crossings }))

	// Without trn003 in the file, node 2 has no location: a group of its
	// own at every level (level 1: s and none, 2 groups).
	require.NoError(t, os.WriteFile(locs, []byte("trn001 s/a\ntrn002 s/a\ntrn004 s/a\ntrn005 s/b\ntrn006 s/b\ntrn007 s/b\ntrn008 s/b\n"), 0o644))
	code, out, _ = runTool("score", rankDir, "--locations", locs)
	assert.Equal(t, cli.ExitOK, code)
	assert.Contains(t, out, "  without a location: nodes 2 (host \"trn003\" first): not in \""+locs+"\"; by the dumps' host names: nccom-rings plan --hosts HOSTFILE --locations \""+locs+"\" --instances FILE --emit-locations NEWFILE, then --locations NEWFILE\n")
	assert.Contains(t, out, "level 1: 2 crossings (2 groups: fewest 2); level 2: 4 crossings (3 groups: fewest 3; 1 over)")
	// As a gate, a node without a location fails it: its crossings are
	// not known (was: exit 0 with every node unlocated).
	code, out, _ = runTool("score", rankDir, "--locations", locs, "--max-excess", "8")
	assert.Equal(t, cli.ExitFinding, code)
	assert.True(t, strings.HasSuffix(out, "nccom-rings score: --max-excess 8 not met: 1 of 8 nodes have no location, so their crossings are not known\n"), out)
	code, out, _ = runTool("score", rankDir, "--locations", locs, "--max-excess", "8", "--json")
	assert.Equal(t, cli.ExitFinding, code)
	require.NoError(t, json.Unmarshal([]byte(out), &sr))
	assert.True(t, sr.Exceeded)
	assert.Equal(t, []int{2}, sr.Unlocated)
	// A negative gate is no gate: refused, not taken as "off".
	code, _, errOut = runTool("score", rankDir, "--max-excess", "-1")
	assert.Equal(t, cli.ExitUnusable, code)
	assert.True(t, strings.HasPrefix(errOut, "nccom-rings score: --max-excess -1: a count of crossings over the fewest is 0 or more\n"), errOut)
}

// --ranks-per-node given is 1 to 256, 0 too refused (was: taken as not
// given), with --graph as without.
func TestPlanRefusesRanksPerNodeOutOfRange(t *testing.T) {
	for _, args := range [][]string{{"--ranks-per-node", "0"}, {"--ranks-per-node", "257"}, {"--ranks-per-node", "0", "--graph", "../../testdata/graphs/03_nccl524_4gpu_4nic_graph.xml"}} {
		code, out, errOut := runTool(append([]string{"plan", "--locations", d25Locations, "--hosts", d25Hosts}, args...)...)
		assert.Equal(t, cli.ExitUnusable, code, "%q", args)
		assert.Empty(t, out)
		assert.True(t, strings.HasPrefix(errOut, "nccom-rings plan: --ranks-per-node "+args[1]+": a plan puts 1 to 256 ranks on a host\n"), "%q: %s", args, errOut)
	}
}

func TestScoreRefusesUnusableInput(t *testing.T) {
	dir, _ := planD25(t)
	rankDir := filepath.Join(dir, "rank")
	names, err := filepath.Glob(filepath.Join(rankDir, "rank-000005.*"))
	require.NoError(t, err)
	require.Len(t, names, 1)

	code, _, errOut := runTool("score", rankDir, "--locations", filepath.Join(dir, "none"))
	assert.Equal(t, cli.ExitUnusable, code)
	assert.Contains(t, errOut, "no such file")

	require.NoError(t, os.WriteFile(names[0], []byte(`{"format":1,`), 0o644))
	code, _, errOut = runTool("score", rankDir)
	assert.Equal(t, cli.ExitUnusable, code)
	assert.Contains(t, errOut, "not a ring dump")
	assert.Contains(t, errOut, "rank 5 has no dump (of 32 ranks)")

	code, _, _ = runTool("score")
	assert.Equal(t, cli.ExitUnusable, code)
	code, out, _ := runTool("score", "--help")
	assert.Equal(t, cli.ExitOK, code)
	assert.Contains(t, out, "--max-excess N")
}

func TestPlanRefusesUnusableInput(t *testing.T) {
	for _, args := range [][]string{
		{"plan", "--hosts", d25Hosts, "--ranks-per-node", "4"},
		{"plan", "--locations", d25Locations, "--hosts", d25Hosts, "--ranks-per-node", "4", "--order", "leaf"},
		{"plan", "--locations", d25Locations, "--hosts", d25Hosts, "--ranks-per-node", "257"},
		{"plan", "--locations", d25Locations, "--hosts", "testdata/d25/none", "--ranks-per-node", "4"},
		{"plan", "--locations", d25Hosts, "--hosts", d25Hosts, "--ranks-per-node", "4"},
	} {
		code, _, errOut := runTool(args...)
		assert.Equal(t, cli.ExitUnusable, code, args)
		assert.NotEmpty(t, errOut, args)
	}
}

// Crafted dumps (docs/security.md): a dump claiming 2^31-1 ranks is
// refused before anything is sized by it, and a host name with a
// terminal escape is printed quoted.
func TestScoreAndDiffOfCraftedDumps(t *testing.T) {
	dir := hugeJobDump(t)
	code, _, errOut := runTool("score", dir)
	assert.Equal(t, cli.ExitUnusable, code)
	assert.Contains(t, errOut, "rank 0's dump says 2147483647 ranks: outside [1, 262144]")
	code, _, errOut = runTool("diff", dir, dir)
	assert.Equal(t, cli.ExitUnusable, code)
	assert.Contains(t, errOut, "outside [1, 262144]")

	dir, paths := identityJob(t)
	for _, p := range paths {
		edit(t, p, func(d *ringdump.Dump) { d.Host = "\x1b[2Jh" })
	}
	locs := filepath.Join(t.TempDir(), "locations")
	require.NoError(t, os.WriteFile(locs, []byte("other s/a\n"), 0o644))
	code, out, _ := runTool("score", dir, "--locations", locs)
	assert.Equal(t, cli.ExitOK, code)
	assert.NotContains(t, out, "\x1b")
	assert.Contains(t, out, `without a location: nodes 0-1 (host "\x1b[2Jh" first)`)
}

func TestPlanWithAHostWithoutALocation(t *testing.T) {
	// trn008 (node 7) is not in the file: the network order puts it last
	// (0 2 4 6 | 1 3 5 | 7), a group of its own at both levels: level 1
	// crosses 5 -> 7 and 7 -> 0 (2 groups), level 2 also 6 -> 1 (3
	// groups), the fewest each time.
	locs := filepath.Join(t.TempDir(), "locations")
	data, err := os.ReadFile(d25Locations)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(locs, []byte(strings.Replace(string(data), "trn008 spine0/leafB\n", "", 1)), 0o644))
	code, out, errOut := runTool("plan", "--locations", locs, "--hosts", d25Hosts, "--ranks-per-node", "4", "--order", "network", "--order", "network", "--allow-unlocated")
	assert.Equal(t, cli.ExitOK, code, errOut)
	assert.Contains(t, out, "  1 host without a location in \""+locs+"\" (first \"trn008\")\n")
	assert.Contains(t, out, "network  8 -> 16   2 (fewest 2)            3 (fewest 3)            128 of 128 edges      0 2 4 6 1 3 5 7\n")
	assert.Contains(t, out, `  network: "ncclTopoPostset: NCCOM_RING_NODE_ORDER=network: node 7 (head rank 28) has no location (1 of 8 nodes have none`)
	assert.NotContains(t, out, "\nrank ", "one plan: --order network given twice")
}

func TestPlanWithAGraphFile(t *testing.T) {
	// testdata/graphs/03 (NVIDIA/nccl#524): 4 ranks a node, two channels
	// entering on NIC 3 and leaving on NIC 0, doubled to 4: D25's example
	// still gives 8 and 2 leaf crossings; every one of the 4 x 8
	// inter-node edges leaves on NIC index 0 and enters on 3.
	const graph = "../../testdata/graphs/03_nccl524_4gpu_4nic_graph.xml"
	code, out, errOut := runTool("plan", "--locations", d25Locations, "--hosts", d25Hosts, "--graph", graph)
	assert.Equal(t, cli.ExitOK, code, errOut)
	assert.Contains(t, out, `graph: "`+graph+`"'s RING graph (4 ranks a node, 2 channels)`+"\n")
	assert.Contains(t, out, "rank     2 -> 4    0 (fewest 0)            8 (fewest 2)            32 of 32 edges        0 1 2 3 4 5 6 7\n")
	assert.Contains(t, out, "network  2 -> 4    0 (fewest 0)            2 (fewest 2)            32 of 32 edges        0 2 4 6 1 3 5 7\n")

	code, _, errOut = runTool("plan", "--locations", d25Locations, "--hosts", d25Hosts, "--graph", graph, "--ranks-per-node", "8")
	assert.Equal(t, cli.ExitUnusable, code)
	assert.Contains(t, errOut, `8 ranks a node, but the graph of "`+graph+`" has 4`)
}

func TestPlanOfAGraphTheRingStageRefuses(t *testing.T) {
	// nchannels="0" reaches Preset as such (as with ringstage --graph),
	// and the library's refusal is the finding, with its WARN text.
	graph := filepath.Join(t.TempDir(), "graph.xml")
	require.NoError(t, os.WriteFile(graph, []byte(`<graphs version="1"><graph id="0" pattern="4" nchannels="0"></graph></graphs>`), 0o644))
	code, out, errOut := runTool("plan", "--locations", d25Locations, "--hosts", d25Hosts, "--graph", graph, "--order", "rank")
	assert.Equal(t, cli.ExitFinding, code, errOut)
	assert.Contains(t, out, "rank   refused: \"rank 0: ncclTopoPreset: graph->nChannels 0 is outside [1, 32]\"\n")
}

// A hostfile's slots: without --ranks-per-node (and --graph) the count
// every host gives is the plan's; a host that gives another count than
// the plan's is one note on stderr, not a finding; hosts that differ
// among themselves, with no --ranks-per-node, are a usage error.
func TestPlanReadsTheHostfilesSlots(t *testing.T) {
	code, out, errOut := runTool("plan", "--locations", d25Locations, "--hosts", d25Hosts, "--order", "rank", "--json")
	require.Equal(t, cli.ExitOK, code, errOut)
	assert.Empty(t, errOut)
	var rep planReport
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	assert.Equal(t, [2]int{4, 32}, [2]int{rep.RanksPerNode, rep.NRanks}, "8 hosts, slots=4 each")

	code, _, errOut = runTool("plan", "--locations", d25Locations, "--hosts", d25Hosts, "--ranks-per-node", "8", "--order", "rank")
	assert.Equal(t, cli.ExitOK, code)
	assert.Equal(t, `nccom-rings plan: note: "testdata/d25/hosts" line 4: host "trn001" gives 4 slots, but the plan puts 8 ranks on every host (8 of 8 hosts give another count); a launcher that fills each host's slots numbers the ranks otherwise`+"\n", errOut)

	hosts := filepath.Join(t.TempDir(), "hosts")
	require.NoError(t, os.WriteFile(hosts, []byte("trn001 slots=4\ntrn002:8\n"), 0o644))
	code, _, errOut = runTool("plan", "--locations", d25Locations, "--hosts", hosts)
	assert.Equal(t, cli.ExitUnusable, code)
	assert.Contains(t, errOut, "nccom-rings plan: --ranks-per-node is needed: neither --graph nor the same slot count on every host of ")
	code, _, errOut = runTool("plan", "--locations", d25Locations, "--hosts", hosts, "--ranks-per-node", "4", "--order", "rank")
	assert.Equal(t, cli.ExitOK, code)
	assert.Contains(t, errOut, `line 2: host "trn002" gives 8 slots, but the plan puts 4 ranks on every host (1 of 2 hosts give another count)`)

	// More slots than a plan puts on a host, and a slot count that is not one.
	require.NoError(t, os.WriteFile(hosts, []byte("trn001 slots=300\ntrn002 slots=300\n"), 0o644))
	code, _, errOut = runTool("plan", "--locations", d25Locations, "--hosts", hosts)
	assert.Equal(t, cli.ExitUnusable, code)
	assert.Contains(t, errOut, "nccom-rings plan: every host of "+quote.String(hosts)+" gives 300 slots, but a plan puts 1 to 256 ranks on a host: give --ranks-per-node\n")
	require.NoError(t, os.WriteFile(hosts, []byte("trn001 slots=abc\n"), 0o644))
	code, _, errOut = runTool("plan", "--locations", d25Locations, "--hosts", hosts, "--ranks-per-node", "4")
	assert.Equal(t, cli.ExitUnusable, code)
	assert.Equal(t, "nccom-rings plan: "+hosts+`:1:8: "slots=abc": the slot count is not a number in [1, 4096]`+"\n", errOut)
}

// Issue 36's cluster of 16 hosts (testdata/cluster16, written for the
// issue in the shape of the real files):
//
//   - hosts.txt: ParallelCluster's static node names trn1-st-trn1-1..16,
//     slots=32 each (trn1.32xlarge has 32 NeuronCores), in the order
//     scontrol show hostnames gives them;
//   - hosts-sorted.txt: the same hosts sorted as strings (trn1-st-trn1-10
//     before trn1-st-trn1-2), as a launcher that sorts host names lists
//     them: the order that scatters the leaves;
//   - ec2-topology.json: aws ec2 describe-instance-topology's JSON for
//     their 16 instances, one layer-1 node, 2 spines, 4 leaves; hosts
//     1-4, 5-8, 9-12 and 13-16 each on a leaf, leaves 1-2 under one spine
//     and 3-4 under the other (the groups every other source of the
//     cluster gives), listed in another order than the hosts';
//   - describe-instances.json: aws ec2 describe-instances' JSON for them,
//     two reservations of 8, each instance's Name tag its host's name
//     (where instances share one Name tag, scontrol show nodes joins:
//     see the location package's tests).
const (
	c16Hosts     = "testdata/cluster16/hosts.txt"
	c16Sorted    = "testdata/cluster16/hosts-sorted.txt"
	c16Topology  = "testdata/cluster16/ec2-topology.json"
	c16Instances = "testdata/cluster16/describe-instances.json"
)

// c16Locations writes locate --all's locations of the EC2 topology (by
// instance id) to a file and returns its path.
func c16Locations(t *testing.T) string {
	t.Helper()
	code, out, errOut := runTool("locate", "--all", "ec2:"+c16Topology)
	require.Equal(t, cli.ExitOK, code, errOut)
	path := filepath.Join(t.TempDir(), "locations")
	require.NoError(t, os.WriteFile(path, []byte(out), 0o644))
	return path
}

// planJSON runs plan with args and --json, expecting want.
func planJSON(t *testing.T, want int, args ...string) planReport {
	t.Helper()
	code, out, errOut := runTool(append([]string{"plan", "--json"}, args...)...)
	require.Equal(t, want, code, errOut)
	var rep planReport
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	return rep
}

// atFewest reports whether every channel of p crosses every level the
// fewest times a ring can.
func atFewest(p planned) bool {
	for _, c := range p.Score.Channels {
		for _, l := range c.Levels {
			if l.Crossings != l.Minimum {
				return false
			}
		}
	}
	return true
}

// Done when 2: a hostfile of host names, the EC2 topology and the
// describe-instances JSON: 16 of 16 located, and the emitted hostfile,
// planned in rank order, at the fewest crossings; without the instances
// file, 0 of 16 and the file that would join them.
func TestPlanJoinsHostNamesToInstances(t *testing.T) {
	locs := c16Locations(t)

	code, out, errOut := runTool("plan", "--locations", locs, "--hosts", c16Hosts)
	assert.Equal(t, cli.ExitFinding, code)
	assert.Empty(t, out, "nothing planned")
	assert.Equal(t, `nccom-rings plan: 0 of 16 hosts located, so nothing planned; the first without a location, "trn1-st-trn1-1" (line 3 of "testdata/cluster16/hosts.txt"): not in "`+locs+`"`+"\n"+
		`nccom-rings plan: "`+locs+`" names EC2 instances; join the hosts to them: aws ec2 describe-instances --output json > instances.json and add --instances instances.json (or --allow-unlocated, to plan them without a location)`+"\n", errOut)

	emitted := filepath.Join(t.TempDir(), "hosts")
	rep := planJSON(t, cli.ExitOK, "--locations", locs, "--hosts", c16Sorted, "--instances", c16Instances, "--emit-hostfile", emitted)
	assert.Equal(t, 16, rep.Located)
	assert.Empty(t, rep.Unlocated)
	assert.Equal(t, []string{c16Instances}, rep.Instances)
	require.Len(t, rep.Plans, 2)
	assert.False(t, atFewest(rep.Plans[0]), "the hostfile's order crosses leaves more than it must")
	assert.True(t, atFewest(rep.Plans[1]))
	data, err := os.ReadFile(emitted)
	require.NoError(t, err)
	assert.Contains(t, string(data), "\ntrn1-st-trn1-1 slots=32\ntrn1-st-trn1-2 slots=32\ntrn1-st-trn1-3 slots=32\ntrn1-st-trn1-4 slots=32\ntrn1-st-trn1-5 slots=32\n", "a leaf's hosts together")

	again := planJSON(t, cli.ExitOK, "--locations", locs, "--hosts", emitted, "--instances", c16Instances, "--order", "rank")
	require.Len(t, again.Plans, 1)
	assert.Equal(t, 16, again.Located)
	assert.True(t, atFewest(again.Plans[0]), "the emitted hostfile in rank order: the fewest crossings at every level")
	assert.Equal(t, rep.Plans[1].Score.MaxExcess, again.Plans[0].Score.MaxExcess)

	// The side-by-side table says where the locations came from.
	code, out, _ = runTool("plan", "--locations", locs, "--hosts", c16Hosts, "--instances", c16Instances, "--order", "rank")
	assert.Equal(t, cli.ExitOK, code)
	assert.Contains(t, out, "\n  16 of 16 hosts located in \""+locs+"\", joined through --instances \""+c16Instances+"\"\n")
}

// Some hosts joined, some not: the first without a location and why;
// --allow-unlocated plans them as the library would run them.
func TestPlanRefusesToGuess(t *testing.T) {
	locs := c16Locations(t)
	dir := t.TempDir()
	hosts := filepath.Join(dir, "hosts")
	require.NoError(t, os.WriteFile(hosts, []byte("trn1-st-trn1-[1,5,9] slots=32\ntrn1-st-trn1-99 slots=32\n"), 0o644))
	code, _, errOut := runTool("plan", "--locations", locs, "--hosts", hosts, "--instances", c16Instances)
	assert.Equal(t, cli.ExitFinding, code)
	assert.Equal(t, `nccom-rings plan: 3 of 4 hosts located, so nothing planned; the first without a location, "trn1-st-trn1-99" (line 2 of "`+hosts+`"): not listed, and not named in testdata/cluster16/describe-instances.json`+"\n"+
		`nccom-rings plan: add the --instances FILE that names them, or locations that list them (or --allow-unlocated, to plan them without a location)`+"\n", errOut)

	rep := planJSON(t, cli.ExitOK, "--locations", locs, "--hosts", hosts, "--instances", c16Instances, "--allow-unlocated", "--order", "network")
	assert.Equal(t, 3, rep.Located)
	assert.Equal(t, []string{"trn1-st-trn1-99"}, rep.Unlocated)
	assert.Equal(t, []int{0, 1, 2, 3}, rep.Plans[0].Sequence[:4], "the network order: leaves 1 and 2 under one spine, 3 under the other, then the host without a location")

	// A map that joins the host to nothing the locations list.
	joins := filepath.Join(dir, "map")
	require.NoError(t, os.WriteFile(joins, []byte("trn1-st-trn1-99 i-0ffffffffffffffff\n"), 0o644))
	code, _, errOut = runTool("plan", "--locations", locs, "--hosts", hosts, "--instances", c16Instances, "--instances", joins)
	assert.Equal(t, cli.ExitFinding, code)
	assert.Contains(t, errOut, `"trn1-st-trn1-99" (line 2 of "`+hosts+`"): `+joins+` joins it to "trn1-st-trn1-99", "i-0ffffffffffffffff" (line 1), which the locations do not list`+"\n")

	// An instances file that is not one: unusable, named with its line.
	require.NoError(t, os.WriteFile(joins, []byte("trn1-st-trn1-99 spine/leaf\n"), 0o644))
	code, _, errOut = runTool("plan", "--locations", locs, "--hosts", hosts, "--instances", joins)
	assert.Equal(t, cli.ExitUnusable, code)
	assert.Equal(t, "nccom-rings plan: --instances: "+joins+`:1:17: "spine/leaf" is a location, not a name: this is a locations file (HOST LOCATION); pass it with --locations`+"\n", errOut)
}

// Done when 3: a Slurm host list of the 16 hosts plans as the hostfile
// that lists them, whether --hosts is the list, a hostfile's line holds
// it, or SLURM_JOB_NODELIST does.
func TestPlanOfASlurmHostList(t *testing.T) {
	locs := c16Locations(t)
	common := []string{"--locations", locs, "--instances", c16Instances}
	want := planJSON(t, cli.ExitOK, append([]string{"--hosts", c16Hosts}, common...)...)

	listed := filepath.Join(t.TempDir(), "hosts")
	require.NoError(t, os.WriteFile(listed, []byte("# one line, 16 hosts\ntrn1-st-trn1-[1-16] slots=32\n"), 0o644))
	t.Setenv("SLURM_JOB_NODELIST", "trn1-st-trn1-[1-2,3-16]")
	t.Setenv("SLURM_NTASKS_PER_NODE", "32")
	for _, args := range [][]string{
		{"--hosts", "trn1-st-trn1-[1-16]", "--ranks-per-node", "32"},
		{"--hosts", listed},
		{"--hosts-from-env"},
	} {
		got := planJSON(t, cli.ExitOK, append(args, common...)...)
		assert.Equal(t, want.NRanks, got.NRanks, args)
		assert.Equal(t, want.Located, got.Located, args)
		assert.Equal(t, want.Plans, got.Plans, args)
		assert.Equal(t, want.Collisions, got.Collisions, args)
	}

	// The list is sized before it is expanded, and named with the byte.
	code, _, errOut := runTool("plan", "--locations", locs, "--hosts", "trn[1-999999999]", "--ranks-per-node", "32")
	assert.Equal(t, cli.ExitUnusable, code)
	assert.Equal(t, `nccom-rings plan: --hosts: host list "trn[1-999999999]" gives more than 4096 names (refused before it is expanded)`+"\n", errOut)
	require.NoError(t, os.WriteFile(listed, []byte("a\n  trn[3-1] slots=2\n"), 0o644))
	code, _, errOut = runTool("plan", "--locations", locs, "--hosts", listed)
	assert.Equal(t, cli.ExitUnusable, code)
	assert.Equal(t, "nccom-rings plan: "+listed+`:2:9: host list "trn[3-1]": the range 3-1 goes down`+"\n", errOut)
	t.Setenv("SLURM_JOB_NODELIST", "")
	code, _, errOut = runTool("plan", "--locations", locs, "--hosts-from-env")
	assert.Equal(t, cli.ExitUnusable, code)
	assert.True(t, strings.HasPrefix(errOut, "nccom-rings plan: --hosts-from-env: SLURM_JOB_NODELIST is not set"), errOut)
	code, _, _ = runTool("plan", "--locations", locs, "--hosts-from-env", "--hosts", c16Hosts)
	assert.Equal(t, cli.ExitUnusable, code)
}

// locate --instances: a host name located in the EC2 topology through
// describe-instances, as a job script on the host would.
func TestLocateJoinsAHost(t *testing.T) {
	code, out, errOut := runTool("locate", "--host", "trn1-st-trn1-7", "--instances", c16Instances, "ec2:"+c16Topology)
	assert.Equal(t, cli.ExitOK, code, errOut)
	assert.Equal(t, "nn-4f1c0a9b3d2e51000/nn-5a2b3c4d5e6f72001/nn-6c3d4e5f607183002\n", out, "leaf 2, under the first spine")
	// By address, through a map to the address's instance's DNS name.
	joins := filepath.Join(t.TempDir(), "map")
	require.NoError(t, os.WriteFile(joins, []byte("node-a ip-10-1-1-17\n"), 0o644))
	code, out, _ = runTool("locate", "--host", "node-a", "--instances", joins, "--instances", c16Instances, "ec2:"+c16Topology)
	assert.Equal(t, cli.ExitOK, code)
	assert.Equal(t, "nn-4f1c0a9b3d2e51000/nn-5a2b3c4d5e6f72001/nn-6c3d4e5f607183002\n", out, "10.1.1.17 is trn1-st-trn1-7's")

	code, _, errOut = runTool("locate", "--host", "trn1-st-trn1-77", "--instances", c16Instances, "ec2:"+c16Topology)
	assert.Equal(t, cli.ExitFinding, code)
	assert.Contains(t, errOut, `nccom-rings locate: host "trn1-st-trn1-77" (from --host) is not in ec2:`)
	assert.Contains(t, errOut, `, and --instances joins it to none of its names: not listed, and not named in `)
	code, out, _ = runTool("locate", "--json", "--host", "trn1-st-trn1-77", "--instances", c16Instances, "ec2:"+c16Topology)
	assert.Equal(t, cli.ExitFinding, code)
	assert.Contains(t, out, `"reason": "not in the file; --instances joins it to none: not listed, and not named in `)
	// A Name tag two instances share joins neither: the join says so.
	twice := filepath.Join(t.TempDir(), "twice")
	require.NoError(t, os.WriteFile(twice, []byte(`{"Reservations": [{"Instances": [`+"\n"+
		`{"InstanceId": "i-0c16a1b2c3d4e5f01", "Tags": [{"Key": "Name", "Value": "node-b"}]},`+"\n"+
		`{"InstanceId": "i-0c16a1b2c3d4e5f02", "Tags": [{"Key": "Name", "Value": "node-b"}]}]}]}`), 0o644))
	code, _, errOut = runTool("locate", "--host", "node-b", "--instances", twice, "ec2:"+c16Topology)
	assert.Equal(t, cli.ExitFinding, code)
	assert.Contains(t, errOut, `host "node-b" (from --host) is not in ec2:`)
	assert.Contains(t, errOut, `"node-b" names 2 hosts of`)
	code, _, errOut = runTool("locate", "--all", "--instances", c16Instances, "ec2:"+c16Topology)
	assert.Equal(t, cli.ExitUnusable, code)
	assert.Contains(t, errOut, "--all lists the file's own names; --instances joins one host")
	code, _, errOut = runTool("locate", "--host", "x", "--instances", "testdata/cluster16/no-such-file", "ec2:"+c16Topology)
	assert.Equal(t, cli.ExitUnusable, code)
	assert.Equal(t, "nccom-rings locate: --instances: testdata/cluster16/no-such-file: no such file\n", errOut)
}

// score and report of dumps without locations say how many nodes are
// located, the first without, and the line that gives them one; plan
// --emit-locations writes it by host name, joined once.
func TestScoreAndReportSayWhatWouldLocateTheDumps(t *testing.T) {
	locs := c16Locations(t)
	dir := t.TempDir()
	dumps := filepath.Join(dir, "dumps")
	code, _, errOut := runTool("plan", "--locations", locs, "--hosts", c16Hosts, "--allow-unlocated", "--order", "rank", "--dump", dumps)
	require.Equal(t, cli.ExitOK, code, errOut)

	code, out, errOut := runTool("score", dumps)
	assert.Equal(t, cli.ExitOK, code, errOut)
	assert.Contains(t, out, "locations from the dumps: 0 of 16 nodes located, 0 levels\n"+
		`  without a location: nodes 0-15 (host "trn1-st-trn1-1" first): their ranks ran without NCCOM_RING_LOCATION; give --locations FILE (nccom-rings locate --all; by host name: nccom-rings plan --hosts HOSTFILE --locations FILE --instances FILE --emit-locations NEWFILE)`+"\n")
	code, _, errOut = runTool("score", dumps, "--locations", locs)
	assert.Equal(t, cli.ExitOK, code, errOut)
	code, out, _ = runTool("score", dumps, "--locations", locs)
	assert.Contains(t, out, `  without a location: nodes 0-15 (host "trn1-st-trn1-1" first): not in "`+locs+`"; by the dumps' host names: nccom-rings plan`)
	page := filepath.Join(dir, "page.html")
	code, _, errOut = runTool("report", dumps, "-o", page)
	assert.Equal(t, cli.ExitOK, code, errOut)
	assert.Equal(t, `nccom-rings report: 0 of 16 nodes located (host "trn1-st-trn1-1" first without): their ranks ran without NCCOM_RING_LOCATION; give --locations FILE (nccom-rings locate --all; by host name: nccom-rings plan --hosts HOSTFILE --locations FILE --instances FILE --emit-locations NEWFILE)`+"\n", errOut)

	byName := filepath.Join(dir, "locations-by-host")
	code, out, errOut = runTool("plan", "--locations", locs, "--hosts", c16Hosts, "--instances", c16Instances, "--order", "rank", "--emit-locations", byName)
	require.Equal(t, cli.ExitOK, code, errOut)
	assert.Contains(t, out, "  locations by host name written to \""+byName+"\": score and report take it as --locations\n")
	data, err := os.ReadFile(byName)
	require.NoError(t, err)
	assert.Equal(t, 17, strings.Count(string(data), "\n"), "a comment and 16 hosts")
	assert.Contains(t, string(data), "\ntrn1-st-trn1-7 nn-4f1c0a9b3d2e51000/nn-5a2b3c4d5e6f72001/nn-6c3d4e5f607183002\n")
	code, out, errOut = runTool("score", dumps, "--locations", byName)
	assert.Equal(t, cli.ExitOK, code, errOut)
	assert.Contains(t, out, "16 of 16 nodes located, 3 levels\n")
	assert.NotContains(t, out, "without a location")
	code, _, errOut = runTool("report", dumps, "--locations", byName, "-o", page)
	assert.Equal(t, cli.ExitOK, code)
	assert.Empty(t, errOut)
}

// A capacity reservation's topology names reservations: a host reaches
// its reservation's location through describe-instances' instance and
// its CapacityReservationId (locations as locate --all gives them for
// describe-capacity-reservation-topology, by reservation id): cluster16's
// four reservations, one a leaf, locate all 16 hosts at 3 levels.
func TestPlanJoinsHostsToTheirReservation(t *testing.T) {
	code, out, errOut := runTool("locate", "--all", "testdata/cluster16/capacity-reservation-topology.json")
	require.Equal(t, cli.ExitOK, code, errOut)
	locs := filepath.Join(t.TempDir(), "locations")
	require.NoError(t, os.WriteFile(locs, []byte(out), 0o644))
	rep := planJSON(t, cli.ExitOK, "--locations", locs, "--hosts", c16Hosts, "--instances", c16Instances, "--order", "rank")
	assert.Equal(t, 16, rep.Located)
	assert.Equal(t, 3, rep.Plans[0].Score.Depth)
}

// One machine under several names (its Slurm name, address, DNS name,
// instance id) is one host: planned as several, it would be several
// nodes. Refused like a name listed twice (exit 2), with --json a
// document that says so.
func TestPlanRefusesOneInstanceUnderSeveralNames(t *testing.T) {
	locs := c16Locations(t)
	code, out, errOut := runTool("plan", "--locations", locs, "--hosts", "trn1-st-trn1-1,10.1.0.11,ip-10-1-0-11,i-0c16a1b2c3d4e5f01", "--instances", c16Instances, "--ranks-per-node", "8")
	assert.Equal(t, cli.ExitUnusable, code)
	assert.Empty(t, out)
	assert.Equal(t, `nccom-rings plan: hosts "trn1-st-trn1-1" and "10.1.0.11" are one instance ("i-0c16a1b2c3d4e5f01"): list each host once`+"\n", errOut)
	rep := planJSON(t, cli.ExitUnusable, "--locations", locs, "--hosts", "10.1.0.12,trn1-st-trn1-2", "--instances", c16Instances, "--ranks-per-node", "8")
	assert.Equal(t, "unusable input (named on stderr)", rep.Error)
	// Two names of a machine the locations do not list: still one
	// machine, refused even with --allow-unlocated (a locations file of
	// the other 15 instances; before, planned as two unlocated nodes).
	var others []string
	all, err := os.ReadFile(locs)
	require.NoError(t, err)
	for _, line := range strings.SplitAfter(string(all), "\n") {
		if !strings.HasPrefix(line, "i-0c16a1b2c3d4e5f01 ") {
			others = append(others, line)
		}
	}
	fewer := filepath.Join(t.TempDir(), "fewer")
	require.NoError(t, os.WriteFile(fewer, []byte(strings.Join(others, "")), 0o644))
	code, _, errOut = runTool("plan", "--locations", fewer, "--hosts", "trn1-st-trn1-2,trn1-st-trn1-1,10.1.0.11", "--instances", c16Instances, "--ranks-per-node", "8", "--allow-unlocated")
	assert.Equal(t, cli.ExitUnusable, code)
	assert.Equal(t, `nccom-rings plan: hosts "trn1-st-trn1-1" and "10.1.0.11" are one instance ("i-0c16a1b2c3d4e5f01"): list each host once`+"\n", errOut)
	// Spelling duplicates, as before.
	code, _, _ = runTool("plan", "--locations", locs, "--hosts", "trn1-st-trn1-1,TRN1-ST-TRN1-1.cluster", "--ranks-per-node", "8")
	assert.Equal(t, cli.ExitUnusable, code)
}

// --json prints one document whatever the exit: the located and
// unlocated hosts when plan refuses (exit 1), "error" on exit 2.
func TestPlanJSONIsAlwaysOneDocument(t *testing.T) {
	locs := c16Locations(t)
	rep := planJSON(t, cli.ExitFinding, "--locations", locs, "--hosts", c16Hosts)
	assert.Equal(t, 0, rep.Located)
	assert.Len(t, rep.Unlocated, 16)
	assert.Empty(t, rep.Plans)
	assert.Equal(t, "0 of 16 hosts located, so nothing planned (named on stderr)", rep.Refused)
	for _, args := range [][]string{
		{"--hosts", c16Hosts}, // usage: no --locations
		{"--locations", locs, "--hosts", "testdata/d25/none"}, // no hostfile
		{"--locations", locs, "--hosts", c16Hosts, "--instances", "testdata/d25/none"},
		{"--locations", locs, "--hosts", c16Hosts, "--ranks-per-node", "300"},
	} {
		rep := planJSON(t, cli.ExitUnusable, args...)
		assert.Equal(t, "unusable input (named on stderr)", rep.Error, args)
	}
}

// The environment's rank counts: named when they differ from the plan's
// (not a file's line 0), refused when they are not counts, and Slurm's
// SLURM_TASKS_PER_NODE form read.
func TestPlanReadsTheJobsTaskCounts(t *testing.T) {
	locs := c16Locations(t)
	common := []string{"--locations", locs, "--instances", c16Instances, "--hosts-from-env", "--order", "rank"}
	t.Setenv("SLURM_JOB_NODELIST", "trn1-st-trn1-1")
	t.Setenv("SLURM_NTASKS_PER_NODE", "4")
	code, _, errOut := runTool(append([]string{"plan", "--ranks-per-node", "8"}, common...)...)
	assert.Equal(t, cli.ExitOK, code, errOut)
	assert.Equal(t, `nccom-rings plan: note: SLURM_NTASKS_PER_NODE=4: host "trn1-st-trn1-1" gives 4 slots, but the plan puts 8 ranks on every host (1 of 1 hosts give another count); a launcher that fills each host's slots numbers the ranks otherwise`+"\n", errOut)
	for _, v := range []string{"abc", "0", "-1", "5000"} {
		t.Setenv("SLURM_NTASKS_PER_NODE", v)
		code, _, errOut = runTool(append([]string{"plan"}, common...)...)
		assert.Equal(t, cli.ExitUnusable, code, v)
		assert.Equal(t, `nccom-rings plan: --hosts-from-env: SLURM_NTASKS_PER_NODE="`+v+`" is not a rank count in [1, 4096]`+"\n", errOut)
	}
	// The two variables disagreeing: neither is taken.
	t.Setenv("SLURM_JOB_NODELIST", "trn1-st-trn1-[1-4]")
	t.Setenv("SLURM_NTASKS_PER_NODE", "2")
	t.Setenv("SLURM_TASKS_PER_NODE", "2(x3),3")
	code, _, errOut = runTool(append([]string{"plan"}, common...)...)
	assert.Equal(t, cli.ExitUnusable, code)
	assert.Equal(t, `nccom-rings plan: --hosts-from-env: SLURM_NTASKS_PER_NODE="2" and SLURM_TASKS_PER_NODE="2(x3),3" disagree: host 4 ("trn1-st-trn1-4") gets 3 by the second (Slurm sets the two alike)`+"\n", errOut)
	t.Setenv("SLURM_TASKS_PER_NODE", "2(x4)")
	rep := planJSON(t, cli.ExitOK, common...)
	assert.Equal(t, 2, rep.RanksPerNode)
	t.Setenv("SLURM_NTASKS_PER_NODE", "")
	t.Setenv("SLURM_JOB_NODELIST", "trn1-st-trn1-[1-16]")
	t.Setenv("SLURM_TASKS_PER_NODE", "32(x16)")
	rep = planJSON(t, cli.ExitOK, common...)
	assert.Equal(t, 32, rep.RanksPerNode)
	assert.Equal(t, 16, rep.Located)
	t.Setenv("SLURM_TASKS_PER_NODE", "32(x14),16(x2)")
	code, _, errOut = runTool(append([]string{"plan"}, common...)...)
	assert.Equal(t, cli.ExitUnusable, code)
	assert.Contains(t, errOut, `nccom-rings plan: --ranks-per-node is needed: neither --graph nor SLURM_NTASKS_PER_NODE or SLURM_TASKS_PER_NODE (SLURM_NTASKS_PER_NODE="", SLURM_TASKS_PER_NODE="32(x14),16(x2)") gives one count for every host`+"\n")
	code, _, errOut = runTool(append([]string{"plan", "--ranks-per-node", "32"}, common...)...)
	assert.Equal(t, cli.ExitOK, code)
	assert.Contains(t, errOut, `note: SLURM_TASKS_PER_NODE=32(x14),16(x2): host "trn1-st-trn1-15" gives 16 slots, but the plan puts 32 ranks on every host (2 of 16 hosts give another count)`)
	for _, v := range []string{"32(x15)", "32(16)", "x", "32(x0)"} {
		t.Setenv("SLURM_TASKS_PER_NODE", v)
		code, _, errOut = runTool(append([]string{"plan"}, common...)...)
		assert.Equal(t, cli.ExitUnusable, code, v)
		assert.Contains(t, errOut, `nccom-rings plan: --hosts-from-env: SLURM_TASKS_PER_NODE="`+v+`"`, v)
	}
}

// A hostfile or locations file with a UTF-8 byte-order mark is read; one
// saved as UTF-16 is refused, saying so.
func TestPlanReadsUTF8AndRefusesUTF16(t *testing.T) {
	locs := c16Locations(t)
	data, err := os.ReadFile(locs)
	require.NoError(t, err)
	dir := t.TempDir()
	write := func(name string, data []byte) string {
		path := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(path, data, 0o644))
		return path
	}
	bomLocs := write("locs-bom", append([]byte("\xef\xbb\xbf"), data...))
	hosts := write("hosts-bom", []byte("\xef\xbb\xbftrn1-st-trn1-1 slots=8\ntrn1-st-trn1-2 slots=8\n"))
	rep := planJSON(t, cli.ExitOK, "--locations", bomLocs, "--hosts", hosts, "--instances", c16Instances)
	assert.Equal(t, 2, rep.Located)
	utf16 := func(s string, le bool) []byte {
		b := []byte{0xfe, 0xff}
		if le {
			b = []byte{0xff, 0xfe}
		}
		for _, c := range []byte(s) {
			if le {
				b = append(b, c, 0)
			} else {
				b = append(b, 0, c)
			}
		}
		return b
	}
	for _, le := range []bool{true, false} {
		h16 := write("hosts16", utf16("trn1-st-trn1-1 slots=8\n", le))
		code, _, errOut := runTool("plan", "--locations", locs, "--hosts", h16)
		assert.Equal(t, cli.ExitUnusable, code)
		assert.Equal(t, "nccom-rings plan: "+h16+": UTF-16 (or NUL bytes): save it as UTF-8\n", errOut)
		l16 := write("locs16", utf16(string(data), le))
		code, _, errOut = runTool("plan", "--locations", l16, "--hosts", hosts)
		assert.Equal(t, cli.ExitUnusable, code)
		assert.Equal(t, "nccom-rings plan: "+l16+": UTF-16 (or NUL bytes): save it as UTF-8\n", errOut)
	}
	h16 := write("hosts16", []byte("t\x00r\x00n\x00\n\x00")) // no mark, NULs
	code, _, errOut := runTool("plan", "--locations", locs, "--hosts", h16)
	assert.Equal(t, cli.ExitUnusable, code)
	assert.Contains(t, errOut, "UTF-16 (or NUL bytes): save it as UTF-8")
	// Every topology locate reads, and --instances, say the same (they
	// said "not a file locate knows", or a syntax error of their own).
	for _, name := range []string{"topology-tree.conf", "topology-tree.yaml", "ec2-topology.json", "eks-nodes.json", "describe-instances.json"} {
		text, err := os.ReadFile(filepath.Join("testdata/cluster16", name))
		require.NoError(t, err)
		u16 := write(name, utf16(string(text), true))
		args := []string{"locate", "--all", u16}
		if name == "describe-instances.json" {
			args = []string{"plan", "--locations", locs, "--hosts", hosts, "--instances", u16}
		}
		code, _, errOut = runTool(args...)
		assert.Equal(t, cli.ExitUnusable, code, name)
		assert.Contains(t, errOut, ": "+u16+": UTF-16 (or NUL bytes): save it as UTF-8\n", name)
	}
}

// A topology given as --locations is said to be one, with the locate
// line that makes its locations.
func TestPlanSaysALocationsFileIsASource(t *testing.T) {
	for _, c := range []struct{ file, source string }{
		{c16Topology, "ec2"},
		{"testdata/cluster16/topology-tree.conf", "slurm"},
	} {
		code, _, errOut := runTool("plan", "--locations", c.file, "--hosts", c16Hosts)
		assert.Equal(t, cli.ExitUnusable, code)
		assert.Equal(t, `nccom-rings plan: --locations "`+c.file+`": this is a SOURCE file of locate (`+c.source+`:, a topology), not HOST LOCATION lines: run nccom-rings locate --all "`+c.source+`:`+c.file+`" > locations first, then give --locations locations`+"\n", errOut)
	}
	code, _, errOut := runTool("plan", "--locations", c16Instances, "--hosts", c16Hosts)
	assert.Equal(t, cli.ExitUnusable, code)
	assert.Contains(t, errOut, "this is the output of aws ec2 describe-instances, not HOST LOCATION lines: give it with --instances")
}

// "$(scontrol show hostnames)": names on lines of one argument are the
// hosts, in order.
func TestPlanOfHostsOnLines(t *testing.T) {
	locs := c16Locations(t)
	lines := strings.Join([]string{"trn1-st-trn1-3", "trn1-st-trn1-1", "trn1-st-trn1-[5-6]", ""}, "\n")
	rep := planJSON(t, cli.ExitOK, "--locations", locs, "--hosts", lines, "--instances", c16Instances, "--ranks-per-node", "8", "--order", "rank")
	assert.Equal(t, "trn1-st-trn1-3,trn1-st-trn1-1,trn1-st-trn1-[5-6]", rep.Hosts)
	assert.Equal(t, 4, rep.Located)
	code, _, errOut := runTool("plan", "--locations", locs, "--hosts", "a\na", "--ranks-per-node", "8")
	assert.Equal(t, cli.ExitUnusable, code)
	assert.Contains(t, errOut, `host "a" twice in the list`)
}

// Pods: a hostNetwork pod and kube-proxy give the node's address as
// podIP; the address joins to their node (the records agree), and is the
// machine the hostNetwork pod is. Two pods with their own addresses on
// one node are two hosts.
func TestPlanJoinsPodsThatAgree(t *testing.T) {
	dir := t.TempDir()
	pod := func(name, node, hostIP, podIP string) string {
		return `{"metadata": {"name": "` + name + `"}, "spec": {"nodeName": "` + node + `"}, "status": {"hostIP": "` + hostIP + `", "podIP": "` + podIP + `"}}`
	}
	pods := filepath.Join(dir, "pods.json")
	require.NoError(t, os.WriteFile(pods, []byte(`{"kind": "List", "items": [`+strings.Join([]string{
		pod("job-worker-0", "node-a", "10.1.0.11", "10.1.0.11"), pod("kube-proxy-a", "node-a", "10.1.0.11", "10.1.0.11"),
		pod("job-worker-1", "node-b", "10.1.0.12", "10.1.0.12"), pod("kube-proxy-b", "node-b", "10.1.0.12", "10.1.0.12"),
		pod("p-0", "node-c", "10.1.0.13", "192.168.0.1"), pod("p-1", "node-c", "10.1.0.13", "192.168.0.2"),
		`{"metadata": {"name": "pending"}, "status": {}}`,
	}, ",\n")+`]}`), 0o644))
	locs := filepath.Join(dir, "locations")
	require.NoError(t, os.WriteFile(locs, []byte("node-a s/l1\nnode-b s/l2\nnode-c s/l3\n"), 0o644))
	common := []string{"--locations", locs, "--instances", pods, "--ranks-per-node", "8", "--order", "rank"}
	rep := planJSON(t, cli.ExitOK, append([]string{"--hosts", "10.1.0.11,job-worker-1"}, common...)...)
	assert.Equal(t, 2, rep.Located)
	rep = planJSON(t, cli.ExitOK, append([]string{"--hosts", "p-0,p-1"}, common...)...)
	assert.Equal(t, 2, rep.Located, "two pods on one node, each its own address")
	code, _, errOut := runTool(append([]string{"plan", "--hosts", "10.1.0.11,job-worker-0"}, common...)...)
	assert.Equal(t, cli.ExitUnusable, code)
	assert.Equal(t, `nccom-rings plan: hosts "10.1.0.11" and "job-worker-0" are one instance ("job-worker-0"): list each host once`+"\n", errOut)
	code, _, errOut = runTool(append([]string{"plan", "--hosts", "job-worker-0,pending"}, common...)...)
	assert.Equal(t, cli.ExitFinding, code)
	assert.Contains(t, errOut, `"pending": `+pods+` names pod "pending" (line 7), which is not scheduled: it has no spec.nodeName`+"\n")
}
