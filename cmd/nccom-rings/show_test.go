package main

import (
	"bytes"
	"encoding/json"
	"html"
	"os/exec"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nccomring/libnccomring/internal/cli"
	"github.com/nccomring/libnccomring/ringdump"
)

const interEdge = `color=blue, fontcolor=blue, penwidth=2, constraint=false`

// Three nodes of five ranks: rows of ceil(sqrt(5)) = 3 ranks, and the
// clusters in a grid of ceil(sqrt(3)) = 2 per row, so node 2 sits under
// node 0 (an invisible edge from node 0's last row, rank 3, to rank 10).
func TestShowDotRowsAndGrid(t *testing.T) {
	dir, _ := ringJob(t, 3, 5)
	code, out, _ := runTool("show", "--dot", dir)
	require.Equal(t, cli.ExitOK, code)
	for _, line := range []string{
		"  subgraph cluster_node0 {\n    label=\"node 0 \\\"host\\\"\";\n" +
			"    { rank=same; \"0\"; \"1\"; \"2\"; }\n    { rank=same; \"3\"; \"4\"; }\n" +
			"    \"0\" -> \"3\" [style=invis];\n  }\n",
		"    { rank=same; \"10\"; \"11\"; \"12\"; }\n    { rank=same; \"13\"; \"14\"; }\n",
		"  \"3\" -> \"10\" [style=invis];\n",
		"  \"1\" -> \"2\";\n",
		"  \"2\" -> \"3\";\n", // a row's end to the next row's start
		"  \"4\" -> \"5\" [" + interEdge + ", taillabel=\"NIC 0\", headlabel=\"NIC 1\"];\n",
		"  \"14\" -> \"0\" [" + interEdge + ", taillabel=\"NIC 0\", headlabel=\"NIC 0\"];\n",
	} {
		assert.Contains(t, out, line)
	}
	assert.Equal(t, 3, strings.Count(out, "[style=invis];\n  }\n"), "each node has two rows")
	assert.Equal(t, 1, strings.Count(out, "  \"3\" -> \"10\""))
	assert.NotContains(t, out, "\"8\" -> \"15\"", "no grid edge for a third row of clusters")
}

// One node of four ranks with rank 2 failed: the walk from rank 0 stops
// at 1 (its next failed), 2 and 3 follow in rank order; 2 is drawn outside
// the cluster, the edge to it has only the sender's NIC, and 3 -> 0 runs
// against the rows so it does not constrain the layout.
func TestShowDotFailedRank(t *testing.T) {
	dir, paths := ringJob(t, 1, 4)
	edit(t, paths[2], func(d *ringdump.Dump) {
		d.Result, d.ResultName, d.Warn, d.Wiring = 4, "ncclInvalidArgument", "bad", nil
	})
	code, out, _ := runTool("show", "--dot", dir)
	require.Equal(t, cli.ExitOK, code)
	assert.Equal(t, `digraph "channel 0" {
  label="channel 0 of 2";
  newrank=true;
  node [shape=circle];
  "2" [color=red, label="2 (failed)"];
  subgraph cluster_node0 {
    label="node 0 \"host\"";
    { rank=same; "0"; "1"; }
    { rank=same; "3"; }
    "0" -> "3" [style=invis];
  }
  "0" -> "1";
  "1" -> "2" [`+interEdge+`, taillabel="NIC 1"];
  "3" -> "0" [constraint=false];
}
`, out)
}

// A host name is a dump's text: a '"', a backslash or a newline in it must
// not end the DOT string or break the label; it shows as the tool's quoted
// form, "a\"b\nc\\".
func TestShowDotHostileHost(t *testing.T) {
	dir, paths := identityJob(t)
	edit(t, paths[0], func(d *ringdump.Dump) { d.Host = "a\"b\nc\\" })
	code, out, _ := runTool("show", "--dot", dir)
	require.Equal(t, cli.ExitOK, code)
	want := `node 0 "a\"b\nc\\"`
	assert.Contains(t, out, "    label=\"node 0 \\\"a\\\\\\\"b\\\\nc\\\\\\\\\\\"\";\n")
	assert.Equal(t, 17, strings.Count(out, "\n"), "no line added by the host's newline")

	if _, err := exec.LookPath("dot"); err != nil {
		t.Skip("graphviz's dot is not installed")
	}
	// What dot draws: SVG text, one element per line of a label.
	cmd := exec.Command("dot", "-Tsvg")
	cmd.Stdin = strings.NewReader(out)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	require.NoError(t, cmd.Run(), stderr.String())
	var texts []string
	for _, m := range regexp.MustCompile(`<text[^>]*>([^<]*)</text>`).FindAllStringSubmatch(stdout.String(), -1) {
		texts = append(texts, html.UnescapeString(m[1]))
	}
	assert.Contains(t, texts, want, "the quoted host on one line")
	assert.Contains(t, texts, `node 1 "host"`)
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
