package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nccomring/libnccomring/cmd/nccom-rings/score"
	"github.com/nccomring/libnccomring/internal/cli"
	"github.com/nccomring/libnccomring/ringdump"
)

// diffJSON is diff --json's exit code and report on a and b.
func diffJSON(t *testing.T, a, b string) (int, diffReport) {
	t.Helper()
	code, out, _ := runTool("diff", "--json", a, b)
	var rep diffReport
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	return code, rep
}

func TestDiffOfTheTwoPlansNamesTheNodeSequence(t *testing.T) {
	dir, _ := planD25(t)
	rank, network := filepath.Join(dir, "rank"), filepath.Join(dir, "network")
	code, out, errOut := runTool("diff", rank, network)
	assert.Equal(t, cli.ExitFinding, code, errOut)
	// D25's example: 8 nodes on one spine, leaves A and B alternating in
	// rank order, so its rings cross the leaves at every one of their 8
	// inter-node edges; the network order once each way, the fewest.
	// Every edge mismatches in both (D25's graph leaves a node on another
	// NIC than it enters it on): 8 edges x 16 channels. The same hosts,
	// graph and NICs; only the order of the nodes, and so every ring's
	// inter-node edges (node 0's last rank, 3, goes to node 2's first, 8,
	// instead of node 1's, 4), and so every rank's userRanks.
	assert.Equal(t, "nccom-rings diff: crossings per ring: level 1: 0 -> 0 (fewest 0); level 2: 8 -> 2 (fewest 2)\n"+
		"nccom-rings diff: NIC-index mismatches: 128 of 128 inter-node edges -> 128 of 128\n"+
		"nccom-rings diff: node sequence: channel 0: 0 1 2 3 4 5 6 7 -> 0 2 4 6 1 3 5 7; 16 of 16 channels visit the nodes in another order\n"+
		"nccom-rings diff: rings: channel 0: rank 3's next 4 -> 8; 16 of 16 channels differ\n"+
		"nccom-rings diff: rank views: rank 0's dump: channel 2's next 5 -> 9, channel 0's userRanks[4] 4 -> 8, order asked rank -> network; 32 of 32 ranks' own dumps differ (ranks 0-31)\n", out)

	code, rep := diffJSON(t, rank, network)
	assert.Equal(t, cli.ExitFinding, code)
	assert.False(t, rep.Same)
	require.Len(t, rep.Changes, 3)
	assert.Equal(t, score.Change{Kind: "node sequence", Count: 16, Text: "channel 0: 0 1 2 3 4 5 6 7 -> 0 2 4 6 1 3 5 7; 16 of 16 channels visit the nodes in another order"}, rep.Changes[0])
	assert.Equal(t, 32, rep.Changes[2].Count)
	assert.Len(t, rep.Changes[2].Ranks, score.MaxRankViews, "the first 20 of the 32 ranks")
	require.NotNil(t, rep.Score)
	require.Len(t, rep.Score.Levels, 2)
	assert.Equal(t, score.Crossings{Groups: 2, Fewest: 2, PerChannel: repeat(16, 8), Least: 8, Most: 8}, *rep.Score.Levels[1].A)
	assert.Equal(t, score.Crossings{Groups: 2, Fewest: 2, PerChannel: repeat(16, 2), Least: 2, Most: 2}, *rep.Score.Levels[1].B)
	assert.Equal(t, [2]int{128, 128}, rep.Score.NICMismatches)

	code, out, _ = runTool("diff", network, network)
	assert.Equal(t, cli.ExitOK, code)
	assert.Equal(t, "nccom-rings diff: crossings per ring: level 1: 0 -> 0 (fewest 0); level 2: 2 -> 2 (fewest 2)\n"+
		"nccom-rings diff: NIC-index mismatches: 128 of 128 inter-node edges -> 128 of 128\n"+
		"nccom-rings diff: the same job: 32 ranks, 8 nodes, 16 channels, the same rings, NIC indices and dumps of every rank\n", out)
}

