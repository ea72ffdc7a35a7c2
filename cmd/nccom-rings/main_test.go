package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nccomring/libnccomring/cmd/nccom-rings/verify"
	"github.com/nccomring/libnccomring/internal/cli"
	"github.com/nccomring/libnccomring/ringdump"
)

// identityJob writes the dumps of 2 nodes x 2 ranks whose rings are the
// identity order, worked out by hand: every channel's ring is 0 1 2 3, so
// rank r has prev (r+3)%4, next (r+1)%4 and userRanks r, r+1, ... mod 4.
// One graph channel, doubled to 2 (D10). Returns the directory and each
// rank's file.
func identityJob(t *testing.T) (string, []string) {
	t.Helper()
	return ringJob(t, 2, 2)
}

// ringJob is identityJob's job on nodes x perNode ranks: n = nodes*perNode,
// rank r has prev (r+n-1)%n, next (r+1)%n and userRanks r, r+1, ... mod n
// on both channels.
func ringJob(t *testing.T, nodes, perNode int) (string, []string) {
	t.Helper()
	dir := t.TempDir()
	n := nodes * perNode
	first := make([]int, nodes)
	for m := range first {
		first[m] = m * perNode
	}
	var paths []string
	for r := range n {
		d := &ringdump.Dump{
			Rank: r, NRanks: n, ResultName: "ncclSuccess", Version: "test", Host: "host", PID: 100,
			Wiring: &ringdump.Wiring{NNodes: nodes, Node: r / perNode, NodesFirstRank: first, GraphChannels: 1, NChannels: 2},
		}
		for c := range 2 {
			u := make([]int, n)
			for i := range u {
				u[i] = (r + i) % n
			}
			d.Channels = append(d.Channels, ringdump.Channel{Channel: c, Prev: (r + n - 1) % n, Next: (r + 1) % n, UserRanks: u})
		}
		d.SetNetDev(0, r%2)
		path, err := ringdump.Write(dir, d)
		require.NoError(t, err)
		paths = append(paths, path)
	}
	return dir, paths
}

func runTool(args ...string) (code int, stdout, stderr string) {
	var out, errOut bytes.Buffer
	code = run(args, &out, &errOut)
	return code, out.String(), errOut.String()
}

// edit rewrites one dump file through f.
func edit(t *testing.T, path string, f func(*ringdump.Dump)) {
	t.Helper()
	d, err := ringdump.Read(path)
	require.NoError(t, err)
	f(d)
	require.NoError(t, os.Remove(path))
	_, err = ringdump.Write(filepath.Dir(path), d)
	require.NoError(t, err)
}

func TestVerifyPassesOnHandComputedRings(t *testing.T) {
	dir, _ := identityJob(t)
	code, out, errOut := runTool("verify", dir)
	assert.Equal(t, cli.ExitOK, code, errOut)
	assert.Equal(t, "nccom-rings: 4 ranks, 2 channels, 2 nodes: every rank agrees\n", out)
}

func TestVerifyNamesTheRankWhoseNextChanged(t *testing.T) {
	dir, paths := identityJob(t)
	edit(t, paths[1], func(d *ringdump.Dump) { d.Channels[0].Next = 3 })
	code, out, _ := runTool("verify", dir)
	assert.Equal(t, cli.ExitFinding, code)
	// Succ(1) has 6 views: rank 1's next (3), rank 2's prev (1: 2 follows
	// 1) and the 4 userRanks (2 follows 1): 5 hold 2.
	first, _, _ := bytes.Cut([]byte(out), []byte("\n"))
	assert.Equal(t, "nccom-rings: rank 1: channel 0 next is 3, but rank 3's prev is 2; 5 of 6 views have 2 after 1", string(first))

	code, out, _ = runTool("verify", "--json", dir)
	assert.Equal(t, cli.ExitFinding, code)
	var rep verify.Report
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	assert.False(t, rep.OK)
	require.NotEmpty(t, rep.Findings)
	assert.Equal(t, verify.Finding{Kind: verify.KindNext, Rank: 1, Channel: 0, Other: 3, Message: "rank 1: channel 0 next is 3, but rank 3's prev is 2; 5 of 6 views have 2 after 1", Hint: verify.Hint(verify.KindNext)}, rep.Findings[0])
}

