package main

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

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

// hugeJobDump writes one rank's dump of a job that claims 2^31-1 ranks
// (115 bytes of JSON) and returns its directory.
func hugeJobDump(t *testing.T) string {
	dir := t.TempDir()
	d := &ringdump.Dump{Rank: 0, NRanks: 1<<31 - 1, ResultName: "ncclSuccess", Version: "x", Host: "h", PID: 1,
		Wiring: &ringdump.Wiring{NNodes: 1, NodesFirstRank: []int{0}, GraphChannels: 1, NChannels: 2}}
	_, err := ringdump.Write(dir, d)
	require.NoError(t, err)
	return dir
}