// Issue 37, done when 3: the hosts of testdata/cluster16 in an order that
// scatters the leaves and the spines (scatteredHosts), planned: its rank
// order crosses the spines 6 times a ring and the leaves 12 times; the
// network order regroups it at the fewest, 2 and 4. diff and report say
// so, per level.
//
// By hand: leaves A (hosts 1-4) and B (5-8) are under one spine, C
// (9-12) and D (13-16) under the other, and the rings visit the nodes in
// rank order, so in the hostfile's order. scatteredHosts' leaves, in
// order and back to the first: A A B C C D A B B C D D A B C D (A).
// Of its 16 steps 4 stay in a leaf (A A, C C, B B, D D): 12 leaf
// crossings, the fewest 4 (4 leaves); 6 of them change spine (B C, D A,
// B C, D A, B C, D A): 6 spine crossings, the fewest 2. One core: level
// 1 is one group, 0 crossings.
var scatteredHosts = []int{1, 2, 5, 9, 10, 13, 3, 6, 7, 11, 14, 15, 4, 8, 12, 16}

// planScattered writes scatteredHosts as a hostfile and plans it with
// --dump, returning the dump directory (rank: the hostfile's order,
// network: D25's).
func planScattered(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	var hosts strings.Builder
	for _, h := range scatteredHosts {
		fmt.Fprintf(&hosts, "trn1-st-trn1-%d slots=32\n", h)
	}
	hostfile := filepath.Join(dir, "hosts")
	require.NoError(t, os.WriteFile(hostfile, []byte(hosts.String()), 0o644))
	dumps := filepath.Join(dir, "dumps")
	code, _, errOut := runTool("plan", "--locations", c16Locations(t), "--hosts", hostfile, "--instances", c16Instances, "--dump", dumps)
	require.Equal(t, cli.ExitOK, code, errOut)
	return dumps
}

func TestDiffOfTheScatteredJobAndItsRegroupedVersion(t *testing.T) {
	dumps := planScattered(t)
	scattered, regrouped := filepath.Join(dumps, "rank"), filepath.Join(dumps, "network")
	code, out, errOut := runTool("diff", scattered, regrouped)
	assert.Equal(t, cli.ExitFinding, code, errOut)
	lines := strings.Split(out, "\n")
	require.Greater(t, len(lines), 2, out)
	assert.Equal(t, "nccom-rings diff: crossings per ring: level 1: 0 -> 0 (fewest 0); level 2: 6 -> 2 (fewest 2); level 3: 12 -> 4 (fewest 4)", lines[0])
	// The embedded default graph: half the channels leave a node on
	// another NIC than they enter it on, in either order (16 edges x 8).
	assert.Equal(t, "nccom-rings diff: NIC-index mismatches: 128 of 256 inter-node edges -> 128 of 256", lines[1])
	assert.Contains(t, out, "\nnccom-rings diff: rank views: ")
	assert.Contains(t, out, "512 of 512 ranks' own dumps differ (ranks 0-511)\n")

	code, rep := diffJSON(t, scattered, regrouped)
	assert.Equal(t, cli.ExitFinding, code)
	require.NotNil(t, rep.Score)
	var got [][4]int // per level: crossings and fewest, A then B
	for _, l := range rep.Score.Levels {
		require.Equal(t, l.A.Least, l.A.Most, "every channel alike")
		require.Equal(t, l.B.Least, l.B.Most, "every channel alike")
		got = append(got, [4]int{l.A.Most, l.A.Fewest, l.B.Most, l.B.Fewest})
	}
	assert.Equal(t, [][4]int{{0, 0, 0, 0}, {6, 2, 2, 2}, {12, 4, 4, 4}}, got)
}