func TestVerifyNamesTheMissingRank(t *testing.T) {
	dir, paths := identityJob(t)
	require.NoError(t, os.Remove(paths[2]))
	code, out, _ := runTool("verify", dir)
	assert.Equal(t, cli.ExitFinding, code)
	assert.Contains(t, out, "nccom-rings: missing rank 2 (of 4)\n")
}

func TestVerifyReportsAFailedRankWithItsWarn(t *testing.T) {
	dir, paths := identityJob(t)
	edit(t, paths[3], func(d *ringdump.Dump) {
		d.Result, d.ResultName, d.Warn, d.Wiring, d.NetDevs = 4, "ncclInvalidArgument", "ncclTopoPostset: allTopoRanks[2] is NULL", nil, nil
	})
	code, out, _ := runTool("verify", dir)
	assert.Equal(t, cli.ExitFinding, code)
	assert.Contains(t, out, `rank 3: ncclTopoPostset failed with "ncclInvalidArgument" (4): "ncclTopoPostset: allTopoRanks[2] is NULL"`+"\n")
}

func TestVerifyNamesBothFilesOfADuplicatedRank(t *testing.T) {
	dir, paths := identityJob(t)
	d, err := ringdump.Read(paths[0])
	require.NoError(t, err)
	d.PID = 200 // a second run into the same directory
	second, err := ringdump.Write(dir, d)
	require.NoError(t, err)
	code, out, _ := runTool("verify", dir)
	assert.Equal(t, cli.ExitFinding, code)
	assert.Contains(t, out, `rank 0: 2 files, "`+paths[0]+`", "`+second+`"`)
}

func TestVerifyChecksUserRanksAndDoubling(t *testing.T) {
	dir, paths := identityJob(t)
	edit(t, paths[2], func(d *ringdump.Dump) { d.Channels[0].UserRanks = []int{2, 3, 1, 0} })
	code, out, _ := runTool("verify", dir)
	assert.Equal(t, cli.ExitFinding, code)
	// Succ(3): rank 3's next, rank 0's prev, 3 userRanks say 0; rank 2's
	// userRanks says 1.
	assert.Contains(t, out, "rank 2: channel 0 userRanks[2] is 1, but 5 of 6 views have 0 after 3 (stale userRanks)\n")
	assert.Contains(t, out, "rank 2: channel 1 userRanks[2] is 0, but channel 0's, which it repeats (D10), is 1\n")
}

func TestVerifyFindsTwoCycles(t *testing.T) {
	dir, paths := identityJob(t)
	// 0 <-> 1 and 2 <-> 3 on channel 0 in every view: prev and next agree,
	// and each userRanks is what BuildRings walks along them (0 1 0 1 from
	// rank 0), so the ring every rank agrees on misses two ranks. (Before
	// issue 23 the userRanks were left 0 1 2 3: those 4 views now outvote
	// the 2 of each next, and each rank's next is the finding.)
	for r, path := range paths {
		edit(t, path, func(d *ringdump.Dump) {
			for c := range 2 { // channel 1 repeats channel 0 (D10)
				d.Channels[c].Next, d.Channels[c].Prev = r^1, r^1
				d.Channels[c].UserRanks = []int{r, r ^ 1, r, r ^ 1}
			}
		})
	}
	code, out, _ := runTool("verify", dir)
	assert.Equal(t, cli.ExitFinding, code)
	cycle := func(c int) string {
		return fmt.Sprintf("nccom-rings: rank 0: channel %d is a ring of 2 ranks, not of all 4: following next from rank 0 comes back after 2\n  check: %s\n", c, verify.Hint(verify.KindCycle))
	}
	assert.Equal(t, cycle(0)+cycle(1)+"nccom-rings: \""+dir+"\": 2 findings\n", out)
}

