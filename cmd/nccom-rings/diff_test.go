package main

import (
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nccomring/libnccomring/cmd/nccom-rings/score"
	"github.com/nccomring/libnccomring/internal/cli"
)

func TestDiffOfTheTwoPlansNamesTheNodeSequence(t *testing.T) {
	dir, _ := planD25(t)
	rank, network := filepath.Join(dir, "rank"), filepath.Join(dir, "network")
	code, out, errOut := runTool("diff", rank, network)
	assert.Equal(t, cli.ExitFinding, code, errOut)
	// The same hosts, graph and NICs; only the order of the nodes, and
	// so every ring's inter-node edges (node 0's last rank, 3, goes to
	// node 2's first, 8, instead of node 1's, 4).
	assert.Equal(t, "nccom-rings diff: node sequence: channel 0: 0 1 2 3 4 5 6 7 -> 0 2 4 6 1 3 5 7; 16 of 16 channels visit the nodes in another order\n"+
		"nccom-rings diff: rings: channel 0: rank 3's next 4 -> 8; 16 of 16 channels differ\n", out)

	code, out, _ = runTool("diff", "--json", rank, network)
	assert.Equal(t, cli.ExitFinding, code)
	var rep diffReport
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	assert.False(t, rep.Same)
	require.Len(t, rep.Changes, 2)
	assert.Equal(t, score.Change{Kind: "node sequence", Count: 16, Text: "channel 0: 0 1 2 3 4 5 6 7 -> 0 2 4 6 1 3 5 7; 16 of 16 channels visit the nodes in another order"}, rep.Changes[0])

	code, out, _ = runTool("diff", network, network)
	assert.Equal(t, cli.ExitOK, code)
	assert.Equal(t, "nccom-rings diff: the same job: 32 ranks, 8 nodes, 16 channels, the same rings and NIC indices\n", out)
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

	code, out, _ = runTool("diff", "--json", empty, empty)
	assert.Equal(t, cli.ExitUnusable, code)
	var dr diffReport
	require.NoError(t, json.Unmarshal([]byte(out), &dr))
	assert.Equal(t, "unusable input (named on stderr)", dr.Error)
	assert.False(t, dr.Same)
}