// Two jobs alike but for one rank's dump are two jobs: the rings and NIC
// indices of the lowest rank's dump agree, yet rank 5 (node 1, whose next
// on channel 0 is 6 in rank order) says 7, and in another copy rank 9 says
// NIC index 7 on channel 3 where every copy says 1.
func TestDiffNamesTheOneRankWhoseDumpDiffers(t *testing.T) {
	a, _ := planD25(t)
	b, _ := planD25(t)
	rankA, rankB := filepath.Join(a, "rank"), filepath.Join(b, "rank")
	code, out, _ := runTool("diff", rankA, rankB)
	require.Equal(t, cli.ExitOK, code, "two plans of one job: the same dumps\n%s", out)

	edit(t, rankFile(t, rankB, 5), func(d *ringdump.Dump) { d.Channels[0].Next = 7 })
	code, out, errOut := runTool("diff", rankA, rankB)
	assert.Equal(t, cli.ExitFinding, code, errOut)
	assert.Equal(t, "nccom-rings diff: crossings per ring: level 1: 0 -> 0 (fewest 0); level 2: 8 -> 8 (fewest 2)\n"+
		"nccom-rings diff: NIC-index mismatches: 128 of 128 inter-node edges -> 128 of 128\n"+
		"nccom-rings diff: rank views: rank 5's dump: channel 0's next 6 -> 7; 1 of 32 ranks' own dumps differ (rank 5)\n", out)

	code, rep := diffJSON(t, rankA, rankB)
	assert.Equal(t, cli.ExitFinding, code)
	assert.False(t, rep.Same)
	assert.Equal(t, []score.Change{{Kind: "rank views", Count: 1,
		Text:  "rank 5's dump: channel 0's next 6 -> 7; 1 of 32 ranks' own dumps differ (rank 5)",
		Ranks: []score.RankView{{Rank: 5, What: []string{"channel 0's next 6 -> 7"}}}}}, rep.Changes)

	// Rank 9's NIC index: the job's NIC indices, and its own dump.
	c, _ := planD25(t)
	rankC := filepath.Join(c, "rank")
	var was int
	edit(t, rankFile(t, rankC, 9), func(d *ringdump.Dump) {
		for i := range d.NetDevs {
			if d.NetDevs[i].Channel == 3 {
				was = d.NetDevs[i].Dev
				d.NetDevs[i].Dev = 7
			}
		}
	})
	require.NotEqual(t, 7, was)
	code, out, _ = runTool("diff", rankA, rankC)
	assert.Equal(t, cli.ExitFinding, code)
	assert.Contains(t, out, fmt.Sprintf("nccom-rings diff: NIC indices: channel 3: rank 9's NIC index %d -> 7; 1 of 512 channel-rank pairs differ\n", was))
	assert.Contains(t, out, fmt.Sprintf("nccom-rings diff: rank views: rank 9's dump: channel 3's NIC index %d -> 7; 1 of 32 ranks' own dumps differ (rank 9)\n", was))
}

func TestDiffRefusesUnusableInputAndReadsBoth(t *testing.T) {
	dir, _ := planD25(t)
	code, _, errOut := runTool("diff", filepath.Join(dir, "none"), t.TempDir())
	assert.Equal(t, cli.ExitUnusable, code)
	assert.Contains(t, errOut, "no such file or directory")
	assert.Contains(t, errOut, "holds no rank-NNNNNN.HOST.PID.json dump files", "the second directory is read too")

	code, _, _ = runTool("diff", filepath.Join(dir, "rank"))
	assert.Equal(t, cli.ExitUnusable, code)
	code, out, _ := runTool("diff", "--help")
	assert.Equal(t, cli.ExitOK, code)
	assert.Contains(t, out, "DIR_A DIR_B")
}

// --json prints a document on unusable input too, so that a script that
// parses it always can.
func TestScoreAndDiffPrintJSONOnUnusableInput(t *testing.T) {
	empty := t.TempDir()
	code, out, _ := runTool("score", "--json", empty)
	assert.Equal(t, cli.ExitUnusable, code)
	var sr scoreReport
	require.NoError(t, json.Unmarshal([]byte(out), &sr))
	assert.Equal(t, empty, sr.Dir)
	assert.Equal(t, "unusable input (named on stderr)", sr.Error)
	assert.Nil(t, sr.Score)

	code, dr := diffJSON(t, empty, empty)
	assert.Equal(t, cli.ExitUnusable, code)
	assert.Equal(t, "unusable input (named on stderr)", dr.Error)
	assert.False(t, dr.Same)
}