func TestVerifyRefusesUnusableInput(t *testing.T) {
	dir, paths := identityJob(t)
	require.NoError(t, os.WriteFile(paths[1], []byte(`{"format":1,"rank":1,"nRanks":4,,}`), 0o644))
	code, out, errOut := runTool("verify", dir)
	assert.Equal(t, cli.ExitUnusable, code)
	// A finding on stdout since issue 23, no longer a line on stderr.
	assert.Empty(t, errOut)
	assert.Contains(t, out, `nccom-rings: rank 1: "`+paths[1]+`": not a ring dump: at byte 33:`, "the second comma is the 33rd byte")

	code, _, errOut = runTool("verify", filepath.Join(dir, "nonexistent"))
	assert.Equal(t, cli.ExitUnusable, code)
	assert.Contains(t, errOut, "no such file or directory")

	code, _, errOut = runTool("verify", t.TempDir())
	assert.Equal(t, cli.ExitUnusable, code)
	assert.Contains(t, errOut, "holds no rank-NNNNNN.HOST.PID.json dump files")

	code, _, _ = runTool("verify")
	assert.Equal(t, cli.ExitUnusable, code)
	code, _, _ = runTool("verify", "--bogus", dir)
	assert.Equal(t, cli.ExitUnusable, code)
}

var update = flag.Bool("update", false, "write docs/commands/nccom-rings.md from the command table")

// The top help, every command's --help and docs/commands/nccom-rings.md
// come from one table, and every flag in it has its help text.
func TestCommandTable(t *testing.T) {
	require.NoError(t, tool.Check("../../docs/commands/nccom-rings.md", *update))
	for _, args := range [][]string{{"--help"}, {"verify", "--help"}, {"show", "--help"}, {"--version"}} {
		code, out, _ := runTool(args...)
		assert.Equal(t, cli.ExitOK, code, args)
		assert.NotEmpty(t, out, args)
	}
	code, out, _ := runTool("--version")
	assert.Equal(t, cli.ExitOK, code)
	assert.Regexp(t, `^nccom-rings \S+ \(libnccomring \S+, dump format \d+\)\n$`, out)
}

func TestShowTableJSONAndDot(t *testing.T) {
	dir, _ := identityJob(t)
	code, out, _ := runTool("show", dir)
	assert.Equal(t, cli.ExitOK, code)
	assert.Contains(t, out, "     1     0      0      2    1  1 2 3 0\n")

	code, out, _ = runTool("show", "--json", "--channel", "1", dir)
	assert.Equal(t, cli.ExitOK, code)
	var shown shownChannel
	require.NoError(t, json.Unmarshal([]byte(out), &shown))
	assert.Equal(t, 1, shown.Channel)
	require.Len(t, shown.Ranks, 4)
	assert.Equal(t, 3, shown.Ranks[2].Next)
	assert.Nil(t, shown.Ranks[2].Dev, "no GetNetDev answer for channel 1")

	// Two nodes of one row each; the two inter-node edges carry the NICs
	// of channel 0's netDevs (rank r's is r%2).
	code, out, _ = runTool("show", dir, "--dot")
	assert.Equal(t, cli.ExitOK, code)
	inter := `color=blue, fontcolor=blue, penwidth=2, constraint=false`
	assert.Equal(t, `digraph "channel 0" {
  label="channel 0 of 2";
  newrank=true;
  node [shape=circle];
  subgraph cluster_node0 {
    label="node 0 \"host\"";
    { rank=same; "0"; "1"; }
  }
  subgraph cluster_node1 {
    label="node 1 \"host\"";
    { rank=same; "2"; "3"; }
  }
  "0" -> "1";
  "1" -> "2" [`+inter+`, taillabel="NIC 1", headlabel="NIC 0"];
  "2" -> "3";
  "3" -> "0" [`+inter+`, taillabel="NIC 1", headlabel="NIC 0"];
}
`, out)
	code, out, _ = runTool("show", dir, "--dot", "--channel", "1")
	assert.Equal(t, cli.ExitOK, code)
	assert.Contains(t, out, "  \"3\" -> \"0\" ["+inter+"];\n", "no netDevs for channel 1: no NIC labels")

	code, _, errOut := runTool("show", "--channel", "2", dir)
	assert.Equal(t, cli.ExitUnusable, code)
	assert.Contains(t, errOut, "channel 2 is outside [0, 2)")
}
